"""A DP-SGD hook: SGG noise for a torch gradient vector, in place of Gaussian noise.

Accounting. The guarantee of a calibrated mechanism is for one release of a query with ℓ2
sensitivity Δ = ``mechanism.sensitivity``: in DP-SGD, the *sum* of per-example gradients clipped to
norm C (add/remove-one neighbours: Δ = C). Composition over steps is tight through
:func:`compose_epsilon` ``([(mechanism, n_steps)], delta)`` or dp_accounting's interface
(:class:`SGGPLDAccountant` composing ``mechanism.to_dp_event()``). Poisson-subsampled batches
(each example in a step's batch with probability q) are accounted as
``PoissonSampledDpEvent(q, mechanism.to_dp_event())`` (amplification by subsampling, add/remove-one
neighbours); shuffled fixed-size batches are not covered (account them as full-batch releases).
"""

from __future__ import annotations

import torch

from icml26.core import Seed, check_tensor, numpy_generator
from icml26.sgg_dp.mechanism import SGGMechanism, check_mechanism

__all__ = ["sgg_noise_like"]


def sgg_noise_like(grad: torch.Tensor, mechanism: SGGMechanism, seed: Seed = None) -> torch.Tensor:
    """One SGG noise draw shaped like ``grad`` (flattened dimension must equal ``mechanism.T``).

    Parameters
    ----------
    grad
        The (clipped, summed) gradient tensor of any shape with ``grad.numel() == T``.
    mechanism
        A calibrated :class:`SGGMechanism` with ``sensitivity`` = the clipping norm C.
    seed
        ``int``, ``numpy`` or ``torch`` generator, or ``None``.

    Returns
    -------
    torch.Tensor
        Noise with the shape, dtype and device of ``grad``; add it to ``grad``.

    Raises
    ------
    TypeError
        If ``grad`` is not a floating-point ``torch.Tensor``.
    ValueError
        If ``grad.numel() != T`` or the mechanism is uncalibrated.

    Examples
    --------
    >>> from icml26.sgg_dp import SGGMechanism
    >>> m = SGGMechanism(T=6, k=6.0, p=1.5, sigma=2.0)
    >>> sgg_noise_like(torch.zeros(2, 3), m, seed=0).shape
    torch.Size([2, 3])
    """
    grad = check_tensor("grad", grad, owner="sgg_noise_like")
    mechanism = check_mechanism("mechanism", mechanism, "sgg_noise_like")
    if grad.numel() != mechanism.T:
        raise ValueError(
            f"sgg_noise_like: grad must have T={mechanism.T} elements; got {grad.numel()} "
            f"(shape {tuple(grad.shape)})."
        )
    noise = mechanism.sample(1, numpy_generator(seed))[0]  # (T,)
    return torch.as_tensor(noise, dtype=grad.dtype, device=grad.device).reshape(grad.shape)
