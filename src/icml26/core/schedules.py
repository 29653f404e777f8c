"""Learning-rate schedules as pure functions of the step number."""

from __future__ import annotations

import math

from icml26.core.validation import check_in_interval, check_positive_int

__all__ = ["warmup_cosine_lr"]


def warmup_cosine_lr(
    step: int, *, total_steps: int, peak_lr: float, warmup_steps: int, final_lr: float = 0.0
) -> float:
    """Linear warm-up to ``peak_lr``, then cosine decay to ``final_lr`` at the last step.

    ``lr(t) = peak_lr (t + 1) / warmup_steps`` for ``t < warmup_steps``; afterwards, with
    ``u = (t - warmup_steps) / (total_steps - 1 - warmup_steps)`` clipped to ``[0, 1]``,
    ``lr(t) = final_lr + (peak_lr - final_lr) (1 + cos(pi u)) / 2``.

    Parameters
    ----------
    step
        The step, counted from 0.
    total_steps
        Number of steps of the run; the last one is ``total_steps - 1``.
    peak_lr
        The learning rate at the end of the warm-up.
    warmup_steps
        Steps of linear warm-up (0: start at ``peak_lr``).
    final_lr
        The learning rate at the last step.

    Examples
    --------
    >>> [round(warmup_cosine_lr(t, total_steps=5, peak_lr=1.0, warmup_steps=2), 3)
    ...  for t in range(5)]
    [0.5, 1.0, 1.0, 0.5, 0.0]
    """
    owner = "warmup_cosine_lr"
    step = check_positive_int("step", step, owner=owner, minimum=0)
    total_steps = check_positive_int("total_steps", total_steps, owner=owner)
    warmup_steps = check_positive_int("warmup_steps", warmup_steps, owner=owner, minimum=0)
    peak_lr = check_in_interval("peak_lr", peak_lr, low=0.0, owner=owner)
    final_lr = check_in_interval("final_lr", final_lr, low=0.0, high=peak_lr, owner=owner)
    if step < warmup_steps:
        return peak_lr * (step + 1) / warmup_steps
    progress = min(1.0, (step - warmup_steps) / max(total_steps - 1 - warmup_steps, 1))
    return final_lr + (peak_lr - final_lr) * 0.5 * (1.0 + math.cos(math.pi * progress))
