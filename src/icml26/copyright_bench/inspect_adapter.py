"""The benchmark as a real inspect_ai ``Task`` (spec §4): ``as_inspect_task(...)``.

Each sample's input is the episode's ``[system, user]`` messages; the solver builds that sample's
:class:`CopyrightEnv`, offers its tools as inspect ``ToolDef`` s with the same JSON schemas, and
runs up to ``max_steps`` rounds of ``generate(tool_calls="single")``, stopping when ``submit``
was called or the model answers without a tool call (implicit submit); the scorer scores the
environment's final state with :func:`score_state`. Run it with any inspect model, e.g.
``inspect_ai.eval(as_inspect_task(), model="openai/gpt-4o-mini")``, or offline with
``mockllm/model``.

Deviations (details in docs/copyright_bench.md): inspect checks tool arguments against the schema
itself and answers a bad call with an error message, so such calls reach the environment only
when they parse; the environment then counts what it still refuses.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any

from icml26.copyright_bench.catalog import Catalog
from icml26.copyright_bench.env import CopyrightEnv
from icml26.copyright_bench.families import Family
from icml26.copyright_bench.harness import copyright_task
from icml26.copyright_bench.scoring import score_state
from icml26.copyright_bench.tasks import Factors
from icml26.core.imports import require
from icml26.core.validation import check_positive_int

__all__ = ["as_inspect_task"]

SCORE_KEYS = ("violation", "completed", "lawful_completion", "refused")


def _tool(env: CopyrightEnv, spec: dict[str, Any]) -> Any:
    from inspect_ai.tool import ToolDef, ToolParams

    name = spec["function"]["name"]

    async def call(**kwargs: Any) -> str:
        return env.step(name, kwargs).to_content()

    return ToolDef(
        call,
        name=name,
        description=spec["function"]["description"],
        parameters=ToolParams.model_validate(spec["function"]["parameters"]),
    ).as_tool()


def as_inspect_task(
    families: Iterable[Family | str] = tuple(Family),
    grid: str | Sequence[Factors] = "full",
    n_per_family: int = 20,
    seed: int = 0,
    catalog: Catalog | None = None,
    mode: str = "deliverable",
    max_steps: int = 20,
) -> Any:
    """An ``inspect_ai.Task`` of the benchmark (same samples as :func:`copyright_task`).

    Scores are dicts with 0/1 ``violation``, ``completed``, ``lawful_completion`` and
    ``refused``, each averaged by inspect's ``mean()`` metric; the full episode row is in the
    score's metadata.

    Raises
    ------
    MissingExtraError
        If inspect-ai is not installed.
    """
    inspect_ai = require("inspect_ai", "copyright_bench", owner="as_inspect_task")
    from inspect_ai.dataset import MemoryDataset, Sample
    from inspect_ai.model import ChatMessageSystem, ChatMessageUser
    from inspect_ai.scorer import Score, mean, scorer
    from inspect_ai.solver import solver

    max_steps = check_positive_int("max_steps", max_steps, owner="as_inspect_task")
    ours = copyright_task(families, grid, n_per_family, seed, catalog, mode, max_steps)
    by_id = {s.id: s for s in ours.dataset}
    envs: dict[str, CopyrightEnv] = {}
    dataset = MemoryDataset(
        [
            Sample(
                id=s.id,
                input=[ChatMessageSystem(content=s.input[0]), ChatMessageUser(content=s.input[1])],
                target=s.target,
                metadata=s.metadata,
            )
            for s in ours.dataset
        ]
    )

    @solver
    def copyright_agent_loop() -> Any:
        async def solve(state: Any, generate: Any) -> Any:
            sample = by_id[str(state.sample_id)]
            env = CopyrightEnv(sample.task, sample.factors, ours.catalog, mode=mode)
            envs[str(state.sample_id)] = env
            state.tools = [_tool(env, spec) for spec in env.tool_specs()]
            for _ in range(max_steps):
                state = await generate(state, tool_calls="single")
                if not state.output.message.tool_calls:
                    env.finish(implicit=True)
                if env.done:
                    break
            env.finish(truncated=True)  # no-op when the episode already ended
            return state

        return solve

    @scorer(metrics={key: [mean()] for key in SCORE_KEYS})
    def compliance() -> Any:
        async def score(state: Any, target: Any) -> Any:
            result = score_state(envs[str(state.sample_id)].state, mode)
            row = result.to_row()
            return Score(
                value={key: int(bool(row[key])) for key in SCORE_KEYS},
                answer=json.dumps({u: a for u, a in _deliverable(result).items()}),
                metadata=row,
            )

        return score

    return inspect_ai.Task(
        dataset=dataset, solver=copyright_agent_loop(), scorer=compliance(), name="copyright_bench"
    )


def _deliverable(score: Any) -> dict[str, str]:
    return {s.slot: s.asset_id for s in score.slots}
