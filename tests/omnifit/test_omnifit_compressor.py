"""Compressed prefill (spec §7): mu = 1 bit identity, the attention-mask reference for prune mode,
original position ids, nested kept sets, baselines' budgets, FLOP/KV accounting, determinism."""

import pytest
import torch
from torch.utils.flop_counter import FlopCounterMode

from icml26.omnifit import (
    FastVLike,
    LAHPProfile,
    OmniFitCompressor,
    OmniZipLite,
    RandomDrop,
    TinyOmni,
    TinyOmniConfig,
    UniformNorm,
    flops_per_layer,
    kv_bytes,
    make_dataset,
    run_compressed,
)

CONFIG = TinyOmniConfig(n_layers=3, d=16, n_heads=2, d_ff=32)


@pytest.fixture(scope="module")
def model():
    return TinyOmni(CONFIG, seed=0).double().eval()


@pytest.fixture(scope="module")
def batch():
    return make_dataset(3, windows=3, seed=0).batch(slice(None), dtype=torch.float64)


def _profile():
    return LAHPProfile(
        [16, 12, 9],
        16,
        {"video": [0.2, 0.3, 0.1], "audio": [0.3, 0.1, 0.2]},
        *(8 * 16 * 16 + 6 * 16 * 32, 4 * 16),
    )


def masked_reference(model, batch, kept):
    """Full-length forward where, from layer l on, dropped tokens leave the key/value set."""
    h, _, pos = model.embed(batch)
    n = h.shape[1]
    for layer, idx in enumerate(kept):
        alive = torch.zeros(h.shape[0], n, dtype=torch.bool).scatter_(1, idx, True)
        allowed = alive[:, None, :] | torch.eye(n, dtype=torch.bool)  # a dropped query sees itself
        h = model.run_layer(layer, h, pos, allowed)
    return model.head(h)


def test_mu_one_is_bit_identical_to_the_uncompressed_forward(model, batch):
    with torch.no_grad():
        full = model(batch)
        for mode in ("merge", "prune"):
            out = run_compressed(model, batch, OmniFitCompressor(_profile(), 1.0, mode=mode))
            assert torch.equal(out.logits, full)
            assert out.alive == [h for h in [out.alive[0]] * 3]


@pytest.mark.parametrize("mu", [0.5, 0.2])
def test_prune_mode_equals_the_attention_mask_reference(model, batch, mu):
    with torch.no_grad():
        out = run_compressed(
            model, batch, OmniFitCompressor(_profile(), mu, mode="prune", M=4, k=2)
        )
        reference = masked_reference(model, batch, out.kept)
    # float64 throughout: the two paths differ only in summation order (1e-5 per the spec)
    torch.testing.assert_close(out.logits, reference, atol=1e-5, rtol=0)
    assert out.alive[-1] < out.alive[0] < 78


def test_kept_tokens_keep_their_original_position_ids(model, batch):
    seen = []

    class Spy:
        def __getattr__(self, name):
            return getattr(model, name)

        def run_layer(self, layer, h, pos, mask):
            seen.append(pos.clone())
            return model.run_layer(layer, h, pos, mask)

    with torch.no_grad():
        out = run_compressed(Spy(), batch, OmniFitCompressor(_profile(), 0.3, M=4, k=2))
    for pos, idx in zip(seen, out.kept, strict=True):
        assert torch.equal(pos, idx)  # TinyOmni's position of token i is i


def test_kept_sets_are_nested_and_counts_follow_the_plan(model, batch):
    compressor = OmniFitCompressor(_profile(), 0.3, M=4, k=2)
    with torch.no_grad():
        out = run_compressed(model, batch, compressor)
    budgets = _profile().layer_budgets(0.3, {"video": 48, "audio": 24})
    for layer, idx in enumerate(out.kept):
        assert out.alive[layer] == 6 + budgets[layer]["video"] + budgets[layer]["audio"]
        assert torch.equal(idx, compressor.plan[layer])
        if layer:
            for b in range(3):
                assert set(idx[b].tolist()) <= set(out.kept[layer - 1][b].tolist())


