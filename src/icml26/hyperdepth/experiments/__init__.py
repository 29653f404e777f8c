"""Registered reproductions of HyperDepth (spec §5; issue 24's gates 1–5).

One module per experiment:

- :mod:`.synthetic` — ``hyperdepth.synthetic``: spec gates 1–3 (discrimination, flattening,
  hierarchy recovery) on the spec's synthetic hierarchical hypergraph, behind issue 45's premise
  gate P0 (does the contrastive reference flatten the hierarchy of its own smoothed input?).
- :mod:`.orthogonality` — ``hyperdepth.orthogonality``: spec gate 4, the gradient-conflict
  cosine of the two objectives under frequency separation (exact mode: sanity checks).
- :mod:`.digits` — ``hyperdepth.digits``: spec gate 5, no regression on the flat-label digits
  kNN hypergraph.
- :mod:`.highschool` — ``hyperdepth.highschool``: the SocioPatterns High School 2013 and
  Workplace hypergraphs, and the system's headline (the abstract's "best average rank").

:mod:`.common` holds what they share (the method names and their trainers, the train-and-evaluate
loop, the premise metrics, table rows). HyperDepth (ICML 2026; arXiv id, paper and code not
found): only the abstract was available, so the one paper claim is the abstract's "best average
rank" (the headline, ``source="paper"``); every other reference figure is the spec's or an
issue's own small-scale target (``source="spec"``). The spec's "gates 1–5" are claims here (ids
G1–G3, O1–O3, D1); the core gate is P0.

Importing this package stays light (``icml26 list`` reads it): the library, torch, scikit-learn
and matplotlib are imported inside the functions.
"""

from icml26.hyperdepth.experiments import (  # noqa: F401  (each module registers its experiment)
    depth,
    digits,
    highschool,
    orthogonality,
    synthetic,
)
