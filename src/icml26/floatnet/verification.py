"""Checking that a network represents f, and finding inputs a network cannot separate.

Park, Park & Hwang, *On Minimum Depth and Width of Floating-Point Neural Networks for Representing
Floating-Point Functions* (ICML 2026): N represents f on D iff N(x) = f(x) numerically for every
x in D and no hidden activation is +inf or NaN (spec section 2.2); if a hidden layer maps x != x'
to the same activations, no f with f(x) != f(x') is represented by that network (section 2.8).

Deviations: on formats too large to enumerate, ``verify`` checks a stratified sample (all special
values plus random points uniform over encodings) instead of all of F^d.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from icml26.core import Seed, check_positive_int, numpy_generator
from icml26.floatnet.constructions import Table, check_domain, table_values
from icml26.floatnet.formats import FloatFormat, check_format
from icml26.floatnet.network import FloatReLUNet

__all__ = [
    "VerifyReport",
    "collisions",
    "is_monotone",
    "special_values",
    "stratified_sample",
    "verify",
]

MAX_SAMPLE_DIM = 4096  # input dimension of a stratified sample (the paper's d is small)
MAX_SAMPLE_ENTRIES = 2**26  # n * d of a stratified sample: 512 MiB of float64


def _check_net(net: object, owner: str) -> FloatReLUNet:
    if not isinstance(net, FloatReLUNet):
        raise TypeError(f"{owner}: net must be a FloatReLUNet; got {net!r} ({type(net).__name__}).")
    return net


@dataclass(frozen=True)
class VerifyReport:
    """Outcome of :func:`verify`.

    Attributes
    ----------
    exact
        True iff every output equals f and no hidden activation was +inf/NaN.
    n_points
        Number of inputs checked.
    mismatches
        Number of inputs with N(x) != f(x).
    nonfinite
        Number of inputs with some hidden activation +inf or NaN.
    max_width, depth
        The network's width and depth.
    first_mismatch
        The first input with N(x) != f(x), or None.
    """

    exact: bool
    n_points: int
    mismatches: int
    nonfinite: int
    max_width: int
    depth: int
    first_mismatch: tuple[float, ...] | None


def special_values(fmt: FloatFormat) -> np.ndarray:
    """Sorted special values of F: +-0, +-s_min, subnormal/normal boundary, +-max, +-1 and
    every binade edge +-2^e and its predecessor.

    Examples
    --------
    >>> special_values(FloatFormat(2, 1)).tolist()
    [-3.0, -2.0, -1.5, -1.0, -0.5, 0.0, 0.5, 1.0, 1.5, 2.0, 3.0]
    """
    fmt = check_format(fmt, owner="special_values")
    edges = np.ldexp(1.0, np.arange(fmt.emin, fmt.emax + 1))
    top = 2.0**fmt.emin - fmt.smin
    pos = np.concatenate([[fmt.smin, top, fmt.max], edges, fmt.pred(edges)])
    pos = pos[pos > 0]
    return np.unique(np.concatenate([-pos, [0.0], pos]))


def stratified_sample(fmt: FloatFormat, d: int, n: int, seed: Seed = None) -> np.ndarray:
    """Distinct points of F^d: special values (all of them when d = 1; else the diagonal and
    random mixes) and random points drawn uniformly over sign, exponent and mantissa.

    Parameters
    ----------
    fmt, d
        Format and dimension, ``d <= MAX_SAMPLE_DIM = 4096``.
    n
        Number of random points added to the special ones (fewer if they repeat), with
        ``n * d <= MAX_SAMPLE_ENTRIES = 2^26``.
    seed
        Randomness (int, Generator or None).

    Returns
    -------
    numpy.ndarray
        ``(m, d)`` distinct points.

    Raises
    ------
    TypeError, ValueError
        If ``fmt`` is not a FloatFormat or ``d``/``n`` is not an integer in range.

    Examples
    --------
    >>> X = stratified_sample(FloatFormat(11, 15), 1, 100, seed=0)
    >>> bool(np.all(FloatFormat(11, 15).contains(X)))
    True
    """
    owner = "stratified_sample"
    fmt = check_format(fmt, owner=owner)
    d = check_positive_int("d", d, owner=owner, maximum=MAX_SAMPLE_DIM)
    n = check_positive_int("n", n, owner=owner, minimum=0, maximum=MAX_SAMPLE_ENTRIES // d)
    rng = numpy_generator(seed)
    special = special_values(fmt)
    mixes = rng.choice(special, size=(len(special), d))
    diagonal = np.repeat(special[:, None], d, axis=1)
    sign = rng.choice([-1.0, 1.0], size=(n, d))
    exponent = rng.integers(fmt.emin - 1, fmt.emax + 1, size=(n, d))  # emin - 1: subnormals
    mantissa = rng.integers(0, 2 ** (fmt.p - 1), size=(n, d))
    scale = np.maximum(exponent, fmt.emin) - fmt.p + 1
    hidden = np.where(exponent >= fmt.emin, 2 ** (fmt.p - 1), 0)
    random = sign * np.ldexp((hidden + mantissa).astype(np.float64), scale)
    random = np.where(np.abs(random) > fmt.max, fmt.max * sign, random)  # fn formats: top code
    X = np.concatenate([diagonal, mixes, random]) + 0.0
    return np.unique(X, axis=0)


def verify(
    net: FloatReLUNet,
    table: Table,
    domain: ArrayLike | str | None = None,
    *,
    n: int = 10_000,
    seed: Seed = 0,
    engine: str = "dense",
    order: str = "bias_first",
) -> VerifyReport:
    """Check whether ``net`` represents ``table`` on a domain.

    Parameters
    ----------
    net
        The network.
    table
        The target f (mapping or callable; see :data:`icml26.floatnet.Table`).
    domain
        ``(m, d)`` points, ``None`` for all of F^d, or ``"sample"`` for a
        :func:`stratified_sample` of ``n`` random points plus the special values.
    n, seed
        Size and randomness of the sample (``domain="sample"`` only).
    engine, order
        Evaluation engine and summation order (see :class:`FloatReLUNet`).

    Returns
    -------
    VerifyReport

    Raises
    ------
    TypeError
        If ``net`` is not a FloatReLUNet or ``table`` is not a mapping or callable.
    ValueError
        If the domain holds points outside F or the table misses a point or a value is not in F.

    Examples
    --------
    >>> from icml26.floatnet import build_depth3
    >>> fmt = FloatFormat(3, 3)
    >>> net = build_depth3(fmt, 1, lambda X: -X[:, 0])
    >>> verify(net, lambda X: -X[:, 0]).exact
    True
    """
    fmt = _check_net(net, "verify").fmt
    if isinstance(domain, str):
        if domain != "sample":
            raise ValueError(
                f"verify: domain must be an array, None or 'sample'; got {domain!r} (str)."
            )
        D = stratified_sample(fmt, net.d, n, seed)
    else:
        D = check_domain(fmt, net.d, domain)
    f = table_values(fmt, table, D)
    out = net.evaluate(D, engine=engine, order=order)
    wrong = ~(out.y == f)
    first = tuple(D[np.argmax(wrong)].tolist()) if np.any(wrong) else None
    return VerifyReport(
        exact=not (np.any(wrong) or np.any(out.nonfinite)),
        n_points=len(D),
        mismatches=int(wrong.sum()),
        nonfinite=int(out.nonfinite.sum()),
        max_width=net.width,
        depth=net.depth,
        first_mismatch=first,
    )


def collisions(net: FloatReLUNet, domain: ArrayLike, *, layer: int | None = None) -> np.ndarray:
    """Pairs of distinct inputs that hidden layer ``layer`` maps to the same activations.

    The rest of the network only sees those activations, so it gives both inputs the same
    output: no f with f(x) != f(x') is represented by ``net``.

    Parameters
    ----------
    net
        The network (depth >= 2).
    domain
        ``(m, d)`` distinct points of F^d.
    layer
        Hidden layer, 1-based; default the last hidden layer.

    Returns
    -------
    numpy.ndarray
        ``(k, 2)`` row indices into ``domain``: each input paired with the first input of its
        group of equal activations (+0 and -0 count as equal).

    Raises
    ------
    ValueError
        If the network has no hidden layer or the domain is invalid.

    Examples
    --------
    >>> fmt = FloatFormat(3, 3)
    >>> relu = FloatReLUNet(fmt, [(np.ones((1, 1)), np.zeros(1)), (np.ones((1, 1)), np.zeros(1))])
    >>> collisions(relu, [[-1.0], [0.0], [2.0]]).tolist()  # ReLU merges -1 and 0
    [[0, 1]]
    """
    if _check_net(net, "collisions").depth < 2:
        raise ValueError(f"collisions: net must have a hidden layer; got depth {net.depth} (int).")
    D = check_domain(net.fmt, net.d, domain)
    H = net.hidden(D, net.depth - 1 if layer is None else layer) + 0.0
    _, first, inverse = np.unique(H, axis=0, return_index=True, return_inverse=True)
    inverse = inverse.reshape(-1)
    partner = first[inverse]
    others = np.nonzero(partner != np.arange(len(D)))[0]
    return np.stack([partner[others], others], axis=1)


def is_monotone(
    net: FloatReLUNet, domain: ArrayLike | None = None, *, engine: str = "sparse"
) -> bool:
    """Whether a one-input network is non-decreasing or non-increasing on a 1-D domain.

    Width-1 networks always are (each layer x -> ReLU(w (*) x (+) b) is monotone because rounding
    is), so the indicator of {0} on F needs width >= 2 = 2d for d = 1 (spec section 2.8).

    Parameters
    ----------
    net
        Network with d = 1.
    domain
        Points of F (default: all of F).
    engine
        Evaluation engine; ``"sparse"`` reads a zero weight as a constant (no 0 (*) inf = NaN).

    Returns
    -------
    bool
        True iff the outputs along the sorted domain are monotone (NaN counts as not monotone).

    Raises
    ------
    ValueError
        If ``net`` does not have one input.

    Examples
    --------
    >>> fmt = FloatFormat(3, 3)
    >>> net = FloatReLUNet(fmt, [(np.ones((1, 1)), np.zeros(1)), (-np.ones((1, 1)), np.zeros(1))])
    >>> is_monotone(net)
    True
    """
    if _check_net(net, "is_monotone").d != 1:
        raise ValueError(f"is_monotone: net must have one input; got d = {net.d} (int).")
    X = np.sort(check_domain(net.fmt, 1, domain), axis=0)
    y = net(X, engine=engine)
    return bool(np.all(y[1:] >= y[:-1]) or np.all(y[1:] <= y[:-1]))
