"""Registered reproductions (spec §5), one module per experiment:

- :mod:`.risky_chain` — ``cvar_rl.risky_chain``: history dependence, exactness, Q-learning (Q1, Q2);
- :mod:`.cliff` — ``cvar_rl.cliff``: slippery CliffWalking, CVaR vs risk-neutral policies and the
  sparse-operator pathology (Q3–Q6);
- :mod:`.frozen_lake` — ``cvar_rl.frozen_lake``: exhausted budgets, the error bound, Q-learning
  through gymnasium (L1–L3);
- :mod:`.frontier` — ``cvar_rl.frontier``: the performance–safety frontier, discretisation,
  Q-learning seeds and Chow's VI (F1–F4).

The paper's own numbers could not be retrieved: every reference figure is the spec's own target
or its prototype's measurement (``source="spec"``), except F1 (the abstract's qualitative
performance–safety trade-off, ``source="paper"``) and L1–L3 (targets set in issue 17, no paper or
spec figure: ``source="none"``). Q3, Q6a and Q6b hold by construction of the operators
(``kind="sanity"``).

Importing this package stays light (``icml26 list``): the method (scipy, gymnasium) is imported
inside the run functions.
"""

from icml26.cvar_rl.experiments import cliff, frontier, frozen_lake, risky_chain

__all__ = ["cliff", "frontier", "frozen_lake", "risky_chain"]
