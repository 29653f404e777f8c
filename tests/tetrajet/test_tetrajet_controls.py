"""Each comparative claim, evaluated on its control for real, is not reproduced (issue 39); the gap
gate turns the C4 claims into "testbed invalid" where no FP4 gap exists."""

import math

import numpy as np
import pytest

from icml26.core import Status, judge_claims
from icml26.core.threads import torch_threads
from icml26.tetrajet import (
    GPTConfig,
    TinyGPT,
    TrainConfig,
    fixed_windows,
    load_text_data,
    oscillation_toy_problem,
    train_lm,
    train_oscillation_toy,
    window_losses,
)
from icml26.tetrajet.experiments.lm import LM, LM_CLAIMS, lm_claim_metrics
from icml26.tetrajet.experiments.oscillation_toy import TOY_CLAIMS, toy_claim_metrics


def _claim(claims, claim_id):
    return next(c for c in claims if c.id == claim_id)


def _fails(claim, value):
    return claim.judge([value] * 3).status is not Status.REPRODUCED


def test_toy_claims_fail_when_osci_reset_is_replaced_by_plain_training():
    problem = oscillation_toy_problem(32, 64, seed=0)
    kwargs = dict(steps=200, osc_period=50, osc_track_steps=10)
    with torch_threads(1):  # small tensors: one thread is faster on a shared machine
        plain = train_oscillation_toy(problem, oscireset=False, **kwargs)
        control = train_oscillation_toy(problem, oscireset=False, **kwargs)  # for OsciReset
    metrics = toy_claim_metrics(plain, control)
    assert plain.oscillation_fraction > 0
    for claim_id, metric in (("C3b", "osc_reduction"), ("C3c", "loss_increase")):
        claim = _claim(TOY_CLAIMS, claim_id)
        assert metrics[metric] == claim.control_value == 0.0
        assert _fails(claim, metrics[metric])


def _windows(values, n=16):
    """Per-window test losses: each recipe's value on every one of ``n`` windows."""
    return {r: np.full(n, v) for r, v in values.items()}


@pytest.fixture(scope="module")
def tiny_runs():
    """Six steps of each recipe on a one-layer model: validation losses, per-window test losses
    and oscillation fractions."""
    data = load_text_data("char")
    gpt = GPTConfig(
        vocab_size=data.vocab_size, context=32, d_model=32, n_layers=1, n_heads=2, d_mlp=64
    )
    cfg = TrainConfig(steps=6, batch_size=2, warmup=2, eval_every=3, eval_batches=1)
    x, y = fixed_windows(data.test, 32, 512)
    final, test, osc = {}, {}, {}
    with torch_threads(1):
        for recipe in ("fp32", "naive_nvfp4", "fp4_all_the_way", "tetrajet_v2_base"):
            model = TinyGPT(gpt, seed=0)
            result = train_lm(model, data, recipe, cfg, context=32, seed=0)
            final[recipe], osc[recipe] = result.final_val_loss, result.oscillation
            test[recipe] = window_losses(model, x, y).numpy()
    return final, test, osc


def test_lm_claims_fail_when_r5_is_replaced_by_its_control(tiny_runs):
    final, test, osc = tiny_runs
    priors = LM.prior_recipes
    best = min((p for p in priors if p in final), key=final.__getitem__)
    # C4/C4a: R5 replaced by the best prior recipe of the run. The reduction is only defined
    # for a positive gap; six steps need not give one, so shift FP32 below the priors.
    shifted = {**test, "fp32": test[best] - 0.05}
    metrics = lm_claim_metrics(final, {**shifted, "tetrajet_v2": test[best]}, osc, priors)
    assert metrics["best_prior"] == best
    assert np.mean(metrics["gap_best_prior"]) == pytest.approx(0.05, abs=1e-5)
    for claim_id in ("C4", "C4a"):
        claim = _claim(LM_CLAIMS, claim_id)
        assert metrics["gap_reduction_vs_best_prior"] == pytest.approx(
            claim.control_value, abs=1e-5
        )
        assert claim.control_value == 0.0
        assert _fails(claim, metrics["gap_reduction_vs_best_prior"])
    # C4b: R5 replaced by R3 (no add-ons): every paired window difference is 0.
    metrics = lm_claim_metrics(final, {**test, "tetrajet_v2": test["tetrajet_v2_base"]}, osc,
                               priors)  # fmt: skip
    claim = _claim(LM_CLAIMS, "C4b")
    assert set(metrics["gap_r5_minus_r3"]) == {claim.control_value} == {0.0}
    assert claim.judge([metrics["gap_r5_minus_r3"]] * 3).status is not Status.REPRODUCED
    # C4c: R5 replaced by R4 (no OsciReset). Six steps are too few for any weight to flip four
    # times, so R4's fraction is the 1,000-step run's (0.271, docs) where the tiny run has none.
    fraction = osc["tetrajet_v2_base"] or 0.271
    oscillation = {"tetrajet_v2_mix_fp8": fraction, "tetrajet_v2": fraction}
    metrics = lm_claim_metrics(final, test, oscillation, priors)
    claim = _claim(LM_CLAIMS, "C4c")
    assert metrics["osc_ratio_r5_r4"] == claim.control_value == 1.0
    assert _fails(claim, metrics["osc_ratio_r5_r4"])


