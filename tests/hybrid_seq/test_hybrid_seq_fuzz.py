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
