"""Evaluation: linear probe, alignment/uniformity, Semantic Flattening Index, hierarchy scores.

HyperDepth (ICML 2026; paper not found). Protocol of spec §2.7 (TriCL/HypeBoy convention):
logistic regression on frozen embeddings over 20 random 10/10/80 splits with ``C`` chosen on the
validation split; on L2-normalised embeddings ``ẑ``:

- uniformity ``U = log mean_{i≠j} exp(−t ‖ẑ_i − ẑ_j‖²)`` (Wang & Isola 2020, ``t = 2``);
- alignment ``A = mean_i ‖ẑ1_i − ẑ2_i‖^α``;
- SFI ``= d_sib / d_cous``: mean distance of same-coarse/different-fine pairs over the mean
  distance of different-coarse pairs (flattened → 1, hierarchy kept → < 1);
- centroid SFI: the same ratio on the fine classes' mean embeddings (issue 45), which is not
  dominated by within-class spread as the pairwise SFI is;
- dendrogram purity (Heller & Ghahramani 2005) of Ward clustering w.r.t. the labels;
- k-means NMI at a label level.

Deviations: dendrogram purity is computed exactly over all same-label pairs (each merge of
clusters ``A``, ``B`` contributes ``Σ_c |A_c||B_c| · |(A∪B)_c| / |A∪B|``) instead of from 5,000
sampled pairs; features are standardised on the training split before the probe; uniformity and
SFI use all pairs up to ``max_nodes = 2000`` nodes and a seeded node subsample beyond.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from icml26.core import check_array, check_in_interval, check_positive_int, numpy_generator
from icml26.core.validation import Seed

__all__ = [
    "alignment",
    "centroid_sfi",
    "dendrogram_purity",
    "evaluate_embedding",
    "kmeans_nmi",
    "linear_probe",
    "probe_splits",
    "semantic_flattening_index",
    "uniformity",
]

MAX_SPLIT_NODES = 10**8  # probe_splits: nodes (one permutation of n per split)
MAX_SPLITS = 10**4


def _normalise(z: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(z, axis=1, keepdims=True)
    return z / np.where(norms > 0, norms, 1.0)


def _embedding(z: Any, owner: str) -> np.ndarray:
    return check_array("z", z, owner=owner, ndim=2)


def _labels(name: str, y: Any, n: int, owner: str) -> np.ndarray:
    labels = np.asarray(y)
    if labels.ndim != 1 or labels.shape[0] != n:
        raise ValueError(
            f"{owner}: {name} must have one label per row of z ({n}); got shape {labels.shape}."
        )
    return labels


def _subsample(n: int, max_nodes: int, seed: Seed) -> np.ndarray:
    if n <= max_nodes:
        return np.arange(n)
    return np.sort(numpy_generator(seed).choice(n, max_nodes, replace=False))


def _pairwise_distances(z: np.ndarray) -> np.ndarray:
    sq = (z * z).sum(1)
    return np.sqrt(np.clip(sq[:, None] + sq[None] - 2 * z @ z.T, 0.0, None))


def uniformity(z: Any, t: float = 2.0, *, max_nodes: int = 2000, seed: Seed = 0) -> float:
    """``log mean_{i≠j} exp(−t ‖ẑ_i − ẑ_j‖²)`` on L2-normalised rows (lower = more uniform).

    Examples
    --------
    >>> uniformity([[1.0, 0.0], [-1.0, 0.0]])  # antipodal: log e^{−2·4}
    -8.0
    """
    owner = "uniformity"
    z = _embedding(z, owner)
    t = check_in_interval("t", t, low=0.0, closed="neither", owner=owner)
    if z.shape[0] < 2:
        raise ValueError(f"{owner}: z needs at least 2 rows; got {z.shape[0]}.")
    zn = _normalise(z[_subsample(z.shape[0], max_nodes, seed)])
    d2 = _pairwise_distances(zn) ** 2
    iu = np.triu_indices(zn.shape[0], k=1)
    values = -t * d2[iu]
    # log-mean-exp, stable
    top = values.max()
    return float(top + np.log(np.mean(np.exp(values - top))))


def alignment(z1: Any, z2: Any, alpha: float = 2.0) -> float:
    """``mean_i ‖ẑ1_i − ẑ2_i‖^α`` between two views' L2-normalised embeddings."""
    z1 = check_array("z1", z1, owner="alignment", ndim=2)
    z2 = check_array("z2", z2, owner="alignment", shape=z1.shape)
    alpha = check_in_interval("alpha", alpha, low=0.0, closed="neither", owner="alignment")
    if z1.shape[0] == 0:
        raise ValueError("alignment: z1 and z2 have no rows; the mean is over nodes.")
    return float(np.mean(np.linalg.norm(_normalise(z1) - _normalise(z2), axis=1) ** alpha))


