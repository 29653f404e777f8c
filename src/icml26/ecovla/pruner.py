"""EcoVLA's environment-aware adaptive pruning (EAP) loop and its baselines (arXiv:2602.00780, §3).

One episode (spec §2.5): offline, calibration frames give the history prior E (mean channel
energy) and the static pattern P0 (top-k of ||W_final|| · sqrt(E): structured Wanda). At t = 0 the
step runs dense and s_0 := 1 enters the history. For t >= 1 the never-pruned vision encoder gives
f_t, s_t = frame_similarity(f_t, f_{t-1}) and u_t = QuantileTrigger.update(s_t). A trigger step runs
the backbone **dense**, captures X^{int}, fuses eps with E (Eq. 9), updates E (Eq. 10), scores
(Eq. 11) and selects the pattern P_{t+1}, first used at step t + 1; any other step runs the
physically sliced backbone of the current pattern. ``reset`` restores H, E and P0.

Schedules (the same class, the same scoring): ``"eap"`` (the paper's trigger), ``"fixed"``
(recompute every ``interval`` steps), ``"oracle"`` (every step: a dense scoring pass and then a
sparse acting pass with the pattern made from that same step's activations, α = 0),
``"static"`` (P0 forever: static Wanda). :func:`fixed_interval_pruner`, :func:`oracle_pruner` and
:func:`static_wanda_pattern` build the baselines; :class:`FixedPatternPolicy` and
:class:`DensePolicy` act with one pattern or none.

Deviations: the warm-up (P0 until the window holds 4 similarities; t = 0 does not update the
pattern) and the oracle's definition are inferred (spec §2.2, issue 27).
"""

from __future__ import annotations

import abc
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Literal, final

from icml26.core.validation import (
    Seed,
    check_in_interval,
    check_one_of,
    check_positive_int,
    check_tensor,
    numpy_generator,
    torch_generator,
)
from icml26.ecovla._inputs import check_seed
from icml26.ecovla.adapter import BackboneAdapter, Capture
from icml26.ecovla.pattern import SparsityPattern
from icml26.ecovla.scoring import TemporalPrior, channel_energy, n_keep, top_k
from icml26.ecovla.trigger import MAX_WINDOW, QuantileTrigger, frame_similarity

if TYPE_CHECKING:
    import torch

__all__ = [
    "AbstractPolicy",
    "DensePolicy",
    "EcoVLAPruner",
    "FixedPatternPolicy",
    "NoisyPolicy",
    "PruningLog",
    "SkipBackbonePolicy",
    "StepPlan",
    "StepRecord",
    "calibration_energy",
    "fixed_interval_pruner",
    "oracle_pruner",
    "random_pattern",
    "static_wanda_pattern",
]

SCHEDULES = ("eap", "fixed", "oracle", "static")
MAX_CALIB_FRAMES = 100_000


def _check_adapter(adapter: Any, owner: str) -> BackboneAdapter:
    if not isinstance(adapter, BackboneAdapter):
        raise TypeError(
            f"{owner}: adapter must be a BackboneAdapter (e.g. TinyVLA); got "
            f"{type(adapter).__name__}."
        )
    return adapter


def _check_ratio(ratio: float, owner: str) -> float:
    return check_in_interval("ratio", ratio, low=0.0, high=1.0, closed="left", owner=owner)


def _energies(adapter: BackboneAdapter, captured: Capture) -> tuple[torch.Tensor, torch.Tensor]:
    """eps of every layer (Eq. 8), stacked: (layers, d_ff) and (layers, H · hd), float64."""
    n = adapter.dims().n_layers
    mlp = _stacked_energy([captured.mlp[i] for i in range(n)])
    attn = _stacked_energy([captured.attn[i] for i in range(n)])
    return mlp, attn


