"""Property-based bad input: arbitrary arguments give a valid object or a ValueError/TypeError."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from icml26.hyperdepth import (
    HyperDepth,
    Hypergraph,
    PrototypeTree,
    probe_splits,
    spectral_filters,
)

anything = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-5, 50),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=3),
    st.lists(st.integers(-3, 10), max_size=4),
)


@settings(max_examples=150, deadline=None)
@given(
    num_nodes=st.one_of(st.integers(-3, 8), anything),
    edges=st.lists(st.lists(st.one_of(st.integers(-2, 9), anything), max_size=4), max_size=5),
    weights=st.one_of(st.none(), st.lists(st.floats(allow_nan=True, allow_infinity=True))),
)
def test_hypergraph_accepts_or_refuses_cleanly(num_nodes, edges, weights):
    try:
        hg = Hypergraph(num_nodes, edges, weights)
    except (ValueError, TypeError) as err:
        assert str(err)
        return
    P = hg.with_self_loops().propagation_scipy().toarray()
    assert np.isfinite(P).all()
    assert np.all(np.linalg.eigvalsh(P) <= 1 + 1e-9)


@settings(max_examples=60, deadline=None)
@given(mode=anything | st.sampled_from(["poly", "exact"]), K=anything, cutoff=anything)
def test_filter_parameters(mode, K, cutoff):
    hg = Hypergraph(4, [[0, 1], [1, 2, 3]]).with_self_loops()
    try:
        low, high = spectral_filters(hg, mode, K, cutoff)
    except (ValueError, TypeError) as err:
        assert str(err)
        return
    assert math.isfinite(float(low.matrix().sum() + high.matrix().sum()))


@settings(max_examples=60, deadline=None)
@given(
    sizes=st.lists(st.one_of(st.integers(-2, 20), anything), max_size=4),
    tau=anything,
    rho=anything,
)
def test_tree_parameters(sizes, tau, rho):
    try:
        PrototypeTree(3, sizes=sizes, tau=tau, rho=rho)
    except (ValueError, TypeError) as err:
        assert str(err)


@settings(max_examples=60, deadline=None)
@given(n=anything, train=anything, val=anything)
def test_probe_split_parameters(n, train, val):
    try:
        splits = probe_splits(n, 2, train, val, seed=0)
    except (ValueError, TypeError) as err:
        assert str(err)
        return
    assert all(len(s[2]) > 0 for s in splits)


@pytest.mark.parametrize(
    "name", ["dim", "K", "tau_c", "p_f", "p_e", "lam", "tree", "epochs", "lr", "batch_size"]
)
@settings(max_examples=25, deadline=None)
@given(value=anything)
def test_trainer_hyper_parameters(name, value):
    try:
        HyperDepth(**{name: value})
    except (ValueError, TypeError) as err:
        assert name in str(err) or "sizes" in str(err)
