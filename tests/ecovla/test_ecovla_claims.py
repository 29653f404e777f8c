"""The reproduction's claims cannot flatter (issue 39): each comparative claim, evaluated on its
control for real, does not pass; the gates' metrics measure what they say; the FLOPs checks are
analytic and the same for every seed."""

from dataclasses import replace

import numpy as np
import pytest
import torch

from icml26.core import RunContext, Status, judge_claims
from icml26.ecovla import (
    DensePolicy,
    FixedPatternPolicy,
    NoisyPolicy,
    Shift2DPickPlaceEnv,
    TinyVLA,
    TinyVLAConfig,
    collect_demos,
    first_action_errors,
    initial_frames,
    random_pattern,
    static_wanda_pattern,
)
from icml26.ecovla.experiments import flops, shift
from icml26.ecovla.experiments.common import (
    SHIFT_PRESETS,
    episode_success,
    paired,
    relative_errors,
)

CONFIG = replace(SHIFT_PRESETS["smoke"], eval_episodes=3)


@pytest.fixture(scope="module")
def model():
    return TinyVLA(TinyVLAConfig(d_model=32, n_layers=2, d_ff=64, patch=16), seed=0)


def claims(*ids):
    by_id = {c.id: c for c in shift.SHIFT_CLAIMS}
    return [by_id[i] for i in ids]


def test_every_paired_claim_fails_when_the_method_is_replaced_by_its_control(model, tmp_path):
    # static Wanda in place of EAP (C1a), of the mixed-calibrated baseline's rival (C1b), of the
    # fixed interval's (C3a), of alpha = 0's (C3b), of the oracle (Q1); random channels in place
    # of EAP against random (C1c): the same policy twice on the same episodes
    ctx = RunContext(seed=0, artifact_dir=tmp_path)
    pattern = static_wanda_pattern(model, initial_frames(4, seed=0), 0.4)
    first = episode_success(FixedPatternPolicy(model, pattern), CONFIG, ctx)
    again = episode_success(FixedPatternPolicy(model, pattern), CONFIG, ctx)
    diffs = paired(again, first)
    assert diffs == [0.0] * CONFIG.eval_episodes  # the episodes are paired: same outcomes
    for claim in claims("C1a", "C1b", "C1c", "C3a", "C3b", "Q1"):
        assert claim.control_value == 0.0
        assert claim.judge([diffs]).status is Status.NOT_REPRODUCED, claim.id


def test_drop_claims_on_random_channels_do_not_pass_without_a_competent_dense_policy(
    model, tmp_path
):
    # an untrained policy: dense and random channels both fail every episode, so "EAP - dense"
    # with random channels in place of EAP reads 0 (>= -0.4) -- the dense gate G1 stops it
    ctx = RunContext(seed=0, artifact_dir=tmp_path)
    dense = episode_success(DensePolicy(model), CONFIG, ctx)
    rand = episode_success(
        FixedPatternPolicy(model, random_pattern(model, 0.4, seed=1)), CONFIG, ctx
    )
    metrics = {
        "dense_success": dense.tolist(),
        "openloop_static_ratio_25": [1.0] * 3,
        "openloop_random_ratio_25": [2.0] * 3,
        "noise_minus_dense": [0.0] * 3,
        "eap_minus_dense_40": paired(rand, dense),
        "eap_minus_dense_25": paired(rand, dense),
        "eap_fastv_minus_dense_40": paired(rand, dense),
    }
    chosen = [c for c in shift.SHIFT_CLAIMS if c.kind == "gate"]
    chosen += claims("H", "C2a", "C2b", "C4c")
    verdicts = {v.claim.id: v.status for v in judge_claims(chosen, [metrics])}
    assert verdicts["G1"] is Status.FAILS
    for claim_id in ("H", "C2a", "C2b", "C4c"):
        assert verdicts[claim_id] is Status.TESTBED_INVALID


def test_the_drop_claims_fail_at_their_measured_control_values():
    headline, c2a, c2b, c4c = claims("H", "C2a", "C2b", "C4c")
    assert headline.headline and headline.source == "paper"
    # random channels on the 70.5 % quick policy (200 episodes, docs/ecovla.md): 14.5 % at 25 %,
    # 0 % at 40 %; static Wanda in the paper: 88.8 vs 96.7
    for claim, value in ((headline, -7.9), (c2a, -56.0), (c2b, -70.5), (c4c, -70.5)):
        diffs = [value] * 40
        assert claim.judge([diffs]).status is Status.NOT_REPRODUCED, claim.id


def test_the_noise_gate_perturbs_the_motion_only():
    model = TinyVLA(TinyVLAConfig(d_model=32, n_layers=1, d_ff=64, patch=16), seed=0)
    obs, _ = Shift2DPickPlaceEnv(split="shift").reset(seed=0)
    clean = DensePolicy(model).step(obs)
    assert np.array_equal(NoisyPolicy(DensePolicy(model), 0.0).step(obs), clean)
    noisy = NoisyPolicy(DensePolicy(model), 0.1, seed=0).step(obs)
    assert np.array_equal(noisy[:, 2], clean[:, 2])
    assert 0.01 < np.std(noisy[:, :2] - clean[:, :2]) < 0.5
    with pytest.raises(ValueError, match="sigma"):
        NoisyPolicy(DensePolicy(model), 1.5)
    with pytest.raises(TypeError, match="policy"):
        NoisyPolicy(model, 0.1)


def test_first_action_errors_act_with_the_sliced_pattern_and_restore_dense(model):
    demos = collect_demos(1, split="shift", seed=0)
    pattern = random_pattern(model, 0.4, seed=0)
    sliced = first_action_errors(model, demos, pattern, batch_size=7)
    assert model.installed_key is None
    with torch.no_grad(), model.masked(pattern):  # masks compute the same function
        chunk = model(
            torch.as_tensor(demos.images),
            torch.as_tensor(demos.instruction),
            torch.as_tensor(demos.proprio),
        )
    expected = (chunk[:, 0] - torch.as_tensor(demos.chunks[:, 0])).abs().mean(dim=1).numpy()
    np.testing.assert_allclose(sliced, expected, atol=1e-5)
    assert not np.allclose(first_action_errors(model, demos), sliced)
    with pytest.raises(TypeError, match="demos"):
        first_action_errors(model, demos.images)
    with pytest.raises(ValueError, match="batch_size"):
        first_action_errors(model, demos, batch_size=0)


def test_relative_errors_average_to_the_ratio_of_mean_errors():
    rng = np.random.default_rng(0)
    dense, pruned = rng.uniform(0.1, 1, 50), rng.uniform(0.1, 2, 50)
    assert np.mean(relative_errors(pruned, dense)) == pytest.approx(pruned.mean() / dense.mean())
    assert relative_errors(dense, dense) == [1.0] * 50


def test_flops_are_analytic_and_report_the_effective_head_ratio(tmp_path):
    config = flops.FLOPS_PRESETS["quick"]
    a = flops.run(config, RunContext(seed=0, artifact_dir=tmp_path))
    b = flops.run(config, RunContext(seed=1, artifact_dir=tmp_path))
    assert a == b  # counts only: no seed enters
    assert a["kept_heads_40"] == 0.5  # 4 heads: "40 %" keeps round(0.6 x 4) = 2 of 4
    assert a["kept_mlp_40"] == pytest.approx(154 / 256)
    assert a["flops_ratio_40"] <= 0.65 and a["fastv_flops_reduction_40"] >= 1.8
