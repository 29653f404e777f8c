"""Closed-loop evaluation of a decoder on AmbiguousReach2D: success rate, cost, gamma/tau traces.

Episodes of one seed run in lock-step as one batch (each with its own env and its own rows of the
:class:`UncertaintyState`); finished episodes leave the batch. The state is fresh for every
episode, as the official protocol resets SCALE's state per episode. :func:`expert_success_rate`
runs the scripted expert on the same episodes; :func:`count_forward_passes` counts a TinyARVLA's
decoder and vision-encoder passes (what a decoder costs, independent of the clock).
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch

from icml26.core.validation import check_positive_int
from icml26.scale.adapters import VLAAdapter, check_adapter
from icml26.scale.decoding import BestOfN, Decoder, _decode_blocks
from icml26.scale.env import AmbiguousReach2DEnv, scripted_expert
from icml26.scale.env_v1 import AmbiguousReach2DV1Env, expert_action
from icml26.scale.hf_vla import TinyOpenVLA
from icml26.scale.model import TinyARVLA
from icml26.scale.uncertainty import UncertaintyState

__all__ = [
    "EvalResult",
    "OracleVerifier",
    "count_forward_passes",
    "evaluate",
    "evaluate_many",
    "expert_episode_success",
    "expert_success_rate",
]


@dataclass
class EvalResult:
    """Per-seed success rates and what the decoder did.

    Attributes
    ----------
    success
        Success rate of each seed, ``(n_seeds,)``.
    episode_success
        0/1 per episode, ``(n_seeds, episodes)``.
    steps
        Mean episode length.
    forward_passes_per_step
        Decoder forward passes per control step (per sample).
    seconds_per_step
        Wall-clock per batched control step.
    gamma_trace, tau_trace
        Mean gamma and mean tau over the still-running episodes at each step t (first seed).
    episode_departure
        Per episode, the share of its action tokens that left the argmax of the logits they
        were drawn from (:attr:`DecodeInfo.departed`), ``(n_seeds, episodes)``: 0 for greedy,
        and near 0 for a sampler whose temperature is tiny.
    token_u, token_tau, token_error
        On AmbiguousReach2D-v1 with ``oracle=True``: every decoded step's u and tau
        ``(steps, K_a)`` (all seeds) and whether each token is far from the clean expert's
        (moves more than 0.25 apart, or the grip's sign differs).
    """

    success: np.ndarray
    episode_success: np.ndarray
    steps: float
    forward_passes_per_step: float
    seconds_per_step: float
    gamma_trace: list[float] = field(default_factory=list)
    tau_trace: list[float] = field(default_factory=list)
    episode_departure: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)))
    token_u: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)))
    token_tau: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)))
    token_error: np.ndarray = field(default_factory=lambda: np.zeros((0, 0), dtype=bool))

    @property
    def mean(self) -> float:
        """Success rate over all seeds."""
        return float(self.success.mean())

    @property
    def departure_rate(self) -> float:
        """Share of all action tokens that left the argmax (NaN if none was recorded)."""
        return float(self.episode_departure.mean()) if self.episode_departure.size else math.nan


class OracleVerifier:
    """Best-of-N's oracle progress verifier on AmbiguousReach2D-v1.

    It prefers the candidate closest to the clean expert's action (:func:`expert_action`):
    score = -(|dx - dx*| + |dy - dy*|) - 2 [sign(grip) != sign(grip*)]. :func:`evaluate` sets
    :attr:`expert` (the expert actions of the rows being decoded) before every step; this
    needs the simulator's state, so it is a ceiling, not a deployable verifier.

    Examples
    --------
    >>> import torch
    >>> v = OracleVerifier()
    >>> v.expert = np.array([[1.0, 0.0, -1.0]])
    >>> v(None, None, torch.tensor([[[8, 136, 263], [263, 136, 263]]])).argmax(1).tolist()
    [0]
    """

    def __init__(self, vocab_size: int = 264, n_bins: int = 256) -> None:
        from icml26.scale.tokenizer import ActionTokenizer

        self.tokenizer = ActionTokenizer(vocab_size, n_bins)
        self.expert: np.ndarray | None = None

    def __call__(self, obs: Any, instruction: Any, candidates: torch.Tensor) -> torch.Tensor:
        if self.expert is None:
            raise ValueError("OracleVerifier: expert actions are unset (evaluate sets them).")
        actions = self.tokenizer.decode(candidates.numpy())  # (B, N, 3)
        expert = self.expert[:, None]
        distance = np.abs(actions[..., :2] - expert[..., :2]).sum(-1)
        grip = (actions[..., 2] > 0) != (expert[..., 2] > 0)
        return torch.as_tensor(-distance - 2.0 * grip)


def _token_error(actions: np.ndarray, expert: np.ndarray) -> np.ndarray:
    """(B, 3) bool: the move more than 0.25 from the expert's, or the grip's sign differs."""
    move = np.abs(actions[:, :2] - expert[:, :2]) > 0.25
    grip = (actions[:, 2:] > 0) != (expert[:, 2:] > 0)
    return np.concatenate([move, grip], axis=1)


def _run_seed(decoders, env, episodes, seed, adapter, oracle=False):
    """Every decoder's ``episodes`` episodes of ``seed`` in one lock-step batch.

    Row ``j * episodes + i`` is decoder j's episode i; the rows of one decoder form one block of
    :func:`~icml26.scale.decoding._decode_blocks`, so one forward pass serves all decoders.
    """
    n = len(decoders) * episodes
    envs = [type(env)(**env.kwargs()) for _ in range(n)]
    obs = [e.reset(seed=seed * 1_000_003 + i % episodes)[0] for i, e in enumerate(envs)]
    active = np.arange(n)
    # one state per decoder (its ``first`` flag is the decoder's own), indexed by episode
    states = [UncertaintyState(adapter.num_action_tokens, batch_size=episodes) for _ in decoders]
    success, lengths, departed = np.zeros(n), np.zeros(n), np.zeros(n)
    passes, steps, seconds = [0] * len(decoders), [0] * len(decoders), [0.0] * len(decoders)
    gammas, taus = [[] for _ in decoders], [[] for _ in decoders]
    records = [([], [], []) for _ in decoders]
    verifiers = [d.verifier if isinstance(d, BestOfN) else None for d in decoders]
    while active.size:
        images = torch.as_tensor(np.stack([obs[i]["image"] for i in active]))
        instr = torch.as_tensor(np.array([obs[i]["instruction"] for i in active]))
        expert = np.stack([expert_action(envs[i]) for i in active]) if oracle else None
        owner = active // episodes
        present = np.unique(owner)
        blocks = [torch.as_tensor(active[owner == j] % episodes) for j in present]
        subs = [states[j].select(rows) for j, rows in zip(present, blocks, strict=True)]
        for j in present:
            if isinstance(verifiers[j], OracleVerifier):
                verifiers[j].expert = expert
        start = time.perf_counter()
        if len(present) == 1:
            tokens, info = decoders[present[0]].decode(adapter, images, instr, subs[0])
            infos = [info]
        else:
            sizes = [len(rows) for rows in blocks]
            chosen = [decoders[j] for j in present]
            tokens, infos = _decode_blocks(chosen, sizes, adapter, images, instr, subs)
        elapsed = time.perf_counter() - start
        for j, rows, sub in zip(present, blocks, subs, strict=True):
            states[j].assign(rows, sub)
        actions = adapter.detokenize(tokens)
        for j, info in zip(present, infos, strict=True):
            mine = owner == j
            if oracle:
                records[j][0].append(info.u.numpy())
                records[j][1].append(info.tau.numpy())
                records[j][2].append(_token_error(actions[mine], expert[mine]))
            passes[j] += info.forward_passes
            steps[j] += 1
            seconds[j] += elapsed
            gammas[j].append(float(info.gamma.mean()))
            taus[j].append(float(info.tau.mean()))
            if info.departed is not None:
                departed[active[mine]] += info.departed.double().mean(dim=-1).numpy()
        keep = []
        for row, i in enumerate(active):
            obs[i], reward, terminated, truncated, _ = envs[i].step(actions[row])
            lengths[i] += 1
            if terminated or truncated:
                success[i] = reward
            else:
                keep.append(i)
        active = np.array(keep, dtype=np.int64)
    runs = []
    for j in range(len(decoders)):
        mine = slice(j * episodes, (j + 1) * episodes)
        tokens = tuple(np.concatenate(r) if r else np.zeros((0, 0)) for r in records[j])
        runs.append((success[mine], lengths[mine], passes[j] / steps[j], seconds[j] / steps[j],
                     gammas[j], taus[j], departed[mine] / lengths[mine], tokens))  # fmt: skip
    return runs


def evaluate(
    decoder: Decoder,
    env: AmbiguousReach2DEnv,
    episodes: int,
    seeds: Sequence[int],
    adapter: VLAAdapter,
    oracle: bool = False,
) -> EvalResult:
    """Run ``episodes`` episodes per seed with ``decoder`` driving ``adapter``'s model.

    Parameters
    ----------
    decoder
        Any :class:`Decoder` (its own generator draws the samples).
    env
        The env whose configuration (split, distractors, walls) every episode copies.
    episodes
        Episodes per seed (at most 10 000); episode i of seed s resets with seed s * 1000003 + i.
    seeds
        Evaluation seeds (non-negative ints, at most 100).
    adapter
        The model behind the :class:`VLAAdapter` protocol.
    oracle
        AmbiguousReach2D-v1 only: compute the clean expert action of every decoded step (for
        an :class:`OracleVerifier` of a :class:`BestOfN` decoder and the per-token records
        ``token_u``, ``token_tau``, ``token_error``).

    Returns
    -------
    EvalResult

    Examples
    --------
    >>> from icml26.scale import GreedyDecoder, TinyARVLA, TinyVLAAdapter
    >>> env = AmbiguousReach2DEnv(max_steps=3)
    >>> adapter = TinyVLAAdapter(TinyARVLA(d_vision=16, d_model=16, seed=0))
    >>> result = evaluate(GreedyDecoder(), env, 4, [0], adapter)
    >>> result.success.shape, result.forward_passes_per_step
    ((1,), 3.0)
    """
    if not isinstance(decoder, Decoder):
        raise TypeError(f"evaluate: decoder must be a Decoder; got {type(decoder).__name__}.")
    return _evaluate([decoder], env, episodes, seeds, adapter, oracle, "evaluate")[0]


def evaluate_many(
    decoders: Sequence[Decoder],
    env: AmbiguousReach2DEnv,
    episodes: int,
    seeds: Sequence[int],
    adapter: VLAAdapter,
    oracle: bool = False,
) -> list[EvalResult]:
    """:func:`evaluate` for several decoders at once, all in one lock-step batch.

    Every decoder runs the same episodes (paired), with its own generator and its own rows of
    the :class:`UncertaintyState`; at each step one forward pass serves the still-running
    episodes of all decoders, so the results are those of :func:`evaluate` per decoder (up to
    floating-point effects of the batch size on the logits) at a fraction of the calls.
    ``seconds_per_step`` is the shared batched step's.

    Parameters
    ----------
    decoders
        1 to 64 distinct :class:`Decoder` objects that use the shared decoding loop (not
        :class:`BestOfN` nor a shuffled-tau decoder, which decode their own way).
    env, episodes, seeds, adapter, oracle
        As for :func:`evaluate`.

    Returns
    -------
    list of EvalResult
        One per decoder, in order.

    Examples
    --------
    >>> from icml26.scale import GreedyDecoder, TemperatureDecoder, TinyARVLA, TinyVLAAdapter
    >>> env = AmbiguousReach2DEnv(max_steps=3)
    >>> adapter = TinyVLAAdapter(TinyARVLA(d_vision=16, d_model=16, seed=0))
    >>> both = evaluate_many([GreedyDecoder(), TemperatureDecoder(seed=0)], env, 4, [0], adapter)
    >>> [r.episode_success.shape for r in both]
    [(1, 4), (1, 4)]
    """
    owner = "evaluate_many"
    if (
        isinstance(decoders, (str, bytes))
        or not isinstance(decoders, Sequence)
        or not 1 <= len(decoders) <= 64
        or not all(isinstance(d, Decoder) for d in decoders)
    ):
        raise TypeError(f"{owner}: decoders must be a sequence of 1 to 64 Decoders.")
    if len({id(d) for d in decoders}) != len(decoders):
        raise ValueError(f"{owner}: decoders must be distinct objects (each owns its rows).")
    shared = Decoder.decode
    if len(decoders) > 1 and any(type(d).decode is not shared for d in decoders):
        raise ValueError(
            f"{owner}: decoders that decode their own way (Best-of-N, shuffled tau) must be "
            "evaluated alone."
        )
    return _evaluate(list(decoders), env, episodes, seeds, adapter, oracle, owner)


def _evaluate(decoders, env, episodes, seeds, adapter, oracle, owner) -> list[EvalResult]:
    _check_env(env, owner)
    check_adapter(adapter, owner)
    episodes = check_positive_int("episodes", episodes, owner=owner, maximum=10_000)
    if (
        isinstance(seeds, (str, bytes))
        or not isinstance(seeds, Sequence)
        or not 1 <= len(seeds) <= 100
    ):
        raise TypeError(f"{owner}: seeds must be a sequence of 1 to 100 ints; got {seeds!r}.")
    seeds = [check_positive_int("seeds", s, owner=owner, minimum=0, maximum=2**31) for s in seeds]
    if not isinstance(oracle, bool):
        raise TypeError(f"{owner}: oracle must be a bool; got {type(oracle).__name__}.")
    if oracle and not isinstance(env.unwrapped, AmbiguousReach2DV1Env):
        raise ValueError(f"{owner}: oracle=True needs an AmbiguousReach2DV1Env.")
    per_seed = [_run_seed(decoders, env.unwrapped, episodes, s, adapter, oracle) for s in seeds]
    return [_result([runs[j] for runs in per_seed], oracle) for j in range(len(decoders))]


def _result(runs, oracle: bool) -> EvalResult:
    success = np.stack([r[0] for r in runs])
    return EvalResult(
        success=success.mean(axis=1),
        episode_success=success,
        steps=float(np.mean([r[1].mean() for r in runs])),
        forward_passes_per_step=float(np.mean([r[2] for r in runs])),
        seconds_per_step=float(np.mean([r[3] for r in runs])),
        gamma_trace=runs[0][4],
        tau_trace=runs[0][5],
        episode_departure=np.stack([r[6] for r in runs]),
        token_u=np.concatenate([r[7][0] for r in runs]) if oracle else np.zeros((0, 0)),
        token_tau=np.concatenate([r[7][1] for r in runs]) if oracle else np.zeros((0, 0)),
        token_error=np.concatenate([r[7][2] for r in runs]) if oracle else np.zeros((0, 0)),
    )


def _check_env(env: AmbiguousReach2DEnv, owner: str) -> AmbiguousReach2DEnv:
    if not isinstance(getattr(env, "unwrapped", None), AmbiguousReach2DEnv | AmbiguousReach2DV1Env):
        raise TypeError(
            f"{owner}: env must be an AmbiguousReach2DEnv or AmbiguousReach2DV1Env; "
            f"got {type(env).__name__}."
        )
    return env.unwrapped


def expert_episode_success(env: AmbiguousReach2DEnv, episodes: int, seed: int) -> np.ndarray:
    """0/1 success of :func:`~icml26.scale.scripted_expert` on each of ``episodes`` episodes.

    Episode ``i`` resets with seed ``seed * 1000003 + i``, the episodes :func:`evaluate` runs
    for evaluation seed ``seed``: a ceiling for the decoders on the same episodes.

    Examples
    --------
    >>> expert_episode_success(AmbiguousReach2DEnv("ood_noise"), episodes=3, seed=0).tolist()
    [1.0, 1.0, 1.0]
    """
    owner = "expert_episode_success"
    env = _check_env(env, owner)
    episodes = check_positive_int("episodes", episodes, owner=owner, maximum=10_000)
    seed = check_positive_int("seed", seed, owner=owner, minimum=0, maximum=2**31)
    wins = []
    expert = expert_action if isinstance(env, AmbiguousReach2DV1Env) else scripted_expert
    for i in range(episodes):
        env.reset(seed=seed * 1_000_003 + i)
        while True:
            _, reward, terminated, truncated, _ = env.step(expert(env))
            if terminated or truncated:
                wins.append(float(reward))
                break
    return np.asarray(wins)


def expert_success_rate(env: AmbiguousReach2DEnv, episodes: int, seed: int) -> float:
    """Success rate of :func:`~icml26.scale.scripted_expert` on ``episodes`` episodes of ``env``
    (the mean of :func:`expert_episode_success`).

    Examples
    --------
    >>> expert_success_rate(AmbiguousReach2DEnv("ood_noise"), episodes=3, seed=0)
    1.0
    """
    owner = "expert_success_rate"
    _check_env(env, owner)
    episodes = check_positive_int("episodes", episodes, owner=owner, maximum=10_000)
    seed = check_positive_int("seed", seed, owner=owner, minimum=0, maximum=2**31)
    return float(np.mean(expert_episode_success(env, episodes, seed)))


@contextmanager
def count_forward_passes(model: TinyARVLA) -> Iterator[dict[str, int]]:
    """Count ``model``'s decoder passes and vision-encoder passes inside the ``with`` block.

    Yields a dict ``{"decoder": n, "vision": m}`` that forward hooks (on the first decoder block
    and on the vision encoder) update while the block runs; the hooks are removed on exit. A
    prefix pass and each cached one-token pass count as one decoder pass each.

    Examples
    --------
    >>> import torch
    >>> from icml26.scale import GreedyDecoder, TinyVLAAdapter, UncertaintyState
    >>> model = TinyARVLA(d_vision=16, d_model=16, seed=0)
    >>> images = torch.zeros(2, 48, 48, 3, dtype=torch.uint8)
    >>> with count_forward_passes(model) as counts:
    ...     _ = GreedyDecoder().decode(TinyVLAAdapter(model), images, torch.tensor([0, 1]),
    ...                                UncertaintyState(model.n_action_tokens, batch_size=2))
    >>> counts
    {'decoder': 3, 'vision': 1}
    """
    if not isinstance(model, TinyARVLA | TinyOpenVLA):
        raise TypeError(
            "count_forward_passes: model must be a TinyARVLA or TinyOpenVLA; "
            f"got {type(model).__name__}."
        )
    counts = {"decoder": 0, "vision": 0}

    def bump(key: str):
        def hook(*_: object) -> None:
            counts[key] += 1

        return hook

    handles = [
        model.blocks[0].register_forward_pre_hook(bump("decoder")),
        model.vision.register_forward_pre_hook(bump("vision")),
    ]
    try:
        yield counts
    finally:
        for handle in handles:
            handle.remove()
