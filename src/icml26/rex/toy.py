"""Analytic test problems: Gaussian and isotropic Gaussian-mixture data with exact denoisers.

For data x0 ~ N(mu, s^2 I) and x_t = alpha x0 + sigma eps, the optimal denoiser is
E[x0 | x_t] = mu + alpha s^2 / (alpha^2 s^2 + sigma^2) (x_t - alpha mu), and the probability-flow
ODE has the closed-form flow x_t = alpha_t mu + sqrt(alpha_t^2 s^2 + sigma_t^2) z with z invariant.
For a mixture, the denoiser averages the per-component posteriors with posterior weights.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch

from icml26.core import (
    Seed,
    check_array,
    check_in_interval,
    check_positive_int,
    torch_generator,
)
from icml26.rex._checks import MAX_POINTS, check_schedule, check_state, check_time
from icml26.rex.schedules import Schedule

__all__ = ["GaussianData", "GaussianMixtureData"]


MAX_DIM = 4096  # largest data dimension of the analytic problems


def _check_n(n: int, dim: int, owner: str) -> int:
    return check_positive_int("n", n, owner=owner, minimum=0, maximum=MAX_POINTS // dim)


def _check_dtype(dtype: torch.dtype, owner: str) -> torch.dtype:
    if not (isinstance(dtype, torch.dtype) and dtype.is_floating_point):
        raise TypeError(f"{owner}: dtype must be a floating torch.dtype; got {dtype!r}.")
    return dtype


def _generator(seed: Seed, owner: str) -> torch.Generator:
    if isinstance(seed, bool) or not (
        seed is None or isinstance(seed, int | np.random.Generator | torch.Generator)
    ):
        raise TypeError(f"{owner}: seed must be an int, a generator or None; got {seed!r}.")
    if isinstance(seed, int) and not 0 <= seed < 2**64:
        raise ValueError(f"{owner}: seed must be in [0, 2**64); got {seed!r}.")
    return torch_generator(seed)


def _times(t: torch.Tensor | float) -> float:
    if isinstance(t, torch.Tensor):
        if t.numel() > 1 and not bool((t == t.reshape(-1)[0]).all()):
            raise ValueError("analytic denoisers need one time per call (all entries of t equal).")
        return float(t.reshape(-1)[0])
    return float(t)


class GaussianData:
    """Data N(mu, s^2 I) in ``dim`` dimensions, with its exact denoiser and PF-ODE flow.

    Examples
    --------
    >>> from icml26.rex import VPSchedule
    >>> data = GaussianData(mu=0.5, s=0.3, dim=2)
    >>> denoise = data.denoiser(VPSchedule())
    >>> denoise(torch.zeros(1, 2), torch.tensor([1.0])).shape
    torch.Size([1, 2])
    """

    def __init__(self, mu: float = 0.5, s: float = 0.5, dim: int = 2) -> None:
        owner = "GaussianData"
        self.mu = check_in_interval("mu", mu, low=-1e150, high=1e150, owner=owner)
        self.s = check_in_interval("s", s, low=0.0, high=1e150, closed="right", owner=owner)
        self.dim = check_positive_int("dim", dim, owner=owner, maximum=MAX_DIM)

    def sample(self, n: int, seed: Seed = None, dtype: torch.dtype = torch.float64) -> torch.Tensor:
        """n data points, shape (n, dim); n at most ``MAX_POINTS``."""
        n = _check_n(n, self.dim, "GaussianData.sample")
        dtype = _check_dtype(dtype, "GaussianData.sample")
        g = _generator(seed, "GaussianData.sample")
        return self.mu + self.s * torch.randn(n, self.dim, generator=g, dtype=dtype)

    def denoiser(self, schedule: Schedule):
        """model(x, t) -> E[x0 | x_t = x] (a data-predicting model)."""
        check_schedule("schedule", schedule, owner="GaussianData.denoiser")

        def model(x: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
            tt = _times(t)
            a, sg = schedule.alpha(tt), schedule.sigma(tt)
            s2 = self.s**2
            return self.mu + a * s2 / (a * a * s2 + sg * sg) * (x - a * self.mu)

        return model

    def marginal_std(self, schedule: Schedule, t: float) -> float:
        """Standard deviation of x_t per coordinate: sqrt(alpha^2 s^2 + sigma^2)."""
        check_schedule("schedule", schedule, owner="GaussianData.marginal_std")
        t = check_time(schedule, "t", t, owner="GaussianData.marginal_std")
        a, sg = schedule.alpha(t), schedule.sigma(t)
        return (a * a * self.s**2 + sg * sg) ** 0.5

    def flow(self, schedule: Schedule, x: torch.Tensor, t_from: float, t_to: float) -> torch.Tensor:
        """Exact PF-ODE map from time t_from to t_to."""
        owner = "GaussianData.flow"
        check_schedule("schedule", schedule, owner=owner)
        check_state("x", x, owner=owner)
        t_from = check_time(schedule, "t_from", t_from, owner=owner)
        t_to = check_time(schedule, "t_to", t_to, owner=owner)
        z = (x - schedule.alpha(t_from) * self.mu) / self.marginal_std(schedule, t_from)
        return schedule.alpha(t_to) * self.mu + self.marginal_std(schedule, t_to) * z


class GaussianMixtureData:
    """Isotropic Gaussian mixture sum_k w_k N(m_k, v_k I) with its exact denoiser.

    The default is the spec's 2-D mixture: means (-2, 0), (2, 1), (0, -2.5); variances
    0.05, 0.2, 0.1; weights 0.3, 0.5, 0.2.

    Examples
    --------
    >>> data = GaussianMixtureData()
    >>> data.sample(5, seed=0).shape
    torch.Size([5, 2])
    """

    def __init__(
        self,
        means: Sequence[Sequence[float]] = ((-2.0, 0.0), (2.0, 1.0), (0.0, -2.5)),
        variances: Sequence[float] = (0.05, 0.2, 0.1),
        weights: Sequence[float] = (0.3, 0.5, 0.2),
    ) -> None:
        owner = "GaussianMixtureData"
        self.means = torch.from_numpy(check_array("means", means, owner=owner, ndim=2).copy())
        self.variances = torch.from_numpy(
            check_array("variances", variances, owner=owner, ndim=1).copy()
        )  # (K,)
        self.weights = torch.from_numpy(check_array("weights", weights, owner=owner, ndim=1).copy())
        K, dim = self.means.shape  # (K, dim)
        if K == 0 or not 1 <= dim <= MAX_DIM:
            raise ValueError(
                f"{owner}: means must be (K, dim) with K >= 1 and 1 <= dim <= {MAX_DIM}; got "
                f"{tuple(self.means.shape)}."
            )
        if self.variances.shape != (K,) or self.weights.shape != (K,):
            raise ValueError(
                f"{owner}: means, variances and weights must have K entries; got "
                f"{K}, {self.variances.shape[0]} and {self.weights.shape[0]}."
            )
        if bool((self.variances <= 0).any()) or bool((self.weights <= 0).any()):
            raise ValueError(f"{owner}: variances and weights must be positive.")
        if bool((self.means.abs() > 1e150).any()) or bool((self.variances > 1e150).any()):
            raise ValueError(f"{owner}: means and variances must be at most 1e150 in size.")
        self.weights = self.weights / self.weights.sum()

    @property
    def dim(self) -> int:
        """Data dimension."""
        return int(self.means.shape[1])

    def sample(self, n: int, seed: Seed = None, dtype: torch.dtype = torch.float64) -> torch.Tensor:
        """n data points, shape (n, dim); n at most ``MAX_POINTS``."""
        n = _check_n(n, self.dim, "GaussianMixtureData.sample")
        dtype = _check_dtype(dtype, "GaussianMixtureData.sample")
        g = _generator(seed, "GaussianMixtureData.sample")
        if n == 0:
            return torch.empty(0, self.dim, dtype=dtype)
        k = torch.multinomial(self.weights, n, replacement=True, generator=g)
        z = torch.randn(n, self.dim, generator=g, dtype=torch.float64)
        return (self.means[k] + self.variances[k].sqrt()[:, None] * z).to(dtype)

    def denoiser(self, schedule: Schedule):
        """model(x, t) -> E[x0 | x_t = x] (a data-predicting model)."""
        check_schedule("schedule", schedule, owner="GaussianMixtureData.denoiser")

        def model(x: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
            tt = _times(t)
            a, sg = schedule.alpha(tt), schedule.sigma(tt)
            means = self.means.to(x.dtype)
            var_t = a * a * self.variances.to(x.dtype) + sg * sg  # (K,) variance of x_t | k
            diff = x[:, None, :] - a * means[None]  # (n, K, dim)
            log_w = (
                torch.log(self.weights.to(x.dtype))
                - 0.5 * self.dim * torch.log(var_t)
                - 0.5 * (diff**2).sum(-1) / var_t
            )  # (n, K)
            # exp(log_w - logsumexp) rather than torch.softmax, measured ~100x faster on CPU here
            post = torch.exp(log_w - torch.logsumexp(log_w, dim=1, keepdim=True))
            gain = a * self.variances.to(x.dtype) / var_t  # (K,)
            cond_mean = means[None] + gain[None, :, None] * diff  # (n, K, dim)
            return (post[:, :, None] * cond_mean).sum(1)

        return model

    def marginal_moments(self, schedule: Schedule, t: float) -> tuple[torch.Tensor, torch.Tensor]:
        """Per-coordinate mean and variance of x_t = alpha_t x0 + sigma_t eps, shape (dim,) each.

        mean = alpha sum_k w_k m_k; var = alpha^2 (sum_k w_k (v_k + m_k^2) - mean_0^2) + sigma^2,
        with mean_0 the data mean.

        Examples
        --------
        >>> from icml26.rex import VPSchedule
        >>> mixture = GaussianMixtureData(((-1.0,), (1.0,)), (0.5, 0.5), (0.5, 0.5))
        >>> mean, var = mixture.marginal_moments(VPSchedule(t_data=1e-3), 1e-3)  # ~ the data
        >>> mean.tolist(), round(float(var[0]), 3)  # weights 1/2: var = 0.5 + 1 = 1.5
        ([0.0], 1.5)
        """
        owner = "GaussianMixtureData.marginal_moments"
        check_schedule("schedule", schedule, owner=owner)
        t = check_time(schedule, "t", t, owner=owner)
        alpha, sigma = schedule.alpha(t), schedule.sigma(t)
        w, m, v = self.weights, self.means, self.variances
        mean = (w[:, None] * m).sum(0)
        second = (w[:, None] * (v[:, None] + m**2)).sum(0)
        return alpha * mean, alpha**2 * (second - mean**2) + sigma**2