def test_every_layer_scoring_keeps_the_same_counts(model, batch):
    with torch.no_grad():
        once = run_compressed(model, batch, OmniFitCompressor(_profile(), 0.3, M=4, k=2))
        every = run_compressed(
            model, batch, OmniFitCompressor(_profile(), 0.3, M=4, k=2, score_once=False)
        )
    assert once.alive == every.alive


def test_baselines_keep_mu_of_each_modality(model, batch):
    with torch.no_grad():
        for c in (RandomDrop(0.25, seed=0), UniformNorm(0.25), OmniZipLite(0.25)):
            out = run_compressed(model, batch, c)
            assert out.alive == [6 + 12 + 6] * 3
        fastv = run_compressed(model, batch, FastVLike(0.25, K=1))
    assert fastv.alive == [78, 24, 24]


def test_random_drop_with_a_profile_follows_its_budgets(model, batch):
    with torch.no_grad():
        a = run_compressed(model, batch, RandomDrop(0.3, profile=_profile(), seed=0))
        b = run_compressed(model, batch, OmniFitCompressor(_profile(), 0.3, M=4, k=2))
    assert a.alive == b.alive


def test_omnizip_gives_loud_windows_more_video():
    ids = torch.tensor([1, 1, 1, 1, 2, 1, 1, 1, 1, 2, 0])
    H0 = torch.ones(1, 11, 2)
    H0[0, 4] *= 10  # the first window's audio is loud
    c = OmniZipLite(0.5)
    c.prepare(H0, ids)
    _, _, _, idx = c.before_layer(0, H0, torch.arange(11)[None], None)
    kept_video = [i for i in idx[0].tolist() if ids[i] == 1]
    assert len(kept_video) == 4 and all(i < 4 for i in kept_video)


def test_profile_with_the_wrong_layer_count_is_refused(model, batch):
    with pytest.raises(ValueError, match="profile"):
        run_compressed(model, batch, OmniFitCompressor(LAHPProfile.uniform(5, 16), 0.5))


def test_flops_match_the_flop_counter_on_one_layer():
    layer_model = TinyOmni(TinyOmniConfig(n_layers=1, d=16, n_heads=2, d_ff=32), seed=0)
    x = torch.randn(1, 10, 16, generator=torch.Generator().manual_seed(0))
    with FlopCounterMode(display=False) as counter, torch.no_grad():
        layer_model.layers[0](x, torch.arange(10)[None], None, eager=True)
    assert counter.get_total_flops() == flops_per_layer(10, 16, 32, 2)
    # with MHA the count is C(n) = c1 n + c2 n^2 of the cost model
    assert flops_per_layer(10, 16, 32, 2) == 10 * (8 * 16 * 16 + 6 * 16 * 32) + 4 * 16 * 100


def test_kv_bytes_count_the_alive_tokens(model, batch):
    with torch.no_grad():
        out = run_compressed(model, batch, OmniFitCompressor(_profile(), 0.3, M=4, k=2))
    assert kv_bytes(out.alive, 16, batch=3) == sum(out.alive) * 2 * 16 * 4 * 3


def test_fixed_seeds_give_identical_plans_and_outputs(model, batch):
    with torch.no_grad():
        a = run_compressed(model, batch, RandomDrop(0.3, seed=7))
        b = run_compressed(model, batch, RandomDrop(0.3, seed=7))
        c = run_compressed(model, batch, OmniFitCompressor(_profile(), 0.3, M=4, k=2))
        d = run_compressed(model, batch, OmniFitCompressor(_profile(), 0.3, M=4, k=2))
    assert all(torch.equal(x, y) for x, y in zip(a.kept, b.kept, strict=True))
    assert torch.equal(a.logits, b.logits) and torch.equal(c.logits, d.logits)
