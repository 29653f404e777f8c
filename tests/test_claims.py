"""Verdicts that cannot flatter (issue 39): one headline per system at the paper's bar, and every
claim fails on its control."""

from collections import defaultdict

import pytest

from icml26.core import Status, discover

REGISTRY = discover()
SYSTEMS = REGISTRY.systems()
CLAIMS = [(e.name, c) for e in REGISTRY for c in e.claims if c.kind == "claim"]


@pytest.mark.parametrize("slug", SYSTEMS)
def test_every_system_has_exactly_one_headline_from_the_paper(slug):
    headlines = defaultdict(list)
    for experiment in REGISTRY.of_system(slug):
        for claim in experiment.claims:
            if claim.headline:
                headlines[slug].append(f"{experiment.name}:{claim.id}")
    assert len(headlines[slug]) == 1, f"{slug} headline claims: {headlines[slug]}"


@pytest.mark.parametrize(("name", "claim"), CLAIMS, ids=[f"{n}:{c.id}" for n, c in CLAIMS])
def test_a_claim_names_its_control_and_fails_on_it(name, claim):
    assert claim.control and claim.control_value is not None, (
        f"{name} {claim.id}: name the control (baseline or do-nothing variant) and the metric's "
        "value there"
    )
    verdict = claim.judge([claim.control_value] * 3)
    assert verdict.status is not Status.REPRODUCED, (
        f"{name} {claim.id} passes with its control ({claim.control}): its bar is wrong or it "
        "is a sanity check"
    )
