"""ConstrainedPOTrainer end to end on a tiny random GPT-2 saved to a temporary folder (no hub)."""

import math

import datasets
import pytest
import torch
import transformers

from icml26.core import seeded_default_init
from icml26.cpo import ConstrainedPOConfig, ConstrainedPOTrainer, load_causal_lm

WORDS = ["<pad>", "<eos>", "q", "a", "b", "c", "d", "yes", "no", "maybe"]


def tiny_tokenizer():
    from tokenizers import Tokenizer, models, pre_tokenizers

    vocab = {w: i for i, w in enumerate(WORDS)}
    tok = Tokenizer(models.WordLevel(vocab, unk_token="<pad>"))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    return transformers.PreTrainedTokenizerFast(
        tokenizer_object=tok, pad_token="<pad>", eos_token="<eos>"
    )


def tiny_gpt2(seed):
    config = transformers.GPT2Config(
        vocab_size=len(WORDS), n_positions=32, n_embd=16, n_layer=1, n_head=2,
        bos_token_id=1, eos_token_id=1, pad_token_id=0,
    )  # fmt: skip
    with seeded_default_init(seed):  # the HF constructor draws from torch's global generator
        return transformers.GPT2LMHeadModel(config)


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory):
    path = tmp_path_factory.mktemp("tiny-gpt2")
    tiny_tokenizer().save_pretrained(path)
    tiny_gpt2(0).save_pretrained(path)
    return path


def dataset():
    rows = {
        "prompt": ["q a b", "q c d", "q a d", "q b c"] * 2,
        "chosen": [" yes", " no maybe", " yes yes", " maybe"] * 2,
        "rejected": [" no", " yes", " no no maybe", " no"] * 2,
    }
    return datasets.Dataset.from_dict(rows)


def make_trainer(model_dir, tmp_path, **cpo):
    model, tok = load_causal_lm(str(model_dir))
    ref, _ = load_causal_lm(str(model_dir))
    args = ConstrainedPOConfig(
        output_dir=str(tmp_path), per_device_train_batch_size=4, max_steps=3, learning_rate=1e-2,
        logging_steps=1, report_to=[], save_strategy="no", use_cpu=True, seed=0, beta=1.0,
        bf16=False, **cpo,  # float32 everywhere: the init check below is exact
    )  # fmt: skip
    return ConstrainedPOTrainer(
        model=model, ref_model=ref, args=args, train_dataset=dataset(), processing_class=tok
    )


def first_batch_loss(trainer):
    batch = next(iter(trainer.get_train_dataloader()))
    trainer.model.eval()  # no dropout: the policy is exactly the reference
    with torch.no_grad():
        return float(trainer.compute_loss(trainer.model, batch))


def test_loss_at_init_is_log2_for_dpo_limit_and_above_for_cpo(model_dir, tmp_path):
    # policy = reference at init: α = ∞ is DPO, whose loss is exactly log 2
    dpo_limit = make_trainer(model_dir, tmp_path, alpha=math.inf)
    assert first_batch_loss(dpo_limit) == pytest.approx(math.log(2), abs=1e-6)  # float32
    cpo = make_trainer(model_dir, tmp_path, gamma=0.5, tau=2.0)
    assert first_batch_loss(cpo) > math.log(2) + 0.05  # softplus(β m) with m ≥ γ - δ_ref


def test_trains_a_few_steps_and_logs_cpo_metrics(model_dir, tmp_path):
    trainer = make_trainer(model_dir, tmp_path, variant="smooth")
    result = trainer.train()
    assert math.isfinite(result.training_loss)
    logged = {k for entry in trainer.state.log_history for k in entry}
    assert {"cpo/frac_in_U", "cpo/policy_accuracy", "rewards/margins"} <= logged
    for entry in trainer.state.log_history:
        if "cpo/frac_in_U" in entry:
            assert 0.0 <= entry["cpo/frac_in_U"] <= 1.0


def test_config_validation():
    with pytest.raises(ValueError, match="ConstrainedPOConfig: variant must be one of"):
        ConstrainedPOConfig(output_dir="x", variant="hard")
    with pytest.raises(ValueError, match=r"ConstrainedPOConfig: tau must be in \(0, inf\)"):
        ConstrainedPOConfig(output_dir="x", tau=0.0)
    # transformers' own message named the enum, not the field (the fuzz test's finding)
    with pytest.raises(ValueError, match="ConstrainedPOConfig: eval_strategy must be one of"):
        ConstrainedPOConfig(output_dir="x", eval_strategy=None)


