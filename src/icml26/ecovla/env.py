"""``Shift2DPickPlace-v0``: a non-stationary, numpy-rendered pick-and-place task (spec §5).

A gripper must reach the instructed object (one of three coloured shapes), grasp it, carry it to
the instructed goal pad (one of two) and release it there. The scene changes mid-episode on
purpose: at a random step the background switches to a texture crop (``skimage.data`` brick,
grass or gravel) under new lighting (brightness/contrast), and a look-alike distractor appears;
task phases (reach / carry / place) change which cues matter. Splits:

* ``"clean"``: default background and lighting throughout (the initial-phase distribution);
* ``"train"``: texture/lighting combinations T0-L0, T1-L1, T2-L2 after the switch;
* ``"shift"``: the six other combinations (absent from training and calibration), and the
  distractor drifts.

Tasks (``task=``, issue 42's multi-task pre-training data): ``"pick_place"`` (the default and the
only task evaluated), ``"touch"`` (grasp the instructed object: success the moment it is held)
and ``"push"`` (the gripper never grasps; it shoves every object within ``GRASP_RADIUS`` out to
that distance, and success is the instructed object within ``PAD_RADIUS`` of the instructed pad).
The task changes neither the layout draws nor the observation.

Observations are a dict: ``image`` (64, 64, 3) uint8, ``instruction`` (object id, goal id) and
``proprio`` (gripper x, y in [0, 1] and grip state ±1). Actions are (dx, dy, grip) in [-1, 1]:
the gripper moves by ``MAX_STEP`` times (dx, dy); grip > 0 closes it. Closing within
``GRASP_RADIUS`` of an object grasps the nearest one; opening drops it. Success: the instructed
object released within ``PAD_RADIUS`` of the instructed pad's centre (reward 1, terminated).

Deviations: the spec's sketch is followed; sizes, radii, colours, the lighting values and the
shift-step range are this implementation's choices.
"""

from __future__ import annotations

import functools
from typing import Any, ClassVar, Literal, final

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from icml26.core.validation import (
    check_in_interval,
    check_one_of,
    check_positive_int,
    numpy_generator,
)
from icml26.ecovla._inputs import check_seed

__all__ = ["TASKS", "Shift2DPickPlaceEnv", "scripted_expert"]

ENV_ID = "Shift2DPickPlace-v0"
SPLITS = ("clean", "train", "shift")
TASKS = ("pick_place", "touch", "push")
MAX_STEP = 0.03
SLOWDOWN = 0.09  # the expert moves proportionally to the distance within this radius
GRASP_RADIUS = 0.07
PAD_RADIUS = 0.09
RING_INNER = PAD_RADIUS - 1.6 / 64  # pad rings are about 1.6 pixels wide at 64 x 64
MIN_SEPARATION = 0.2
LAYOUT_BLOCK = 64  # layout draws tested per batch
TEXTURES = ("brick", "grass", "gravel")
TINTS = ((0.85, 0.45, 0.35), (0.4, 0.75, 0.35), (0.6, 0.6, 0.65))
LIGHTING = ((0.7, 0.8), (1.3, 1.1), (1.0, 1.6))  # (brightness, contrast) L0, L1, L2
OBJECT_COLOURS = ((0.9, 0.1, 0.1), (0.1, 0.8, 0.2), (0.15, 0.3, 0.95))  # square, disk, triangle
PAD_COLOURS = ((0.95, 0.85, 0.1), (0.1, 0.9, 0.9))
DISTRACTOR_COLOUR = (0.8, 0.35, 0.15)  # an orange square: looks like the red square
BACKGROUND = (0.45, 0.45, 0.5)
TRAIN_COMBOS = tuple((i, i) for i in range(3))
SHIFT_COMBOS = tuple((t, light) for t in range(3) for light in range(3) if t != light)


@functools.lru_cache(maxsize=1)
def _textures() -> tuple[np.ndarray, ...]:
    """The three ``skimage.data`` textures, downsampled 2x to 256 x 256, in [0, 1]."""
    from skimage import data

    out = []
    for name in TEXTURES:
        img = getattr(data, name)().astype(np.float32)
        img = img.reshape(256, 2, 256, 2).mean(axis=(1, 3))
        out.append((img - img.min()) / max(float(np.ptp(img)), 1e-6))
    return tuple(out)


