"""Synthetic content-selected retrieval tasks: selective copying (SC) and multi-query AR (MQAR).

Cooper, Diakonikolas, Ma & Sala, *Expressivity-Efficiency Tradeoffs for Hybrid Sequence Models*
(ICML 2026, arXiv:2603.08859), spec §2.1. The paper's exact task definitions were not available;
these generators are modelled on Mamba's selective-copying task and Zoology's MQAR.

Token ids shared by all tasks: ``PAD = 0`` (never an input), ``NOISE = 1``, ``SEP = 2``,
``MARK = 3``, then the task's own symbols. Every sample is ``(inputs[T], targets[T], mask[T])``
with targets *aligned* to inputs: the prediction for position t is read at position t, and loss
and accuracy count only where ``mask`` is true.

Deviations: ``noise_tokens > 1`` draws noise from extra noise ids placed after the data symbols;
``n_noise_ids`` / ``n_filler_ids`` reserve vocabulary that the training distribution never
shows (for the OOD tests); with ``k_range`` a sample with k < k_max is padded after its answer
slots with NOISE (mask false), so every batch has one length; ``zoology_compat`` draws Zoology's
random non-query tokens from ids 1..V-1 (Zoology also draws 0, which is PAD here).
The optional family members (spec §2.1, inferred): ``PlainCopying`` lays the string out like
SC's answer region (SEP then L MARK slots, no shift), and ``InductionHead`` keeps the trigger
unique in the context (fillers never equal it, b != a) so that the answer is a function of
the input.
"""

from __future__ import annotations

import abc
import numbers
from dataclasses import dataclass, replace
from typing import final

import torch

from icml26.core import Seed, check_in_interval, check_positive_int, torch_generator

__all__ = [
    "MARK",
    "MQAR",
    "NOISE",
    "PAD",
    "SEP",
    "AbstractTask",
    "Batch",
    "InductionHead",
    "PlainCopying",
    "SelectiveCopying",
    "noise_shift_tasks",
]

PAD, NOISE, SEP, MARK = 0, 1, 2, 3
N_SPECIAL = 4


@final
@dataclass(frozen=True)
class Batch:
    """One batch of a task: token ids, aligned targets and the positions that are scored.

    Attributes
    ----------
    inputs
        ``(batch, T)`` int64 token ids (never PAD).
    targets
        ``(batch, T)`` int64 target ids, aligned with ``inputs``; PAD where ``mask`` is false.
    mask
        ``(batch, T)`` bool, true at the positions whose prediction is scored.
    """

    inputs: torch.Tensor
    targets: torch.Tensor
    mask: torch.Tensor


class AbstractTask(abc.ABC):
    """A task family member: a vocabulary and a sampler of aligned (inputs, targets, mask)."""

    @property
    @abc.abstractmethod
    def vocab_size(self) -> int:
        """Number of token ids the task uses (ids are ``0 .. vocab_size - 1``)."""

    @property
    @abc.abstractmethod
    def seq_len(self) -> int:
        """Length T of every sample."""

    @abc.abstractmethod
    def sample(self, batch_size: int, generator: Seed = None) -> Batch:
        """Draw ``batch_size`` independent samples."""


MAX_SAMPLE_NUMBERS = 2**28  # token ids one sample() call may draw (batch_size · T)


