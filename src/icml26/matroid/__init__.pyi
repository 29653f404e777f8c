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
from icml26.matroid.instances import (
    MAX_GNP_VERTICES,
    MAX_SMALL_MATROID,
    SMALL_FAMILIES,
    gnp_graphic_instance,
    random_small_matroid,
    triangles_instance,
    uniform_blocks_instance,
)
from icml26.matroid.oracle import (
    MAX_GROUND_SET,
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
    "MAX_GNP_VERTICES",
    "MAX_GROUND_SET",
    "MAX_SMALL_MATROID",
    "SMALL_FAMILIES",
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
    "gnp_graphic_instance",
    "greedy_basis",
    "lightest_in_dependent",
    "max_weight_basis",
    "partition_size_exact",
    "partition_size_first_fit",
    "random_small_matroid",
    "rank",
    "run_scaling_experiment",
    "triangles_instance",
    "uniform_blocks_instance",
    "weight_order",
]
