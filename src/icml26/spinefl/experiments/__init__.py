"""Registered reproductions of spinefl (spec §5), one module per experiment:

- ``synthetic`` (quick): SpineFL against the width-heterogeneous baselines on the synthetic task;
- ``main`` (full): the spec §5.4 gates over tasks, alphas and methods;
- ``fashion_mnist`` (full): the same comparison on Fashion-MNIST (MLP);
- ``fmnist_conv``: the channel-sliced conv testbed of issue 50 (quick: shipped seed-0 models).

The paper's full text was not found: its only figure is the abstract's "up to +3.28 %" over
state-of-the-art heterogeneous FL methods at real scale, judged by the headline claim
``spinefl.fmnist_conv:KH`` (bar +1.0 pt, issue 50); every other threshold is the spec's own
small-scale target. Comparisons are
lists of paired per-seed differences (a verdict needs >= 3 seeds).
"""

from icml26.spinefl.experiments import fashion_mnist, fmnist_conv, main, synthetic

__all__ = ["fashion_mnist", "fmnist_conv", "main", "synthetic"]
