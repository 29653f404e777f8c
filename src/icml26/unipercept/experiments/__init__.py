"""Registered reproductions of UniPercept (spec §5) on PerceptToy with TinyPercept.

One module per experiment:

- :mod:`.main` — E1 ``unipercept.main``: DAPT -> GRPO-AGSR, joint domains; VR SRCC on held-out
  sources, with the 21-feature HistGradientBoosting specialist as the anchor.
- :mod:`.reward_ablation` — E2 ``unipercept.reward_ablation``: GRPO with AGSR vs the threshold
  reward, from a short (1-epoch) and from the full DAPT checkpoint.
- :mod:`.dapt_ablation` — E3 ``unipercept.dapt_ablation``: the full pipeline vs GRPO from
  random weights (no DAPT and, unlike the paper's arm, no pretrained model either).
- :mod:`.joint` — E4 ``unipercept.joint``: one joint model vs single-domain models, and VQA
  accuracy.
- :mod:`.reward_model` — E5 ``unipercept.reward_model``: TinyPercept's ratings as the GRPO reward
  of a small generator.
- :mod:`.vlm` — ``unipercept.vlm`` (issue 44): the tiny InternVL suite (pretrain -> DAPT -> GRPO
  arms, question-blind copy), quick from the shipped suites of seeds 0-2, against issue 44's
  bars.

:mod:`.common` holds the shared config, presets and pipeline steps, and the joint DAPT ->
GRPO-AGSR pipeline that E1, E3 and E4 share (shipped at quick's seed 0, issue 51). The paper's
own figures are for an 8B MLLM on human-rated datasets; the system's headline (E1 M4) is the
paper's margin over the best IQA specialist (+0.057 SRCC) at the paper's own bar, against the
handcrafted specialist. Other thresholds are the spec's or issue 44's small-scale targets
(``source="spec"``), except the claims that carry the direction of a paper comparison
(``source="paper"``: R5, D2, J2, G5). Gates (issue 44) check that the testbed can show each
effect: the IQA labels are learnable (E1 P1), RL moves both reward arms (E2 K1/K2), the no-DAPT
arm learns at all (E3 D0), and the reward model is competent and rates images inside its
training support (E5 Q1–Q3).

Importing this package stays light (``icml26 list``): torch, the method and matplotlib are
imported inside the functions.
"""

from icml26.unipercept.experiments import (  # noqa: F401  (each module registers its experiment)
    dapt_ablation,
    joint,
    main,
    reward_ablation,
    reward_model,
    vlm,
)
