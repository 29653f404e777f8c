"""Property-based bad input: public constructors raise only ValueError / TypeError, naming the
parameter, for any integer / string arguments (hypothesis)."""

from hypothesis import given, settings
from hypothesis import strategies as st

from icml26.hybrid_seq import (
    MQAR,
    HybridLM,
    SelectiveCopying,
    SSMConfig,
    TrainConfig,
    build_ar_hybrid,
    build_sc_hybrid,
    build_sc_slot_ssm,
)

SMALL = st.integers(min_value=-3, max_value=40)


def _raises_cleanly(fn, *args, **kwargs) -> None:
    try:
        fn(*args, **kwargs)
    except (ValueError, TypeError) as err:
        assert ": " in str(err) and str(err).endswith((".", ")")), str(err)


@settings(max_examples=30, deadline=None)
@given(L=SMALL, k=SMALL, V=SMALL, m=SMALL)
def test_selective_copying_arguments(L, k, V, m):
    _raises_cleanly(SelectiveCopying, L=L, k=k, n_symbols=V, noise_tokens=m)


@settings(max_examples=30, deadline=None)
@given(L=SMALL, n=SMALL, keys=SMALL, values=SMALL, fillers=SMALL, zoo=st.booleans())
def test_mqar_arguments(L, n, keys, values, fillers, zoo):
    _raises_cleanly(MQAR, L, n, keys, values, fillers, zoology_compat=zoo)


@settings(max_examples=25, deadline=None)
@given(
    vocab=SMALL,
    d=st.integers(min_value=-2, max_value=12),
    pattern=st.text(alphabet="ASMX", max_size=3),
    heads=st.integers(min_value=-1, max_value=5),
    pos=st.sampled_from(["none", "learned", "sinusoidal", "rope", "alibi", None]),
)
def test_hybrid_lm_arguments(vocab, d, pattern, heads, pos):
    _raises_cleanly(HybridLM, vocab, d, pattern=pattern, n_heads=heads, pos_enc=pos)


@settings(max_examples=25, deadline=None)
@given(a=SMALL, b=SMALL, c=SMALL, hard=st.booleans())
def test_builders_and_configs(a, b, c, hard):
    _raises_cleanly(build_sc_hybrid, a, b, hard)
    _raises_cleanly(build_ar_hybrid, a, b, c, hard)
    _raises_cleanly(build_sc_slot_ssm, a, b)
    _raises_cleanly(SSMConfig, d_state=a, expand=b, d_conv=c)
    _raises_cleanly(TrainConfig, steps=a, lr=b / 10, batch_size=c)


@settings(max_examples=20, deadline=None)
@given(
    scale=st.floats(min_value=1e-3, max_value=3e38),
    T=st.integers(min_value=1, max_value=6),
    mamba2=st.booleans(),
)
def test_blocks_give_finite_outputs_or_refuse_large_finite_inputs(scale, T, mamba2):
    """Issue 40: finite inputs never come out as inf/NaN (float32 overflow in prefill)."""
    import torch

    from icml26.hybrid_seq import Mamba2Block, Mamba2Config, MambaBlock

    block = Mamba2Block(16, Mamba2Config(d_state=8, head_dim=8), seed=0) if mamba2 else None
    block = block or MambaBlock(16, seed=0)
    u = torch.randn(2, T, 16, generator=torch.Generator().manual_seed(0)) * scale
    u = u.clamp(-3e38, 3e38)
    try:
        out, cache = block.prefill(u)
    except ValueError as err:
        assert "1e+06" in str(err) or "overflow" in str(err), str(err)
        return
    assert torch.isfinite(out).all() and torch.isfinite(cache.h).all()


@settings(max_examples=30, deadline=None)
@given(
    field=st.sampled_from(["steps", "n_test", "lrs", "hybrid_pattern", "warmup", "test_power_a"]),
    value=st.one_of(
        st.integers(min_value=-5, max_value=10**7),
        st.floats(allow_nan=True, allow_infinity=True),
        st.booleans(),
        st.text(max_size=3),
        st.tuples(st.floats(min_value=-1, max_value=2)),
    ),
)
def test_experiment_configs_refuse_bad_fields_by_name(field, value):
    """Issue 40: every experiment config validates in __post_init__, so a bad --set exits 2."""
    from dataclasses import fields, replace

    from icml26.core import REGISTRY, discover

    discover()
    for name in ("length_gen", "ood", "mqar_smoke"):
        config = REGISTRY.get(f"hybrid_seq.{name}").presets["quick"]
        if field in {f.name for f in fields(config)}:
            _raises_cleanly(replace, config, **{field: value})
