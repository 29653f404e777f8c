"""Lock-step batched closed-loop evaluation: many episodes, one backbone pass per decision step.

Every row is one (policy, episode) pair with its own environment. At each decision step the
active rows' observations are encoded in one pass, each row's policy plans its acting pass
(:meth:`~icml26.ecovla.pruner.AbstractPolicy.plan`: dense, a pattern, or the oracle's scoring
pass first), and one batched backbone pass runs every row with its own channel and head masks
(:meth:`~icml26.ecovla.model.TinyVLA.act_rows`); masks compute the same function as physically
sliced weights (tested to 1e-6 in float64), so success rates equal one-episode-at-a-time
evaluation up to float32 rounding, at a fraction of the cost. Slicing stays for latency.

Rows of one call share the model's FastV setting (``TinyVLA.set_token_pruning``); FastV ranks
the tokens of each row by that row's own attention.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from icml26.core.validation import check_positive_int

__all__ = ["FAILURE_MODES", "LockstepResult", "evaluate_lockstep"]

MAX_ROWS = 100_000
#: How an episode ended, from the environment's state, in the order they are tested: the
#: instructed object on the instructed pad; something still held when time ran out; the
#: instructed object released on the other pad; released elsewhere; only other objects ever
#: grasped; the gripper came within the grasp radius of the instructed object but never grasped
#: anything; it never came that close.
FAILURE_MODES = (
    "success",
    "held at timeout",
    "wrong pad",
    "dropped",
    "wrong object",
    "reached, not grasped",
    "never reached",
)


@dataclass(frozen=True)
class LockstepResult:
    """Per row: success, episode length, policy queries and (when traced) per-step traces.

    ``drift[i]``: for rows evaluated with ``trace=True``, the norm of the first action of the
    row's chunk minus the dense policy's first action on the same observation, one value per
    decision step along the row's own trajectory. ``failure[i]``: how the episode ended, read
    from the environment's state (:data:`FAILURE_MODES`). ``closest[i]``: the smallest distance
    between the gripper and the instructed object over the episode (reset state included).
    """

    success: np.ndarray
    length: np.ndarray
    queries: np.ndarray
    failure: list[str]
    drift: list[list[float]] = field(default_factory=list)
    closest: np.ndarray = field(default_factory=lambda: np.zeros(0))

    @property
    def success_rate(self) -> float:
        """Fraction of successful rows."""
        return float(np.mean(self.success))


def _unwrapped(env: Any) -> Any:
    from icml26.ecovla.env import Shift2DPickPlaceEnv

    base = getattr(env, "unwrapped", env)
    if not isinstance(base, Shift2DPickPlaceEnv):
        raise TypeError(
            "evaluate_lockstep: envs must be Shift2DPickPlaceEnv instances (or gymnasium "
            f"wrappers of one); got {type(env).__name__}."
        )
    return base


def _distance(env: Any) -> float:
    s = env._state
    return float(np.linalg.norm(s["gripper"] - s["objects"][s["target"]]))


def _failure(env: Any, success: bool, held_target: bool, held_other: bool, closest: float) -> str:
    from icml26.ecovla.env import GRASP_RADIUS, PAD_RADIUS

    s = env._state
    if success:
        return "success"
    if s["held"] >= 0:
        return "held at timeout"
    if held_target:
        other = s["pads"][1 - s["goal"]]
        on_other = float(np.linalg.norm(s["objects"][s["target"]] - other)) <= PAD_RADIUS
        return "wrong pad" if on_other else "dropped"
    if held_other:
        return "wrong object"
    return "reached, not grasped" if closest <= GRASP_RADIUS else "never reached"


def evaluate_lockstep(
    policies: Sequence[Any],
    envs: Sequence[Any],
    seeds: Sequence[int],
    execute: int | None = None,
    trace: Sequence[bool] | None = None,
) -> LockstepResult:
    """Run row i = (``policies[i]``, ``envs[i]`` reset with ``seeds[i]``) closed-loop, all rows
    in lock-step with one batched backbone pass per decision step.

    Parameters
    ----------
    policies
        One policy per row (:class:`~icml26.ecovla.pruner.AbstractPolicy`; a stateful policy
        such as an :class:`~icml26.ecovla.pruner.EcoVLAPruner` needs its own instance per row),
        all on the same :class:`~icml26.ecovla.model.TinyVLA`.
    envs
        One ``Shift2DPickPlaceEnv`` (or a gymnasium wrapper of one) per row.
    seeds
        The reset seed of each row's episode (rows with equal seeds play the same episode).
    execute
        Actions executed from each chunk before re-querying (default: the whole chunk).
    trace
        Per row, whether to also run the dense policy on the row's observations and record the
        drift ‖a − a_dense‖ of the first action (an extra batched pass over those rows).

    Returns
    -------
    LockstepResult

    Examples
    --------
    >>> from icml26.ecovla import DensePolicy, Shift2DPickPlaceEnv, TinyVLA, TinyVLAConfig
    >>> model = TinyVLA(TinyVLAConfig(d_model=32, n_layers=2, d_ff=64, patch=16))
    >>> envs = [Shift2DPickPlaceEnv(max_steps=6) for _ in range(2)]
    >>> result = evaluate_lockstep([DensePolicy(model)] * 2, envs, seeds=[0, 1], execute=2)
    >>> result.length.tolist(), result.queries.tolist()
    ([6, 6], [3, 3])
    """
    from icml26.ecovla.model import TinyVLA
    from icml26.ecovla.pruner import AbstractPolicy

    owner = "evaluate_lockstep"
    rows = len(policies) if isinstance(policies, Sequence) else -1
    if rows <= 0 or rows > MAX_ROWS:
        raise ValueError(f"{owner}: policies must be a sequence of 1 to {MAX_ROWS} policies.")
    if not isinstance(envs, Sequence) or len(envs) != rows:
        raise ValueError(f"{owner}: envs must hold one env per policy ({rows}).")
    if not isinstance(seeds, Sequence) or len(seeds) != rows:
        raise ValueError(f"{owner}: seeds must hold one seed per policy ({rows}).")
    seeds = [check_positive_int("seeds", s, minimum=0, maximum=2**31, owner=owner) for s in seeds]
    trace = [False] * rows if trace is None else list(trace)
    if len(trace) != rows or not all(isinstance(t, bool) for t in trace):
        raise TypeError(f"{owner}: trace must hold one bool per policy ({rows}).")
    if execute is not None:
        execute = check_positive_int("execute", execute, maximum=64, owner=owner)
    for policy in policies:
        if not isinstance(policy, AbstractPolicy):
            raise TypeError(f"{owner}: policies must be AbstractPolicy instances.")
    model = policies[0].adapter
    if not isinstance(model, TinyVLA) or any(p.adapter is not model for p in policies):
        raise TypeError(f"{owner}: every policy must act through the same TinyVLA.")
    bases = [_unwrapped(env) for env in envs]
    if len({id(b) for b in bases}) != rows:
        raise ValueError(f"{owner}: every row needs its own env instance.")

    obs, infos = [], []
    for policy, env, seed in zip(policies, envs, seeds, strict=True):
        o, info = env.reset(seed=seed)
        policy.reset()
        obs.append(o)
        infos.append(info)
    active = list(range(rows))
    queries = np.zeros(rows, dtype=np.int64)
    held_target = [False] * rows
    held_other = [False] * rows
    closest = [_distance(base) for base in bases]
    drift: list[list[float]] = [[] for _ in range(rows)]
    while active:
        batch_obs = [obs[i] for i in active]
        features = model.encode_observations(batch_obs)
        plans = [policies[i].plan(obs[i], features[k]) for k, i in enumerate(active)]
        scoring = [k for k, plan in enumerate(plans) if plan.score]
        if scoring:  # the oracle's dense scoring pass, then its pattern acts at the same step
            sub = [batch_obs[k] for k in scoring]
            _, captured = model.act_rows(
                sub, features[scoring], model.masks_of([None] * len(sub)), capture=True
            )
            for j, k in enumerate(scoring):
                pattern = policies[active[k]].scored(_row(captured, j))
                plans[k] = type(plans[k])(plans[k].features, pattern=pattern)
        patterns = [plan.pattern for plan in plans]
        capture = any(plan.capture for plan in plans)
        actions, captured = model.act_rows(
            batch_obs, features, model.masks_of(patterns), capture=capture
        )
        traced = [k for k, i in enumerate(active) if trace[i]]
        if traced:
            dense, _ = model.act_rows(
                [batch_obs[k] for k in traced],
                features[traced],
                model.masks_of([None] * len(traced)),
            )
            for j, k in enumerate(traced):
                gap = float(np.linalg.norm(actions[k, 0] - dense[j, 0]))
                drift[active[k]].append(gap)
        still = []
        for k, i in enumerate(active):
            row_capture = _row(captured, k) if plans[k].capture else None
            chunk = np.asarray(policies[i].commit(actions[k], row_capture), dtype=np.float64)
            queries[i] += 1
            done = False
            for action in chunk.reshape(-1, 3)[: execute or len(chunk)]:
                if envs[i] is bases[i]:  # no wrapper: draw only the frame the policy reads
                    _, terminated, truncated, infos[i] = bases[i]._advance(action)
                else:
                    obs[i], _, terminated, truncated, infos[i] = envs[i].step(action)
                state = bases[i]._state
                held_target[i] |= state["held"] == state["target"]
                held_other[i] |= state["held"] >= 0 and state["held"] != state["target"]
                closest[i] = min(closest[i], _distance(bases[i]))
                done = terminated or truncated
                if done:
                    break
            if not done:
                if envs[i] is bases[i]:
                    obs[i] = bases[i]._obs()
                still.append(i)
        active = still
    failure = [
        _failure(bases[i], infos[i]["success"], held_target[i], held_other[i], closest[i])
        for i in range(rows)
    ]
    return LockstepResult(
        success=np.asarray([bool(info["success"]) for info in infos]),
        length=np.asarray([int(info["t"]) for info in infos]),
        queries=queries,
        failure=failure,
        drift=drift,
        closest=np.asarray(closest),
    )


def _row(captured: Any, row: int) -> Any:
    """Row ``row`` of a batched capture, as the capture of a one-observation pass."""
    from icml26.ecovla.adapter import Capture

    return Capture(
        mlp={i: t[row : row + 1] for i, t in captured.mlp.items()},
        attn={i: t[row : row + 1] for i, t in captured.attn.items()},
    )
