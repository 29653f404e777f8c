"""Hybrids with set weights that solve SC and MQAR exactly, and a pure-SSM slot writer for SC.

Cooper, Diakonikolas, Ma & Sala, *Expressivity-Efficiency Tradeoffs for Hybrid Sequence Models*
(ICML 2026, arXiv:2603.08859), spec §2.4. These are **our own** explicit designs that achieve
what the abstract claims (hybrids small in parameters and in working memory); the paper's
constructions were not available.

* SC, count-then-retrieve (:func:`build_sc_hybrid`): one selective recurrence with a ≡ 1 keeps
  two counters, c_t = #data tokens so far (the rank r of a data token) and q_t = #MARKs so far
  (the answer slot j); one attention head scores φ_q(t)·φ_k(s) with φ_q = (2j, -1, -j², -M),
  φ_k = (r, r², 1, 1 - isdata), i.e. -(r_s - j)² - M(1 - isdata_s), and copies the one-hot
  symbol of the best position. With M = 1 and β = ln(T_max) + 2 the right position keeps
  weight >= 1 / (1 + e^-2) ≈ 0.88 for every T <= T_max.
* MQAR, shift-then-match (:func:`build_ar_hybrid`): a causal conv with taps [1 at t-1, 0 at t]
  writes prev_t = e_key(x_{t-1}) (then a memoryless recurrence, a ≡ 0); one head scores
  β(1[x_{s-1} = x_t] - M·1[x_s not a value]), M = 2, and copies the value.
* Pure-SSM SC, slot writer (:func:`build_sc_slot_ssm`): the same counters, an exact ReLU
  one-hot of them, then a Mamba-shaped recurrence with Ā ≡ 1 and B̄x = onehot(c_t) ⊗ e(x_t)
  writes symbol j into slot j; C_t = onehot(q_t) reads slot j out. State k·V numbers.

Deviations: the constructed models are their own modules with the :class:`HybridLM` interface
(``forward``, ``step``, ``memory_layout``; layers named by the pattern letters ``S``, ``M``,
``A``) rather than ``HybridLM`` instances, because the counters need a ≡ 1 exactly and the SC
query needs the feature j², which Mamba's exp/SiLU parameterisation cannot give exactly. They
assume the default task layouts (SC without teacher forcing; MQAR with disjoint fillers); a
soft model refuses sequences longer than ``max_len``, where its margin bound stops holding. The
streaming caches keep every position; the selective KV cache (only attendable positions) is
what :func:`working_memory` reports as ``selective_kv``. Vocabularies and slot counts are at most
``MAX_VOCAB`` = 4096 (the one-hot tables are V x V), a fresh streaming cache holds at most
``MAX_BATCH`` = 2**16 sequences.
"""

from __future__ import annotations

import math
from typing import Any, final

import torch
from torch import nn

from icml26.core import check_positive_int
from icml26.hybrid_seq.models import AbstractSequenceModel, check_token_ids
from icml26.hybrid_seq.ssm import selective_recurrence
from icml26.hybrid_seq.tasks import MARK, N_SPECIAL, Batch

__all__ = [
    "ConstructedARHybrid",
    "ConstructedSCHybrid",
    "ConstructedSlotSSM",
    "build_ar_hybrid",
    "build_sc_hybrid",
    "build_sc_slot_ssm",
    "margin_beta",
    "min_correct_weight",
]


MAX_VOCAB = 4096  # largest vocabulary of a constructed model: its one-hot tables are V x V
MAX_BATCH = 2**16  # largest batch of an empty streaming cache


def margin_beta(max_len: int) -> float:
    """β = ln(T_max) + 2: with all wrong scores <= -1 relative to the right one, the right
    position keeps softmax weight >= 1 / (1 + (T_max - 1) e^-β) > 1 / (1 + e^-2) ≈ 0.881.

    Raises
    ------
    ValueError
        If ``max_len < 1``.
    """
    return math.log(check_positive_int("max_len", max_len, owner="margin_beta")) + 2.0


def _check_vocab(owner: str, vocab_size: Any, needed: int) -> int:
    """A vocabulary in [needed, MAX_VOCAB] (checked before any table is allocated)."""
    vocab_size = check_positive_int("vocab_size", vocab_size, owner=owner, maximum=MAX_VOCAB)
    if vocab_size < needed:
        raise ValueError(f"{owner}: vocab_size must be >= {needed}; got {vocab_size}.")
    return vocab_size


