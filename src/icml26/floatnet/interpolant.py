"""The classical depth-2 ReLU interpolant, exact in real arithmetic and rounded into F.

Park, Park & Hwang, *On Minimum Depth and Width of Floating-Point Neural Networks for Representing
Floating-Point Functions* (ICML 2026), motivation: in exact arithmetic a depth-2 ReLU network
memorises any finite data set (x_1 < ... < x_n, y_j),

    y(t) = y_1 + sum_{j<n} s_j ReLU(t - x_j),  s_1 = m_1,  s_j = m_j - m_{j-1},
    m_j = (y_{j+1} - y_j) / (x_{j+1} - x_j),

but the same network with its parameters rounded to F and every operation rounded (a
:class:`~icml26.floatnet.FloatReLUNet`) gets points wrong: exact-arithmetic results do not carry
over to floating point. The exact side is computed on ``fractions.Fraction``.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import numpy as np
from numpy.typing import ArrayLike

from icml26.floatnet.formats import FloatFormat, check_format
from icml26.floatnet.network import FloatReLUNet

__all__ = ["ReLUInterpolant", "relu_interpolant"]

MAX_POINTS = 100_000


@dataclass(frozen=True, eq=False)
class ReLUInterpolant:
    """y(t) = bias + sum_j slopes[j] · ReLU(t - knots[j]) with rational parameters.

    Attributes
    ----------
    knots
        The knots x_1, ..., x_{n-1} (float64).
    bias
        y_1, exact.
    slopes
        The output weights s_j, exact.
    """

    knots: np.ndarray
    bias: Fraction
    slopes: tuple[Fraction, ...]

    def __call__(self, t: float) -> Fraction:
        """The interpolant at ``t`` in exact arithmetic."""
        return self.bias + sum(
            sj * max(Fraction(t) - Fraction(k), 0)
            for sj, k in zip(self.slopes, self.knots, strict=True)
        )

    def float_net(self, fmt: FloatFormat) -> FloatReLUNet:
        """The same depth-2 network with every parameter rounded to ``fmt`` (hidden weights 1,
        hidden biases -x_j, output weights s_j, output bias y_1); its evaluation rounds every
        product and sum."""
        fmt = check_format(fmt, owner="ReLUInterpolant.float_net")
        hidden = (np.ones((len(self.knots), 1)), fmt.round(-self.knots))
        out_w = fmt.round(np.array([float(v) for v in self.slopes]))[None, :]
        out_b = fmt.round(np.array([float(self.bias)]))
        return FloatReLUNet(fmt, [hidden, (out_w, out_b)])


def relu_interpolant(x: ArrayLike, y: ArrayLike) -> ReLUInterpolant:
    """The depth-2 ReLU network through the points (x_j, y_j), in exact arithmetic.

    Parameters
    ----------
    x
        Strictly increasing finite inputs (at least 2, at most 100000).
    y
        Finite targets, one per input.

    Returns
    -------
    ReLUInterpolant
        ``interp(x_j) == y_j`` exactly for every j; ``interp.float_net(fmt)`` is its rounded twin.

    Examples
    --------
    >>> interp = relu_interpolant([0.0, 1.0, 3.0], [1.0, 0.0, 1.0])
    >>> [float(interp(t)) for t in (0.0, 1.0, 3.0)], interp.slopes
    ([1.0, 0.0, 1.0], (Fraction(-1, 1), Fraction(3, 2)))
    >>> interp.float_net(FloatFormat(3, 3))(np.array([[0.0], [1.0], [3.0]])).tolist()
    [1.0, 0.0, 1.0]
    """
    owner = "relu_interpolant"
    xs_arr = _points("x", x, owner)
    ys_arr = _points("y", y, owner)
    if len(xs_arr) != len(ys_arr) or not 2 <= len(xs_arr) <= MAX_POINTS:
        raise ValueError(
            f"{owner}: x and y must have the same length, between 2 and {MAX_POINTS}; got "
            f"{len(xs_arr)} and {len(ys_arr)}."
        )
    if not np.all(np.diff(xs_arr) > 0):
        raise ValueError(f"{owner}: x must be strictly increasing.")
    xs, ys = [Fraction(v) for v in xs_arr], [Fraction(v) for v in ys_arr]
    slopes = [(ys[j + 1] - ys[j]) / (xs[j + 1] - xs[j]) for j in range(len(xs) - 1)]
    s = [slopes[0]] + [slopes[j] - slopes[j - 1] for j in range(1, len(slopes))]
    return ReLUInterpolant(xs_arr[:-1], ys[0], tuple(s))


def _points(name: str, value: ArrayLike, owner: str) -> np.ndarray:
    try:
        array = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError(f"{owner}: {name} must be a 1-D array of numbers.") from None
    if array.ndim != 1:
        raise ValueError(f"{owner}: {name} must be 1-D; got shape {array.shape}.")
    if not np.all(np.isfinite(array)):
        raise ValueError(f"{owner}: {name} must be finite; got NaN or inf entries.")
    return array
