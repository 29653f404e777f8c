"""Spec §7 items 9 and 12: metric values on constructed embeddings, the probe protocol."""

import itertools

import numpy as np
import pytest
from scipy.cluster.hierarchy import linkage, to_tree

from icml26.hyperdepth import (
    alignment,
    dendrogram_purity,
    kmeans_nmi,
    linear_probe,
    probe_splits,
    semantic_flattening_index,
    uniformity,
)


def hierarchical_embedding(noise=0.01, seed=0):
    rng = np.random.default_rng(seed)
    coarse_centres = 3.0 * np.eye(4, 8)  # far apart
    z, y_fine, y_coarse = [], [], []
    for c in range(4):
        for f in range(3):
            centre = coarse_centres[c] + 0.3 * rng.standard_normal(8)  # near siblings
            z.append(centre + noise * rng.standard_normal((20, 8)))
            y_fine += [3 * c + f] * 20
            y_coarse += [c] * 20
    return np.concatenate(z), np.array(y_fine), np.array(y_coarse)


def test_hierarchical_embedding_scores():
    z, y_fine, y_coarse = hierarchical_embedding()
    assert semantic_flattening_index(z, y_fine, y_coarse) < 0.6
    assert dendrogram_purity(z, y_fine) > 0.99
    assert kmeans_nmi(z, y_coarse, seed=0) > 0.99


def test_isotropic_embedding_is_flattened():
    rng = np.random.default_rng(1)
    z = rng.standard_normal((1200, 16))
    y_fine = np.repeat(np.arange(12), 100)
    sfi = semantic_flattening_index(z, y_fine, y_fine // 3)
    assert abs(sfi - 1.0) < 0.05


def test_uniformity_closed_forms():
    assert uniformity([[1.0, 0.0], [-1.0, 0.0]]) == pytest.approx(-8.0, abs=1e-12)
    assert uniformity([[1.0, 0.0], [2.0, 0.0]]) == pytest.approx(0.0, abs=1e-12)  # one point
    # Square: distances² 2, 2, 4 for each vertex's pairs -> log mean(e^-4, e^-4, e^-8).
    square = [[1, 0], [0, 1], [-1, 0], [0, -1]]
    expected = np.log(np.mean([np.exp(-4)] * 4 + [np.exp(-8)] * 2))
    assert uniformity(square) == pytest.approx(expected, abs=1e-12)


def test_alignment_closed_form():
    z1 = np.array([[1.0, 0.0], [0.0, 2.0]])
    z2 = np.array([[0.0, 1.0], [0.0, 5.0]])
    assert alignment(z1, z2) == pytest.approx(1.0)  # (2 + 0) / 2


def brute_force_dendrogram_purity(z, y):
    root = to_tree(linkage(z / np.linalg.norm(z, axis=1, keepdims=True), "ward"))
    leaves_of = {}

    def collect(node):
        leaves = [node.id] if node.is_leaf() else collect(node.left) + collect(node.right)
        leaves_of[node.id] = set(leaves)
        return leaves

    collect(root)
    scores = []
    for i, j in itertools.combinations(range(len(y)), 2):
        if y[i] != y[j]:
            continue
        smallest = min((s for s in leaves_of.values() if i in s and j in s), key=len)
        scores.append(np.mean([y[k] == y[i] for k in smallest]))
    return float(np.mean(scores))


def test_dendrogram_purity_matches_pair_enumeration():
    rng = np.random.default_rng(2)
    z = rng.standard_normal((40, 3))
    y = rng.integers(0, 4, 40)
    assert dendrogram_purity(z, y) == pytest.approx(brute_force_dendrogram_purity(z, y), abs=1e-12)


def test_probe_splits_protocol():
    splits = probe_splits(500, n_splits=20, seed=3)
    assert len(splits) == 20
    for train, val, test in splits:
        assert (len(train), len(val), len(test)) == (50, 50, 400)
        assert len(set(train) | set(val) | set(test)) == 500  # disjoint and covering
    again = probe_splits(500, n_splits=20, seed=3)
    assert all(np.array_equal(a[0], b[0]) for a, b in zip(splits, again, strict=True))
    assert not np.array_equal(splits[0][0], splits[1][0])


def test_probe_on_one_hot_labels_is_perfect():
    y = np.arange(300) % 5
    result = linear_probe(np.eye(5)[y], y, n_splits=5, seed=0)
    assert result["mean"] == 1.0 and len(result["accuracies"]) == 5


@pytest.mark.parametrize("n_classes", [2, 5])
def test_probe_scores_as_sklearn_does(n_classes):
    """Issue 51: the probe's accuracy is LogisticRegression.score's number, bit for bit, and
    linear_probe equals the straightforward loop over splits and C that calls score."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.preprocessing import StandardScaler

    from icml26.hyperdepth.metrics import _accuracy

    rng = np.random.default_rng(n_classes)
    y = np.arange(150) % n_classes
    z = rng.standard_normal((150, 6)) + 0.8 * y[:, None]
    for C in (0.01, 1.0):
        model = LogisticRegression(C=C, max_iter=1000).fit(z[:50], y[:50])
        assert _accuracy(model, z[50:], y[50:]) == model.score(z[50:], y[50:])
    out = linear_probe(z, y, n_splits=3, seed=4)
    expected, chosen = [], []
    for train, val, test in probe_splits(150, 3, seed=4):
        scaler = StandardScaler().fit(z[train])
        xtr, xva, xte = (scaler.transform(z[s]) for s in (train, val, test))
        fits = [
            LogisticRegression(C=C, max_iter=1000).fit(xtr, y[train]) for C in (0.01, 0.1, 1, 10)
        ]
        scores = [m.score(xva, y[val]) for m in fits]
        best = int(np.argmax(scores))  # the first best C, as the probe keeps
        expected.append(fits[best].score(xte, y[test]))
        chosen.append((0.01, 0.1, 1.0, 10.0)[best])
    assert out["accuracies"] == expected and out["C"] == chosen