def _check_hard(owner: str, hard: Any) -> bool:
    if not isinstance(hard, bool):
        raise TypeError(f"{owner}: hard must be a bool; got {type(hard).__name__}.")
    return hard


def _check_cache(owner: str, cache: Any, keys: tuple[str, ...], batch: int) -> dict[str, Any]:
    """``cache`` must be what ``init_cache`` / ``step`` returned for a batch of ``batch``."""
    if not isinstance(cache, dict) or set(cache) != set(keys):
        raise TypeError(
            f"{owner}: cache must be None or the dict with keys {list(keys)} that init_cache or "
            f"step returned; got {type(cache).__name__}"
            + (f" with keys {sorted(cache)}." if isinstance(cache, dict) else ".")
        )
    if "t" in cache and (isinstance(cache["t"], bool) or not isinstance(cache["t"], int)):
        raise TypeError(f"{owner}: cache['t'] must be an int; got {type(cache['t']).__name__}.")
    for key in keys:
        value = cache[key]
        if isinstance(value, torch.Tensor) and (value.dim() == 0 or value.shape[0] != batch):
            raise ValueError(
                f"{owner}: cache[{key!r}] must hold a batch of {batch} (the token's batch); "
                f"got shape {tuple(value.shape)}."
            )
    return cache


def _fixed(t: torch.Tensor) -> nn.Parameter:
    """A parameter with set (not learned) values: counted by count_params, saved in state_dict."""
    return nn.Parameter(t.float(), requires_grad=False)


def _one_hot_rows(vocab: int, ids: range) -> torch.Tensor:
    """(vocab, len(ids)) table whose row x is the one-hot of x within ``ids`` (0 elsewhere)."""
    table = torch.zeros(vocab, len(ids))
    table[torch.tensor(list(ids)), torch.arange(len(ids))] = 1.0
    return table


def _attend(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, beta: torch.Tensor, hard: bool
) -> tuple[torch.Tensor, torch.Tensor]:
    """Causal attention on explicit features: out (B, T, V), weights (B, T, T).

    score(t, s) = β ⟨q_t, k_s⟩ for s <= t; ``hard`` puts weight 1 on the argmax instead.
    """
    T = q.shape[1]
    scores = q @ k.transpose(1, 2)  # (B, T, T)
    future = torch.ones(T, T, dtype=torch.bool, device=q.device).triu(1)
    scores = scores.masked_fill(future, -math.inf)
    if hard:
        weights = nn.functional.one_hot(scores.argmax(dim=-1), T).to(v.dtype)
    else:
        weights = torch.softmax(beta * scores, dim=-1)
    return weights @ v, weights


def _attend_step(
    q_t: torch.Tensor, keys: torch.Tensor, values: torch.Tensor, beta: torch.Tensor, hard: bool
) -> torch.Tensor:
    """One query (B, F) against cached keys (B, t, F) and values (B, t, V) -> (B, V)."""
    scores = (keys @ q_t[:, :, None])[:, :, 0]  # (B, t)
    if hard:
        weights = nn.functional.one_hot(scores.argmax(dim=-1), keys.shape[1]).to(values.dtype)
    else:
        weights = torch.softmax(beta * scores, dim=-1)
    return (weights[:, :, None] * values).sum(dim=1)


class _Constructed(AbstractSequenceModel):
    """Shared checks of the constructed models (vocabulary, length bound)."""

    vocab_size: int
    max_len: int
    hard: bool

    @property
    def max_positions(self) -> int | None:
        """``max_len`` for the soft model (its margin bound), ``None`` for the hard one."""
        return None if self.hard else self.max_len

    def _check(
        self, inputs: Any, *, ndim: int = 2, length: int | None = None, arg: str = "inputs"
    ) -> torch.Tensor:
        name = type(self).__name__
        inputs = check_token_ids(inputs, self.vocab_size, owner=name, ndim=ndim, name=arg)
        T = inputs.shape[-1] if length is None else length
        if self.max_positions is not None and self.max_positions < T:
            raise ValueError(
                f"{name}: the soft construction is exact up to max_len={self.max_len}; got a "
                f"sequence of length {T} in {arg} (length must be in [1, {self.max_len}]; build "
                "with a larger max_len or hard=True)."
            )
        return inputs

    def _batch(self, batch_size: Any) -> int:
        owner = type(self).__name__
        return check_positive_int("batch_size", batch_size, owner=owner, maximum=MAX_BATCH)

    def _start(self, token: Any, cache: Any, keys: tuple[str, ...]) -> tuple[Any, dict[str, Any]]:
        """Check a ``step`` call: the token ids (B,) and the cache (a fresh one for ``None``)."""
        owner = type(self).__name__
        if cache is None:
            token = self._check(token, ndim=1, length=1, arg="token")
            return token, self.init_cache(token.shape[0])
        token = check_token_ids(token, self.vocab_size, owner=owner, ndim=1, name="token")
        return token, _check_cache(owner, cache, keys, token.shape[0])


