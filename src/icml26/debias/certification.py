"""Certification against random prompt perturbations (spec §2.5).

For a prompt ``x`` with label ``y``, draw ``n`` i.i.d. perturbations and count
``k = #{F(x'_i) = y}`` (or ``= F(x)``, "consistency", when ``y`` is ``None``). With confidence
``1 − α`` the success probability is at least

* the exact one-sided Clopper–Pearson bound ``p_low = BetaInv(α; k, n − k + 1)``
  (``α^{1/n}`` at ``k = n``, ``0`` at ``k = 0``), or
* the distribution-free Hoeffding bound ``p_low = k/n − sqrt(ln(1/α) / (2n))`` (looser).

``x`` is ``ε``-certified when ``p_low ≥ 1 − ε``; certified accuracy is the fraction of prompts
that are correct on the clean prompt *and* certified. PromptBench's performance drop rate is
``PDR = 1 − acc_perturbed / acc_clean``.

Deviations: the Hoeffding bound is clipped to ``[0, 1]`` (a probability bound); each prompt
``i`` of :func:`certify_many` draws from its own stream of ``seed``, so batching prompts changes
no number.
"""

from __future__ import annotations

import math
import numbers
import random
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from icml26.core import Seed, check_in_interval, check_positive_int, numpy_generator

__all__ = [
    "Certificate",
    "certified_accuracy",
    "certify",
    "certify_many",
    "clopper_pearson_lower",
    "hoeffding_lower",
    "performance_drop_rate",
]

PredictFn = Callable[[Sequence[Any]], Any]
PerturbFn = Callable[[Any, random.Random], Any]


def _check_kn(k: Any, n: Any, owner: str) -> tuple[int, int]:
    n = check_positive_int("n", n, owner=owner)
    if isinstance(k, bool) or not isinstance(k, numbers.Integral):
        raise TypeError(f"{owner}: k must be an integer; got {k!r} ({type(k).__name__}).")
    if not 0 <= k <= n:
        raise ValueError(f"{owner}: k must be in [0, n] = [0, {n}]; got {k}.")
    return int(k), n


def _check_alpha(alpha: Any, owner: str) -> float:
    return check_in_interval("alpha", alpha, low=0.0, high=1.0, closed="neither", owner=owner)


def clopper_pearson_lower(k: int, n: int, alpha: float = 1e-3) -> float:
    """Exact one-sided Clopper–Pearson lower confidence bound at level ``1 − alpha``.

    Parameters
    ----------
    k
        Successes, ``0 <= k <= n``.
    n
        Trials, ``>= 1``.
    alpha
        Miscoverage in ``(0, 1)``.

    Returns
    -------
    float
        ``BetaInv(alpha; k, n − k + 1)``; ``alpha**(1/n)`` if ``k == n``, ``0`` if ``k == 0``.

    Raises
    ------
    ValueError
        If ``n < 1``, ``k`` outside ``[0, n]`` or ``alpha`` outside ``(0, 1)``.

    Examples
    --------
    >>> round(clopper_pearson_lower(100, 100, 1e-3), 6)
    0.933254
    """
    from scipy.stats import beta

    owner = "clopper_pearson_lower"
    k, n = _check_kn(k, n, owner)
    alpha = _check_alpha(alpha, owner)
    if k == 0:
        return 0.0
    if k == n:
        return alpha ** (1.0 / n)  # BetaInv(alpha; n, 1) in closed form
    return float(beta.ppf(alpha, k, n - k + 1))


def hoeffding_lower(k: int, n: int, alpha: float = 1e-3) -> float:
    """Hoeffding lower bound ``k/n − sqrt(ln(1/alpha) / (2n))``, clipped to ``[0, 1]``.

    Examples
    --------
    >>> round(hoeffding_lower(95, 100, 1e-3), 4)
    0.7642
    """
    owner = "hoeffding_lower"
    k, n = _check_kn(k, n, owner)
    alpha = _check_alpha(alpha, owner)
    return max(0.0, k / n - math.sqrt(math.log(1.0 / alpha) / (2.0 * n)))


