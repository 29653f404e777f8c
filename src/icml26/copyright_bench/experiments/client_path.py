"""``copyright_bench.client_path`` — spec §5.2: :class:`OpenAIChatAgent` end to end against a
local fake OpenAI-compatible server.

Three scripted servers (lawful, infringing, malformed JSON) answer over HTTP on 127.0.0.1; the
lawful and infringing scripts must score exactly as LawfulAgent and GreedyAgent run in process,
the malformed one must produce format errors without crashing, and no request may carry
``strict`` (inspect_ai #825). All are sanity checks of the client path; the scripts are
deterministic, so their metrics are declared seed-independent.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from icml26.copyright_bench.experiments.common import INTENTS, PAPER, PRESSURES, check_config
from icml26.core import Claim, Resources, RunContext, register


@dataclass(frozen=True)
class ClientPathConfig:
    """Spec §5.2: OpenAIChatAgent against a local fake server, 30 tasks × 12 cells per script."""

    n_per_family: int = 2
    task_seed: int = 0
    intents: tuple[str, ...] = INTENTS
    pressures: tuple[str, ...] = PRESSURES

    def __post_init__(self) -> None:
        check_config(self, {"n_per_family": (1, 1000), "task_seed": (0, 2**63 - 1)})


CLIENT_DEFAULT = ClientPathConfig()
CLIENT_PRESETS = {
    "smoke": replace(
        CLIENT_DEFAULT, n_per_family=1, intents=("neutral", "explicit_request"), pressures=("high",)
    ),  # seconds
    "quick": CLIENT_DEFAULT,  # 6 tasks × 12 cells: HTTP round trips are the cost
    "full": replace(CLIENT_DEFAULT, n_per_family=10),  # the spec's 30 tasks × 12 cells
}
# Sanity checks against the spec's own targets: the client path must agree with the direct one.
SPEC_SANITY = {"source": "spec", "kind": "sanity"}
# fmt: off
CLIENT_CLAIMS = (
    Claim("K1", "client path, lawful script: every episode scores exactly as LawfulAgent",
          "lawful_match_fraction", ">=", 1.0, "equal", "spec §5.2", **SPEC_SANITY),
    Claim("K2", "client path, infringing script: every episode scores exactly as GreedyAgent",
          "greedy_match_fraction", ">=", 1.0, "equal", "spec §5.2", **SPEC_SANITY),
    Claim("K3a", "malformed script: format_errors > 0 in every episode (minimum)",
          "malformed_min_format_errors", ">=", 1.0, "> 0", "spec §5.2", **SPEC_SANITY),
    Claim("K3b", "malformed script: no crash (fraction of episodes finished)",
          "malformed_finished_fraction", ">=", 1.0, "no crash", "spec §5.2", **SPEC_SANITY),
    Claim("K4", "requests carry tools and tool_choice='auto' and never `strict` (fraction)",
          "clean_request_fraction", ">=", 1.0, "no strict", "spec §5.2; inspect_ai #825",
          **SPEC_SANITY),
)
# fmt: on
# the scripts are deterministic: nothing here depends on the seed
CLIENT_DETERMINISTIC = (
    "*_match_fraction",
    "malformed_*",
    "clean_request_fraction",
    "episodes_per_script",
    "requests",
    "lawful_violation_rate",
    "greedy_violation_rate",
)  # fmt: skip
SCORE_COLUMNS = (
    "violation",
    "n_violating_assets",
    "completed",
    "lawful_completion",
    "license_check_rate",
    "attribution_ok",
    "refused",
    "steps",
    "format_errors",
    "tool_errors",
    "implicit_submit",
    "violating_licenses",
)


def _same(a: Any, b: Any) -> bool:
    missing_a = a is None or (isinstance(a, float) and a != a)
    missing_b = b is None or (isinstance(b, float) and b != b)
    return (missing_a and missing_b) or (not missing_a and not missing_b and a == b)


def _match_fraction(a: Any, b: Any, columns: tuple[str, ...]) -> float:
    """Fraction of rows equal in every column (None and NaN count as equal)."""
    left = a[list(columns)].to_dict("records")
    right = b[list(columns)].to_dict("records")
    if len(left) != len(right):
        return 0.0
    same = [all(_same(x[c], y[c]) for c in columns) for x, y in zip(left, right, strict=True)]
    return sum(same) / len(same)


@register(
    name="copyright_bench.client_path",
    title="OpenAIChatAgent end to end against a local fake OpenAI-compatible server",
    paper=PAPER,
    claims=CLIENT_CLAIMS,
    presets=CLIENT_PRESETS,
    seeds=1,  # deterministic scripts
    deterministic_metrics=CLIENT_DETERMINISTIC,
    resources=Resources(cpus=1),  # one client, one server thread at a time
    description="Spec §5.2: lawful, infringing and malformed-JSON scripts over HTTP on 127.0.0.1.",
)
def client_path(config: ClientPathConfig, ctx: RunContext) -> dict[str, Any]:
    import json

    from icml26.copyright_bench import (
        Catalog,
        FakeOpenAIServer,
        GreedyAgent,
        LawfulAgent,
        OpenAIChatAgent,
        build_task,
        evaluate,
        factor_grid,
        generate_tasks,
    )

    bench_seed = int(ctx.numpy_generator("bench").integers(0, 2**31))
    catalog = Catalog.load_default()
    tasks = generate_tasks(config.n_per_family, config.task_seed, catalog)
    task = build_task(tasks, factor_grid(config.intents, config.pressures), catalog)
    n = len(task.dataset)

    def scored(agent: Any, name: str) -> Any:
        with ctx.progress(n, f"episodes: {name}") as bar:
            return evaluate(task, agent, seed=bench_seed, progress=bar)

    direct = {"lawful": scored(LawfulAgent(), "lawful"), "greedy": scored(GreedyAgent(), "greedy")}
    served, finished = {}, {}
    with FakeOpenAIServer() as server:
        for script in ("lawful", "greedy", "malformed"):
            agent = OpenAIChatAgent(script, base_url=server.base_url, timeout=30)
            try:
                served[script] = scored(agent, f"{script} script over HTTP")
                finished[script] = 1.0
            except Exception:  # counted as the crash the claim checks for
                finished[script] = 0.0
        requests = list(server.requests)
    clean = [
        "strict" not in json.dumps(r) and bool(r.get("tools")) and r.get("tool_choice") == "auto"
        for r in requests
    ]
    malformed = served.get("malformed")
    outcome = ("violation", "n_violating_assets", "completed", "license_check_rate")
    return {
        "episodes_per_script": n,
        "requests": len(requests),
        "lawful_match_fraction": _match_fraction(
            served["lawful"].episodes, direct["lawful"].episodes, SCORE_COLUMNS
        ),
        "greedy_match_fraction": _match_fraction(
            served["greedy"].episodes, direct["greedy"].episodes, SCORE_COLUMNS
        ),
        "malformed_min_format_errors": float(malformed.episodes["format_errors"].min())
        if malformed is not None
        else float("nan"),
        "malformed_finished_fraction": finished["malformed"],
        "malformed_outcome_match_fraction": _match_fraction(
            malformed.episodes, direct["lawful"].episodes, outcome
        )
        if malformed is not None
        else float("nan"),
        "clean_request_fraction": float(sum(clean) / len(clean)) if clean else float("nan"),
        "lawful_violation_rate": float(served["lawful"].episodes["violation"].mean()),
        "greedy_violation_rate": float(served["greedy"].episodes["violation"].mean()),
    }
