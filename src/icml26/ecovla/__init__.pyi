from icml26.ecovla.adapter import (
    BackboneAdapter,
    BackboneDims,
    Capture,
    LlamaBackboneAdapter,
    find_decoder_layers,
    load_vla,
)
from icml26.ecovla.env import TASKS, Shift2DPickPlaceEnv, scripted_expert
from icml26.ecovla.flops import backbone_flops, mean_step_flops, pattern_update_flops
from icml26.ecovla.lockstep import FAILURE_MODES, LockstepResult, evaluate_lockstep
from icml26.ecovla.model import TinyVLA, TinyVLAConfig
from icml26.ecovla.orchestrator import InterleavedOrchestrator
from icml26.ecovla.pattern import SparsityPattern, slice_linear
from icml26.ecovla.pruner import (
    AbstractPolicy,
    DensePolicy,
    EcoVLAPruner,
    FixedPatternPolicy,
    NoisyPolicy,
    PruningLog,
    SkipBackbonePolicy,
    StepPlan,
    StepRecord,
    calibration_energy,
    fixed_interval_pruner,
    oracle_pruner,
    random_pattern,
    static_wanda_pattern,
)
from icml26.ecovla.scoring import TemporalPrior, channel_energy, select_keep, structured_scores
from icml26.ecovla.standins import POLICIES, load_policy
from icml26.ecovla.tokens import fastv_sequence_lengths, fastv_token_prune
from icml26.ecovla.training import (
    Demonstrations,
    EvalResult,
    collect_demos,
    evaluate,
    first_action_errors,
    initial_frames,
    train_bc,
)
from icml26.ecovla.trigger import QuantileTrigger, frame_similarity

__all__ = [
    "FAILURE_MODES",
    "POLICIES",
    "TASKS",
    "AbstractPolicy",
    "BackboneAdapter",
    "BackboneDims",
    "Capture",
    "Demonstrations",
    "DensePolicy",
    "EcoVLAPruner",
    "EvalResult",
    "FixedPatternPolicy",
    "InterleavedOrchestrator",
    "LlamaBackboneAdapter",
    "LockstepResult",
    "NoisyPolicy",
    "PruningLog",
    "QuantileTrigger",
    "Shift2DPickPlaceEnv",
    "SkipBackbonePolicy",
    "SparsityPattern",
    "StepPlan",
    "StepRecord",
    "TemporalPrior",
    "TinyVLA",
    "TinyVLAConfig",
    "backbone_flops",
    "calibration_energy",
    "channel_energy",
    "collect_demos",
    "evaluate",
    "evaluate_lockstep",
    "fastv_sequence_lengths",
    "fastv_token_prune",
    "find_decoder_layers",
    "first_action_errors",
    "fixed_interval_pruner",
    "frame_similarity",
    "initial_frames",
    "load_policy",
    "load_vla",
    "mean_step_flops",
    "oracle_pruner",
    "pattern_update_flops",
    "random_pattern",
    "scripted_expert",
    "select_keep",
    "slice_linear",
    "static_wanda_pattern",
    "structured_scores",
    "train_bc",
]