@dataclass(frozen=True)
class Certificate:
    """The outcome of certifying one prompt.

    Attributes
    ----------
    k, n
        Perturbed predictions that agree with the target, out of ``n``.
    p_low
        Clopper–Pearson lower bound on the agreement probability at level ``1 − alpha``.
    certified
        ``p_low >= 1 − eps``.
    clean_correct
        The clean prompt is predicted as the target.
    """

    k: int
    n: int
    p_low: float
    certified: bool
    clean_correct: bool = True


def _labels(predict_fn: PredictFn, inputs: Sequence[Any], owner: str) -> np.ndarray:
    out = predict_fn(list(inputs))
    if hasattr(out, "detach"):
        out = out.detach().cpu().numpy()
    out = np.asarray(out)
    if out.shape != (len(inputs),):
        raise ValueError(
            f"{owner}: predict_fn must return one label per input ({len(inputs)}); "
            f"got shape {out.shape}."
        )
    return out


MAX_SAMPLES = 10**6  # most perturbed copies per prompt


def _check_cert_args(n: Any, alpha: Any, eps: Any, owner: str) -> tuple[int, float, float]:
    n = check_positive_int("n", n, owner=owner, maximum=MAX_SAMPLES)
    alpha = _check_alpha(alpha, owner)
    eps = check_in_interval("eps", eps, low=0.0, high=1.0, closed="neither", owner=owner)
    return n, alpha, eps


def _prompt_rngs(count: int, seed: Seed) -> list[random.Random]:
    base = int(numpy_generator(seed).integers(0, 2**62))
    return [random.Random(f"certify/{base}/{i}") for i in range(count)]


def _certificate(
    pred_clean: Any, preds: np.ndarray, y: Any, alpha: float, eps: float
) -> Certificate:
    target = pred_clean if y is None else y
    k = int(np.sum(preds == target))
    p_low = clopper_pearson_lower(k, len(preds), alpha)
    return Certificate(k, len(preds), p_low, p_low >= 1.0 - eps, bool(pred_clean == target))


def certify(
    predict_fn: PredictFn,
    x: Any,
    y: Any,
    perturb_fn: PerturbFn,
    n: int = 100,
    alpha: float = 1e-3,
    eps: float = 0.1,
    seed: Seed = 0,
) -> Certificate:
    """Certify one prompt against ``n`` random perturbations (Clopper–Pearson at ``1 − alpha``).

    Parameters
    ----------
    predict_fn
        ``predict_fn(list_of_inputs) -> labels`` (one call with the clean prompt, one with the
        ``n`` perturbed copies).
    x, y
        The prompt and its label; ``y=None`` certifies consistency with ``F(x)``.
    perturb_fn
        ``(x, random.Random) -> x'``, e.g. a text :class:`~icml26.debias.perturb.Perturbation`.
    n, alpha, eps
        Samples (``>= 1``), miscoverage and tolerated flip rate, both in ``(0, 1)``.
    seed
        Use fresh seeds, never those of the debiasing data.

    Returns
    -------
    Certificate

    Examples
    --------
    >>> from icml26.debias.perturb import casing
    >>> predict = lambda texts: [int("alarm" in t.lower()) for t in texts]
    >>> certify(predict, "set an alarm", 1, casing(1.0), n=100).certified
    True
    """
    owner = "certify"
    n, alpha, eps = _check_cert_args(n, alpha, eps, owner)
    if not callable(perturb_fn) or not callable(predict_fn):
        raise TypeError(f"{owner}: predict_fn and perturb_fn must be callable.")
    rng = _prompt_rngs(1, seed)[0]
    perturbed = [perturb_fn(x, rng) for _ in range(n)]
    pred_clean = _labels(predict_fn, [x], owner)[0]
    return _certificate(pred_clean, _labels(predict_fn, perturbed, owner), y, alpha, eps)


