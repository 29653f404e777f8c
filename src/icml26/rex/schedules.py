"""Noise schedules x_t = alpha_t x_0 + sigma_t eps, with their log-SNR and its inverse.

Every schedule gives ``alpha(t)``, ``sigma(t)``, ``log_snr(t) = log(alpha/sigma)`` and the inverse
``t_of_log_snr(lam)``, closed form where one exists (VP linear: a quadratic root; VP scaled-linear:
a cubic root; flow matching: a sigmoid; a discrete schedule: a linear piece) and by bisection
otherwise. Times are Python floats.
"""

from __future__ import annotations

import abc
import bisect
import itertools
import math
from collections.abc import Callable
from typing import Any, final

import torch

from icml26.core import check_in_interval, check_one_of

__all__ = ["CustomSchedule", "DiscreteVPSchedule", "FlowMatchingSchedule", "Schedule", "VPSchedule"]


def _softplus(z: float) -> float:
    """log(1 + exp(z)) without overflow."""
    return z + math.log1p(math.exp(-z)) if z > 0 else math.log1p(math.exp(z))


def _tensor(t: float) -> torch.Tensor:
    return torch.tensor(t, dtype=torch.float64)


def _float(value: Any) -> float:
    return float(value.item()) if isinstance(value, torch.Tensor) else float(value)


def _time(t: Any, *, low: float, high: float, closed: str, owner: str) -> float:
    """t as a float inside the schedule's domain (the message names ``t``)."""
    return check_in_interval("t", t, low=low, high=high, closed=closed, owner=owner)


def _log_snr_value(lam: Any, owner: str) -> float:
    lam = check_in_interval("lam", lam, owner=owner)
    if not math.isfinite(lam):
        raise ValueError(f"{owner}: lam must be a finite log-SNR; got {lam!r}.")
    return lam


class Schedule(abc.ABC):
    """A diffusion/flow noise schedule on t in [t_min, t_max].

    ``t_noise`` is where sampling starts (mostly noise) and ``t_data`` where it ends.
    """

    t_noise: float
    t_data: float

    @abc.abstractmethod
    def alpha(self, t: float) -> float:
        """Signal scale alpha_t."""

    @abc.abstractmethod
    def sigma(self, t: float) -> float:
        """Noise scale sigma_t."""

    @abc.abstractmethod
    def alpha_dot(self, t: float) -> float:
        """d alpha / dt (needed to convert a velocity prediction)."""

    @abc.abstractmethod
    def sigma_dot(self, t: float) -> float:
        """d sigma / dt."""

    @abc.abstractmethod
    def t_of_log_snr(self, lam: float) -> float:
        """Inverse of :meth:`log_snr`."""

    def log_snr(self, t: float) -> float:
        """lambda_t = log(alpha_t / sigma_t)."""
        a, s = self.alpha(t), self.sigma(t)
        if not (a > 0 and s > 0):
            raise ValueError(
                f"{type(self).__name__}.log_snr: t must give alpha > 0 and sigma > 0; "
                f"got t={t!r} (alpha={a!r}, sigma={s!r})."
            )
        return math.log(a) - math.log(s)