def _stacked_energy(tensors: list[torch.Tensor]) -> torch.Tensor:
    """``torch.stack([channel_energy(t).double() for t in tensors])``, in one reduction when
    the layers' captures have one shape (FastV shortens the later ones); the same numbers."""
    import torch

    if len({(t.shape, t.dtype) for t in tensors}) > 1:
        return torch.stack([channel_energy(t).double() for t in tensors])
    x = torch.stack(tensors).detach()  # (layers, ..., C)
    dtype = torch.float64 if x.dtype == torch.float64 else torch.float32
    return x.double().reshape(len(tensors), -1, x.shape[-1]).square().sum(dim=1).to(dtype).double()


def calibration_energy(
    adapter: BackboneAdapter, calib_frames: Sequence[Mapping[str, Any]]
) -> tuple[torch.Tensor, torch.Tensor]:
    """Mean eps over calibration observations (dense passes): the prior E, MLP and attention.

    Parameters
    ----------
    adapter
        The policy (a :class:`BackboneAdapter`).
    calib_frames
        Observations the adapter's ``act`` accepts (at least one).
    """
    owner = "calibration_energy"
    adapter = _check_adapter(adapter, owner)
    frames = _check_frames(calib_frames, owner)
    adapter.install(None)
    total_mlp = total_attn = None
    for obs in frames:
        with adapter.capture() as captured:
            adapter.act(obs)
        mlp, attn = _energies(adapter, captured)
        total_mlp = mlp if total_mlp is None else total_mlp + mlp
        total_attn = attn if total_attn is None else total_attn + attn
    return total_mlp / len(frames), total_attn / len(frames)


def _check_frames(frames: Any, owner: str) -> list[Mapping[str, Any]]:
    if isinstance(frames, Mapping) or not isinstance(frames, Sequence) or not frames:
        raise TypeError(
            f"{owner}: calib_frames must be a non-empty sequence of observations; "
            f"got {type(frames).__name__}."
        )
    if len(frames) > MAX_CALIB_FRAMES:
        raise ValueError(
            f"{owner}: calib_frames must hold at most {MAX_CALIB_FRAMES} frames; got {len(frames)}."
        )
    if not all(isinstance(f, Mapping) for f in frames):
        raise TypeError(f"{owner}: calib_frames must hold observation mappings.")
    return list(frames)


def static_wanda_pattern(
    adapter: BackboneAdapter, calib_frames: Sequence[Mapping[str, Any]], ratio: float
) -> SparsityPattern:
    """Static structured Wanda: top-k of ||W_final[:, k]|| · sqrt(mean eps_k) on calibration frames.

    Examples
    --------
    >>> from icml26.ecovla import Shift2DPickPlaceEnv, TinyVLA, TinyVLAConfig
    >>> model = TinyVLA(TinyVLAConfig(d_model=32, n_layers=2, d_ff=64))
    >>> obs, _ = Shift2DPickPlaceEnv().reset(seed=0)
    >>> p = static_wanda_pattern(model, [obs], ratio=0.25)
    >>> [len(m) for m in p.mlp], [len(h) for h in p.heads]
    ([48, 48], [3, 3])
    """
    owner = "static_wanda_pattern"
    ratio = _check_ratio(ratio, owner)
    mlp, attn = calibration_energy(_check_adapter(adapter, owner), calib_frames)
    return adapter.pattern_from_energy(mlp, attn, ratio)


def random_pattern(adapter: BackboneAdapter, ratio: float, seed: Seed = 0) -> SparsityPattern:
    """A uniformly random structured pattern with the same keep counts (the Random baseline)."""
    import torch

    owner = "random_pattern"
    adapter = _check_adapter(adapter, owner)
    ratio = _check_ratio(ratio, owner)
    gen = torch_generator(check_seed(seed, owner))
    d = adapter.dims()
    mlp = torch.rand(d.n_layers, d.d_ff, generator=gen, dtype=torch.float64)
    attn = torch.rand(d.n_layers, d.n_heads * d.head_dim, generator=gen, dtype=torch.float64)
    # plain ranks of uniform draws (not scored by the Wanda rule, which favours large norms)
    mlp_keep = tuple(top_k(row, n_keep(d.d_ff, ratio)) for row in mlp)
    heads = []
    for row in attn:
        head_scores = row.view(d.n_heads, d.head_dim)[:, 0]
        heads.append(adapter._select_heads(head_scores, ratio))
    return SparsityPattern(mlp_keep, tuple(heads))