def _judge(seeds, corpus=1.0):
    tasks = []
    for r1, r2, r5 in seeds:
        values = {"fp32": 2.40, "naive_nvfp4": 2.40 + r1, "nvidia_nvfp4": 2.40 + r2}
        values["tetrajet_v2"] = 2.40 + r5
        tasks.append(
            {
                "min_loss_decrease": 1.8,
                "shakespeare_corpus": corpus,
                **lm_claim_metrics(values, _windows(values), {}, LM.prior_recipes),
            }
        )
    return {
        v.claim.id: v.status
        for v in judge_claims(LM_CLAIMS, tasks, deterministic={"shakespeare_corpus": True})
    }


def test_lm_headline_is_testbed_invalid_when_every_fp4_gap_is_small():
    # Three seeds whose gaps are all <= 0.024 nats (the 1,000-step run of issue 47): gate G
    # fails, so the headline reads "testbed invalid", not "not reproduced".
    verdicts = _judge(((0.012, 0.020, 0.024), (0.005, 0.006, 0.023), (0.010, 0.018, 0.015)))
    assert verdicts["G"] is Status.FAILS
    assert verdicts["C4"] is Status.TESTBED_INVALID
    assert verdicts["C4a"] is Status.TESTBED_INVALID
    assert _claim(LM_CLAIMS, "C4").headline


def test_lm_gap_gates_hold_on_a_clear_gap_and_the_headline_is_judged():
    verdicts = _judge(((0.08, 0.06, 0.02), (0.07, 0.05, 0.02), (0.09, 0.06, 0.02)))
    assert verdicts["G"] is Status.HOLDS and verdicts["G1"] is Status.HOLDS
    assert verdicts["C4"] is Status.REPRODUCED  # 1 - 0.02/0.06 = 0.67 >= 0.513 on every seed


def test_lm_claims_are_testbed_invalid_on_a_fallback_corpus():
    verdicts = _judge(((0.08, 0.06, 0.02),) * 3, corpus=0.0)
    assert verdicts["D"] is Status.FAILS
    assert verdicts["C4"] is Status.TESTBED_INVALID


def test_lm_best_prior_is_chosen_on_validation_not_on_test():
    val = {"fp32": 2.0, "naive_nvfp4": 2.1, "nvidia_nvfp4": 2.2, "tetrajet_v2": 2.05}
    test = _windows({"fp32": 2.0, "naive_nvfp4": 2.3, "nvidia_nvfp4": 2.1, "tetrajet_v2": 2.05})
    metrics = lm_claim_metrics(val, test, {}, LM.prior_recipes)
    assert metrics["best_prior"] == "naive_nvfp4"  # best on validation, worse on test
    assert metrics["gap_best_prior_mean"] == pytest.approx(0.3)
    assert metrics["gap_reduction_vs_best_prior"] == pytest.approx(1 - 0.05 / 0.3)


def test_lm_reduction_is_undefined_without_a_positive_gap():
    final = {"fp32": 2.40, "naive_nvfp4": 2.39, "nvidia_nvfp4": 2.41, "tetrajet_v2": 2.38}
    metrics = lm_claim_metrics(final, _windows(final), {}, LM.prior_recipes)
    assert metrics["best_prior"] == "naive_nvfp4"
    assert metrics["gap_best_prior_mean"] == pytest.approx(-0.01)
    assert math.isnan(metrics["gap_reduction_vs_best_prior"])
    assert math.isnan(metrics["osc_ratio_r5_r4"])  # R4 not trained
