"""Spherical Generalized Gamma (SGG) additive-noise mechanisms for differential privacy.

Wei, Bienstock & Polychroniadou, "Asymptotic Optimality of the High-Dimensional Gaussian Mechanism
and Improved Low-Dimensional Mechanisms for Differential Privacy" (ICML 2026, arXiv:2606.08681).
Noise X = R·U on R^T with (R/σ)^p ~ Gamma(k/p) and U uniform on the sphere contains the Gaussian
(k, p) = (T, 2) and ℓ2 (T, 1) mechanisms. This package gives the exact privacy profile δ(ε),
calibration, member search, dp_accounting PLDs for tight composition, and a DP-SGD noise hook.
The family's parametrisation is inferred (the paper's text was not available): see docs/sgg_dp.md.

Examples
--------
>>> from icml26.sgg_dp import SGGMechanism, gaussian_member
>>> best = SGGMechanism(T=3, k=3.0, p=1.35).calibrate(0.5, 1e-2)
>>> gauss = gaussian_member(3).calibrate(0.5, 1e-2)
>>> best.mse() < gauss.mse()
True
"""

from icml26.core.imports import lazy_api

__getattr__, __dir__, __all__ = lazy_api(__name__, __file__)
