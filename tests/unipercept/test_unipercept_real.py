"""Real path on local stand-ins: Token-As-Score read-out of a tiny HF causal LM saved to disk,
UniPercept-Bench JSON loading, VR folders, and the rewards inside TRL's GRPOTrainer."""

import json
import math

import numpy as np
import pytest
import torch
import transformers

from icml26.core import seeded_default_init
from icml26.unipercept import SCORE_TOKENS, evaluate_vqa
from icml26.unipercept.real import load_bench, load_unipercept, load_vr_folder

WORDS = ["<pad>", "<eos>", *SCORE_TOKENS, "A", "B", "C", "D", "rate", "image", "quality", "pick"]


def save_tokenizer(path):
    from tokenizers import Tokenizer, models, pre_tokenizers

    tok = Tokenizer(models.WordLevel({w: i for i, w in enumerate(WORDS)}, unk_token="<pad>"))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    fast = transformers.PreTrainedTokenizerFast(
        tokenizer_object=tok, pad_token="<pad>", eos_token="<eos>"
    )
    fast.save_pretrained(path)


def gpt2_config():
    return transformers.GPT2Config(
        vocab_size=len(WORDS), n_positions=32, n_embd=8, n_layer=1, n_head=2,
        bos_token_id=1, eos_token_id=1, pad_token_id=0,
    )  # fmt: skip


@pytest.fixture(scope="module")
def fixed_lm_dir(tmp_path_factory):
    """An LM whose next-token logits are c_j whatever the prompt: ln_f weight 0, bias e_0, and
    the tied embedding row j = c_j e_0; c = log 3 on 'ca' (26), 0 on 'dy' (75), log 2 on 'C'."""
    path = tmp_path_factory.mktemp("fixed-lm")
    save_tokenizer(path)
    with seeded_default_init(0):
        model = transformers.GPT2LMHeadModel(gpt2_config())
    c = torch.full((len(WORDS),), -40.0)
    c[WORDS.index("ca")], c[WORDS.index("dy")], c[WORDS.index("C")] = math.log(3), 0.0, math.log(2)
    with torch.no_grad():
        model.transformer.ln_f.weight.zero_()
        model.transformer.ln_f.bias.zero_()
        model.transformer.ln_f.bias[0] = 1.0
        model.transformer.wte.weight.zero_()
        model.transformer.wte.weight[:, 0] = c
    model.save_pretrained(path)
    return path


def test_token_as_score_read_out_equals_the_hand_computation(fixed_lm_dir):
    scorer = load_unipercept(str(fixed_lm_dir), device="cpu")
    # p(ca) = 3/4, p(dy) = 1/4 (the other 99 score tokens carry e^-40 each): 0.75*26 + 0.25*75
    scores = scorer.rate_prompts(["rate image quality", "rate image"])
    # float32 logits and softmax: ~1e-7 relative error on each probability, x 100 on the score
    np.testing.assert_allclose(scores, [38.25, 38.25], atol=1e-4)
    dist = scorer.score_distribution(["rate image"])
    assert dist.shape == (1, 101) and dist[0, 26] == pytest.approx(0.75, abs=1e-6)
    assert scorer.choose_prompts(["pick", "pick"], [4, 2]) == ["C", "A"]  # C beyond 2 options


def test_tokenizer_without_score_tokens_is_refused(tmp_path):
    from tokenizers import Tokenizer, models, pre_tokenizers

    tok = Tokenizer(models.WordLevel({"<pad>": 0, "a": 1}, unk_token="<pad>"))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    transformers.PreTrainedTokenizerFast(tokenizer_object=tok, pad_token="<pad>").save_pretrained(
        tmp_path
    )
    config = transformers.GPT2Config(vocab_size=2, n_positions=8, n_embd=4, n_layer=1, n_head=1)
    with seeded_default_init(0):
        transformers.GPT2LMHeadModel(config).save_pretrained(tmp_path)
    with pytest.raises(ValueError, match="as one token"):
        load_unipercept(str(tmp_path))


