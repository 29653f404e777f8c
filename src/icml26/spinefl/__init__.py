"""SpineFL: heterogeneous FL with a shared backbone and activation-guided sub-model sampling.

*Required Spine Optional Limbs: Heterogeneous Federated Learning via Backbone-sharing and
Activation-guided Selection*, ICML 2026 (no arXiv id found; only the abstract was available).
Every prunable layer is split into a mandatory backbone shared by all sub-models and a dynamic
portion from which each client's remaining neurons are sampled with probability increasing in
their historical activation frequency. Built as a library: sliceable models, selectors (SpineFL
and the HeteroFL / Federated Dropout / FedRolex / FjORD-lite / FIARSE-lite baselines),
count-based aggregation, an in-process simulation and a Flower strategy.

The backbone size rule, the history EMA, Gumbel-top-k sampling and the aggregation are the
project spec's inferred design on HeteroFL/FedRolex conventions; see docs/spinefl.md,
"Deviations".
"""

from icml26.core.imports import lazy_api

__getattr__, __dir__, __all__ = lazy_api(__name__, __file__)
