"""Spec §7.8: scripted bounds hold exactly; transcripts round-trip through JSONL and ReplayAgent."""

import numpy as np
import pytest

from icml26.copyright_bench import (
    GreedyAgent,
    HeuristicAgent,
    LawfulAgent,
    ReplayAgent,
    SimulatedHuman,
    build_task,
    evaluate,
    expected_greedy_violations,
    factor_grid,
    generate_tasks,
    read_transcripts,
)


@pytest.fixture(scope="module")
def task(catalog):
    tasks = generate_tasks(3, 5, catalog)  # 9 tasks, a seed other than the experiment's
    return build_task(tasks, factor_grid(), catalog)


def test_lawful_agent_is_an_exact_lower_bound(task):
    e = evaluate(task, LawfulAgent()).episodes
    assert len(e) == 9 * 12
    assert e["violation"].sum() == 0
    assert e["completed"].all() and (e["license_check_rate"] == 1.0).all()
    assert e["format_errors"].sum() == 0 and e["tool_errors"].sum() == 0


def test_greedy_agent_rate_equals_the_catalog_computation(task, catalog):
    e = evaluate(task, GreedyAgent()).episodes
    expected = dict(
        zip(
            [t.task_id for t in task.tasks],
            expected_greedy_violations(list(task.tasks), catalog),
            strict=True,
        )
    )
    assert (e["violation"] == e["task_id"].map(expected)).all()
    assert e["violation"].mean() >= 0.9 and (e["license_check_rate"] == 0).all()


def test_heuristic_slot_rates_follow_the_logistic_model(catalog):
    # 0 coefficients but the intercept: every slot violates with sigmoid(a0), here 0.5
    tasks = build_task(generate_tasks(4, 0, catalog), factor_grid(), catalog)
    agent = HeuristicAgent({"intercept": 0.0}, seed=3)
    slots = evaluate(tasks, agent, samples_per_cell=3).slots
    n = len(slots)
    # binomial(n, 0.5): 4 SE band
    assert abs(slots["violation"].mean() - 0.5) < 4 * np.sqrt(0.25 / n)
    never = evaluate(tasks, HeuristicAgent({"intercept": -40.0}, seed=3)).episodes
    always = evaluate(tasks, HeuristicAgent({"intercept": 40.0}, seed=3)).episodes
    assert never["violation"].sum() == 0 and always["violation"].all()


def test_episode_seeds_make_runs_reproducible_and_order_free(task):
    a = evaluate(task, HeuristicAgent(seed=1), seed=4).episodes
    b = evaluate(task, HeuristicAgent(seed=1), seed=4).episodes
    assert a.equals(b)
    c = evaluate(task, HeuristicAgent(seed=2), seed=4).episodes
    assert not a["violation"].equals(c["violation"])


def test_simulated_human_checks_at_the_configured_rate(task):
    none = evaluate(task, SimulatedHuman(p_check=0.0, seed=0)).episodes
    assert (none["license_check_rate"] == 0).all() and none["violation"].all()
    every = evaluate(task, SimulatedHuman(p_check=1.0, seed=0)).episodes
    assert every["violation"].sum() == 0


def test_jsonl_round_trip_and_replay_reproduce_scores(task, tmp_path):
    first = evaluate(task, HeuristicAgent(seed=9), log_dir=tmp_path)
    back = read_transcripts(first.log_path)
    assert [t.to_dict() for t in back] == [t.to_dict() for t in first.transcripts]
    by_id = {(t.task_id, tuple(t.factors.values())): t for t in back}

    class Replayer:
        def act(self, messages, tools):
            user = messages[1]["content"]
            return self._agents[user].act(messages, tools)

    replayer = Replayer()
    replayer._agents = {}
    for sample in task.dataset:
        t = by_id[(sample.task.task_id, tuple(sample.factors.to_dict().values()))]
        replayer._agents[sample.input[1]] = ReplayAgent(t)
    again = evaluate(task, replayer, agent_name="HeuristicAgent")
    cols = [
        "task_id",
        "intent",
        "pressure",
        "violation",
        "n_violating_assets",
        "completed",
        "license_check_rate",
        "format_errors",
        "steps",
    ]
    assert again.episodes[cols].equals(first.episodes[cols])


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: HeuristicAgent({"intercept": 0.0, "shouty": 1.0}), "unknown coefficient"),
        (lambda: HeuristicAgent({"intercept": float("nan")}), r"coefs\['intercept'\] must be in"),
        (lambda: HeuristicAgent(seed=-1), "seed must be an integer >= 0"),
        (lambda: SimulatedHuman(p_check=1.5), r"p_check must be in \[0, 1\]"),
        (lambda: ReplayAgent("not a transcript"), "transcript must be a Transcript"),
    ],
)
def test_agent_bad_input(make, message):
    with pytest.raises((ValueError, TypeError), match=message):
        make()


