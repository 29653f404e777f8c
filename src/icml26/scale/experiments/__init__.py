"""Registered reproductions of SCALE (spec §5) on a tiny VLA and a procedural task.

- :mod:`~icml26.scale.experiments.cost` (``scale.cost``, S4): forward passes and wall-clock per
  control step of greedy, SCALE and Best-of-N;
- :mod:`~icml26.scale.experiments.ambiguous_reach` (``scale.ambiguous_reach``, S1-S3): SCALE vs
  greedy and fixed decoding on AmbiguousReach2D;
- :mod:`~icml26.scale.experiments.ablations` (``scale.ablations``): other uncertainty measures
  and the instantaneous u driving the vision temperature;
- :mod:`~icml26.scale.experiments.reach_v1` (``scale.reach_v1``, ``scale.reach_v1_ablations``;
  issue 41): three TinyOpenVLA policies on AmbiguousReach2D-v1, where a grip is reversible and
  the gates check that the testbed can show SCALE's effect.

:mod:`~icml26.scale.experiments.common` holds what the two AmbiguousReach2D experiments share.
The paper's numbers are OpenVLA-7B / LIBERO success rates; here a tiny VLA on a procedural task
stands in. The headline S1 (``scale.ambiguous_reach``) holds the paper's own margin (+5.8
points over greedy); the ablation claims carry the paper's ablation figures with a bar a
decoder identical to the compared one fails (``> 0``, paired episodes); the other bars are the
spec's small-scale targets (``source="spec"``). Gates (expert, greedy competence, and SCALE
actually departing from greedy) stand before every decoder comparison. Importing this package
stays light (``icml26 list``): torch, matplotlib and the method are imported inside the
functions.
"""

from icml26.scale.experiments import ablations, ambiguous_reach, cost, reach_v1

__all__ = ["ablations", "ambiguous_reach", "cost", "reach_v1"]
