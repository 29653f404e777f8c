"""Registered reproductions of PLaCy's claims (spec §5), composed from the public API.

One module per experiment:

- :mod:`.robustness` — ``powerlaw_cd.robustness`` (quick gate): PLaCy vs time-domain Granger on
  stock-like, non-stationary data (Q1), OU sanity (Q2), vectorised features (Q4);
- :mod:`.grid` — ``powerlaw_cd.grid`` (full): the §2.5 grid with Granger, PCMCI+ and
  RCV-VarLiNGAM (F1–F3).

Importing this package imports neither the method nor its extra (``icml26 list`` reads it); the
run functions import them.
"""

from icml26.powerlaw_cd.experiments import grid, robustness

__all__ = ["grid", "robustness"]
