"""Registered reproductions of OmniFit's claims (spec §5) on AV-Sync QA with the TinyOmni stand-in.

- :mod:`~icml26.omnifit.experiments.accuracy` (``omnifit.accuracy``, A1, A2): relative
  performance of OmniFit and the baselines at the same cost-equivalent retention;
- :mod:`~icml26.omnifit.experiments.profile` (``omnifit.profile``, A3): the LAHP profile of the
  trained stand-in, its cost equation and the ``mu = 1`` equivalence;
- :mod:`~icml26.omnifit.experiments.efficiency` (``omnifit.efficiency``, A4): prefill latency,
  KV cache and selection overhead at W = 32;
- :mod:`~icml26.omnifit.experiments.score_once` (``omnifit.score_once``, A5): scoring once from
  ``H^(0)`` vs re-scoring before every layer.

:mod:`~icml26.omnifit.experiments.common` holds the stand-in config and presets they share.
No omni LLM runs here: the paper's figures are Qwen-Omni numbers, and every threshold is the spec
author's small-scale target (``source="spec"``). Importing this package stays light
(``icml26 list``): torch, matplotlib and the library are imported inside the functions.
"""

from icml26.omnifit.experiments import accuracy, efficiency, profile, score_once

__all__ = ["accuracy", "efficiency", "profile", "score_once"]
