"""Registered reproductions of *Harnessing non-adversarial robustness in LLMs* (spec §5).

The paper gives no retrievable numbers: every reference figure is the spec author's own
small-scale target (``source="spec"``); checks that hold by construction are ``sanity`` checks.
Experiments that average over seeds (toy, certify, minilm) run their ``n_seeds`` inside one task,
because the spec states its gates on the mean *and* on every seed.

One module per experiment:

- :mod:`.closed_forms` — ``debias.closed_forms`` (Q1): ReLU/Gaussian bias vs Monte Carlo, linear
  zero bias, the decomposition identity, algorithm A on a ReLU net.
- :mod:`.toy` — ``debias.toy`` (D1-D3, D5): bias-only / output-only / full fine-tuning of a toy
  intent classifier per perturbation regime.
- :mod:`.certify` — ``debias.certify`` (D4): certified accuracy before and after debiasing.
- :mod:`.minilm` — ``debias.minilm`` (§5.2, exploratory): in-encoder BitFit vs head-level
  bias-only debiasing of all-MiniLM-L6-v2.

:mod:`.common` holds the paper reference, the resources and the profile-table rows;
:mod:`.minilm_setup` the steps ``debias.minilm`` shares with its shipped BitFit stand-in
(``icml26.debias.standins``). Importing
this package stays light (``icml26 list``): torch, transformers, the method and matplotlib are
imported inside the functions.
"""

from icml26.debias.experiments import (  # noqa: F401  (each module registers its experiment)
    certify,
    closed_forms,
    minilm,
    toy,
)