def test_load_bench_reads_json_and_jsonl_and_feeds_the_vqa_protocol(tmp_path):
    from PIL import Image

    Image.fromarray(np.zeros((8, 8, 3), np.uint8)).save(tmp_path / "x.png")
    rows = [
        {"image": "x.png", "question": "Which distortion?", "options": ["blur", "noise"],
         "answer": "b", "domain": "IQA", "category": "Distortion Type",
         "criterion": "Distortion Types Present", "template": "Which"},
        {"image": "x.png", "question": "Is it composite?", "A": "Yes", "B": "No", "C": "",
         "answer": "A", "domain": "ISTA", "category": "Scene Decomposition",
         "criterion": "Scene Classification", "template": "Yes-No"},
    ]  # fmt: skip
    (tmp_path / "bench.json").write_text(json.dumps(rows[:1]))
    (tmp_path / "more.jsonl").write_text(json.dumps(rows[1]) + "\n")
    items = load_bench(tmp_path)
    assert [it.options for it in items] == [("blur", "noise"), ("Yes", "No")]
    assert [it.answer for it in items] == ["B", "A"]
    assert items[0].image.shape == (8, 8, 3)

    class AlwaysA:
        def choose(self, items):
            return ["A"] * len(items)

    acc = evaluate_vqa(AlwaysA(), items, by=("domain",))
    assert acc["domain"] == {"IQA": 0.0, "ISTA": 1.0} and acc["domain_mean"] == 0.5
    (tmp_path / "bad.json").write_text(json.dumps([{"image": "x.png"}]))
    with pytest.raises(ValueError, match="lacks the field"):
        load_bench(tmp_path / "bad.json")
    with pytest.raises(FileNotFoundError):
        load_bench(tmp_path / "missing")


def test_vr_folder_maps_mos_to_0_100(tmp_path):
    (tmp_path / "labels.csv").write_text("image,mos\na.png,1\nb.png,5\nc.png,2\n")
    pairs = load_vr_folder(tmp_path, mos_range=(1, 5))
    assert [m for _, m in pairs] == [0.0, 100.0, 25.0]


def test_rewards_inside_trl_grpo_trainer(tmp_path):
    """make_grpo_trainer on mixed rating / question rows: each row gets its own task's reward."""
    import datasets
    import trl

    from icml26.unipercept import make_grpo_trainer

    save_tokenizer(tmp_path / "lm")
    with seeded_default_init(1):
        transformers.GPT2LMHeadModel(gpt2_config()).save_pretrained(tmp_path / "lm")
    data = datasets.Dataset.from_dict(
        {
            "prompt": ["rate image quality", "pick"] * 2,
            "mos": [30.0, None, 70.0, None],
            "answer": [None, "B", None, "C"],
        }
    )
    args = trl.GRPOConfig(
        output_dir=str(tmp_path / "out"), per_device_train_batch_size=4, num_generations=4,
        max_completion_length=2, max_steps=1, learning_rate=1e-3, report_to=[], use_cpu=True,
        logging_steps=1, save_strategy="no", bf16=False, seed=0,
    )  # fmt: skip
    tok = transformers.AutoTokenizer.from_pretrained(tmp_path / "lm")
    model = transformers.AutoModelForCausalLM.from_pretrained(tmp_path / "lm")
    trainer = make_grpo_trainer(model, tok, data, args)
    seen = []
    for k, fn in enumerate(trainer.reward_funcs):

        def recorder(completions, fn=fn, k=k, **columns):
            rewards = fn(completions=completions, **columns)
            seen.append((k, list(completions), columns["mos"], columns["answer"], rewards))
            return rewards

        trainer.reward_funcs[k] = recorder
    trainer.train()
    assert {k for k, *_ in seen} == {0, 1}, "GRPOTrainer never called both reward functions"
    for k, completions, mos, answer, rewards in seen:
        for text, g, a, r in zip(completions, mos, answer, rewards, strict=True):
            if (k == 0 and g is None) or (k == 1 and a is None):
                assert r is None  # the other task's row
            elif k == 0 and text.strip() in SCORE_TOKENS:
                e = abs(SCORE_TOKENS.index(text.strip()) - g)
                assert r == pytest.approx(math.exp(-(e**2) / (2 * (8 * (1 + 0.25 * e / 100)) ** 2)))
            elif k == 1:
                assert r == float(text.strip()[:1].upper() == a)
    logged = [h for h in trainer.state.log_history if "reward" in h]
    assert logged and np.isfinite(logged[0]["reward"])
