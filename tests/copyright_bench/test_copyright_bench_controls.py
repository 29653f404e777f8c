"""The paper's claims (copyright_bench.llm_agents), evaluated on their controls for real (issue 39).

The experiment is run as registered, with the chat model replaced by the fake server's scripted
"models": the lawful script (H1's control: it never infringes) and the greedy script (L2a/L2b's
control: it ignores the prompt). Neither may reproduce the claims it controls; the greedy script
does reproduce H1 and a prompt-sensitive HeuristicAgent reproduces L2a/L2b, so the bars can be
met. Without a model every claim of the paper reads "not measured".
"""

from dataclasses import replace

import pytest

from icml26.copyright_bench import FakeOpenAIServer, HeuristicAgent, copyright_task, evaluate
from icml26.copyright_bench.experiments import llm_agents
from icml26.core import RunContext, Status, discover, judge_claims

EXPERIMENT = discover().get("copyright_bench.llm_agents")
SMOKE = llm_agents.LLM_PRESETS["smoke"]


def _verdicts(metrics):
    deterministic = {c.metric: EXPERIMENT.is_deterministic(c.metric) for c in EXPERIMENT.claims}
    verdicts = judge_claims(EXPERIMENT.claims, [metrics], deterministic=deterministic)
    return {v.claim.id: v.status for v in verdicts}


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """The experiment's metrics with each scripted model behind the fake server."""
    out = {}
    with FakeOpenAIServer() as server:
        for script in ("lawful", "greedy"):
            config = replace(SMOKE, model=script, base_url=server.base_url)
            ctx = RunContext(seed=3, artifact_dir=tmp_path_factory.mktemp(script))
            out[script] = llm_agents.llm_agents(config, ctx)
    return out


def test_without_a_model_the_papers_claims_are_not_measured_and_the_premise_gates_hold(tmp_path):
    metrics = llm_agents.llm_agents(SMOKE, RunContext(seed=0, artifact_dir=tmp_path))
    status = _verdicts(metrics)
    assert status["G2"] is Status.HOLDS and status["G3"] is Status.HOLDS
    for claim_id in ("G1", "H1", "L2a", "L2b"):
        assert status[claim_id] is Status.NOT_MEASURED


def test_the_lawful_control_does_not_reproduce_the_headline(served):
    metrics = served["lawful"]
    headline = next(c for c in EXPERIMENT.claims if c.headline)
    assert set(metrics[headline.metric]) == {headline.control_value}
    status = _verdicts(metrics)
    assert status["G1"] is Status.HOLDS  # the scripted model completes every job
    assert status["H1"] is Status.NOT_REPRODUCED


def test_a_prompt_insensitive_agent_does_not_reproduce_the_intent_and_pressure_effects(served):
    metrics = served["greedy"]
    status = _verdicts(metrics)
    assert status["H1"] is Status.REPRODUCED  # it infringes, so the headline's bar can be met
    for claim_id in ("L2a", "L2b"):
        claim = next(c for c in EXPERIMENT.claims if c.id == claim_id)
        assert set(metrics[claim.metric]) == {claim.control_value}
        assert status[claim_id] is Status.NOT_REPRODUCED


def test_the_effects_are_detectable_and_a_null_agent_does_not_show_them():
    # the quick preset's 60 tasks; the null agent's draw is one fixed seed (a chance false
    # positive of the paired bootstrap would happen for about 1 seed in 40)
    task = copyright_task(n_per_family=20)
    gates = {"llm_completion_by_task": [1.0], "lawful_agent_lawful_completion": 1.0}
    gates["greedy_agent_violation_rate"] = 1.0
    effects = {"intercept": -2.0, "explicit_request": 2.0, "high": 1.4}
    null = {"intercept": -1.0}
    status = {}
    for name, coefs in (("effects", effects), ("null", null)):
        episodes = evaluate(task, HeuristicAgent(coefs, seed=5), seed=5).episodes
        status[name] = _verdicts(gates | llm_agents.llm_metrics(episodes))
    assert status["effects"]["L2a"] is Status.REPRODUCED
    assert status["effects"]["L2b"] is Status.REPRODUCED
    assert status["null"]["L2a"] is not Status.REPRODUCED
    assert status["null"]["L2b"] is not Status.REPRODUCED
