"""Registered reproductions of UniPercept (spec §5) on PerceptToy with TinyPercept.

One module per experiment:

- :mod:`.main` — E1 ``unipercept.main``: DAPT -> GRPO-AGSR, joint domains; VR SRCC on held-out
  sources, with the handcrafted Laplacian/noise/blockiness + ridge specialist as the anchor.
- :mod:`.reward_ablation` — E2 ``unipercept.reward_ablation``: GRPO with AGSR vs the threshold
  reward, from a short (1-epoch) and from the full DAPT checkpoint.
- :mod:`.dapt_ablation` — E3 ``unipercept.dapt_ablation``: the full pipeline vs GRPO from
  scratch (no DAPT).
- :mod:`.joint` — E4 ``unipercept.joint``: one joint model vs single-domain models, and VQA
  accuracy.
- :mod:`.reward_model` — E5 ``unipercept.reward_model``: TinyPercept's ratings as the GRPO reward
  of a small generator.

:mod:`.common` holds the shared config, presets and pipeline steps. The paper's own figures are
for an 8B MLLM on human-rated datasets and cannot be measured here; every threshold is the spec's
own small-scale target (``source="spec"``), except the claims that carry the direction of a paper
comparison (``source="paper"``: M4, R5, D2, J2, G5).

Importing this package stays light (``icml26 list``): torch, the method and matplotlib are
imported inside the functions.
"""

from icml26.unipercept.experiments import (  # noqa: F401  (each module registers its experiment)
    dapt_ablation,
    joint,
    main,
    reward_ablation,
    reward_model,
)
