"""Procedural ISTA scenes with a known structured annotation (spec §5, PerceptToy ISTA).

A scene holds 1–4 components laid out in reading order on a plain background; each component is
a shape mask (its PlanarContour) filled with a procedural texture of known BaseMorphology, tinted
by its material, optionally shaded as a solid (VolumetricForm Sphere / Cube) and given a specular
blob when glossy. The annotation follows the ISTA-10K JSON layout, so the ground truth is
:func:`~icml26.unipercept.ista.ista_score` of it.

Deviations (*inferred*): materials of procedural textures are shown by colour (Wood brown, Metal
grey-blue, Plastic saturated, Ceramic cream); the brick / grass / gravel photographs are the
Brick / Grass / Stone materials with BaseMorphology (grid, pitted) / (matted) / (bumpy);
FunctionalInference and StyleType stay empty (nothing in a toy scene suggests them).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

import numpy as np

from icml26.unipercept.images import texture_band

__all__ = [
    "CONTOURS",
    "MATERIAL_NAMES",
    "MORPHOLOGIES",
    "Scene",
    "render_scene",
    "sample_scene",
]

CONTOURS: Final = ("Square", "Circle", "Triangle", "Hexagon", "Star")
PROCEDURAL_MORPHOLOGIES: Final = (
    "smooth", "striped", "chequered", "dotted", "grid", "lined",
    "crosshatched", "woven", "meshed", "spiralled", "swirly",
    "cracked", "veined", "marbled",
)  # fmt: skip
PHOTO_MATERIALS: Final = {"Brick": ("brick", ("grid", "pitted")), "Grass": ("grass", ("matted",)),
                          "Stone": ("gravel", ("bumpy",))}  # fmt: skip
MORPHOLOGIES: Final = (*PROCEDURAL_MORPHOLOGIES, "pitted", "matted", "bumpy")
PAINTED_MATERIALS: Final = ("Wood", "Metal", "Plastic", "Ceramic")
MATERIAL_NAMES: Final = (*PAINTED_MATERIALS, *PHOTO_MATERIALS)
_DIRECTIONAL = ("striped", "lined")  # Arrangement horizontal / vertical
_ARRANGED = {"spiralled": "radial", "dotted": "clustered"}


@dataclass(frozen=True)
class Component:
    """One object of a scene: contour, texture, material, surface and solid look."""

    contour: str
    morphology: tuple[str, ...]
    arrangement: tuple[str, ...]
    material: str
    surface: str
    volume: str | None
    colour: tuple[float, float, float]
    period: float
    phase: float

    def annotation(self) -> dict[str, Any]:
        """The component in the ISTA-10K JSON layout."""
        return {
            "PhysicalStructure": {
                "BaseMorphology": list(self.morphology),
                "Arrangement": list(self.arrangement),
            },
            "MaterialRepresentation": {
                "MaterialClass": [self.material],
                "SurfaceProperties": [self.surface],
            },
            "GeometricComposition": {
                "PlanarContour": [self.contour],
                "VolumetricForm": [self.volume] if self.volume else [],
            },
            "SemanticPerception": {"FunctionalInference": [], "StyleType": []},
        }


@dataclass(frozen=True)
class Scene:
    """A scene: its components in reading order and its background grey level."""

    components: tuple[Component, ...]
    background: float

    def annotation(self) -> dict[str, Any]:
        """The scene's structured annotation (SceneType, SceneName, Components)."""
        composite = len(self.components) > 1
        return {
            "SceneType": "composite" if composite else "single",
            "SceneName": "toy composite scene" if composite else "toy object",
            "Components": [c.annotation() for c in self.components],
        }


def _material_colour(material: str, rng: np.random.Generator) -> tuple[float, float, float]:
    jitter = rng.uniform(-0.05, 0.05, size=3)
    base = {
        "Wood": (0.55, 0.35, 0.18),
        "Metal": (0.55, 0.6, 0.68),
        "Ceramic": (0.92, 0.88, 0.78),
    }.get(material)
    if base is None:  # Plastic: a saturated primary-ish colour
        base = ((0.85, 0.15, 0.15), (0.15, 0.7, 0.2), (0.15, 0.3, 0.9))[int(rng.integers(3))]
    return tuple(float(v) for v in np.clip(np.asarray(base) + jitter, 0.0, 1.0))


