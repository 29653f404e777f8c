"""ISTA lexicon and the ISTA-10K structure-and-texture richness score (spec §2.2, exact).

Cao et al., UniPercept (arXiv:2512.21675), §3 and appendix: every image carries a structured
annotation (``SceneType``, ``Components`` with four groups of term lists) and its rating is

    S(c)    = S_PS + S_MR + S_GC + S_SP
    S_PS    = sum_{t in BaseMorphology(c)} w(t) + |Arrangement(c)|
    S_MR    = |MaterialClass(c)| + |SurfaceProperties(c)|
    S_GC    = |PlanarContour(c)| + |VolumetricForm(c)|
    S_SP    = |FunctionalInference(c)| + |StyleType(c)|
    S_ISTA  = min(|C| + sum_c S(c), cap)       composite scene
    S_ISTA  = min(1 + S(c_image), cap)         no explicit decomposition

with the texture-intensity weight w(t) in {0, 1, 2, 3} and entries "N/A" ignored.

Deviations: none in the formula. The vocabulary lists below (materials, contours, solids, styles)
are a representative subset of the paper's lexicon: they do not change any weight.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

__all__ = [
    "ARRANGEMENTS",
    "GROUPS",
    "MATERIALS",
    "PLANAR_CONTOURS",
    "STYLE_TYPES",
    "TEXTURE_WEIGHTS",
    "VOLUMETRIC_FORMS",
    "component_score",
    "ista_score",
    "texture_weight",
]

_WEAK = "smooth plain uniform lined grid striped chequered dotted freckled"
_MEDIUM = "braided woven crosshatched meshed cobwebbed lacelike knitted spiralled swirly"
_STRONG = (
    "bumpy blotchy bubbly cracked crystalline flecked frilly grooved honeycombed marbled matted "
    "paisley perforated pitted pleated porous scaly smeared sprinkled stratified studded veined "
    "wrinkled zigzagged"
)
# w(t): 1 weak, 2 medium, 3 strong; any other term weighs 0.
TEXTURE_WEIGHTS: Final[Mapping[str, int]] = {
    **dict.fromkeys(_WEAK.split(), 1),
    **dict.fromkeys(_MEDIUM.split(), 2),
    **dict.fromkeys(_STRONG.split(), 3),
}

# Vocabulary only (spec §2.2): 7 natural, 16 man-made, 3 environmental materials.
MATERIALS: Final[Mapping[str, tuple[str, ...]]] = {
    "natural": ("Wood", "Stone", "Grass", "Water", "Leather", "Fur", "Plant"),
    "man-made": (
        "Brick", "Concrete", "Metal", "Glass", "Plastic", "Fabric", "Paper", "Ceramic",
        "Rubber", "Asphalt", "Paint", "Tile", "Wax", "Foam", "Carbon Fiber", "Composite",
    ),
    "environmental": ("Sky", "Fog", "Smoke"),
}  # fmt: skip
PLANAR_CONTOURS: Final = (
    "Square", "Rectangle", "Circle", "Ellipse", "Triangle", "Hexagon", "Pentagon", "Octagon",
    "Star", "Rhombus", "Trapezoid", "Parallelogram", "Crescent", "Heart", "Cross", "Arrow",
    "Semicircle", "Ring", "Spiral", "Wave", "Polygon", "Irregular", "Line", "Arc", "Oval",
)  # fmt: skip
VOLUMETRIC_FORMS: Final = (
    "Sphere", "Cube", "Cuboid", "Cylinder", "Cone", "Pyramid", "Torus", "Prism", "Tetrahedron",
    "Octahedron", "Dodecahedron", "Icosahedron", "Ellipsoid", "Hemisphere", "Capsule", "Frustum",
    "Wedge", "Disc", "Tube", "Helix", "Dome", "Arch", "Shell", "Slab", "Rod", "Block", "Ring Torus",
    "Irregular Solid",
)  # fmt: skip
STYLE_TYPES: Final = (
    "Realistic", "Abstract", "Minimalist", "Geometric", "Organic", "Industrial", "Vintage",
    "Modern", "Ornamental", "Natural",
)  # fmt: skip
ARRANGEMENTS: Final = ("horizontal", "vertical", "radial", "clustered", "diagonal", "random")

# The four groups of a component and their two term lists each (spec §2.2).
GROUPS: Final[Mapping[str, tuple[str, str]]] = {
    "PhysicalStructure": ("BaseMorphology", "Arrangement"),
    "MaterialRepresentation": ("MaterialClass", "SurfaceProperties"),
    "GeometricComposition": ("PlanarContour", "VolumetricForm"),
    "SemanticPerception": ("FunctionalInference", "StyleType"),
}
_SINGLE = {"single", "single-object", "single object", "single_object"}
_COMPOSITE = {"composite", "composite scene", "composite_scene", "multi-object"}


def texture_weight(term: str) -> int:
    """Texture-intensity weight w(t) of a BaseMorphology term (case-insensitive).

    Returns 1 (weak), 2 (medium), 3 (strong) or 0 for any other term.

    Examples
    --------
    >>> texture_weight("striped"), texture_weight("Woven"), texture_weight("cracked")
    (1, 2, 3)
    >>> texture_weight("shiny")
    0
    """
    if not isinstance(term, str):
        raise TypeError(f"texture_weight: term must be a str; got {type(term).__name__}.")
    return TEXTURE_WEIGHTS.get(term.strip().lower(), 0)


def _terms(values: Any, field: str) -> list[str]:
    if not isinstance(values, list | tuple):
        raise TypeError(
            f"ista_score: annotation field {field} must be a list of terms; "
            f"got {type(values).__name__}."
        )
    if not all(isinstance(v, str) for v in values):
        raise TypeError(f"ista_score: annotation field {field} must hold strings only.")
    return [v for v in values if v.strip().upper() != "N/A"]


def component_score(component: Mapping[str, Any], where: str = "component") -> int:
    """S(c) = S_PS + S_MR + S_GC + S_SP of one component (spec §2.2).

    Raises ``ValueError``/``TypeError`` naming the missing or malformed field.

    Examples
    --------
    >>> c = {"PhysicalStructure": {"BaseMorphology": ["striped"], "Arrangement": []},
    ...      "MaterialRepresentation": {"MaterialClass": ["Wood"], "SurfaceProperties": []},
    ...      "GeometricComposition": {"PlanarContour": ["Circle"], "VolumetricForm": []},
    ...      "SemanticPerception": {"FunctionalInference": [], "StyleType": []}}
    >>> component_score(c)
    3
    """
    if not isinstance(component, Mapping):
        raise TypeError(
            f"ista_score: annotation field {where} must be a dict; got {type(component).__name__}."
        )
    total = 0
    for group, (first, second) in GROUPS.items():
        if group not in component:
            raise ValueError(f"ista_score: annotation field {where}.{group} is missing.")
        block = component[group]
        if not isinstance(block, Mapping):
            raise TypeError(f"ista_score: annotation field {where}.{group} must be a dict.")
        for key in (first, second):
            if key not in block:
                raise ValueError(f"ista_score: annotation field {where}.{group}.{key} is missing.")
        a = _terms(block[first], f"{where}.{group}.{first}")
        b = _terms(block[second], f"{where}.{group}.{second}")
        if first == "BaseMorphology":
            total += sum(texture_weight(t) for t in a) + len(b)  # S_PS
        else:
            total += len(a) + len(b)  # S_MR, S_GC, S_SP
    return total


def ista_score(annotation: Mapping[str, Any], cap: int = 100) -> int:
    """The ISTA-10K rating of a structured annotation (spec §2.2).

    Parameters
    ----------
    annotation
        ``{"SceneType": "composite" | "single", "Components": [component, ...]}``, or a single
        component's four groups at the top level (no explicit decomposition).
    cap
        Upper bound of the score (100 on the benchmark's 0–100 scale).

    Returns
    -------
    int
        ``min(|C| + sum_c S(c), cap)`` for a composite scene, ``min(1 + S(c_image), cap)``
        otherwise.

    Raises
    ------
    ValueError, TypeError
        A missing field or a field that is not a list of strings (the message names it).

    Examples
    --------
    >>> c = {"PhysicalStructure": {"BaseMorphology": ["striped", "cracked"],
    ...                            "Arrangement": ["horizontal"]},
    ...      "MaterialRepresentation": {"MaterialClass": ["Brick"], "SurfaceProperties": ["matte"]},
    ...      "GeometricComposition": {"PlanarContour": ["Rectangle"], "VolumetricForm": []},
    ...      "SemanticPerception": {"FunctionalInference": [], "StyleType": []}}
    >>> ista_score({"SceneType": "composite", "Components": [c]}), ista_score(c)
    (9, 9)
    """
    if not isinstance(annotation, Mapping):
        raise TypeError(f"ista_score: annotation must be a dict; got {type(annotation).__name__}.")
    if isinstance(cap, bool) or not isinstance(cap, int) or cap < 1:
        raise ValueError(f"ista_score: cap must be a positive integer; got {cap!r}.")
    if "Components" not in annotation:
        if not any(group in annotation for group in GROUPS):
            raise ValueError(
                "ista_score: annotation field Components is missing (and no top-level "
                f"component groups {tuple(GROUPS)} were given)."
            )
        return min(1 + component_score(annotation, "annotation"), cap)
    components = annotation["Components"]
    if not isinstance(components, list | tuple):
        raise TypeError(
            "ista_score: annotation field Components must be a list; "
            f"got {type(components).__name__}."
        )
    scene = annotation.get("SceneType", "composite")
    if not isinstance(scene, str) or scene.strip().lower() not in _SINGLE | _COMPOSITE:
        raise ValueError(
            "ista_score: annotation field SceneType must be 'composite' or 'single'; "
            f"got {scene!r}."
        )
    scores = [component_score(c, f"Components[{i}]") for i, c in enumerate(components)]
    if scene.strip().lower() in _SINGLE:
        if len(scores) != 1:
            raise ValueError(
                "ista_score: annotation field Components must hold exactly one component when "
                f"SceneType is single; got {len(scores)}."
            )
        return min(1 + scores[0], cap)
    return min(len(scores) + sum(scores), cap)