@final
class ConstructedSCHybrid(_Constructed):
    """SC count-then-retrieve hybrid, pattern ``"SA"`` (see :func:`build_sc_hybrid`)."""

    pattern = "SA"

    def __init__(self, n_symbols: int, max_len: int, hard: bool, vocab_size: int) -> None:
        super().__init__()
        owner = "ConstructedSCHybrid"
        n_symbols = check_positive_int("n_symbols", n_symbols, owner=owner, maximum=MAX_VOCAB)
        self.n_symbols, self.max_len, self.hard, self.vocab_size = (
            n_symbols,
            check_positive_int("max_len", max_len, owner=owner),
            _check_hard(owner, hard),
            _check_vocab(owner, vocab_size, N_SPECIAL + n_symbols),
        )
        vocab_size = self.vocab_size
        data = range(N_SPECIAL, N_SPECIAL + n_symbols)
        flags = torch.zeros(vocab_size, 2)  # (isdata, ismark)
        flags[N_SPECIAL : N_SPECIAL + n_symbols, 0] = 1.0
        flags[MARK, 1] = 1.0
        self.flags = _fixed(flags)
        self.value_table = _fixed(_one_hot_rows(vocab_size, data))  # e(x) on data symbols
        self.readout = _fixed(_one_hot_rows(vocab_size, data).T)  # symbol v -> logit of id
        self.beta = _fixed(torch.tensor(margin_beta(max_len)))
        self.M = _fixed(torch.tensor(1.0))

    def channels(self, inputs: torch.Tensor) -> dict[str, torch.Tensor]:
        """Named residual channels: isdata, rank c_t, slot q_t, attention weights, logits."""
        inputs = self._check(inputs)
        flags = self.flags[inputs]  # (B, T, 2)
        # S layer: a ≡ 1, b = (isdata, ismark): c_t, q_t are prefix counts
        ones = torch.ones_like(flags)[..., None]
        counts, _ = selective_recurrence(ones, flags[..., None], ones)  # (B, T, 2)
        isdata, rank, slot = flags[..., 0], counts[..., 0], counts[..., 1]
        # A layer: φ_q = (2j, -1, -j², -M), φ_k = (r, r², 1, 1 - isdata)
        q = torch.stack([2 * slot, -torch.ones_like(slot), -(slot**2), -self.M.expand_as(slot)], -1)
        k = torch.stack([rank, rank**2, torch.ones_like(rank), 1 - isdata], -1)
        out, weights = _attend(q, k, self.value_table[inputs], self.beta, self.hard)
        logits = out @ self.readout  # (B, T, vocab)
        return {
            "isdata": isdata,
            "rank": rank,
            "slot": slot,
            "attention": weights,
            "logits": logits,
        }

    def forward(self, inputs: torch.Tensor) -> torch.Tensor:
        """Token ids (B, T) -> logits (B, T, vocab); the argmax at the j-th MARK is datum j."""
        return self.channels(inputs)["logits"]

    def init_cache(self, batch_size: int) -> dict[str, Any]:
        """Empty cache: counters (B, 2) = 0 and no cached keys/values."""
        batch_size = self._batch(batch_size)
        z = self.flags.new_zeros
        return {"t": 0, "counts": z(batch_size, 2), "k": z(batch_size, 0, 4), "v": None}

    def step(self, token: torch.Tensor, cache: dict[str, Any] | None = None) -> tuple[Any, Any]:
        """One token (B,) -> (logits (B, vocab), cache)."""
        token, cache = self._start(token, cache, ("t", "counts", "k", "v"))
        token = self._check(token, ndim=1, length=cache["t"] + 1, arg="token")
        flags = self.flags[token]  # (B, 2)
        counts = cache["counts"] + flags  # h_t = 1·h_{t-1} + b_t
        rank, slot = counts[:, 0], counts[:, 1]
        k_t = torch.stack([rank, rank**2, torch.ones_like(rank), 1 - flags[:, 0]], -1)
        v_t = self.value_table[token]
        keys = torch.cat([cache["k"], k_t[:, None]], dim=1)
        values = v_t[:, None] if cache["v"] is None else torch.cat([cache["v"], v_t[:, None]], 1)
        q_t = torch.stack(
            [2 * slot, -torch.ones_like(slot), -(slot**2), -self.M.expand_as(slot)], -1
        )
        out = _attend_step(q_t, keys, values, self.beta, self.hard)
        new = {"t": cache["t"] + 1, "counts": counts, "k": keys, "v": values}
        return out @ self.readout, new

    def memory_layout(self) -> list[tuple[int, int, int]]:
        """S: 2 counters; A: key (4) + value (V) numbers per cached position."""
        return [(2, 0, 0), (0, 0, 4 + self.n_symbols)]


