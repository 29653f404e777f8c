"""Registered reproductions of the size-sensitive matroid paper (spec §5), one module each.

- :mod:`~icml26.matroid.experiments.bounded_circuit_scaling` — ``matroid.bounded_circuit_scaling``
  (E1): greedy vs the bounded-circuit algorithm on UniformBlocks with c = 2;
- :mod:`~icml26.matroid.experiments.c3_scaling` — ``matroid.c3_scaling`` (E2): the same with
  c = 3, on UniformBlocks and on disjoint-triangle multigraphs;
- :mod:`~icml26.matroid.experiments.partition_size` — ``matroid.partition_size`` (E3): first-fit
  vs the exact partition size on random small matroids;
- :mod:`~icml26.matroid.experiments.greedy_cost` — ``matroid.greedy_cost`` (E4): greedy's cost
  is Θ(n·r) on uniform and random graphic matroids.

Every experiment only composes the public API: instances from :mod:`icml26.matroid.instances`,
algorithms run on fresh :class:`~icml26.matroid.CostCounter` wrappers by
:func:`~icml26.matroid.run_scaling_experiment`, exponents by
:func:`~icml26.matroid.fit_loglog_slope`. Costs are the metrics; wall times are left out.
Importing this package stays light (``icml26 list``): the matroid library, networkx and
matplotlib are imported inside the functions that use them.
"""

from icml26.matroid.experiments import (
    bounded_circuit_scaling,
    c3_scaling,
    greedy_cost,
    partition_size,
)

__all__ = ["bounded_circuit_scaling", "c3_scaling", "greedy_cost", "partition_size"]