@final
class Shift2DPickPlaceEnv(gym.Env):
    """Pick-and-place under mid-episode background, lighting and distractor shifts.

    Parameters
    ----------
    split
        ``"clean"``, ``"train"`` or ``"shift"`` (see the module docstring).
    max_steps
        Episode length limit (truncation), at most 1000.
    image_size
        Rendered image side in pixels (multiple of 8, 16 to 256).
    render_mode
        ``None`` or ``"rgb_array"``.
    task
        ``"pick_place"``, ``"touch"`` or ``"push"`` (see the module docstring).

    Examples
    --------
    >>> env = Shift2DPickPlaceEnv(split="shift")
    >>> obs, info = env.reset(seed=0)
    >>> obs["image"].shape, obs["image"].dtype.name
    ((64, 64, 3), 'uint8')
    >>> expert = scripted_expert(env, noise=0.0)
    >>> done = False
    >>> while not done:
    ...     obs, reward, terminated, truncated, info = env.step(expert(obs))
    ...     done = terminated or truncated
    >>> info["success"]
    True
    """

    metadata: ClassVar[dict[str, Any]] = {"render_modes": ["rgb_array"], "render_fps": 10}

    def __init__(
        self,
        split: Literal["clean", "train", "shift"] = "train",
        max_steps: int = 80,
        image_size: int = 64,
        render_mode: str | None = None,
        task: Literal["pick_place", "touch", "push"] = "pick_place",
    ) -> None:
        owner = "Shift2DPickPlaceEnv"
        self.split = check_one_of("split", split, SPLITS, owner=owner)
        self.task = check_one_of("task", task, TASKS, owner=owner)
        self.max_steps = check_positive_int("max_steps", max_steps, maximum=1000, owner=owner)
        self.image_size = check_positive_int(
            "image_size", image_size, minimum=16, maximum=256, owner=owner
        )
        if self.image_size % 8:
            raise ValueError(f"{owner}: image_size must be a multiple of 8; got {image_size}.")
        self.render_mode = check_one_of(
            "render_mode", render_mode, (None, "rgb_array"), owner=owner
        )
        n = self.image_size
        self.observation_space = spaces.Dict(
            {
                "image": spaces.Box(0, 255, (n, n, 3), np.uint8),
                "instruction": spaces.MultiDiscrete([3, 2]),
                "proprio": spaces.Box(-1.0, 1.0, (3,), np.float32),
            }
        )
        self.action_space = spaces.Box(-1.0, 1.0, (3,), np.float32)
        yy, xx = np.mgrid[0:n, 0:n].astype(np.float32)
        self._grid = ((xx + 0.5) / n, (yy + 0.5) / n)
        self._state: dict[str, Any] = {}
        self._new_episode(np.random.default_rng(0))  # a valid scene before the first reset

    # --- episode ----------------------------------------------------------------------------

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        """Start an episode: random layout, instruction, shift step and shift combination."""
        check_seed(seed, "Shift2DPickPlaceEnv.reset")
        if options is not None and not isinstance(options, dict):
            raise TypeError(
                f"Shift2DPickPlaceEnv.reset: options must be a dict or None; got "
                f"{type(options).__name__}."
            )
        super().reset(seed=seed)
        self._new_episode(self.np_random)
        return self._obs(), self._info()

    def _new_episode(self, rng: np.random.Generator) -> None:
        points = self._layout(rng, 7)  # gripper, 3 objects, 2 pads, distractor
        combos = TRAIN_COMBOS if self.split == "train" else SHIFT_COMBOS
        texture, light = combos[int(rng.integers(len(combos)))]
        crop = rng.integers(0, 256 - self.image_size, size=2)
        tex = _textures()[texture][
            crop[0] : crop[0] + self.image_size, crop[1] : crop[1] + self.image_size
        ]
        shifted_bg = (0.35 + 0.65 * tex)[..., None] * np.asarray(TINTS[texture], np.float32)
        self._state = {
            "gripper": points[0].copy(),
            "closed": False,
            "held": -1,
            "objects": points[1:4].copy(),
            "pads": points[4:6].copy(),
            "distractor": points[6].copy(),
            "drift": rng.normal(0.0, 0.01, size=2),
            "target": int(rng.integers(3)),
            "goal": int(rng.integers(2)),
            "shift_step": int(rng.integers(5, 21)) if self.split != "clean" else None,
            "shifted_bg": shifted_bg.astype(np.float32),
            "lighting": LIGHTING[light],
            "t": 0,
            "canvas": {},  # background + pads, by phase (before / after the shift)
        }

    def _layout(self, rng: np.random.Generator, n: int) -> np.ndarray:
        """n points at least ``MIN_SEPARATION`` apart: the first accepted of a sequence of
        uniform draws (rejection sampling; ~120 draws for 7 points)."""
        while True:
            # a block of draws tested at once; the generator is then rewound and moved to just
            # after the accepted draw, so that it stands where draw-by-draw sampling leaves it
            state = rng.bit_generator.state
            block = rng.uniform(0.12, 0.88, size=(LAYOUT_BLOCK, n, 2))
            gaps = np.linalg.norm(block[:, :, None] - block[:, None], axis=-1) + np.eye(n)
            accepted = np.flatnonzero(gaps.reshape(LAYOUT_BLOCK, -1).min(axis=1) >= MIN_SEPARATION)
            if accepted.size:
                rng.bit_generator.state = state
                return rng.uniform(0.12, 0.88, size=(accepted[0] + 1, n, 2))[-1]

    @property
    def shifted(self) -> bool:
        """Whether the background/lighting switch has happened."""
        s = self._state
        return s["shift_step"] is not None and s["t"] >= s["shift_step"]

    def step(self, action: np.ndarray) -> tuple[dict[str, Any], float, bool, bool, dict[str, Any]]:
        """Move, grasp/release, and test success."""
        reward, terminated, truncated, info = self._advance(action)
        return self._obs(), reward, terminated, truncated, info

    def _advance(self, action: np.ndarray) -> tuple[float, bool, bool, dict[str, Any]]:
        """:meth:`step` without drawing the observation (the lock-step evaluator draws only
        the frames a policy reads: :meth:`_obs` is a function of the state)."""
        try:
            a = np.asarray(action, dtype=np.float64).reshape(-1)
        except (TypeError, ValueError):
            a = np.full(1, np.nan)
        if a.shape != (3,) or not np.all(np.isfinite(a)):
            raise ValueError(f"action must be 3 finite numbers (dx, dy, grip); got {action!r}.")
        a = np.clip(a, -1.0, 1.0)
        s = self._state
        s["gripper"] = np.clip(s["gripper"] + MAX_STEP * a[:2], 0.02, 0.98)
        close = bool(a[2] > 0) and self.task != "push"
        if close and not s["closed"] and s["held"] < 0:
            s["held"] = self._nearest_graspable()
        if not close:
            s["held"] = -1
        s["closed"] = close
        if s["held"] >= 0:
            self._positions()[s["held"]][:] = s["gripper"]
        if self.task == "push":
            for position in self._positions():
                away = position - s["gripper"]
                gap = float(np.linalg.norm(away))
                if gap < GRASP_RADIUS:
                    push = away / gap if gap > 1e-9 else np.array([1.0, 0.0])
                    position[:] = np.clip(s["gripper"] + GRASP_RADIUS * push, 0.02, 0.98)
        s["t"] += 1
        if self.split == "shift" and self.shifted and s["held"] != 3:
            s["distractor"] = np.clip(s["distractor"] + s["drift"], 0.05, 0.95)
        success = self._success()
        truncated = not success and s["t"] >= self.max_steps
        return float(success), success, truncated, self._info()

    def _positions(self) -> list[np.ndarray]:
        s = self._state
        items = [s["objects"][i] for i in range(3)]
        return [*items, s["distractor"]] if self.shifted else items

    def _nearest_graspable(self) -> int:
        positions = self._positions()
        dist = [float(np.linalg.norm(p - self._state["gripper"])) for p in positions]
        best = int(np.argmin(dist))
        return best if dist[best] <= GRASP_RADIUS else -1

    def _success(self) -> bool:
        s = self._state
        if self.task == "touch":
            return s["held"] == s["target"]
        obj, pad = s["objects"][s["target"]], s["pads"][s["goal"]]
        return s["held"] != s["target"] and float(np.linalg.norm(obj - pad)) <= PAD_RADIUS

    def _info(self) -> dict[str, Any]:
        s = self._state
        phase = "place" if s["held"] == s["target"] else "reach"
        return {"success": self._success(), "shifted": self.shifted, "phase": phase, "t": s["t"]}

    # --- rendering --------------------------------------------------------------------------

    def _obs(self) -> dict[str, Any]:
        s = self._state
        proprio = np.array([*s["gripper"], 1.0 if s["closed"] else -1.0], dtype=np.float32)
        return {
            "image": self.render_image(),
            "instruction": np.array([s["target"], s["goal"]], dtype=np.int64),
            "proprio": proprio,
        }

    def render(self) -> np.ndarray | None:
        """The current frame (``render_mode="rgb_array"``), else None."""
        return self.render_image() if self.render_mode == "rgb_array" else None

    def render_image(self) -> np.ndarray:
        """Draw the scene: background, pads (rings), objects, distractor, gripper; then lighting."""
        s = self._state
        n = self.image_size
        px = 1.0 / n
        img = self._canvas().copy()
        # the gripper first: the object under it stays visible (it is what the policy looks for)
        arm, thin = 4.5 * px, 0.6 * px
        self._paint(
            img,
            s["gripper"],
            arm,
            (1.0, 1.0, 1.0),
            lambda dx, dy: (
                ((np.abs(dx) <= thin) & (np.abs(dy) <= arm))
                | ((np.abs(dy) <= thin) & (np.abs(dx) <= arm))
            ),
        )
        if s["closed"]:
            knob = 1.6 * px
            self._paint(
                img,
                s["gripper"],
                knob,
                (0.0, 0.0, 0.0),
                lambda dx, dy: (np.abs(dx) <= knob) & (np.abs(dy) <= knob),
            )
        size = 3.5 * px
        shapes = [(s["objects"][i], OBJECT_COLOURS[i], i) for i in range(3)]
        if self.shifted:
            shapes.append((s["distractor"], DISTRACTOR_COLOUR, 0))
        masks = (
            lambda dx, dy: (np.abs(dx) <= size) & (np.abs(dy) <= size),  # square
            lambda dx, dy: dx**2 + dy**2 <= size**2,  # disk
            lambda dx, dy: (np.abs(dy) <= size) & (np.abs(dx) <= (dy + size) / 2),  # triangle
        )
        for centre, colour, kind in shapes:
            self._paint(img, centre, size, colour, masks[kind])
        if self.shifted:
            brightness, contrast = s["lighting"]
            img = (0.5 + contrast * (img - 0.5)) * brightness
        return (np.clip(img, 0.0, 1.0) * 255.0 + 0.5).astype(np.uint8)

    def _canvas(self) -> np.ndarray:
        """The background with the pads (fixed within an episode phase), drawn once per phase."""
        s, shifted = self._state, self.shifted
        canvas = s["canvas"].get(shifted)
        if canvas is None:
            if shifted:
                canvas = s["shifted_bg"].copy()
            else:
                canvas = np.empty((self.image_size, self.image_size, 3), np.float32)
                canvas[:] = BACKGROUND
            for centre, colour in zip(s["pads"], PAD_COLOURS, strict=True):
                self._paint(
                    canvas,
                    centre,
                    PAD_RADIUS,
                    colour,
                    lambda dx, dy: (
                        (dx**2 + dy**2 <= PAD_RADIUS**2) & (dx**2 + dy**2 >= RING_INNER**2)
                    ),
                )
            s["canvas"][shifted] = canvas
        return canvas

    def _paint(
        self, img: np.ndarray, centre: np.ndarray, radius: float, colour: Any, mask_fn: Any
    ) -> None:
        """Colour the pixels of a shape, evaluating its mask only in the shape's bounding box."""
        n = self.image_size
        x, y = float(centre[0]), float(centre[1])
        lo_x, hi_x = max(int((x - radius) * n) - 1, 0), min(int((x + radius) * n) + 2, n)
        lo_y, hi_y = max(int((y - radius) * n) - 1, 0), min(int((y + radius) * n) + 2, n)
        gx, gy = self._grid
        mask = mask_fn(gx[lo_y:hi_y, lo_x:hi_x] - x, gy[lo_y:hi_y, lo_x:hi_x] - y)
        img[lo_y:hi_y, lo_x:hi_x][mask] = colour

    # --- privileged state for the scripted expert --------------------------------------------

    def task_positions(self) -> np.ndarray:
        """(x, y) of the instructed object and of the instructed pad, in [0, 1]: shape (4,)."""
        s = self._state
        return np.concatenate([s["objects"][s["target"]], s["pads"][s["goal"]]])

    def expert_action(self) -> np.ndarray:
        """The noise-free expert action (dx, dy, grip) in the current state (potential field)."""
        s = self._state
        pos, target = s["gripper"], s["target"]
        if self.task == "push":
            return self._push_action()
        if s["held"] >= 0 and s["held"] != target:
            return np.array([0.0, 0.0, -1.0])  # holding the wrong thing: let go
        holding = s["held"] == target
        goal = s["pads"][s["goal"]] if holding else s["objects"][target]
        to_goal = goal - pos
        dist = float(np.linalg.norm(to_goal))
        move = to_goal / SLOWDOWN  # attraction: full speed far away, proportional near
        if not holding:  # repulsion from the other graspable things within 2 grasp radii
            for i, p in enumerate(self._positions()):
                away = pos - p
                d = float(np.linalg.norm(away))
                if i != target and d < 2 * GRASP_RADIUS and dist > GRASP_RADIUS / 2:
                    move = move + 0.5 * away / max(d, 1e-6) * (2 * GRASP_RADIUS - d) / GRASP_RADIUS
        move = np.clip(move, -1.0, 1.0)
        if holding:
            grip = -1.0 if dist < 0.5 * PAD_RADIUS else 1.0
        else:
            # close well inside the grasp radius, so an imprecise imitator still grasps
            grip = 1.0 if dist < 0.6 * GRASP_RADIUS else -1.0
        return np.array([move[0], move[1], grip])

    def _push_action(self) -> np.ndarray:
        """Push: reach a point behind the object (seen from the pad), going round the object's
        side, then move through it towards the pad; the gripper stays open."""
        s = self._state
        pos, obj, pad = s["gripper"], s["objects"][s["target"]], s["pads"][s["goal"]]
        to_pad = pad - obj
        u = to_pad / max(float(np.linalg.norm(to_pad)), 1e-9)
        rel = pos - obj
        along = float(rel @ u)
        side = rel - along * u
        lateral = float(np.linalg.norm(side))
        if along < -0.3 * GRASP_RADIUS and lateral < 0.8 * GRASP_RADIUS:
            # behind: push towards the pad while steering onto the line through the object
            speed = min(1.0, float(np.linalg.norm(to_pad)) / SLOWDOWN)
            move = speed * u + 2.0 * (obj - 0.9 * GRASP_RADIUS * u - pos) / SLOWDOWN
        else:
            if along < -0.3 * GRASP_RADIUS or lateral > 1.2 * GRASP_RADIUS:
                aim = obj - 1.5 * GRASP_RADIUS * u  # the approach point behind the object
            else:  # beside or in front of the object: step out to its side first
                normal = side / lateral if lateral > 1e-9 else np.array([-u[1], u[0]])
                aim = obj + 1.6 * GRASP_RADIUS * normal - 0.5 * GRASP_RADIUS * u
            move = (aim - pos) / SLOWDOWN
        move = move / max(1.0, float(np.abs(move).max()))  # keep the direction
        return np.array([move[0], move[1], -1.0])


