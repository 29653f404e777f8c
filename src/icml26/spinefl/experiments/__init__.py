"""Registered reproductions of spinefl (spec §5), one module per experiment:

- ``synthetic`` (quick): SpineFL against the width-heterogeneous baselines on the synthetic task;
- ``main`` (full): the spec §5.4 gates over tasks, alphas and methods;
- ``fashion_mnist`` (full): the same comparison on Fashion-MNIST.

The paper's full text was not found: its only figure is the abstract's "up to +3.28 %" over
state-of-the-art heterogeneous FL methods at real scale, judged at that bar by the headline claim
``spinefl.main:H``; every other threshold is the spec's own small-scale target. Comparisons are
lists of paired per-seed differences (a verdict needs >= 3 seeds).
"""

from icml26.spinefl.experiments import fashion_mnist, main, synthetic

__all__ = ["fashion_mnist", "main", "synthetic"]
