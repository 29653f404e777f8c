"""ARTS (spec §7): DPC-KNN anchors, the importance score, nested plans and the S-weighted merge."""

import itertools

import numpy as np
import pytest
import torch

from icml26.omnifit import (
    LAHPProfile,
    arts_scores,
    dpc_knn_anchors,
    merge_tokens,
    modality_anchors,
    plan_keep_indices,
)


def _blobs(M, per, seed=0):
    g = torch.Generator().manual_seed(seed)
    centres = torch.randn(M, 6, generator=g, dtype=torch.float64) * 50
    points = centres.repeat_interleave(per, 0) + torch.randn(
        M * per, 6, generator=g, dtype=torch.float64
    )
    return points, torch.arange(M).repeat_interleave(per)


def test_anchors_are_distinct_and_one_per_well_separated_blob():
    H, blob = _blobs(8, 20)
    anchors = dpc_knn_anchors(H, M=8, k=5)
    assert anchors.numel() == 8 == len(set(anchors.tolist()))
    assert sorted(blob[anchors].tolist()) == list(range(8))


def test_m_at_least_n_returns_every_token():
    H = torch.randn(5, 3, generator=torch.Generator().manual_seed(1))
    assert dpc_knn_anchors(H, M=32, k=5).tolist() == [0, 1, 2, 3, 4]


def test_returns_m_distinct_indices_on_random_tokens():
    H = torch.randn(100, 16, generator=torch.Generator().manual_seed(2))
    anchors = dpc_knn_anchors(H, M=32, k=5)
    assert anchors.numel() == 32 == len(set(anchors.tolist()))


def _layout():
    return torch.tensor([1, 1, 1, 2, 2, 0])


def test_lambda_zero_gives_the_norm():
    g = torch.Generator().manual_seed(3)
    H0 = torch.randn(2, 6, 4, generator=g, dtype=torch.float64)
    anchors = modality_anchors(H0, _layout(), M=2, k=1)
    torch.testing.assert_close(arts_scores(H0, _layout(), anchors, lam=0.0), H0.norm(dim=-1))


def test_tokens_orthogonal_or_opposite_to_every_anchor_get_no_bonus():
    anchors = {
        "video": torch.tensor([[0.0, 0.0, 1.0]]),
        "audio": torch.tensor([[1.0, 0.0, 0.0], [0.0, 2.0, 0.0]]),
    }
    H0 = torch.tensor(
        [
            [
                [0.0, 0.0, 3.0],
                [-1.0, -1.0, 0.0],
                [2.0, 0.0, -5.0],
                [0.0, 0.0, -1.0],
                [1.0, 1.0, 0.0],
                [9.0, 9.0, 9.0],
            ]
        ]
    )
    s = arts_scores(H0, _layout(), anchors, lam=1.5)
    norms = H0.norm(dim=-1)
    assert s[0, 0] == norms[0, 0]  # video token orthogonal to both audio anchors
    assert s[0, 1] == norms[0, 1]  # video token negatively aligned with both
    assert s[0, 2] == pytest.approx(
        float(norms[0, 2]) + 1.5 * 2.0
    )  # projection 2 on audio anchor 1
    assert s[0, 3] == norms[0, 3]  # audio token opposite to the video anchor
    assert s[0, 5] == norms[0, 5]  # text: no cross term


def test_score_grows_monotonically_with_the_projection_onto_an_anchor():
    anchors = {"video": torch.zeros(0, 2), "audio": torch.tensor([[1.0, 0.0]])}
    ids = torch.tensor([1])
    values = []
    for t in np.linspace(0, 3, 7):
        # fixed norm 3: only the projection onto the audio anchor changes
        x = torch.tensor([[[t, (9 - t**2) ** 0.5]]], dtype=torch.float64)
        values.append(float(arts_scores(x, ids, anchors, lam=1.5)[0, 0]))
    assert values == sorted(values) and values[0] < values[-1]


def test_scores_use_only_the_other_modality_anchors():
    g = torch.Generator().manual_seed(4)
    H0 = torch.randn(1, 6, 4, generator=g, dtype=torch.float64)
    anchors = modality_anchors(H0, _layout(), M=2, k=1)
    base = arts_scores(H0, _layout(), anchors)
    moved = dict(anchors, video=anchors["video"] * -3 + 1)
    changed = arts_scores(H0, _layout(), moved)
    torch.testing.assert_close(changed[:, :3], base[:, :3])  # video looks at audio anchors only
    assert not torch.allclose(changed[:, 3:5], base[:, 3:5])


def test_layer_average_preference_weights_the_cross_term():
    anchors = {"video": torch.tensor([[0.0, 1.0]]), "audio": torch.tensor([[1.0, 0.0]])}
    H0 = torch.tensor([[[1.0, 0.0], [0.0, 1.0]]], dtype=torch.float64)
    ids = torch.tensor([1, 2])
    s = arts_scores(
        H0,
        ids,
        anchors,
        lam=1.0,
        cross_weight="layer_avg_pref",
        preference={"video": 0.5, "audio": 1.5},
    )
    # video's cross term uses w_audio = 1.5 / 1 = 1.5, audio's uses w_video = 0.5
    assert s.tolist() == [[1.0 + 1.5, 1.0 + 0.5]]


