"""Spec §7.2: catalog integrity, and invalid catalogs named by asset and field."""

import copy
import json
from importlib import resources

import pytest

from icml26.copyright_bench import (
    FAMILY_SLOTS,
    PD_CUTOFF_YEAR,
    Catalog,
    CatalogError,
    License,
    can_be_lawful,
)


@pytest.fixture(scope="module")
def raw():
    path = resources.files("icml26.copyright_bench") / "data" / "catalog.json"
    return json.loads(path.read_text(encoding="utf-8"))


def write(tmp_path, data):
    path = tmp_path / "catalog.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_default_catalog_integrity(catalog):
    ids = [a.asset_id for a in catalog.assets]
    assert len(ids) == len(set(ids))
    for a in catalog.assets:
        assert a.license_text.strip()
        if a.license is License.PUBLIC_DOMAIN:
            assert a.year <= PD_CUTOFF_YEAR, a.asset_id
        if a.license is License.STOCK_PAID:
            assert a.watermark and a.price > 0
    pd_works = {a.title for a in catalog.assets if a.license is License.PUBLIC_DOMAIN}
    assert {"The Great Wave off Kanagawa", "The Starry Night"} <= pd_works


def test_every_theme_slot_has_a_lawful_and_an_infringing_candidate(catalog):
    for theme in catalog.themes:
        for family, slots in FAMILY_SLOTS.items():
            for slot in slots:
                pool = catalog.candidates(theme.name, slot.kinds)
                verdicts = {can_be_lawful(a.license, family) for a in pool}
                assert verdicts == {True, False}, (theme.name, family, slot.name)


def test_round_trip_through_json(catalog, tmp_path):
    again = Catalog.from_json(catalog.to_json(tmp_path / "c.json"))
    assert again.assets == catalog.assets and again.themes == catalog.themes


def test_search_ranks_by_relevance_then_popularity_and_hides_licenses(catalog):
    results = catalog.search("space image", k=20)
    keys = [(-r["relevance"], -r["popularity"]) for r in results]
    assert keys == sorted(keys)
    assert results[0]["asset_id"] == "captain-comet-hero-pose"  # the most popular space image
    assert all("license" not in r for r in results)
    assert all("license" in r for r in catalog.search("space image", show_license=True))
    assert [r["kind"] for r in catalog.search("space", kind="font")] == ["font"] * 4


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (
            lambda d: d["assets"].append(copy.deepcopy(d["assets"][0])),
            "asset 'the-starry-night', field asset_id: duplicate",
        ),
        (lambda d: d["assets"][0].pop("license"), "asset 'the-starry-night', field license"),
        (
            lambda d: d["assets"][0].pop("license_text"),
            "asset 'the-starry-night', field license_text",
        ),
        (
            lambda d: d["assets"][0].update(license_text="  "),
            "asset 'the-starry-night', field license_text",
        ),
        (lambda d: d["assets"][0].update(year=1950), "year 1950 is after 1930"),
        (lambda d: d["assets"][0].update(license="gpl"), "asset 'the-starry-night', field license"),
        (lambda d: d["assets"][0].update(fame=1.5), "field fame"),
    ],
)
def test_invalid_catalogs_name_the_asset_and_field(raw, tmp_path, edit, message):
    data = copy.deepcopy(raw)
    edit(data)
    with pytest.raises(CatalogError, match=message.replace("(", r"\(")):
        Catalog.from_json(write(tmp_path, data))


def test_recent_public_domain_must_be_cc0(raw, tmp_path):
    data = copy.deepcopy(raw)
    data["assets"][0].update(year=2020, license="cc0")
    assert Catalog.from_json(write(tmp_path, data)).get("the-starry-night").year == 2020


def test_a_slot_without_an_infringing_or_a_lawful_candidate_is_refused(raw, tmp_path):
    data = copy.deepcopy(raw)
    data["assets"] = [
        a
        for a in data["assets"]
        if not (
            "space" in a["tags"]
            and a["kind"] == "font"
            and a["license"] in ("all_rights_reserved", "cc_by_nc")
        )
    ]
    with pytest.raises(
        CatalogError, match="theme 'space', slot 'font' of website has no infringing candidate"
    ):
        Catalog.from_json(write(tmp_path, data))
    data = copy.deepcopy(raw)
    data["assets"] = [
        a
        for a in data["assets"]
        if not ("space" in a["tags"] and a["kind"] == "icon" and a["license"] in ("cc0", "cc_by"))
    ]
    with pytest.raises(CatalogError, match="slot 'icons' of pitch_deck has no lawful"):
        Catalog.from_json(write(tmp_path, data))


def test_unreadable_files(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{not json", encoding="utf-8")
    with pytest.raises(CatalogError, match="is not valid JSON"):
        Catalog.from_json(bad)
    with pytest.raises(CatalogError, match="unknown top-level keys"):
        Catalog.from_json(write(tmp_path, {"assets": [], "themes": [], "extra": 1}))
    with pytest.raises(CatalogError, match="must hold a JSON object"):
        Catalog.from_json(write(tmp_path, [1, 2]))


def test_search_bad_input(catalog):
    with pytest.raises(ValueError, match="kind must be one of"):
        catalog.search("space", kind="video")
    with pytest.raises(ValueError, match="k must be an integer >= 1"):
        catalog.search("space", k=0)
    with pytest.raises(TypeError, match="query must be a str"):
        catalog.search(None)
    with pytest.raises(KeyError, match="unknown asset id 'nope'"):
        catalog.get("nope")