def certify_many(
    predict_fn: PredictFn,
    xs: Sequence[Any],
    ys: Sequence[Any] | None,
    perturb_fn: PerturbFn,
    n: int = 100,
    alpha: float = 1e-3,
    eps: float = 0.1,
    seed: Seed = 0,
    *,
    prompts_per_call: int = 8,
) -> list[Certificate]:
    """Certify many prompts, pooling the perturbed copies of ``prompts_per_call`` prompts per call.

    Prompt ``i`` draws from its own stream of ``seed``, so the certificates do not depend on
    ``prompts_per_call``; they equal ``certify`` with a matching per-prompt stream.

    Returns
    -------
    list of Certificate

    Raises
    ------
    ValueError
        Empty ``xs``, ``ys`` of another length, or the arguments :func:`certify` refuses.

    Examples
    --------
    >>> from icml26.debias.perturb import casing
    >>> predict = lambda texts: [int("alarm" in t.lower()) for t in texts]
    >>> certs = certify_many(predict, ["set an alarm", "play jazz"], [1, 0], casing(1.0), n=100)
    >>> certified_accuracy(certs)  # k = n = 100: p_low = 0.933 >= 0.9
    1.0
    """
    owner = "certify_many"
    n, alpha, eps = _check_cert_args(n, alpha, eps, owner)
    prompts_per_call = check_positive_int("prompts_per_call", prompts_per_call, owner=owner)
    if isinstance(xs, str) or not isinstance(xs, Sequence):
        raise TypeError(f"{owner}: xs must be a list of prompts; got {type(xs).__name__}.")
    xs = list(xs)
    if not xs:
        raise ValueError(f"{owner}: xs is empty; give at least one prompt.")
    if ys is not None and (isinstance(ys, str) or not isinstance(ys, Sequence)):
        raise TypeError(f"{owner}: ys must be a list of labels or None; got {type(ys).__name__}.")
    if ys is not None and len(ys) != len(xs):
        raise ValueError(f"{owner}: ys has {len(ys)} labels for {len(xs)} prompts.")
    if not callable(perturb_fn) or not callable(predict_fn):
        raise TypeError(f"{owner}: predict_fn and perturb_fn must be callable.")
    rngs = _prompt_rngs(len(xs), seed)
    clean = _labels(predict_fn, xs, owner)
    out = []
    for start in range(0, len(xs), prompts_per_call):
        block = range(start, min(start + prompts_per_call, len(xs)))
        perturbed = [perturb_fn(xs[i], rngs[i]) for i in block for _ in range(n)]
        preds = _labels(predict_fn, perturbed, owner).reshape(len(block), n)
        for j, i in enumerate(block):
            y = None if ys is None else ys[i]
            out.append(_certificate(clean[i], preds[j], y, alpha, eps))
    return out


def certified_accuracy(certificates: Sequence[Certificate]) -> float:
    """Fraction of prompts that are correct on the clean prompt and ``ε``-certified.

    Examples
    --------
    >>> certified_accuracy([Certificate(100, 100, 0.93, True), Certificate(50, 100, 0.3, False)])
    0.5
    """
    if not isinstance(certificates, Iterable) or isinstance(certificates, str | Certificate):
        raise TypeError("certified_accuracy: certificates must be a list of Certificate objects.")
    certificates = list(certificates)
    if not certificates:
        raise ValueError("certified_accuracy: certificates is empty.")
    if not all(isinstance(c, Certificate) for c in certificates):
        raise TypeError("certified_accuracy: certificates must be Certificate objects.")
    return float(np.mean([c.certified and c.clean_correct for c in certificates]))


def performance_drop_rate(acc_clean: float, acc_pert: float) -> float:
    """PromptBench's performance drop rate ``1 − acc_pert / acc_clean``.

    Parameters
    ----------
    acc_clean
        Clean accuracy in ``(0, 1]``.
    acc_pert
        Perturbed accuracy in ``[0, 1]``.

    Examples
    --------
    >>> performance_drop_rate(0.9, 0.45)
    0.5
    """
    owner = "performance_drop_rate"
    acc_clean = check_in_interval("acc_clean", acc_clean, low=0.0, high=1.0, closed="right",
                                  owner=owner)  # fmt: skip
    acc_pert = check_in_interval("acc_pert", acc_pert, low=0.0, high=1.0, owner=owner)
    return 1.0 - acc_pert / acc_clean
