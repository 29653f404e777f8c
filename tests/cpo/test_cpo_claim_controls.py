"""Every comparative claim of the cpo experiments fails on its control (issue 39).

Each test trains the control arms for real on tiny inputs (the untrained reference, or DPO in
place of CPO), feeds them to the experiment's own metric function and judges the claims there.
"""

import copy
import math

import pytest

from icml26.core import Status, torch_threads
from icml26.cpo import (
    TinyCausalLM,
    make_arith_preference_task,
    make_bandit_problem,
    policy_metrics,
    tiny_lm_metrics,
    train_sft,
    train_tabular,
    train_tiny_lm,
)
from icml26.cpo.experiments import bandit, kl_matched, tiny_lm


@pytest.fixture(autouse=True)
def one_thread():
    with torch_threads(1):
        yield


def judged(claims, metrics):
    """Status of every claim (kind "claim") whose metric ``metrics`` has, on 3 equal values."""
    return {
        c.id: c.judge([metrics[c.metric]] * 3).status
        for c in claims
        if c.kind == "claim" and c.metric in metrics
    }


def dpo_controlled(claims):
    return {c.id for c in claims if c.kind == "claim" and c.control.startswith("DPO in place")}


def assert_none_reproduced(statuses, expected_ids):
    """None of the claims ``expected_ids`` (each evaluated) is reproduced."""
    assert expected_ids <= set(statuses), f"not evaluated: {expected_ids - set(statuses)}"
    passed = {i for i in expected_ids if statuses[i] is Status.REPRODUCED}
    assert not passed, f"claims pass on their control: {passed}"


def test_bandit_claims_fail_on_the_untrained_reference_and_on_dpo_in_place_of_cpo():
    problem = make_bandit_problem(n_prompts=60, seed=1)
    # the do-nothing arm: the reference policy, whose DPO loss is log 2 on every row
    reference = policy_metrics(problem, problem.ref_logits)
    reference["loss"] = train_tabular(problem, "dpo", steps=1)["history"][0]
    assert reference["loss"] == pytest.approx(math.log(2))
    dpo = train_tabular(problem, "dpo", steps=150)["metrics"]
    claims = [c for c in bandit.BANDIT_CLAIMS if c.kind == "claim"]

    nothing = {f"dpo_{k}": v for k, v in reference.items()} | bandit.comparisons(
        reference, reference
    )
    assert_none_reproduced(judged(claims, nothing), {c.id for c in claims})
    cpo_is_reference = bandit.comparisons(dpo, reference)
    assert_none_reproduced(judged(claims, cpo_is_reference), dpo_controlled(claims))
    cpo_is_dpo = bandit.comparisons(dpo, dpo)
    assert_none_reproduced(judged(claims, cpo_is_dpo), dpo_controlled(claims))
    assert cpo_is_dpo["aligned_margin_viol"] <= 0.0  # the headline fails on DPO, whatever DPO does


def test_kl_matched_claim_fails_with_a_swept_dpo_run_in_place_of_cpo():
    problem = make_bandit_problem(n_prompts=40, seed=2)
    sweep = [train_tabular(problem, "dpo", steps=60, beta=b)["metrics"] for b in (0.3, 1.0)]
    for control in sweep:
        match = kl_matched.kl_match(sweep, control)
        assert match["kl_match_rel_gap"] == 0.0
        assert_none_reproduced(judged(kl_matched.KL_CLAIMS, match), {"A3"})


def test_tiny_lm_claims_fail_on_the_sft_reference_and_on_dpo_in_place_of_cpo():
    task = make_arith_preference_task(n_numbers=5, n_types=2, n_violated=1, seed=0)
    reference = TinyCausalLM(task.vocab_size, d_model=32, n_layers=1, n_heads=2, seed=0)
    train_sft(reference, task, steps=300, batch_size=64, lr=1e-2, seed=0)
    reference.requires_grad_(False)
    ref = tiny_lm_metrics(reference, reference, task)
    assert ref["acc_viol"] < 0.5  # the premise: the reference prefers the misread answer
    policy = copy.deepcopy(reference).requires_grad_(True)
    dpo = train_tiny_lm(policy, reference, task, "dpo", steps=20, batch_size=32, lr=1e-2, beta=2.5)
    dpo = dpo["metrics"]
    claims = [c for c in tiny_lm.TINY_LM_CLAIMS if c.kind == "claim"]
    ids = {c.id for c in claims}
    assert_none_reproduced(judged(claims, tiny_lm.comparisons(ref, ref)), ids)
    assert_none_reproduced(judged(claims, tiny_lm.comparisons(dpo, ref)), ids)
    assert_none_reproduced(judged(claims, tiny_lm.comparisons(dpo, dpo)), dpo_controlled(claims))
