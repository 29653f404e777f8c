"""Rewards of UniPercept's Task-Aligned RL stage (spec §2.5), also usable as TRL reward functions.

Cao et al., UniPercept (arXiv:2512.21675), §4.2. With prediction p and ground truth g on the
0–100 scale and e = |p - g|:

    Adaptive Gaussian Soft Reward   sigma_dyn = sigma0 * (1 + alpha * e / 100),
                                    r_vr = exp(-e^2 / (2 sigma_dyn^2))
    threshold reward (Q-Insight)    r_thr = 1[e < eps]
    VQA reward                      r_vqa = 1[chosen letter == answer letter]

Called with ``completions=`` (and the dataset's columns as keywords) each function is a TRL
reward function ``fn(completions, **columns) -> list[float]`` for
``trl.GRPOTrainer(reward_funcs=[...])``: a rating column ``mos`` (or ``gt``) and an ``answer``
column are read; a completion may be a string or a chat message list.

Deviations: sigma0 = 8, alpha = 0.25 are recovered from the paper's worked examples (it prints
"sigma = 0.8", i.e. on a 0–10 scale); eps = 10 for the threshold reward is *inferred* (the paper
gives no value). An unparsable completion earns 0.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from icml26.core.validation import check_array, check_in_interval
from icml26.unipercept.metrics import parse_choice, parse_score

__all__ = ["agsr_reward", "completion_text", "threshold_reward", "vqa_reward"]


def completion_text(completion: Any) -> str:
    """The text of a TRL completion: a string, or the last message's content of a chat list."""
    if isinstance(completion, str):
        return completion
    if isinstance(completion, Sequence) and completion and isinstance(completion[-1], dict):
        content = completion[-1].get("content", "")
        if isinstance(content, str):
            return content
        if isinstance(content, Sequence):  # multimodal content parts
            return " ".join(p.get("text", "") for p in content if isinstance(p, dict))
    raise TypeError(
        "completions entries must be strings or chat message lists; "
        f"got {type(completion).__name__}."
    )


def _check_completions(completions: Any, owner: str) -> list[Any]:
    if isinstance(completions, str) or not isinstance(completions, list | tuple):
        raise TypeError(f"{owner}: completions must be a list of replies.")
    for c in completions:
        try:
            completion_text(c)
        except TypeError:
            raise TypeError(
                f"{owner}: completions must hold strings or chat message lists."
            ) from None
    return list(completions)


def _scores(name: str, value: Any, owner: str) -> np.ndarray:
    array = check_array(name, value, owner=owner)
    if array.size and (array.min() < 0.0 or array.max() > 100.0):
        raise ValueError(f"{owner}: {name} must lie in [0, 100]; got values in "
                         f"[{array.min():g}, {array.max():g}].")  # fmt: skip
    return array


def _pair(pred: Any, gt: Any, owner: str) -> tuple[np.ndarray, np.ndarray, bool]:
    p = _scores("pred", pred, owner)
    g = _scores("gt", gt, owner)
    if p.shape != g.shape:
        raise ValueError(
            f"{owner}: pred and gt must have the same shape; got {p.shape} vs {g.shape}."
        )
    return p, g, p.ndim == 0


def _trl_targets(columns: dict[str, Any], owner: str, keys: tuple[str, ...]) -> list[Any]:
    for key in keys:
        if key in columns:
            if isinstance(columns[key], str) or not isinstance(columns[key], list | tuple):
                raise TypeError(f"{owner}: with completions, the column {key} must be a list.")
            return list(columns[key])
    raise ValueError(
        f"{owner}: with completions (TRL mode) it needs a dataset column {' or '.join(keys)}."
    )


def _agsr(e: np.ndarray, sigma0: float, alpha: float) -> np.ndarray:
    sigma_dyn = sigma0 * (1.0 + alpha * e / 100.0)  # grows with the error: softer far away
    return np.exp(-(e**2) / (2.0 * sigma_dyn**2))


def agsr_reward(
    pred: float | np.ndarray | None = None,
    gt: float | np.ndarray | None = None,
    sigma0: float = 8.0,
    alpha: float = 0.25,
    *,
    completions: Sequence[Any] | None = None,
    **columns: Any,
) -> float | np.ndarray | list[float]:
    """Adaptive Gaussian Soft Reward of a rating (spec §2.5).

    Parameters
    ----------
    pred, gt
        Predicted and ground-truth scores in [0, 100], scalars or arrays of one shape.
    sigma0
        Base width on the 0–100 scale (> 0).
    alpha
        Growth of the width with the error (>= 0; 0 gives a fixed Gaussian).
    completions
        TRL mode: generated replies; ``columns["mos"]`` (or ``gt``) holds the ground truth.

    Returns
    -------
    float, np.ndarray or list[float]
        ``exp(-e^2 / (2 sigma_dyn^2))`` in (0, 1]; a list in TRL mode.

    Examples
    --------
    >>> round(agsr_reward(55.0, 50.0), 4), round(agsr_reward(40.0, 50.0), 4)
    (0.8265, 0.4754)
    """
    sigma0 = check_in_interval("sigma0", sigma0, low=0.0, closed="neither", owner="agsr_reward")
    alpha = check_in_interval("alpha", alpha, low=0.0, owner="agsr_reward")
    if completions is not None:
        completions = _check_completions(completions, "agsr_reward")
        targets = _trl_targets(columns, "agsr_reward", ("mos", "gt"))
        if len(targets) != len(completions):
            raise ValueError("agsr_reward: completions and the mos column must have one length.")
        rewards = []
        for completion, target in zip(completions, targets, strict=True):
            score = parse_score(completion_text(completion))
            g = float(_scores("gt", target, "agsr_reward"))
            rewards.append(0.0 if score is None else float(_agsr(np.abs(score - g), sigma0, alpha)))
        return rewards
    if pred is None or gt is None:
        raise TypeError("agsr_reward: pred and gt are required (or completions in TRL mode).")
    p, g, scalar = _pair(pred, gt, "agsr_reward")
    r = _agsr(np.abs(p - g), sigma0, alpha)
    return float(r) if scalar else r


