"""Matroid algorithms under a size-sensitive independence-oracle cost model.

Banihashem, HajiAghayi, JafariRaviz, Mittal, *Matroid Algorithms Under Size-Sensitive Independence
Oracles*, ICML 2026 (arXiv:2605.00201). A query ``Q`` costs ``max(1, |Q|)``; greedy bases cost
``Θ(n·r)``, and for matroids with circuits of at most ``c`` elements a sampling algorithm finds the
maximum-weight basis in expected ``O(n^{2-1/c} log n)``.

Deviations (details in docs/matroid.md): the bounded-circuit algorithm's sampling schedule and the
definition of partition size are inferred; the paper's lower bounds are theorems, not code.

Example
-------
>>> from icml26.matroid import CostCounter, UniformBlocks, bounded_circuit_max_weight_basis
>>> import numpy as np
>>> M = CostCounter(UniformBlocks(nblocks=512, m=2, c=2))
>>> w = np.random.default_rng(0).random(M.n)
>>> len(bounded_circuit_max_weight_basis(M, w, c=2, seed=0))
512
"""

from icml26.matroid.bounded_circuit import bounded_circuit_max_weight_basis
from icml26.matroid.families import (
    DirectSum,
    LinearMatroidGF2,
    PartitionMatroid,
    TransversalMatroid,
    UniformBlocks,
    UniformMatroid,
)
from icml26.matroid.graphic import GraphicMatroid
from icml26.matroid.greedy import (
    check_weights,
    find_circuit_lightest,
    greedy_basis,
    lightest_in_dependent,
    max_weight_basis,
    rank,
    weight_order,
)
from icml26.matroid.oracle import (
    AbstractMatroid,
    BudgetExceededError,
    CostCounter,
    IndependenceOracle,
    check_oracle,
    default_cost,
)
from icml26.matroid.partition import (
    covering_number_exact,
    partition_size_exact,
    partition_size_first_fit,
)
from icml26.matroid.scaling import ScalingRecord, fit_loglog_slope, run_scaling_experiment

__all__ = [
    "AbstractMatroid",
    "BudgetExceededError",
    "CostCounter",
    "DirectSum",
    "GraphicMatroid",
    "IndependenceOracle",
    "LinearMatroidGF2",
    "PartitionMatroid",
    "ScalingRecord",
    "TransversalMatroid",
    "UniformBlocks",
    "UniformMatroid",
    "bounded_circuit_max_weight_basis",
    "check_oracle",
    "check_weights",
    "covering_number_exact",
    "default_cost",
    "find_circuit_lightest",
    "fit_loglog_slope",
    "greedy_basis",
    "lightest_in_dependent",
    "max_weight_basis",
    "partition_size_exact",
    "partition_size_first_fit",
    "rank",
    "run_scaling_experiment",
    "weight_order",
]