@final
class VPSchedule(Schedule):
    """Variance-preserving schedule in continuous time t in (0, 1] (sigma = sqrt(1 - alpha^2)).

    ``linear``: log alpha_t = -(beta1 - beta0) t^2 / 4 - beta0 t / 2.
    ``scaled_linear``: beta(t) = (sqrt(beta0) + t (sqrt(beta1) - sqrt(beta0)))^2 and
    log alpha_t = -1/2 int_0^t beta (Stable Diffusion's schedule).

    Parameters
    ----------
    beta0, beta1
        ``1000 * betas[0]`` and ``1000 * betas[-1]`` of a discrete scheduler; ``beta1 >= beta0``
        (``beta0 == beta1`` is the constant-beta VP schedule, alpha_t = exp(-beta0 t / 2)).
    kind
        ``"linear"`` or ``"scaled_linear"``.
    t_data
        Where sampling stops (the default 1e-3 keeps sigma away from 0).

    Examples
    --------
    >>> s = VPSchedule()
    >>> round(s.t_of_log_snr(s.log_snr(0.3)), 12)
    0.3
    """

    EPS = 2e-4
    T_MIN = 1e-12  # below this sigma_t = sqrt(beta0 t) underflows the log-SNR

    def _t(self, t: Any) -> float:
        return _time(t, low=self.T_MIN, high=1.0, closed="both", owner="VPSchedule")

    def __init__(
        self,
        beta0: float = 0.1,
        beta1: float = 20.0,
        kind: str = "linear",
        *,
        t_data: float = 1e-3,
    ) -> None:
        self.beta0 = check_in_interval(
            "beta0", beta0, low=0.0, closed="neither", owner="VPSchedule"
        )
        self.beta1 = check_in_interval(
            "beta1", beta1, low=0.0, closed="neither", owner="VPSchedule"
        )
        if self.beta1 < self.beta0:
            raise ValueError(
                f"VPSchedule: beta1 must be >= beta0 (equal: a constant beta); got {beta0!r}, "
                f"{beta1!r}."
            )
        self.kind = check_one_of("kind", kind, ("linear", "scaled_linear"), owner="VPSchedule")
        self.t_data = check_in_interval(
            "t_data", t_data, low=0.0, high=1.0, closed="neither", owner="VPSchedule"
        )
        self.t_noise = 1.0

    @classmethod
    def from_betas(cls, betas: Any, kind: str = "linear", **kwargs: Any) -> VPSchedule:
        """From a discrete scheduler's ``betas``: beta0 = 1000 betas[0], beta1 = 1000 betas[-1]."""
        return cls(1000 * _float(betas[0]), 1000 * _float(betas[-1]), kind, **kwargs)

    def _integral_beta(self, t: float) -> float:
        # -2 log alpha_t = int_0^t beta(s) ds
        b0, b1 = self.beta0, self.beta1
        if self.kind == "linear":
            return (b1 - b0) * t * t / 2 + b0 * t
        d = math.sqrt(b1) - math.sqrt(b0)
        return d * d * t**3 / 3 + math.sqrt(b0) * d * t * t + b0 * t

    def _beta(self, t: float) -> float:
        if self.kind == "linear":
            return self.beta0 + t * (self.beta1 - self.beta0)
        return (math.sqrt(self.beta0) + t * (math.sqrt(self.beta1) - math.sqrt(self.beta0))) ** 2

    def beta(self, t: float) -> float:
        """The noise rate beta(t) = -2 d log(alpha_t) / dt, t in [T_MIN, 1].

        Examples
        --------
        >>> round(VPSchedule(beta0=0.1, beta1=20.0).beta(0.5), 12)
        10.05
        """
        return self._beta(self._t(t))

    def alpha(self, t: float) -> float:
        """alpha_t = exp(-1/2 int_0^t beta), t in [T_MIN, 1]."""
        return math.exp(-self._integral_beta(self._t(t)) / 2)

    def sigma(self, t: float) -> float:
        """sigma_t = sqrt(1 - alpha_t^2), computed without cancellation."""
        return math.sqrt(-math.expm1(-self._integral_beta(self._t(t))))

    def alpha_dot(self, t: float) -> float:
        """-beta(t) alpha_t / 2."""
        return -self._beta(self._t(t)) * self.alpha(t) / 2

    def sigma_dot(self, t: float) -> float:
        """beta(t) alpha_t^2 / (2 sigma_t)."""
        return self._beta(self._t(t)) * self.alpha(t) ** 2 / (2 * self.sigma(t))

    def log_snr(self, t: float) -> float:
        """lambda = -1/2 log(exp(int beta) - 1), without cancellation."""
        return -0.5 * math.log(math.expm1(self._integral_beta(self._t(t))))

    def t_of_log_snr(self, lam: float) -> float:
        """Closed-form inverse: solve int_0^t beta = log(1 + exp(-2 lam)) for t."""
        # |lam| > 1e4 is far outside the clamp [EPS, 1 - EPS]; bounding it keeps L finite
        lam = min(max(_log_snr_value(lam, "VPSchedule.t_of_log_snr"), -1e4), 1e4)
        L = _softplus(-2.0 * lam)
        b0, b1 = self.beta0, self.beta1
        if self.kind == "linear":
            # (b1-b0) t^2/2 + b0 t = L, the stable root of the quadratic
            t = 2 * L / (math.sqrt(b0 * b0 + 2 * (b1 - b0) * L) + b0)
        else:
            # ((sqrt(b0) + d t)^3 - b0^{3/2}) / (3 d) = L
            d = math.sqrt(b1) - math.sqrt(b0)
            # constant beta (d = 0): int_0^t beta = b0 t
            t = L / b0 if d == 0 else ((b0**1.5 + 3 * d * L) ** (1 / 3) - math.sqrt(b0)) / d
        return min(max(t, self.EPS), 1.0 - self.EPS)

    def __repr__(self) -> str:
        return f"VPSchedule(beta0={self.beta0}, beta1={self.beta1}, kind={self.kind!r})"


