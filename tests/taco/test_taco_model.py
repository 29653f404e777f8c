"""Spec §7 checks 1-10 and 13 on small random-weight models (float64 for the exactness checks)."""

import math
import pickle

import numpy as np
import pytest
import torch

from icml26.taco import (
    CompressedContext,
    PerFeatureTransformer,
    ResidualMLP,
    TACOConfig,
    TACOModel,
    choose_percentage,
    compute_stats,
    n_latents,
)

CFG = TACOConfig.small(nlayers=2, emsize=16, nhead=2, max_features=12)


def _randomise(module: torch.nn.Module, seed: int = 0) -> torch.nn.Module:
    """Zero-initialised sub-layers make fresh models near-trivial; give every weight noise."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in module.parameters():
            p.add_(0.3 * torch.randn(p.shape, generator=g, dtype=p.dtype))
    return module.double().eval()


def _data(B=1, T=40, F=5, N=30, C=3, seed=0):
    g = torch.Generator().manual_seed(seed)
    X = torch.randn(B, T, F, generator=g, dtype=torch.float64)
    y = torch.randint(0, C, (B, N), generator=g)
    return X, y


@pytest.fixture(scope="module")
def taco():
    return _randomise(TACOModel(CFG, seed=0))


@pytest.fixture(scope="module")
def pot():
    return _randomise(PerFeatureTransformer(CFG, seed=1), 1)


# 1. K rule
@pytest.mark.parametrize(
    ("n", "p", "k"), [(1000, 1, 10), (10, 1, 1), (1, 50, 1), (99, 100, 99), (101, 1, 2), (7, 30, 3)]
)
def test_k_rule_matches_closed_form(n, p, k):
    assert n_latents(n, p) == k == max(1, min(n, math.ceil(n * p / 100)))


def test_chunked_k_total_and_bisection():
    model = TACOModel(CFG, max_chunk_size=100)
    X, y = _data(T=250, N=250)
    ctx = model.compress(X.float(), y, percentage=3.0)
    # 250 rows -> chunks 84, 83, 83 -> K = 3 each
    assert ctx.k_per_chunk == (3, 3, 3) and ctx.n_latents == 9
    p = choose_percentage(250, 100, 7)
    total = sum(n_latents(n, p) for n in (84, 83, 83))
    assert total <= 7 < sum(n_latents(n, p * 1.0001) for n in (84, 83, 83))
    with pytest.raises(ValueError, match="budget must be >= k_min"):
        choose_percentage(250, 100, 2)


@pytest.mark.parametrize("p", [0.0, -1.0, 100.5, float("nan")])
def test_percentage_outside_range_raises(p):
    with pytest.raises(ValueError, match=r"percentage must be in \(0, 100\]"):
        n_latents(100, p)


# 2. label masking
def test_hidden_labels_never_matter_and_train_labels_do(taco):
    X, y = _data()
    ctx = taco.compress(X[:, :30], y, percentage=20.0)
    assert ctx.n_latents == 6
    # the seed copies are label-masked: the only label path is y_train of the labelled rows
    y2 = y.clone()
    y2[0, 3] = (y2[0, 3] + 1) % 3
    ctx2 = taco.compress(X[:, :30], y2, percentage=20.0)
    assert not torch.allclose(ctx.latents, ctx2.latents)


# 3. test-row independence
def test_test_rows_independent_for_pot_and_taco(pot, taco):
    X, y = _data()
    joint = pot(X, y)
    alone = pot(torch.cat([X[:, :30], X[:, 35:36]], dim=1), y)
    torch.testing.assert_close(joint[:, 5:6], alone, atol=1e-10, rtol=0)  # float64 round-off
    perm = torch.randperm(10, generator=torch.Generator().manual_seed(0))
    permuted = pot(torch.cat([X[:, :30], X[:, 30:][:, perm]], dim=1), y)
    torch.testing.assert_close(permuted, joint[:, perm], atol=1e-10, rtol=0)
    ctx = taco.compress(X[:, :30], y, percentage=10.0)
    full = taco.predict_logits(ctx, X[:, 30:])
    torch.testing.assert_close(
        taco.predict_logits(ctx, X[:, 32:33]), full[:, 2:3], atol=1e-10, rtol=0
    )


# 4. permutation invariance
def test_pot_invariant_to_train_row_order(pot):
    X, y = _data()
    perm = torch.randperm(30, generator=torch.Generator().manual_seed(1))
    Xp = torch.cat([X[:, :30][:, perm], X[:, 30:]], dim=1)
    torch.testing.assert_close(pot(Xp, y[:, perm]), pot(X, y), atol=1e-9, rtol=0)


def test_taco_latents_invariant_to_non_seed_row_order(taco):
    X, y = _data()
    seed_idx = torch.tensor([0, 1, 2])
    perm = torch.cat(
        [torch.arange(3), 3 + torch.randperm(27, generator=torch.Generator().manual_seed(2))]
    )
    a = taco.compress(X[:, :30], y, seed_idx=seed_idx)
    b = taco.compress(X[:, :30][:, perm], y[:, perm], seed_idx=seed_idx)
    torch.testing.assert_close(a.latents, b.latents, atol=1e-9, rtol=0)


# 5. stats-based encoding
def test_stats_encoding_equals_joint_and_nan_handling(pot):
    X, y = _data()
    X[0, 2, 1] = float("nan")
    X[0, 33, 0] = float("inf")
    X[0, 34, 3] = float("-inf")
    stats = compute_stats(X[:, :30])
    joint = pot.encoder(X, y, stats)[:, 30:]
    alone = pot.encoder(X[:, 30:], torch.zeros(1, 0), stats)
    torch.testing.assert_close(alone, joint, atol=1e-12, rtol=0)  # same ops, float64
    torch.testing.assert_close(pot(X, y, stats), pot(X, y), atol=0, rtol=0)
    finite = torch.cat([X[0, :2, 1], X[0, 3:30, 1]])
    torch.testing.assert_close(stats.feature_mean[0, 1], finite.mean())
    cells = pot.encoder.cells(X, stats)
    assert torch.isfinite(cells).all()
    # a NaN cell encodes as the train mean (z = 0 in its slot) plus indicator -2
    g = torch.zeros(1, 1, 5, dtype=X.dtype)
    g[0, 0, 1] = float("nan")
    tok = pot.encoder.cells(g, stats)[0, 0, 0]
    z0 = (0.0 - stats.norm_mean[0, 0]) / stats.norm_std[0, 0]
    expected_in = torch.tensor([z0, 0.0, 0.0, -2.0], dtype=X.dtype)
    expected_in[1] = (stats.feature_mean[0, 1] - stats.norm_mean[0, 1]) / stats.norm_std[0, 1]
    expected = pot.encoder.cell(expected_in) + pot.encoder.pos(pot.encoder.pos_code[0])
    torch.testing.assert_close(tok, expected)


def test_cache_prediction_equals_joint_forward(pot):
    X, y = _data()
    cache = pot.build_cache(X[:, :30], y)
    cached = pot.predict_with_cache(cache, X[:, 30:], compute_stats(X[:, :30]))
    torch.testing.assert_close(cached, pot(X, y), atol=1e-10, rtol=0)


# 6. projection init
def test_projection_is_identity_at_init():
    z = torch.randn(4, 3, 16)
    assert torch.equal(ResidualMLP(16)(z), z)


# 7. context-only prediction
def test_context_alone_predicts_after_deleting_data(taco, tmp_path):
    X, y = _data()
    X_train, X_test = X[:, :30].clone(), X[:, 30:].clone()
    ctx = taco.compress(X_train, y, percentage=10.0)
    before = taco.predict_logits(ctx, X_test)
    del X_train, y
    torch.testing.assert_close(taco.predict_logits(pickle.loads(pickle.dumps(ctx)), X_test), before)
    ctx.save(tmp_path / "ctx.safetensors")
    loaded = CompressedContext.load(tmp_path / "ctx.safetensors")
    assert loaded.k_per_chunk == ctx.k_per_chunk
    torch.testing.assert_close(taco.predict_logits(loaded, X_test), before, atol=0, rtol=0)


# 8. chunking
def test_chunking_identity_and_order(taco):
    X, y = _data(T=60, N=60)
    big = TACOModel(CFG, max_chunk_size=60)
    big.load_state_dict(taco.state_dict())
    big.double()
    a = big.compress(X, y, percentage=10.0)
    b = taco.compress(X, y, percentage=10.0)  # default chunk size 10 000 >= N
    torch.testing.assert_close(a.latents, b.latents, atol=0, rtol=0)
    big.max_chunk_size = 30
    c = big.compress(X, y, percentage=10.0)
    first = taco._compress_chunk(X[:, :30], y[:, :30], compute_stats(X), torch.arange(27, 30))
    second = taco._compress_chunk(X[:, 30:], y[:, 30:], compute_stats(X), torch.arange(27, 30))
    assert c.k_per_chunk == (3, 3)
    torch.testing.assert_close(c.latents, torch.cat([first, second], dim=1), atol=0, rtol=0)


# 9. attention-entry accounting
def test_row_attention_entries(taco, pot):
    X, y = _data(T=130, N=100)
    pot(X, y)
    assert pot.row_attention_entries() == [130 * 100] * CFG.nlayers
    ctx = taco.compress(X[:, :100], y, percentage=4.0)
    taco.predict_logits(ctx, X[:, 100:])
    assert taco.predictor.row_attention_entries() == [(4 + 30) * 4] * CFG.nlayers


# 10. batch consistency
def test_batch_equals_separate_calls(pot, taco):
    X, y = _data(B=3)
    joint = pot(X, y)
    for b in range(3):
        torch.testing.assert_close(
            pot(X[b : b + 1], y[b : b + 1]), joint[b : b + 1], atol=1e-10, rtol=0
        )
    ctx = taco.compress(X[:, :30], y, percentage=10.0)
    out = taco.predict_logits(ctx, X[:, 30:])
    one = taco.predict_logits(taco.compress(X[1:2, :30], y[1:2], percentage=10.0), X[1:2, 30:])
    torch.testing.assert_close(one, out[1:2], atol=1e-10, rtol=0)


# 13. gradient flow
def test_gradients_reach_compressor_projection_predictor():
    model = _randomise(TACOModel(CFG)).float().train()
    X, y = _data()
    logits = model(X.float(), y, percentage=10.0)
    torch.nn.functional.cross_entropy(logits[0], torch.zeros(10, dtype=torch.long)).backward()
    for part in (model.compressor, model.projection, model.predictor):
        assert any(p.grad is not None and p.grad.abs().sum() > 0 for p in part.parameters())
    pot = TACOModel(CFG, use_compressor=False)
    assert not hasattr(pot, "compressor") and not hasattr(pot, "projection")
    with pytest.raises(ValueError, match="compress needs use_compressor=True"):
        pot.compress(X.float(), y)


def test_config_rejects_bad_shapes():
    with pytest.raises(ValueError, match="emsize must be divisible"):
        TACOConfig(emsize=30, nhead=4)
    with pytest.raises(TypeError, match="nlayers must be an integer"):
        TACOConfig(nlayers=2.5)


def test_zero_variance_and_single_row_stats():
    X = torch.tensor([[[1.0, 5.0], [1.0, 7.0]]])
    s = compute_stats(X)
    assert s.used.tolist() == [[False, True]] and s.norm_std[0, 0] == 1.0
    assert np.isclose(float(s.norm_std[0, 1]), 1.0)  # population std of {5, 7}
    assert compute_stats(X[:, :1]).used.tolist() == [[False, False]]
