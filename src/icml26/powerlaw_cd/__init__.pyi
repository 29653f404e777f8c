from icml26.powerlaw_cd.baselines import pcmci_plus, var_lingam
from icml26.powerlaw_cd.datasets import (
    RIVERS_COLUMNS,
    Dataset,
    load_airquality,
    load_csv_with_truth,
    load_rivers,
    load_sardine_anchovy_sst,
    windowed_scores,
)
from icml26.powerlaw_cd.features import (
    n_windows,
    powerlaw_features,
    powerlaw_features_reference,
    window_frequencies,
)
from icml26.powerlaw_cd.graph import benjamini_hochberg, find_cycle, is_dag, make_acyclic
from icml26.powerlaw_cd.metrics import f1_tnr
from icml26.powerlaw_cd.pairwise import CDResult, granger_on_features, granger_pairwise, placy
from icml26.powerlaw_cd.simulate import SimResult, powerlaw_noise, simulate_ou
from icml26.powerlaw_cd.sweep import (
    dataset_seed,
    min_cell_gain,
    pool_summaries,
    run_benchmark,
    summarize_benchmark,
    worst_cell_gains,
)
from icml26.powerlaw_cd.wald import WaldResult, lagged_design, var_wald_test

__all__ = [
    "RIVERS_COLUMNS",
    "CDResult",
    "Dataset",
    "SimResult",
    "WaldResult",
    "benjamini_hochberg",
    "dataset_seed",
    "f1_tnr",
    "find_cycle",
    "granger_on_features",
    "granger_pairwise",
    "is_dag",
    "lagged_design",
    "load_airquality",
    "load_csv_with_truth",
    "load_rivers",
    "load_sardine_anchovy_sst",
    "make_acyclic",
    "min_cell_gain",
    "n_windows",
    "pcmci_plus",
    "placy",
    "pool_summaries",
    "powerlaw_features",
    "powerlaw_features_reference",
    "powerlaw_noise",
    "run_benchmark",
    "simulate_ou",
    "summarize_benchmark",
    "var_lingam",
    "var_wald_test",
    "window_frequencies",
    "windowed_scores",
    "worst_cell_gains",
]
