"""Registered reproductions of SCALE (spec §5) on a tiny VLA and a procedural task.

- :mod:`~icml26.scale.experiments.cost` (``scale.cost``, S4): forward passes and wall-clock per
  control step of greedy, SCALE and Best-of-N;
- :mod:`~icml26.scale.experiments.ambiguous_reach` (``scale.ambiguous_reach``, S1-S3): SCALE vs
  greedy and fixed decoding on AmbiguousReach2D;
- :mod:`~icml26.scale.experiments.ablations` (``scale.ablations``): other uncertainty measures
  and the instantaneous u driving the vision temperature.

:mod:`~icml26.scale.experiments.common` holds what the two AmbiguousReach2D experiments share.
The paper's numbers are OpenVLA-7B / LIBERO success rates; here a tiny VLA on a procedural task
stands in, so every threshold is the spec's own small-scale target (``source="spec"``) and the
paper's figure is shown beside it. Importing this package stays light (``icml26 list``): torch,
matplotlib and the method are imported inside the functions.
"""

from icml26.scale.experiments import ablations, ambiguous_reach, cost

__all__ = ["ablations", "ambiguous_reach", "cost"]
