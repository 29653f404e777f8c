"""Every comparative matroid claim fails when the bounded-circuit algorithm is replaced by greedy.

The experiments run at their quick sizes with greedy (A1) in both algorithm slots — the control
the claims name — and each claim is judged on the metric the experiment computes: it must fail.
"""

import pytest

from icml26.core import RunContext, Status, discover
from icml26.matroid.experiments import bounded_circuit_scaling, c3_scaling
from icml26.matroid.experiments.common import GREEDY, SAMPLING

REGISTRY = {e.name: e for e in discover()}


def _greedy_twice(c, growth):
    from icml26.matroid import max_weight_basis

    greedy = lambda oracle, w, rng: max_weight_basis(oracle, w)  # noqa: E731
    return {GREEDY: greedy, SAMPLING: greedy}


@pytest.mark.parametrize(
    ("module", "name"),
    [
        (bounded_circuit_scaling, "matroid.bounded_circuit_scaling"),
        (c3_scaling, "matroid.c3_scaling"),
    ],
)
def test_scaling_claims_fail_with_greedy_in_place_of_sampling(module, name, monkeypatch, tmp_path):
    monkeypatch.setattr(module, "greedy_vs_sampling", _greedy_twice)
    run = REGISTRY[name].run
    metrics = run(module.PRESETS["quick"], RunContext(seed=0, artifact_dir=tmp_path))
    claims = [c for c in REGISTRY[name].claims if c.kind == "claim"]
    assert claims
    for claim in claims:
        verdict = claim.judge([metrics[claim.metric]], deterministic=True)
        assert verdict.status is Status.NOT_REPRODUCED, (claim.id, verdict.reason)
        # the control_value the claim declares is what the control measures
        assert metrics[claim.metric] == pytest.approx(claim.control_value, abs=0.02)