# Shared by the TRL comparison: batch 8, β = 0.1 (TRL's default), float32, no dropout.
TRL_ARGS = dict(
    per_device_train_batch_size=8, report_to=[], use_cpu=True, bf16=False, beta=0.1, seed=0
)


def trl_loss(trainer, batch):
    trainer.model.eval()
    with torch.no_grad():
        return float(trainer.compute_loss(trainer.model, batch))


@pytest.mark.parametrize(
    ("trl_loss_type", "average_logps"),
    # TRL's "sigmoid" sums token log-probs; its "sigmoid_norm" averages them per token.
    [("sigmoid", False), ("sigmoid_norm", True)],
)
def test_alpha_to_infinity_equals_stock_trl_dpo_trainer(tmp_path, trl_loss_type, average_logps):
    from trl import DPOConfig, DPOTrainer

    # Policy and reference are different random models, so δ_θ ≠ δ_ref and the loss is not log 2.
    tok, out = tiny_tokenizer(), str(tmp_path)
    dpo = DPOTrainer(
        model=tiny_gpt2(0), ref_model=tiny_gpt2(1), train_dataset=dataset(), processing_class=tok,
        args=DPOConfig(output_dir=out, loss_type=trl_loss_type, **TRL_ARGS),
    )  # fmt: skip
    cpo = ConstrainedPOTrainer(
        model=tiny_gpt2(0), ref_model=tiny_gpt2(1), train_dataset=dataset(), processing_class=tok,
        args=ConstrainedPOConfig(
            output_dir=out, alpha=math.inf, average_logps=average_logps, **TRL_ARGS
        ),
    )  # fmt: skip
    batch = next(iter(dpo.get_train_dataloader()))  # the same batch for both trainers
    expected = trl_loss(dpo, batch)
    assert abs(expected - math.log(2)) > 1e-3  # the check is not the trivial policy = reference
    # float32 forward passes, TRL's fused LM head vs log_softmax: agree to a few float32 ulps
    assert trl_loss(cpo, batch) == pytest.approx(expected, rel=1e-6, abs=1e-7)


