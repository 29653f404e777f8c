from icml26.scale.adapters import TinyVLAAdapter, VLAAdapter
from icml26.scale.attention import AttentionTemperature, attention_probs, scaled_dot_attention
from icml26.scale.decoding import (
    BestOfN,
    DecodeInfo,
    Decoder,
    GreedyDecoder,
    ScaleConfig,
    ScaleDecoder,
    TemperatureDecoder,
    TopKDecoder,
    TopPDecoder,
    top_k_filter,
    top_p_filter,
)
from icml26.scale.model import KVCache, MultiHeadAttention, TinyARVLA
from icml26.scale.tokenizer import ActionTokenizer
from icml26.scale.uncertainty import (
    UncertaintyState,
    action_logits,
    adaptive_temperature,
    attention_temperature,
    sample_with_temperature,
    self_uncertainty,
)

__all__ = [
    "ActionTokenizer",
    "AttentionTemperature",
    "BestOfN",
    "DecodeInfo",
    "Decoder",
    "GreedyDecoder",
    "KVCache",
    "MultiHeadAttention",
    "ScaleConfig",
    "ScaleDecoder",
    "TemperatureDecoder",
    "TinyARVLA",
    "TinyVLAAdapter",
    "TopKDecoder",
    "TopPDecoder",
    "UncertaintyState",
    "VLAAdapter",
    "action_logits",
    "adaptive_temperature",
    "attention_probs",
    "attention_temperature",
    "sample_with_temperature",
    "scaled_dot_attention",
    "self_uncertainty",
    "top_k_filter",
    "top_p_filter",
]