def sample_component(
    rng: np.random.Generator, morphologies: tuple[str, ...] | None = None
) -> Component:
    """Draw one component uniformly over contours, textures, materials and surfaces.

    ``morphologies`` restricts the texture to a subset of the procedural ones.
    """
    contour = CONTOURS[int(rng.integers(len(CONTOURS)))]
    if morphologies is not None:
        material = PAINTED_MATERIALS[int(rng.integers(len(PAINTED_MATERIALS)))]
        morphology = (morphologies[int(rng.integers(len(morphologies)))],)
    elif rng.random() < 3 / 17:  # the photo materials, in proportion to their 3 of 17 textures
        material = tuple(PHOTO_MATERIALS)[int(rng.integers(3))]
        morphology = PHOTO_MATERIALS[material][1]
    else:
        material = PAINTED_MATERIALS[int(rng.integers(len(PAINTED_MATERIALS)))]
        morphology = (PROCEDURAL_MORPHOLOGIES[int(rng.integers(len(PROCEDURAL_MORPHOLOGIES)))],)
    term = morphology[0]
    if term in _DIRECTIONAL:
        arrangement = (("horizontal", "vertical")[int(rng.integers(2))],)
    elif term in _ARRANGED:
        arrangement = (_ARRANGED[term],)
    else:
        arrangement = ()
    volume = None
    if contour == "Circle" and rng.random() < 0.4:
        volume = "Sphere"
    elif contour == "Square" and rng.random() < 0.4:
        volume = "Cube"
    return Component(
        contour=contour,
        morphology=morphology,
        arrangement=arrangement,
        material=material,
        surface=("matte", "glossy")[int(rng.integers(2))],
        volume=volume,
        colour=_material_colour(material, rng),
        period=float(rng.uniform(3.0, 5.0)),
        phase=float(rng.uniform(0, 2 * np.pi)),
    )


def sample_scene(
    rng: np.random.Generator,
    n_components: int | None = None,
    morphologies: tuple[str, ...] | None = None,
) -> Scene:
    """A scene of ``n_components`` (uniform in 1..4 when None) random components."""
    n = int(rng.integers(1, 5)) if n_components is None else n_components
    parts = tuple(sample_component(rng, morphologies) for _ in range(n))
    return Scene(parts, float(rng.uniform(0.1, 0.35)))


# --- rendering --------------------------------------------------------------------------------


@functools.cache
def _grid(h: int, w: int) -> tuple[np.ndarray, np.ndarray]:
    """Read-only pixel coordinates (y, x) of an h x w patch."""
    y, x = np.mgrid[0:h, 0:w].astype(float)
    y.setflags(write=False)
    x.setflags(write=False)
    return y, x


def _smooth_noise(shape: tuple[int, int], scale: float, rng: np.random.Generator) -> np.ndarray:
    from scipy.ndimage import gaussian_filter

    field = gaussian_filter(rng.standard_normal(shape), sigma=scale, mode="wrap")
    return field / (field.std() + 1e-8)


