"""Registered reproductions of the hybrid-sequence-model claims (spec §5), from the public API.

One module per experiment:

- :mod:`.constructions` — ``hybrid_seq.constructions`` (A1): the explicit SC and MQAR hybrids are
  exact at every length up to T_max with parameters and recurrent state fixed, and the pure-SSM
  slot writer needs k·V state;
- :mod:`.mqar_smoke` — ``hybrid_seq.mqar_smoke``: a trained hybrid ``SA`` solves small MQAR where
  a one-layer Transformer cannot;
- :mod:`.param_efficiency` — ``hybrid_seq.param_efficiency`` (A2): hybrid vs Transformers and
  SSMs of 1–8× its parameters on MQAR;
- :mod:`.length_gen` — ``hybrid_seq.length_gen`` (A3): SC length generalisation;
- :mod:`.ood` — ``hybrid_seq.ood`` (A4): MQAR accuracy drop under a distribution shift.

A2–A4 follow the learned-model protocol of spec §2.5 (:mod:`.common`); their ``full`` presets
are the faithful runs, ``quick`` presets cut-down versions that fit about two minutes.

The paper's full text was not available: the "paper" figures are the abstract's claims, and
every numeric target here is the spec author's small-scale target (``source="spec"``) unless
it is the abstract's 6×. Importing this package stays light (``icml26 list``): torch,
matplotlib and the library are imported inside the functions.
"""

from icml26.hybrid_seq.experiments import (
    constructions,
    length_gen,
    mqar_smoke,
    ood,
    param_efficiency,
)

__all__ = ["constructions", "length_gen", "mqar_smoke", "ood", "param_efficiency"]
