"""Registered reproductions of *Conditional Equivalence of DPO and RLHF* (spec §5).

The paper's evidence at scale (UltraFeedback, 7–8B models) is out of reach here; these toys check
its central theoretical claim from measurement: DPO can converge with a loss below ``log 2`` while
the policy still prefers the dispreferred responses, and CPO's raised target fixes it.

One module per experiment:

- :mod:`.bandit` — ``cpo.bandit`` (A1, A2, A4, A5): tabular free-logit policies; DPO vs smooth
  and clip CPO, the ``α → ∞`` and ``τ → ∞`` limits, baselines, a no-violation control.
- :mod:`.kl_matched` — ``cpo.kl_matched`` (A3): a DPO ``β`` sweep against CPO at matched KL.
- :mod:`.tiny_lm` — ``cpo.tiny_lm`` (§5.2): a tiny causal LM, SFT then DPO vs CPO.

:mod:`.common` holds the paper reference and the table helpers. Importing this package stays
light (``icml26 list``): torch, the method and matplotlib are imported inside the functions.
"""

from icml26.cpo.experiments import (  # noqa: F401  (each module registers its experiment)
    bandit,
    kl_matched,
    tiny_lm,
)
