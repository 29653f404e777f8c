"""Matroid algorithms under a size-sensitive independence-oracle cost model.

Banihashem, HajiAghayi, JafariRaviz, Mittal, *Matroid Algorithms Under Size-Sensitive Independence
Oracles*, ICML 2026 (arXiv:2605.00201). A query ``Q`` costs ``max(1, |Q|)``; greedy bases cost
``Θ(n·r)``, and for matroids with circuits of at most ``c`` elements a sampling algorithm finds the
maximum-weight basis in expected ``O(n^{2-1/c} log n)``.

Deviations (details in docs/matroid.md): the bounded-circuit algorithm's sampling schedule and the
definition of partition size are inferred; the paper's lower bounds are theorems, not code.

Examples
--------
>>> from icml26.matroid import CostCounter, UniformBlocks, bounded_circuit_max_weight_basis
>>> import numpy as np
>>> M = CostCounter(UniformBlocks(nblocks=512, m=2, c=2))
>>> w = np.random.default_rng(0).random(M.n)
>>> len(bounded_circuit_max_weight_basis(M, w, c=2, seed=0))
512
"""

from icml26.core.imports import lazy_api

__getattr__, __dir__, __all__ = lazy_api(__name__, __file__)