MAX_TRAIN_TIMESTEPS = 1_000_000  # longest alphas_cumprod accepted (one float per entry)


@final
class DiscreteVPSchedule(Schedule):
    """The VP schedule of a discrete diffusion model (DDPM / diffusers), exact at every timestep.

    Timestep k in {0, ..., N-1} of a model trained with ``alphas_cumprod`` (abar_k) sits at
    t_k = (k + 1) / N, where alpha = sqrt(abar_k) and sigma = sqrt(1 - abar_k) exactly. Between
    nodes the log-SNR lambda = log(alpha / sigma) is linear in t (so it stays strictly decreasing
    and ``t_of_log_snr`` is a closed-form linear solve), and the model is queried at the
    fractional timestep ``timestep(t) = N t - 1``. A continuous ``VPSchedule`` fitted to the
    betas misses sqrt(abar_k) by up to 4.5 % (DDPM linear, t = k / N); this one does not.

    Parameters
    ----------
    alphas_cumprod
        abar_0 > abar_1 > ... > abar_{N-1}, all in (0, 1) (a diffusers scheduler's
        ``alphas_cumprod``), N >= 2.
    t_data
        Where sampling stops (default t_0 = 1 / N, timestep 0); must lie in [1 / N, 1).

    Examples
    --------
    >>> s = DiscreteVPSchedule([0.99, 0.9, 0.5, 0.1])
    >>> round(s.alpha(0.5) ** 2, 12), s.timestep(0.5), round(s.t_of_log_snr(s.log_snr(0.6)), 12)
    (0.9, 1.0, 0.6)
    """

    def __init__(self, alphas_cumprod: Any, *, t_data: float | None = None) -> None:
        owner = "DiscreteVPSchedule"
        values = alphas_cumprod
        if isinstance(values, torch.Tensor):
            values = (
                values.detach().cpu().double().reshape(-1).tolist() if values.ndim == 1 else values
            )
        elif hasattr(values, "tolist") and getattr(values, "ndim", None) == 1:
            values = values.tolist()
        if isinstance(values, str | bytes) or not isinstance(values, list | tuple):
            raise TypeError(
                f"{owner}: alphas_cumprod must be a 1-D sequence, array or tensor of floats; "
                f"got {type(alphas_cumprod).__name__}."
            )
        if not 2 <= len(values) <= MAX_TRAIN_TIMESTEPS:
            raise ValueError(
                f"{owner}: alphas_cumprod must hold between 2 and {MAX_TRAIN_TIMESTEPS} values; "
                f"got {len(values)}."
            )
        abar = []
        for value in values:
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise TypeError(f"{owner}: alphas_cumprod must hold floats; got {value!r}.")
            abar.append(float(value))
        if not all(0.0 < a < 1.0 for a in abar):
            raise ValueError(f"{owner}: alphas_cumprod must lie in (0, 1); got {abar[:3]}...")
        if not all(a > b for a, b in itertools.pairwise(abar)):
            raise ValueError(f"{owner}: alphas_cumprod must be strictly decreasing.")
        self.alphas_cumprod = tuple(abar)
        self.num_train_timesteps = n = len(abar)
        # lambda_k = 1/2 log(abar / (1 - abar)), t_k = (k + 1) / N
        self._lam = [0.5 * (math.log(a) - math.log1p(-a)) for a in abar]
        self._neg_lam = [-lam for lam in self._lam]  # increasing, for bisect
        self.t_noise = 1.0
        if t_data is None:
            self.t_data = 1.0 / n
        else:
            self.t_data = check_in_interval(
                "t_data", t_data, low=1.0 / n, high=1.0, closed="left", owner=owner
            )

    def _t(self, t: Any) -> float:
        return _time(t, low=1.0 / self.num_train_timesteps, high=1.0, closed="both",
                     owner="DiscreteVPSchedule")  # fmt: skip

    def timestep(self, t: float) -> float:
        """The model's (fractional) timestep N t - 1 at time t."""
        return self.num_train_timesteps * self._t(t) - 1.0

    def _piece(self, t: float) -> tuple[float, float]:
        """(lambda(t), d lambda / dt) of the linear piece holding t."""
        n = self.num_train_timesteps
        u = self.timestep(t)  # position in node units, in [0, N - 1]
        k = min(max(math.floor(u), 0), n - 2)
        slope = self._lam[k + 1] - self._lam[k]
        if u == k:
            return self._lam[k], slope * n
        return self._lam[k] + (u - k) * slope, slope * n

    def log_snr(self, t: float) -> float:
        """lambda(t): lambda_k at t_k = (k + 1) / N, linear in between."""
        return self._piece(t)[0]

    def alpha(self, t: float) -> float:
        """alpha = sqrt(sigmoid(2 lambda)); sqrt(abar_k) at t_k."""
        n = self.num_train_timesteps
        u = self.timestep(t)
        if u == int(u):
            return math.sqrt(self.alphas_cumprod[min(int(u), n - 1)])
        return math.sqrt(_sigmoid(2 * self.log_snr(t)))

    def sigma(self, t: float) -> float:
        """sigma = sqrt(sigmoid(-2 lambda)); sqrt(1 - abar_k) at t_k."""
        n = self.num_train_timesteps
        u = self.timestep(t)
        if u == int(u):
            return math.sqrt(1.0 - self.alphas_cumprod[min(int(u), n - 1)])
        return math.sqrt(_sigmoid(-2 * self.log_snr(t)))

    def alpha_dot(self, t: float) -> float:
        """d alpha / dt = alpha sigma^2 lambda'(t) (lambda' of the piece holding t)."""
        return self.alpha(t) * self.sigma(t) ** 2 * self._piece(t)[1]

    def sigma_dot(self, t: float) -> float:
        """d sigma / dt = -sigma alpha^2 lambda'(t)."""
        return -self.sigma(t) * self.alpha(t) ** 2 * self._piece(t)[1]

    def t_of_log_snr(self, lam: float) -> float:
        """Inverse of the piecewise-linear log-SNR; clamps to [1 / N, 1] outside its range."""
        lam = _log_snr_value(lam, "DiscreteVPSchedule.t_of_log_snr")
        n = self.num_train_timesteps
        if lam >= self._lam[0]:
            return 1.0 / n
        if lam <= self._lam[-1]:
            return 1.0
        k = bisect.bisect_right(self._neg_lam, -lam) - 1  # lam_k >= lam > lam_{k+1}
        k = min(max(k, 0), n - 2)
        u = k + (lam - self._lam[k]) / (self._lam[k + 1] - self._lam[k])
        return (u + 1.0) / n

    def __repr__(self) -> str:
        return f"DiscreteVPSchedule(num_train_timesteps={self.num_train_timesteps})"


