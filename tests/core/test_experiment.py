from dataclasses import dataclass, replace

import pytest
from toy_experiments import TOY, CoinConfig, coin

from icml26.core import Claim, Experiment, Registry
from icml26.core.experiment import apply_overrides


def test_overrides_are_parsed_to_field_types():
    config = apply_overrides(
        CoinConfig(), {"p": "1", "flips": "50", "fail": "true", "sizes": "[1, 2, 3]"}
    )
    assert config == CoinConfig(p=1.0, flips=50, fail=True, sizes=(1, 2, 3))
    assert isinstance(config.p, float)


def test_unknown_override_key_lists_valid_keys():
    with pytest.raises(ValueError, match=r"unknown config key\(s\) nope; valid keys: p, flips"):
        apply_overrides(CoinConfig(), {"nope": "1"})


def test_override_of_wrong_type():
    with pytest.raises(ValueError, match="--set flips: expected int; got 'many'"):
        apply_overrides(CoinConfig(), {"flips": "many"})


def test_experiment_config_for_preset_and_unknown_preset():
    exp = TOY.get("toy.coin")
    assert exp.config("smoke").flips == 200
    assert exp.config("quick", {"flips": "7"}).flips == 7
    with pytest.raises(ValueError, match=r"unknown preset 'huge' for toy\.coin; choose from"):
        exp.config("huge")


def test_config_from_record_restores_tuples():
    exp = TOY.get("toy.coin")
    assert exp.config_from_record({"p": 0.1, "sizes": [3, 4]}) == replace(
        CoinConfig(), p=0.1, sizes=(3, 4)
    )


def test_every_registered_config_survives_its_record_round_trip():
    import json

    from icml26.core import discover
    from icml26.core.results import to_jsonable

    for experiment in discover():
        for preset in experiment.presets:
            config = experiment.config(preset)
            stored = json.loads(json.dumps(to_jsonable(config)))  # as a record holds it
            assert experiment.config_from_record(stored) == config, (experiment.name, preset)


def make(**changes):
    spec = dict(
        name="a.b",
        title="t",
        paper="p",
        claims=(),
        presets=dict.fromkeys(("smoke", "quick", "full"), CoinConfig()),
        run=coin,
    )
    spec.update(changes)
    return Experiment(**spec)


def test_experiment_validation():
    assert make().system == "a"
    with pytest.raises(ValueError, match=r"must look like 'slug\.what'"):
        make(name="nodot")
    with pytest.raises(ValueError, match="presets must be exactly"):
        make(presets={"quick": CoinConfig()})

    @dataclass(frozen=True)
    class Other:
        x: int = 0

    with pytest.raises(TypeError, match="instances of one dataclass"):
        make(presets={"smoke": CoinConfig(), "quick": CoinConfig(), "full": Other()})
    twice = Claim("A", "s", "m", ">=", 0.0, "p", "w")
    with pytest.raises(ValueError, match="claim ids must be unique"):
        make(claims=(twice, twice))


def test_registry_rejects_a_second_experiment_with_the_same_name():
    registry = Registry()
    registry.add(make())
    with pytest.raises(ValueError, match="already registered"):
        registry.add(make(run=lambda c, s: {}))
    with pytest.raises(KeyError, match=r"unknown experiment 'x\.y'; choose from: a\.b"):
        registry.get("x.y")
    assert registry.systems() == ["a"]


@dataclass(frozen=True)
class Typed:
    sizes: tuple[int, ...] = (1,)
    pair: tuple[float, str] = (0.5, "a")
    nested: tuple[tuple[int, int], ...] = ((1, 2),)
    flag: bool = False
    cap: float | None = None
    name: str = "x"


@pytest.mark.parametrize(
    ("key", "text", "expected"),
    [
        ("sizes", "[4, 8]", (4, 8)),
        ("sizes", "3", (3,)),
        ("pair", "[1, b]", (1.0, "b")),
        ("nested", "[[1, 2], [3, 4]]", ((1, 2), (3, 4))),
        ("flag", "true", True),
        ("cap", "null", None),
        ("cap", "2", 2.0),
        ("cap", "1e-3", 1e-3),
        ("name", "123", "123"),
    ],
)
def test_overrides_are_converted_element_wise(key, text, expected):
    value = getattr(apply_overrides(Typed(), {key: text}), key)
    assert value == expected and type(value) is type(expected)


@pytest.mark.parametrize(
    ("key", "text", "shown"),
    [
        ("sizes", '[4.5, "x"]', r"tuple\[int, \.\.\.\]"),
        ("sizes", "[true]", r"tuple\[int, \.\.\.\]"),
        ("pair", "[1, b, c]", r"tuple\[float, str\]"),
        ("nested", "[[1, 2.5]]", r"tuple\[tuple\[int, int\], \.\.\.\]"),
        ("flag", "1", "bool"),
        ("cap", "many", r"float \| None"),
        ("pair", "[.nan, b]", "finite numbers"),
        ("cap", ".inf", "finite numbers"),
        ("sizes", "[1, 2", None),
    ],
)
def test_overrides_of_the_wrong_type_are_one_line_errors(key, text, shown):
    expected = (
        rf"^--set {key}: expected {shown}; got " if shown else rf"^--set {key}: .* is not a YAML"
    )
    with pytest.raises(ValueError, match=expected) as err:
        apply_overrides(Typed(), {key: text})
    assert "\n" not in str(err.value)


def test_a_field_that_holds_infinity_accepts_it():
    @dataclass(frozen=True)
    class Budget:
        limit: float = float("inf")

    assert apply_overrides(Budget(), {"limit": "-.inf"}).limit == float("-inf")


def test_declared_requirements_say_how_to_install_them():
    exp = TOY.get("toy.needs_missing")
    assert exp.missing() == ("icml26_no_such_module",)
    assert exp.unavailable_reason == (
        "unavailable — pip install 'icml26[toyextra]' (missing icml26_no_such_module)"
    )
    assert TOY.get("toy.coin").unavailable_reason is None
    with pytest.raises(TypeError, match="requires must be import names"):
        make(requires=("",))


def test_a_system_that_fails_to_import_is_listed_as_broken_and_the_others_survive(
    tmp_path, monkeypatch
):
    from icml26.core import REGISTRY, discover

    root = tmp_path / "fakepkg"
    for slug, body in {
        "good": "",
        "halfway": (
            "from toy_experiments import COIN_CLAIMS, COIN_PRESETS, coin\n"
            "from icml26.core import register\n"
            "register(name='halfway.coin', title='t', paper='p', claims=COIN_CLAIMS,\n"
            "         presets=COIN_PRESETS)(coin)\n"
            "1 / 0\n"
        ),
        "typo": "def broken(:\n",
    }.items():
        (root / slug).mkdir(parents=True)
        (root / slug / "__init__.py").write_text("")
        (root / slug / "experiments.py").write_text(body)
    (root / "__init__.py").write_text("")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(REGISTRY, "unavailable", {})
    with pytest.warns(UserWarning, match="fakepkg.halfway is broken"):
        discover("fakepkg")
    assert REGISTRY.unavailable["halfway"].startswith("broken — ZeroDivisionError on import")
    assert REGISTRY.unavailable["typo"].startswith("broken — SyntaxError on import")
    assert "good" not in REGISTRY.unavailable
    assert "halfway" not in REGISTRY.systems()  # its half-registered experiment was taken out
