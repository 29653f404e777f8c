"""Spec §7.3: generator invariants, determinism, factor invariance, exact phrases, no licenses."""

import re

import pytest

from icml26.copyright_bench import (
    INTENT_PHRASES,
    INTENTS,
    POLICY_PHRASES,
    PRESSURE_PHRASES,
    PRESSURES,
    CopyrightEnv,
    Factors,
    Family,
    can_be_lawful,
    factor_grid,
    generate_tasks,
    render_prompt,
)
from icml26.copyright_bench.tasks import intent_phrase

LICENSE_WORDS = re.compile(
    r"licen[cs]e|copyright|public domain|creative commons|\bcc\b|cc0|cc-by|royalty|©|"
    r"all rights|stock|attribution|sharealike|noncommercial",
    re.I,
)


@pytest.fixture(scope="module")
def tasks(catalog):
    return generate_tasks(20, 0, catalog)


def test_sixty_tasks_with_lawful_and_infringing_options_in_every_slot(tasks, catalog):
    assert len(tasks) == 60
    assert [t.family for t in tasks].count(Family.PITCH_DECK) == 20
    for t in tasks:
        for slot in t.slots:
            assert slot.lawful and slot.infringing
            assert set(slot.candidates) == set(slot.lawful) | set(slot.infringing)
            for a in slot.lawful:
                assert can_be_lawful(catalog.get(a).license, t.family)
                assert catalog.get(a).kind in slot.kinds and t.theme in catalog.get(a).tags
            for a in slot.infringing:
                assert not can_be_lawful(catalog.get(a).license, t.family)
            # a temptation tops the slot by relevance x popularity
            score = {
                a: catalog.get(a).relevance(slot.query) * catalog.get(a).fame
                for a in slot.candidates
            }
            assert slot.temptation in slot.infringing
            assert score[slot.temptation] == max(score.values())
            assert all(score[a] < score[slot.temptation] for a in slot.lawful)


def test_deterministic_per_seed_and_prefix_stable(tasks, catalog):
    again = generate_tasks(20, 0, catalog)
    assert [t.pool_hash() for t in again] == [t.pool_hash() for t in tasks]
    fewer = generate_tasks(5, 0, catalog)
    assert {t.task_id: t.pool_hash() for t in fewer}.items() <= {
        t.task_id: t.pool_hash() for t in tasks
    }.items()
    other = generate_tasks(20, 1, catalog)
    assert [t.pool_hash() for t in other] != [t.pool_hash() for t in tasks]
    # regression guard (recorded on 2026-12-01 with the shipped catalog): numpy's SeedSequence
    # and the catalog order fix every pool, so a change here means the task set changed
    assert tasks[0].theme == "wildlife"
    assert tasks[0].pool_hash().startswith("8a6de32b7b1e944d")


def test_pools_do_not_depend_on_factors(tasks, catalog):
    for t in tasks[::7]:
        hashes = {CopyrightEnv(t, f, catalog).pool_hash() for f in factor_grid()}
        hashes |= {
            CopyrightEnv(t, Factors("neutral", "none", p, v), catalog).pool_hash()
            for p in POLICY_PHRASES
            for v in ("search_results", "details_only")
        }
        assert len(hashes) == 1


@pytest.mark.parametrize("intent", INTENTS)
@pytest.mark.parametrize("pressure", PRESSURES)
def test_prompts_hold_the_exact_phrases_and_no_license_words(tasks, catalog, intent, pressure):
    for t in tasks[::5]:
        system, user = render_prompt(t, Factors(intent, pressure), catalog)
        phrase = intent_phrase(t, intent, catalog)
        assert phrase in user and PRESSURE_PHRASES[pressure] in user
        if intent != "neutral":
            assert phrase and INTENT_PHRASES[intent].split("{")[0] in user
        for other in PRESSURES:
            if other != pressure and PRESSURE_PHRASES[other]:
                assert PRESSURE_PHRASES[other] not in user
        assert not LICENSE_WORDS.search(user), LICENSE_WORDS.search(user)
        assert not LICENSE_WORDS.search(system)
        for slot in t.slots:
            assert f"- {slot.name}: " in user and f'search: "{slot.query}"' in user


def test_policy_goes_to_the_system_prompt_only(tasks, catalog):
    for policy, phrase in POLICY_PHRASES.items():
        system, user = render_prompt(tasks[0], Factors("neutral", "none", policy), catalog)
        assert phrase in system and (not phrase or phrase not in user)


def test_explicit_request_names_the_featured_temptation(tasks, catalog):
    t = tasks[0]
    asset = catalog.get(t.slots[0].temptation)
    _, user = render_prompt(t, Factors("explicit_request", "none"), catalog)
    assert f'Please use "{asset.title}" by {asset.creator}' in user


def test_factor_grid_is_the_full_factorial():
    grid = factor_grid()
    assert len(grid) == 12 and len({f.cell for f in grid}) == 12
    assert factor_grid(["neutral"], ["high"]) == [Factors("neutral", "high")]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"intent": "angry", "pressure": "none"}, "intent must be one of 'neutral'.*got 'angry'"),
        ({"intent": "neutral", "pressure": "panic"}, "pressure must be one of 'none'"),
        ({"intent": "neutral", "pressure": "none", "policy": "gdpr"}, "policy must be one of"),
        (
            {"intent": "neutral", "pressure": "none", "license_visibility": "always"},
            "license_visibility must be one of 'search_results', 'details_only'",
        ),
    ],
)
def test_unknown_levels_list_the_allowed_ones(kwargs, message):
    with pytest.raises(ValueError, match=message):
        Factors(**kwargs)


def test_generator_bad_input(catalog):
    with pytest.raises(
        ValueError, match=r"n_per_family must be an integer in \[1, 100000\]; got 0"
    ):
        generate_tasks(0)
    with pytest.raises(TypeError, match="n_per_family must be an integer"):
        generate_tasks(2.5)
    with pytest.raises(ValueError, match="seed must be an integer >= 0"):
        generate_tasks(1, -1)
    with pytest.raises(TypeError, match="catalog must be a Catalog"):
        generate_tasks(1, 0, catalog={"assets": []})
    with pytest.raises(TypeError, match="intents must be a sequence"):
        factor_grid("neutral")
    with pytest.raises(ValueError, match="intent must be one of"):
        factor_grid(["neutral", "bold"])
