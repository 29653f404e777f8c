from icml26.taco.backbone import KVCache, PerFeatureTransformer
from icml26.taco.baselines import class_allocation, linear_baseline, subsample_context
from icml26.taco.classifier import TACOClassifier
from icml26.taco.competence import CompetenceTable, competence_panel
from icml26.taco.config import SHIPPED_CONFIG, TACOConfig
from icml26.taco.efficiency import (
    InferenceCost,
    activation_elements,
    benchmark_inference,
    peak_rss_increase,
    predict_macs,
)
from icml26.taco.encoder import EncoderStats, InputEncoder, compute_stats
from icml26.taco.metrics import cross_entropy_nats, roc_auc
from icml26.taco.model import (
    RCP_CHOICES,
    CompressedContext,
    ResidualMLP,
    TACOModel,
    choose_percentage,
    n_latents,
)
from icml26.taco.prior import MLPSCMPrior, PriorBatch
from icml26.taco.prior_v3 import MixturePrior, glm_posterior, sparse_glm_table
from icml26.taco.real_tables import PANEL, RealTable, load_real_table
from icml26.taco.training import (
    checkpoint_config,
    init_from_pot,
    load_checkpoint,
    load_official_checkpoint,
    save_checkpoint,
    shipped_checkpoint,
    train_taco,
)

__all__ = [
    "PANEL",
    "RCP_CHOICES",
    "SHIPPED_CONFIG",
    "CompetenceTable",
    "CompressedContext",
    "EncoderStats",
    "InferenceCost",
    "InputEncoder",
    "KVCache",
    "MLPSCMPrior",
    "MixturePrior",
    "PerFeatureTransformer",
    "PriorBatch",
    "RealTable",
    "ResidualMLP",
    "TACOClassifier",
    "TACOConfig",
    "TACOModel",
    "activation_elements",
    "benchmark_inference",
    "checkpoint_config",
    "choose_percentage",
    "class_allocation",
    "competence_panel",
    "compute_stats",
    "cross_entropy_nats",
    "glm_posterior",
    "init_from_pot",
    "linear_baseline",
    "load_checkpoint",
    "load_official_checkpoint",
    "load_real_table",
    "n_latents",
    "peak_rss_increase",
    "predict_macs",
    "roc_auc",
    "save_checkpoint",
    "shipped_checkpoint",
    "sparse_glm_table",
    "subsample_context",
    "train_taco",
]