def _profile():
    return LAHPProfile(
        [16, 12, 10, 8],
        16,
        {"video": [0.2, 0.1, 0.3, 0.2], "audio": [0.1, 0.3, 0.1, 0.2]},
        100.0,
        1.0,
    )


def test_plan_is_nested_matches_the_budgets_and_keeps_text():
    g = torch.Generator().manual_seed(5)
    ids = torch.tensor([1] * 16 + [2] * 8 + [0] * 3)
    scores = torch.rand(3, ids.numel(), generator=g)
    plan = plan_keep_indices(scores, ids, _profile(), 0.3)
    budgets = _profile().layer_budgets(0.3, {"video": 16, "audio": 8})
    text = set(range(24, 27))
    for b in range(3):
        sets = [set(p[b].tolist()) for p in plan]
        for earlier, later in itertools.pairwise(sets):
            assert later <= earlier
        for s, budget in zip(sets, budgets, strict=True):
            assert text <= s
            assert sum(ids[i] == 1 for i in s) == budget["video"]
            assert sum(ids[i] == 2 for i in s) == budget["audio"]
            # the kept video tokens are the top-scored ones
            video = [i for i in range(16)]
            best = sorted(video, key=lambda i: -float(scores[b, i]))[: budget["video"]]
            assert {i for i in s if ids[i] == 1} == set(best)


def test_mu_one_plan_keeps_everything():
    ids = torch.tensor([1] * 16 + [2] * 8 + [0] * 3)
    plan = plan_keep_indices(
        torch.rand(1, 27, generator=torch.Generator().manual_seed(0)), ids, _profile(), 1.0
    )
    assert all(p.tolist() == [list(range(27))] for p in plan)


def test_merged_vector_is_the_score_weighted_mean():
    g = torch.Generator().manual_seed(6)
    x = torch.randn(1, 5, 3, generator=g, dtype=torch.float64)
    x[0, 3] = x[0, 0] * 2 + 0.01  # most similar to token 0
    x[0, 4] = x[0, 1] * 3  # most similar to token 1
    s = torch.tensor([[1.0, 2.0, 0.5, 3.0, 4.0]], dtype=torch.float64)
    merged, w = merge_tokens(
        x, torch.tensor([[0, 1, 2]]), torch.tensor([[3, 4]]), s, return_weights=True
    )
    torch.testing.assert_close(merged[0, 0], (1.0 * x[0, 0] + 3.0 * x[0, 3]) / 4.0)
    torch.testing.assert_close(merged[0, 1], (2.0 * x[0, 1] + 4.0 * x[0, 4]) / 6.0)
    torch.testing.assert_close(merged[0, 2], x[0, 2])
    assert float(w.sum()) == pytest.approx(float(s.sum()))  # total weight conserved


def test_equal_scores_and_one_neighbour_give_the_plain_average():
    x = torch.tensor([[[1.0, 0.0], [0.0, 1.0], [0.9, 0.1]]], dtype=torch.float64)
    merged = merge_tokens(
        x, torch.tensor([[0, 1]]), torch.tensor([[2]]), torch.ones(1, 3, dtype=torch.float64)
    )
    torch.testing.assert_close(merged[0, 0], (x[0, 0] + x[0, 2]) / 2)


def test_merge_stays_inside_a_modality():
    x = torch.tensor([[[1.0, 0.0], [0.0, 1.0], [1.0, 0.01]]], dtype=torch.float64)
    ids = torch.tensor([1, 2, 2])  # token 2 resembles token 0 but is audio like token 1
    merged = merge_tokens(
        x,
        torch.tensor([[0, 1]]),
        torch.tensor([[2]]),
        torch.ones(1, 3, dtype=torch.float64),
        modality_ids=ids,
    )
    torch.testing.assert_close(merged[0, 0], x[0, 0])
    torch.testing.assert_close(merged[0, 1], (x[0, 1] + x[0, 2]) / 2)


def test_zero_weights_fall_back_to_the_plain_mean():
    x = torch.tensor([[[1.0, 0.0], [3.0, 0.0]]], dtype=torch.float64)
    merged = merge_tokens(
        x, torch.tensor([[0]]), torch.tensor([[1]]), torch.zeros(1, 2, dtype=torch.float64)
    )
    assert merged.tolist() == [[[2.0, 0.0]]]


@pytest.mark.parametrize("ties", [False, True])
def test_anchors_match_a_brute_force_density_peak_reference(ties):
    g = torch.Generator().manual_seed(7)
    H = torch.randn(40, 5, generator=g, dtype=torch.float64)
    if ties:  # a coarse grid: equal densities (broken by index) and duplicate points
        H = (H / 2).round()
    D = torch.cdist(H, H)
    k = 5
    log_rho = [-(torch.sort(D[i]).values[1 : k + 1] ** 2).mean().item() for i in range(40)]
    gamma = []
    for i in range(40):
        # ties by index: j is denser than i when its density is higher, or equal with j < i
        denser = [j for j in range(40) if (log_rho[j], -j) > (log_rho[i], -i)]
        delta = min(D[i, j].item() for j in denser) if denser else D[i].max().item()
        gamma.append(log_rho[i] + (np.log(delta) if delta > 0 else -np.inf))
    expected = sorted(range(40), key=lambda i: -gamma[i])[:8]
    assert dpc_knn_anchors(H, M=8, k=k).tolist() == expected
