"""Independence oracles and the size-sensitive cost model.

A matroid ``M = (E, I)`` on the ground set ``E = range(n)`` is accessed only through an
independence oracle ``is_independent(Q)``. The paper charges one call ``cost(Q) = max(1, |Q|)``
instead of ``1`` (the ``max`` keeps the empty query from being free); :class:`CostCounter` wraps any
oracle and adds up that cost, the number of calls and the largest query.
"""

from __future__ import annotations

import abc
import numbers
from collections.abc import Callable, Sequence
from typing import Protocol, runtime_checkable

import numpy as np

from icml26.core import check_positive_int

__all__ = [
    "MAX_GROUND_SET",
    "AbstractMatroid",
    "BudgetExceededError",
    "CostCounter",
    "IndependenceOracle",
    "check_oracle",
    "default_cost",
]

# The largest ground set the built-in families accept: a query's scratch array of this many int64
# is 800 MB, far beyond the 10^5-element instances of the experiments.
MAX_GROUND_SET = 10**8


@runtime_checkable
class IndependenceOracle(Protocol):
    """A matroid on the ground set ``range(n)``, seen only through independence queries.

    Any object with an integer attribute ``n`` and a method ``is_independent(Q) -> bool`` is an
    oracle; ``Q`` is a sequence of distinct element ids in ``range(n)``.
    """

    n: int

    def is_independent(self, Q: Sequence[int]) -> bool:
        """Whether the set ``Q`` is independent."""
        ...


def check_oracle(oracle: object, *, owner: str, name: str = "oracle") -> IndependenceOracle:
    """Return ``oracle`` if it satisfies :class:`IndependenceOracle`, else raise ``TypeError``.

    ``name`` is the caller's parameter that holds the oracle, for the message.

    Examples
    --------
    >>> from icml26.matroid import UniformMatroid
    >>> check_oracle(UniformMatroid(4, 2), owner="demo").n
    4
    """
    n = getattr(oracle, "n", None)
    if not isinstance(oracle, IndependenceOracle) or not callable(oracle.is_independent):
        raise TypeError(
            f"{owner}: {name} must be an independence oracle (an int attribute n and a method "
            f"is_independent(Q)); "
            f"got {oracle!r} ({type(oracle).__name__})."
        )
    if isinstance(n, bool) or not isinstance(n, numbers.Integral) or n < 0:
        raise TypeError(
            f"{owner}: {name}.n, the oracle's ground-set size, must be an integer >= 0; "
            f"got {n!r} ({type(n).__name__})."
        )
    return oracle


def default_cost(size: int) -> int:
    """The paper's cost of one query of ``size`` elements: ``max(1, size)``.

    Examples
    --------
    >>> default_cost(0), default_cost(7)
    (1, 7)
    """
    return max(1, size)


class BudgetExceededError(RuntimeError):
    """Raised by :class:`CostCounter` when a query would push the total cost over its budget."""