def _sigmoid(z: float) -> float:
    return 1.0 / (1.0 + math.exp(-z)) if z >= 0 else math.exp(z) / (1.0 + math.exp(z))


@final
class FlowMatchingSchedule(Schedule):
    """Rectified-flow schedule alpha_t = t, sigma_t = 1 - t: noise at t = 0, data at t = 1.

    Examples
    --------
    >>> FlowMatchingSchedule().t_of_log_snr(0.0)
    0.5
    """

    def __init__(self, *, t_noise: float = 1e-3, t_data: float = 1 - 1e-3) -> None:
        owner = "FlowMatchingSchedule"
        self.t_noise = check_in_interval(
            "t_noise", t_noise, low=0, high=1, closed="neither", owner=owner
        )
        self.t_data = check_in_interval(
            "t_data", t_data, low=0, high=1, closed="neither", owner=owner
        )

    def _t(self, t: Any) -> float:
        return _time(t, low=0.0, high=1.0, closed="neither", owner="FlowMatchingSchedule")

    def alpha(self, t: float) -> float:
        """alpha_t = t, t in (0, 1)."""
        return self._t(t)

    def sigma(self, t: float) -> float:
        """sigma_t = 1 - t."""
        return 1.0 - self._t(t)

    def alpha_dot(self, t: float) -> float:
        """1."""
        self._t(t)
        return 1.0

    def sigma_dot(self, t: float) -> float:
        """-1."""
        self._t(t)
        return -1.0

    def t_of_log_snr(self, lam: float) -> float:
        """t = sigmoid(lambda)."""
        lam = _log_snr_value(lam, "FlowMatchingSchedule.t_of_log_snr")
        return 1.0 / (1.0 + math.exp(-lam)) if lam >= 0 else math.exp(lam) / (1.0 + math.exp(lam))

    def __repr__(self) -> str:
        return "FlowMatchingSchedule()"


