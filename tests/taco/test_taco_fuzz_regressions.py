"""Regressions for the fuzz findings of issue 16: wrong kinds, bad shapes, empty inputs and
oversized requests are refused at the public boundary with a message naming the parameter."""

import math

import numpy as np
import pytest
import torch

from icml26.taco import (
    CompressedContext,
    EncoderStats,
    InputEncoder,
    PerFeatureTransformer,
    ResidualMLP,
    TACOClassifier,
    TACOConfig,
    TACOModel,
    activation_elements,
    benchmark_inference,
    choose_percentage,
    class_allocation,
    compute_stats,
    init_from_pot,
    load_checkpoint,
    peak_rss_increase,
    save_checkpoint,
    subsample_context,
)

CFG = TACOConfig.small(nlayers=1, emsize=16, nhead=2)
NET = PerFeatureTransformer(CFG, seed=0)
MODEL = TACOModel(CFG, seed=0)
X = torch.randn(1, 12, 3, generator=torch.Generator().manual_seed(0))
Y = torch.tensor([[0, 1, 2, 0, 1, 2, 0, 1]])
STATS = compute_stats(X[:, :8])


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: PerFeatureTransformer(None), "config must be a TACOConfig"),
        (lambda: InputEncoder(2.5), "config must be a TACOConfig"),
        (lambda: activation_elements(100, 11, 3, 2.5), "config must be a TACOConfig"),
        (lambda: benchmark_inference(None, 10, (4.0,)), "model must be a TACOModel"),
        (lambda: init_from_pot(MODEL, torch.nn.Linear(4, 4)), "pot must be a TACOModel or"),
        (lambda: init_from_pot(None, MODEL), "model must be a TACOModel"),
        (lambda: save_checkpoint(torch.nn.Linear(4, 4), "m"), "model must be a TACOModel"),
        (lambda: load_checkpoint(None), "path must be a str or PathLike"),
        (lambda: compute_stats(np.zeros((1, 2, 3))), "X_train must be a torch.Tensor"),
        (lambda: NET(X.double(), Y), "X must have the model's dtype"),
        (lambda: NET.predict_with_cache(None, X, STATS), "cache must hold one"),
        (lambda: MODEL.predict_logits(None, X), "context must be a CompressedContext"),
        (lambda: STATS.to(3), "device must be a str or torch.device"),
        (lambda: EncoderStats.from_tensors([]), "tensors must be a mapping"),
        (lambda: peak_rss_increase(None), "fn must be callable"),
        (lambda: subsample_context(2.5, np.zeros(5), 4), "X must be 2-D"),
        # The example: a NaN k gave a silent [-2**63] * 3.
        (lambda: class_allocation(np.array([10, 20, 30]), math.nan), "k must be an integer"),
    ],
)
def test_wrong_kinds_are_refused_naming_the_parameter(call, match):
    with pytest.raises((TypeError, ValueError), match=match):
        call()


