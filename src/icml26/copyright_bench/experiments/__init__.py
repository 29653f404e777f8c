"""Registered reproductions of Copyright-Bench (spec §5), one module per experiment:

- :mod:`.llm_agents` — ``copyright_bench.llm_agents``: the paper's findings (headline H1: agents
  infringe although lawful alternatives exist; L2a/L2b: intent and pressure raise the rate) on a
  real chat model given by ``--set model=...``; none is available offline, so they read "not
  measured" unless a model is configured. Gates: the model completes the jobs, a lawful and a
  greedy scripted agent show that both options are present and reachable;
- :mod:`.scripted` — ``copyright_bench.scripted``: Lawful, Greedy, Heuristic and SimulatedHuman
  agents over 60 tasks × 12 factor cells; exact bounds and reproducible statistics (C1, C2, C4,
  C5), all sanity checks;
- :mod:`.factor_recovery` — ``copyright_bench.factor_recovery``: the slot-level factor model
  recovers a HeuristicAgent's known coefficients (C3): sanity checks of our estimator;
- :mod:`.client_path` — ``copyright_bench.client_path``: OpenAIChatAgent end to end against a
  local fake OpenAI-compatible server (§5.2), sanity checks of the client.

The paper's abstract gives no numbers: its claims are the abstract's qualitative findings
(``source="paper"``, bar "> 0"); the scripted checks use the spec's own targets
(``source="spec"``).

Importing this package stays light (``icml26 list`` reads it): the system's API, pandas,
statsmodels and matplotlib are imported inside the functions.
"""

from icml26.copyright_bench.experiments import (
    client_path,
    factor_recovery,
    llm_agents,
    scripted,
)

__all__ = ["client_path", "factor_recovery", "llm_agents", "scripted"]
