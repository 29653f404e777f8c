"""Registered reproductions (spec §5), one module per experiment:

- :mod:`.risky_chain` — ``cvar_rl.risky_chain``: history dependence, exactness, Q-learning (Q1, Q2);
- :mod:`.cliff` — ``cvar_rl.cliff``: slippery CliffWalking, CVaR vs risk-neutral policies and the
  sparse-operator pathology (Q3–Q6);
- :mod:`.frozen_lake` — ``cvar_rl.frozen_lake``: exhausted budgets, the error bound, Q-learning
  through gymnasium (L1–L3);
- :mod:`.frontier` — ``cvar_rl.frontier``: the performance–safety frontier, discretisation,
  Q-learning seeds and Chow's VI (F1–F4).

The paper's own numbers could not be retrieved: the headline (cliff Q4: the CVaR policy's
MC CVaR_0.05 exceeds the risk-neutral policy's, the abstract's "CVaR-sensitive policies") is the
abstract's qualitative claim (``source="paper"``); every other reference figure is the spec's own
target, its prototype's measurement or a target set in issue 17 (``source="spec"``). Checks that
hold by construction are ``kind="sanity"`` (Q1a, Q3, Q6a/b, L1, L2, F3); premises of the testbed
are gates (risky_chain Q1d: history dependence matters; cliff G: the risk-neutral policy has a
tail to remove). Every claim names its control (the best Markov policy, an untrained Q-table, the
risk-neutral policy, the sparse operator's degenerate fixed point, Chow's policy), on which it
fails (``tests/cvar_rl/test_cvar_rl_controls.py``). Seed-dependent claims get >= 3 values: three
seeds (risky_chain, frozen_lake) or, where value iteration does not draw, replicates and
Q-learning seeds inside one task (cliff, frontier), with paired rollouts on shared streams.

Importing this package stays light (``icml26 list``): the method (scipy, gymnasium) is imported
inside the run functions.
"""

from icml26.cvar_rl.experiments import cliff, frontier, frozen_lake, risky_chain

__all__ = ["cliff", "frontier", "frozen_lake", "risky_chain"]
