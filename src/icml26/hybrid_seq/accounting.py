"""Parameter and working-memory accounting, and the information-theoretic state lower bounds.

Cooper, Diakonikolas, Ma & Sala, *Expressivity-Efficiency Tradeoffs for Hybrid Sequence Models*
(ICML 2026, arXiv:2603.08859), spec §2.2 (accounting) and §2.3 (lower bounds).

Working memory is what a model holds per sequence at inference after T tokens: an SSM layer
holds E·D·N state numbers plus E·D·(d_conv - 1) conv inputs, independent of T; an attention
layer holds its K and V cache, 2·T·d_model numbers; an MLP holds nothing. The *selective* KV
cache counts only the positions whose key can be attended to at all (the constructions mask
every other position out), 2·T_rel·d.

Deviations: the paper's theorems (constants, precision model, whether a hybrid's selective KV
cache counts as working memory) were not available. :func:`min_state_bits` returns the
pigeonhole bound on the state of any recurrent model that solves the task exactly (it must
tell apart every answer string after reading the context) — an information-theoretic fact, not
the paper's theorem.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, final

import numpy as np

from icml26.core import check_array, check_in_interval, check_positive_int

if TYPE_CHECKING:
    from torch import nn

    from icml26.hybrid_seq.models import AbstractSequenceModel
    from icml26.hybrid_seq.tasks import AbstractTask

__all__ = [
    "SizeToReach",
    "WorkingMemory",
    "count_params",
    "min_state_bits",
    "params_to_reach",
    "working_memory",
]


@final
@dataclass(frozen=True)
class WorkingMemory:
    """Numbers a model holds per sequence at inference after ``seq_len`` tokens.

    Attributes
    ----------
    seq_len
        T, the tokens read so far.
    ssm_state
        Recurrent state numbers (SSM state, counters, slots), summed over layers.
    conv_cache
        Conv / shift-register inputs kept for the next step.
    kv_cache
        Cached keys and values of every attention layer (2·T·d per layer).
    selective_kv
        Cached keys and values of the attendable positions only (2·T_rel·d).
    bits_per_number
        Precision used by :attr:`bits` and :attr:`selective_bits`.
    """

    seq_len: int
    ssm_state: int
    conv_cache: int
    kv_cache: int
    selective_kv: int
    bits_per_number: int = 32

    @property
    def recurrent(self) -> int:
        """State that does not grow with T: ssm_state + conv_cache."""
        return self.ssm_state + self.conv_cache

    @property
    def total(self) -> int:
        """All numbers held: recurrent + the full KV cache."""
        return self.recurrent + self.kv_cache

    @property
    def selective_total(self) -> int:
        """Recurrent + the selective KV cache."""
        return self.recurrent + self.selective_kv

    @property
    def bits(self) -> int:
        """``total`` at ``bits_per_number`` bits each."""
        return self.total * self.bits_per_number

    @property
    def selective_bits(self) -> int:
        """``selective_total`` at ``bits_per_number`` bits each."""
        return self.selective_total * self.bits_per_number

    def __add__(self, other: WorkingMemory) -> WorkingMemory:
        return WorkingMemory(
            seq_len=self.seq_len,
            ssm_state=self.ssm_state + other.ssm_state,
            conv_cache=self.conv_cache + other.conv_cache,
            kv_cache=self.kv_cache + other.kv_cache,
            selective_kv=self.selective_kv + other.selective_kv,
            bits_per_number=self.bits_per_number,
        )


def count_params(model: nn.Module) -> int:
    """Number of parameters, Σ p.numel() over ``model.parameters()`` (fixed weights included).

    Examples
    --------
    >>> from torch import nn
    >>> count_params(nn.Linear(3, 2))
    8
    """
    from torch import nn

    if not isinstance(model, nn.Module):
        raise TypeError(f"count_params: model must be a torch nn.Module; got {type(model)}.")
    return sum(p.numel() for p in model.parameters())


def working_memory(
    model: AbstractSequenceModel,
    seq_len: int,
    bits: int = 32,
    *,
    n_attendable: int | None = None,
) -> WorkingMemory:
    """Per-sequence inference memory of ``model`` after ``seq_len`` tokens (spec §2.2).

    Parameters
    ----------
    model
        A :class:`~icml26.hybrid_seq.models.HybridLM` or a constructed model.
    seq_len
        T >= 1.
    bits
        Bits per number for :attr:`WorkingMemory.bits`.
    n_attendable
        Positions whose key is not masked out (for the selective KV cache); default
        ``seq_len``, which a learned model always needs. The constructions attend only to data
        (SC: k) or value (MQAR: n_kv) tokens.

    Examples
    --------
    >>> from icml26.hybrid_seq import HybridLM
    >>> m = HybridLM(10, 16, pattern="A", n_heads=2)
    >>> working_memory(m, seq_len=100).kv_cache  # 2 · T · d_model
    3200
    """
    from icml26.hybrid_seq.models import AbstractSequenceModel

    if not isinstance(model, AbstractSequenceModel):
        raise TypeError(
            "working_memory: model must be a HybridLM or a constructed model; "
            f"got {type(model).__name__}."
        )
    seq_len = check_positive_int("seq_len", seq_len, owner="working_memory")
    bits = check_positive_int("bits", bits, owner="working_memory")
    if n_attendable is None:
        n_attendable = seq_len
    n_attendable = check_positive_int(
        "n_attendable", n_attendable, owner="working_memory", minimum=0
    )
    if n_attendable > seq_len:
        raise ValueError(
            f"working_memory: n_attendable must be in [0, seq_len={seq_len}]; got {n_attendable}."
        )
    total = WorkingMemory(seq_len, 0, 0, 0, 0, bits)
    for ssm_state, conv_cache, kv_per_token in model.memory_layout():
        kv = kv_per_token * seq_len
        total = total + WorkingMemory(
            seq_len, ssm_state, conv_cache, kv, kv_per_token * n_attendable, bits
        )
    return total


def _log2_falling_factorial(v: int, n: int) -> float:
    """log2(v! / (v - n)!) = Σ_{i < n} log2(v - i)."""
    return sum(math.log2(v - i) for i in range(n))


def min_state_bits(task: AbstractTask) -> float:
    """Pigeonhole lower bound on the recurrent state (bits) of any exact solver of ``task``.

    After the context, the state must distinguish every possible answer string:
    SC(L, k, V): V^k strings, so >= k·log2 V bits (k = k_max with ``k_range``);
    plain copying COPY(L, V): V^L strings, >= L·log2 V bits;
    MQAR: n_kv·log2 V_val bits if values are i.i.d., else log2(V_val! / (V_val - n_kv)!).

    Examples
    --------
    >>> from icml26.hybrid_seq import SelectiveCopying
    >>> min_state_bits(SelectiveCopying(L=64, k=8, n_symbols=16))
    32.0
    """
    from icml26.hybrid_seq.tasks import MQAR, PlainCopying, SelectiveCopying

    if isinstance(task, SelectiveCopying):
        return task.k * math.log2(task.n_symbols)
    if isinstance(task, PlainCopying):
        return task.L * math.log2(task.n_symbols)
    if isinstance(task, MQAR):
        if task.values_iid:
            return task.n_kv * math.log2(task.n_values)
        return _log2_falling_factorial(task.n_values, task.n_kv)
    raise TypeError(
        "min_state_bits: task must be a SelectiveCopying, PlainCopying or MQAR; got "
        f"{type(task).__name__}."
    )


@final
@dataclass(frozen=True)
class SizeToReach:
    """Where a family's accuracy-vs-parameters envelope first reaches a level τ.

    Attributes
    ----------
    params
        The parameter count: interpolated where ``bound`` is ``"exact"``, else a grid size.
    bound
        ``"exact"`` (interpolated between two grid sizes), ``"at most"`` (the smallest size
        already reaches τ, so the true size is <= ``params``) or ``"more than"`` (no size of the
        grid reaches τ; ``params`` is the largest size, a lower bound).
    """

    params: float
    bound: str

    @property
    def reached(self) -> bool:
        """Whether some size of the grid reaches τ."""
        return self.bound != "more than"


def params_to_reach(params: Sequence[float], accuracy: Sequence[float], tau: float) -> SizeToReach:
    """Size at which the running-max envelope of accuracy vs parameters first reaches ``tau``.

    The models of one family (e.g. every width of ``AA``) are sorted by parameter count and
    their accuracies replaced by the running maximum (a larger model can always be trained no
    worse than a smaller one, so a dip is noise). The crossing is interpolated linearly in log
    parameters between the last size below ``tau`` and the first at or above it (issue 46's
    P_f(τ); R(τ) = min over non-hybrid families of P_f(τ) / P_hybrid(τ)).

    Parameters
    ----------
    params
        Parameter counts (> 0), one per model, in any order.
    accuracy
        The models' accuracies in [0, 1], in the same order.
    tau
        The level, in (0, 1].

    Examples
    --------
    >>> size = params_to_reach([100, 400], [0.5, 1.0], 0.75)  # half-way in log parameters
    >>> round(size.params), size.bound
    (200, 'exact')
    >>> params_to_reach([100, 400], [0.2, 0.3], 0.9).bound
    'more than'
    """
    owner = "params_to_reach"
    p = check_array("params", params, owner=owner, ndim=1)
    a = check_array("accuracy", accuracy, owner=owner, ndim=1)
    tau = check_in_interval("tau", tau, low=0.0, high=1.0, closed="right", owner=owner)
    if p.size == 0 or p.size != a.size:
        raise ValueError(
            f"{owner}: params and accuracy must be non-empty and of one length; got "
            f"{p.size} and {a.size}."
        )
    if p.size > 1_000_000:
        raise ValueError(f"{owner}: params must hold at most 1,000,000 models; got {p.size}.")
    if not (p > 0).all():
        raise ValueError(f"{owner}: params must be > 0; got {p.min():g}.")
    if not ((a >= 0) & (a <= 1)).all():
        raise ValueError(f"{owner}: accuracy must lie in [0, 1]; got {a.min():g} to {a.max():g}.")
    order = np.argsort(p, kind="stable")
    p, envelope = p[order], np.maximum.accumulate(a[order])
    above = np.flatnonzero(envelope >= tau)
    if above.size == 0:
        return SizeToReach(float(p[-1]), "more than")
    i = int(above[0])
    if i == 0:
        return SizeToReach(float(p[0]), "at most")
    lo, hi = math.log(p[i - 1]), math.log(p[i])
    t = (tau - envelope[i - 1]) / (envelope[i] - envelope[i - 1])
    return SizeToReach(float(math.exp(lo + t * (hi - lo))), "exact")
