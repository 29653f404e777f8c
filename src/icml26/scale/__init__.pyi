from icml26.scale.adapters import TinyVLAAdapter, VLAAdapter
from icml26.scale.attention import AttentionTemperature, attention_probs, scaled_dot_attention
from icml26.scale.decoding import (
    DECODER_NAMES,
    BestOfN,
    GreedyDecoder,
    ScaleConfig,
    ScaleDecoder,
    TemperatureDecoder,
    TopKDecoder,
    TopPDecoder,
    make_decoder,
    top_k_filter,
    top_p_filter,
)
from icml26.scale.env import (
    ENV_ID,
    PALETTE_HUES,
    SPLITS,
    AmbiguousReach2DEnv,
    scripted_expert,
)
from icml26.scale.evaluation import (
    count_forward_passes,
    evaluate,
    expert_episode_success,
    expert_success_rate,
)
from icml26.scale.model import TinyARVLA
from icml26.scale.openvla import (
    LIBERO_MAX_STEPS,
    OPENVLA_LIBERO,
    OpenVLAAdapter,
    load_openvla,
    run_libero,
)
from icml26.scale.standins import SHIPPED_POLICIES, load_policy, policy_trainer, train_policy
from icml26.scale.tokenizer import ActionTokenizer
from icml26.scale.training import collect_demonstrations, train_bc
from icml26.scale.uncertainty import (
    UncertaintyState,
    action_logits,
    adaptive_temperature,
    attention_temperature,
    sample_with_temperature,
    self_uncertainty,
)

__all__ = [
    "DECODER_NAMES",
    "ENV_ID",
    "LIBERO_MAX_STEPS",
    "OPENVLA_LIBERO",
    "PALETTE_HUES",
    "SHIPPED_POLICIES",
    "SPLITS",
    "ActionTokenizer",
    "AmbiguousReach2DEnv",
    "AttentionTemperature",
    "BestOfN",
    "GreedyDecoder",
    "OpenVLAAdapter",
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
    "collect_demonstrations",
    "count_forward_passes",
    "evaluate",
    "expert_episode_success",
    "expert_success_rate",
    "load_openvla",
    "load_policy",
    "make_decoder",
    "policy_trainer",
    "run_libero",
    "sample_with_temperature",
    "scaled_dot_attention",
    "scripted_expert",
    "self_uncertainty",
    "top_k_filter",
    "top_p_filter",
    "train_bc",
    "train_policy",
]
