"""``icml26/AmbiguousReach2D-v1``: continuous reach-and-hold among look-alikes (issue 41).

v0 (:mod:`icml26.scale.env`) is a lattice with an irreversible grip: any grip ends the episode,
so a behaviour-cloned policy never sees a recovery state and a non-argmax bin is a different
lattice move. v1 keeps the task (find the instructed colour among look-alike distractors, around
a wall) and makes exploration recoverable and actions continuous:

- the world is the unit square; positions and moves are continuous: the agent moves by
  ``0.08 * (dx, dy)`` (dx, dy in [-1, 1]) and slides along walls and borders;
- 3–5 objects (the target and 2–4 distractors); the target's hue is within ±4° of the
  instructed palette colour, the distractors' hue gaps straddle the discrimination limit
  (ID 8–30°, OOD-hue 5–12°), with Gaussian pixel noise;
- 0–1 wall segment across the agent–target line, so there are two routes around it;
- a reversible gripper: ``grip > 0`` lifts the nearest object within reach (0.06) if nothing is
  held (the held object moves with the agent), ``grip <= 0`` drops what is held;
- success: the target held at the end of 3 consecutive steps (``terminated``, reward 1);
  truncation after 60 steps.

Observation: ``{"image": uint8 (32, 32, 3), "instruction": palette id}``. By default an allocentric
view (``view="allocentric"``, 1 px = 1/32 of the world): objects are 3x3-px squares, the wall
grey, the agent a white 5x5-px ring whose inside shows the object it holds. ``view="egocentric"``
draws the same scene in a window of 2x2 world units centred on the agent (1 px = 1/16 of the
world, the whole world always in view, outside it reads as wall): the agent's ring always sits at
pixel (16, 16) and an object at offset (dx, dy) from the agent at pixel
(16 + floor(16 dx), 16 + floor(16 dy)) (column, row), as v0's observation is egocentric.
Actions (dx, dy, grip) in [-1, 1]^3, tokenised into OpenVLA's 256 bins by the policy.

:func:`expert_action` is the clean demonstrator (it knows the target): it releases a wrong
object, goes round the wall on the side drawn at reset, grips within reach and holds.
:func:`dart_rollout` executes it with noise (DART, Laskey et al. 2017): Gaussian noise on the
executed move and, in a share of the episodes, a detour that first grabs a distractor; every
visited state is labelled with the clean expert action, so the data hold recovery states.
"""

from __future__ import annotations

import colorsys
import math
from dataclasses import dataclass
from typing import Any, Literal

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from icml26.core.validation import check_array, check_in_interval, check_one_of, check_positive_int

__all__ = [
    "ENV_ID_V1",
    "SPLITS_V1",
    "VIEWS",
    "AmbiguousReach2DV1Env",
    "SplitSpecV1",
    "dart_rollout",
    "expert_action",
]

ENV_ID_V1 = "icml26/AmbiguousReach2D-v1"
IMAGE = 32  # pixels per side
EGO_SCALE = IMAGE // 2  # pixels per world unit of the egocentric window (2 x 2 world units)
VIEWS = ("allocentric", "egocentric")
STEP = 0.08  # world units per unit action
REACH = 0.06  # grip radius
HOLD_STEPS = 3
WALL_HALF = 0.02  # half thickness of the wall
CLEAR = 0.03  # the agent's clearance from walls
PALETTE_HUES = tuple(float(h) for h in range(0, 360, 45))


@dataclass(frozen=True)
class SplitSpecV1:
    """How a split draws its scenes: distractor hue gap (degrees), pixel noise, lighting."""

    hue_gap: tuple[float, float]
    noise: float
    light: tuple[float, float]


SPLITS_V1 = {
    "id": SplitSpecV1(hue_gap=(8.0, 30.0), noise=0.04, light=(0.9, 1.1)),
    "ood_hue": SplitSpecV1(hue_gap=(5.0, 12.0), noise=0.04, light=(0.9, 1.1)),
    "ood_noise": SplitSpecV1(hue_gap=(8.0, 30.0), noise=0.12, light=(0.5, 0.65)),
}


