from icml26.omnifit.accounting import (
    arts_selection_flops,
    attention_map_flops,
    cost_coefficients,
    flops_per_layer,
    kv_bytes,
    prefill_flops,
    time_prefill,
)
from icml26.omnifit.adapter import CompressedForward, run_compressed
from icml26.omnifit.arts import (
    arts_scores,
    dpc_knn_anchors,
    fit_global_anchors,
    merge_tokens,
    modality_anchors,
    plan_keep_indices,
)
from icml26.omnifit.avscene import SceneBatch, SceneData, make_scene_dataset, scene_batch
from icml26.omnifit.avsync import AVSyncBatch, AVSyncData, make_dataset
from icml26.omnifit.baselines import FastVLike, OmniZipLite, RandomDrop, ScoredDrop, UniformNorm
from icml26.omnifit.calibration import lahp_calibrate
from icml26.omnifit.compressor import OmniFitCompressor
from icml26.omnifit.decoding import DecodingAdapter, GenerateOutput, generate
from icml26.omnifit.lahp import (
    LAHPProfile,
    cumulative_profile,
    effective_rank,
    layer_cost,
    modality_preference,
    retention_profile,
    split_budget,
)
from icml26.omnifit.model import (
    TinyOmni,
    TinyOmniConfig,
    TrainResult,
    evaluate_accuracy,
    train_tinyomni,
)
from icml26.omnifit.protocols import AbstractCompressor, ModelAdapter
from icml26.omnifit.qa_benchmark import QABenchmark, QABenchmarkError, QAItem
from icml26.omnifit.scene_model import SceneThinker, SceneThinkerConfig, train_scene_thinker
from icml26.omnifit.standins import (
    SHIPPED_STANDINS,
    load_scene_standin,
    load_standin,
    standin_trainer,
    train_standin,
)
from icml26.omnifit.tokens import AUDIO, TEXT, VIDEO, modality_counts

__all__ = [
    "AUDIO",
    "SHIPPED_STANDINS",
    "TEXT",
    "VIDEO",
    "AVSyncBatch",
    "AVSyncData",
    "AbstractCompressor",
    "CompressedForward",
    "DecodingAdapter",
    "FastVLike",
    "GenerateOutput",
    "LAHPProfile",
    "ModelAdapter",
    "OmniFitCompressor",
    "OmniZipLite",
    "QABenchmark",
    "QABenchmarkError",
    "QAItem",
    "RandomDrop",
    "SceneBatch",
    "SceneData",
    "SceneThinker",
    "SceneThinkerConfig",
    "ScoredDrop",
    "TinyOmni",
    "TinyOmniConfig",
    "TrainResult",
    "UniformNorm",
    "arts_scores",
    "arts_selection_flops",
    "attention_map_flops",
    "cost_coefficients",
    "cumulative_profile",
    "dpc_knn_anchors",
    "effective_rank",
    "evaluate_accuracy",
    "fit_global_anchors",
    "flops_per_layer",
    "generate",
    "kv_bytes",
    "lahp_calibrate",
    "layer_cost",
    "load_scene_standin",
    "load_standin",
    "make_dataset",
    "make_scene_dataset",
    "merge_tokens",
    "modality_anchors",
    "modality_counts",
    "modality_preference",
    "plan_keep_indices",
    "prefill_flops",
    "retention_profile",
    "run_compressed",
    "scene_batch",
    "split_budget",
    "standin_trainer",
    "time_prefill",
    "train_scene_thinker",
    "train_standin",
    "train_tinyomni",
]
