"""Mechanism metrics of SpineFL's selection (issue 50): is sampling guided, and client-specific?

Two numbers, logged by every run of an activation-guided selector:

- **selection KL**: KL(p || uniform) in nats of the pick distribution p_j ∝ s_j over a layer's
  dynamic portion, averaged over every draw of the run. 0 means the "guided" sampling is
  Federated Dropout; T = 1 on firing frequencies gives ~0.1 nats.
- **overlap**: for every pair of clients of the same width r < 1, the Jaccard index of the
  channels each would be most likely to get (the top k = n_l(r) - b_l of its dynamic scores),
  averaged over layers; then averaged separately over pairs whose label sets are **disjoint** and
  pairs that **share** a label. Client-specific selection reads overlap_shared > overlap_disjoint.
  A client's label set is the classes holding >= ``min_share`` of its samples.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence

import numpy as np

from icml26.core import check_in_interval
from icml26.spinefl.models import sub_width
from icml26.spinefl.selection import SpineSelector

__all__ = ["client_label_sets", "selection_overlap"]


def client_label_sets(labels: Sequence[np.ndarray], min_share: float = 0.1) -> list[frozenset[int]]:
    """The classes holding at least ``min_share`` of each client's samples.

    Examples
    --------
    >>> client_label_sets([np.array([0, 0, 0, 1]), np.array([2] * 9 + [0])], min_share=0.2)
    [frozenset({0, 1}), frozenset({2})]
    """
    min_share = check_in_interval(
        "min_share", min_share, low=0.0, high=1.0, closed="right", owner="client_label_sets"
    )
    out = []
    for y in labels:
        y = np.asarray(y)
        if y.ndim != 1 or y.size == 0 or y.dtype.kind not in "iu":
            raise ValueError("client_label_sets: every client needs a non-empty 1-D label array.")
        counts = np.bincount(y)
        out.append(frozenset(int(k) for k in np.flatnonzero(counts >= min_share * y.size)))
    return out


def selection_overlap(
    selector: SpineSelector,
    sizes: Mapping[str, int],
    ratios: Sequence[float],
    label_sets: Sequence[frozenset[int]],
) -> dict[str, float]:
    """Mean top-k Jaccard of same-width client pairs with disjoint vs shared label sets.

    Returns ``overlap_disjoint``, ``overlap_shared`` (NaN where no such pair exists), the pair
    counts ``pairs_disjoint``, ``pairs_shared`` and ``specificity_per_client``: for every client
    with both kinds of partner, its mean overlap with label-sharing partners minus its mean
    overlap with disjoint ones (a paired, per-client measure of client-specific selection).
    """
    if not isinstance(selector, SpineSelector):
        raise TypeError("selection_overlap: selector must be a SpineSelector.")
    if len(ratios) != len(label_sets):
        raise ValueError("selection_overlap: one label set per client (ratios) is needed.")

    def top(c: int, layer: str, N: int, n: int) -> set[int]:
        dynamic, log_p = selector.log_probabilities(c, layer, N, n)
        k = n - (N - dynamic.size)
        return set(dynamic[np.argsort(-log_p, kind="stable")[:k]].tolist())

    groups: dict[str, list[float]] = {"disjoint": [], "shared": []}
    per_client: dict[int, dict[str, list[float]]] = {}
    for a, b in itertools.combinations(range(len(ratios)), 2):
        if ratios[a] != ratios[b] or ratios[a] >= 1.0:
            continue
        jaccards = []
        for layer, N in sizes.items():
            n = sub_width(N, ratios[a])
            sa, sb = top(a, layer, N, n), top(b, layer, N, n)
            if sa or sb:
                jaccards.append(len(sa & sb) / len(sa | sb))
        if jaccards:
            key = "shared" if label_sets[a] & label_sets[b] else "disjoint"
            groups[key].append(float(np.mean(jaccards)))
            for c in (a, b):
                per_client.setdefault(c, {"disjoint": [], "shared": []})[key].append(
                    groups[key][-1]
                )
    specificity = [
        float(np.mean(v["shared"]) - np.mean(v["disjoint"]))
        for _, v in sorted(per_client.items())
        if v["shared"] and v["disjoint"]
    ]
    return {
        **{f"overlap_{k}": float(np.mean(v)) if v else float("nan") for k, v in groups.items()},
        **{f"pairs_{k}": float(len(v)) for k, v in groups.items()},
        "specificity_per_client": specificity,
    }