@dataclass(frozen=True)
class StepPlan:
    """What the acting pass of one step must be (the lock-step evaluator batches these).

    ``features``: the encoder tokens of the observation (or ``None``); ``pattern``: the
    pattern to act with, ``None`` for dense weights; ``capture``: keep the acting pass's
    X^{int} for :meth:`AbstractPolicy.commit`; ``score``: a dense scoring pass comes first and
    its X^{int} goes to ``scored`` (the oracle). ``pattern="skip"`` bypasses every block
    (:class:`SkipBackbonePolicy`).
    """

    features: Any
    pattern: SparsityPattern | str | None
    capture: bool = False
    score: bool = False


class AbstractPolicy(abc.ABC):
    """A closed-loop policy: ``reset()`` at episode start, ``step(obs) -> action chunk``.

    A policy that acts through one backbone pass also splits a step into ``plan(obs)`` (which
    pass) and ``commit(action, captured)`` (what to do with its output), so that many episodes
    can share one batched pass (:func:`~icml26.ecovla.lockstep.evaluate_lockstep`).
    """

    adapter: BackboneAdapter

    def plan(self, obs: Mapping[str, Any], features: Any = None) -> StepPlan:
        """The acting pass of the coming step (default: dense)."""
        return StepPlan(features, pattern=None)

    def scored(self, captured: Capture) -> SparsityPattern:
        """The pattern made from a scoring pass (only for plans with ``score``)."""
        raise NotImplementedError(f"{type(self).__name__} asks for no scoring pass.")

    def commit(self, action: Any, captured: Capture | None) -> Any:
        """The step's action given the acting pass's output (default: unchanged)."""
        return action

    @abc.abstractmethod
    def reset(self) -> None:
        """Start a new episode."""

    @abc.abstractmethod
    def step(self, obs: Mapping[str, Any]) -> Any:
        """The action (chunk) for one observation."""


@final
class DensePolicy(AbstractPolicy):
    """The unpruned policy (the Dense baseline)."""

    def __init__(self, adapter: BackboneAdapter) -> None:
        self.adapter = _check_adapter(adapter, "DensePolicy")

    def reset(self) -> None:
        """Nothing to reset."""

    def step(self, obs: Mapping[str, Any]) -> Any:
        """Act with the dense weights."""
        self.adapter.install(None)
        return self.adapter.act(obs)


@final
class FixedPatternPolicy(AbstractPolicy):
    """Act with one physically sliced pattern on every step (static Wanda, Random)."""

    def __init__(self, adapter: BackboneAdapter, pattern: SparsityPattern) -> None:
        self.adapter = _check_adapter(adapter, "FixedPatternPolicy")
        self.adapter._check_pattern(pattern)
        self.pattern = pattern

    def reset(self) -> None:
        """Nothing to reset."""

    def plan(self, obs: Mapping[str, Any], features: Any = None) -> StepPlan:
        """Act with the pattern."""
        return StepPlan(features, pattern=self.pattern)

    def step(self, obs: Mapping[str, Any]) -> Any:
        """Act with the sliced weights of the pattern."""
        self.adapter.install(self.pattern)
        return self.adapter.act(obs)


