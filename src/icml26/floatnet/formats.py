"""Parametrised IEEE-754-style float formats F(p, emax) with correct round-to-nearest-even.

Park, Park & Hwang, *On Minimum Depth and Width of Floating-Point Neural Networks for Representing
Floating-Point Functions* (ICML 2026; no arXiv id found), the float set F of the problem statement.

Values are held as float64. ``round`` is our own frexp/rint implementation (not ml_dtypes, whose
float64 -> bfloat16/float8 casts round twice); the rounded operations ``x (+) y = round(x + y)``
and ``x (*) y = round(x * y)`` are correctly rounded for p <= 25 by the innocuous-double-rounding
theorem (Figueroa: rounding to q >= 2p + 2 bits first, then to p bits, equals direct rounding).
``round_fraction`` is the slow exact reference on ``fractions.Fraction``.

Deviations: the OCP ``fn`` variant (no infinities, top mantissa is NaN) overflows to NaN, as
ml_dtypes' default cast does; the constructions never use it.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
from numpy.typing import ArrayLike

from icml26.core import check_array, check_one_of, check_positive_int

__all__ = ["FORMATS", "FloatFormat"]

_MAX_P = 25  # Figueroa: float64 (53 bits) >= 2p + 2 keeps float64-then-round correct.
_MAX_EMAX = 500  # products of two format values stay inside float64's normal range.
_MAX_ENUMERATE = 2**26  # values()/grid() refuse to build larger arrays (float32 has ~4e9).


@dataclass(frozen=True)
class FloatFormat:
    """The finite float set F(p, emax) and its correctly rounded arithmetic.

    F holds +-0, subnormals +-m * s_min (1 <= m < 2^(p-1)) and normals +-m * 2^(e-p+1)
    (2^(p-1) <= m < 2^p, emin <= e <= emax), with emin = 1 - emax and s_min = 2^(emin-p+1)
    (``fn`` formats reuse the top exponent code for normals: emin = 2 - emax).
    ``round`` is round-to-nearest, ties-to-even; |x| >= (2 - 2^-p) * 2^emax overflows to +-inf
    (``variant="ieee"``) or to NaN (``variant="fn"``, whose largest mantissa at emax is NaN).

    Parameters
    ----------
    p
        Precision in bits including the hidden bit, 2 <= p <= 25.
    emax
        Largest exponent, 1 <= emax <= 500.
    variant
        ``"ieee"`` (with infinities) or ``"fn"`` (OCP finite-only, e.g. float8_e4m3fn).

    Raises
    ------
    ValueError
        If p or emax is out of range or ``variant`` is unknown.

    Examples
    --------
    >>> f = FloatFormat(p=3, emax=3)
    >>> float(f.max), float(f.smin), len(f.values())
    (14.0, 0.0625, 55)
    >>> float(f.round(2.25)), float(f.round(2.75))
    (2.0, 3.0)
    """

    p: int
    emax: int
    variant: str = "ieee"

    def __post_init__(self) -> None:
        check_positive_int("p", self.p, owner="FloatFormat", minimum=2)
        check_positive_int("emax", self.emax, owner="FloatFormat", minimum=1)
        check_one_of("variant", self.variant, ("ieee", "fn"), owner="FloatFormat")
        if self.p > _MAX_P:
            raise ValueError(
                f"FloatFormat: p must be an integer in [2, {_MAX_P}] (float64 reference "
                f"arithmetic is correctly rounded only up to there); got {self.p!r} (int)."
            )
        if self.emax > _MAX_EMAX:
            raise ValueError(
                f"FloatFormat: emax must be an integer in [1, {_MAX_EMAX}]; "
                f"got {self.emax!r} (int)."
            )

    # ----- constants -------------------------------------------------------------------------
    @property
    def emin(self) -> int:
        """Smallest normal exponent: 1 - emax (IEEE), 2 - emax for ``fn`` (same exponent bias)."""
        return (2 if self.variant == "fn" else 1) - self.emax

    @property
    def smin(self) -> float:
        """Smallest positive (subnormal) value, 2^(emin - p + 1)."""
        return math.ldexp(1.0, self.emin - self.p + 1)

    @property
    def max(self) -> float:
        """Largest finite value: (2 - 2^(1-p)) 2^emax, or (2 - 2^(2-p)) 2^emax for ``fn``."""
        top = 2 if self.variant == "fn" else 1
        return math.ldexp(2.0**self.p - top, self.emax - self.p + 1)

    @property
    def n_values(self) -> int:
        """Number of finite values, 2((2^(p-1) - 1) + (emax - emin + 1) 2^(p-1)) + 1 (minus 2 NaN
        codes for ``fn``)."""
        half = 2 ** (self.p - 1)
        n = 2 * ((half - 1) + (self.emax - self.emin + 1) * half) + 1
        return n - 2 if self.variant == "fn" else n

    # ----- rounding ----------------------------------------------------------------------------
    def round(self, x: ArrayLike) -> np.ndarray:
        """Round float64 values to the nearest value of F (ties to even), with IEEE overflow.

        Parameters
        ----------
        x
            Real numbers as float64 (any shape); NaN stays NaN, +-inf stays +-inf
            (NaN for ``fn``). The sign of zero is kept.

        Returns
        -------
        numpy.ndarray
            float64 array of the same shape holding values of F (or +-inf / NaN).

        Examples
        --------
        >>> FloatFormat(11, 15).round([65519.99, 65520.0]).tolist()
        [65504.0, inf]
        """
        x = _float_array("x", x, "FloatFormat.round")
        _, e = np.frexp(x)  # x = m 2^e, 0.5 <= |m| < 1, so the binade exponent is e - 1
        e = np.maximum(e, self.emin + 1)  # below 2^emin the spacing stays s_min (subnormals)
        r = np.ldexp(np.rint(np.ldexp(x, self.p - e)), e - self.p)  # rint: ties to even
        over = np.abs(r) > self.max
        if np.any(over):
            r = np.where(over, np.nan if self.variant == "fn" else np.copysign(np.inf, x), r)
        return r

    def round_fraction(self, q: Fraction | int | float) -> float:
        """Exact slow reference: round the rational ``q`` to F with ties to even.

        Raises
        ------
        TypeError
            If ``q`` is not a Fraction, int or float.
        ValueError
            If ``q`` is NaN or infinite.

        Examples
        --------
        >>> FloatFormat(3, 3).round_fraction(Fraction(9, 4))
        2.0
        """
        if isinstance(q, bool) or not isinstance(
            q, Fraction | int | float | np.integer | np.floating
        ):
            raise TypeError(
                f"FloatFormat.round_fraction: q must be a Fraction, int or float; "
                f"got {q!r} ({type(q).__name__})."
            )
        if not math.isfinite(q):
            raise ValueError(f"FloatFormat.round_fraction: q must be finite; got {q!r}.")
        if isinstance(q, np.floating | np.integer):  # Fraction keeps numpy's integer types
            q = q.item()
        q = Fraction(q)
        if q == 0:
            return 0.0
        a = abs(q)
        exponent = a.numerator.bit_length() - a.denominator.bit_length()
        if Fraction(2) ** exponent > a:  # now 2^exponent <= a < 2^(exponent + 1)
            exponent -= 1
        quantum = Fraction(2) ** (max(exponent, self.emin) - self.p + 1)
        n, rest = divmod(a / quantum, 1)
        if rest > Fraction(1, 2) or (rest == Fraction(1, 2) and n % 2 == 1):
            n += 1
        r = float(n * quantum)
        if r > self.max:
            r = math.nan if self.variant == "fn" else math.inf
        return math.copysign(r, q) if not math.isnan(r) else r

    def add(self, x: ArrayLike, y: ArrayLike) -> np.ndarray:
        """Rounded sum x (+) y = round(x + y) (exact float64 sum rounded once to F)."""
        x, y = _float_array("x", x, "FloatFormat.add"), _float_array("y", y, "FloatFormat.add")
        with np.errstate(invalid="ignore", over="ignore"):  # inf - inf = NaN is the IEEE result
            return self.round(_broadcast(np.add, x, y, "FloatFormat.add"))

    def mul(self, x: ArrayLike, y: ArrayLike) -> np.ndarray:
        """Rounded product x (*) y = round(x * y) (exact float64 product rounded once to F)."""
        x, y = _float_array("x", x, "FloatFormat.mul"), _float_array("y", y, "FloatFormat.mul")
        with np.errstate(invalid="ignore", over="ignore"):  # 0 * inf = NaN is the IEEE result
            return self.round(_broadcast(np.multiply, x, y, "FloatFormat.mul"))

    def contains(self, x: ArrayLike) -> np.ndarray:
        """Boolean mask: which entries of ``x`` are finite values of F (+0 and -0 both count)."""
        x = _float_array("x", x, "FloatFormat.contains")
        with np.errstate(invalid="ignore"):
            return np.isfinite(x) & (self.round(np.where(np.isfinite(x), x, 0.0)) == x)

    # ----- enumeration and neighbours -----------------------------------------------------------
    def values(self, nonneg: bool = False) -> np.ndarray:
        """All finite values of F, sorted ascending, one zero (+0); only those >= 0 if ``nonneg``.

        Raises
        ------
        ValueError
            If the result would hold more than 2^26 values (e.g. float32): enumerate a
            sub-domain instead.

        Examples
        --------
        >>> FloatFormat(2, 1).values().tolist()
        [-3.0, -2.0, -1.5, -1.0, -0.5, 0.0, 0.5, 1.0, 1.5, 2.0, 3.0]
        """
        count = (self.n_values + 1) // 2 if nonneg else self.n_values  # one zero, ±symmetric
        if count > _MAX_ENUMERATE:
            raise ValueError(
                f"FloatFormat: values(nonneg={nonneg}) would hold {count} values (more than "
                f"2^26) for F({self.p}, {self.emax}); enumerate a sub-domain instead."
            )
        half = 2 ** (self.p - 1)
        sub = np.arange(1, half) * self.smin
        mant = np.arange(half, 2 * half, dtype=np.float64)
        normals = [np.ldexp(mant, e - self.p + 1) for e in range(self.emin, self.emax + 1)]
        pos = np.concatenate([sub, *normals])
        if self.variant == "fn":
            pos = pos[:-1]
        if nonneg:
            return np.concatenate([[0.0], pos])
        return np.concatenate([-pos[::-1], [0.0], pos])

    def grid(self, d: int, nonneg: bool = False) -> np.ndarray:
        """All points of F^d (or F_{>=0}^d) as a ``(|F|^d, d)`` array in lexicographic order.

        Examples
        --------
        >>> FloatFormat(2, 1).grid(2).shape
        (121, 2)
        """
        d = check_positive_int("d", d, owner="FloatFormat.grid")
        vals = self.values(nonneg=nonneg)
        if d * math.log2(len(vals)) > math.log2(_MAX_ENUMERATE):  # no |F|^d: d may be huge
            raise ValueError(
                f"FloatFormat.grid: d must keep |F|^d <= 2^26 (|F| = {len(vals)}); got {d!r} (int)."
            )
        return np.array(list(itertools.product(vals, repeat=d)), dtype=np.float64).reshape(-1, d)

    def _check_members(self, name: str, a: np.ndarray) -> None:
        bad = ~self.contains(a)
        if np.any(bad):
            raise ValueError(
                f"FloatFormat: {name} must hold finite values of F({self.p}, {self.emax}); "
                f"got {float(a[bad].flat[0])!r} (float)."
            )

    def _ulp_above(self, a: np.ndarray) -> np.ndarray:
        # Spacing of F just above |a| for |a| in F: 2^(max(E, emin) - p + 1) with 2^E <= |a|.
        _, e = np.frexp(np.abs(a))
        e = np.where(a == 0, self.emin + 1, e)  # frexp(0) has exponent 0, not -inf
        return np.ldexp(1.0, np.maximum(e - 1, self.emin) - self.p + 1)

    def succ(self, a: ArrayLike) -> np.ndarray:
        """Next value of F above ``a`` (``+inf`` above ``max``); ``a`` must lie in F.

        Raises
        ------
        ValueError
            If some entry of ``a`` is not a finite value of F.

        Examples
        --------
        >>> FloatFormat(3, 3).succ([0.0, 1.0, -1.0]).tolist()
        [0.0625, 1.25, -0.875]
        """
        a = _float_array("a", a, "FloatFormat.succ")
        self._check_members("a", a)
        up = a + self._ulp_above(a)
        down = -self._below(-a)
        out = np.where(a >= 0, up, down)
        return np.where(out > self.max, np.inf, out)

    def pred(self, a: ArrayLike) -> np.ndarray:
        """Previous value of F below ``a`` (``-inf`` below ``-max``); ``a`` must lie in F.

        Raises
        ------
        ValueError
            If some entry of ``a`` is not a finite value of F.

        Examples
        --------
        >>> FloatFormat(3, 3).pred([0.0, 1.0]).tolist()
        [-0.0625, 0.875]
        """
        a = _float_array("a", a, "FloatFormat.pred")
        self._check_members("a", a)
        out = np.where(a > 0, self._below(a), -(np.abs(a) + self._ulp_above(a)))
        return np.where(out < -self.max, -np.inf, out)

    def _below(self, a: np.ndarray) -> np.ndarray:
        # Previous value for a > 0: at a power of two above 2^emin the spacing halves.
        m, e = np.frexp(a)
        step = self._ulp_above(a)
        halves = (np.abs(m) == 0.5) & (e - 1 > self.emin)
        return a - np.where(halves, step / 2, step)


def _float_array(name: str, value: ArrayLike, owner: str) -> np.ndarray:
    """``value`` as float64 (NaN and inf allowed: the arithmetic defines them)."""
    return check_array(name, value, owner=owner, dtype=np.float64, finite=False)


def _broadcast(op: np.ufunc, x: np.ndarray, y: np.ndarray, owner: str) -> np.ndarray:
    try:
        return op(x, y, dtype=np.float64)
    except ValueError:
        raise ValueError(
            f"{owner}: x and y must broadcast together; got shapes {x.shape} and {y.shape}."
        ) from None


def check_format(fmt: object, *, owner: str) -> FloatFormat:
    """Return ``fmt`` if it is a :class:`FloatFormat`, else raise ``TypeError`` naming ``fmt``.

    Examples
    --------
    >>> check_format(FORMATS["e4m3"], owner="demo").p
    4
    """
    if not isinstance(fmt, FloatFormat):
        raise TypeError(f"{owner}: fmt must be a FloatFormat; got {fmt!r} ({type(fmt).__name__}).")
    return fmt


_TOYS = ((2, 2), (2, 3), (3, 3), (3, 4), (4, 3), (4, 4))

FORMATS: dict[str, FloatFormat] = {
    "float16": FloatFormat(11, 15),
    "bfloat16": FloatFormat(8, 127),
    "float32": FloatFormat(24, 127),
    "e5m2": FloatFormat(3, 15),
    "e4m3": FloatFormat(4, 7),
    "e4m3fn": FloatFormat(4, 8, variant="fn"),
    **{f"toy_p{p}_e{emax}": FloatFormat(p, emax) for p, emax in _TOYS},
}
"""Preset formats: IEEE float16/bfloat16/float32, float8 e5m2 and e4m3 (IEEE-style, with inf),
the OCP e4m3fn variant (max 448, NaN on overflow) and toy formats ``toy_p{p}_e{emax}``."""
