"""Tabular theory (spec §7.9), problem construction, determinism (§7.11) and bad inputs."""

from dataclasses import replace

import pytest
import torch

from icml26.core import RunContext, torch_threads
from icml26.cpo import (
    frac_in_undesirable,
    make_bandit_problem,
    policy_metrics,
    train_tabular,
    true_pairs,
)
from icml26.cpo.experiments.bandit import BANDIT_PRESETS, bandit


@pytest.fixture(autouse=True)
def one_thread():
    # tiny tensors: a second intra-op thread only adds contention on a shared 2-core box
    with torch_threads(1):
        yield


def log_ratios(problem, logits):
    x, win, lose = true_pairs(problem)
    logp = torch.log_softmax(logits, -1)
    return logp[x, win] - logp[x, lose]


def test_dpo_on_expected_counts_converges_to_rlhf_optimum():
    beta = 1.0
    problem = make_bandit_problem(n_prompts=12, n_responses=4, labels="expected", seed=3)
    out = train_tabular(problem, "dpo", steps=3000, lr=0.05, beta=beta)
    x, win, lose = true_pairs(problem)
    delta_ref = log_ratios(problem, problem.ref_logits)
    optimum = delta_ref + (problem.reward[x, win] - problem.reward[x, lose]) / beta
    delta = log_ratios(problem, out["logits"])
    # spec tolerance: Adam at lr 0.05 settles within ~1e-3 of a strictly convex optimum
    assert torch.allclose(delta, optimum, atol=0.02, rtol=0)
    # U membership of the trained policy is the closed form δ_ref < δ* < 0 on every pair farther
    # than the convergence tolerance from U's boundary (there the sign cannot flip) ...
    clear = torch.minimum((optimum - delta_ref).abs(), optimum.abs()) > 0.02
    assert float(clear.double().mean()) > 0.9
    closed_form = (optimum < 0) & (optimum > delta_ref)
    trained = (delta < 0) & (delta > delta_ref)
    assert torch.equal(trained[clear], closed_form[clear])
    assert frac_in_undesirable(delta[clear], delta_ref[clear]) == pytest.approx(
        float(closed_form[clear].double().mean())
    )
    assert bool(closed_form.any())  # ... and the violated prompts make U non-empty at the optimum


def test_problem_structure():
    p = make_bandit_problem(n_prompts=50, n_responses=5, violated_frac=0.4, seed=0)
    assert int(p.violated.sum()) == 20
    assert bool((p.weight > 0).all()) and bool((p.chosen != p.rejected).all())
    # each unordered pair gets exactly n_annotations votes over its two orientations
    assert float(p.weight.sum()) == 50 * 10 * 5
    e = make_bandit_problem(n_prompts=10, n_responses=3, labels="expected", seed=0)
    assert float(e.weight.sum()) == pytest.approx(10 * 3)  # probabilities of both orientations
    assert torch.equal(make_bandit_problem(seed=7).reward, make_bandit_problem(seed=7).reward)


def test_reference_is_anti_aligned_on_violated_prompts():
    p = make_bandit_problem(n_prompts=200, seed=0)
    ref = policy_metrics(p, p.ref_logits)
    assert ref["kl"] == 0.0 and ref["frac_in_U"] == 0.0
    assert ref["acc_viol"] < 0.2
    # elsewhere the reference is independent of the reward: a coin flip up to sampling (~0.02 sd)
    assert ref["acc_nonviol"] == pytest.approx(0.5, abs=0.1)


def test_methods_run_and_cpo_beats_dpo_on_violated_prompts():
    p = make_bandit_problem(n_prompts=60, seed=1)
    dpo = train_tabular(p, "dpo", steps=150)["metrics"]
    cpo = train_tabular(p, "smooth", steps=150, gamma=0.5)["metrics"]
    assert cpo["acc_viol"] > dpo["acc_viol"] and cpo["frac_in_U"] < dpo["frac_in_U"]
    for method in ("clip", "easy", "ipo", "simpo"):
        assert 0.0 <= train_tabular(p, method, steps=5)["metrics"]["acc"] <= 1.0


def test_training_reports_its_loss_after_every_step():
    seen = []
    problem = make_bandit_problem(n_prompts=4, seed=0)
    out = train_tabular(problem, "dpo", steps=3, progress=lambda *args: seen.append(args))
    assert seen == [(i + 1, 3, {"loss": loss}) for i, loss in enumerate(out["history"])]
    with pytest.raises(TypeError, match="progress must be True, False, None or a callable"):
        train_tabular(problem, "dpo", steps=3, progress="bar")


def test_quick_preset_is_deterministic(tmp_path):
    # the quick preset with fewer prompts and no extra baselines: same code path, 5x cheaper
    config = replace(BANDIT_PRESETS["quick"], n_prompts=60, baselines=())
    first = bandit(config, RunContext(seed=11, artifact_dir=tmp_path))
    second = bandit(config, RunContext(seed=11, artifact_dir=tmp_path))
    assert first == second
    assert first != bandit(config, RunContext(seed=12, artifact_dir=tmp_path))


def test_bad_inputs():
    with pytest.raises(ValueError, match="train_tabular: method must be one of 'dpo'"):
        train_tabular(make_bandit_problem(n_prompts=2, seed=0), "ppo")
    with pytest.raises(ValueError, match=r"violated_frac must be in \[0, 1\]; got 1.5"):
        make_bandit_problem(violated_frac=1.5)
    with pytest.raises(ValueError, match=r"n_responses must be an integer in \[2, 1024\]"):
        make_bandit_problem(n_responses=1)
    with pytest.raises(TypeError, match="seed must be an int"):
        make_bandit_problem(seed="0")
