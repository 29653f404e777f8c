"""Networks that represent a given f: D -> F exactly under rounded arithmetic (D a subset of F^d).

Park, Park & Hwang, *On Minimum Depth and Width of Floating-Point Neural Networks for Representing
Floating-Point Functions* (ICML 2026): depth 3 suffices (T1), width 2d + 4 / d + 4 suffices (T3),
width below d on small domains, depth 2 on small domains/codomains (T2).

Deviations: the paper's proofs were not available. Every construction here is the spec author's
own (spec sections 2.4-2.7), designed to meet the paper's bounds and verified exhaustively on toy
formats; none is claimed to be the paper's. Thresholds and the number of copies / subtraction
layers use the smallest positive value a test takes on the *domain* D (found by evaluating the
rounded test at the neighbouring value of D), which equals the spec's format gaps when D = F^d.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from icml26.core import check_array, check_positive_int
from icml26.floatnet.formats import FloatFormat, check_format
from icml26.floatnet.network import FloatReLUNet

__all__ = [
    "Table",
    "build_binary_code_net",
    "build_depth2_integer",
    "build_depth3",
    "build_narrow",
    "table_values",
]

Table = Mapping[Any, float] | Callable[[np.ndarray], ArrayLike]
"""A target f: a mapping from points (tuples, or scalars when d = 1) to values, or a callable
taking the ``(n, d)`` domain array and returning the ``n`` values."""


def check_domain(
    fmt: FloatFormat, d: int, domain: ArrayLike | None, *, nonneg: bool = False
) -> np.ndarray:
    """Return the domain as a ``(n, d)`` float64 array of distinct points of F^d.

    ``None`` means all of F^d (F_{>=0}^d if ``nonneg``). Raises ``ValueError`` for points outside
    F, negative coordinates when ``nonneg``, a wrong shape or repeated points.
    """
    if domain is None:
        return fmt.grid(d, nonneg=nonneg)
    D = np.asarray(domain, dtype=np.float64)
    if D.ndim == 1 and d == 1:
        D = D[:, None]
    if D.ndim != 2 or D.shape[1] != d or len(D) == 0:
        raise ValueError(
            f"domain must be a non-empty array of shape (n, {d}); got shape {D.shape}."
        )
    fmt._check_members("domain", D)
    if nonneg and np.any(D < 0):
        raise ValueError(
            f"domain must be non-negative when nonneg=True; got {float(D[D < 0][0])!r} (float)."
        )
    D = D + 0.0  # -0 -> +0, so that +0 and -0 count as one point
    if len(np.unique(D, axis=0)) != len(D):
        raise ValueError("domain must not repeat a point (+0 and -0 are the same point).")
    return D


def table_values(fmt: FloatFormat, table: Table, domain: np.ndarray) -> np.ndarray:
    """Values f(x) for every row x of ``domain``, checked to be finite values of F.

    Parameters
    ----------
    fmt
        The format the values must lie in.
    table
        Mapping from points (tuples of floats, or floats when d = 1) to values, or a callable on
        the ``(n, d)`` domain array.
    domain
        ``(n, d)`` array of points.

    Returns
    -------
    numpy.ndarray
        ``(n,)`` float64 values.

    Raises
    ------
    TypeError
        If ``fmt`` is not a FloatFormat, ``table`` is not a mapping or callable or gives
        non-numbers, or ``domain`` is not numeric.
    ValueError
        If ``domain`` is not 2-D or not finite, a point has no value or a value is not a finite
        value of F.

    Examples
    --------
    >>> table_values(FloatFormat(3, 3), {(0.0,): 1.0, (1.0,): -2.0}, np.array([[1.0], [0.0]]))
    array([-2.,  1.])
    """
    fmt = check_format(fmt, owner="table_values")
    domain = check_array("domain", domain, owner="table_values", dtype=np.float64)
    if domain.ndim == 1:
        domain = domain[:, None]  # (n,) points of F^1
    if domain.ndim != 2:
        raise ValueError(f"table_values: domain must be 2-D (n, d); got shape {domain.shape}.")
    if callable(table):
        values = _numbers(table(domain), "table must return numbers").reshape(-1)
        if len(values) != len(domain):
            raise ValueError(
                f"table must return one value per domain point; got {len(values)} values "
                f"for {len(domain)} points."
            )
    elif isinstance(table, Mapping):
        values = np.empty(len(domain))
        for k, point in enumerate(domain):
            key = tuple(float(v) for v in point)
            if key in table:
                value = table[key]
            elif len(key) == 1 and key[0] in table:
                value = table[key[0]]
            else:
                raise ValueError(f"table has no value for domain point {key}.")
            number = _numbers(value, f"table value at {key} must be a number")
            if number.ndim:
                raise TypeError(
                    f"table_values: table value at {key} must be a number; got shape "
                    f"{number.shape}."
                )
            values[k] = number
    else:
        raise TypeError(
            f"table must be a Mapping or a callable; got {table!r} ({type(table).__name__})."
        )
    bad = ~fmt.contains(values)
    if np.any(bad):
        k = int(np.argmax(bad))
        raise ValueError(
            f"table values must be finite values of F({fmt.p}, {fmt.emax}); got "
            f"{float(values[k])!r} (float) at point {tuple(domain[k].tolist())}."
        )
    return values


def _numbers(value: object, what: str) -> np.ndarray:
    try:
        return np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError(f"table_values: {what}; got {type(value).__name__}.") from None


def _pow2_floor(m: float) -> float:
    return math.ldexp(1.0, math.frexp(m)[1] - 1)


def _neuron(fmt: FloatFormat, w: float, beta: float, x: float) -> float:
    """Rounded one-input pre-activation beta (+) (w (*) x)."""
    return float(fmt.add(beta, fmt.mul(w, x)))


def _check_ieee(fmt: FloatFormat, owner: str) -> None:
    if not isinstance(fmt, FloatFormat):
        raise TypeError(f"{owner}: fmt must be a FloatFormat; got {fmt!r} ({type(fmt).__name__}).")
    if fmt.variant != "ieee":
        raise ValueError(
            f"{owner}: fmt must be an IEEE format (overflow to inf); got variant "
            f"{fmt.variant!r} (str)."
        )


# ----- C3: depth 3 (spec 2.4) ---------------------------------------------------------------------
def build_depth3(
    fmt: FloatFormat, d: int, table: Table, *, domain: ArrayLike | None = None
) -> FloatReLUNet:
    """Depth-3 network representing f on D exactly (construction C3, spec section 2.4).

    Layer 1 holds threshold features per coordinate i and threshold a in D's i-th coordinates:
    R = ReLU(w x_i - w a) > 0 iff x_i > a and L = ReLU(-w x_i + w a) > 0 iff x_i < a, with w = 1,
    or w = 1/2 where x_i - a could overflow (|a| >= 2^(emax-p) and the sign makes it grow).
    Each feature with smallest positive value m on D gets weight A_c = min(2^emax, 2/m) in
    layer 2 and K = ceil(2 / (A_c m)) copies. Layer 2 has one indicator per point x* of D,
    B = ReLU(1 - sum A_c R - sum A_c L) (1 at x*, 0 elsewhere); layer 3 is y = sum f(x*) B.

    Parameters
    ----------
    fmt
        IEEE format with 2 emax >= p + 3 (the halving trick is exact there).
    d
        Input dimension.
    table
        The target f on D (see :data:`Table`).
    domain
        ``(n, d)`` points of D; ``None`` means all of F^d.

    Returns
    -------
    FloatReLUNet
        Depth 3, widths (features with copies, |D|, 1).

    Raises
    ------
    ValueError
        If 2 emax < p + 3, the domain or table is invalid (see :func:`table_values`).

    Examples
    --------
    >>> fmt = FloatFormat(3, 3)
    >>> net = build_depth3(fmt, 1, lambda X: fmt.round(X[:, 0] / 3))
    >>> X = fmt.grid(1)
    >>> bool(np.array_equal(net(X), fmt.round(X[:, 0] / 3))), net.widths
    (True, (232, 55, 1))
    """
    _check_ieee(fmt, "build_depth3")
    d = check_positive_int("d", d, owner="build_depth3")
    if 2 * fmt.emax < fmt.p + 3:
        raise ValueError(
            f"build_depth3: fmt must satisfy 2*emax >= p + 3 (else halving thresholds is "
            f"inexact); got p={fmt.p}, emax={fmt.emax} (FloatFormat)."
        )
    D = check_domain(fmt, d, domain)
    f = table_values(fmt, table, D)
    A, big = math.ldexp(1.0, fmt.emax), math.ldexp(1.0, fmt.emax - fmt.p)

    rows_W, rows_b = [], []  # layer-1 rows: (coordinate, w, beta) with K copies
    features: dict[tuple[int, str, float], tuple[slice, float]] = {}  # -> (rows, A_c)
    for i in range(d):
        V = np.unique(D[:, i])
        for k, a in enumerate(V.tolist()):
            for side, neighbour in (("R", k + 1), ("L", k - 1)):
                if not 0 <= neighbour < len(V):
                    continue  # no point of D lies beyond a on this side: the feature never fires
                s = 1.0 if side == "R" else -1.0
                safe = s * a >= 0 or abs(a) < big  # s (x_i - a) cannot overflow to +inf
                w = s if safe else s / 2
                beta = -w * a  # exact: a/2 is in F when 2 emax >= p + 3
                m = _pow2_floor(_neuron(fmt, w, beta, V[neighbour]))
                A_c = min(A, 2.0 / m)
                copies = math.ceil(2.0 / (A_c * m))
                features[(i, side, a)] = (slice(len(rows_W), len(rows_W) + copies), A_c)
                rows_W += [(i, w)] * copies
                rows_b += [beta] * copies
    W1 = np.zeros((len(rows_W), d))
    W1[np.arange(len(rows_W)), [i for i, _ in rows_W]] = [w for _, w in rows_W]
    W2 = np.zeros((len(D), len(rows_W)))
    for r, point in enumerate(D):
        for i, a in enumerate(point.tolist()):
            for side in ("R", "L"):
                if (i, side, a) in features:
                    rows, A_c = features[(i, side, a)]
                    W2[r, rows] = -A_c
    layers = [(W1, np.array(rows_b)), (W2, np.ones(len(D))), (f[None, :], np.zeros(1))]
    return FloatReLUNet(fmt, layers)


# ----- Cw: width 2d + 4 / d + 4 (spec 2.5) --------------------------------------------------------
class _NarrowBuilder:
    """Appends layers on the neuron layout [P_1..P_d, (N_1..N_d,) F, U, S+, S-]."""

    def __init__(self, fmt: FloatFormat, d: int, nonneg: bool) -> None:
        self.fmt, self.d = fmt, d
        self.P = list(range(d))
        self.N = [] if nonneg else list(range(d, 2 * d))
        self.F, self.U = d + len(self.N), d + len(self.N) + 1
        self.S = (self.U + 1, self.U + 2)  # S+ and S-
        self.width = self.U + 3
        W = np.zeros((self.width, d))
        W[self.P, range(d)] = 1.0
        W[self.N, range(len(self.N))] = -1.0
        self.layers: list[tuple[np.ndarray, np.ndarray]] = [(W, np.zeros(self.width))]
        self.pending = 0.0  # f(x*) of the previous block, accumulated with the next layer

    def _carry(self) -> tuple[np.ndarray, np.ndarray]:
        return np.eye(self.width), np.zeros(self.width)

    def start_block(self) -> None:
        """F <- 1 and S+/- <- S+/- + |f(previous x*)| F (one layer)."""
        W, b = self._carry()
        self._accumulate(W)
        W[self.F], b[self.F] = 0.0, 1.0
        self.layers.append((W, b))

    def _accumulate(self, W: np.ndarray) -> None:
        if self.pending != 0:
            W[self.S[0] if self.pending > 0 else self.S[1], self.F] = abs(self.pending)

    def test(self, source: int, sign: float, c: float, m: float) -> None:
        """Clear F if the test value T > 0 (smallest positive value m on D).

        T = U = ReLU(sign source - sign c), computed in one layer, or for ``sign = 0`` the
        carried neuron ``source`` itself.
        """
        if sign != 0:
            W, b = self._carry()
            W[self.U] = 0.0
            W[self.U, source], b[self.U] = sign, -sign * c
            self.layers.append((W, b))
            source = self.U
        m = _pow2_floor(m)
        A_c = min(math.ldexp(1.0, self.fmt.emax), 1.0 / m)
        for _ in range(math.ceil(1.0 / (A_c * m))):
            W, b = self._carry()
            W[self.F, source] = -A_c  # F <- ReLU(F - A_c T): stays 1 iff T = 0
            self.layers.append((W, b))

    def finish(self) -> list[tuple[np.ndarray, np.ndarray]]:
        """Output y = S+ - S- + f(last x*) F (at most one of the three terms is non-zero)."""
        W = np.zeros((1, self.width))
        W[0, self.S[0]], W[0, self.S[1]], W[0, self.F] = 1.0, -1.0, self.pending
        return [*self.layers, (W, np.zeros(1))]


def build_narrow(
    fmt: FloatFormat,
    d: int,
    table: Table,
    nonneg: bool = False,
    *,
    domain: ArrayLike | None = None,
) -> FloatReLUNet:
    """Deep narrow network representing f on D exactly (construction Cw, spec section 2.5).

    Hidden layers carry P_i = ReLU(x_i), N_i = ReLU(-x_i) (only P_i if ``nonneg``), a flag F, a
    work neuron U and accumulators S+, S-: width 2d + 4 (d + 4 if ``nonneg``). For each point
    x* of D a block sets F = 1, runs per coordinate the mismatch tests (N_i or P_i directly,
    U = ReLU(P_i - x*_i), U = ReLU(x*_i - P_i), or their N_i versions for x*_i < 0), each
    followed by K = ceil(1 / (A_c m)) layers F <- ReLU(F - A_c T) with A_c = min(2^emax, 1/m),
    and adds |f(x*)| F to S+ or S-. The output is y = S+ - S-.

    Parameters
    ----------
    fmt
        IEEE format.
    d
        Input dimension.
    table
        The target f on D (see :data:`Table`).
    nonneg
        Non-negative domain: drop the N_i neurons (width d + 4).
    domain
        ``(n, d)`` points of D; ``None`` means F^d (F_{>=0}^d if ``nonneg``).

    Returns
    -------
    FloatReLUNet
        Width exactly 2d + 4 (or d + 4); depth about |D| (1 + 3 d (1 + K)).

    Raises
    ------
    ValueError
        If the domain or table is invalid, or ``nonneg`` with negative domain points.

    Examples
    --------
    >>> fmt = FloatFormat(3, 3)
    >>> net = build_narrow(fmt, 1, lambda X: X[:, 0] * 0 + 1, nonneg=True)
    >>> net.width, bool(np.all(net(fmt.grid(1, nonneg=True)) == 1))
    (5, True)
    """
    _check_ieee(fmt, "build_narrow")
    d = check_positive_int("d", d, owner="build_narrow")
    D = check_domain(fmt, d, domain, nonneg=nonneg)
    f = table_values(fmt, table, D)
    builder = _NarrowBuilder(fmt, d, nonneg)
    coords = [np.unique(D[:, i]) for i in range(d)]
    for point, value in zip(D, f, strict=True):
        builder.start_block()
        for i, c in enumerate(point.tolist()):
            for source, sign, c_used, m in _tests(fmt, coords[i], c, builder, i):
                builder.test(source, sign, c_used, m)
        builder.pending = float(value)
    return FloatReLUNet(fmt, builder.finish())


def _tests(
    fmt: FloatFormat, V: np.ndarray, c: float, builder: _NarrowBuilder, i: int
) -> list[tuple[int, float, float, float]]:
    """Mismatch tests for coordinate i at x*_i = c: (source, sign, constant, smallest value m).

    Each fires (is > 0) on exactly the values of V on one side of c; m is its value at the
    nearest such v, where the rounded test is smallest (rounding is monotone).
    """
    above, below = V[c < V], V[c > V]
    if c >= 0:
        P, out = builder.P[i], []
        negative = below[below < 0]
        if builder.N and len(negative):
            out.append((builder.N[i], 0.0, 0.0, -float(negative.max())))  # N_i > 0 iff x_i < 0
        if len(above):
            out.append((P, 1.0, c, float(fmt.add(above.min(), -c))))  # P_i - c > 0 iff x_i > c
        low = below[below >= 0]
        if len(low):
            out.append((P, -1.0, c, float(fmt.add(c, -low.max()))))  # c - P_i > 0, 0 <= x_i < c
        return out
    N, out = builder.N[i], []
    if np.any(V > 0):
        out.append((builder.P[i], 0.0, 0.0, float(V[V > 0].min())))  # P_i > 0 iff x_i > 0
    if len(below):
        out.append((N, 1.0, -c, float(fmt.add(-below.max(), c))))  # N_i - |c| > 0 iff x_i < c
    high = above[above <= 0]
    if len(high):
        out.append((N, -1.0, -c, float(fmt.add(-c, high.min()))))  # |c| - N_i > 0, c < x_i <= 0
    return out


# ----- width below d on {0,1}^d (spec 2.6) -------------------------------------------------
def build_binary_code_net(fmt: FloatFormat, d: int, table: Table) -> FloatReLUNet:
    """Width-5 network representing f: {0,1}^d -> F (spec section 2.6; width < d for d > 5).

    Layer 1 has one neuron, the exact integer code c = ReLU(sum_i 2^(i-1) x_i) (x_1 is the least
    significant bit); then :func:`build_narrow` in 1-D non-negative mode on {0, ..., 2^d - 1}.

    Parameters
    ----------
    fmt
        IEEE format with d <= p (codes are exact integers) and d - 1 <= emax (weights in F).
    d
        Number of binary inputs.
    table
        f on {0,1}^d (see :data:`Table`).

    Returns
    -------
    FloatReLUNet
        Width 5.

    Raises
    ------
    ValueError
        If d > p or d - 1 > emax, or the table is invalid.

    Examples
    --------
    >>> fmt = FloatFormat(11, 15)
    >>> net = build_binary_code_net(fmt, 3, lambda X: X.sum(axis=1))
    >>> net.width, net(np.array([[1.0, 0.0, 1.0]])).tolist()
    (5, [2.0])
    """
    _check_ieee(fmt, "build_binary_code_net")
    d = check_positive_int("d", d, owner="build_binary_code_net")
    if d > fmt.p or d - 1 > fmt.emax:
        raise ValueError(
            f"build_binary_code_net: d must satisfy d <= p = {fmt.p} and d - 1 <= emax = "
            f"{fmt.emax} (exact integer codes); got {d!r} (int)."
        )
    D = np.array([[(k >> i) & 1 for i in range(d)] for k in range(2**d)], dtype=np.float64)
    f = table_values(fmt, table, D)
    codes = np.arange(2**d, dtype=np.float64)[:, None]  # row k of D has code k
    inner = build_narrow(
        fmt, 1, dict(zip(codes[:, 0].tolist(), f.tolist(), strict=True)), nonneg=True, domain=codes
    )
    code_layer = (np.ldexp(1.0, np.arange(d))[None, :], np.zeros(1))
    return FloatReLUNet(fmt, [code_layer, *inner.layers])


# ----- depth 2 on a small domain and codomain (spec 2.7) ------------------------------------
def build_depth2_integer(fmt: FloatFormat, table: ArrayLike) -> FloatReLUNet:
    """Depth-2 network for integer f on {0, ..., N} (spec section 2.7; a sanity example of T2).

    y = f(0) (+) sum_{j=1..N} s_j (*) ReLU(x - (j - 1)) with s_1 = f(1) - f(0) and
    s_j = f(j) - 2 f(j-1) + f(j-2): the piecewise-linear interpolant. In the default
    ``bias_first`` order every product and partial sum is an integer of magnitude < 2^p when
    |f| <= M and 4 M N + M < 2^p, so the rounded network is exact on {0, ..., N}.

    Parameters
    ----------
    fmt
        IEEE format.
    table
        ``[f(0), ..., f(N)]``, integers, N >= 1.

    Returns
    -------
    FloatReLUNet
        Depth 2, width N.

    Raises
    ------
    ValueError
        If values are not integers, N < 1, or 4 M N + M >= 2^p.

    Examples
    --------
    >>> net = build_depth2_integer(FloatFormat(11, 15), [3, -1, 4, 1, -5])
    >>> net(np.arange(5.0)[:, None]).tolist()
    [3.0, -1.0, 4.0, 1.0, -5.0]
    """
    _check_ieee(fmt, "build_depth2_integer")
    f = np.asarray(table, dtype=np.float64).reshape(-1)
    if len(f) < 2 or not np.all(np.isfinite(f)) or np.any(f != np.round(f)):
        raise ValueError(
            f"build_depth2_integer: table must hold >= 2 integers f(0..N); got {table!r} "
            f"({type(table).__name__})."
        )
    n, M = len(f) - 1, float(np.abs(f).max())
    if 4 * M * n + M >= 2.0**fmt.p:
        raise ValueError(
            f"build_depth2_integer: table must satisfy 4 M N + M < 2^p = {2**fmt.p} (exact "
            f"integer arithmetic); got M = {M:g}, N = {n} (table)."
        )
    slopes = np.diff(f)  # slope of segment j is f(j) - f(j-1)
    s = np.concatenate([slopes[:1], np.diff(slopes)])  # s_1, then changes of slope
    hidden = (np.ones((n, 1)), -np.arange(n, dtype=np.float64))
    return FloatReLUNet(fmt, [hidden, (s[None, :], f[:1])])
