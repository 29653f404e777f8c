"""ConstrainedPOTrainer end to end on a tiny random GPT-2 saved to a temporary folder (no hub)."""

import math

import datasets
import pytest
import torch
import transformers

from icml26.core import seeded_default_init
from icml26.cpo import ConstrainedPOConfig, ConstrainedPOTrainer, load_causal_lm

WORDS = ["<pad>", "<eos>", "q", "a", "b", "c", "d", "yes", "no", "maybe"]


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory):
    from tokenizers import Tokenizer, models, pre_tokenizers

    path = tmp_path_factory.mktemp("tiny-gpt2")
    vocab = {w: i for i, w in enumerate(WORDS)}
    tok = Tokenizer(models.WordLevel(vocab, unk_token="<pad>"))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    fast = transformers.PreTrainedTokenizerFast(
        tokenizer_object=tok, pad_token="<pad>", eos_token="<eos>"
    )
    fast.save_pretrained(path)
    config = transformers.GPT2Config(
        vocab_size=len(WORDS), n_positions=32, n_embd=16, n_layer=1, n_head=2,
        bos_token_id=1, eos_token_id=1, pad_token_id=0,
    )  # fmt: skip
    with seeded_default_init(0):  # the HF constructor draws from torch's global generator
        transformers.GPT2LMHeadModel(config).save_pretrained(path)
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