@final
class ConstructedARHybrid(_Constructed):
    """MQAR shift-then-match hybrid, pattern ``"SA"`` (see :func:`build_ar_hybrid`)."""

    pattern = "SA"

    def __init__(
        self, n_keys: int, n_values: int, max_len: int, hard: bool, vocab_size: int
    ) -> None:
        super().__init__()
        owner = "ConstructedARHybrid"
        n_keys = check_positive_int("n_keys", n_keys, owner=owner, maximum=MAX_VOCAB)
        n_values = check_positive_int("n_values", n_values, owner=owner, maximum=MAX_VOCAB)
        self.n_keys, self.n_values = n_keys, n_values
        self.max_len = check_positive_int("max_len", max_len, owner=owner)
        self.hard = _check_hard(owner, hard)
        self.vocab_size = vocab_size = _check_vocab(
            owner, vocab_size, N_SPECIAL + n_keys + n_values
        )
        keys = range(N_SPECIAL, N_SPECIAL + n_keys)
        values = range(N_SPECIAL + n_keys, N_SPECIAL + n_keys + n_values)
        self.key_table = _fixed(_one_hot_rows(vocab_size, keys))  # e_key(x)
        self.value_table = _fixed(_one_hot_rows(vocab_size, values))  # e_value(x)
        isvalue = torch.zeros(vocab_size)
        isvalue[N_SPECIAL + n_keys : N_SPECIAL + n_keys + n_values] = 1.0
        self.isvalue = _fixed(isvalue)
        self.shift_taps = _fixed(torch.tensor([1.0, 0.0]))  # conv taps on (t-1, t)
        self.readout = _fixed(_one_hot_rows(vocab_size, values).T)
        self.beta = _fixed(torch.tensor(margin_beta(max_len)))
        self.M = _fixed(torch.tensor(2.0))

    def channels(self, inputs: torch.Tensor) -> dict[str, torch.Tensor]:
        """Named channels: prev_t = e_key(x_{t-1}), attention weights, logits."""
        inputs = self._check(inputs)
        e_key = self.key_table[inputs]  # (B, T, n_keys)
        # S layer: causal conv, taps [1 at t-1, 0 at t], then a memoryless recurrence (a ≡ 0)
        past = nn.functional.pad(e_key, (0, 0, 1, 0))[:, :-1]  # e_key(x_{t-1}), zeros at t = 0
        shifted = self.shift_taps[0] * past + self.shift_taps[1] * e_key
        zeros, ones = torch.zeros_like(shifted)[..., None], torch.ones_like(shifted)[..., None]
        prev, _ = selective_recurrence(zeros, shifted[..., None], ones)  # (B, T, n_keys)
        # A layer: φ_q = (e_key(x_t), -M), φ_k = (prev_s, 1 - isvalue_s)
        isvalue = self.isvalue[inputs]
        q = torch.cat([e_key, -self.M.expand_as(isvalue)[..., None]], dim=-1)
        k = torch.cat([prev, (1 - isvalue)[..., None]], dim=-1)
        out, weights = _attend(q, k, self.value_table[inputs], self.beta, self.hard)
        return {"prev": prev, "attention": weights, "logits": out @ self.readout}

    def forward(self, inputs: torch.Tensor) -> torch.Tensor:
        """Token ids (B, T) -> logits (B, T, vocab); the argmax at a query is its value."""
        return self.channels(inputs)["logits"]

    def init_cache(self, batch_size: int) -> dict[str, Any]:
        """Empty cache: the shift register (one key one-hot) and no cached keys/values."""
        batch_size = self._batch(batch_size)
        z = self.key_table.new_zeros
        return {"t": 0, "conv": z(batch_size, self.n_keys), "k": None, "v": None}

    def step(self, token: torch.Tensor, cache: dict[str, Any] | None = None) -> tuple[Any, Any]:
        """One token (B,) -> (logits (B, vocab), cache)."""
        token, cache = self._start(token, cache, ("t", "conv", "k", "v"))
        token = self._check(token, ndim=1, length=cache["t"] + 1, arg="token")
        e_key = self.key_table[token]  # (B, n_keys)
        prev = self.shift_taps[0] * cache["conv"] + self.shift_taps[1] * e_key
        isvalue = self.isvalue[token]
        k_t = torch.cat([prev, (1 - isvalue)[:, None]], dim=-1)[:, None]
        v_t = self.value_table[token][:, None]
        keys = k_t if cache["k"] is None else torch.cat([cache["k"], k_t], dim=1)
        values = v_t if cache["v"] is None else torch.cat([cache["v"], v_t], dim=1)
        q_t = torch.cat([e_key, -self.M.expand_as(isvalue)[:, None]], dim=-1)
        out = _attend_step(q_t, keys, values, self.beta, self.hard)
        new = {"t": cache["t"] + 1, "conv": e_key, "k": keys, "v": values}
        return out @ self.readout, new

    def memory_layout(self) -> list[tuple[int, int, int]]:
        """S: one key one-hot in the shift register; A: key (n_keys + 1) + value numbers."""
        return [(0, self.n_keys, 0), (0, 0, self.n_keys + 1 + self.n_values)]