class CostCounter:
    """Wrap an oracle and charge every query ``cost_fn(|Q|)``.

    Parameters
    ----------
    base
        The oracle whose queries are charged.
    cost_fn
        Cost of one query as a function of its size; default ``max(1, |Q|)``.
    budget
        Optional cap on ``total_cost``; a query that would exceed it raises
        :class:`BudgetExceededError` and is not forwarded.
    cache
        Remember answers by query set. A cache hit is still charged when ``charge_cache_hits``
        (the default), so the measured cost stays the model's cost.
    charge_cache_hits
        Whether answered-from-cache queries are charged.

    Attributes
    ----------
    total_cost, calls, max_query, cache_hits
        Sum of costs, number of queries, largest ``|Q|`` and number of cache hits since the last
        :meth:`reset`.

    Raises
    ------
    TypeError
        If ``base`` is not an oracle or ``cost_fn`` is not callable.
    ValueError
        If ``budget`` is negative or NaN.

    Examples
    --------
    >>> from icml26.matroid import UniformMatroid
    >>> counter = CostCounter(UniformMatroid(5, 2))
    >>> counter.is_independent([0, 1]), counter.is_independent([])
    (True, True)
    >>> counter.total_cost, counter.calls, counter.max_query
    (3, 2, 2)
    """

    def __init__(
        self,
        base: IndependenceOracle,
        cost_fn: Callable[[int], float] = default_cost,
        *,
        budget: float | None = None,
        cache: bool = False,
        charge_cache_hits: bool = True,
    ) -> None:
        self.base = check_oracle(base, owner="CostCounter", name="base")
        if not callable(cost_fn):
            raise TypeError(
                f"CostCounter: cost_fn must be callable; "
                f"got {cost_fn!r} ({type(cost_fn).__name__})."
            )
        if budget is not None and not (isinstance(budget, numbers.Real) and budget >= 0):
            raise ValueError(
                f"CostCounter: budget must be a number >= 0 or None; got {budget!r} "
                f"({type(budget).__name__})."
            )
        self.n = self.base.n
        self.cost_fn = cost_fn
        self.budget = budget
        self.cache = cache
        self.charge_cache_hits = charge_cache_hits
        self._answers: dict[bytes, bool] = {}
        self.reset()

    def reset(self) -> None:
        """Zero the counters and forget cached answers."""
        self.total_cost: float = 0
        self.calls = 0
        self.max_query = 0
        self.cache_hits = 0
        self._answers.clear()

    def _charge(self, size: int) -> None:
        cost = self.cost_fn(size)
        if self.budget is not None and self.total_cost + cost > self.budget:
            raise BudgetExceededError(
                f"CostCounter: a query of size {size} costs {cost}, which would raise the total "
                f"cost {self.total_cost} above the budget {self.budget}."
            )
        self.total_cost += cost
        self.calls += 1
        self.max_query = max(self.max_query, size)

    def is_independent(self, Q: Sequence[int]) -> bool:
        """Charge the query, then answer it (from the cache when enabled and seen before)."""
        size = len(Q)
        if not self.cache:
            self._charge(size)
            return bool(self.base.is_independent(Q))
        key = np.sort(np.fromiter(Q, dtype=np.int64, count=size)).tobytes()
        hit = key in self._answers
        if hit:
            self.cache_hits += 1
        if not hit or self.charge_cache_hits:
            self._charge(size)
        if not hit:
            self._answers[key] = bool(self.base.is_independent(Q))
        return self._answers[key]


class AbstractMatroid(abc.ABC):
    """Base of the built-in families: validates a query, then calls ``_independent``.

    A query must be a 1-D sequence of distinct integers in ``range(n)``; anything else raises
    ``ValueError``/``TypeError``. Validation is ``O(|Q|)`` (a scratch array of size ``n`` detects
    repeated ids without sorting), so the oracles keep the ``Θ(|Q|)`` work the cost model assumes.
    Instances are not thread-safe (the scratch array is shared).
    """

    n: int

    def _init_ground_set(self, n: int, *, name: str = "n") -> None:
        # ``name`` is the constructor's parameter that sets the size, for the message.
        owner = type(self).__name__
        self.n = check_positive_int(name, n, owner=owner, minimum=0, maximum=MAX_GROUND_SET)
        self._slot = np.zeros(n, dtype=np.int64)

    @abc.abstractmethod
    def _independent(self, Q: np.ndarray) -> bool:
        """Independence of a validated query (int64 array of distinct ids)."""

    def is_independent(self, Q: Sequence[int]) -> bool:
        """Whether the set ``Q`` (distinct ids in ``range(n)``) is independent.

        Raises
        ------
        TypeError
            If ``Q`` holds non-integers.
        ValueError
            If ``Q`` is not 1-D, holds an id outside ``range(n)`` or repeats an id.
        """
        owner = type(self).__name__
        q = np.fromiter(Q, dtype=np.int64) if isinstance(Q, set | frozenset) else np.asarray(Q)
        if q.size == 0:
            return self._independent(np.zeros(0, dtype=np.int64))
        if q.ndim != 1:
            raise ValueError(f"{owner}: Q must be a 1-D sequence of ids; got shape {q.shape}.")
        if not np.issubdtype(q.dtype, np.integer):
            raise TypeError(f"{owner}: Q must hold integer ids; got dtype {q.dtype}.")
        q = q.astype(np.int64, copy=False)
        low, high = int(q.min()), int(q.max())
        if low < 0 or high >= self.n:
            bad = low if low < 0 else high
            raise ValueError(f"{owner}: Q must hold element ids in range(0, {self.n}); got {bad}.")
        # Write each position at its id; a repeated id keeps only its last position.
        positions = np.arange(q.size)
        self._slot[q] = positions
        if not np.array_equal(self._slot[q], positions):
            raise ValueError(f"{owner}: Q must not repeat an element id; got {q.size} ids.")
        return bool(self._independent(q))