def _blocked(p: np.ndarray, wall: np.ndarray | None) -> bool:
    """Whether point ``p`` is outside the world or within the wall (inflated by CLEAR)."""
    if not (0.0 <= p[0] <= 1.0 and 0.0 <= p[1] <= 1.0):
        return True
    if wall is None:
        return False
    lo, hi = wall[:2] - CLEAR, wall[2:] + CLEAR
    return bool(np.all(p >= lo) and np.all(p <= hi))


def _crosses(a: np.ndarray, b: np.ndarray, wall: np.ndarray | None) -> bool:
    """Whether the segment a-b passes through the (inflated) wall (sampled every 0.005)."""
    if wall is None:
        return False
    s = np.linspace(0.0, 1.0, max(3, int(np.abs(b - a).max() / 0.005) + 2))[1:-1, None]
    points = a + (b - a) * s
    inside = (points >= wall[:2] - CLEAR) & (points <= wall[2:] + CLEAR)
    return bool(inside.all(axis=1).any())


class AmbiguousReach2DV1Env(gym.Env):
    """Continuous reach-and-hold of the instructed colour among look-alikes, round a wall.

    Parameters
    ----------
    split
        ``"id"``, ``"ood_hue"`` or ``"ood_noise"`` (see :data:`SPLITS_V1`).
    n_distractors
        Inclusive range of the number of distractors (default 2–4), within [0, 6].
    n_walls
        Inclusive range of the number of wall segments (default 0–1), within [0, 1].
    max_steps
        Steps before truncation (default 60), in [1, 1000].
    render_mode
        ``None`` or ``"rgb_array"`` (the noiseless image).
    view
        ``"allocentric"`` (default: the whole world, 1 px = 1/32) or ``"egocentric"`` (a 2x2
        world-unit window centred on the agent, 1 px = 1/16). The scenes, dynamics and random
        draws are the same; only the image differs.

    Examples
    --------
    >>> env = AmbiguousReach2DV1Env()
    >>> obs, info = env.reset(seed=0)
    >>> obs["image"].shape
    (32, 32, 3)
    >>> ego = AmbiguousReach2DV1Env(view="egocentric")
    >>> bool((ego.reset(seed=0)[0]["image"][16, 14] > 200).all())  # the agent's ring, centred
    True
    >>> obs, reward, terminated, truncated, info = env.step(expert_action(env))
    """

    metadata = {"render_modes": ["rgb_array"], "render_fps": 10}  # noqa: RUF012 (gymnasium API)

    def __init__(
        self,
        split: Literal["id", "ood_hue", "ood_noise"] = "id",
        n_distractors: tuple[int, int] = (2, 4),
        n_walls: tuple[int, int] = (0, 1),
        max_steps: int = 60,
        render_mode: Literal["rgb_array"] | None = None,
        view: Literal["allocentric", "egocentric"] = "allocentric",
    ) -> None:
        owner = "AmbiguousReach2DV1Env"
        self.split = check_one_of("split", split, tuple(SPLITS_V1), owner=owner)
        self.n_distractors = self._range("n_distractors", n_distractors, 6)
        self.n_walls = self._range("n_walls", n_walls, 1)
        self.max_steps = check_positive_int("max_steps", max_steps, owner=owner, maximum=1000)
        self.render_mode = check_one_of(
            "render_mode", render_mode, (None, "rgb_array"), owner=owner
        )
        self.view = check_one_of("view", view, VIEWS, owner=owner)
        self.observation_space = spaces.Dict(
            {
                "image": spaces.Box(0, 255, (IMAGE, IMAGE, 3), dtype=np.uint8),
                "instruction": spaces.Discrete(len(PALETTE_HUES)),
            }
        )
        self.action_space = spaces.Box(-1.0, 1.0, (3,), dtype=np.float32)
        self._scene: dict[str, Any] | None = None

    @staticmethod
    def _range(name: str, value: Any, maximum: int) -> tuple[int, int]:
        owner = "AmbiguousReach2DV1Env"
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
            "view": self.view,
        }

    # --- scene generation ---------------------------------------------------------------------

    def _wall(self, rng: np.random.Generator, agent: np.ndarray, target: np.ndarray):
        """A wall across the middle of the agent-target line, or None; and the detour side."""
        if int(rng.integers(self.n_walls[0], self.n_walls[1] + 1)) == 0:
            return None, 0
        mid = (agent + target) / 2
        across = 0 if abs(target[0] - agent[0]) >= abs(target[1] - agent[1]) else 1
        half = rng.uniform(0.12, 0.22)
        centre = mid[1 - across] + rng.uniform(-0.05, 0.05)
        lo, hi = np.empty(2), np.empty(2)
        lo[across], hi[across] = mid[across] - WALL_HALF, mid[across] + WALL_HALF
        lo[1 - across], hi[1 - across] = centre - half, centre + half
        wall = np.concatenate([np.clip(lo, 0, 1), np.clip(hi, 0, 1)])
        if _blocked(agent, wall) or _blocked(target, wall):
            return None, 0
        return wall, int(rng.choice([-1, 1]))

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        """Draw a new scene; returns ``(obs, info)``."""
        if seed is not None:
            check_positive_int(
                "seed", seed, owner="AmbiguousReach2DV1Env.reset", minimum=0, maximum=2**63 - 1
            )
        super().reset(seed=seed)
        rng = self.np_random
        spec = SPLITS_V1[self.split]
        instruction = int(rng.integers(len(PALETTE_HUES)))
        while True:
            agent, target = rng.uniform(0.08, 0.92, 2), rng.uniform(0.08, 0.92, 2)
            if np.linalg.norm(agent - target) >= 0.4:
                break
        wall, side = self._wall(rng, agent, target)
        objects = [target]
        n_distractors = int(rng.integers(self.n_distractors[0], self.n_distractors[1] + 1))
        for _ in range(500):
            if len(objects) > n_distractors:
                break
            p = rng.uniform(0.08, 0.92, 2)
            far = all(np.linalg.norm(p - q) >= 0.15 for q in objects)
            if far and np.linalg.norm(p - agent) >= 0.1 and not _blocked(p, wall):
                objects.append(p)
        base = PALETTE_HUES[instruction]
        hues = [base + rng.uniform(-4, 4)]
        hues += [base + rng.choice([-1, 1]) * rng.uniform(*spec.hue_gap) for _ in objects[1:]]
        self._scene = {
            "instruction": instruction,
            "agent": agent,
            "objects": np.array(objects),
            "hues": [h % 360 for h in hues],
            "wall": wall,
            "side": side,
            "held": -1,  # index of the held object, -1: none (object 0 is the target)
            "held_for": 0,
            "light": float(rng.uniform(*spec.light)),
            "t": 0,
        }
        return self._obs(), self._info()

    # --- dynamics -----------------------------------------------------------------------------

    def _move(self, p: np.ndarray, dx: float, dy: float) -> np.ndarray:
        """The point reached from ``p`` by the move (dx, dy) (slides along walls and borders)."""
        d = STEP * np.clip(np.array([dx, dy], dtype=float), -1.0, 1.0)
        for trial in (d, np.array([d[0], 0.0]), np.array([0.0, d[1]])):
            q = p + trial
            if not _blocked(q, self._scene["wall"]) and not _crosses(p, q, self._scene["wall"]):
                return q
        return p

    def step(self, action: np.ndarray):
        """Apply (dx, dy, grip); returns ``(obs, reward, terminated, truncated, info)``."""
        if self._scene is None:
            raise ValueError("AmbiguousReach2DV1Env.step: no action can be applied before reset().")
        a = check_array("action", action, owner="AmbiguousReach2DV1Env.step", shape=(3,))
        scene = self._scene
        scene["agent"] = self._move(scene["agent"], a[0], a[1])
        if scene["held"] >= 0:
            scene["objects"][scene["held"]] = scene["agent"]
        if a[2] > 0 and scene["held"] < 0:
            dist = np.linalg.norm(scene["objects"] - scene["agent"], axis=1)
            if dist.min() <= REACH:
                scene["held"] = int(dist.argmin())
                scene["objects"][scene["held"]] = scene["agent"]
        elif a[2] <= 0:
            scene["held"] = -1
        scene["held_for"] = scene["held_for"] + 1 if scene["held"] == 0 else 0
        scene["t"] += 1
        success = scene["held_for"] >= HOLD_STEPS
        truncated = not success and scene["t"] >= self.max_steps
        return self._obs(), float(success), success, truncated, self._info()

    # --- rendering ----------------------------------------------------------------------------

    def _canvas(self) -> np.ndarray:
        scene = self._scene
        if self.view == "allocentric":
            img = np.full((IMAGE, IMAGE, 3), 0.1)

            def px(p: np.ndarray) -> tuple[int, int]:
                # the pixel of each coordinate, clamped to the image (plain floats: np.clip per
                # point was a third of the render)
                return tuple(min(max(int(float(v) * IMAGE), 0), IMAGE - 1) for v in p)

        else:
            centre = [float(v) for v in scene["agent"]]

            def px(p: np.ndarray) -> tuple[int, int]:
                # the agent at pixel IMAGE // 2; offsets of up to 1 world unit stay in view
                return tuple(
                    min(max(IMAGE // 2 + math.floor(EGO_SCALE * (float(v) - c)), 0), IMAGE - 1)
                    for v, c in zip(p, centre, strict=True)
                )

            img = np.full((IMAGE, IMAGE, 3), 0.5)  # outside the world reads as wall
            # the world's pixels: from the one of world coordinate 0 to the one before 1's
            x0, x1, y0, y1 = (
                min(max(IMAGE // 2 + math.floor(EGO_SCALE * (edge - c)), 0), IMAGE)
                for c in centre
                for edge in (0.0, 1.0)
            )
            img[y0:y1, x0:x1] = 0.1

        if scene["wall"] is not None:
            (x0, y0), (x1, y1) = px(scene["wall"][:2]), px(scene["wall"][2:])
            img[y0 : y1 + 1, x0 : x1 + 1] = 0.5
        colours = [colorsys.hsv_to_rgb(h / 360.0, 0.85, 0.95) for h in scene["hues"]]
        for i, (p, colour) in enumerate(zip(scene["objects"], colours, strict=True)):
            if i != scene["held"]:
                x, y = px(p)
                img[max(y - 1, 0) : y + 2, max(x - 1, 0) : x + 2] = colour
        x, y = px(scene["agent"])
        ring = img[max(y - 2, 0) : y + 3, max(x - 2, 0) : x + 3]
        inner = ring[1:-1, 1:-1].copy()
        ring[:] = 1.0
        ring[1:-1, 1:-1] = colours[scene["held"]] if scene["held"] >= 0 else inner
        img *= scene["light"]
        return img

    def _obs(self) -> dict[str, Any]:
        # in place, in the order of clip(canvas + noise) * 255 rounded (the same bits)
        image = self.np_random.normal(0.0, SPLITS_V1[self.split].noise, (IMAGE, IMAGE, 3))
        image += self._canvas()
        np.clip(image, 0.0, 1.0, out=image)
        image *= 255
        np.rint(image, out=image)
        return {"image": image.astype(np.uint8), "instruction": self._scene["instruction"]}

    def _info(self) -> dict[str, Any]:
        scene = self._scene
        return {
            "success": scene["held_for"] >= HOLD_STEPS,
            "held": scene["held"],
            "distance": float(np.linalg.norm(scene["agent"] - scene["objects"][0])),
        }

    def render(self) -> np.ndarray | None:
        """The noiseless scene as uint8 RGB (``render_mode="rgb_array"``)."""
        if self.render_mode != "rgb_array" or self._scene is None:
            return None
        return (np.clip(self._canvas(), 0, 1) * 255).round().astype(np.uint8)


def _scene_of(env: gym.Env, owner: str) -> tuple[AmbiguousReach2DV1Env, dict[str, Any]]:
    base = getattr(env, "unwrapped", env)
    if not isinstance(base, AmbiguousReach2DV1Env):
        raise TypeError(f"{owner}: env must be an AmbiguousReach2DV1Env; got {type(env).__name__}.")
    if base._scene is None:
        raise ValueError(f"{owner}: env must be reset first.")
    return base, base._scene


def _go(scene: dict[str, Any], goal: np.ndarray) -> np.ndarray:
    """(dx, dy) towards ``goal``, round the wall on the scene's side when it is in the way.

    Round the wall: to the corner beyond the wall's end on the agent's face, then to the
    corner on the far face, then to the goal (each leg is in the clear).
    """
    p, wall = scene["agent"], scene["wall"]
    if _crosses(p, goal, wall):
        across = 0 if wall[2] - wall[0] < wall[3] - wall[1] else 1  # the thin axis
        along = 1 - across
        margin = CLEAR + 0.04
        ends = (wall[along] - margin, wall[along + 2] + margin)
        end = ends[1] if scene["side"] > 0 else ends[0]
        if not 0.02 <= end <= 0.98:
            end = ends[0] if scene["side"] > 0 else ends[1]
        centre = (wall[across] + wall[across + 2]) / 2
        far = 1.0 if goal[across] >= centre else -1.0  # the goal's face
        corners = []
        for face in (-far, far):
            c = np.empty(2)
            c[along], c[across] = end, centre + face * (WALL_HALF + margin)
            corners.append(np.clip(c, 0.0, 1.0))
        goal = corners[1] if not _crosses(p, corners[1], wall) else corners[0]
    d = (goal - p) / STEP
    return d / max(1.0, float(np.abs(d).max()))


def expert_action(env: gym.Env, goal: int = 0) -> np.ndarray:
    """The clean demonstrator's action (dx, dy, grip) for object ``goal`` (0: the target).

    It drops a wrong object, goes to ``goal`` (round the wall on the side drawn at reset),
    grips once within reach and keeps gripping. Deterministic given the env state.

    Examples
    --------
    >>> env = AmbiguousReach2DV1Env(n_walls=(1, 1))
    >>> _ = env.reset(seed=1)
    >>> for _ in range(60):
    ...     _, reward, done, truncated, _ = env.step(expert_action(env))
    ...     if done or truncated:
    ...         break
    >>> reward
    1.0
    """
    _, scene = _scene_of(env, "expert_action")
    if scene["held"] == goal:
        return np.array([0.0, 0.0, 1.0], dtype=np.float32)
    if scene["held"] >= 0:
        return np.array([0.0, 0.0, -1.0], dtype=np.float32)
    move = _go(scene, scene["objects"][goal])
    after = scene["agent"] + STEP * move
    near = np.linalg.norm(after - scene["objects"][goal]) <= REACH * 0.8
    return np.array([move[0], move[1], 1.0 if near else -1.0], dtype=np.float32)


def dart_rollout(
    env: gym.Env,
    rng: np.random.Generator,
    noise: float = 0.3,
    detour: float = 0.3,
) -> tuple[list[dict[str, Any]], list[np.ndarray], float]:
    """One episode of the noisy expert (DART); returns observations, clean labels, reward.

    The executed move is the clean expert's plus Gaussian noise of std ``noise``; with
    probability ``detour`` the executor first goes to a random distractor, grips it and holds
    it for 1–3 steps before following the expert (who lets go). Every visited observation is
    labelled with :func:`expert_action` for the target. ``env`` must be reset.

    Examples
    --------
    >>> env = AmbiguousReach2DV1Env()
    >>> obs, _ = env.reset(seed=0)
    >>> observations, labels, reward = dart_rollout(env, np.random.default_rng(0))
    >>> len(observations) == len(labels), reward
    (True, 1.0)
    """
    base, scene = _scene_of(env, "dart_rollout")
    noise = check_in_interval("noise", noise, low=0.0, high=2.0, owner="dart_rollout")
    detour = check_in_interval("detour", detour, low=0.0, high=1.0, owner="dart_rollout")
    obs = base._obs()
    goal = int(rng.integers(1, len(scene["objects"]))) if rng.random() < detour else 0
    goal = goal if len(scene["objects"]) > 1 else 0
    hold = int(rng.integers(1, 4))
    observations, labels, reward = [], [], 0.0
    while True:
        label = expert_action(base)
        if goal and scene["held"] == goal:
            hold -= 1
            goal = goal if hold > 0 else 0
        executed = expert_action(base, goal) if goal else label.copy()
        executed[:2] = np.clip(executed[:2] + rng.normal(0.0, noise, 2), -1.0, 1.0)
        observations.append(obs)
        labels.append(label)
        obs, reward, terminated, truncated, _ = base.step(executed)
        if terminated or truncated:
            return observations, labels, float(reward)


def register_env_v1() -> None:
    """Register ``icml26/AmbiguousReach2D-v1`` with gymnasium (idempotent)."""
    if ENV_ID_V1 not in gym.registry:
        gym.register(id=ENV_ID_V1, entry_point=AmbiguousReach2DV1Env)


register_env_v1()
