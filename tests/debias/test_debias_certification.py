"""Clopper-Pearson / Hoeffding bounds, certificates and PDR (spec §7 items 8 and 10)."""

import numpy as np
import pytest
from scipy.stats import beta
from statsmodels.stats.proportion import proportion_confint

from icml26.debias import (
    Certificate,
    casing,
    certified_accuracy,
    certify,
    certify_many,
    clopper_pearson_lower,
    hoeffding_lower,
    performance_drop_rate,
)


@pytest.mark.parametrize("n", [1, 7, 100])
@pytest.mark.parametrize("alpha", [1e-3, 0.05])
def test_clopper_pearson_equals_scipy_and_statsmodels(n, alpha):
    for k in range(1, n):
        ours = clopper_pearson_lower(k, n, alpha)
        assert ours == pytest.approx(beta.ppf(alpha, k, n - k + 1), rel=1e-12)
        low, _ = proportion_confint(k, n, alpha=2 * alpha, method="beta")  # two-sided 2·alpha
        assert ours == pytest.approx(low, rel=1e-9)


def test_clopper_pearson_ends_and_spec_values():
    assert clopper_pearson_lower(100, 100, 1e-3) == pytest.approx(0.933254, abs=5e-7)
    assert clopper_pearson_lower(100, 100, 1e-3) == pytest.approx(1e-3 ** (1 / 100), rel=1e-15)
    assert clopper_pearson_lower(0, 100, 1e-3) == 0.0
    assert clopper_pearson_lower(95, 100, 1e-3) == pytest.approx(0.8446, abs=5e-5)
    assert hoeffding_lower(95, 100, 1e-3) == pytest.approx(0.7642, abs=5e-5)


def test_hoeffding_never_exceeds_clopper_pearson_and_both_are_monotone():
    for n in (10, 50, 100):
        for alpha in (1e-3, 1e-2, 0.1):
            cp = [clopper_pearson_lower(k, n, alpha) for k in range(n + 1)]
            hf = [hoeffding_lower(k, n, alpha) for k in range(n + 1)]
            assert all(h <= c + 1e-12 for h, c in zip(hf, cp, strict=True))
            assert np.all(np.diff(cp) > 0) and np.all(np.diff(hf) >= 0)


def test_pdr_and_certified_accuracy():
    assert performance_drop_rate(0.9, 0.45) == pytest.approx(0.5)
    certs = [Certificate(100, 100, 0.93, True), Certificate(100, 100, 0.93, True, False),
             Certificate(10, 100, 0.05, False)]  # fmt: skip
    assert certified_accuracy(certs) == pytest.approx(1 / 3)


def _keyword_classifier(texts):
    return [int("alarm" in t.lower()) for t in texts]


def test_certify_counts_and_bounds():
    cert = certify(_keyword_classifier, "set an alarm", 1, casing(1.0), n=100, alpha=1e-3)
    assert (cert.k, cert.n, cert.certified, cert.clean_correct) == (100, 100, True, True)
    assert cert.p_low == pytest.approx(0.933254, abs=5e-7)
    wrong = certify(_keyword_classifier, "set an alarm", 0, casing(1.0), n=50)
    assert (wrong.k, wrong.certified, wrong.clean_correct) == (0, False, False)
    consistent = certify(_keyword_classifier, "play jazz", None, casing(1.0), n=20)
    assert consistent.k == 20  # y=None: agreement with the clean prediction


def test_certify_many_does_not_depend_on_batching_and_matches_certify():
    def coin(texts):  # a prediction that depends on the perturbation drawn
        return [len(t) % 2 for t in texts]

    pert = casing(0.5)
    xs = ["Set An Alarm", "play jazz now", "what's the news", "Weather Today?"]
    a = certify_many(coin, xs, [0, 1, 0, 1], pert, n=30, seed=5, prompts_per_call=1)
    b = certify_many(coin, xs, [0, 1, 0, 1], pert, n=30, seed=5, prompts_per_call=3)
    assert a == b
    assert a[0] == certify(coin, xs[0], 0, pert, n=30, seed=5)
    assert certified_accuracy(a) <= np.mean([c.clean_correct for c in a])  # certified ⊆ correct