def _hat_one_hot(c: torch.Tensor, k: int) -> torch.Tensor:
    """Exact one-hot of integer c over 1..k by a ReLU MLP.

    onehot_j(c) = relu(c - j + 1) - 2 relu(c - j) + relu(c - j - 1), exact for integer c.
    """
    j = torch.arange(1, k + 1, dtype=c.dtype, device=c.device)
    d = c[..., None] - j  # (..., k)
    return nn.functional.relu(d + 1) - 2 * nn.functional.relu(d) + nn.functional.relu(d - 1)


@final
class ConstructedSlotSSM(_Constructed):
    """Pure-SSM SC slot writer, pattern ``"SMS"`` (see :func:`build_sc_slot_ssm`)."""

    pattern = "SMS"

    def __init__(self, n_symbols: int, k: int, vocab_size: int) -> None:
        super().__init__()
        owner = "ConstructedSlotSSM"
        n_symbols = check_positive_int("n_symbols", n_symbols, owner=owner, maximum=MAX_VOCAB)
        k = check_positive_int("k", k, owner=owner, maximum=MAX_VOCAB)
        vocab_size = _check_vocab(owner, vocab_size, N_SPECIAL + n_symbols)
        self.n_symbols, self.k, self.vocab_size = n_symbols, k, vocab_size
        self.hard, self.max_len = True, 0  # exact at every length: no margin bound
        data = range(N_SPECIAL, N_SPECIAL + n_symbols)
        flags = torch.zeros(vocab_size, 2)
        flags[N_SPECIAL : N_SPECIAL + n_symbols, 0] = 1.0
        flags[MARK, 1] = 1.0
        self.flags = _fixed(flags)
        self.symbol_table = _fixed(_one_hot_rows(vocab_size, data))  # x_t channels, ED = V
        self.hat_offsets = _fixed(torch.arange(1, k + 1))  # the ReLU MLP's k biases
        self.readout = _fixed(_one_hot_rows(vocab_size, data).T)

    def forward(self, inputs: torch.Tensor) -> torch.Tensor:
        """Token ids (B, T) -> logits (B, T, vocab)."""
        inputs = self._check(inputs)
        flags = self.flags[inputs]  # (B, T, 2)
        ones = torch.ones_like(flags)[..., None]
        counts, _ = selective_recurrence(ones, flags[..., None], ones)  # S1: c_t, q_t
        write, read = _hat_one_hot(counts[..., 0], self.k), _hat_one_hot(counts[..., 1], self.k)
        x = self.symbol_table[inputs]  # (B, T, V); zero on non-data tokens
        # S2: Ā ≡ 1, B̄x = x ⊗ onehot(c_t) (Δ = 1), C_t = onehot(q_t); state (V, k)
        b = x[..., None] * write[:, :, None, :]  # (B, T, V, k)
        y, _ = selective_recurrence(torch.ones_like(b), b, read[:, :, None, :])  # (B, T, V)
        return y @ self.readout

    def init_cache(self, batch_size: int) -> dict[str, Any]:
        """Empty cache: counters (B, 2) and slots (B, V, k), all zero."""
        batch_size = self._batch(batch_size)
        z = self.flags.new_zeros
        return {"counts": z(batch_size, 2), "slots": z(batch_size, self.n_symbols, self.k)}

    def step(self, token: torch.Tensor, cache: dict[str, Any] | None = None) -> tuple[Any, Any]:
        """One token (B,) -> (logits (B, vocab), cache)."""
        token, cache = self._start(token, cache, ("counts", "slots"))
        counts = cache["counts"] + self.flags[token]
        write, read = _hat_one_hot(counts[:, 0], self.k), _hat_one_hot(counts[:, 1], self.k)
        slots = cache["slots"] + self.symbol_table[token][:, :, None] * write[:, None, :]
        y = (slots * read[:, None, :]).sum(-1)  # (B, V)
        return y @ self.readout, {"counts": counts, "slots": slots}

    def memory_layout(self) -> list[tuple[int, int, int]]:
        """S1: 2 counters; M: nothing; S2: k·V slots."""
        return [(2, 0, 0), (0, 0, 0), (self.k * self.n_symbols, 0, 0)]


