"""Claims of a paper as checkable statements about a measured metric, and their verdicts.

A :class:`Claim` names one metric the experiment returns, a comparison and a threshold. Its
verdict comes from the 95 % confidence interval of that metric: *reproduced* when the whole
interval satisfies the comparison, *not reproduced* when none of it does, *inconclusive* when it
straddles the threshold, *not measured* when no finished task returned a finite value.

Three kinds of check, with consequences:

- ``claim`` can fail on the paper's mechanism; only claims count as reproductions.
- ``sanity`` holds by construction (an identity, an analytic quantity); it reads "holds" or
  "broken", never "reproduced", and is counted apart.
- ``gate`` is a precondition of the testbed (the base model is competent, an oracle beats
  random, the premise holds); it reads "holds" or "fails". A claim behind a gate that fails is
  "testbed invalid", neither reproduced nor not reproduced.

Honesty rules built in:

- A metric that varies with the seed gets a firm verdict only from >= 3 independent values
  (seeds, or replicates a task reports as a list); with fewer it is "inconclusive".
  Metrics that do not vary with the seed are declared deterministic by the experiment.
- ``over="items"``: the metric is a list of paired per-item differences per task (tables,
  episodes, prompts); its interval is a hierarchical bootstrap (seeds, then items).
- Each system has one ``headline`` claim: the paper's central figure at the paper's own bar.
- A claim names its ``control`` (the baseline or do-nothing variant) and the metric's value
  there (``control_value``); the claim must fail on it, which the contract test checks.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from icml26.core.stats import Aggregate, aggregate, bootstrap_mean
from icml26.core.validation import check_one_of

__all__ = [
    "COMPARISONS",
    "KINDS",
    "MIN_VALUES",
    "SOURCES",
    "Claim",
    "Status",
    "Verdict",
    "judge_claims",
]

COMPARISONS = (">=", ">", "<=", "<", "within")
SOURCES = ("paper", "spec", "none")
KINDS = ("claim", "sanity", "gate")
MIN_VALUES = 3  # independent values a seed-dependent metric needs for a firm verdict

MetricValue = float | Sequence[float]


class Status(StrEnum):
    """Outcome of checking a claim, a sanity check or a gate against measurements."""

    REPRODUCED = "reproduced"
    NOT_REPRODUCED = "not reproduced"
    INCONCLUSIVE = "inconclusive"
    NOT_MEASURED = "not measured"
    TESTBED_INVALID = "testbed invalid"
    HOLDS = "holds"
    BROKEN = "broken"  # a sanity check that does not hold: a bug
    FAILS = "fails"  # a gate that does not hold: the testbed cannot show the effect


# the firm outcomes of each kind: (it holds, it does not)
_FIRM = {
    "claim": (Status.REPRODUCED, Status.NOT_REPRODUCED),
    "sanity": (Status.HOLDS, Status.BROKEN),
    "gate": (Status.HOLDS, Status.FAILS),
}


@dataclass(frozen=True)
class Claim:
    """One claim of a paper (or a sanity check, or a gate), checked against a measured metric.

    Parameters
    ----------
    id
        Short identifier, unique within the experiment (e.g. ``"R1"``).
    statement
        The claim in words, as the report shows it.
    metric
        Key of the metric the experiment's run function returns: a float, or a list of floats
        (independent replicates for ``over="seeds"``, paired per-item values for ``"items"``).
    comparison
        ``">="``, ``">"``, ``"<="``, ``"<"``, or ``"within"``
        (``|metric - threshold| <= tolerance``).
    threshold
        The value the metric is compared with (the target for ``"within"``).
    paper
        The reference figure, as display text (e.g. ``"3.8e-9 MSE"``).
    where
        Where the figure is (e.g. ``"Table 2"``, ``"abstract"``, ``"spec §5"``).
    tolerance
        Half-width of the accepted band; only for ``"within"``.
    source
        Where ``paper`` comes from: ``"paper"`` (``where`` names the table or figure), ``"spec"``
        (the spec's own target for a small-scale run) or ``"none"``.
    kind
        ``"claim"``, ``"sanity"`` or ``"gate"`` (see the module docstring).
    headline
        The system's headline: the paper's central figure at the paper's own bar (one per
        system, ``source="paper"``, ``kind="claim"``).
    gates
        Ids of the gates (in the same experiment) this claim depends on; ``None``: every gate
        of the experiment.
    over
        ``"seeds"`` (t-interval over independent values) or ``"items"`` (hierarchical bootstrap
        over seeds and the paired per-item values each task returns).
    control
        The variant the claim is judged against (the baseline, or a do-nothing method), in words.
    control_value
        The metric's value when the method is replaced by its control (e.g. ``0.0`` for a paired
        difference, ``1.0`` for a speed-up); the claim must not be reproduced there.

    Examples
    --------
    >>> c = Claim("R1", "Round trip is exact", "roundtrip_err", "<=", 1e-10, "~1e-9", "Table 2")
    >>> c.judge([1e-13, 2e-13, 1.5e-13]).status.value
    'reproduced'
    >>> c.judge([1e-13]).status.value  # one seed of a seed-dependent metric
    'inconclusive'
    >>> c.judge([1e-13], deterministic=True).status.value
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
    headline: bool = False
    gates: tuple[str, ...] | None = None
    over: str = "seeds"
    control: str = ""
    control_value: float | None = None

    def __post_init__(self) -> None:
        owner = f"Claim {self.id!r}"
        check_one_of("comparison", self.comparison, COMPARISONS, owner=owner)
        check_one_of("source", self.source, SOURCES, owner=owner)
        check_one_of("kind", self.kind, KINDS, owner=owner)
        check_one_of("over", self.over, ("seeds", "items"), owner=owner)
        if (self.comparison == "within") != (self.tolerance is not None):
            raise ValueError(
                f"{owner}: tolerance is required for 'within' and only for it; "
                f"got comparison={self.comparison!r}, tolerance={self.tolerance!r}."
            )
        if self.tolerance is not None and not self.tolerance >= 0:
            raise ValueError(f"{owner}: tolerance must be >= 0; got {self.tolerance!r}.")
        if self.headline and (self.kind != "claim" or self.source != "paper"):
            raise ValueError(
                f"{owner}: a headline is a claim with the paper's own figure "
                f"(kind='claim', source='paper'); got kind={self.kind!r}, source={self.source!r}."
            )
        if self.gates is not None:
            object.__setattr__(self, "gates", tuple(self.gates))
            if self.kind != "claim":
                raise ValueError(f"{owner}: only claims depend on gates; got kind={self.kind!r}.")
        if self.control_value is not None and not math.isfinite(self.control_value):
            raise ValueError(f"{owner}: control_value must be finite; got {self.control_value}.")

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

    def _aggregate(self, values: Sequence[MetricValue]) -> tuple[Aggregate | None, int]:
        """The interval the verdict is judged on, and the number of independent values."""
        groups = [[float(v)] if _is_number(v) else [float(x) for x in v] for v in values]
        groups = [g for g in groups if g]
        flat = [x for g in groups for x in g]
        if not flat:
            return None, 0
        if any(math.isnan(x) for x in flat):
            return Aggregate(math.nan, math.nan, math.nan, math.nan, len(flat)), len(flat)
        if self.over == "items":
            return bootstrap_mean(groups, seed=_stable_seed(self.id)), len(flat)
        return aggregate(flat), len(flat)

    def judge(self, values: Sequence[MetricValue], *, deterministic: bool = False) -> Verdict:
        """Judge on the metric's value from each finished task (a float or a list of floats).

        ``deterministic``: the metric does not vary with the seed (declared by the experiment),
        so one value is exact; otherwise fewer than :data:`MIN_VALUES` give no firm verdict.
        """
        agg, n = self._aggregate(values)
        if agg is None:
            return Verdict(self, Status.NOT_MEASURED, None, "no finished task measured the metric")
        if math.isnan(agg.mean):
            return Verdict(self, Status.NOT_MEASURED, agg, "the metric is NaN (not computed here)")
        holds, fails = _FIRM[self.kind]
        low_ok, high_ok = self._holds(agg.ci_low), self._holds(agg.ci_high)
        interval = "bootstrap" if self.over == "items" else "CI"
        span = (
            f"{agg.mean:.4g}"
            if agg.ci_low == agg.ci_high
            else f"{agg.mean:.4g} (95% {interval} {agg.ci_low:.4g} to {agg.ci_high:.4g}, n={n})"
        )
        if self.comparison == "within":
            # The band is convex: the interval lies in it iff both ends do, and misses it entirely
            # iff it ends below the band or starts above it.
            tol = self.tolerance or 0.0
            misses = agg.ci_high < self.threshold - tol or agg.ci_low > self.threshold + tol
            inside = low_ok and high_ok
        else:
            inside, misses = low_ok and high_ok, not (low_ok or high_ok)
        if (inside or misses) and not deterministic and n < MIN_VALUES:
            return Verdict(
                self,
                Status.INCONCLUSIVE,
                agg,
                f"{span}: {n} value(s) of a seed-dependent metric; a verdict needs "
                f">= {MIN_VALUES} (run more seeds)",
            )
        if inside:
            return Verdict(self, holds, agg, f"{span} satisfies {self.criterion}")
        if misses:
            return Verdict(self, fails, agg, f"{span} fails {self.criterion}")
        return Verdict(self, Status.INCONCLUSIVE, agg, f"{span} straddles {self.criterion}")


