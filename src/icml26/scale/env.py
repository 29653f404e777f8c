"""``icml26/AmbiguousReach2D-v0``: reach and grasp the instructed colour among look-alikes.

A procedural numpy task with the Gymnasium ``Env`` API, built to hold the two phenomena SCALE
targets. *Perceptual ambiguity*: the target (hue within ±4° of the instructed palette colour) sits
among 2–4 distractors whose hues differ from it by only 18–30° (ID), with Gaussian pixel noise.
*Action multimodality*: 0–2 wall segments across the agent–target line give two routes; the
scripted expert picks a side at random per wall (the other route is blocked for it), so the
demonstrations are multimodal.

The world is a 12x12 lattice of cells: objects fill a cell, walls are grey cells. The observation
is egocentric: a 24x24-cell window centred on the agent's cell, 2 px per cell (48x48 RGB), so
the agent always sits at pixels [24:26, 24:26] and the cell it stands on shows there; outside the
world reads as wall. ``render()`` draws the allocentric view (4 px per cell, the agent a white
ring). Observation: ``{"image": uint8 (48, 48, 3), "instruction": palette id}``.
Action: (dx, dy, grip) in [-1, 1]^3;
the agent moves round(dx), round(dy) cells (8-connected; a blocked move slides along the free axis
or stays), and grip > 0 closes the gripper and ends the episode: success iff the agent is on the
target's cell (within 2 px of it). Timeout after 30 steps is a failure.

Splits: ``"id"``; ``"ood_hue"`` (unseen, closer hue gaps 9–15°); ``"ood_noise"`` (noise sigma
0.12 instead of 0.04 and lighting 0.5–0.65 instead of 0.9–1.1).
"""

from __future__ import annotations

import colorsys
import math
from dataclasses import dataclass
from typing import Any, Literal

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from icml26.core.validation import check_array, check_one_of, check_positive_int

__all__ = [
    "ENV_ID",
    "LEGACY_ENV_ID",
    "PALETTE_HUES",
    "SPLITS",
    "AmbiguousReach2DEnv",
    "SplitSpec",
    "scripted_expert",
]

ENV_ID = "icml26/AmbiguousReach2D-v0"
LEGACY_ENV_ID = "AmbiguousReach2D-v0"  # the id before the icml26/ namespace (issue 49): an alias
CELL, GRID = 4, 12
EGO_PX = 2  # pixels per cell of the egocentric observation (24 x 24 cells)
SIZE = CELL * GRID
PALETTE_HUES = tuple(float(h) for h in range(0, 360, 45))  # 8 instructed colours, degrees
_MOVES = [(mx, my) for mx in (-1, 0, 1) for my in (-1, 0, 1) if mx or my]


@dataclass(frozen=True)
class SplitSpec:
    """How a split draws its scenes: hue gap of the distractors (degrees), noise, lighting."""

    hue_gap: tuple[float, float]
    noise: float
    light: tuple[float, float]


SPLITS = {
    "id": SplitSpec(hue_gap=(18.0, 30.0), noise=0.04, light=(0.9, 1.1)),
    "ood_hue": SplitSpec(hue_gap=(9.0, 15.0), noise=0.04, light=(0.9, 1.1)),
    "ood_noise": SplitSpec(hue_gap=(18.0, 30.0), noise=0.12, light=(0.5, 0.65)),
}


def _distance_field(free: np.ndarray, goal: tuple[int, int]) -> np.ndarray:
    """Octile shortest-path length from every free cell to ``goal`` (x, y); inf if cut off."""
    D = np.full(free.shape, np.inf)
    D[goal[1], goal[0]] = 0.0
    while True:
        padded = np.pad(D, 1, constant_values=np.inf)
        best = D
        for dx, dy in _MOVES:
            neighbour = padded[1 + dy : 1 + dy + GRID, 1 + dx : 1 + dx + GRID]
            best = np.minimum(best, neighbour + math.hypot(dx, dy))
        best = np.where(free, best, np.inf)
        if np.array_equal(best, D):
            return D
        D = best


def _chebyshev(p: tuple[int, int], q: tuple[int, int]) -> int:
    return max(abs(p[0] - q[0]), abs(p[1] - q[1]))


