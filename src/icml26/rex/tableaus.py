"""Explicit Butcher tableaus (c, A, b) and embedded pairs (b_hat) for the Princeps increment."""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from icml26.core import check_one_of

__all__ = ["LEGACY_EXP_RK4", "TABLEAUS", "ButcherTableau", "get_tableau"]


@dataclass(frozen=True)
class ButcherTableau:
    """An explicit Runge-Kutta tableau.

    Attributes
    ----------
    c, a, b
        Nodes, strictly lower-triangular coefficients (row i holds a_i1..a_i,i-1) and weights.
    order
        Order of the propagated solution (``b``).
    b_hat
        Weights of the embedded lower-order solution, for adaptive steps; ``None`` if there is none.
    """

    name: str
    c: tuple[float, ...]
    a: tuple[tuple[float, ...], ...]
    b: tuple[float, ...]
    order: int
    b_hat: tuple[float, ...] | None = None

    @property
    def stages(self) -> int:
        """Number of stages s (network evaluations per increment)."""
        return len(self.b)

    @property
    def embedded(self) -> bool:
        """Whether the tableau carries an error estimate."""
        return self.b_hat is not None


def _tab(name, c, a, b, order, b_hat=None) -> ButcherTableau:
    def fl(xs):
        return tuple(float(Fraction(x)) for x in xs)

    return ButcherTableau(
        name, fl(c), tuple(fl(row) for row in a), fl(b), order, fl(b_hat) if b_hat else None
    )


TABLEAUS: dict[str, ButcherTableau] = {
    t.name: t
    for t in (
        _tab("euler", [0], [[]], [1], 1),
        _tab("midpoint", [0, "1/2"], [[], ["1/2"]], [0, 1], 2),
        _tab("heun", [0, 1], [[], [1]], ["1/2", "1/2"], 2),
        _tab("ralston", [0, "2/3"], [[], ["2/3"]], ["1/4", "3/4"], 2),
        _tab(
            "ssprk3",
            [0, 1, "1/2"],
            [[], [1], ["1/4", "1/4"]],
            ["1/6", "1/6", "2/3"],
            3,
        ),
        _tab(
            "rk4",
            [0, "1/2", "1/2", 1],
            [[], ["1/2"], [0, "1/2"], [0, 0, 1]],
            ["1/6", "1/3", "1/3", "1/6"],
            4,
        ),
        _tab(
            "rk38",
            [0, "1/3", "2/3", 1],
            [[], ["1/3"], ["-1/3", 1], [1, -1, 1]],
            ["1/8", "3/8", "3/8", "1/8"],
            4,
        ),
        _tab(
            "bogacki_shampine",
            [0, "1/2", "3/4", 1],
            [[], ["1/2"], [0, "3/4"], ["2/9", "1/3", "4/9"]],
            ["2/9", "1/3", "4/9", 0],
            3,
            b_hat=["7/24", "1/4", "1/3", "1/8"],
        ),
        _tab(
            "dopri5",
            [0, "1/5", "3/10", "4/5", "8/9", 1, 1],
            [
                [],
                ["1/5"],
                ["3/40", "9/40"],
                ["44/45", "-56/15", "32/9"],
                ["19372/6561", "-25360/2187", "64448/6561", "-212/729"],
                ["9017/3168", "-355/33", "46732/5247", "49/176", "-5103/18656"],
                ["35/384", 0, "500/1113", "125/192", "-2187/6784", "11/84"],
            ],
            ["35/384", 0, "500/1113", "125/192", "-2187/6784", "11/84", 0],
            5,
            b_hat=["5179/57600", 0, "7571/16695", "393/640", "-92097/339200", "187/2100", "1/40"],
        ),
    )
}


# The reference code's legacy ``exp_rk4`` (``samplers/rex.py``, used by ``rex_forward`` /
# ``rex_backward``, whose docstring says they "match the published results"), written as the
# tableau it evaluates: its third stage re-uses the second stage's state (Z3 = Y + h/2 k1, so
# k3 = k2) and its fourth stage takes Z4 = Y + h/2 k2 at c = 1. b . c = 5/12 != 1/2, so it is a
# first-order method (measured order ~0.9 against DOP853), not the fourth-order RK4 its name and
# the paper's "Rex-RK4" rows suggest. Kept for comparison; not in ``TABLEAUS``.
LEGACY_EXP_RK4 = _tab(
    "legacy_exp_rk4",
    [0, "1/2", "1/2", 1],
    [[], ["1/2"], ["1/2", 0], [0, "1/2", 0]],
    ["1/6", "1/3", "1/3", "1/6"],
    1,
)


def get_tableau(tableau: str | ButcherTableau) -> ButcherTableau:
    """The tableau called ``tableau`` (one of ``TABLEAUS``); a tableau is returned as is.

    Examples
    --------
    >>> get_tableau("rk4").stages
    4
    """
    if isinstance(tableau, ButcherTableau):
        return tableau
    return TABLEAUS[check_one_of("tableau", tableau, tuple(TABLEAUS), owner="get_tableau")]
