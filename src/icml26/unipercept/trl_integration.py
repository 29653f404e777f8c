"""UniPercept's Task-Aligned RL at scale: reward functions and a ``trl.GRPOTrainer`` factory.

Cao et al., UniPercept (arXiv:2512.21675), §4.2: one GRPO run mixes rating (VR) and question
(VQA) queries; a rating completion earns the AGSR (or threshold) reward against the row's MOS, a
question completion the binary letter reward. In TRL each reward function sees every completion
of a batch, so each returns ``None`` for the rows it does not apply to (a row without ``mos``, or
without ``answer``); TRL turns those into NaN and sums the functions with ``nansum``, so every row
gets exactly its own task's reward.

Deviations: none beyond those of :mod:`icml26.unipercept.rewards`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Literal

from icml26.core.imports import require
from icml26.core.validation import check_one_of
from icml26.unipercept.rewards import agsr_reward, threshold_reward, vqa_reward

__all__ = ["make_grpo_trainer", "unipercept_reward_funcs"]


def _present(value: Any) -> bool:
    return value is not None and value == value  # None and NaN mark a row of the other task


def unipercept_reward_funcs(
    reward: Literal["agsr", "threshold"] = "agsr",
    sigma0: float = 8.0,
    alpha: float = 0.25,
    eps: float = 10.0,
) -> list[Callable[..., list[float | None]]]:
    """``[rating_reward, choice_reward]`` for ``trl.GRPOTrainer(reward_funcs=...)``.

    The dataset has a ``prompt`` column, a ``mos`` column (0–100, ``None`` on question rows) and
    an ``answer`` column (a letter, ``None`` on rating rows).

    Examples
    --------
    >>> rating, choice = unipercept_reward_funcs()
    >>> rating(completions=["cy", "B"], mos=[50.0, None]), choice(completions=["cy", "B"],
    ...                                                          answer=[None, "B"])
    ([1.0, None], [None, 1.0])
    """
    check_one_of("reward", reward, ("agsr", "threshold"), owner="unipercept_reward_funcs")
    agsr_reward(50.0, 50.0, sigma0, alpha)  # validates the constants once
    threshold_reward(50.0, 50.0, eps)

    def rating_reward(
        completions: Sequence[Any], mos: Sequence[Any], **_: Any
    ) -> list[float | None]:
        rows = [i for i, m in enumerate(mos) if _present(m)]
        picked = [completions[i] for i in rows]
        targets = [float(mos[i]) for i in rows]
        if reward == "agsr":
            values = agsr_reward(sigma0=sigma0, alpha=alpha, completions=picked, mos=targets)
        else:
            values = threshold_reward(eps=eps, completions=picked, mos=targets)
        out: list[float | None] = [None] * len(completions)
        for i, v in zip(rows, values, strict=True):
            out[i] = v
        return out

    def choice_reward(
        completions: Sequence[Any], answer: Sequence[Any], **_: Any
    ) -> list[float | None]:
        rows = [i for i, a in enumerate(answer) if _present(a)]
        values = vqa_reward(
            completions=[completions[i] for i in rows], answer=[answer[i] for i in rows]
        )
        out: list[float | None] = [None] * len(completions)
        for i, v in zip(rows, values, strict=True):
            out[i] = v
        return out

    rating_reward.__name__ = f"{reward}_rating_reward"
    choice_reward.__name__ = "vqa_choice_reward"
    return [rating_reward, choice_reward]


def make_grpo_trainer(
    model: Any,
    processing_class: Any,
    train_dataset: Any,
    args: Any = None,
    reward: Literal["agsr", "threshold"] = "agsr",
    **trainer_kwargs: Any,
) -> Any:
    """A ``trl.GRPOTrainer`` with UniPercept's rewards (spec §5 "RL at scale").

    ``args`` is a ``trl.GRPOConfig`` (the paper: ``num_generations=8``, ``epsilon=0.2``,
    ``beta=0.001``); ``None`` builds one with those three values.
    """
    require("trl", "unipercept")
    import trl

    if args is None:
        args = trl.GRPOConfig(
            output_dir="unipercept-grpo", num_generations=8, epsilon=0.2, beta=1e-3
        )
    if not isinstance(args, trl.GRPOConfig):
        raise TypeError(
            f"make_grpo_trainer: args must be a trl.GRPOConfig; got {type(args).__name__}."
        )
    return trl.GRPOTrainer(model=model, reward_funcs=unipercept_reward_funcs(reward), args=args,
                           train_dataset=train_dataset, processing_class=processing_class,
                           **trainer_kwargs)  # fmt: skip