def threshold_reward(
    pred: float | np.ndarray | None = None,
    gt: float | np.ndarray | None = None,
    eps: float = 10.0,
    *,
    completions: Sequence[Any] | None = None,
    **columns: Any,
) -> float | np.ndarray | list[float]:
    """Threshold rating reward 1[|pred - gt| < eps] (Q-Insight-style ablation baseline).

    Parameters
    ----------
    pred, gt
        Predicted and ground-truth scores in [0, 100], scalars or arrays of one shape.
    eps
        Tolerance on the 0–100 scale (> 0; *inferred* default 10).
    completions
        TRL mode, as for :func:`agsr_reward`.

    Examples
    --------
    >>> threshold_reward(59.0, 50.0), threshold_reward(60.0, 50.0)
    (1.0, 0.0)
    """
    eps = check_in_interval("eps", eps, low=0.0, closed="neither", owner="threshold_reward")
    if completions is not None:
        completions = _check_completions(completions, "threshold_reward")
        targets = _trl_targets(columns, "threshold_reward", ("mos", "gt"))
        if len(targets) != len(completions):
            raise ValueError(
                "threshold_reward: completions and the mos column must have one length."
            )
        rewards = []
        for completion, target in zip(completions, targets, strict=True):
            score = parse_score(completion_text(completion))
            g = float(_scores("gt", target, "threshold_reward"))
            rewards.append(0.0 if score is None else float(abs(score - g) < eps))
        return rewards
    if pred is None or gt is None:
        raise TypeError("threshold_reward: pred and gt are required (or completions in TRL mode).")
    p, g, scalar = _pair(pred, gt, "threshold_reward")
    r = (np.abs(p - g) < eps).astype(float)
    return float(r) if scalar else r


def vqa_reward(
    pred_letter: str | Sequence[str] | None = None,
    gt_letter: str | Sequence[str] | None = None,
    *,
    completions: Sequence[Any] | None = None,
    **columns: Any,
) -> float | np.ndarray | list[float]:
    """Binary VQA reward: 1 when the option the reply names equals the answer letter.

    The reply's option is read by ``parse_choice(reply, lenient=True)``: its first character, or
    the letter of ``"(B) ..."``, ``"B. ..."``, ``"Answer: B"``.

    Parameters
    ----------
    pred_letter
        A reply or a sequence of replies.
    gt_letter
        The answer letter(s), same length as ``pred_letter``.
    completions
        TRL mode: ``columns["answer"]`` holds the answer letters.

    Examples
    --------
    >>> vqa_reward(" b) noise", "B"), vqa_reward("A", "C")
    (1.0, 0.0)
    """
    if completions is not None:
        completions = _check_completions(completions, "vqa_reward")
        answers = _trl_targets(columns, "vqa_reward", ("answer",))
        if len(answers) != len(completions):
            raise ValueError("vqa_reward: completions and the answer column must have one length.")
        return [
            float(parse_choice(completion_text(c), lenient=True) == parse_choice(str(a)))
            for c, a in zip(completions, answers, strict=True)
        ]
    if isinstance(pred_letter, str) and isinstance(gt_letter, str):
        return float(parse_choice(pred_letter, lenient=True) == parse_choice(gt_letter))
    if pred_letter is None or gt_letter is None:
        raise TypeError("vqa_reward: pred_letter and gt_letter are required.")
    if isinstance(pred_letter, str) or isinstance(gt_letter, str):
        raise TypeError("vqa_reward: pred_letter and gt_letter must both be str or both sequences.")
    for name, value in (("pred_letter", pred_letter), ("gt_letter", gt_letter)):
        if not isinstance(value, list | tuple):
            raise TypeError(f"vqa_reward: {name} must be a str or a list of str.")
    preds, gts = list(pred_letter), list(gt_letter)
    if len(preds) != len(gts):
        raise ValueError(
            "vqa_reward: pred_letter and gt_letter must have one length; "
            f"got {len(preds)} vs {len(gts)}."
        )
    for name, values in (("pred_letter", preds), ("gt_letter", gts)):
        if not all(isinstance(v, str) for v in values):
            raise TypeError(f"vqa_reward: {name} must hold strings only.")
    return np.array(
        [
            float(parse_choice(p, lenient=True) == parse_choice(g))
            for p, g in zip(preds, gts, strict=True)
        ]
    )
