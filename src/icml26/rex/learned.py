"""A tiny learned eps-predictor for 2-D toy data (spec §5 full preset), trained from scratch.

MLP: [x, sinusoidal embedding of 1000 t] -> 128 -> 128 -> d, SiLU. Trained with the standard
eps-prediction loss E || eps_theta(alpha_t x0 + sigma_t eps, t) - eps ||^2, t uniform on a
1000-point grid of [t_min, 1] (so alpha_t, sigma_t are tabulated once).
"""

from __future__ import annotations

import math

import numpy as np
import torch
from torch import nn

from icml26.core import (
    Progress,
    Seed,
    check_in_interval,
    check_positive_int,
    check_tensor,
    numpy_generator,
    optimizer_step,
    progress_reporter,
    seeded_default_init,
    torch_generator,
)
from icml26.rex._checks import MAX_POINTS, check_schedule, check_time
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

    Examples
    --------
    >>> net = MLPDenoiser(2, seed=0)
    >>> net(torch.zeros(3, 2), torch.full((3,), 0.5)).shape
    torch.Size([3, 2])
    >>> bool((net.net[0].weight == MLPDenoiser(2, seed=0).net[0].weight).all())
    True
    """

    def __init__(self, dim: int = 2, hidden: int = 128, embed: int = 32, *, seed: Seed = 0) -> None:
        super().__init__()
        self.dim = check_positive_int("dim", dim, owner="MLPDenoiser", maximum=MAX_WIDTH)
        hidden = check_positive_int("hidden", hidden, owner="MLPDenoiser", maximum=MAX_WIDTH)
        self.embed = check_positive_int(
            "embed", embed, owner="MLPDenoiser", minimum=2, maximum=MAX_WIDTH
        )
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
        check_tensor("t", t, owner="MLPDenoiser.time_embedding", ndim=1)
        return self._embedding(t)

    def _embedding(self, t: torch.Tensor) -> torch.Tensor:
        half = self.embed // 2
        freqs = torch.exp(
            -math.log(10_000) * torch.arange(half, dtype=t.dtype, device=t.device) / half
        )
        angles = 1000 * t[:, None] * freqs[None]  # (batch, half)
        return torch.cat([angles.sin(), angles.cos()], dim=1)

    def forward(self, x: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
        """eps prediction, shape of x: x (batch, dim), t (batch,)."""
        owner = "MLPDenoiser"
        check_tensor("x", x, owner=owner, ndim=2, shape=(None, self.dim))
        check_tensor("t", t, owner=owner, ndim=1, shape=(x.shape[0],))
        if x.dtype != self.net[0].weight.dtype:
            raise TypeError(
                f"{owner}: x must have the network's dtype {self.net[0].weight.dtype}; got "
                f"{x.dtype} (use .double() or .float() on the network)."
            )
        return self.net(torch.cat([x, self._embedding(t.to(x.dtype))], dim=1))


MAX_WIDTH = 8192  # widest layer / data dimension of the toy denoiser


def make_moons_data(n: int, *, noise: float = 0.05, seed: Seed = 0) -> torch.Tensor:
    """Two-moons points (scikit-learn), standardised to zero mean and unit variance per axis."""
    from sklearn.datasets import make_moons  # the rex extra; the package checks it is installed

    n = check_positive_int("n", n, owner="make_moons_data", minimum=2, maximum=MAX_POINTS)
    noise = check_in_interval("noise", noise, low=0.0, high=1e3, owner="make_moons_data")
    rng = numpy_generator(seed, name="make_moons_data: seed")
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
    progress: Progress = None,
) -> MLPDenoiser:
    """Train an :class:`MLPDenoiser` on ``data`` (n, d) with the eps-prediction loss.

    Adam with a cosine learning rate (torch's ``CosineAnnealingLR`` over ``steps``, no warm-up).
    One generator drawn from ``seed`` gives, in order, the initial weights and then each step's
    batch indices, times and noise. A NaN or infinite loss stops training with
    :class:`icml26.core.NonFiniteLossError` naming the step.

    Parameters
    ----------
    progress
        ``None``/``False`` (silent), ``True`` (a progress bar) or a callable
        ``progress(done, total, {"loss": value})`` called after every optimiser step (see
        :mod:`icml26.core.progress`).

    Returns the trained network in eval mode with gradients off (float32; ``.double()`` for
    float64 use).

    Examples
    --------
    >>> from icml26.rex import VPSchedule
    >>> seen = []
    >>> net = train_denoiser(make_moons_data(64, seed=0), VPSchedule(), steps=3, batch_size=16,
    ...                      progress=lambda done, total, m: seen.append((done, total)))
    >>> seen, net.training
    ([(1, 3), (2, 3), (3, 3)], False)
    """
    owner = "train_denoiser"
    check_tensor("data", data, owner=owner, ndim=2, finite=True)
    if data.shape[0] < 1 or not 1 <= data.shape[1] <= MAX_WIDTH:
        raise ValueError(
            f"{owner}: data must be (n, d) with n >= 1 and 1 <= d <= {MAX_WIDTH}; got "
            f"{tuple(data.shape)}."
        )
    check_schedule("schedule", schedule, owner=owner)
    steps = check_positive_int("steps", steps, owner=owner, maximum=10**7)
    batch_size = check_positive_int("batch_size", batch_size, owner=owner, maximum=MAX_POINTS)
    lr = check_in_interval("lr", lr, low=0.0, high=1e3, closed="right", owner=owner)
    t_min = check_time(schedule, "t_min", t_min, owner=owner)
    if not t_min < 1.0:
        raise ValueError(f"{owner}: t_min must be below 1; got {t_min!r}.")
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
    with progress_reporter(progress, steps, "training the denoiser") as report:
        for step in range(steps):
            idx = torch.randint(0, x_all.shape[0], (batch_size,), generator=g)
            k = torch.randint(0, len(grid), (batch_size,), generator=g)
            eps = torch.randn(batch_size, x_all.shape[1], generator=g)
            x_t = alphas[k, None] * x_all[idx] + sigmas[k, None] * eps
            loss = (net(x_t, times[k]) - eps).pow(2).mean()
            value = optimizer_step(loss, opt, step=step, owner=owner)
            sched.step()
            report(step + 1, loss=value)
    net.eval().requires_grad_(False)
    return net
