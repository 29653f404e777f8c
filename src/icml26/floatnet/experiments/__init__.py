"""Registered reproductions of floatnet (spec section 5), one module per experiment:

- :mod:`~icml26.floatnet.experiments.depth3` — ``floatnet.depth3``: C3 is exact on every input;
- :mod:`~icml26.floatnet.experiments.width` — ``floatnet.width``: Cw's width 2d+4 / d+4, width 5
  below d on {0,1}^8, width-1 networks are monotone;
- :mod:`~icml26.floatnet.experiments.exact_vs_float` — ``floatnet.exact_vs_float``: a depth-2
  memoriser exact in real arithmetic fails in float16;
- :mod:`~icml26.floatnet.experiments.full` — ``floatnet.full``: larger cases, every summation
  order, a float16 sub-domain;
- :mod:`~icml26.floatnet.experiments.common` — the case syntax and table rows they share.

Every claim is checked by exhaustive evaluation of the rounded networks on random target tables.
Importing this package stays light (``icml26 list`` reads it): the floatnet library and matplotlib
are imported inside the functions. Everything is numpy on small arrays, so each task asks for one
CPU; random tables come from ``ctx.numpy_generator()``.
"""

from icml26.floatnet.experiments import depth3, exact_vs_float, full, width

__all__ = ["depth3", "exact_vs_float", "full", "width"]