@final
class CustomSchedule(Schedule):
    """A schedule from user functions alpha(t), sigma(t), with the log-SNR inverted by bisection.

    Parameters
    ----------
    alpha_fn, sigma_fn
        Maps from time to alpha_t, sigma_t > 0 (called with a 0-d float64 tensor, so math,
        numpy and torch functions all work); the log-SNR must be strictly monotone.
    t_noise, t_data
        The sampling span (either order).
    alpha_dot_fn, sigma_dot_fn
        Optional derivatives; only needed for velocity-predicting models.

    Examples
    --------
    >>> s = CustomSchedule(lambda t: math.cos(math.pi * t / 2), lambda t: math.sin(math.pi * t / 2))
    >>> round(s.t_of_log_snr(s.log_snr(0.4)), 10)
    0.4
    """

    def __init__(
        self,
        alpha_fn: Callable[[float], Any],
        sigma_fn: Callable[[float], Any],
        *,
        t_noise: float = 1.0,
        t_data: float = 1e-3,
        alpha_dot_fn: Callable[[float], Any] | None = None,
        sigma_dot_fn: Callable[[float], Any] | None = None,
    ) -> None:
        if not (callable(alpha_fn) and callable(sigma_fn)):
            raise TypeError("CustomSchedule: alpha_fn and sigma_fn must be callables t -> float.")
        for name, fn in (("alpha_dot_fn", alpha_dot_fn), ("sigma_dot_fn", sigma_dot_fn)):
            if fn is not None and not callable(fn):
                raise TypeError(f"CustomSchedule: {name} must be callable or None; got {fn!r}.")
        self.alpha_fn, self.sigma_fn = alpha_fn, sigma_fn
        self.alpha_dot_fn, self.sigma_dot_fn = alpha_dot_fn, sigma_dot_fn
        self.t_noise = check_in_interval("t_noise", t_noise, owner="CustomSchedule")
        self.t_data = check_in_interval("t_data", t_data, owner="CustomSchedule")
        if not (math.isfinite(self.t_noise) and math.isfinite(self.t_data)):
            raise ValueError(
                f"CustomSchedule: t_noise and t_data must be finite; got {t_noise!r}, {t_data!r}."
            )
        if self.t_noise == self.t_data:
            raise ValueError("CustomSchedule: t_noise and t_data must differ.")

    # The user functions receive t as a 0-d float64 tensor, which math, numpy and torch all accept.
    def _t(self, t: Any) -> float:
        t = _time(t, low=-math.inf, high=math.inf, closed="both", owner="CustomSchedule")
        if not math.isfinite(t):
            raise ValueError(f"CustomSchedule: t must be finite; got {t!r}.")
        return t

    def alpha(self, t: float) -> float:
        """alpha_fn(t)."""
        return _float(self.alpha_fn(_tensor(self._t(t))))

    def sigma(self, t: float) -> float:
        """sigma_fn(t)."""
        return _float(self.sigma_fn(_tensor(self._t(t))))

    def alpha_dot(self, t: float) -> float:
        """alpha_dot_fn(t); an error if it was not given."""
        if self.alpha_dot_fn is None:
            raise ValueError("CustomSchedule: velocity outputs need alpha_dot_fn and sigma_dot_fn.")
        return _float(self.alpha_dot_fn(_tensor(self._t(t))))

    def sigma_dot(self, t: float) -> float:
        """sigma_dot_fn(t); an error if it was not given."""
        if self.sigma_dot_fn is None:
            raise ValueError("CustomSchedule: velocity outputs need alpha_dot_fn and sigma_dot_fn.")
        return _float(self.sigma_dot_fn(_tensor(self._t(t))))

    def t_of_log_snr(self, lam: float) -> float:
        """Bisection on [t_data, t_noise] (to float64 resolution); clamps outside the span."""
        lam = _log_snr_value(lam, "CustomSchedule.t_of_log_snr")
        lo, hi = sorted((self.t_data, self.t_noise))
        increasing = self.log_snr(hi) > self.log_snr(lo)
        for _ in range(200):
            mid = (lo + hi) / 2
            if mid in (lo, hi):
                break
            if (self.log_snr(mid) < lam) == increasing:
                lo = mid
            else:
                hi = mid
        return (lo + hi) / 2
