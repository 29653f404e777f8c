"""The SGG additive-noise mechanism: density, exact privacy profile, calibration, sampling.

M(D) = Q(D) + X with X ~ SGG(T, k, p, σ): f(x) ∝ ‖x‖^{k−T} exp(−(‖x‖/σ)^p) on R^T. The family
contains the Gaussian mechanism N(0, s²I) as (k, p, σ) = (T, 2, √2 s), the ℓ2 mechanism
(Joseph et al., ICML 2025) as (T, 1, σ) and, at T = 1, the Laplace mechanism as (1, 1, b).
The parametrisation is inferred from the paper's name and abstract (docs/sgg_dp.md, Deviations).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import numpy as np

from icml26.core import (
    Seed,
    check_array,
    check_in_interval,
    check_one_of,
    check_positive_int,
    numpy_generator,
)
from icml26.sgg_dp.calibration import smallest_epsilon, smallest_feasible
from icml26.sgg_dp.gaussian import analytic_gaussian_sigma
from icml26.sgg_dp.profile import log_hockey_stick, privacy_loss
from icml26.sgg_dp.radial import radius_moment, sample_sgg

if TYPE_CHECKING:
    from dp_accounting import dp_event
    from dp_accounting.pld.privacy_loss_distribution import PrivacyLossDistribution

__all__ = [
    "WORST_CASES",
    "SGGMechanism",
    "check_mechanism",
    "gaussian_member",
    "l2_member",
    "laplace_member",
]

WORST_CASES = ("boundary", "scan")
# δ(ε) is returned times 1 + DELTA_MARGIN: an upper bound, the quadrature error being <= 1e-11.
DELTA_MARGIN = 1e-10
SIGMA_RANGE = (1e-3, 1e3)  # calibrated σ, in units of the sensitivity
# Shifts ‖v‖/Δ tried by worst_case="scan" (and by check_shift_monotone).
SHIFT_GRID = np.linspace(0.1, 1.0, 10)

OWNER = "SGGMechanism"


@dataclass(frozen=True)
class SGGMechanism:
    """Additive Spherical Generalized Gamma noise X = R·U, (R/σ)^p ~ Gamma(k/p), U uniform.

    Parameters
    ----------
    T
        Dimension of the released vector (integer >= 1).
    k
        Radial shape k > 0 (k = T: no spike or hole at 0).
    p
        Radial power p > 0 (p = 2: Gaussian-like tails, p = 1: ℓ2-mechanism tails).
    sigma
        Scale σ > 0, or ``None`` for an uncalibrated mechanism (see :meth:`calibrate`).
    sensitivity
        ℓ2 sensitivity Δ > 0 of the query.
    worst_case
        ``"boundary"`` takes the shift ‖v‖ = Δ as the worst case (shift monotonicity, checked by
        :func:`check_shift_monotone`); ``"scan"`` takes the max over ‖v‖ in {0.1, ..., 1}·Δ.

    Raises
    ------
    ValueError
        If ``T < 1``, ``k <= 0``, ``p <= 0``, ``sigma <= 0``, ``sensitivity <= 0`` or
        ``worst_case`` is unknown.

    Examples
    --------
    >>> m = SGGMechanism(T=3, k=3.0, p=1.35).calibrate(eps=0.5, delta=1e-2)
    >>> m.delta(0.5) <= 1e-2
    True
    >>> m.sample(4, seed=0).shape
    (4, 3)
    """

    T: int
    k: float
    p: float
    sigma: float | None = None
    sensitivity: float = 1.0
    worst_case: str = "boundary"

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        set_(self, "T", check_positive_int("T", self.T, owner=OWNER))
        set_(self, "k", check_in_interval("k", self.k, low=0.0, closed="neither", owner=OWNER))
        set_(self, "p", check_in_interval("p", self.p, low=0.0, closed="neither", owner=OWNER))
        if self.sigma is not None:
            sigma = check_in_interval("sigma", self.sigma, low=0.0, closed="neither", owner=OWNER)
            set_(self, "sigma", sigma)
        sensitivity = check_in_interval(
            "sensitivity", self.sensitivity, low=0.0, closed="neither", owner=OWNER
        )
        set_(self, "sensitivity", sensitivity)
        check_one_of("worst_case", self.worst_case, WORST_CASES, owner=OWNER)

    # --- noise law -----------------------------------------------------------------------------

    def _scale(self, what: str) -> float:
        if self.sigma is None:
            raise ValueError(
                f"{OWNER}: sigma must be a number > 0 to {what}; got None (NoneType). "
                "Call calibrate(eps, delta) or pass sigma."
            )
        return self.sigma

    def mse(self) -> float:
        """E‖X‖² = σ² Γ((k+2)/p) / Γ(k/p) (ℓ2 mechanism: T(T+1)σ²; Gaussian: T s²).

        Raises
        ------
        ValueError
            If the mechanism is not calibrated.
        """
        return radius_moment(2.0, self.k, self.p, self._scale("compute the MSE"))

    def mean_norm(self) -> float:
        """E‖X‖ = σ Γ((k+1)/p) / Γ(k/p)."""
        return radius_moment(1.0, self.k, self.p, self._scale("compute E‖X‖"))

    def variance_per_coordinate(self) -> float:
        """Var X_i = MSE / T (the noise is isotropic and centred)."""
        return self.mse() / self.T

    def sample(self, size: int, seed: Seed = None) -> np.ndarray:
        """Draw ``size`` noise vectors.

        Parameters
        ----------
        size
            Number of draws (integer >= 1).
        seed
            ``int``, ``numpy`` or ``torch`` generator, or ``None`` (fresh entropy).

        Returns
        -------
        numpy.ndarray
            Shape ``(size, T)``.
        """
        size = check_positive_int("size", size, owner=OWNER)
        return sample_sgg(
            size, self.T, self.k, self.p, self._scale("sample"), numpy_generator(seed)
        )

    def release(self, value: np.ndarray, seed: Seed = None) -> np.ndarray:
        """Privatise a query value (or a batch of them) by adding independent SGG noise.

        Parameters
        ----------
        value
            Array of shape ``(T,)`` or ``(n, T)``: the query answer(s) Q(D).
        seed
            Source of randomness (see :meth:`sample`).

        Returns
        -------
        numpy.ndarray
            ``value + X``, same shape as ``value``.

        Raises
        ------
        TypeError
            If ``value`` is not a numeric array.
        ValueError
            If the mechanism is uncalibrated, ``value`` is not finite, or its last axis is not T.
        """
        sigma = self._scale("release")
        value = check_array("value", value, owner=OWNER)
        if value.ndim not in (1, 2) or value.shape[-1] != self.T:
            raise ValueError(
                f"{OWNER}: value must have shape (T,) or (n, T) with T={self.T}; "
                f"got shape {value.shape}."
            )
        n = 1 if value.ndim == 1 else value.shape[0]
        noise = sample_sgg(n, self.T, self.k, self.p, sigma, numpy_generator(seed))
        return value + noise.reshape(value.shape)

    # --- privacy -------------------------------------------------------------------------------

    def privacy_loss(self, x: np.ndarray) -> np.ndarray:
        """L(x) = ln f(x) − ln f(x − Δe₁) for the worst-case pair (P, P shifted by Δe₁).

        Parameters
        ----------
        x
            Points of shape ``(..., T)``.

        Returns
        -------
        numpy.ndarray
            Shape ``x.shape[:-1]``.
        """
        sigma = self._scale("evaluate the privacy loss")
        x = check_array("x", x, owner=OWNER, finite=False)
        if x.shape[-1:] != (self.T,):
            raise ValueError(f"{OWNER}: x must have last axis T={self.T}; got shape {x.shape}.")
        return privacy_loss(x, self.T, self.k, self.p, sigma, self.sensitivity)

    def _log_delta_at(self, eps: float, sigma: float) -> float:
        """ln of an upper bound on δ_σ(ε): the quadrature's value times 1 + ``DELTA_MARGIN``."""
        shifts = SHIFT_GRID if self.worst_case == "scan" else (1.0,)
        value = max(
            log_hockey_stick(eps, self.T, self.k, self.p, sigma, s * self.sensitivity)
            for s in shifts
        )
        return min(value + math.log1p(DELTA_MARGIN), 0.0)

    def log_delta(self, eps: float) -> float:
        """ln δ(ε) (see :meth:`delta`), also where δ underflows a float.

        Accurate (relative error of δ <= 1e-6, never below) down to δ = 1e-300 and in practice
        far below, as long as the loss's tail events lie within |logit F_R(r)| <= 1e5 of the
        radial law; −inf where δ = 0 (pure DP beyond ε₀) or the tail events lie farther out
        (δ < e^{-745} there).

        Raises
        ------
        ValueError
            If ``eps < 0``, the mechanism is uncalibrated, or (R/σ)^p overflows float64 on the
            loss's support (e.g. σ/Δ = 1e-12 at p = 34): the quadrature cannot give δ there.

        Examples
        --------
        >>> round(gaussian_member(3, std=2.0).log_delta(100.0), 3)  # δ ~ 1e-8670: not a float
        -19962.24
        """
        eps = check_in_interval("eps", eps, low=0.0, owner=OWNER)
        sigma = self._scale("compute δ(ε)")
        with np.errstate(over="ignore", invalid="ignore"):
            value = self._log_delta_at(eps, sigma)
        if math.isnan(value):
            raise ValueError(
                f"{OWNER}: δ({eps!r}) is not computable in float64 at σ/Δ = "
                f"{sigma / self.sensitivity:g}, p = {self.p:g}, k = {self.k:g}: (R/σ)^p "
                "overflows on the privacy loss's support."
            )
        return value

    def delta(self, eps: float) -> float:
        """Exact privacy profile δ(ε) = sup_{‖v‖<=Δ} ∫ (f(x) − e^ε f(x − v))₊ dx.

        Computed in log space by deterministic quadrature (relative error measured <= 1e-11
        down to δ ~ 1e-300 against closed forms and mpmath) and returned as an upper bound:
        multiplied by 1 + ``DELTA_MARGIN`` (1e-10).

        Parameters
        ----------
        eps
            ε >= 0.

        Returns
        -------
        float
            δ(ε) in [0, 1] (0 where the true δ is 0, e.g. pure DP beyond ε₀; values below
            ~5e-324 underflow: use :meth:`log_delta`).

        Raises
        ------
        ValueError
            If ``eps < 0`` or the mechanism is uncalibrated.
        """
        return math.exp(self.log_delta(eps))

    def epsilon(self, delta: float) -> float:
        """Smallest ε >= 0 with δ(ε) <= ``delta`` (root of ln δ(ε) = ln ``delta``).

        Raises
        ------
        ValueError
            If ``delta`` is not in (0, 1) or the mechanism is uncalibrated.
        """
        delta = check_in_interval("delta", delta, low=0.0, high=1.0, closed="neither", owner=OWNER)
        sigma = self._scale("compute ε(δ)")
        return smallest_epsilon(lambda eps: self._log_delta_at(eps, sigma), math.log(delta))

    def pure_epsilon(self) -> float:
        """ε₀ of pure DP: (Δ/σ)^p for k = T and p <= 1 (|ρ^p − r^p| <= Δ^p), else ``inf``."""
        sigma = self._scale("compute ε₀")
        if self.k == self.T and self.p <= 1:
            return (self.sensitivity / sigma) ** self.p
        return math.inf

    def calibrate(self, eps: float, delta: float, sigma_hint: float | None = None) -> SGGMechanism:
        """A copy with the smallest σ in [1e-3, 1e3]·Δ such that δ_σ(ε) <= ``delta``.

        Parameters
        ----------
        eps
            Target ε >= 0.
        delta
            Target δ in (0, 1).
        sigma_hint
            Where the search starts (e.g. a neighbouring member's σ); default: the σ whose MSE
            equals the analytic Gaussian mechanism's at (ε, δ). For k <= T the result does not
            depend on it (beyond ~1e-10 relative); for k > T see :mod:`calibration`.

        Returns
        -------
        SGGMechanism
            The calibrated copy (``self`` is unchanged).

        Raises
        ------
        ValueError
            If ``eps < 0``, ``delta`` is not in (0, 1), or no σ <= 1e3·Δ reaches the target.

        Examples
        --------
        >>> m = l2_member(T=3).calibrate(1.0, 1e-5)
        >>> round(m.sigma, 3)
        0.995
        """
        eps = check_in_interval("eps", eps, low=0.0, owner=OWNER)
        delta = check_in_interval("delta", delta, low=0.0, high=1.0, closed="neither", owner=OWNER)
        if sigma_hint is None:
            # equal MSE: T s_G² = σ² Γ((k+2)/p)/Γ(k/p)
            s_gauss = analytic_gaussian_sigma(eps, delta, self.sensitivity)
            sigma_hint = s_gauss * math.sqrt(self.T / radius_moment(2.0, self.k, self.p, 1.0))
        sigma_hint = check_in_interval(
            "sigma_hint", sigma_hint, low=0.0, closed="neither", owner=OWNER
        )
        log_delta = math.log(delta)

        def log_delta_of(log_sigma: float) -> float:
            return self._log_delta_at(eps, math.exp(log_sigma))

        lo, hi = (
            math.log(SIGMA_RANGE[0] * self.sensitivity),
            math.log(SIGMA_RANGE[1] * self.sensitivity),
        )
        try:
            log_sigma = smallest_feasible(
                log_delta_of, log_delta, math.log(sigma_hint), lo, hi, monotone=self.k <= self.T
            )
        except ValueError:
            raise ValueError(
                f"{OWNER}: no sigma <= 1e3·sensitivity reaches (eps, delta) = ({eps:g}, {delta:g})"
                f" for (T, k, p) = ({self.T}, {self.k:g}, {self.p:g})."
            ) from None
        return replace(self, sigma=math.exp(log_sigma))

    def to_dp_event(self, M: int = 65536, n_panels: int = 40) -> dp_event.DpEvent:
        """This release as a dp_accounting event.

        The Gaussian member (k = T, p = 2) gives dp_accounting's own
        ``GaussianDpEvent(noise_multiplier=std/Δ)``, which every dp_accounting accountant
        composes (PLD, RDP, inside ``PoissonSampledDpEvent`` too). Any other member gives an
        :class:`~icml26.sgg_dp.SGGDpEvent` (``sgg_scale`` = σ/Δ) for
        :class:`~icml26.sgg_dp.SGGPLDAccountant`; ``M``/``n_panels`` set the resolution of the
        PLD the accountant builds (:meth:`to_pld`).

        Examples
        --------
        >>> from dp_accounting import dp_event
        >>> from icml26.sgg_dp import SGGPLDAccountant
        >>> m = SGGMechanism(T=3, k=3.0, p=1.35).calibrate(1.0, 1e-5)
        >>> acc = SGGPLDAccountant().compose(dp_event.SelfComposedDpEvent(m.to_dp_event(), 10))
        >>> 1.0 < acc.get_epsilon(1e-5) < 10 * m.epsilon(1e-5 / 10)  # tight, below basic
        True
        >>> gaussian_member(3, std=2.0, sensitivity=0.5).to_dp_event()
        GaussianDpEvent(noise_multiplier=4.0)
        """
        from icml26.sgg_dp.accountant import SGGDpEvent

        sigma = self._scale("describe it as a DpEvent")
        M = check_positive_int("M", M, owner=OWNER)
        n_panels = check_positive_int("n_panels", n_panels, owner=OWNER)
        event = SGGDpEvent(self.T, self.k, self.p, sigma / self.sensitivity, M, n_panels)
        return event.as_gaussian_event() if event.is_gaussian else event

    def to_pld(
        self,
        value_discretization_interval: float = 1e-4,
        M: int = 65536,
        n_panels: int = 40,
        sampling_prob: float = 1.0,
    ) -> PrivacyLossDistribution:
        """The privacy-loss distribution of (P, P shifted by Δe₁) as a dp_accounting object.

        The loss grid defaults to dp_accounting's 1e-4 (that of its ``PLDAccountant`` and of
        :class:`~icml26.sgg_dp.SGGPLDAccountant`); ``sampling_prob`` q < 1 gives the PLD of the
        release on a Poisson subsample (add-or-remove-one neighbours). Compose with
        ``.self_compose(n)`` / ``.compose(other)`` and query with ``.get_delta_for_epsilon`` /
        ``.get_epsilon_for_delta``; see :func:`~icml26.sgg_dp.make_pld`.
        """
        from icml26.sgg_dp.pld import make_pld

        sigma = self._scale("build its PLD")
        return make_pld(
            self.T,
            self.k,
            self.p,
            sigma,
            self.sensitivity,
            value_discretization_interval,
            M,
            n_panels,
            sampling_prob,
        )