def _check_batch_size(task: AbstractTask, batch_size: object, owner: str) -> int:
    """``batch_size`` in [1, MAX_SAMPLE_NUMBERS // T]: a huge batch is refused before allocating."""
    largest = max(1, MAX_SAMPLE_NUMBERS // task.seq_len)
    return check_positive_int("batch_size", batch_size, owner=owner, maximum=largest)


def _task_generator(generator: Seed, owner: str) -> torch.Generator:
    """``generator`` (a torch/numpy generator, an int seed or None) as a ``torch.Generator``."""
    is_int = isinstance(generator, numbers.Integral) and not isinstance(generator, bool)
    if is_int and not -(2**63) <= int(generator) < 2**64:
        raise ValueError(
            f"{owner}: generator must be an int seed in [-2**63, 2**64); got {generator}."
        )
    try:
        return torch_generator(generator)
    except TypeError as err:
        raise TypeError(f"{owner}: generator {str(err).removeprefix('seed ')}") from None


def _distinct_sorted(batch: int, population: int, k: int, gen: torch.Generator) -> torch.Tensor:
    """(batch, k) distinct values of ``range(population)`` per row, uniform, sorted ascending."""
    keys = torch.rand(batch, population, generator=gen)
    return keys.argsort(dim=1)[:, :k].sort(dim=1).values


def _distinct(batch: int, population: int, k: int, gen: torch.Generator) -> torch.Tensor:
    """(batch, k) distinct values of ``range(population)`` per row, in uniform random order."""
    return torch.rand(batch, population, generator=gen).argsort(dim=1)[:, :k]


@final
@dataclass(frozen=True)
class SelectiveCopying(AbstractTask):
    """Selective copying SC(L, k, V): copy the k data symbols scattered in noise, in order.

    Context of length L: k distinct positions uniform in ``[0, L)``, sorted, hold i.i.d. uniform
    data symbols (ids ``4 .. 4 + V - 1``), NOISE elsewhere; then one SEP and k MARK tokens,
    T = L + 1 + k. The target at the j-th MARK is the j-th data symbol in context order.

    Parameters
    ----------
    L
        Context length.
    k
        Number of data symbols to copy (with ``k_range``: the largest k, which fixes T).
    n_symbols
        Size V of the data alphabet.
    noise_tokens
        Number m of distinct noise ids the noise is drawn from (the OOD knob; 1 = NOISE only).
    teacher_forcing
        Replace MARK j > 1 by the (j - 1)-th answer.
    k_range
        ``(k_min, k_max)`` with ``k_max == k``: each sample's k is uniform in that range.
    n_noise_ids
        Noise ids reserved in the vocabulary (default ``noise_tokens``); a model trained with
        ``noise_tokens=1, n_noise_ids=4`` can be tested on ``noise_tokens=4``.

    Examples
    --------
    >>> sc = SelectiveCopying(L=16, k=3, n_symbols=8)
    >>> b = sc.sample(2, generator=0)
    >>> tuple(b.inputs.shape), int(b.mask.sum())
    ((2, 20), 6)
    """

    L: int
    k: int
    n_symbols: int
    noise_tokens: int = 1
    teacher_forcing: bool = False
    k_range: tuple[int, int] | None = None
    n_noise_ids: int | None = None

    def __post_init__(self) -> None:
        owner = "SelectiveCopying"
        check_positive_int("L", self.L, owner=owner)
        check_positive_int("k", self.k, owner=owner)
        check_positive_int("n_symbols", self.n_symbols, owner=owner)
        check_positive_int("noise_tokens", self.noise_tokens, owner=owner)
        if self.k > self.L:
            raise ValueError(f"{owner}: k must be in [1, L={self.L}]; got {self.k}.")
        if self.n_noise_ids is not None:
            check_positive_int("n_noise_ids", self.n_noise_ids, owner=owner)
            if self.n_noise_ids < self.noise_tokens:
                raise ValueError(
                    f"{owner}: n_noise_ids must be >= noise_tokens={self.noise_tokens}; "
                    f"got {self.n_noise_ids}."
                )
        if self.k_range is not None:
            if not isinstance(self.k_range, tuple | list) or len(self.k_range) != 2:
                raise ValueError(
                    f"{owner}: k_range must be a pair (k_min, k_max); got {self.k_range!r}."
                )
            lo, hi = self.k_range
            check_positive_int("k_range[0]", lo, owner=owner)
            if not lo <= hi == self.k:
                raise ValueError(
                    f"{owner}: k_range must be (k_min, k_max) with 1 <= k_min <= k_max == k="
                    f"{self.k}; got {self.k_range!r}."
                )

    @property
    def n_noise(self) -> int:
        """Noise ids in the vocabulary (NOISE plus ``n_noise - 1`` extra ids after the data)."""
        return self.noise_tokens if self.n_noise_ids is None else self.n_noise_ids

    @property
    def vocab_size(self) -> int:
        """4 special ids + V data symbols + the extra noise ids."""
        return N_SPECIAL + self.n_symbols + self.n_noise - 1

    @property
    def seq_len(self) -> int:
        """T = L + 1 + k."""
        return self.L + 1 + self.k

    @property
    def symbol_ids(self) -> range:
        """Token ids of the data symbols."""
        return range(N_SPECIAL, N_SPECIAL + self.n_symbols)

    def noise_ids(self) -> torch.Tensor:
        """The ``noise_tokens`` ids noise is drawn from: NOISE, then extra ids after the data."""
        extra = torch.arange(self.noise_tokens - 1) + N_SPECIAL + self.n_symbols
        return torch.cat([torch.tensor([NOISE]), extra])

    def sample(self, batch_size: int, generator: Seed = None) -> Batch:
        """Draw ``batch_size`` samples; ``generator`` is a torch/numpy generator, int or None."""
        batch_size = _check_batch_size(self, batch_size, "SelectiveCopying.sample")
        gen = _task_generator(generator, "SelectiveCopying.sample")
        B, L, k = batch_size, self.L, self.k
        # per-sample number of data tokens (all k unless k_range)
        if self.k_range is None:
            k_b = torch.full((B,), k)
        else:
            lo, hi = self.k_range
            k_b = torch.randint(lo, hi + 1, (B,), generator=gen)
        positions = _distinct_sorted(B, L, k, gen)  # (B, k)
        symbols = torch.randint(self.n_symbols, (B, k), generator=gen) + N_SPECIAL  # (B, k)
        noise = self.noise_ids()
        context = noise[torch.randint(len(noise), (B, L), generator=gen)]  # (B, L)
        # a sample with k_b < k keeps its first k_b sorted positions
        slot = torch.arange(k).expand(B, k)
        used = slot < k_b[:, None]  # (B, k)
        rows = torch.arange(B)[:, None].expand(B, k)
        context[rows[used], positions[used]] = symbols[used]

        answers = torch.where(used, torch.full_like(symbols, MARK), torch.full_like(symbols, NOISE))
        if self.teacher_forcing:
            shifted = torch.cat([torch.full((B, 1), MARK), symbols[:, :-1]], dim=1)
            answers = torch.where(used, shifted, answers)
        inputs = torch.cat([context, torch.full((B, 1), SEP), answers], dim=1)  # (B, T)
        targets = torch.zeros_like(inputs)
        targets[:, L + 1 :] = torch.where(used, symbols, torch.zeros_like(symbols))
        mask = torch.zeros_like(inputs, dtype=torch.bool)
        mask[:, L + 1 :] = used
        return Batch(inputs=inputs, targets=targets, mask=mask)


@final
@dataclass(frozen=True)
class MQAR(AbstractTask):
    """Multi-query associative recall MQAR(L, n_kv) with Zoology's power-law query gaps.

    Layout ``k1 v1 ... kn vn`` (keys and values drawn without replacement from disjoint
    vocabularies) followed by a query region of length L - 2 n_kv. Key i re-appears once at
    offset 2 (g_i - 1) of the region, the g_i drawn without replacement from {1..S},
    S = (L - 2 n_kv) / 2, with P(g) ∝ g^(a - 1), a = ``power_a``. The target at a query is that
    key's value; every other position of the region holds a filler (mask false).

    Parameters
    ----------
    L
        Sequence length T (even, >= 4 n_kv).
    n_kv
        Key-value pairs, each queried once.
    n_keys, n_values
        Sizes of the key and value vocabularies (>= n_kv unless ``values_iid``).
    n_fillers
        Filler ids the non-query positions are drawn from.
    power_a
        Gap exponent a in (0, inf): 0.01 (Zoology) favours short gaps, 1 is uniform.
    zoology_compat
        Zoology's layout: vocab V = n_keys + n_values + 1 with keys 1..V/2-1 and values V/2..V-1
        (so ``n_values == n_keys + 1``), non-queries uniform over the vocabulary; needs V > L.
    values_iid
        Draw values i.i.d. (with replacement) instead of without replacement.
    n_filler_ids, filler_offset
        Filler ids reserved (default ``n_fillers``) and the first one used: fillers are drawn
        from ``[filler_offset, filler_offset + n_fillers)`` of the reserved block, so a test
        task with another offset shows fillers never seen in training.

    Examples
    --------
    >>> mq = MQAR(L=32, n_kv=4, n_keys=16, n_values=16, n_fillers=8)
    >>> b = mq.sample(3, generator=0)
    >>> int(b.mask.sum(dim=1)[0])
    4
    """

    L: int
    n_kv: int
    n_keys: int
    n_values: int
    n_fillers: int
    power_a: float = 0.01
    zoology_compat: bool = False
    values_iid: bool = False
    n_filler_ids: int | None = None
    filler_offset: int = 0

    def __post_init__(self) -> None:
        owner = "MQAR"
        for name in ("L", "n_kv", "n_keys", "n_values", "n_fillers"):
            check_positive_int(name, getattr(self, name), owner=owner)
        check_in_interval("power_a", self.power_a, low=0.0, closed="neither", owner=owner)
        check_positive_int("filler_offset", self.filler_offset, owner=owner, minimum=0)
        if 4 * self.n_kv > self.L:
            raise ValueError(
                f"{owner}: n_kv must be in [1, L/4={self.L // 4}] (4·n_kv <= L); got {self.n_kv}."
            )
        if (self.L - 2 * self.n_kv) % 2:
            raise ValueError(
                f"{owner}: the query region L - 2·n_kv must be even; got L={self.L} "
                f"(L must be even)."
            )
        if self.n_kv > self.n_keys:
            raise ValueError(f"{owner}: n_keys must be >= n_kv={self.n_kv}; got {self.n_keys}.")
        if not self.values_iid and self.n_kv > self.n_values:
            raise ValueError(
                f"{owner}: n_values must be >= n_kv={self.n_kv} (values are drawn without "
                f"replacement); got {self.n_values}."
            )
        if self.n_filler_ids is not None:
            check_positive_int("n_filler_ids", self.n_filler_ids, owner=owner)
        if self.filler_offset + self.n_fillers > self.n_filler_block:
            raise ValueError(
                f"{owner}: filler_offset + n_fillers must be <= n_filler_ids="
                f"{self.n_filler_block}; got {self.filler_offset} + {self.n_fillers}."
            )
        if self.zoology_compat:
            if self.n_values != self.n_keys + 1:
                raise ValueError(
                    f"{owner}: zoology_compat splits the vocabulary in halves, so n_values must "
                    f"be n_keys + 1 = {self.n_keys + 1}; got {self.n_values}."
                )
            if self.vocab_size <= self.L:
                raise ValueError(
                    f"{owner}: zoology_compat needs vocab V = n_keys + n_values + 1 > L = "
                    f"{self.L}; got V = {self.vocab_size}."
                )

    @property
    def n_filler_block(self) -> int:
        """Filler ids reserved in the vocabulary."""
        return self.n_fillers if self.n_filler_ids is None else self.n_filler_ids

    @property
    def first_key(self) -> int:
        """Id of the first key (keys are contiguous)."""
        return 1 if self.zoology_compat else N_SPECIAL

    @property
    def first_value(self) -> int:
        """Id of the first value (values are contiguous, after the keys)."""
        return self.first_key + self.n_keys

    @property
    def first_filler(self) -> int:
        """Id of the first reserved filler (after the values; unused in ``zoology_compat``)."""
        return self.first_value + self.n_values

    @property
    def vocab_size(self) -> int:
        """Specials + keys + values + reserved fillers (Zoology's V in ``zoology_compat``)."""
        if self.zoology_compat:
            return self.n_keys + self.n_values + 1
        return N_SPECIAL + self.n_keys + self.n_values + self.n_filler_block

    @property
    def seq_len(self) -> int:
        """T = L."""
        return self.L

    @property
    def n_slots(self) -> int:
        """S = (L - 2 n_kv) / 2, the number of possible query gaps."""
        return (self.L - 2 * self.n_kv) // 2

    def gap_probabilities(self) -> torch.Tensor:
        """P(g) ∝ g^(a - 1) for g = 1..S (float64)."""
        g = torch.arange(1, self.n_slots + 1, dtype=torch.float64)
        p = g ** (self.power_a - 1.0)
        return p / p.sum()

    def sample(self, batch_size: int, generator: Seed = None) -> Batch:
        """Draw ``batch_size`` samples; ``generator`` is a torch/numpy generator, int or None."""
        batch_size = _check_batch_size(self, batch_size, "MQAR.sample")
        gen = _task_generator(generator, "MQAR.sample")
        B, n, S = batch_size, self.n_kv, self.n_slots
        keys = _distinct(B, self.n_keys, n, gen) + self.first_key  # (B, n)
        if self.values_iid:
            values = torch.randint(self.n_values, (B, n), generator=gen)
        else:
            values = _distinct(B, self.n_values, n, gen)
        values = values + self.first_value  # (B, n)
        # gaps g - 1 in 0..S-1 without replacement, P ∝ g^(a-1) (successive sampling, as numpy)
        probs = self.gap_probabilities().float().expand(B, S)
        gaps = torch.multinomial(probs, n, replacement=False, generator=gen)  # (B, n)
        region_len = self.L - 2 * n
        if self.zoology_compat:  # uniform over the whole vocabulary except PAD
            region = torch.randint(1, self.vocab_size, (B, region_len), generator=gen)
        else:
            low = self.first_filler + self.filler_offset
            region = torch.randint(low, low + self.n_fillers, (B, region_len), generator=gen)
        region.scatter_(1, 2 * gaps, keys)
        kv = torch.stack([keys, values], dim=2).reshape(B, 2 * n)  # k1 v1 k2 v2 ...
        inputs = torch.cat([kv, region], dim=1)  # (B, L)
        targets = torch.zeros_like(inputs)
        targets.scatter_(1, 2 * n + 2 * gaps, values)
        mask = torch.zeros_like(inputs, dtype=torch.bool)
        mask.scatter_(1, 2 * n + 2 * gaps, True)
        return Batch(inputs=inputs, targets=targets, mask=mask)


@final
@dataclass(frozen=True)
class PlainCopying(AbstractTask):
    """Plain copying COPY(L, V) (Jelassi et al. 2024): repeat a random string after a separator.

    The string x_1..x_L holds i.i.d. uniform symbols (ids ``4 .. 4 + V - 1``); then one SEP and
    L MARK tokens, T = 2L + 1. The target at the j-th MARK is x_j. This is selective copying
    with k = L (no noise), so an exact recurrent solver needs >= L·log2 V bits of state.

    Parameters
    ----------
    L
        String length.
    n_symbols
        Size V of the alphabet.
    teacher_forcing
        Replace MARK j > 1 by x_{j-1} (the usual autoregressive copy: predict x_j from x_{j-1}).

    Examples
    --------
    >>> task = PlainCopying(L=5, n_symbols=3)
    >>> b = task.sample(2, generator=0)
    >>> tuple(b.inputs.shape), torch.equal(b.targets[:, 6:], b.inputs[:, :5])
    ((2, 11), True)
    """

    L: int
    n_symbols: int
    teacher_forcing: bool = False

    def __post_init__(self) -> None:
        check_positive_int("L", self.L, owner="PlainCopying")
        check_positive_int("n_symbols", self.n_symbols, owner="PlainCopying")
        if not isinstance(self.teacher_forcing, bool):
            raise TypeError(
                f"PlainCopying: teacher_forcing must be a bool; got "
                f"{type(self.teacher_forcing).__name__}."
            )

    @property
    def vocab_size(self) -> int:
        """4 special ids + V symbols."""
        return N_SPECIAL + self.n_symbols

    @property
    def seq_len(self) -> int:
        """T = 2L + 1."""
        return 2 * self.L + 1

    @property
    def symbol_ids(self) -> range:
        """Token ids of the symbols."""
        return range(N_SPECIAL, N_SPECIAL + self.n_symbols)

    def sample(self, batch_size: int, generator: Seed = None) -> Batch:
        """Draw ``batch_size`` samples; ``generator`` is a torch/numpy generator, int or None."""
        batch_size = _check_batch_size(self, batch_size, "PlainCopying.sample")
        gen = _task_generator(generator, "PlainCopying.sample")
        B, L = batch_size, self.L
        string = torch.randint(self.n_symbols, (B, L), generator=gen) + N_SPECIAL  # (B, L)
        if self.teacher_forcing:  # MARK, x_1 .. x_{L-1}
            answers = torch.cat([torch.full((B, 1), MARK), string[:, :-1]], dim=1)
        else:
            answers = torch.full((B, L), MARK)
        inputs = torch.cat([string, torch.full((B, 1), SEP), answers], dim=1)  # (B, 2L + 1)
        targets = torch.zeros_like(inputs)
        targets[:, L + 1 :] = string
        mask = torch.zeros_like(inputs, dtype=torch.bool)
        mask[:, L + 1 :] = True
        return Batch(inputs=inputs, targets=targets, mask=mask)


@final
@dataclass(frozen=True)
class InductionHead(AbstractTask):
    """Single induction head IH(L, V): ``… a b … a`` → b.

    A context of L symbols (ids ``4 .. 4 + V - 1``) holds the trigger a (uniform over the V
    symbols) exactly once, at a position p uniform in ``[0, L - 2]``, followed by b (uniform
    over the V - 1 symbols other than a); every other context position is i.i.d. uniform over
    the symbols other than a. Position L repeats a (the query), T = L + 1; the target there
    is b, the token after the query's unique earlier occurrence. One attention layer needs a
    size growing with T for this task, two suffice (Sanford, Hsu & Telgarsky 2024).

    Parameters
    ----------
    L
        Context length (>= 2: the pair a b must fit).
    n_symbols
        Size V of the alphabet (>= 2, since b != a).

    Examples
    --------
    >>> task = InductionHead(L=8, n_symbols=4)
    >>> b = task.sample(3, generator=0)
    >>> tuple(b.inputs.shape), b.mask[:, -1].tolist()
    ((3, 9), [True, True, True])
    """

    L: int
    n_symbols: int

    def __post_init__(self) -> None:
        check_positive_int("L", self.L, owner="InductionHead", minimum=2)
        check_positive_int("n_symbols", self.n_symbols, owner="InductionHead", minimum=2)

    @property
    def vocab_size(self) -> int:
        """4 special ids + V symbols."""
        return N_SPECIAL + self.n_symbols

    @property
    def seq_len(self) -> int:
        """T = L + 1."""
        return self.L + 1

    @property
    def symbol_ids(self) -> range:
        """Token ids of the symbols."""
        return range(N_SPECIAL, N_SPECIAL + self.n_symbols)

    def sample(self, batch_size: int, generator: Seed = None) -> Batch:
        """Draw ``batch_size`` samples; ``generator`` is a torch/numpy generator, int or None."""
        batch_size = _check_batch_size(self, batch_size, "InductionHead.sample")
        gen = _task_generator(generator, "InductionHead.sample")
        B, L, V = batch_size, self.L, self.n_symbols
        a = torch.randint(V, (B,), generator=gen)  # trigger
        b = torch.randint(V - 1, (B,), generator=gen)
        b = b + (b >= a).long()  # uniform over the symbols != a
        context = torch.randint(V - 1, (B, L), generator=gen)
        context = context + (context >= a[:, None]).long()  # fillers != a
        p = torch.randint(L - 1, (B,), generator=gen)  # a at p, b at p + 1
        rows = torch.arange(B)
        context[rows, p] = a
        context[rows, p + 1] = b
        inputs = torch.cat([context, a[:, None]], dim=1) + N_SPECIAL  # (B, L + 1)
        targets = torch.zeros_like(inputs)
        targets[:, L] = b + N_SPECIAL
        mask = torch.zeros_like(inputs, dtype=torch.bool)
        mask[:, L] = True
        return Batch(inputs=inputs, targets=targets, mask=mask)


def noise_shift_tasks(
    L: int, k: int, n_symbols: int, *, train_noise: int = 1, test_noise: int = 4
) -> tuple[SelectiveCopying, SelectiveCopying]:
    """The SC noise-id OOD pair of spec §2.5: train with ``train_noise`` ids, test with more.

    Both tasks reserve ``test_noise`` noise ids, so they share one vocabulary; the training
    task draws its noise from the first ``train_noise`` of them (NOISE only by default), the
    test task from all ``test_noise`` (spec: 4 noise ids instead of 1). Data positions,
    symbols and answer slots have the same distribution in both.

    Parameters
    ----------
    L, k, n_symbols
        As in :class:`SelectiveCopying`.
    train_noise, test_noise
        Noise ids the training / test noise is drawn from, ``1 <= train_noise <= test_noise``.

    Returns
    -------
    tuple of SelectiveCopying
        ``(train_task, test_task)``.

    Examples
    --------
    >>> train_task, test_task = noise_shift_tasks(L=32, k=4, n_symbols=8)
    >>> train_task.vocab_size == test_task.vocab_size, test_task.noise_tokens
    (True, 4)
    """
    owner = "noise_shift_tasks"
    train_noise = check_positive_int("train_noise", train_noise, owner=owner)
    test_noise = check_positive_int("test_noise", test_noise, owner=owner)
    if train_noise > test_noise:
        raise ValueError(
            f"{owner}: train_noise must be in [1, test_noise={test_noise}]; got {train_noise}."
        )
    train_task = SelectiveCopying(L, k, n_symbols, noise_tokens=train_noise, n_noise_ids=test_noise)
    return train_task, replace(train_task, noise_tokens=test_noise)
