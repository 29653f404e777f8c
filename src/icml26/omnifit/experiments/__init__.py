"""Registered reproductions of OmniFit's claims (spec §5) on AV-Sync QA with the TinyOmni stand-in.

- :mod:`~icml26.omnifit.experiments.scene` (``omnifit.scene``, headline O1, issue 43): OmniFit
  and the baselines on AV-Scene QA with three shipped tiny Qwen2.5-Omni thinker stand-ins,
  behind competence and oracle gates;
- :mod:`~icml26.omnifit.experiments.accuracy` (``omnifit.accuracy``, A1, A2 on AV-Sync QA):
  relative performance of OmniFit and the baselines at the same cost-equivalent retention,
  behind oracle-ceiling gates G1-G4;
- :mod:`~icml26.omnifit.experiments.profile` (``omnifit.profile``, A3): the LAHP profile of the
  trained stand-in, its cost equation and the ``mu = 1`` equivalence;
- :mod:`~icml26.omnifit.experiments.efficiency` (``omnifit.efficiency``, A4): prefill latency,
  KV cache and selection overhead at W = 32;
- :mod:`~icml26.omnifit.experiments.score_once` (``omnifit.score_once``, A5): scoring once from
  ``H^(0)`` vs re-scoring before every layer, behind the gate G5 (selection matters at all).

:mod:`~icml26.omnifit.experiments.common` holds the stand-in config and presets they share.
No omni LLM runs here: the paper's figures are Qwen-Omni numbers. The headline O1 holds the
paper's own bar (98 % relative performance at 20 % tokens, ``source="paper"``); every other
threshold is the spec author's small-scale target or an issue's gate (``source="spec"``).
Importing this package stays light (``icml26 list``): torch, matplotlib and the library are
imported inside the functions.
"""

from icml26.omnifit.experiments import accuracy, efficiency, profile, scene, score_once

__all__ = ["accuracy", "efficiency", "profile", "scene", "score_once"]