def test_ipo_loss_matches_trl_ipo_only_with_per_token_averaged_scores(tmp_path):
    from trl import DPOConfig, DPOTrainer

    from icml26.cpo import ipo_loss, sequence_logps

    trainer = DPOTrainer(
        model=tiny_gpt2(0), ref_model=tiny_gpt2(1), train_dataset=dataset(),
        processing_class=tiny_tokenizer(),
        args=DPOConfig(output_dir=str(tmp_path), loss_type="ipo", **TRL_ARGS),
    )  # fmt: skip
    batch = next(iter(trainer.get_train_dataloader()))
    expected = trl_loss(trainer, batch)
    labels = batch["input_ids"].masked_fill(batch["completion_mask"] == 0, -100)

    def ipo(average):
        with torch.no_grad():
            pc, pr, rc, rr = (
                score
                for lm in (trainer.model, trainer.ref_model)
                for score in sequence_logps(
                    lm(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"]).logits,
                    labels,
                    average=average,
                ).chunk(2)
            )
            return float(ipo_loss(pc, pr, rc, rr, beta=0.1).losses.mean())

    assert ipo(average=True) == pytest.approx(expected, rel=1e-6)  # float32, as above
    # TRL divides IPO's log-ratios by the completion length; summed scores give another loss
    # (responses here have 1-3 tokens, so the two differ by far more than round-off).
    assert ipo(average=False) != pytest.approx(expected, rel=1e-2)


@pytest.mark.parametrize(
    ("option", "value"),
    [
        ("loss_type", "ipo"),
        ("loss_type", ["sigmoid", "sft"]),  # RPO in TRL 1.16 (rpo_alpha in older TRL)
        ("loss_weights", [0.5]),
        ("ld_alpha", 0.5),
        ("f_divergence_type", "forward_kl"),
        ("label_smoothing", 0.1),
        ("use_weighting", True),
    ],
)
def test_config_refuses_trl_loss_options_it_would_ignore(option, value):
    with pytest.raises(ValueError, match=f"ConstrainedPOConfig: {option}=.* is not supported"):
        ConstrainedPOConfig(output_dir="x", use_cpu=True, bf16=False, **{option: value})


def test_config_accepts_trl_defaults_spelled_out():
    cfg = ConstrainedPOConfig(
        output_dir="x", use_cpu=True, bf16=False, loss_type="sigmoid", label_smoothing=0
    )
    assert cfg.loss_type == ["sigmoid"]


@pytest.mark.parametrize(("option", "value"), [("rpo_alpha", 1.0), ("use_weighting", True)])
def test_trainer_refuses_loss_options_set_after_the_config(model_dir, tmp_path, option, value):
    # rpo_alpha is no DPOConfig field in TRL 1.16; an older config would carry it.
    model, tok = load_causal_lm(str(model_dir))
    args = ConstrainedPOConfig(output_dir=str(tmp_path), use_cpu=True, bf16=False)
    setattr(args, option, value)
    with pytest.raises(ValueError, match=f"ConstrainedPOTrainer: {option}=.* is not supported"):
        ConstrainedPOTrainer(
            model=model, ref_model=tiny_gpt2(1), args=args, train_dataset=dataset(),
            processing_class=tok,
        )  # fmt: skip


def test_trainer_refuses_a_plain_dpo_config(model_dir, tmp_path):
    from trl import DPOConfig

    model, _ = load_causal_lm(str(model_dir))
    args = DPOConfig(output_dir=str(tmp_path), use_cpu=True, bf16=False)
    with pytest.raises(TypeError, match="args must be a ConstrainedPOConfig"):
        ConstrainedPOTrainer(model=model, args=args, train_dataset=dataset())


def test_load_causal_lm_checks_name_or_dir_before_any_download(model_dir, tmp_path):
    # Refused locally, without a hub request: wrong types, missing folders, impossible ids.
    with pytest.raises(TypeError, match="name_or_dir must be a hub id or a folder path"):
        load_causal_lm(None)
    with pytest.raises(FileNotFoundError, match=r"name_or_dir '\.\./nope' is no existing folder"):
        load_causal_lm("../nope")
    for missing in (str(tmp_path / "missing"), "a/b/c"):
        with pytest.raises(FileNotFoundError, match="is no existing folder"):
            load_causal_lm(missing)
    for bad in ("", "é", "has space"):
        with pytest.raises(ValueError, match="name_or_dir must be an existing folder or a hub id"):
            load_causal_lm(bad)
    # A pathlib.Path to a saved model loads like its string.
    model, _ = load_causal_lm(model_dir)
    again, _ = load_causal_lm(str(model_dir))
    for a, b in zip(model.parameters(), again.parameters(), strict=True):
        assert torch.equal(a, b)


def test_peft_without_ref_model_uses_the_adapter_disabled_model(model_dir, tmp_path):
    """Issue 49: TRL's LoRA-DPO recipe — no ref_model, the adapter-disabled policy is the reference.

    A LoRA adapter with random (not zero) B makes the policy differ from the base model, so the
    first batch's loss tells the two references apart: with the base model as reference α = ∞
    (DPO) is not at log 2; with the policy itself it would be.
    """
    peft = pytest.importorskip("peft")
    model, tok = load_causal_lm(str(model_dir))
    base, _ = load_causal_lm(str(model_dir))
    args = ConstrainedPOConfig(
        output_dir=str(tmp_path), per_device_train_batch_size=4, max_steps=2, learning_rate=1e-2,
        logging_steps=1, report_to=[], save_strategy="no", use_cpu=True, seed=0, beta=1.0,
        bf16=False, alpha=math.inf,
    )  # fmt: skip
    lora = peft.LoraConfig(r=2, lora_alpha=8, target_modules=["c_attn"], init_lora_weights=False)
    trainer = ConstrainedPOTrainer(
        model=model, args=args, train_dataset=dataset(), processing_class=tok, peft_config=lora
    )
    assert trainer.ref_model is None
    batch = next(iter(trainer.get_train_dataloader()))
    with torch.no_grad(), trainer._reference() as reference:
        ref_logits = reference(input_ids=batch["input_ids"]).logits
        assert trainer.model.peft_config  # the adapters come back after the context
    base_logits = base(input_ids=batch["input_ids"]).logits
    torch.testing.assert_close(ref_logits, base_logits)
    assert abs(first_batch_loss(trainer) - math.log(2)) > 1e-4  # policy != reference
    assert math.isfinite(trainer.train().training_loss)


def test_trainer_without_any_reference_is_refused(model_dir, tmp_path):
    trainer = make_trainer(model_dir, tmp_path)
    trainer.ref_model = None  # neither a reference, nor PEFT, nor precomputed log-probs
    with pytest.raises(ValueError, match="needs ref_model, a PEFT model"):
        first_batch_loss(trainer)
