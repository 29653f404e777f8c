"""A tiny learned eps-predictor for 2-D toy data (spec §5 full preset), trained from scratch.

MLP: [x, sinusoidal embedding of 1000 t] -> 128 -> 128 -> d, SiLU. Trained with the standard
eps-prediction loss E || eps_theta(alpha_t x0 + sigma_t eps, t) - eps ||^2, t uniform on a
1000-point grid of [t_min, 1] (so alpha_t, sigma_t are tabulated once).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import torch
from torch import nn

from icml26.core import (
    Seed,
    check_positive_int,
    numpy_generator,
    seeded_default_init,
    torch_generator,
)
from icml26.rex.schedules import Schedule

__all__ = ["MLPDenoiser", "make_moons_data", "train_denoiser"]


class MLPDenoiser(nn.Module):
    """eps_theta(x, t) for low-dimensional data.

    Parameters
    ----------
    dim
        Data dimension.
    hidden
        Width of the two hidden layers.
    embed
        Size of the sinusoidal time embedding (even).
    seed
        Seed of the initial weights (torch's default ``nn.Linear`` initialisation, drawn with
        :func:`icml26.core.seeded_default_init`; the global RNG is left alone). A generator is
        advanced by one draw.

    Example
    -------
    >>> net = MLPDenoiser(2, seed=0)
    >>> net(torch.zeros(3, 2), torch.full((3,), 0.5)).shape
    torch.Size([3, 2])
    >>> bool((net.net[0].weight == MLPDenoiser(2, seed=0).net[0].weight).all())
    True
    """

    def __init__(self, dim: int = 2, hidden: int = 128, embed: int = 32, *, seed: Seed = 0) -> None:
        super().__init__()
        self.dim = check_positive_int("dim", dim, owner="MLPDenoiser")
        self.embed = check_positive_int("embed", embed, owner="MLPDenoiser", minimum=2)
        with seeded_default_init(seed):
            self.net = nn.Sequential(
                nn.Linear(dim + embed, hidden),
                nn.SiLU(),
                nn.Linear(hidden, hidden),
                nn.SiLU(),
                nn.Linear(hidden, dim),
            )

    def time_embedding(self, t: torch.Tensor) -> torch.Tensor:
        """Sinusoidal features of 1000 t: (batch,) -> (batch, embed)."""
        half = self.embed // 2
        freqs = torch.exp(
            -math.log(10_000) * torch.arange(half, dtype=t.dtype, device=t.device) / half
        )
        angles = 1000 * t[:, None] * freqs[None]  # (batch, half)
        return torch.cat([angles.sin(), angles.cos()], dim=1)

    def forward(self, x: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
        """eps prediction, shape of x."""
        return self.net(torch.cat([x, self.time_embedding(t.to(x.dtype))], dim=1))


def make_moons_data(n: int, *, noise: float = 0.05, seed: Seed = 0) -> torch.Tensor:
    """Two-moons points (scikit-learn), standardised to zero mean and unit variance per axis."""
    from sklearn.datasets import make_moons  # the rex extra; the package checks it is installed

    rng = numpy_generator(seed)
    x, _ = make_moons(n_samples=n, noise=noise, random_state=int(rng.integers(2**31)))
    x = (x - x.mean(0)) / x.std(0)
    return torch.as_tensor(x, dtype=torch.float64)


def train_denoiser(
    data: torch.Tensor,
    schedule: Schedule,
    *,
    steps: int = 3000,
    batch_size: int = 256,
    lr: float = 2e-3,
    t_min: float = 1e-3,
    seed: Seed = 0,
    callback: Callable[[int, float], object] | None = None,
) -> MLPDenoiser:
    """Train an :class:`MLPDenoiser` on ``data`` (n, d) with the eps-prediction loss.

    Adam with a cosine learning rate (torch's ``CosineAnnealingLR`` over ``steps``, no warm-up).
    One generator drawn from ``seed`` gives, in order, the initial weights and then each step's
    batch indices, times and noise.

    Parameters
    ----------
    callback
        Called as ``callback(step, loss)`` after every optimiser step (e.g. a progress bar).

    Returns the trained network in eval mode with gradients off (float32; ``.double()`` for
    float64 use).
    """
    steps = check_positive_int("steps", steps, owner="train_denoiser")
    g = torch_generator(seed)
    net = MLPDenoiser(data.shape[1], seed=g)  # one draw from g seeds the initialisation
    grid = np.linspace(t_min, 1.0, 1000)
    alphas = torch.tensor([schedule.alpha(float(t)) for t in grid], dtype=torch.float32)
    sigmas = torch.tensor([schedule.sigma(float(t)) for t in grid], dtype=torch.float32)
    times = torch.tensor(grid, dtype=torch.float32)
    x_all = data.to(torch.float32)
    opt = torch.optim.Adam(net.parameters(), lr=lr)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, steps)
    net.train()
    for step in range(steps):
        idx = torch.randint(0, x_all.shape[0], (batch_size,), generator=g)
        k = torch.randint(0, len(grid), (batch_size,), generator=g)
        eps = torch.randn(batch_size, x_all.shape[1], generator=g)
        x_t = alphas[k, None] * x_all[idx] + sigmas[k, None] * eps
        loss = (net(x_t, times[k]) - eps).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
        if callback is not None:
            callback(step, float(loss.detach()))
    net.eval().requires_grad_(False)
    return net
