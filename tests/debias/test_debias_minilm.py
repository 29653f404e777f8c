"""debias.minilm's quick path (issue 51): shipped BitFit biases, shared base passes."""

from __future__ import annotations

from dataclasses import replace

import torch
from standin_checks import assert_retrained

from icml26.core import RunContext, load_checkpoint
from icml26.core.runner import derive_seed
from icml26.debias import bias_profile, masked_mean_pool, tiny_minilm
from icml26.debias.experiments.minilm import MINILM_PRESETS
from icml26.debias.experiments.minilm_setup import base_embeddings, seed_setup
from icml26.debias.standins import STANDINS, shipped_bitfit, train_minilm_bitfit


def test_base_embeddings_read_off_the_profile_passes_equal_plain_embeddings():
    """Trimmed, length-sorted profile passes: the embeddings and profile of plain passes."""
    enc = tiny_minilm(seed=0)
    config = replace(MINILM_PRESETS["smoke"], n_profile=6, k_eval=3)
    s = seed_setup(config, RunContext(seed=0), 0, enc)
    test = s.test[:8]
    pert = [t + suffix for t in test for suffix in ("", " thanks a lot!!", " hey there, ok?")]
    emb_test, emb_pert, profile = base_embeddings(config, enc, test, pert, profile=True)
    assert torch.allclose(emb_test, enc.embed(test), atol=1e-6)
    assert torch.allclose(emb_pert, enc.embed(pert), atol=1e-6)
    names = ["embeddings"] + [f"encoder.layer.{j}" for j in range(len(enc.model.encoder.layer))]
    plain = bias_profile(enc.model, enc.tokenize(test[:6]), enc.tokenize(pert[:18]), names,
                         pool=masked_mean_pool)  # fmt: skip
    assert list(profile["module"]) == names
    for col in ("bias_norm", "fluct", "rho", "bias_share"):
        ours, ref = (torch.tensor(t[col].to_numpy()) for t in (profile, plain))
        assert torch.allclose(ours, ref, rtol=1e-5, atol=1e-9), col
    assert base_embeddings(config, enc, test, pert, profile=False)[2] is None


def test_shipped_bitfit_is_what_its_training_command_produces():
    """Retrain quick's BitFit model as `icml26 tool debias train-standin minilm_bitfit` does."""
    state, meta = load_checkpoint(STANDINS["minilm_bitfit"].path)
    assert meta["command"] == "icml26 tool debias train-standin minilm_bitfit"
    trained = train_minilm_bitfit(resume=None)
    assert trained.config == meta["config"]
    assert set(trained.model) == set(state)
    # one thread, the same draws: bit-identical on the machine that trained it, 4.9e-4 apart
    # (relative L2) on an AVX-512 machine (2026-12-08)
    assert_retrained(trained.model, state, max_distance=0.01)
    assert abs(trained.metrics["final_loss"] - meta["metrics"]["final_loss"]) < 1e-5
    assert meta["metrics"]["n_trainable"] == 26180


def test_quick_loads_the_shipped_bitfit_and_only_for_its_settings():
    from icml26.debias import load_minilm

    quick = MINILM_PRESETS["quick"]
    seed = derive_seed("debias.minilm", quick, 0)
    enc = load_minilm()
    s = seed_setup(quick, RunContext(seed=seed), 0, enc)
    model = shipped_bitfit(quick, seed, 0, enc, s.head)
    assert model is not None and not model.training
    changed = [n for (n, p), q in zip(model.named_parameters(), enc.parameters(), strict=False)
               if n.startswith("encoder.") and not torch.equal(p, q)]  # fmt: skip
    assert changed and all(n.endswith("bias") for n in changed)  # only biases differ
    assert shipped_bitfit(quick, seed + 1, 0, enc, s.head) is None
    assert shipped_bitfit(quick, seed, 1, enc, s.head) is None
    other = replace(quick, steps=41)
    assert shipped_bitfit(other, derive_seed("debias.minilm", other, 0), 0, enc, s.head) is None
    tiny = tiny_minilm(seed=0)  # another encoder layout: not the shipped biases
    assert shipped_bitfit(quick, seed, 0, tiny, torch.nn.Linear(32, 4)) is None