def _vocab(vocab_size: int | None, needed: int, owner: str) -> int:
    if vocab_size is None:
        return needed
    vocab_size = check_positive_int("vocab_size", vocab_size, owner=owner)
    if vocab_size < needed:
        raise ValueError(f"{owner}: vocab_size must be >= {needed}; got {vocab_size}.")
    return vocab_size


def build_sc_hybrid(
    n_symbols: int, max_len: int, hard: bool = False, *, vocab_size: int | None = None
) -> ConstructedSCHybrid:
    """The SC count-then-retrieve hybrid: 2 counters + one attention head, exact for T <= max_len.

    Parameters
    ----------
    n_symbols
        V, the data alphabet of the :class:`SelectiveCopying` task (ids 4..4+V-1).
    max_len
        T_max: β = ln(T_max) + 2 makes the soft model exact for every T <= T_max.
    hard
        Argmax attention instead of softmax: exact at every length.
    vocab_size
        Vocabulary of the task (default 4 + V); any non-data, non-MARK id counts as noise.

    Raises
    ------
    ValueError
        If ``n_symbols < 1``, ``max_len < 1`` or ``vocab_size`` is too small.

    Examples
    --------
    >>> from icml26.hybrid_seq import SelectiveCopying
    >>> task = SelectiveCopying(L=40, k=4, n_symbols=6)
    >>> model, batch = build_sc_hybrid(6, max_len=45), task.sample(8, generator=0)
    >>> bool((model(batch.inputs).argmax(-1)[batch.mask] == batch.targets[batch.mask]).all())
    True
    """
    owner = "build_sc_hybrid"
    n_symbols = check_positive_int("n_symbols", n_symbols, owner=owner)
    max_len = check_positive_int("max_len", max_len, owner=owner)
    vocab = _vocab(vocab_size, N_SPECIAL + n_symbols, owner)
    return ConstructedSCHybrid(n_symbols, max_len, bool(hard), vocab)


