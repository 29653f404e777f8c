from icml26.hybrid_seq.accounting import (
    WorkingMemory,
    count_params,
    min_state_bits,
    working_memory,
)
from icml26.hybrid_seq.constructions import (
    ConstructedARHybrid,
    ConstructedSCHybrid,
    ConstructedSlotSSM,
    build_ar_hybrid,
    build_sc_hybrid,
    build_sc_slot_ssm,
    margin_beta,
)
from icml26.hybrid_seq.hf import HybridLMConfig, HybridLMForCausalLM
from icml26.hybrid_seq.mamba2 import Mamba2Block, Mamba2Config
from icml26.hybrid_seq.models import AbstractSequenceModel, HybridLM, KVCache, LMCache
from icml26.hybrid_seq.ssm import MambaBlock, SSMCache, SSMConfig, selective_recurrence
from icml26.hybrid_seq.tasks import (
    MQAR,
    AbstractTask,
    Batch,
    InductionHead,
    PlainCopying,
    SelectiveCopying,
    noise_shift_tasks,
)
from icml26.hybrid_seq.text import TextLM
from icml26.hybrid_seq.training import (
    ShiftResult,
    TrainConfig,
    TrainHistory,
    evaluate,
    evaluate_shift,
    masked_accuracy,
    train,
)

__all__ = [
    "MQAR",
    "AbstractSequenceModel",
    "AbstractTask",
    "Batch",
    "ConstructedARHybrid",
    "ConstructedSCHybrid",
    "ConstructedSlotSSM",
    "HybridLM",
    "HybridLMConfig",
    "HybridLMForCausalLM",
    "InductionHead",
    "KVCache",
    "LMCache",
    "Mamba2Block",
    "Mamba2Config",
    "MambaBlock",
    "PlainCopying",
    "SSMCache",
    "SSMConfig",
    "SelectiveCopying",
    "ShiftResult",
    "TextLM",
    "TrainConfig",
    "TrainHistory",
    "WorkingMemory",
    "build_ar_hybrid",
    "build_sc_hybrid",
    "build_sc_slot_ssm",
    "count_params",
    "evaluate",
    "evaluate_shift",
    "margin_beta",
    "masked_accuracy",
    "min_state_bits",
    "noise_shift_tasks",
    "selective_recurrence",
    "train",
    "working_memory",
]