def semantic_flattening_index(
    z: Any, y_fine: Any, y_coarse: Any, *, max_nodes: int = 2000, seed: Seed = 0
) -> float:
    """SFI ``= d_sib / d_cous`` on L2-normalised embeddings (spec §2.7).

    ``d_sib``: mean ``‖ẑ_i − ẑ_j‖`` over pairs with the same coarse and different fine label;
    ``d_cous``: over pairs with different coarse labels.

    Raises
    ------
    ValueError
        If there are no sibling pairs or no cousin pairs, or a label array has the wrong length.
    """
    owner = "semantic_flattening_index"
    z = _embedding(z, owner)
    fine = _labels("y_fine", y_fine, z.shape[0], owner)
    coarse = _labels("y_coarse", y_coarse, z.shape[0], owner)
    keep = _subsample(z.shape[0], max_nodes, seed)
    zn, fine, coarse = _normalise(z[keep]), fine[keep], coarse[keep]
    dist = _pairwise_distances(zn)
    iu = np.triu_indices(zn.shape[0], k=1)
    same_coarse = coarse[iu[0]] == coarse[iu[1]]
    same_fine = fine[iu[0]] == fine[iu[1]]
    sibling = same_coarse & ~same_fine
    cousin = ~same_coarse
    if not sibling.any() or not cousin.any():
        raise ValueError(
            f"{owner}: needs sibling pairs (same coarse, different fine label) and cousin pairs "
            f"(different coarse labels); got {int(sibling.sum())} and {int(cousin.sum())}."
        )
    d = dist[iu]
    return float(d[sibling].mean() / d[cousin].mean())


def centroid_sfi(z: Any, y_fine: Any, y_coarse: Any) -> float:
    """SFI on class means: ``d_sib / d_cous`` between the fine classes' centroids (issue 45).

    Rows are L2-normalised, each fine class is replaced by its mean ``μ_f``; ``d_sib`` is the
    mean ``‖μ_f − μ_g‖`` over fine-class pairs with the same coarse label, ``d_cous`` over pairs
    with different coarse labels. Unlike the pairwise SFI it does not count within-class spread,
    so noise around well-separated class means does not read as flattening. A fine class must
    sit under one coarse label.

    Examples
    --------
    >>> z = [[1.0, 0.1], [1.0, -0.1], [-1.0, 0.1], [-1.0, -0.1]]
    >>> round(centroid_sfi(z, [0, 1, 2, 3], [0, 0, 1, 1]), 3)  # siblings close: hierarchy kept
    0.1

    Raises
    ------
    ValueError
        If there are no sibling or no cousin class pairs, a fine class spans two coarse labels,
        or a label array has the wrong length.
    """
    owner = "centroid_sfi"
    z = _normalise(_embedding(z, owner))
    fine = _labels("y_fine", y_fine, z.shape[0], owner)
    coarse = _labels("y_coarse", y_coarse, z.shape[0], owner)
    classes = np.unique(fine)
    parents = []
    for c in classes:
        parent = np.unique(coarse[fine == c])
        if parent.size != 1:
            raise ValueError(
                f"{owner}: every fine class must sit under one coarse label; fine class {c!r} "
                f"has {parent.size}."
            )
        parents.append(parent[0])
    parents_arr = np.asarray(parents)
    means = np.stack([z[fine == c].mean(axis=0) for c in classes])
    dist = _pairwise_distances(means)
    iu = np.triu_indices(len(classes), k=1)
    same = parents_arr[iu[0]] == parents_arr[iu[1]]
    if not same.any() or same.all():
        raise ValueError(
            f"{owner}: needs fine classes that share a coarse label and fine classes that do not; "
            f"got {int(same.sum())} sibling and {int((~same).sum())} cousin class pairs."
        )
    d = dist[iu]
    return float(d[same].mean() / d[~same].mean())