def build_ar_hybrid(
    n_keys: int,
    n_values: int,
    max_len: int,
    hard: bool = False,
    *,
    vocab_size: int | None = None,
) -> ConstructedARHybrid:
    """The MQAR shift-then-match hybrid: a one-token shift + one head, exact for T <= max_len.

    Parameters
    ----------
    n_keys, n_values
        Key and value vocabularies of the :class:`MQAR` task (default, disjoint layout).
    max_len
        T_max for the soft margin, β = ln(T_max) + 2.
    hard
        Argmax attention: exact at every length.
    vocab_size
        Vocabulary of the task (default 4 + n_keys + n_values; pass ``task.vocab_size`` when
        the task has filler ids).

    Raises
    ------
    ValueError
        If a size is < 1 or ``vocab_size`` is too small.

    Examples
    --------
    >>> from icml26.hybrid_seq import MQAR
    >>> task = MQAR(L=64, n_kv=8, n_keys=16, n_values=16, n_fillers=8)
    >>> model = build_ar_hybrid(16, 16, max_len=64, vocab_size=task.vocab_size)
    >>> b = task.sample(8, generator=0)
    >>> bool((model(b.inputs).argmax(-1)[b.mask] == b.targets[b.mask]).all())
    True
    """
    owner = "build_ar_hybrid"
    n_keys = check_positive_int("n_keys", n_keys, owner=owner)
    n_values = check_positive_int("n_values", n_values, owner=owner)
    max_len = check_positive_int("max_len", max_len, owner=owner)
    vocab = _vocab(vocab_size, N_SPECIAL + n_keys + n_values, owner)
    return ConstructedARHybrid(n_keys, n_values, max_len, bool(hard), vocab)


def build_sc_slot_ssm(
    n_symbols: int, k: int, *, vocab_size: int | None = None
) -> ConstructedSlotSSM:
    """The pure-SSM SC slot writer: counters, an exact ReLU one-hot, k·V slots.

    Parameters
    ----------
    n_symbols
        V, the data alphabet.
    k
        Number of slots: exact for tasks with at most k data tokens, at every length.
    vocab_size
        Vocabulary of the task (default 4 + V).

    Examples
    --------
    >>> from icml26.hybrid_seq import SelectiveCopying, working_memory
    >>> model = build_sc_slot_ssm(6, k=4)
    >>> working_memory(model, seq_len=45).ssm_state  # 2 counters + k·V slots
    26
    """
    owner = "build_sc_slot_ssm"
    n_symbols = check_positive_int("n_symbols", n_symbols, owner=owner)
    k = check_positive_int("k", k, owner=owner)
    vocab = _vocab(vocab_size, N_SPECIAL + n_symbols, owner)
    return ConstructedSlotSSM(n_symbols, k, vocab)


@torch.no_grad()
def min_correct_weight(model: ConstructedSCHybrid | ConstructedARHybrid, batch: Batch) -> float:
    """Smallest softmax weight the constructed head puts on the right position of ``batch``.

    Over the scored positions (``batch.mask``): for the SC hybrid the right position is the
    data token whose rank c_s equals the slot q_t being answered; for the MQAR hybrid it is
    every earlier value that follows a copy of the queried key. :func:`margin_beta` promises
    at least 1 / (1 + e^-2) ≈ 0.881 for every sequence up to the model's ``max_len``.

    Raises
    ------
    TypeError
        If ``model`` is not a constructed SC/MQAR hybrid or ``batch`` is not a :class:`Batch`.
    ValueError
        If ``batch.mask`` scores no position.

    Examples
    --------
    >>> from icml26.hybrid_seq import SelectiveCopying
    >>> batch = SelectiveCopying(L=40, k=4, n_symbols=6).sample(8, generator=0)
    >>> min_correct_weight(build_sc_hybrid(6, max_len=45), batch) >= 1 / (1 + math.exp(-2))
    True
    """
    owner = "min_correct_weight"
    if not isinstance(model, ConstructedSCHybrid | ConstructedARHybrid):
        raise TypeError(
            f"{owner}: model must be a ConstructedSCHybrid or ConstructedARHybrid; got "
            f"{type(model).__name__}."
        )
    if not isinstance(batch, Batch):
        raise TypeError(f"{owner}: batch must be a Batch; got {type(batch).__name__}.")
    if not bool(batch.mask.any()):
        raise ValueError(f"{owner}: batch.mask must score at least one position.")
    ch = model.channels(batch.inputs)
    rows, cols = torch.nonzero(batch.mask, as_tuple=True)
    if isinstance(model, ConstructedSCHybrid):  # the data token whose rank is the slot
        slot = ch["slot"][rows, cols]
        right = (ch["rank"][rows] == slot[:, None]) & (ch["isdata"][rows] == 1)
    else:  # the value right after the queried key
        key = batch.inputs[rows, cols]
        prev = nn.functional.pad(batch.inputs, (1, 0))[:, :-1][rows]
        right = (prev == key[:, None]) & (torch.arange(batch.inputs.shape[1]) < cols[:, None])
    weights = ch["attention"][rows, cols]  # (n_scored, T)
    return float((weights * right).sum(-1).min())
