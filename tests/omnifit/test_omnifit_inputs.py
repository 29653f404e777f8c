"""Bad input (the issue's list) is refused with a ValueError naming the argument; a layout without
audio or video follows its stated rule; AV-Sync streams are well-formed and deterministic."""

import numpy as np
import pytest
import torch

from icml26.omnifit import (
    LAHPProfile,
    OmniFitCompressor,
    arts_scores,
    dpc_knn_anchors,
    effective_rank,
    fit_global_anchors,
    make_dataset,
    modality_preference,
    retention_profile,
    run_compressed,
)
from icml26.omnifit.avsync import N_DIGITS, N_PITCHES

PSI = [1.0, 0.5, 0.25]


@pytest.mark.parametrize("mu", [0.0, -0.1, 1.5, float("nan")])
def test_mu_outside_the_unit_interval(mu):
    with pytest.raises(ValueError, match="mu"):
        retention_profile(PSI, mu, 1.0, 1.0, 10)
    with pytest.raises(ValueError, match="mu"):
        OmniFitCompressor(LAHPProfile.uniform(3, 4), mu)


@pytest.mark.parametrize("delta", [0.0, 1.0, -0.5])
def test_delta_outside_the_open_unit_interval(delta):
    with pytest.raises(ValueError, match="delta"):
        effective_rank(torch.eye(3), delta)


@pytest.mark.parametrize("r_min", [0.0, 0.3, -1.0])
def test_r_min_outside_zero_to_mu(r_min):
    with pytest.raises(ValueError, match="r_min"):
        retention_profile(PSI, 0.2, 1.0, 1.0, 10, r_min=r_min)


@pytest.mark.parametrize(("c1", "c2"), [(0.0, 1.0), (1.0, 0.0), (-1.0, 1.0)])
def test_cost_coefficients_must_be_positive(c1, c2):
    with pytest.raises(ValueError, match=r"c1|c2"):
        retention_profile(PSI, 0.2, c1, c2, 10)


def test_negative_lambda_and_small_m_or_k_are_refused():
    profile = LAHPProfile.uniform(3, 4)
    with pytest.raises(ValueError, match="lam"):
        OmniFitCompressor(profile, 0.5, lam=-0.1)
    with pytest.raises(ValueError, match="M"):
        OmniFitCompressor(profile, 0.5, M=0)
    with pytest.raises(ValueError, match="k"):
        dpc_knn_anchors(torch.randn(5, 2), M=2, k=0)


@pytest.mark.parametrize(
    ("name", "value"), [("mode", "drop"), ("cross_weight", "pref"), ("anchors", "train")]
)
def test_unknown_options_are_refused(name, value):
    with pytest.raises(ValueError, match=name):
        OmniFitCompressor(LAHPProfile.uniform(3, 4), 0.5, **{name: value})


def test_global_anchors_must_be_given_for_the_global_option():
    with pytest.raises(ValueError, match="global_anchors"):
        OmniFitCompressor(LAHPProfile.uniform(3, 4), 0.5, anchors="global")


def test_modality_ids_with_unknown_codes_or_the_wrong_length():
    H0 = torch.randn(1, 4, 3)
    anchors = {"video": torch.zeros(0, 3), "audio": torch.zeros(0, 3)}
    with pytest.raises(ValueError, match="modality_ids"):
        arts_scores(H0, torch.tensor([0, 1, 2, 5]), anchors)
    with pytest.raises(ValueError, match="modality_ids"):
        arts_scores(H0, torch.tensor([0, 1, 2]), anchors)


def test_attention_maps_of_the_wrong_shape():
    with pytest.raises(ValueError, match="attn_maps"):
        modality_preference(torch.rand(2, 3, 4), torch.tensor([0, 1, 2]))
    with pytest.raises(ValueError, match="modality_ids"):
        modality_preference(torch.rand(2, 3, 3), torch.tensor([0, 1]))


