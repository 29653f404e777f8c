"""UniPercept costs, measured in one process (the paper claims no speed-up; a small table).

1. Token-As-Score (one forward over the 101 score-token logits) vs generate-then-parse (greedy
   generation of a few tokens, then parse the integer) on a tiny HF GPT-2 stand-in.
2. One GRPO step (n = 8 responses per query) vs one DAPT step of TinyPercept at the same batch.
3. Perceptual reward cost per image (TinyPercept, three domains) vs the handcrafted IQA features.

Run: ``python benchmarks/bench_unipercept.py`` (add ``--repeats 20`` for steadier ratios).
"""

from __future__ import annotations

import argparse
import copy
import tempfile

import numpy as np
import torch

from icml26.core import interleaved_median_seconds


def tiny_lm(folder: str) -> None:
    import transformers
    from tokenizers import Tokenizer, models, pre_tokenizers

    from icml26.core import seeded_default_init
    from icml26.unipercept import SCORE_TOKENS

    words = ["<pad>", "<eos>", *SCORE_TOKENS, "A", "B", "C", "D", *map(str, range(101)), "rate"]
    tok = Tokenizer(models.WordLevel({w: i for i, w in enumerate(words)}, unk_token="<pad>"))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    fast = transformers.PreTrainedTokenizerFast(
        tokenizer_object=tok, pad_token="<pad>", eos_token="<eos>"
    )
    fast.save_pretrained(folder)
    config = transformers.GPT2Config(
        vocab_size=len(words),
        n_positions=64,
        n_embd=64,
        n_layer=2,
        n_head=4,
        bos_token_id=1,
        eos_token_id=1,
        pad_token_id=0,
    )
    with seeded_default_init(0):
        transformers.GPT2LMHeadModel(config).save_pretrained(folder)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=10)
    args = parser.parse_args()
    torch.set_num_threads(1)

    from icml26.core import adamw, optimizer_step
    from icml26.unipercept import (
        OPTION_VOCAB,
        HandcraftedIQA,
        PerceptPolicy,
        PerceptualReward,
        TinyPercept,
        encode_items,
        grpo_step,
        make_iqa_vqa,
        make_iqa_vr,
        parse_score,
        percept_reward_fn,
    )
    from icml26.unipercept.real import load_unipercept
    from icml26.unipercept.training import dapt_loss

    rows = []
    with tempfile.TemporaryDirectory() as folder:
        tiny_lm(folder)
        scorer = load_unipercept(folder)
        prompts = ["rate " * 20] * 16
        ids = scorer.tokenizer(prompts, return_tensors="pt").input_ids

        def generate_then_parse() -> None:
            with torch.no_grad():
                out = scorer.model.generate(ids, max_new_tokens=4, do_sample=False, pad_token_id=0)
            texts = scorer.tokenizer.batch_decode(out[:, ids.shape[1] :])
            [parse_score(t) for t in texts]

        t = interleaved_median_seconds(
            {"tas": lambda: scorer.rate_prompts(prompts), "generate": generate_then_parse},
            args.repeats,
            warmup=2,
        )
        rows.append(
            (
                "rating, 16 prompts: generate 4 tokens + parse / Token-As-Score",
                t["generate"] / t["tas"],
            )
        )

    items = make_iqa_vr(32, seed=0, size=32) + make_iqa_vqa(32, seed=1, size=32)
    model = TinyPercept(option_vocab=OPTION_VOCAB, seed=0)
    batch = encode_items(items, model)
    optimizer = adamw(model, lr=1e-4, weight_decay=0.01)

    policy, ref = PerceptPolicy(model, seed=0), PerceptPolicy(copy.deepcopy(model), seed=0)
    reward = percept_reward_fn()

    def dapt_step() -> None:  # DAPT trains in train mode, GRPO runs in eval mode
        model.train()
        optimizer_step(dapt_loss(model(batch), batch), optimizer, step=0, owner="bench")
        model.eval()

    t = interleaved_median_seconds(
        {
            "dapt": dapt_step,
            "grpo": lambda: grpo_step(policy, ref, batch, reward, 8, optimizer=optimizer),
        },
        args.repeats,
        warmup=2,
    )
    rows.append(("TinyPercept step, 64 queries: GRPO (n = 8) / DAPT", t["grpo"] / t["dapt"]))

    images = np.stack([it.image for it in items[:32]])
    perceptual = PerceptualReward(model)
    handcrafted = HandcraftedIQA().fit(items[:32])
    t = interleaved_median_seconds(
        {
            "perceptual": lambda: perceptual(images),
            "handcrafted": lambda: handcrafted.predict(items[:32]),
        },
        args.repeats,
        warmup=2,
    )
    per_image, hand = t["perceptual"] / len(images), t["handcrafted"] / 32
    rows.append(
        ("reward per image: PerceptualReward (3 domains) / handcrafted IQA", per_image / hand)
    )
    rows.append(("  PerceptualReward per image [ms] (absolute, this machine)", 1e3 * per_image))

    print(f"{'comparison':70s} ratio")
    for name, value in rows:
        print(f"{name:70s} {value:8.2f}")


if __name__ == "__main__":
    main()