@final
class SkipBackbonePolicy(AbstractPolicy):
    """Every decoder block reduced to its residual path (a testbed gate, issue 42).

    The blocks' MLP and attention outputs are zeroed, so the action head reads the tokens as
    they entered the backbone (after the final norm). A testbed whose policy still succeeds this
    way cannot show what pruning the backbone costs.

    Examples
    --------
    >>> from icml26.ecovla import Shift2DPickPlaceEnv, TinyVLA, TinyVLAConfig
    >>> model = TinyVLA(TinyVLAConfig(d_model=32, n_layers=2, d_ff=64))
    >>> obs, _ = Shift2DPickPlaceEnv().reset(seed=0)
    >>> SkipBackbonePolicy(model).step(obs).shape
    (4, 3)
    """

    def __init__(self, adapter: BackboneAdapter) -> None:
        from icml26.ecovla.model import TinyVLA

        if not isinstance(adapter, TinyVLA):
            raise TypeError(
                f"SkipBackbonePolicy: adapter must be a TinyVLA; got {type(adapter).__name__}."
            )
        self.adapter = adapter

    def reset(self) -> None:
        """Nothing to reset."""

    def plan(self, obs: Mapping[str, Any], features: Any = None) -> StepPlan:
        """Bypass every block."""
        return StepPlan(features, pattern="skip")

    def step(self, obs: Mapping[str, Any]) -> Any:
        """Act with every block bypassed."""
        features = self.adapter.encode_observations([obs])
        actions, _ = self.adapter.act_rows([obs], features, self.adapter.masks_of(["skip"]))
        return actions[0]


@final
class NoisyPolicy(AbstractPolicy):
    """A policy whose (dx, dy) actions get independent Gaussian noise (a testbed diagnostic).

    How much small action errors cost in closed loop: a policy that loses many points under
    noise smaller than its demonstrations' execution noise sits on a competence cliff, where any
    perturbation (pruning included) collapses it.

    Parameters
    ----------
    policy
        The policy whose action chunks are perturbed.
    sigma
        Standard deviation of the noise on dx and dy (action units, in [0, 1]); the grip is kept.
    seed
        Seeds the noise.

    Examples
    --------
    >>> from icml26.ecovla import Shift2DPickPlaceEnv, TinyVLA, TinyVLAConfig
    >>> model = TinyVLA(TinyVLAConfig(d_model=32, n_layers=2, d_ff=64))
    >>> obs, _ = Shift2DPickPlaceEnv().reset(seed=0)
    >>> noisy = NoisyPolicy(DensePolicy(model), sigma=0.1, seed=0)
    >>> clean = DensePolicy(model).step(obs)
    >>> moved = noisy.step(obs)
    >>> bool((moved[:, 2] == clean[:, 2]).all()), bool((moved[:, :2] != clean[:, :2]).any())
    (True, True)
    """

    def __init__(self, policy: AbstractPolicy, sigma: float, seed: Seed = 0) -> None:
        owner = "NoisyPolicy"
        if not isinstance(policy, AbstractPolicy):
            raise TypeError(
                f"{owner}: policy must be an AbstractPolicy; got {type(policy).__name__}."
            )
        self.policy = policy
        self.sigma = check_in_interval("sigma", sigma, low=0.0, high=1.0, owner=owner)
        self._rng = numpy_generator(check_seed(seed, owner))

    def reset(self) -> None:
        """Reset the wrapped policy (the noise stream goes on)."""
        self.policy.reset()

    @property
    def adapter(self) -> BackboneAdapter:  # type: ignore[override]
        """The wrapped policy's adapter."""
        return self.policy.adapter

    def plan(self, obs: Mapping[str, Any], features: Any = None) -> StepPlan:
        """The wrapped policy's plan."""
        return self.policy.plan(obs, features)

    def scored(self, captured: Capture) -> SparsityPattern:
        """The wrapped policy's scoring."""
        return self.policy.scored(captured)

    def commit(self, action: Any, captured: Capture | None) -> Any:
        """The wrapped policy's action with noise added to (dx, dy)."""
        return self._perturb(self.policy.commit(action, captured))

    def step(self, obs: Mapping[str, Any]) -> Any:
        """The wrapped policy's chunk with noise added to (dx, dy)."""
        return self._perturb(self.policy.step(obs))

    def _perturb(self, chunk: Any) -> Any:
        import numpy as np

        chunk = np.array(chunk, dtype=np.float32).reshape(-1, 3)
        chunk[:, :2] += self.sigma * self._rng.standard_normal((len(chunk), 2))
        return chunk