@pytest.mark.parametrize(
    ("call", "match"),
    [
        # The other example: zero training rows (was a ZeroDivisionError).
        (lambda: class_allocation(np.zeros(()), 0), "k must be an integer >= 1"),
        (lambda: class_allocation(np.array([3.5, 2]), 2), "counts must hold one integer count"),
        (lambda: MODEL.compress(X[:, :0], Y[:, :0]), r"X_train must be \(B >= 1, T >= 1"),
        (lambda: compute_stats(torch.zeros(1, 0, 3)), "X_train must be"),
        # No context rows: nothing to attend to (SDPA over zero keys returns NaN).
        (lambda: NET.run_layers(torch.zeros(1, 4, 3, 16), 0), r"n_ctx must be an integer in"),
        (lambda: NET(X, Y + 7), r"y_train must hold class ids in range\(0, 4\)"),
        (lambda: NET(X, torch.zeros(1, 13, dtype=torch.long)), r"y_train must be \(B = 1"),
        (lambda: NET(torch.randn(1, 12, 17), Y), r"F <= 16"),
        (lambda: NET.predict_with_context(torch.zeros(1, 2, 2, 16), X, STATS), "X_test must"),
        (lambda: ResidualMLP(16)(torch.zeros(())), r"z must be \(\.\.\., 16\)"),
        (lambda: MODEL.compress(X[:, :8], Y, seed_idx=torch.tensor([0, 0])), "seed_idx must"),
        (lambda: MODEL.compress(X[:, :8], Y, percentage=0.0), r"percentage must be in"),
        (lambda: STATS.to(""), "device must name a torch device"),
        (lambda: EncoderStats.from_tensors({}), "tensors lacks"),
        (lambda: load_checkpoint(""), "path must name a file"),
        (lambda: subsample_context(np.zeros((5, 2)), np.zeros(4), 2), "y must hold one finite"),
        (lambda: TACOClassifier(device="").fit(np.zeros((4, 2)), [0, 1, 0, 1]), "device must"),
        (lambda: TACOClassifier().fit(0.0, 0.0), "fit: X and y are not a table"),
        (
            lambda: CompressedContext(torch.zeros(1, 3, 2, 16), STATS, (1, 1)),
            "k_per_chunk must sum to K_total = 3",
        ),
    ],
)
def test_bad_values_are_refused_naming_the_parameter(call, match):
    with pytest.raises(ValueError, match=match):
        call()


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: choose_percentage(2**31, 15, 100), r"at most 100000 chunks"),
        (lambda: choose_percentage(100, 10, 5, iterations=10**9), r"iterations must be an"),
        (lambda: benchmark_inference(MODEL, 10**12, (4.0,)), r"n_train must be an integer in"),
        (lambda: benchmark_inference(MODEL, 10, (4.0,), repeats=2**31), r"repeats must be"),
        (lambda: ResidualMLP(2**31), r"emsize must be an integer in \[1, 16384\]"),
    ],
)
def test_huge_sizes_are_refused_before_allocation(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_peak_rss_increase_reports_the_childs_error():
    # Before, an exception in the child left the parent waiting on the queue forever.
    with pytest.raises(ZeroDivisionError):
        peak_rss_increase(divmod, 1, 0)


def test_checkpoint_and_context_round_trips_are_unchanged(tmp_path):
    save_checkpoint(MODEL, tmp_path / "m")
    again = load_checkpoint(tmp_path / "m")
    context = MODEL.compress(X[:, :8], Y, percentage=25.0)
    context.save(tmp_path / "ctx.safetensors")
    loaded = CompressedContext.load(tmp_path / "ctx.safetensors")
    with torch.no_grad():
        expected = MODEL.predict_logits(context, X[:, 8:])
        torch.testing.assert_close(again.predict_logits(loaded, X[:, 8:]), expected)
    (tmp_path / "junk.safetensors").write_bytes(b"not a safetensors file")
    with pytest.raises(ValueError, match="holds no compressed context"):
        CompressedContext.load(tmp_path / "junk.safetensors")
    with pytest.raises(FileNotFoundError):
        CompressedContext.load(tmp_path / "missing.safetensors")


def test_class_allocation_matches_its_definition():
    # Brute force over every allocation: the largest-remainder split is the one closest (in
    # L1) to the proportional shares k * n_c / n among those with 1 <= share_c <= n_c summing
    # to k.
    import itertools

    for counts, k in [([90, 10], 10), ([5, 3, 2], 6), ([1, 1, 8], 4), ([4, 4, 4], 7)]:
        share = class_allocation(np.array(counts), k)
        target = k * np.array(counts) / sum(counts)
        best = min(
            (c for c in itertools.product(*(range(1, n + 1) for n in counts)) if sum(c) == k),
            key=lambda c: np.abs(np.array(c) - target).sum(),
        )
        assert share.sum() == k
        assert np.abs(share - target).sum() == pytest.approx(np.abs(np.array(best) - target).sum())


def test_compute_stats_refuses_values_whose_spread_overflows():
    """Fuzz campaign 7 (issue 40): 1e300 and -1e300 in one column gave an infinite std."""
    x = torch.tensor([[[1e300], [-1e300]]], dtype=torch.float64)
    with pytest.raises(ValueError, match="X_train's finite values must lie within"):
        compute_stats(x)
    nan_ok = torch.tensor([[[float("nan")], [1.0], [3.0]]], dtype=torch.float64)
    assert torch.isfinite(compute_stats(nan_ok).norm_std).all()  # missing values stay allowed
