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
from icml26.hybrid_seq.models import AbstractSequenceModel, HybridLM, KVCache, LMCache
from icml26.hybrid_seq.ssm import MambaBlock, SSMCache, SSMConfig, selective_recurrence
from icml26.hybrid_seq.tasks import MQAR, AbstractTask, Batch, SelectiveCopying
from icml26.hybrid_seq.training import TrainConfig, TrainHistory, evaluate, masked_accuracy, train

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
    "KVCache",
    "LMCache",
    "MambaBlock",
    "SSMCache",
    "SSMConfig",
    "SelectiveCopying",
    "TrainConfig",
    "TrainHistory",
    "WorkingMemory",
    "build_ar_hybrid",
    "build_sc_hybrid",
    "build_sc_slot_ssm",
    "count_params",
    "evaluate",
    "margin_beta",
    "masked_accuracy",
    "min_state_bits",
    "selective_recurrence",
    "train",
    "working_memory",
]