def dendrogram_purity(z: Any, y: Any, *, method: str = "ward") -> float:
    """Dendrogram purity of an agglomerative clustering of ``ẑ`` w.r.t. labels ``y`` (exact).

    The mean, over all pairs of points with the same label ``c``, of the fraction of label
    ``c`` in the smallest cluster containing both.

    Raises
    ------
    ValueError
        If no two points share a label, or ``y`` has the wrong length.

    Examples
    --------
    >>> z = [[0.0, 1.0], [0.1, 1.0], [1.0, 0.0], [1.0, 0.1]]
    >>> dendrogram_purity(z, [0, 0, 1, 1])
    1.0
    """
    from scipy.cluster.hierarchy import linkage

    owner = "dendrogram_purity"
    z = _embedding(z, owner)
    labels = _labels("y", y, z.shape[0], owner)
    _, codes = np.unique(labels, return_inverse=True)
    n, n_labels = z.shape[0], int(codes.max()) + 1
    pairs_per_label = np.bincount(codes, minlength=n_labels)
    total_pairs = float((pairs_per_label * (pairs_per_label - 1) / 2).sum())
    if total_pairs == 0:
        raise ValueError(f"{owner}: needs at least two points with the same label.")
    merges = linkage(_normalise(z), method=method)
    counts = np.zeros((2 * n - 1, n_labels))
    counts[np.arange(n), codes] = 1.0
    purity_sum = 0.0
    for step, (a, b, _, size) in enumerate(merges):
        left, right = counts[int(a)], counts[int(b)]
        merged = left + right
        counts[n + step] = merged
        # Pairs of label c whose smallest common cluster is this merge: |A_c| |B_c|.
        purity_sum += float((left * right * merged / size).sum())
    return purity_sum / total_pairs


def kmeans_nmi(z: Any, y: Any, k: int | None = None, *, seed: Seed = 0) -> float:
    """NMI between k-means clusters of ``ẑ`` (``k`` = number of labels by default) and ``y``."""
    from sklearn.cluster import KMeans
    from sklearn.metrics import normalized_mutual_info_score

    owner = "kmeans_nmi"
    z = _embedding(z, owner)
    labels = _labels("y", y, z.shape[0], owner)
    k = len(np.unique(labels)) if k is None else check_positive_int("k", k, owner=owner)
    if k > z.shape[0]:
        raise ValueError(f"{owner}: k must be <= number of points ({z.shape[0]}); got {k}.")
    rs = int(numpy_generator(seed).integers(2**31 - 1))
    clusters = KMeans(n_clusters=k, n_init=10, random_state=rs).fit_predict(_normalise(z))
    return float(normalized_mutual_info_score(labels, clusters))


