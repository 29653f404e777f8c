"""UniPercept: perceptual-level image understanding across aesthetics, quality, structure, texture.

Cao et al., *UniPercept: Towards Unified Perceptual-Level Image Understanding across Aesthetics,
Quality, Structure, and Texture*, ICML 2026 (arXiv:2512.21675). The package gives the benchmark's
taxonomy and protocols (Visual Rating by SRCC/PLCC, multiple-choice VQA by first-letter accuracy),
the Token-As-Score read-out, the ISTA-10K rating formula, the rewards of its Task-Aligned RL stage
(Adaptive Gaussian Soft Reward, threshold and VQA rewards; also TRL reward functions), a generic
GRPO step over categorical policies, the DAPT -> GRPO pipeline on TinyPercept (a CPU stand-in for
the 8B MLLM) and PerceptToy (offline data with ground truth known by construction).

Examples
--------
>>> from icml26.unipercept import agsr_reward, score_token, Taxonomy
>>> round(agsr_reward(60.0, 50.0), 4), score_token(50), Taxonomy.load_default().counts()["criteria"]
(0.4754, 'cy', 44)
"""

from icml26.core.imports import lazy_api

__getattr__, __dir__, __all__ = lazy_api(__name__, __file__)