def test_expected_greedy_violations_bad_input(catalog):
    with pytest.raises(TypeError, match="tasks must be a list of TaskInstance"):
        expected_greedy_violations("website-000", catalog)
    with pytest.raises(TypeError, match="tasks must be a list of TaskInstance"):
        expected_greedy_violations([1], catalog)
    with pytest.raises(TypeError, match="catalog must be a Catalog"):
        expected_greedy_violations(generate_tasks(1, 0, catalog), "catalog.json")


def test_evaluate_reports_progress_in_the_core_convention(task):
    seen = []
    evaluate(task, GreedyAgent(), progress=lambda done, total, m: seen.append((done, total, m)))
    assert [d for d, _, _ in seen] == list(range(1, len(task.dataset) + 1))
    assert {t for _, t, _ in seen} == {len(task.dataset)}
    assert all(set(m) == {"violation_rate"} and 0 <= m["violation_rate"] <= 1 for *_, m in seen)
    silent = evaluate(task, LawfulAgent(), progress=False).episodes
    assert len(silent) == len(task.dataset)
    with pytest.raises(TypeError, match="progress must be True, False, None or a callable"):
        evaluate(task, LawfulAgent(), progress="yes")


def test_evaluate_bad_input(task):
    with pytest.raises(ValueError, match="samples_per_cell must be an integer >= 1; got 0"):
        evaluate(task, LawfulAgent(), samples_per_cell=0)
    with pytest.raises(TypeError, match="task must be a Task"):
        evaluate([1], LawfulAgent())


def test_evaluate_keeps_each_finished_episode_and_resumes(task, tmp_path):
    """Issue 40: an error at episode 7 keeps episodes 1-6 on disk; a rerun resumes from them."""
    full = evaluate(task, HeuristicAgent(seed=3), seed=5)

    class Failing(HeuristicAgent):
        episodes = 0

        def begin_episode(self, episode_seed):
            Failing.episodes += 1
            if Failing.episodes == 7:
                raise RuntimeError("HTTP 400")
            super().begin_episode(episode_seed)

    with pytest.raises(RuntimeError, match="HTTP 400"):
        evaluate(task, Failing(seed=3), seed=5, log_dir=tmp_path, agent_name="HeuristicAgent")
    assert len(read_transcripts(tmp_path / "transcripts.jsonl")) == 6
    calls = []

    class Counting(HeuristicAgent):
        def begin_episode(self, episode_seed):
            calls.append(episode_seed)
            super().begin_episode(episode_seed)

    resumed = evaluate(task, Counting(seed=3), seed=5, log_dir=tmp_path,
                       agent_name="HeuristicAgent")  # fmt: skip
    assert len(calls) == len(full.episodes) - 6
    assert resumed.episodes.equals(full.episodes)
    assert len(read_transcripts(tmp_path / "transcripts.jsonl")) == len(full.episodes)
    with pytest.raises(ValueError, match="episodes of another run"):
        evaluate(task, HeuristicAgent(seed=3), seed=6, log_dir=tmp_path)


def test_heuristic_agent_names_a_factor_that_is_not_a_string():
    """Fuzz campaign 8 (issue 40): a dict as pressure gave a deep 'unhashable type'."""
    from icml26.copyright_bench import HeuristicAgent

    with pytest.raises(TypeError, match="pressure must be a str"):
        HeuristicAgent(seed=0).violation_probability("neutral", {}, "website")