def probe_splits(
    n: int,
    n_splits: int = 20,
    train_ratio: float = 0.1,
    val_ratio: float = 0.1,
    seed: Seed = 0,
) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Random disjoint ``(train, val, test)`` index splits of sizes ``round(n·r)`` and the rest.

    Raises
    ------
    ValueError
        If a ratio is outside ``(0, 1)``, they sum to ``>= 1``, a split would be empty, ``n``
        exceeds ``MAX_SPLIT_NODES`` (10^8) or ``n_splits`` exceeds ``MAX_SPLITS`` (10^4).
    """
    owner = "probe_splits"
    n = check_positive_int("n", n, owner=owner, maximum=MAX_SPLIT_NODES)
    n_splits = check_positive_int("n_splits", n_splits, owner=owner, maximum=MAX_SPLITS)
    train_ratio = check_in_interval(
        "train_ratio", train_ratio, low=0.0, high=1.0, closed="neither", owner=owner
    )
    val_ratio = check_in_interval(
        "val_ratio", val_ratio, low=0.0, high=1.0, closed="neither", owner=owner
    )
    if train_ratio + val_ratio >= 1:
        raise ValueError(
            f"{owner}: train_ratio + val_ratio must be < 1; got {train_ratio} + {val_ratio}."
        )
    n_train, n_val = round(n * train_ratio), round(n * val_ratio)
    if min(n_train, n_val, n - n_train - n_val) < 1:
        raise ValueError(f"{owner}: n = {n} is too small for non-empty train/val/test splits.")
    rng = numpy_generator(seed)
    splits = []
    for _ in range(n_splits):
        order = rng.permutation(n)
        splits.append((order[:n_train], order[n_train : n_train + n_val], order[n_train + n_val :]))
    return splits


def linear_probe(
    emb: Any,
    y: Any,
    n_splits: int = 20,
    train_ratio: float = 0.1,
    val_ratio: float = 0.1,
    seed: Seed = 0,
    *,
    Cs: tuple[float, ...] = (0.01, 0.1, 1.0, 10.0),
) -> dict[str, Any]:
    """Logistic-regression probe on frozen embeddings over random splits (spec §2.7).

    For each split, standardise on the training nodes, fit an L2 logistic regression for every
    ``C`` in ``Cs``, keep the one best on validation, and score it on test.

    Returns
    -------
    dict
        ``mean`` and ``std`` test accuracy, per-split ``accuracies`` and chosen ``C``, and
        ``val_mean``: the mean validation accuracy of the chosen ``C`` (for model selection
        that never reads the test split).

    Examples
    --------
    >>> y = np.arange(60) % 3
    >>> linear_probe(np.eye(3)[y], y, n_splits=2, train_ratio=0.3, val_ratio=0.2)["mean"]
    1.0
    """
    from sklearn.linear_model import LogisticRegression
    from sklearn.preprocessing import StandardScaler

    owner = "linear_probe"
    Cs = tuple(Cs) if isinstance(Cs, list | tuple) else Cs
    if not isinstance(Cs, tuple) or not Cs:
        raise ValueError(f"linear_probe: Cs must be a non-empty sequence of C values; got {Cs!r}.")
    for C in Cs:
        check_in_interval("Cs", C, low=0.0, closed="neither", owner=owner)
    emb = check_array("emb", emb, owner=owner, ndim=2)
    labels = _labels("y", y, emb.shape[0], owner)
    accuracies, chosen, validation = [], [], []
    for train, val, test in probe_splits(emb.shape[0], n_splits, train_ratio, val_ratio, seed):
        scaler = StandardScaler().fit(emb[train])
        xtr, xva, xte = (scaler.transform(emb[s]) for s in (train, val, test))
        best = (-1.0, Cs[0], None)
        if len(np.unique(labels[train])) < 2:
            accuracies.append(float(np.mean(labels[test] == labels[train][0])))
            validation.append(float(np.mean(labels[val] == labels[train][0])))
            chosen.append(float("nan"))
            continue
        for C in Cs:
            model = LogisticRegression(C=C, max_iter=1000).fit(xtr, labels[train])
            score = _accuracy(model, xva, labels[val])
            if score > best[0]:
                best = (score, C, model)
        accuracies.append(_accuracy(best[2], xte, labels[test]))
        validation.append(best[0])
        chosen.append(float(best[1]))
    acc = np.array(accuracies)
    return {
        "mean": float(acc.mean()),
        "std": float(acc.std()),
        "accuracies": accuracies,
        "C": chosen,
        "val_mean": float(np.mean(validation)),
    }


def _accuracy(model: Any, x: np.ndarray, y: np.ndarray) -> float:
    """``model.score(x, y)`` of a fitted ``LogisticRegression`` on standardised float64 ``x``.

    The same decision function ``x @ coef_.T + intercept_`` and prediction rule as sklearn's
    ``predict``, so the same number, without sklearn's input checks on each of the probe's
    ~10 scores per split (issue 51: ~10 % of a quick task's probe time).
    """
    scores = x @ model.coef_.T + model.intercept_  # (n, classes), or (n, 1) for two classes
    index = scores[:, 0] > 0 if scores.shape[1] == 1 else scores.argmax(axis=1)
    return float(np.mean(model.classes_[index.astype(np.intp)] == y))


def evaluate_embedding(
    z: Any,
    y: Any,
    y_coarse: Any | None = None,
    *,
    n_splits: int = 20,
    seed: Seed = 0,
) -> dict[str, float]:
    """Every metric of spec §2.7 for one embedding: probes, uniformity and, with coarse labels,
    SFI, dendrogram purity and k-means NMI at both levels.

    Returns
    -------
    dict
        ``fine_acc``, ``fine_acc_std``, ``fine_val_acc`` (the probe's validation accuracy, for
        model selection), ``uniformity``, ``nmi_fine`` and, when ``y_coarse`` is
        given, ``coarse_acc``, ``sfi``, ``centroid_sfi``, ``dp``, ``nmi_coarse``.
    """
    owner = "evaluate_embedding"
    z = _embedding(z, owner)
    y = _labels("y", y, z.shape[0], owner)
    if y_coarse is not None:
        y_coarse = _labels("y_coarse", y_coarse, z.shape[0], owner)
    n_splits = check_positive_int("n_splits", n_splits, owner=owner, maximum=10**4)
    rng = numpy_generator(seed)
    seeds = [int(s) for s in rng.integers(2**31 - 1, size=4)]
    fine = linear_probe(z, y, n_splits=n_splits, seed=seeds[0])
    out = {
        "fine_acc": fine["mean"],
        "fine_acc_std": fine["std"],
        "fine_val_acc": fine["val_mean"],
        "uniformity": uniformity(z, seed=seeds[1]),
        "nmi_fine": kmeans_nmi(z, y, seed=seeds[2]),
    }
    if y_coarse is not None:
        out["coarse_acc"] = linear_probe(z, y_coarse, n_splits=n_splits, seed=seeds[0])["mean"]
        out["sfi"] = semantic_flattening_index(z, y, y_coarse, seed=seeds[1])
        out["centroid_sfi"] = centroid_sfi(z, y, y_coarse)
        out["dp"] = dendrogram_purity(z, y)
        out["nmi_coarse"] = kmeans_nmi(z, y_coarse, seed=seeds[3])
    return out