class AmbiguousReach2DEnv(gym.Env):
    """Reach and grasp the instructed colour among look-alike distractors, around walls.

    Parameters
    ----------
    split
        ``"id"``, ``"ood_hue"`` or ``"ood_noise"`` (see :data:`SPLITS`).
    n_distractors
        Inclusive range of the number of distractors (default 2–4), within [0, 8].
    n_walls
        Inclusive range of the number of wall segments (default 0–2), within [0, 3].
    max_steps
        Steps before truncation, in [1, 1000].
    render_mode
        ``None`` or ``"rgb_array"`` (the noiseless image).

    Examples
    --------
    >>> env = AmbiguousReach2DEnv()
    >>> obs, info = env.reset(seed=0)
    >>> obs["image"].shape, obs["image"].dtype
    ((48, 48, 3), dtype('uint8'))
    >>> obs, reward, terminated, truncated, info = env.step(scripted_expert(env))
    """

    metadata = {"render_modes": ["rgb_array"], "render_fps": 10}  # noqa: RUF012 (gymnasium API)

    def __init__(
        self,
        split: Literal["id", "ood_hue", "ood_noise"] = "id",
        n_distractors: tuple[int, int] = (2, 4),
        n_walls: tuple[int, int] = (0, 2),
        max_steps: int = 30,
        render_mode: Literal["rgb_array"] | None = None,
    ) -> None:
        owner = "AmbiguousReach2DEnv"
        self.split = check_one_of("split", split, tuple(SPLITS), owner=owner)
        self.n_distractors = self._range("n_distractors", n_distractors, 8)
        self.n_walls = self._range("n_walls", n_walls, 3)
        self.max_steps = check_positive_int("max_steps", max_steps, owner=owner, maximum=1000)
        self.render_mode = check_one_of(
            "render_mode", render_mode, (None, "rgb_array"), owner=owner
        )
        self.observation_space = spaces.Dict(
            {
                "image": spaces.Box(0, 255, (SIZE, SIZE, 3), dtype=np.uint8),
                "instruction": spaces.Discrete(len(PALETTE_HUES)),
            }
        )
        self.action_space = spaces.Box(-1.0, 1.0, (3,), dtype=np.float32)
        self._scene: dict[str, Any] | None = None

    @staticmethod
    def _range(name: str, value: Any, maximum: int) -> tuple[int, int]:
        owner = "AmbiguousReach2DEnv"
        if not isinstance(value, (tuple, list)) or len(value) != 2:
            raise TypeError(f"{owner}: {name} must be a (low, high) pair; got {value!r}.")
        low, high = (
            check_positive_int(name, v, owner=owner, minimum=0, maximum=maximum) for v in value
        )
        if low > high:
            raise ValueError(f"{owner}: {name} must have low <= high; got {value!r}.")
        return low, high

    def kwargs(self) -> dict[str, Any]:
        """The constructor arguments (to build identical copies)."""
        return {
            "split": self.split,
            "n_distractors": self.n_distractors,
            "n_walls": self.n_walls,
            "max_steps": self.max_steps,
        }

    # --- scene generation ---------------------------------------------------------------------

    def _walls(self, rng: np.random.Generator, agent, target) -> np.ndarray:
        """Wall cells: segments of 3–5 cells across the agent-target line."""
        walls = np.zeros((GRID, GRID), dtype=bool)
        n = int(rng.integers(self.n_walls[0], self.n_walls[1] + 1))
        a, t = np.array(agent, float), np.array(target, float)
        vertical = abs(t[0] - a[0]) >= abs(t[1] - a[1])  # mostly horizontal travel: vertical wall
        for i in range(n):
            mid = a + ((i + 1) / (n + 1) + rng.uniform(-0.1, 0.1)) * (t - a)
            length = int(rng.integers(3, 6))
            start = round(float(mid[1 if vertical else 0]) - length / 2 + rng.uniform(-1, 1))
            across = np.clip(np.arange(start, start + length), 0, GRID - 1)
            along = int(np.clip(round(float(mid[0 if vertical else 1])), 0, GRID - 1))
            cells = [(along, c) if vertical else (c, along) for c in across]
            if all(_chebyshev(cell, p) >= 1 for cell in cells for p in (agent, target)):
                for x, y in cells:
                    walls[y, x] = True
        return walls

    def _expert_field(self, rng, walls, agent, target) -> np.ndarray:
        """Distance field of the expert's route: around each wall one side is blocked at random."""
        blocked = walls.copy()
        labels = self._segments(walls)
        for cells in labels:
            xs, ys = zip(*cells, strict=True)
            vertical = len(set(xs)) == 1
            side = rng.integers(2)
            trial = blocked.copy()
            if vertical:
                x = xs[0]
                span = range(0, min(ys)) if side else range(max(ys) + 1, GRID)
                trial[list(span), x] = True
            else:
                y = ys[0]
                span = range(0, min(xs)) if side else range(max(xs) + 1, GRID)
                trial[y, list(span)] = True
            ends_free = not trial[agent[1], agent[0]] and not trial[target[1], target[0]]
            if ends_free and np.isfinite(_distance_field(~trial, target)[agent[1], agent[0]]):
                blocked = trial
        return _distance_field(~blocked, target)

    @staticmethod
    def _segments(walls: np.ndarray) -> list[list[tuple[int, int]]]:
        """Straight wall segments as lists of (x, y) cells (4-connected runs)."""
        seen, segments = set(), []
        for y, x in zip(*np.nonzero(walls), strict=True):
            if (x, y) in seen:
                continue
            run, stack = [], [(int(x), int(y))]
            while stack:
                c = stack.pop()
                if (
                    c in seen
                    or not (0 <= c[0] < GRID and 0 <= c[1] < GRID)
                    or not walls[c[1], c[0]]
                ):
                    continue
                seen.add(c)
                run.append(c)
                stack += [(c[0] + 1, c[1]), (c[0] - 1, c[1]), (c[0], c[1] + 1), (c[0], c[1] - 1)]
            xs, ys = {c[0] for c in run}, {c[1] for c in run}
            if len(xs) == 1 or len(ys) == 1:  # crossing segments are left unblocked
                segments.append(run)
        return segments

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        """Draw a new scene; returns ``(obs, info)``."""
        if seed is not None:
            check_positive_int(
                "seed", seed, owner="AmbiguousReach2DEnv.reset", minimum=0, maximum=2**63 - 1
            )
        super().reset(seed=seed)
        rng = self.np_random
        spec = SPLITS[self.split]
        instruction = int(rng.integers(len(PALETTE_HUES)))
        while True:
            agent = (int(rng.integers(GRID)), int(rng.integers(GRID)))
            target = (int(rng.integers(GRID)), int(rng.integers(GRID)))
            if _chebyshev(agent, target) >= 4:
                break
        walls = self._walls(rng, agent, target)
        objects = [target]
        n_distractors = int(rng.integers(self.n_distractors[0], self.n_distractors[1] + 1))
        for _ in range(200):
            if len(objects) > n_distractors:
                break
            p = (int(rng.integers(GRID)), int(rng.integers(GRID)))
            if not walls[p[1], p[0]] and p != agent and all(_chebyshev(p, q) >= 2 for q in objects):
                objects.append(p)
        base = PALETTE_HUES[instruction]
        hues = [base + rng.uniform(-4, 4)]
        for _ in objects[1:]:
            hues.append(base + rng.choice([-1, 1]) * rng.uniform(*spec.hue_gap))
        self._scene = {
            "instruction": instruction,
            "agent": agent,
            "target": target,
            "objects": objects,
            "hues": [h % 360 for h in hues],
            "walls": walls,
            "expert_field": self._expert_field(rng, walls, agent, target),
            "light": float(rng.uniform(*spec.light)),
            "t": 0,
        }
        return self._obs(), self._info(False)

    # --- dynamics -----------------------------------------------------------------------------

    def _free(self, p: tuple[int, int]) -> bool:
        return 0 <= p[0] < GRID and 0 <= p[1] < GRID and not self._scene["walls"][p[1], p[0]]

    def _move(self, position: tuple[int, int], dx: float, dy: float) -> tuple[int, int]:
        """The cell reached from ``position`` by the move (dx, dy) (slides along walls)."""
        m = (round(float(np.clip(dx, -1, 1))), round(float(np.clip(dy, -1, 1))))
        for trial in (m, (m[0], 0), (0, m[1])):
            q = (position[0] + trial[0], position[1] + trial[1])
            if self._free(q):
                return q
        return position

    def step(self, action: np.ndarray):
        """Apply (dx, dy, grip); returns ``(obs, reward, terminated, truncated, info)``."""
        if self._scene is None:
            raise ValueError("AmbiguousReach2DEnv.step: no action can be applied before reset().")
        a = check_array("action", action, owner="AmbiguousReach2DEnv.step", shape=(3,))
        scene = self._scene
        scene["agent"] = self._move(scene["agent"], a[0], a[1])
        scene["t"] += 1
        gripped = bool(a[2] > 0)
        success = gripped and scene["agent"] == scene["target"]
        truncated = not gripped and scene["t"] >= self.max_steps
        return self._obs(), float(success), gripped, truncated, self._info(success)

    # --- rendering ----------------------------------------------------------------------------

    def _cells(self) -> np.ndarray:
        """Colour of every world cell, (GRID, GRID, 3): background, walls, objects."""
        scene = self._scene
        cells = np.full((GRID, GRID, 3), 0.1)
        cells[scene["walls"]] = 0.5
        for (x, y), hue in zip(scene["objects"], scene["hues"], strict=True):
            cells[y, x] = colorsys.hsv_to_rgb(hue / 360.0, 0.85, 0.95)
        return cells

    def _egocentric(self) -> np.ndarray:
        """The observation: a (2 GRID)-cell window centred on the agent, 2 px per cell."""
        x, y = self._scene["agent"]
        window = np.full((2 * GRID, 2 * GRID, 3), 0.5)  # outside the world reads as wall
        window[GRID - y : 2 * GRID - y, GRID - x : 2 * GRID - x] = self._cells()
        return window.repeat(EGO_PX, axis=0).repeat(EGO_PX, axis=1) * self._scene["light"]

    def _canvas(self) -> np.ndarray:
        """Allocentric view for people: 4 px per cell, the agent a white ring."""
        img = self._cells().repeat(CELL, axis=0).repeat(CELL, axis=1)
        x, y = self._scene["agent"]
        ring = np.ones((CELL, CELL), dtype=bool)
        ring[1:-1, 1:-1] = False  # the ring's inside shows the object under the agent
        img[y * CELL : (y + 1) * CELL, x * CELL : (x + 1) * CELL][ring] = 1.0
        return img * self._scene["light"]

    def _obs(self) -> dict[str, Any]:
        noise = self.np_random.normal(0.0, SPLITS[self.split].noise, (SIZE, SIZE, 3))
        image = np.clip(self._egocentric() + noise, 0.0, 1.0)
        return {
            "image": (image * 255).round().astype(np.uint8),
            "instruction": self._scene["instruction"],
        }

    def _info(self, success: bool) -> dict[str, Any]:
        scene = self._scene
        return {"success": success, "agent": scene["agent"], "target": scene["target"]}

    def render(self) -> np.ndarray | None:
        """The noiseless scene as uint8 RGB (``render_mode="rgb_array"``)."""
        if self.render_mode != "rgb_array" or self._scene is None:
            return None
        return (np.clip(self._canvas(), 0, 1) * 255).round().astype(np.uint8)


