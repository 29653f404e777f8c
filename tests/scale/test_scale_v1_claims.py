"""Issue 41: on AmbiguousReach2D-v1 a decoder identical to greedy passes none of the claims, and
every claim is judged on paired per-episode differences (each on its control: 0 points). Run on
the first policy scale.reach_v1 evaluates (egocentric, instruction-FiLM stem)."""

import pytest

from icml26.core import RunContext, Status, torch_threads
from icml26.scale import POLICIES_V1, GreedyDecoder
from icml26.scale.experiments import reach_v1 as v1
from icml26.scale.experiments.reach_v1 import (
    ABLATION_CLAIMS,
    DECODERS,
    MAIN_CLAIMS,
    ReachV1Config,
    run_v1,
)


@pytest.fixture(autouse=True)
def _one_torch_thread():
    with torch_threads(1):
        yield


@pytest.fixture(scope="module")
def greedy_everywhere():
    """Every decoder of both v1 experiments replaced by greedy, on a shipped policy."""
    patch = pytest.MonkeyPatch()
    patch.setattr(v1, "make_v1_decoder", lambda *args, **kwargs: GreedyDecoder())
    config = ReachV1Config(
        policies=POLICIES_V1[:1], episodes=4, splits=("id",), decoders=DECODERS,
        expert_episodes=2,
    )  # fmt: skip
    try:
        return run_v1("scale.reach_v1", config, RunContext(seed=0))
    finally:
        patch.undo()


def test_a_decoder_identical_to_greedy_passes_no_claim(greedy_everywhere):
    out = greedy_everywhere
    claims = [c for c in (*MAIN_CLAIMS, *ABLATION_CLAIMS) if c.kind == "claim"]
    assert {c.id for c in claims} == {"S1", "S1a", "C1", "S2", "S3a", "S3b", "S3c", "A2"}
    for claim in claims:
        values = out[claim.metric]
        assert len(values) == 4 and set(values) == {0.0}, claim.id  # paired, per episode
        assert claim.control_value == 0.0
        for seeds in ([values], [values] * 3):  # one policy; three, as the presets run
            verdict = claim.judge(seeds)
            assert verdict.status is Status.NOT_REPRODUCED, (claim.id, verdict.reason)


def test_gates_see_a_greedy_scale(greedy_everywhere):
    """The premise gate G4 fails when 'SCALE' never samples (tau = 0 everywhere)."""
    out = greedy_everywhere
    gate = next(c for c in MAIN_CLAIMS if c.id == "G4")
    assert out["tau_mid_share"] == 0.0
    assert gate.judge([0.0, 0.0, 0.0]).status is Status.FAILS
    assert out["forward_pass_gap"] == 0.0 and out["policy"] == POLICIES_V1[0]
