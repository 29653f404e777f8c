"""The ISTA-10K formula (spec §2.2, §7): worked examples, N/A, unknown terms, cap, bad fields."""

import copy

import pytest

from icml26.unipercept import ista_score, texture_weight


def component(**overrides):
    c = {
        "PhysicalStructure": {
            "BaseMorphology": ["striped", "cracked"],
            "Arrangement": ["horizontal"],
        },
        "MaterialRepresentation": {"MaterialClass": ["Brick"], "SurfaceProperties": ["matte"]},
        "GeometricComposition": {"PlanarContour": ["Rectangle"], "VolumetricForm": []},
        "SemanticPerception": {"FunctionalInference": [], "StyleType": []},
    }
    for key, value in overrides.items():
        for group in c.values():
            if key in group:
                group[key] = value
    return c


def test_worked_example_of_the_spec():
    c = component()  # S(c) = (1 + 3) + 1 + 1 + 1 + 1 = 8
    assert ista_score({"SceneType": "composite", "Components": [c]}) == 1 + 8
    assert ista_score({"SceneType": "single", "Components": [c]}) == 1 + 8
    assert ista_score(c) == 1 + 8  # no explicit decomposition: 1 + S(c_image)


def test_composite_scene_sums_components_plus_their_count():
    a, b = component(), component(BaseMorphology=["woven"], Arrangement=[])  # 8 and 2 + 3 = 5
    assert ista_score({"SceneType": "composite", "Components": [a, b]}) == 2 + 8 + 5


def test_na_entries_are_ignored_and_unknown_terms_weigh_zero():
    c = component(BaseMorphology=["N/A", "shiny", "marbled"], StyleType=["n/a"])
    assert ista_score(c) == 1 + (0 + 3 + 1) + 2 + 1
    assert texture_weight("shiny") == 0 and texture_weight(" Marbled ") == 3


def test_cap_at_100():
    many = [
        component(BaseMorphology=["cracked"] * 10) for _ in range(5)
    ]  # 5 x (30 + 1 + 3) + 5 = 175
    assert ista_score({"SceneType": "composite", "Components": many}) == 100
    assert ista_score({"SceneType": "composite", "Components": many}, cap=1000) == 175


def test_texture_weights_follow_the_lexicon():
    assert [texture_weight(t) for t in ("plain", "knitted", "honeycombed")] == [1, 2, 3]


@pytest.mark.parametrize(
    ("mutate", "error", "match"),
    [
        (lambda a: a["Components"][0].pop("PhysicalStructure"), ValueError,
         r"Components\[0\]\.PhysicalStructure is missing"),
        (lambda a: a["Components"][0]["MaterialRepresentation"].pop("MaterialClass"), ValueError,
         r"MaterialRepresentation\.MaterialClass is missing"),
        (lambda a: a["Components"][0]["GeometricComposition"].update(PlanarContour="Square"),
         TypeError, r"PlanarContour must be a list"),
        (lambda a: a.update(Components="x"), TypeError, "Components must be a list"),
        (lambda a: a.update(SceneType="weird"), ValueError, "SceneType"),
        (lambda a: a.update(SceneType="single", Components=a["Components"] * 2), ValueError,
         "exactly one component"),
    ],
)  # fmt: skip
def test_bad_annotations_name_the_field(mutate, error, match):
    annotation = {"SceneType": "composite", "Components": [copy.deepcopy(component())]}
    mutate(annotation)
    with pytest.raises(error, match=match):
        ista_score(annotation)


def test_bad_cap_and_types():
    with pytest.raises(ValueError, match="cap"):
        ista_score(component(), cap=0)
    with pytest.raises(TypeError, match="annotation must be a dict"):
        ista_score([1, 2])
    with pytest.raises(TypeError, match="term"):
        texture_weight(3)