def scripted_expert(env: gym.Env) -> np.ndarray:
    """The demonstrator's action in the env's current state: (dx, dy, grip) in {-1, 0, 1}^3.

    It steps to the neighbouring cell that most shortens its route (one side of each wall,
    drawn at reset) and grips in the step that lands on the target. Deterministic given the
    env state.

    Examples
    --------
    >>> env = AmbiguousReach2DEnv(n_walls=(1, 1))
    >>> _ = env.reset(seed=1)
    >>> done = False
    >>> while not done:
    ...     _, reward, done, truncated, _ = env.step(scripted_expert(env))
    ...     done = done or truncated
    >>> reward
    1.0
    """
    base = getattr(env, "unwrapped", env)
    if not isinstance(base, AmbiguousReach2DEnv):
        raise TypeError(
            f"scripted_expert: env must be an AmbiguousReach2DEnv; got {type(env).__name__}."
        )
    scene = base._scene
    if scene is None:
        raise ValueError("scripted_expert: env must be reset first.")
    p, D = scene["agent"], scene["expert_field"]
    best, best_d = (0, 0), D[p[1], p[0]]
    for m in _MOVES:
        q = (p[0] + m[0], p[1] + m[1])
        if base._free(q) and D[q[1], q[0]] < best_d - 1e-9:
            best, best_d = m, D[q[1], q[0]]
    grip = 1.0 if (p[0] + best[0], p[1] + best[1]) == scene["target"] else -1.0
    return np.array([best[0], best[1], grip], dtype=np.float32)


def _legacy(**kwargs: Any) -> AmbiguousReach2DEnv:
    """``gym.make("AmbiguousReach2D-v0")``: the same env, with a deprecation warning."""
    import warnings

    warnings.warn(
        f"{LEGACY_ENV_ID!r} is deprecated; use {ENV_ID!r} (the project's icml26/ namespace).",
        DeprecationWarning,
        stacklevel=2,
    )
    return AmbiguousReach2DEnv(**kwargs)


def register_env() -> None:
    """Register ``icml26/AmbiguousReach2D-v0`` and its old id as an alias (idempotent)."""
    if ENV_ID not in gym.registry:
        gym.register(id=ENV_ID, entry_point=AmbiguousReach2DEnv)
    if LEGACY_ENV_ID not in gym.registry:
        gym.register(id=LEGACY_ENV_ID, entry_point=_legacy)


register_env()
