from icml26.unipercept.baseline import FEATURE_NAMES, HandcraftedIQA, handcrafted_features
from icml26.unipercept.degradations import (
    KINDS,
    degrade,
    degrade_quadrant,
    quality_from_severity,
    severity_level,
)
from icml26.unipercept.evaluation import evaluate_vqa, evaluate_vr
from icml26.unipercept.generator import (
    GaussianKnobPolicy,
    KnobHistory,
    iqa_support_share,
    render_iqa_knobs,
    render_ista_knobs,
    train_knob_policy,
)
from icml26.unipercept.grpo import (
    GRPOStats,
    PerceptPolicy,
    Policy,
    group_advantages,
    grpo_loss,
    grpo_step,
    percept_reward_fn,
)
from icml26.unipercept.ista import ista_score, texture_weight
from icml26.unipercept.items import GenericQAItem, VQAItem, VRItem
from icml26.unipercept.metrics import parse_choice, parse_score, vqa_accuracy, vr_metrics
from icml26.unipercept.model import PerceptBatch, TinyPercept, encode_items
from icml26.unipercept.perceptoy import (
    OPTION_VOCAB,
    clean_crops,
    make_domain_sets,
    make_iaa_proxy,
    make_iqa_vqa,
    make_iqa_vr,
    make_ista,
)
from icml26.unipercept.questions import (
    PRETRAIN_QUESTIONS,
    QUESTION_BANK,
    RATING_QUESTIONS,
    bank_texts,
    make_pretrain_set,
    make_text_dependent_vqa,
    prompt_text,
)
from icml26.unipercept.real import (
    BenchItem,
    UniPerceptScorer,
    load_bench,
    load_unipercept,
    load_vr_folder,
)
from icml26.unipercept.reward_model import PerceptualReward
from icml26.unipercept.rewards import agsr_reward, threshold_reward, vqa_reward
from icml26.unipercept.taxonomy import Taxonomy
from icml26.unipercept.tokens import SCORE_TOKENS, expected_score, score_token, token_to_score
from icml26.unipercept.training import DAPTHistory, train_dapt, train_grpo
from icml26.unipercept.trl_integration import make_grpo_trainer, unipercept_reward_funcs
from icml26.unipercept.vlm import PerceptVLM, VLMBatch, build_tokenizer

__all__ = [
    "FEATURE_NAMES",
    "KINDS",
    "OPTION_VOCAB",
    "PRETRAIN_QUESTIONS",
    "QUESTION_BANK",
    "RATING_QUESTIONS",
    "SCORE_TOKENS",
    "BenchItem",
    "DAPTHistory",
    "GRPOStats",
    "GaussianKnobPolicy",
    "GenericQAItem",
    "HandcraftedIQA",
    "KnobHistory",
    "PerceptBatch",
    "PerceptPolicy",
    "PerceptVLM",
    "PerceptualReward",
    "Policy",
    "Taxonomy",
    "TinyPercept",
    "UniPerceptScorer",
    "VLMBatch",
    "VQAItem",
    "VRItem",
    "agsr_reward",
    "bank_texts",
    "build_tokenizer",
    "clean_crops",
    "degrade",
    "degrade_quadrant",
    "encode_items",
    "evaluate_vqa",
    "evaluate_vr",
    "expected_score",
    "group_advantages",
    "grpo_loss",
    "grpo_step",
    "handcrafted_features",
    "iqa_support_share",
    "ista_score",
    "load_bench",
    "load_unipercept",
    "load_vr_folder",
    "make_domain_sets",
    "make_grpo_trainer",
    "make_iaa_proxy",
    "make_iqa_vqa",
    "make_iqa_vr",
    "make_ista",
    "make_pretrain_set",
    "make_text_dependent_vqa",
    "parse_choice",
    "parse_score",
    "percept_reward_fn",
    "prompt_text",
    "quality_from_severity",
    "render_iqa_knobs",
    "render_ista_knobs",
    "score_token",
    "severity_level",
    "texture_weight",
    "threshold_reward",
    "token_to_score",
    "train_dapt",
    "train_grpo",
    "train_knob_policy",
    "unipercept_reward_funcs",
    "vqa_accuracy",
    "vqa_reward",
    "vr_metrics",
]