def scripted_expert(env: Shift2DPickPlaceEnv, noise: float = 0.15, seed: int | None = 0) -> Any:
    """A potential-field expert for ``env``: ``policy(obs) -> action``, noise on (dx, dy).

    Parameters
    ----------
    env
        A ``Shift2DPickPlaceEnv`` (or a gymnasium wrapper around one): the expert reads its state.
    noise
        Standard deviation of the noise added to dx and dy, in [0, 1].
    seed
        Seed of the noise.
    """
    unwrapped = getattr(env, "unwrapped", None)
    if not isinstance(unwrapped, Shift2DPickPlaceEnv):
        raise TypeError(
            f"scripted_expert: env must be a Shift2DPickPlaceEnv; got {type(env).__name__}."
        )
    noise = check_in_interval("noise", noise, low=0.0, high=1.0, owner="scripted_expert")
    rng = numpy_generator(check_seed(seed, "scripted_expert"))

    def policy(obs: Any = None) -> np.ndarray:
        action = unwrapped.expert_action()
        action[:2] += rng.normal(0.0, noise, size=2) if noise > 0 else 0.0
        return np.clip(action, -1.0, 1.0).astype(np.float32)

    return policy


if ENV_ID not in gym.registry:
    gym.register(id=ENV_ID, entry_point=Shift2DPickPlaceEnv, max_episode_steps=None)