def test_a_layout_without_audio_keeps_mu_of_the_video_and_no_bonus():
    ids = torch.tensor([1] * 10 + [0] * 2)
    H0 = torch.randn(2, 12, 4, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    c = OmniFitCompressor(LAHPProfile.uniform(2, 4), 0.3, M=3, k=2, mode="prune")
    c.prepare(H0, ids)
    torch.testing.assert_close(c.scores(H0, ids), H0.norm(dim=-1))  # no audio anchors: no bonus
    h, _, _, idx = c.before_layer(0, H0, torch.arange(12).expand(2, -1), None)
    assert idx.shape == (2, 2 + 3) and h.shape == (2, 5, 4)


def test_global_anchors_score_like_per_input_ones_built_from_the_same_tokens():
    g = torch.Generator().manual_seed(1)
    ids = torch.tensor([1] * 6 + [2] * 4 + [0])
    H0 = torch.randn(1, 11, 4, generator=g, dtype=torch.float64)
    bank = fit_global_anchors(H0, ids, M=3, k=2)
    per_input = OmniFitCompressor(LAHPProfile.uniform(2, 4), 0.5, M=3, k=2)
    global_ = OmniFitCompressor(
        LAHPProfile.uniform(2, 4), 0.5, anchors="global", global_anchors=bank
    )
    # one sample: pooling the batch is the sample itself, so the anchors coincide
    torch.testing.assert_close(global_.scores(H0, ids), per_input.scores(H0, ids))


def test_layer_average_preference_option_runs_end_to_end():
    from icml26.omnifit import TinyOmni, TinyOmniConfig

    model = TinyOmni(TinyOmniConfig(n_layers=2, d=16, n_heads=2, d_ff=32), seed=0).eval()
    batch = make_dataset(2, windows=2, seed=0).batch(slice(None))
    profile = LAHPProfile([16, 8], 16, {"video": [0.1, 0.3], "audio": [0.3, 0.5]}, 10.0, 1.0)
    with torch.no_grad():
        compressor = OmniFitCompressor(profile, 0.3, M=4, k=2, cross_weight="layer_avg_pref")
        out = run_compressed(model, batch, compressor)
    assert out.alive[0] >= out.alive[1]


def test_avsync_streams_are_deterministic_well_formed_and_split_by_image():
    a, b = make_dataset(20, 8, seed=3), make_dataset(20, 8, seed=3)
    np.testing.assert_array_equal(a.video, b.video)
    np.testing.assert_array_equal(a.labels, b.labels)
    assert a.video.shape == (20, 8, 16, 64) and a.audio.shape == (20, 8, 8, 16)
    assert np.all(a.tone.sum(1) >= 1) and np.all(a.tone.sum(1) <= 2)
    for q, low, high in ((0, 0, N_DIGITS), (1, N_DIGITS, N_DIGITS + N_PITCHES), (2, 18, 22)):
        chosen = a.labels[a.qtype == q]
        assert np.all((chosen >= low) & (chosen < high))
    # a tone window's audio is louder in the tone's pooled bin than a noise window's
    assert a.audio[a.tone].max(-1).mean() > a.audio[~a.tone].max(-1).mean() + 0.5
    test = make_dataset(20, 8, seed=3, split="test")
    assert not np.array_equal(test.video, a.video)


def test_avsync_refuses_bad_sizes():
    with pytest.raises(ValueError, match="windows"):
        make_dataset(2, windows=1)
    with pytest.raises(ValueError, match="question_types"):
        make_dataset(2, question_types=(3,))
    with pytest.raises(ValueError, match="n"):
        make_dataset(10**9)


class _Eager:
    """The smallest adapter FastVLike needs (uniform attention)."""

    def attention_map(self, layer, h, pos, mask):
        n = h.shape[1]
        return torch.full((h.shape[0], 1, n, n), 1.0 / n)


def _compressors():
    from icml26.omnifit import FastVLike, OmniZipLite, RandomDrop, UniformNorm

    profile = LAHPProfile.uniform(2, 8)
    return [OmniFitCompressor(profile, 0.5, M=2, k=1), RandomDrop(0.5, seed=0),
            UniformNorm(0.5), OmniZipLite(0.5), FastVLike(0.5, K=0)]  # fmt: skip


@pytest.mark.parametrize("which", range(5))
@pytest.mark.parametrize(
    "pos",
    [torch.zeros(0, dtype=torch.long), torch.zeros(1, 0, dtype=torch.long),
     torch.zeros(2, 6, dtype=torch.long), torch.zeros(1, 6)],
    ids=["empty", "no-tokens", "wrong-batch", "float"],
)  # fmt: skip
def test_before_layer_refuses_positions_that_do_not_fit(which, pos):
    """Issue 40: the compressors' before_layer on empty/mismatched positions crashed deep."""
    compressor = _compressors()[which]
    H0 = torch.randn(1, 6, 8, generator=torch.Generator().manual_seed(0))
    compressor.prepare(H0, torch.tensor([0, 1, 1, 2, 2, 0]), adapter=_Eager())
    with pytest.raises((ValueError, TypeError), match="pos_ids"):
        compressor.before_layer(0, H0, pos, None)
    kept = compressor.before_layer(0, H0, torch.arange(6)[None], None)[3]
    assert kept.shape[0] == 1 and kept.shape[1] < 6


def test_arts_scores_refuse_a_float32_overflow():
    H0 = torch.full((1, 3, 4), 1e30)
    anchors = {"video": torch.ones(1, 4), "audio": torch.ones(1, 4)}
    with pytest.raises(ValueError, match="overflow"):
        arts_scores(H0, torch.tensor([0, 1, 2]), anchors)
    assert torch.isfinite(arts_scores(H0.double(), torch.tensor([0, 1, 2]), anchors)).all()


@pytest.mark.parametrize("rope_base", [float("nan"), float("inf"), 0.0, -1.0])
def test_tinyomni_config_refuses_a_bad_rope_base(rope_base):
    from icml26.omnifit import TinyOmniConfig

    with pytest.raises(ValueError, match="rope_base"):
        TinyOmniConfig(rope_base=rope_base)


def test_layer_cost_refuses_token_counts_beyond_its_bound():
    # issue 40's seeded campaign: 1e300 tokens at c2 = 0 gave 0 * inf = NaN
    from icml26.omnifit import layer_cost

    with pytest.raises(ValueError, match="n must"):
        layer_cost(np.array([1e300, 1e300]), 0.0, 0.0)
    assert float(layer_cost(1e9, 1.0, 0.0)) == 1e9


def test_a_benchmark_without_items_is_refused():
    # issue 40's second seeded campaign: accuracy([]) divided by zero
    from icml26.omnifit import QABenchmark

    with pytest.raises(ValueError, match="items"):
        QABenchmark([])
