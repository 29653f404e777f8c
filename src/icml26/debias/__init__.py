"""Debiasing for robustness to meaning-preserving prompt perturbations, with certification.

Zhou, Aleshina, Lovyagin, Somov, Seleznyov, Panchenko, Oseledets, Tutubalina, Tyukin,
*Harnessing non-adversarial robustness in large language models*, ICML 2026 (arXiv:2605.29816).
Averaged over random, semantically neutral prompt edits, a module's output shifts away from its
clean value: the perturbation-induced bias ``b_M(h) = E_δ[M(h + δh)] − M(h)``. Removing that
shift with a light fine-tuning of bias vectors (or hook-added correction vectors in bias-free
LLMs) restores robustness when the shift is systematic across inputs, and random-perturbation
robustness can then be certified with Clopper–Pearson bounds.

Deviations (details in docs/debias.md): only the abstract and third-party summaries of the
paper were available. The bias/fluctuation analysis, algorithms A (mean-shift correction),
B (bias-only fine-tuning) and C (output-only calibration), the bound and the certificate are the
spec's inferred design, and every numeric target is the spec author's own toy measurement.

Examples
--------
>>> from icml26.debias import clopper_pearson_lower, relu_gaussian_bias
>>> round(relu_gaussian_bias(0.0, 1.0), 6), round(clopper_pearson_lower(100, 100, 1e-3), 6)
(0.398942, 0.933254)
"""

from icml26.core.imports import lazy_api

__getattr__, __dir__, __all__ = lazy_api(__name__, __file__)