@dataclass(frozen=True)
class StepRecord:
    """What one pruner step did: dense or sparse, triggered, patterns used and made."""

    t: int
    dense: bool
    triggered: bool
    similarity: float
    used: str | None  # key of the pattern the acting pass used (None: dense)
    made: str | None  # key of the pattern this step's activations produced (None: none)


@final
class PruningLog:
    """The step records of a pruner over many episodes, with their trigger and dense rates.

    Pass it as ``evaluate(..., on_episode=log)``: after each episode it keeps a copy of the
    policy's :attr:`EcoVLAPruner.records`.

    Examples
    --------
    >>> from icml26.ecovla import Shift2DPickPlaceEnv, TinyVLA, TinyVLAConfig, evaluate
    >>> model = TinyVLA(TinyVLAConfig(d_model=32, n_layers=2, d_ff=64, patch=16))
    >>> env = Shift2DPickPlaceEnv(split="shift", max_steps=8)
    >>> pruner = EcoVLAPruner(model, ratio=0.4, p=80, warmup=1).calibrate([env.reset(seed=0)[0]])
    >>> log = PruningLog()
    >>> _ = evaluate(pruner, env, episodes=2, on_episode=log)
    >>> len(log.episodes), log.steps == sum(len(e) for e in log.episodes)
    (2, True)
    >>> 0.0 <= log.trigger_rate <= 1.0
    True
    """

    def __init__(self) -> None:
        self.episodes: list[list[StepRecord]] = []

    def __call__(self, policy: EcoVLAPruner) -> None:
        """Record the episode the policy has just finished."""
        if not isinstance(policy, EcoVLAPruner):
            raise TypeError(
                f"PruningLog: policy must be an EcoVLAPruner; got {type(policy).__name__}."
            )
        self.episodes.append(list(policy.records))

    @property
    def records(self) -> list[StepRecord]:
        """Every step record, episode after episode."""
        return [r for episode in self.episodes for r in episode]

    @property
    def steps(self) -> int:
        """Control steps in all episodes."""
        return sum(len(e) for e in self.episodes)

    @property
    def dense_steps(self) -> int:
        """Steps whose acting pass ran dense (t = 0 and the trigger steps)."""
        return sum(r.dense for e in self.episodes for r in e)

    @property
    def triggers(self) -> int:
        """Trigger steps (u_t = 1)."""
        return sum(r.triggered for e in self.episodes for r in e)

    @property
    def decisions(self) -> int:
        """Steps with a trigger decision: all but each episode's first (t >= 1)."""
        return sum(max(len(e) - 1, 0) for e in self.episodes)

    @property
    def trigger_rate(self) -> float:
        """Triggers per decision (0 when nothing was decided)."""
        return self.triggers / max(self.decisions, 1)

    @property
    def dense_fraction(self) -> float:
        """Dense steps per step (0 when nothing ran)."""
        return self.dense_steps / max(self.steps, 1)


