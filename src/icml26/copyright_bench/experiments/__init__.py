"""Registered reproductions of Copyright-Bench (spec §5), one module per experiment:

- :mod:`.scripted` — ``copyright_bench.scripted``: Lawful, Greedy, Heuristic and SimulatedHuman
  agents over 60 tasks × 12 factor cells; exact bounds and reproducible statistics (C1, C2, C4,
  C5);
- :mod:`.factor_recovery` — ``copyright_bench.factor_recovery``: the slot-level factor model
  recovers a HeuristicAgent's known coefficients over 100 replicates (C3);
- :mod:`.client_path` — ``copyright_bench.client_path``: OpenAIChatAgent end to end against a
  local fake OpenAI-compatible server (§5.2).

The paper's abstract gives no numbers, so every reference figure is the spec's own target for
agents with known ground truth (``source="spec"``); checks that hold by construction (exact
scripted bounds, identities, hash equality) are ``kind="sanity"``. The paper's three qualitative
claims need real models and are listed in the report as "not measurable offline".

Importing this package stays light (``icml26 list`` reads it): the system's API, pandas,
statsmodels and matplotlib are imported inside the functions.
"""

from icml26.copyright_bench.experiments import client_path, factor_recovery, scripted

__all__ = ["client_path", "factor_recovery", "scripted"]