def check_mechanism(name: str, value: object, owner: str) -> SGGMechanism:
    """``value`` if it is an :class:`SGGMechanism`, else a ``TypeError`` naming ``name``."""
    if not isinstance(value, SGGMechanism):
        raise TypeError(f"{owner}: {name} must be an SGGMechanism; got {type(value).__name__}.")
    return value


def gaussian_member(T: int, std: float | None = None, sensitivity: float = 1.0) -> SGGMechanism:
    """The Gaussian mechanism N(0, std² I_T) as the SGG member (k, p, σ) = (T, 2, √2·std).

    Examples
    --------
    >>> round(gaussian_member(5, std=2.0).mse(), 6)  # T s²
    20.0
    """
    if std is not None:
        std = check_in_interval("std", std, low=0.0, closed="neither", owner="gaussian_member")
    sigma = None if std is None else math.sqrt(2) * std
    return SGGMechanism(T=T, k=float(T), p=2.0, sigma=sigma, sensitivity=sensitivity)


def l2_member(T: int, sigma: float | None = None, sensitivity: float = 1.0) -> SGGMechanism:
    """The ℓ2 mechanism, density ∝ exp(−‖x‖/σ), as the SGG member (k, p) = (T, 1).

    Examples
    --------
    >>> round(l2_member(3, sigma=1.0).mse(), 6)  # T(T+1)σ²
    12.0
    """
    return SGGMechanism(T=T, k=float(T), p=1.0, sigma=sigma, sensitivity=sensitivity)


def laplace_member(scale: float | None = None, sensitivity: float = 1.0) -> SGGMechanism:
    """The 1-D Laplace mechanism Laplace(b) as the SGG member (T, k, p, σ) = (1, 1, 1, b).

    Examples
    --------
    >>> round(laplace_member(scale=1.0).delta(0.5), 6)  # 1 − exp((ε − Δ/b)/2)
    0.221199
    """
    if scale is not None:
        scale = check_in_interval("scale", scale, low=0.0, closed="neither", owner="laplace_member")
    return SGGMechanism(T=1, k=1.0, p=1.0, sigma=scale, sensitivity=sensitivity)
