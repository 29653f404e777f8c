"""Registered reproductions of HyperDepth (spec §5; issue 24's gates 1–5).

One module per experiment:

- :mod:`.synthetic` — ``hyperdepth.synthetic``: gates 1–3 (discrimination, flattening,
  hierarchy recovery) on the spec's synthetic hierarchical hypergraph.
- :mod:`.orthogonality` — ``hyperdepth.orthogonality``: gate 4, the gradient-conflict cosine of
  the two objectives under frequency separation.
- :mod:`.digits` — ``hyperdepth.digits``: gate 5, no regression on the flat-label digits kNN
  hypergraph.
- :mod:`.highschool` — ``hyperdepth.highschool``: the SocioPatterns High School 2013 and
  Workplace hypergraphs.

:mod:`.common` holds what they share (the method names and their trainers, the train-and-evaluate
loop, table rows). HyperDepth (ICML 2026; arXiv id, paper and code not found): only the abstract
was available, so every reference figure is the spec's own small-scale target
(``source="spec"``), never a number from the paper.

Importing this package stays light (``icml26 list`` reads it): the library, torch, scikit-learn
and matplotlib are imported inside the functions.
"""

from icml26.hyperdepth.experiments import (  # noqa: F401  (each module registers its experiment)
    digits,
    highschool,
    orthogonality,
    synthetic,
)
