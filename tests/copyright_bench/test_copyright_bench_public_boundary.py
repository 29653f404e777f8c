"""Regression tests of the public boundary (issue 16): each kind of bad input the fuzz test
found is refused with a ValueError / TypeError that names the parameter or field."""

import math

import pytest

from icml26.copyright_bench import (
    AssistantTurn,
    Catalog,
    EpisodeScore,
    FactorModel,
    FakeOpenAIServer,
    GreedyAgent,
    HeuristicAgent,
    Observation,
    Transcript,
    build_task,
    can_be_lawful,
    copyright_task,
    episode_seed,
    factor_grid,
    generate_tasks,
    newcombe_diff_ci,
    parse_tool_calls_from_text,
    run_benchmark,
    score_state,
    tool_specs_for,
    true_coefficients,
)


@pytest.mark.parametrize(
    ("build", "field"),
    [
        (lambda: AssistantTurn(tool_calls=[[]]), "tool_calls"),
        (lambda: Observation("search_assets", True, 2.5), "content"),
        (lambda: EpisodeScore(**{**_score_fields(), "violation_by_license": 2.5}), "violation_by"),
        (lambda: FactorModel(2.5, {}, {}, "episode", 1, 1, True), "params"),
    ],
)
def test_records_refuse_fields_of_the_wrong_kind_where_they_are_built(build, field):
    with pytest.raises(TypeError, match=field):
        build()


def test_a_transcript_with_a_nan_duration_is_refused_instead_of_carried_on():
    fields = {
        "task_id": "t", "factors": {}, "mode": "deliverable", "agent": "a", "episode_seed": 0,
        "sample": 0, "messages": [], "events": [], "turn_format_errors": [], "final_state": {},
        "usage": {},
    }  # fmt: skip
    with pytest.raises(TypeError, match="seconds"):
        Transcript(**fields, seconds=float("nan"))
    assert Transcript(**fields, seconds=1.5).to_dict()["seconds"] == 1.5


def _score_fields():
    return dict(
        task_id="t", family="website", mode="deliverable", intent="neutral", pressure="none",
        policy="none", license_visibility="details_only", violation=False, n_violating_assets=0,
        violation_by_license={}, completed=True, lawful_completion=True,
        license_check_rate=float("nan"), attribution_ok=None, refused=False, format_errors=0,
        tool_errors=0, steps=3, implicit_submit=False, truncated=False,
    )  # fmt: skip


def test_an_undefined_check_rate_stays_allowed():
    assert math.isnan(EpisodeScore(**_score_fields()).to_row()["license_check_rate"])


def test_slot_lookup_of_an_unknown_name_is_a_key_and_value_error():
    task = generate_tasks(1)[0]
    with pytest.raises(KeyError, match="name"):
        task.slot("nope")
    with pytest.raises(ValueError, match="name"):
        task.slot("nope")


def test_functions_name_their_bad_arguments():
    with pytest.raises(ValueError, match="family"):
        tool_specs_for(None)
    with pytest.raises(TypeError, match="license"):
        can_be_lawful(None, "website")
    with pytest.raises(ValueError, match="seed"):
        episode_seed(-1, 0, 0, 0)
    with pytest.raises(TypeError, match="seed"):
        episode_seed(None, 0, 0, 0)
    with pytest.raises(TypeError, match="assets"):
        Catalog(None, None)
    with pytest.raises(TypeError, match="text"):
        parse_tool_calls_from_text(2.5)
    with pytest.raises(TypeError, match="grid"):
        build_task([], None, Catalog.load_default())
    with pytest.raises(ValueError, match="families"):
        copyright_task(["website", "none"])
    with pytest.raises(TypeError, match="tasks"):
        run_benchmark(GreedyAgent(), 0)
    with pytest.raises(ValueError, match="n_per_family"):
        generate_tasks(10**12)
    with pytest.raises(ValueError, match="intents"):
        factor_grid([object()])
    with pytest.raises(TypeError, match="coefs"):
        HeuristicAgent(2.5)
    with pytest.raises(TypeError, match="coefs"):
        true_coefficients(None)
    with pytest.raises(ValueError, match="n1"):
        newcombe_diff_ci(1, 0, 1, 2)


def test_score_state_names_what_the_state_lacks():
    with pytest.raises(ValueError, match="state"):
        score_state({}, None)
    with pytest.raises(TypeError, match="state"):
        score_state(2.5)


def test_scripted_agents_need_a_conversation_with_the_prompt():
    with pytest.raises(ValueError, match="messages"):
        GreedyAgent().act([], [])
    with pytest.raises(TypeError, match="tools"):
        GreedyAgent().act([{"role": "user", "content": "x"}], [0])


def test_the_fake_server_checks_its_injected_failures():
    server = FakeOpenAIServer()
    with pytest.raises(ValueError, match="status"):
        server.fail_next(1, status=200)
    with pytest.raises(TypeError, match="n"):
        server.fail_next(1.5)


def test_fuzz_campaign_findings_are_refused_by_name():
    # issue 40's seeded campaign (ICML26_FUZZ_EXAMPLES=48 ICML26_FUZZ_SEED=20261207)
    from icml26.copyright_bench import ReplayAgent, SimulatedHuman, pool_cell_rates

    with pytest.raises(TypeError, match="messages"):
        ReplayAgent([]).act(None, 0)
    with pytest.raises(ValueError, match="episode_seed"):
        SimulatedHuman().begin_episode(-1)
    with pytest.raises(TypeError, match="runs"):
        pool_cell_rates([[{}]])