def _is_number(value: Any) -> bool:
    return isinstance(value, numbers.Real)


def _stable_seed(text: str) -> int:
    import hashlib

    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:4], "big")


def judge_claims(
    claims: Sequence[Claim],
    metrics_per_task: Sequence[Mapping[str, Any]],
    *,
    deterministic: Mapping[str, bool] | None = None,
) -> list[Verdict]:
    """Judge every claim of one experiment on its tasks' metrics, gates first.

    A claim behind a gate that fails is "testbed invalid"; behind a gate that is inconclusive or
    not measured, a firm verdict becomes "inconclusive". ``deterministic`` maps a metric to
    whether it is declared seed-independent.

    Examples
    --------
    >>> gate = Claim("G1", "base policy succeeds", "base_success", ">=", 0.3, "-", "-", kind="gate")
    >>> gain = Claim("C1", "method beats base", "gain", ">", 0.0, "+5 pt", "Table 1")
    >>> runs = [{"base_success": 0.1, "gain": 0.05}] * 3
    >>> [v.status.value for v in judge_claims([gate, gain], runs)]
    ['fails', 'testbed invalid']
    """
    deterministic = deterministic or {}
    values = {
        c.id: [m[c.metric] for m in metrics_per_task if c.metric in m and m[c.metric] is not None]
        for c in claims
    }
    verdicts = {
        c.id: c.judge(values[c.id], deterministic=deterministic.get(c.metric, False))
        for c in claims
    }
    gates = [c.id for c in claims if c.kind == "gate"]
    out = []
    for claim in claims:
        verdict = verdicts[claim.id]
        if claim.kind == "claim":
            behind = gates if claim.gates is None else list(claim.gates)
            unknown = [g for g in behind if g not in gates]
            if unknown:
                raise ValueError(f"Claim {claim.id!r}: gates {unknown} are not gates here.")
            failed = [g for g in behind if verdicts[g].status is Status.FAILS]
            open_ = [g for g in behind if verdicts[g].status is not Status.HOLDS]
            if failed:
                verdict = Verdict(
                    claim,
                    Status.TESTBED_INVALID,
                    verdict.measured,
                    f"gate {', '.join(failed)} fails, so the testbed cannot show the effect "
                    f"(measured: {verdict.reason})",
                )
            elif open_ and verdict.status in (Status.REPRODUCED, Status.NOT_REPRODUCED):
                verdict = Verdict(
                    claim,
                    Status.INCONCLUSIVE,
                    verdict.measured,
                    f"gate {', '.join(open_)} not established (measured: {verdict.reason})",
                )
        out.append(verdict)
    return out


@dataclass(frozen=True)
class Verdict:
    """The outcome of a claim: status, the aggregate it was judged on, and why."""

    claim: Claim
    status: Status
    measured: Aggregate | None
    reason: str

    @property
    def ours(self) -> str:
        """Our figure as display text: ``mean ± half-width`` (or just the mean for one value)."""
        if self.measured is None:
            return "n/a"
        m = self.measured
        if m.n > 1 and math.isfinite(m.half_width) and m.half_width > 0:
            return f"{m.mean:.3g} ± {m.half_width:.2g}"
        return f"{m.mean:.3g}"
