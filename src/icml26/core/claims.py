"""Claims of a paper as checkable statements about a measured metric, and their verdicts.

A :class:`Claim` names one metric the experiment returns, a comparison and a threshold. The
:class:`Verdict` is computed from the aggregate of that metric over seeds: a claim is
*reproduced* when the whole 95% confidence interval satisfies the comparison, *not reproduced*
when none of it does, *inconclusive* when the interval straddles the threshold, and *not
measured* when no finished task returned a finite value of the metric.

Each claim says where its reference figure comes from (``source``: the ``paper``, the ``spec``'s
own small-scale target, or ``none``) and what kind of check it is (``kind``): a ``claim`` can fail
on the paper's mechanism; a ``sanity`` check holds by construction (an identity, a deterministic
property) and is reported apart, never counted as a reproduction.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

from icml26.core.stats import Aggregate, aggregate
from icml26.core.validation import check_one_of

__all__ = ["COMPARISONS", "KINDS", "SOURCES", "Claim", "Status", "Verdict"]

COMPARISONS = (">=", ">", "<=", "<", "within")
SOURCES = ("paper", "spec", "none")
KINDS = ("claim", "sanity")


class Status(StrEnum):
    """Outcome of checking a claim against measurements."""

    REPRODUCED = "reproduced"
    NOT_REPRODUCED = "not reproduced"
    INCONCLUSIVE = "inconclusive"
    NOT_MEASURED = "not measured"


@dataclass(frozen=True)
class Claim:
    """One claim of a paper, checked against a measured metric.

    Parameters
    ----------
    id
        Short identifier, unique within the experiment (e.g. ``"R1"``).
    statement
        The claim in words, as the report shows it.
    metric
        Key of the scalar metric the experiment's run function returns.
    comparison
        ``">="``, ``">"``, ``"<="``, ``"<"``, or ``"within"``
        (``|metric - threshold| <= tolerance``).
    threshold
        The value the metric is compared with (the target for ``"within"``).
    paper
        The paper's own figure, as display text (e.g. ``"3.8e-9 MSE"``).
    where
        Where the figure is in the paper (e.g. ``"Table 2"``).
    tolerance
        Half-width of the accepted band; only for ``"within"``.
    source
        Where ``paper`` (the reference figure) comes from: ``"paper"`` (``where`` names the table
        or figure), ``"spec"`` (the spec's own target for a small-scale run) or ``"none"``.
    kind
        ``"claim"`` (can fail on the paper's mechanism) or ``"sanity"`` (holds by construction;
        reported apart, never counted as a reproduction).

    Example
    -------
    >>> c = Claim("R1", "Round trip is exact", "roundtrip_err", "<=", 1e-10, "~1e-9", "Table 2")
    >>> c.judge([1e-13, 2e-13]).status.value
    'reproduced'
    """

    id: str
    statement: str
    metric: str
    comparison: str
    threshold: float
    paper: str
    where: str
    tolerance: float | None = None
    source: str = "paper"
    kind: str = "claim"

    def __post_init__(self) -> None:
        check_one_of("comparison", self.comparison, COMPARISONS, owner=f"Claim {self.id!r}")
        check_one_of("source", self.source, SOURCES, owner=f"Claim {self.id!r}")
        check_one_of("kind", self.kind, KINDS, owner=f"Claim {self.id!r}")
        if (self.comparison == "within") != (self.tolerance is not None):
            raise ValueError(
                f"Claim {self.id!r}: tolerance is required for 'within' and only for it; "
                f"got comparison={self.comparison!r}, tolerance={self.tolerance!r}."
            )
        if self.tolerance is not None and not self.tolerance >= 0:
            raise ValueError(f"Claim {self.id!r}: tolerance must be >= 0; got {self.tolerance!r}.")

    @property
    def criterion(self) -> str:
        """The comparison in words, e.g. ``"<= 1e-10"``."""
        if self.comparison == "within":
            return f"within {self.threshold:.4g} ± {self.tolerance:.4g}"
        return f"{self.comparison} {self.threshold:.4g}"

    def _holds(self, value: float) -> bool:
        t = self.threshold
        match self.comparison:
            case ">=":
                return value >= t
            case ">":
                return value > t
            case "<=":
                return value <= t
            case "<":
                return value < t
            case _:
                return abs(value - t) <= (self.tolerance or 0.0)

    def judge(self, values: Sequence[float]) -> Verdict:
        """Judge the claim on the per-seed values of its metric."""
        if len(values) == 0:
            return Verdict(self, Status.NOT_MEASURED, None, "no finished task measured the metric")
        agg = aggregate(values)
        if math.isnan(agg.mean):
            return Verdict(self, Status.NOT_MEASURED, agg, "the metric is NaN (not computed here)")
        low_ok, high_ok = self._holds(agg.ci_low), self._holds(agg.ci_high)
        span = (
            f"{agg.mean:.4g}"
            if agg.ci_low == agg.ci_high
            else f"{agg.mean:.4g} (95% CI {agg.ci_low:.4g} to {agg.ci_high:.4g}, n={agg.n})"
        )
        if self.comparison == "within":
            # The band is convex: the interval lies in it iff both ends do, and misses it entirely
            # iff it ends below the band or starts above it.
            tol = self.tolerance or 0.0
            misses = agg.ci_high < self.threshold - tol or agg.ci_low > self.threshold + tol
            inside = low_ok and high_ok
        else:
            inside, misses = low_ok and high_ok, not (low_ok or high_ok)
        if inside:
            return Verdict(self, Status.REPRODUCED, agg, f"{span} satisfies {self.criterion}")
        if misses:
            return Verdict(self, Status.NOT_REPRODUCED, agg, f"{span} fails {self.criterion}")
        return Verdict(self, Status.INCONCLUSIVE, agg, f"{span} straddles {self.criterion}")


@dataclass(frozen=True)
class Verdict:
    """The outcome of a claim: status, the aggregate it was judged on, and why."""

    claim: Claim
    status: Status
    measured: Aggregate | None
    reason: str

    @property
    def ours(self) -> str:
        """Our figure as display text: ``mean ± half-width`` (or just the mean for one seed)."""
        if self.measured is None:
            return "n/a"
        m = self.measured
        if m.n > 1 and math.isfinite(m.half_width):
            return f"{m.mean:.3g} ± {m.half_width:.2g}"
        return f"{m.mean:.3g}"