def _texture(c: Component, h: int, w: int, rng: np.random.Generator, split: str) -> np.ndarray:
    """An (h, w) intensity pattern in [0, 1] (or (h, w, 3) for photo materials)."""
    y, x = _grid(h, w)
    p, phase = c.period, c.phase
    term = c.morphology[0]
    if c.material in PHOTO_MATERIALS:
        band = texture_band(PHOTO_MATERIALS[c.material][0], split)  # type: ignore[arg-type]
        top = int(rng.integers(0, band.shape[0] - h + 1))
        left = int(rng.integers(0, band.shape[1] - w + 1))
        return band[top : top + h, left : left + w]
    patterns: dict[str, Callable[[], np.ndarray]] = {
        "smooth": lambda: 0.5 + 0.15 * (x / max(w, 1)),
        "striped": lambda: (np.sin(2 * np.pi * (y if c.arrangement == ("horizontal",) else x) / p
                                   + phase) > 0).astype(float),
        "lined": lambda: ((((y if c.arrangement == ("horizontal",) else x) + phase) % p) < 1.0
                          ).astype(float),
        "chequered": lambda: (((x // (p / 2 + 0.5)) + (y // (p / 2 + 0.5))) % 2).astype(float),
        "dotted": lambda: ((((x + phase) % p) - p / 2) ** 2 + (((y + phase) % p) - p / 2) ** 2
                           < (p / 4) ** 2).astype(float),
        "grid": lambda: ((((x + phase) % p) < 1.0) | (((y + phase) % p) < 1.0)).astype(float),
        "crosshatched": lambda: ((((x + y) % p) < 1.0) | (((x - y) % p) < 1.0)).astype(float),
        "woven": lambda: np.where(((x // p) + (y // p)) % 2 == 0,
                                  np.sin(2 * np.pi * y / (p / 2)) > 0,
                                  np.sin(2 * np.pi * x / (p / 2)) > 0).astype(float),
        "meshed": lambda: (np.abs(np.sin(np.pi * (x + y) / p) * np.sin(np.pi * (x - y) / p))
                           > 0.3).astype(float),
        "spiralled": lambda: (np.sin(np.arctan2(y - h / 2, x - w / 2) * 2
                                     + np.hypot(y - h / 2, x - w / 2) * 2 * np.pi / p + phase)
                              > 0).astype(float),
        "swirly": lambda: 0.5 + 0.5 * np.sin(2 * np.pi * x / (2 * p)
                                             + 2.5 * np.sin(2 * np.pi * y / (2.5 * p)) + phase),
    }  # fmt: skip
    if term in patterns:
        return patterns[term]()
    noise = _smooth_noise((h, w), 2.0, rng)
    if term == "cracked":  # thin dark ridges of a noise field
        return (np.abs(noise) > 0.25).astype(float)
    if term == "veined":
        return 1.0 - np.exp(-((np.sin(2 * np.pi * x / (2 * p) + 2.0 * noise)) ** 2) / 0.02)
    return 0.5 + 0.5 * np.sin(2 * np.pi * x / (2 * p) + 3.0 * noise)  # marbled


@functools.cache
def _mask(contour: str, h: int, w: int) -> np.ndarray:
    y, x = _grid(h, w)
    u, v = (x + 0.5) / w * 2 - 1, (y + 0.5) / h * 2 - 1  # in [-1, 1]
    r, theta = np.hypot(u, v), np.arctan2(v, u)
    if contour == "Square":
        return (np.abs(u) <= 0.8) & (np.abs(v) <= 0.8)
    if contour == "Circle":
        return r <= 0.9
    if contour == "Triangle":
        return (v <= 0.8) & (v >= -0.9 + 1.7 * np.abs(u) / 0.95) & (np.abs(u) <= 0.95)
    if contour == "Hexagon":
        return (np.abs(v) <= 0.8) & (np.abs(v) * 0.5 + np.abs(u) * 0.866 <= 0.8)
    # Star: a five-pointed radius modulation
    return r <= 0.45 + 0.45 * (0.5 + 0.5 * np.cos(5 * (theta + np.pi / 2)))


def _cells(n: int, size: int) -> list[tuple[int, int, int]]:
    """(top, left, side) of each component's square cell, in reading order."""
    if n == 1:
        side = int(size * 0.85)
        return [((size - side) // 2, (size - side) // 2, side)]
    half = size // 2
    side = int(half * 0.92)
    pad = (half - side) // 2
    spots = [(0, 0), (0, 1), (1, 0), (1, 1)] if n > 2 else [(0, 0), (0, 1)]
    offset = half // 2 if n == 2 else 0  # two objects sit side by side in the middle row
    return [(r * half + pad + offset, col * half + pad, side) for r, col in spots[:n]]


def render_scene(
    scene: Scene, size: int, rng: np.random.Generator, split: str = "train"
) -> np.ndarray:
    """Render a scene as an (size, size, 3) float32 image in [0, 1]."""
    image = np.full((size, size, 3), scene.background, dtype=np.float32)
    for c, (top, left, side) in zip(
        scene.components, _cells(len(scene.components), size), strict=True
    ):
        mask = _mask(c.contour, side, side)
        pattern = _texture(c, side, side, rng, split)
        if pattern.ndim == 2:  # tint: dark-to-colour ramp of the material
            colour = np.asarray(c.colour, dtype=float)
            rgb = (0.35 + 0.65 * pattern[:, :, None]) * colour
        else:
            rgb = pattern.astype(float)
        yy, xx = (g / max(side - 1, 1) for g in _grid(side, side))
        if c.volume == "Sphere":  # Lambertian-looking radial shading
            rr = np.hypot(xx - 0.38, yy - 0.38)
            rgb = rgb * np.clip(1.15 - 1.1 * rr, 0.2, 1.0)[:, :, None]
        elif c.volume == "Cube":  # three faces with three light levels
            shade = np.where(yy < 0.3 - 0.3 * xx + 0.15, 1.1, np.where(xx > 0.62, 0.55, 0.85))
            rgb = rgb * shade[:, :, None]
        if c.surface == "glossy":  # a small specular highlight
            blob = np.exp(-((xx - 0.32) ** 2 + (yy - 0.3) ** 2) / (2 * 0.07**2))
            rgb = rgb + 0.8 * blob[:, :, None] * (1.0 - rgb)
        region = image[top : top + side, left : left + side]
        region[mask] = np.clip(rgb, 0.0, 1.0)[mask]
    return image
