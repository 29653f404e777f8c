"""The paper's synthetic benchmark: coupled OU / stock-like SDEs with power-law (Brownian) noise.

x_l = x_{l-1} + dt·drift(x_{l-1}) + √dt·η_l (+ √dt·η2_l·x_{l-1} for stock-like data), with
drift -sign(x)|x|^d/τ_c (OU) or 1 - sign(x)|x|^d/τ_c (stock-like), η = N(0, σ_g²) + σ_b·(unit
variance Gaussian noise with PSD ∝ f^-2) and a causal DAG injected after the simulation:
x_j[τ:] += C·sign(x_i[:-τ])|x_i[:-τ]|^e for every edge i → j (i < j), in row-major order.
Deviation: the colored noise is seeded (the reference's is not), see docs/powerlaw_cd.md.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from icml26.core import Seed, check_in_interval, check_one_of, check_positive_int, numpy_generator

__all__ = ["SimResult", "powerlaw_noise", "simulate_ou"]

NORMALIZATIONS = ("first", "zscore", None)
MAX_NOISE = 2**25  # powerlaw_noise: values drawn at once (its complex spectrum is 512 MiB)
MAX_EXPONENT = 16.0  # powerlaw_noise: spectral exponent β


@dataclass(frozen=True)
class SimResult:
    """A simulated dataset.

    Attributes
    ----------
    X
        Array (N, L - N·τ): the series after trimming and normalisation.
    adjacency
        Int array (N, N), strictly upper triangular; adjacency[i, j] = 1 means i → j.
    strength
        The coupling C.
    lag
        The causal lag τ.
    """

    X: np.ndarray
    adjacency: np.ndarray
    strength: float
    lag: int


def powerlaw_noise(exponent: float, shape: tuple[int, ...], seed: Seed = None) -> np.ndarray:
    """Gaussian noise with power spectral density ∝ f^-exponent along the last axis.

    Timmer & König's construction: independent Gaussian real and imaginary Fourier coefficients
    with standard deviation f^(-exponent/2) (the DC bin takes the amplitude of f = 1/n; the DC and,
    for even n, Nyquist coefficients are real), transformed back with an inverse real FFT and
    scaled so that the non-DC part has unit expected variance.

    Parameters
    ----------
    exponent
        The spectral exponent β in ``[0, MAX_EXPONENT = 16]`` (0 white, 1 pink, 2 Brownian).
    shape
        Output shape; the last axis is time (n >= 2); at most ``MAX_NOISE = 2**25`` values.
    seed
        Seed or generator.

    Returns
    -------
    numpy.ndarray
        Noise of the given shape.

    Raises
    ------
    TypeError
        If ``shape`` is not a tuple of ints.
    ValueError
        If ``exponent`` is outside [0, 16], the time axis is shorter than 2 or ``shape`` is too
        large.

    Examples
    --------
    >>> powerlaw_noise(2.0, (3, 1024), seed=0).shape
    (3, 1024)
    """
    owner = "powerlaw_noise"
    # f^-β over n <= 2^25 bins spans 2^(25β): β <= 16 keeps its square inside float64.
    check_in_interval("exponent", exponent, low=0.0, high=MAX_EXPONENT, owner=owner)
    if isinstance(shape, int | np.integer):
        shape = (int(shape),)
    if not isinstance(shape, tuple | list) or not shape:
        raise TypeError(f"{owner}: shape must be a non-empty tuple of ints; got {shape!r}.")
    shape = tuple(check_positive_int("shape", d, owner=owner, minimum=0) for d in shape)
    n = check_positive_int("shape[-1]", shape[-1], minimum=2, owner=owner)
    if math.prod(shape) > MAX_NOISE:
        raise ValueError(
            f"{owner}: shape must hold at most {MAX_NOISE} values (2^25); got {shape}."
        )
    rng = numpy_generator(seed)
    f = np.fft.rfftfreq(n)
    f[0] = 1.0 / n
    scale = f ** (-exponent / 2.0)  # (n // 2 + 1,)
    real = rng.standard_normal((*shape[:-1], f.size)) * scale
    imag = rng.standard_normal((*shape[:-1], f.size)) * scale
    imag[..., 0] = 0.0
    real[..., 0] *= np.sqrt(2.0)
    if n % 2 == 0:
        imag[..., -1] = 0.0
        real[..., -1] *= np.sqrt(2.0)
    # expected variance of the non-DC part of irfft: (4 Σ_{0<k<n/2} s_k² + 2 s_{n/2}²) / n²
    weights = scale[1:] ** 2
    if n % 2 == 0:
        weights[-1] /= 2.0
    sigma = 2.0 * np.sqrt(weights.sum()) / n
    return np.fft.irfft(real + 1j * imag, n=n, axis=-1) / sigma


def simulate_ou(
    n_vars: int,
    length: int = 5000,
    *,
    p_edge: float = 0.5,
    lag: int = 5,
    strength: float = 0.5,
    sigma_g: float = 1.0,
    sigma_b: float = 0.0,
    tau_c: float = 5.0,
    noise_exponent: float = 2.0,
    decay_exponent: float = 1.0,
    causal_exponent: float = 1.0,
    dt: float = 0.01,
    stationary: bool = True,
    stock_like: bool = False,
    post_causality: bool = True,
    normalize: str | None = "first",
    seed: Seed = 0,
) -> SimResult:
    """Simulate the paper's causal OU / stock-like benchmark (spec §2.5), seeded.

    Parameters
    ----------
    n_vars
        Number of series N.
    length
        Simulated length L; the first N·τ samples are trimmed. ``n_vars · length`` is at most
        ``MAX_NOISE = 2**25``.
    p_edge
        Probability of each edge i → j (i < j) of the random DAG.
    lag
        Causal lag τ (samples).
    strength
        Coupling C >= 0.
    sigma_g, sigma_b
        Standard deviations of the Gaussian and of the power-law part of the additive noise.
    tau_c
        Mean-reversion time (and the stock-like level).
    noise_exponent, decay_exponent, causal_exponent
        PSD exponent of the colored noise (at most 16, see :func:`powerlaw_noise`), d in the
        drift and e in the coupling f(x) = sign(x)|x|^e.
    dt
        Euler–Maruyama step.
    stationary
        Start at x = 1 (True) or at x = 100, a long relaxation with a drifting mean (False).
    stock_like
        Add the multiplicative noise √dt·η2·x (η2 ~ N(0, σ_g²)) and the unit drift.
    post_causality
        Inject causality after the simulation (True, the paper's setting) or add
        C·Gᵀ f(x_{l-τ}) to the drift (False).
    normalize
        ``"first"`` (divide each series by its first kept value, as the reference), ``"zscore"``
        or None.
    seed
        Seed or generator (None: fresh entropy); the same seed gives the same data, colored
        noise included.

    Returns
    -------
    SimResult
        ``X`` of shape (N, L - N·τ) and the true ``adjacency`` (row = cause).

    Raises
    ------
    ValueError
        If a parameter is out of range or L <= N·τ + 1.

    Examples
    --------
    >>> sim = simulate_ou(4, 2000, stock_like=True, sigma_b=0.5, seed=0)
    >>> sim.X.shape, bool((sim.adjacency == sim.adjacency * (sim.adjacency.T == 0)).all())
    ((4, 1980), True)
    """
    owner = "simulate_ou"
    n = check_positive_int("n_vars", n_vars, owner=owner)
    L = check_positive_int("length", length, owner=owner)
    lag = check_positive_int("lag", lag, owner=owner)
    check_in_interval("p_edge", p_edge, low=0.0, high=1.0, owner=owner)
    for name, value in [("strength", strength), ("sigma_g", sigma_g), ("sigma_b", sigma_b),
                        ("noise_exponent", noise_exponent), ("decay_exponent", decay_exponent),
                        ("causal_exponent", causal_exponent)]:  # fmt: skip
        check_in_interval(name, value, low=0.0, owner=owner)
    check_in_interval("noise_exponent", noise_exponent, high=MAX_EXPONENT, owner=owner)
    check_in_interval("tau_c", tau_c, low=0.0, closed="right", owner=owner)
    check_in_interval("dt", dt, low=0.0, closed="right", owner=owner)
    if n * L > MAX_NOISE:
        raise ValueError(
            f"{owner}: n_vars * length must be <= {MAX_NOISE} (2^25) samples; got {n} * {L}."
        )
    check_one_of("normalize", normalize, NORMALIZATIONS, owner=owner)
    if n * lag + 1 >= L:
        raise ValueError(f"{owner}: length must be > n_vars * lag + 1 = {n * lag + 1}; got {L}.")
    rng = numpy_generator(seed)

    G = np.triu(rng.uniform(size=(n, n)) < p_edge, k=1).astype(int)
    eta = sigma_g * rng.standard_normal((n, L)) + sigma_b * powerlaw_noise(
        noise_exponent, (n, L), rng
    )
    eta2 = sigma_g * rng.standard_normal((n, L)) if stock_like else None

    def coupling(x: np.ndarray) -> np.ndarray:
        return np.sign(x) * np.abs(x) ** causal_exponent

    x = np.empty((n, L))
    x[:, 0] = 1.0 if stationary else 100.0
    sqrt_dt = np.sqrt(dt)
    for step in range(1, L):
        prev = x[:, step - 1]
        drift = -np.sign(prev) * np.abs(prev) ** decay_exponent / tau_c
        if stock_like:
            drift = 1.0 + drift
        if not post_causality and step >= lag:
            drift = drift + strength * G.T @ coupling(x[:, step - lag])
        x[:, step] = prev + dt * drift + sqrt_dt * eta[:, step]
        if stock_like:
            x[:, step] += sqrt_dt * eta2[:, step] * prev
    if post_causality:
        for i, j in zip(*np.nonzero(G), strict=True):  # row-major: parents are final first
            x[j, lag:] += strength * coupling(x[i, :-lag])
    x = x[:, n * lag :]
    if normalize == "first":
        x = x / x[:, :1]
    elif normalize == "zscore":
        x = (x - x.mean(axis=1, keepdims=True)) / x.std(axis=1, keepdims=True)
    return SimResult(x, G, float(strength), lag)
