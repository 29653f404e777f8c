"""Registered reproductions of the hybrid-sequence-model claims (spec §5), from the public API.

One module per experiment:

- :mod:`.constructions` — ``hybrid_seq.constructions`` (A1): the explicit SC and MQAR hybrids are
  exact at every length up to T_max with parameters and recurrent state fixed, and the pure-SSM
  slot writer needs k·V state — sanity checks of the library (they hold by construction);
- :mod:`.mqar_smoke` — ``hybrid_seq.mqar_smoke``: a trained hybrid ``SA`` against a two-layer
  RoPE Transformer of at most its size on small MQAR;
- :mod:`.param_efficiency` — ``hybrid_seq.param_efficiency`` (A2, the headline): R(τ), the
  parameter ratio at which non-hybrid families' running-max envelopes first reach τ, from the
  per-family width sweeps on SC and MQAR (quick re-evaluates the shipped seed-0 sweeps;
  :mod:`.sweep_report` holds its tables and figure);
- :mod:`.length_gen` — ``hybrid_seq.length_gen`` (A3): SC length generalisation;
- :mod:`.ood` — ``hybrid_seq.ood`` (A4): MQAR accuracy drop under a distribution shift.

A3–A4 follow the learned-model protocol of spec §2.5 (:mod:`.common`), A2 issue 46's sweeps
(:mod:`icml26.hybrid_seq.sweep`); their ``full`` presets are the faithful runs, ``quick``
presets cut-down versions. Gates say when a comparison can be made at all: the models have
learned the task in distribution (A3, A4), the hybrid reaches the accuracy level and every
family that never reaches it spans 6× (A2), the shift hurts the Transformer (A4); a claim
behind a failing gate reads "testbed invalid".

The paper's full text was not available: the "paper" figure is the abstract's 6×; every other
numeric target is the spec author's or issue 46's small-scale target (``source="spec"``).
Importing this package stays light (``icml26 list``): torch, matplotlib and the library are
imported inside the functions.
"""

from icml26.hybrid_seq.experiments import (
    constructions,
    length_gen,
    mqar_smoke,
    ood,
    param_efficiency,
)

__all__ = ["constructions", "length_gen", "mqar_smoke", "ood", "param_efficiency"]