@final
class EcoVLAPruner(AbstractPolicy):
    """Environment-aware adaptive pruning around a policy (EAP, Eqs. 5-11).

    Parameters
    ----------
    adapter
        The policy, a :class:`BackboneAdapter` (e.g. :class:`TinyVLA`).
    ratio
        Pruning ratio in [0, 1) of MLP channels and of heads in every layer.
    p
        Trigger percentile in [0, 100] (paper: 5 for OpenVLA-OFT/CogACT, 80 for π0.5).
    alpha
        Temporal inertia α in [0, 1] of the fusion (paper 0.7).
    lam
        History decay λ in [0, 1] (0.9, inferred).
    window
        Trigger window T (16, inferred).
    warmup
        Similarities needed before the first trigger (4, inferred); in [1, window].
    schedule
        ``"eap"``, ``"fixed"``, ``"oracle"`` or ``"static"`` (module docstring).
    interval
        Recompute period of ``schedule="fixed"`` (steps, t = interval, 2·interval, ...).
    update_pattern
        ``False`` keeps the schedule (trigger steps still run dense and capture X^{int}) but
        skips the pattern work of Eqs. 8-11: :meth:`make_pattern` returns the current pattern
        and the prior is not updated. The "no pattern work" reference of the I²O latency
        breakdown (L = T_infer); the policy then acts like static Wanda.

    Examples
    --------
    >>> from icml26.ecovla import Shift2DPickPlaceEnv, TinyVLA, TinyVLAConfig
    >>> model = TinyVLA(TinyVLAConfig(d_model=32, n_layers=2, d_ff=64))
    >>> env = Shift2DPickPlaceEnv()
    >>> obs, _ = env.reset(seed=0)
    >>> pruner = EcoVLAPruner(model, ratio=0.4, p=50).calibrate([obs])
    >>> pruner.step(obs).shape
    (4, 3)
    >>> pruner.records[0].dense  # t = 0 runs dense
    True
    """

    def __init__(
        self,
        adapter: BackboneAdapter,
        ratio: float,
        p: float,
        alpha: float = 0.7,
        lam: float = 0.9,
        window: int = 16,
        warmup: int = 4,
        schedule: Literal["eap", "fixed", "oracle", "static"] = "eap",
        interval: int = 4,
        update_pattern: bool = True,
    ) -> None:
        owner = "EcoVLAPruner"
        self.adapter = _check_adapter(adapter, owner)
        self.ratio = _check_ratio(ratio, owner)
        self.alpha = check_in_interval("alpha", alpha, low=0.0, high=1.0, owner=owner)
        self.lam = check_in_interval("lam", lam, low=0.0, high=1.0, owner=owner)
        self.schedule = check_one_of("schedule", schedule, SCHEDULES, owner=owner)
        self.interval = check_positive_int("interval", interval, maximum=MAX_WINDOW, owner=owner)
        if not isinstance(update_pattern, bool):
            raise TypeError(
                f"{owner}: update_pattern must be a bool; got {type(update_pattern).__name__}."
            )
        self.update_pattern = update_pattern
        self.trigger = QuantileTrigger(p, window=window, warmup=warmup)
        self.p, self.window, self.warmup = self.trigger.p, window, warmup
        self.prior_: TemporalPrior | None = None
        self.initial_pattern_: SparsityPattern | None = None
        self.pattern: SparsityPattern | None = None
        self.records: list[StepRecord] = []
        self._t = 0
        self._prev_features: torch.Tensor | None = None
        self._pending: tuple = ()
        self.slice_ahead = True  # make_pattern builds the sliced weights (off the acting pass)

    # --- set-up -----------------------------------------------------------------------------

    def clone(self) -> EcoVLAPruner:
        """A new pruner with this one's settings and calibration on the same adapter (one per
        episode of a lock-step batch), reset to the episode start."""
        import copy

        other = copy.copy(self)
        other.trigger = QuantileTrigger(self.p, window=self.window, warmup=self.warmup)
        other.prior_ = copy.deepcopy(self.prior_)
        other.records = []
        if other.prior_ is not None:
            other.reset()
        return other

    def calibrate(self, frames: Sequence[Mapping[str, Any]]) -> EcoVLAPruner:
        """Prior E := mean eps over ``frames`` and P0 := its static Wanda pattern; resets."""
        return self.calibrate_energy(*calibration_energy(self.adapter, frames))

    def calibrate_energy(self, mlp: torch.Tensor, attn: torch.Tensor) -> EcoVLAPruner:
        """:meth:`calibrate` from the frames' :func:`calibration_energy` ``(mlp, attn)``,
        computed once and shared by several pruners and static patterns on the same frames.

        Examples
        --------
        >>> from icml26.ecovla import Shift2DPickPlaceEnv, TinyVLA, TinyVLAConfig
        >>> model = TinyVLA(TinyVLAConfig(d_model=32, n_layers=2, d_ff=64))
        >>> obs, _ = Shift2DPickPlaceEnv().reset(seed=0)
        >>> energy = calibration_energy(model, [obs])
        >>> a = EcoVLAPruner(model, 0.4, p=5).calibrate_energy(*energy)
        >>> a.initial_pattern_ == EcoVLAPruner(model, 0.4, p=80).calibrate([obs]).initial_pattern_
        True
        """
        import torch

        owner = "EcoVLAPruner.calibrate_energy"
        d = self.adapter.dims()
        mlp = check_tensor("mlp", mlp, shape=(d.n_layers, d.d_ff), finite=True, owner=owner)
        attn = check_tensor(
            "attn", attn, shape=(d.n_layers, d.n_heads * d.head_dim), finite=True, owner=owner
        )
        self.prior_ = TemporalPrior(torch.cat([mlp, attn], dim=1), alpha=self.alpha, lam=self.lam)
        self.initial_pattern_ = self.adapter.pattern_from_energy(mlp, attn, self.ratio)
        self.reset()
        return self

    def reset(self) -> None:
        """Episode start: empty history, E ← calibration prior, P ← P0, t ← 0."""
        if self.prior_ is None:
            raise ValueError(
                "EcoVLAPruner: calibrate(frames) must be called before reset/step "
                "(frames: calibration observations)."
            )
        self.trigger.reset()
        self.prior_.reset()
        self.pattern = self.initial_pattern_
        self.records = []
        self._t = 0
        self._prev_features = None

    # --- the EAP loop, in three pieces (the orchestrator runs make_pattern elsewhere) --------

    def decide(
        self, obs: Mapping[str, Any], features: torch.Tensor | None = None
    ) -> tuple[bool, float, torch.Tensor]:
        """Trigger decision of the coming step: (u_t, s_t, f_t).

        ``features`` (the encoder's tokens of ``obs``, e.g. from a batched encoder pass) saves
        the encoder call.
        """
        if self.prior_ is None:
            raise ValueError(
                "EcoVLAPruner: calibrate(frames) must be called before step "
                "(frames: calibration observations)."
            )
        if features is None:
            features = self.adapter.visual_features(obs)
        if self._t == 0:
            self.trigger.update(1.0)  # s_0 := 1
            return False, 1.0, features
        s_t = frame_similarity(features, self._prev_features)
        u_t = self.trigger.update(s_t)
        match self.schedule:
            case "fixed":
                u_t = self._t % self.interval == 0
            case "static":
                u_t = False
            case "oracle":
                u_t = True
        return u_t, s_t, features

    def run_backbone(
        self, obs: Mapping[str, Any], features: torch.Tensor, dense: bool
    ) -> tuple[Any, Capture | None]:
        """The acting pass: dense with X^{int} captured, or sliced with the current pattern."""
        if not dense:
            self.adapter.install(self.pattern)
            return self.adapter.act(obs, features=features), None
        self.adapter.install(None)
        with self.adapter.capture() as captured:
            action = self.adapter.act(obs, features=features)
        return action, captured

    def make_pattern(self, captured: Capture) -> SparsityPattern:
        """Eqs. 8-11 on a dense step's activations: eps, Ê, E update, scores, top-k.

        With ``update_pattern=False`` nothing is computed: the current pattern is returned.
        """
        import torch

        if not self.update_pattern:
            return self.pattern

        mlp, attn = _energies(self.adapter, captured)
        eps = torch.cat([mlp, attn], dim=1)  # stacked: one batched fusion for all layers
        fused = self.prior_.fuse(eps) if self.schedule != "oracle" else eps
        self.prior_.update(eps)
        d_ff = mlp.shape[1]
        pattern = self.adapter.pattern_from_energy(fused[:, :d_ff], fused[:, d_ff:], self.ratio)
        if self.slice_ahead:
            self.adapter.sliced(pattern)  # build the sliced weights off the acting pass
        return pattern

    def plan(self, obs: Mapping[str, Any], features: torch.Tensor | None = None) -> StepPlan:
        """First half of a step: the trigger decision and what the acting pass must be.

        The caller runs the passes the plan asks for (:meth:`step` one at a time, the lock-step
        evaluator a batch of rows at once) and ends the step with :meth:`commit`.
        """
        u_t, s_t, features = self.decide(obs, features)
        self._pending = (u_t, s_t, features)
        if self.schedule == "oracle" and self._t > 0:
            return StepPlan(features, pattern=None, capture=False, score=True)
        dense = u_t or self._t == 0
        return StepPlan(features, pattern=None if dense else self.pattern, capture=u_t)

    def scored(self, captured: Capture) -> SparsityPattern:
        """The oracle's scoring pass: the pattern its acting pass uses at the same step."""
        self.pattern = self.make_pattern(captured)
        self._pending = (*self._pending[:3], self.pattern)
        return self.pattern

    def commit(self, action: Any, captured: Capture | None) -> Any:
        """Second half of a step: make the next pattern from a trigger step's activations."""
        u_t, s_t, features, *scored = self._pending
        if scored:  # the oracle acted sparse with the pattern of its scoring pass
            self._finish(u_t, s_t, False, self.pattern.key, scored[0], features)
            return action
        dense = u_t or self._t == 0
        used, made = None if dense else self.pattern.key, None
        if u_t:
            made = self.make_pattern(captured)
            self.pattern = made  # applies from t + 1
        self._finish(u_t, s_t, dense, used, made, features)
        return action

    def step(self, obs: Mapping[str, Any]) -> Any:
        """One control step; returns the policy's action (chunk)."""
        plan = self.plan(obs)
        if plan.score:
            _, captured = self.run_backbone(obs, plan.features, dense=True)  # scoring pass
            plan = replace(plan, pattern=self.scored(captured))
        action, captured = self.run_backbone(obs, plan.features, dense=plan.pattern is None)
        return self.commit(action, captured)

    def _finish(
        self,
        u_t: bool,
        s_t: float,
        dense: bool,
        used: str | None,
        made: SparsityPattern | str | None,
        features: torch.Tensor,
    ) -> None:
        made_key = made.key if isinstance(made, SparsityPattern) else made
        self.records.append(StepRecord(self._t, dense, u_t, s_t, used, made_key))
        self._prev_features = features
        self._t += 1

    # --- statistics -------------------------------------------------------------------------

    def stats(self) -> dict[str, float]:
        """Counts of the current episode: steps, dense steps, triggers, trigger rate (t >= 1)."""
        steps = len(self.records)
        triggers = sum(r.triggered for r in self.records)
        decisions = max(steps - 1, 0)
        return {
            "steps": float(steps),
            "dense_steps": float(sum(r.dense for r in self.records)),
            "triggers": float(triggers),
            "trigger_rate": triggers / decisions if decisions else float("nan"),
        }


def fixed_interval_pruner(
    adapter: BackboneAdapter, k: int, ratio: float, alpha: float = 0.7, lam: float = 0.9
) -> EcoVLAPruner:
    """Recompute the pattern every k steps (dense on those steps), same scoring as EAP."""
    return EcoVLAPruner(adapter, ratio, p=0.0, alpha=alpha, lam=lam, schedule="fixed", interval=k)


def oracle_pruner(adapter: BackboneAdapter, ratio: float) -> EcoVLAPruner:
    """Upper bound: every step a dense scoring pass, then a sparse acting pass with its pattern.

    The pattern of step t is the top-k of ||W_final|| · sqrt(eps_t) (α = 0: this step's energy
    only), applied to the same step t.
    """
    return EcoVLAPruner(adapter, ratio, p=0.0, alpha=0.0, schedule="oracle")
