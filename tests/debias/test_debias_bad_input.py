"""Bad input: only ValueError / TypeError naming the argument, never a silent NaN (fuzzed)."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from icml26.debias import (
    casing,
    certify,
    certify_many,
    char_swap,
    clopper_pearson_lower,
    filler,
    hoeffding_lower,
    make_toy_intent_task,
    performance_drop_rate,
    relu_gaussian_bias,
    relu_gaussian_mean,
    systematic_ratio,
    whitespace,
)

ANY = st.one_of(
    st.none(), st.booleans(), st.integers(-5, 300), st.text(max_size=3),
    st.floats(allow_nan=True, allow_infinity=True), st.lists(st.integers(), max_size=2),
)  # fmt: skip


def _checked(call, names):
    """Run ``call``: a finite result, or a ValueError/TypeError that names one of ``names``."""
    try:
        out = call()
    except (ValueError, TypeError) as err:
        assert any(n in str(err) for n in names), str(err)
        return None
    assert np.all(np.isfinite(out)), out
    return out


@settings(max_examples=150, deadline=None)
@given(k=ANY, n=ANY, alpha=ANY)
def test_bounds_fuzz(k, n, alpha):
    for fn in (clopper_pearson_lower, hoeffding_lower):
        out = _checked(lambda fn=fn: fn(k, n, alpha), ("k ", "k must", "n must", "alpha"))
        if out is not None:
            assert 0.0 <= out <= 1.0


@settings(max_examples=150, deadline=None)
@given(u=ANY, s=ANY)
def test_relu_fuzz(u, s):
    for fn in (relu_gaussian_mean, relu_gaussian_bias):
        out = _checked(lambda fn=fn: fn(u, s), ("u ", "u must", "s must", "s:", "'s'", "s "))
        if out is not None and fn is relu_gaussian_bias:
            assert np.all(out >= 0)


@settings(max_examples=100, deadline=None)
@given(a=ANY, b=ANY)
def test_pdr_fuzz(a, b):
    _checked(lambda: performance_drop_rate(a, b), ("acc_clean", "acc_pert"))


@settings(max_examples=60, deadline=None)
@given(p=ANY)
def test_perturbation_probability_fuzz(p):
    for make in (casing, char_swap, whitespace):
        try:
            make(p)
        except (ValueError, TypeError) as err:
            assert "p must be" in str(err)


@settings(max_examples=60, deadline=None)
@given(n=ANY, alpha=ANY, eps=ANY)
def test_certify_arguments_fuzz(n, alpha, eps):
    def predict(xs):
        return [0] * len(xs)

    def run():
        return certify(predict, "x", 0, filler(["a"], []), n=n, alpha=alpha, eps=eps).p_low

    _checked(run, ("n must", "alpha", "eps"))


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: relu_gaussian_bias(0.0, 0.0), "s must be in \\(0"),
        (lambda: relu_gaussian_mean(0.0, -1.0), "s must be in \\(0"),
        (lambda: relu_gaussian_bias(math.nan, 1.0), "u must be finite"),
        (lambda: clopper_pearson_lower(5, 0, 0.1), "n must be an integer >= 1"),
        (lambda: clopper_pearson_lower(11, 10, 0.1), r"k must be in \[0, n\]"),
        (lambda: clopper_pearson_lower(-1, 10, 0.1), r"k must be in \[0, n\]"),
        (lambda: hoeffding_lower(1, 10, 1.0), r"alpha must be in \(0, 1\)"),
        (lambda: hoeffding_lower(1, 10, 0.0), r"alpha must be in \(0, 1\)"),
        (lambda: certify(len, "x", 0, filler(["a"], []), eps=1.0), r"eps must be in \(0, 1\)"),
        (lambda: certify_many(len, [], None, filler(["a"], [])), "xs is empty"),
        (lambda: certify_many(len, ["a"], [0, 1], filler(["a"], [])), "ys has 2 labels"),
        (lambda: performance_drop_rate(0.0, 0.5), "acc_clean must be in"),
        (lambda: systematic_ratio(np.zeros((0, 2))), "bias has no rows"),
        (lambda: relu_gaussian_mean([[1.0, 1.0]], []), "u and s must broadcast together"),
        (lambda: relu_gaussian_bias(np.ones(3), np.ones(2)), "u and s must broadcast together"),
        (lambda: make_toy_intent_task("nope"), "regime must be one of"),
        (lambda: make_toy_intent_task(n_train=0), "n_train must be"),
    ],
)
def test_bad_input_messages(call, match):
    with pytest.raises((ValueError, TypeError), match=match):
        call()


def test_train_head_checks_labels_against_the_head_size():
    """Issue 40: one label of 10^6 used to build a 10^6-class head."""
    import torch

    from icml26.debias import train_head

    x = torch.randn(4, 3, generator=torch.Generator().manual_seed(0))
    with pytest.raises(ValueError, match=r"n_classes must be an integer in \[2, 10000\]"):
        train_head(x, torch.tensor([0, 1, 2, 10**6]), epochs=1)
    with pytest.raises(ValueError, match=r"labels must be class ids in \[0, 3\)"):
        train_head(x, torch.tensor([0, 1, 2, 3]), epochs=1, n_classes=3)
    with pytest.raises(TypeError, match="labels must be integer class ids"):
        train_head(x, torch.tensor([0.0, 1.0, 1.0, 0.0]), epochs=1)
    with pytest.raises(ValueError, match="must be finite"):
        train_head(x.masked_fill(x > 0, float("nan")), torch.tensor([0, 1, 0, 1]), epochs=1)
    assert train_head(x, torch.tensor([0, 1, 0, 1]), epochs=1, n_classes=4)[-1].out_features == 4


@pytest.mark.parametrize(
    ("module", "presets", "field", "value", "match"),
    [
        ("certify", "CERT_PRESETS", "eps", 2.0, r"eps must be in \[0, 1\]"),
        ("certify", "CERT_PRESETS", "n_cert", -5, "n_cert must be an integer"),
        ("toy", "TOY_PRESETS", "regimes", ("sideways",), "regimes must be one of"),
        ("minilm", "MINILM_PRESETS", "encoder_lr", 0.0, r"encoder_lr must be in \(0, inf\)"),
        ("closed_forms", "CLOSED_PRESETS", "mc_draws", True, "mc_draws must be int"),
    ],
)
def test_experiment_configs_refuse_bad_fields(module, presets, field, value, match):
    """Issue 40: a bad --set fails when the CLI builds the config (exit 2), naming the field."""
    import dataclasses
    import importlib

    mod = importlib.import_module(f"icml26.debias.experiments.{module}")
    with pytest.raises((ValueError, TypeError), match=match):
        dataclasses.replace(getattr(mod, presets)["quick"], **{field: value})
