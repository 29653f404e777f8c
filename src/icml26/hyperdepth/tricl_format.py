"""TriCL's benchmark layout: ``root/name/{features,hypergraph,labels}.pickle`` (spec §5).

HyperDepth (ICML 2026; paper not found) evaluates on the standard hypergraph benchmarks as
distributed with TriCL/AllSet (Cora-CA, DBLP-CA, the co-citation sets, Zoo, 20News, Mushroom,
NTU2012, ModelNet40), which are pickles. They are read by a restricted unpickler
(:mod:`icml26.hyperdepth.safe_pickle`): an allow-list of the exact classes and functions that
rebuild numpy arrays, scipy sparse matrices and builtin containers, so no file can run code.
Sparse matrices are rebuilt from their arrays and fully checked before use, every file's content
is type-checked, and repeated members inside a hyperedge are removed (the files contain a few).
"""

from __future__ import annotations

import numbers
from pathlib import Path
from typing import Any

import numpy as np

from icml26.hyperdepth.data import HypergraphData
from icml26.hyperdepth.hypergraph import Hypergraph
from icml26.hyperdepth.safe_pickle import load_data_pickle

__all__ = ["MAX_TRICL_FEATURE_ENTRIES", "load_tricl_format"]

MAX_TRICL_FEATURE_ENTRIES = 2**27  # n x f of a TriCL feature matrix (DBLP-CA: 41,302 x 1,425)


def _tricl_features(features: Any, file: Path) -> np.ndarray:
    """The dense ``(n, f)`` matrix of ``features.pickle`` (an ndarray or a csr/csc/coo matrix).

    A sparse matrix is rebuilt from its arrays by scipy's constructor and fully checked (indices
    in range, ``indptr`` monotone) before densifying: its pickled state is never trusted.
    """
    import scipy.sparse

    sparse = {scipy.sparse.csr_matrix, scipy.sparse.csc_matrix, scipy.sparse.coo_matrix}
    sparse |= {getattr(scipy.sparse, f"{f}_array") for f in ("csr", "csc", "coo")}
    if type(features) is np.ndarray:
        x = features
    elif type(features) in sparse:
        fmt = type(features).__name__[:3]
        try:
            shape = tuple(int(v) for v in features.shape)
            data = np.asarray(features.data)
            if len(shape) != 2 or min(shape) < 0 or data.dtype.kind not in "biuf":
                raise ValueError(f"a {shape} matrix of dtype {data.dtype}")
            if shape[0] * shape[1] > MAX_TRICL_FEATURE_ENTRIES:
                raise ValueError(f"{shape} has more than {MAX_TRICL_FEATURE_ENTRIES} entries")
            if fmt == "coo":
                index = (np.asarray(features.row), np.asarray(features.col))
                rebuilt = scipy.sparse.coo_matrix((data, index), shape=shape)
            else:
                build = scipy.sparse.csr_matrix if fmt == "csr" else scipy.sparse.csc_matrix
                parts = (data, np.asarray(features.indices), np.asarray(features.indptr))
                rebuilt = build(parts, shape=shape)
                rebuilt.check_format(full_check=True)
            x = rebuilt.toarray()
        except (ValueError, TypeError, AttributeError, IndexError, OverflowError) as err:
            raise ValueError(
                f"load_tricl_format: {file} is not a valid {fmt} matrix: {err}."
            ) from err
    else:
        raise TypeError(
            f"load_tricl_format: {file} must hold a numpy array or a scipy sparse csr/csc/coo "
            f"matrix; got {type(features).__name__}."
        )
    if x.ndim != 2 or x.dtype.kind not in "biuf" or x.size > MAX_TRICL_FEATURE_ENTRIES:
        raise ValueError(
            f"load_tricl_format: {file} must hold a numeric (n, f) matrix of at most "
            f"{MAX_TRICL_FEATURE_ENTRIES} entries; got shape {x.shape}, dtype {x.dtype}."
        )
    return x


def _tricl_edges(edges_raw: Any, file: Path) -> list[list[int]]:
    """Hyperedges of ``hypergraph.pickle`` (a dict hyperedge -> members), repeats removed."""
    if not isinstance(edges_raw, dict):
        raise TypeError(
            f"load_tricl_format: {file} must hold a dict hyperedge -> member list; "
            f"got {type(edges_raw).__name__}."
        )
    edges = []
    for key, members in edges_raw.items():
        if not isinstance(members, list | tuple | set | frozenset | np.ndarray):
            raise TypeError(
                f"load_tricl_format: {file}: hyperedge {key!r} must list its members; "
                f"got {type(members).__name__}."
            )
        values = members.tolist() if isinstance(members, np.ndarray) else members
        if any(isinstance(v, bool) or not isinstance(v, numbers.Integral) for v in values):
            raise TypeError(
                f"load_tricl_format: {file}: hyperedge {key!r} has a member that is not an "
                "integer node id."
            )
        unique = list(dict.fromkeys(int(v) for v in values))
        if unique:
            edges.append(unique)
    return edges


def _tricl_labels(labels: Any, file: Path) -> np.ndarray:
    """Integer labels of ``labels.pickle`` (a list or array; integral floats are accepted)."""
    if not isinstance(labels, list | tuple | np.ndarray):
        raise TypeError(
            f"load_tricl_format: {file} must hold a list or array of labels; "
            f"got {type(labels).__name__}."
        )
    y = np.asarray(labels).ravel()
    integral = y.dtype.kind in "iu" or (
        y.dtype.kind == "f" and bool(np.all(np.isfinite(y))) and bool(np.all(y == np.round(y)))
    )
    if not integral:
        raise ValueError(
            f"load_tricl_format: {file} must hold integer labels; got dtype {y.dtype}."
        )
    return y.astype(np.int64)


def load_tricl_format(root: str | Path, name: str) -> HypergraphData:
    """A benchmark in TriCL's layout: ``root/name/{features,hypergraph,labels}.pickle``.

    ``features.pickle`` holds a (scipy sparse or dense) ``(n, f)`` matrix, ``hypergraph.pickle``
    a dict hyperedge → member list, ``labels.pickle`` a length-``n`` label list (Cora-CA,
    DBLP-CA, the co-citation sets, Zoo, 20News, Mushroom, NTU2012, ModelNet40 as distributed with
    TriCL/AllSet). Repeated members inside a hyperedge are removed; empty hyperedges dropped.

    The files are read by a restricted unpickler (:mod:`icml26.hyperdepth.safe_pickle`): only
    the exact classes and functions that rebuild numpy arrays, scipy sparse csr/csc/coo matrices
    and builtin containers are allowed, so loading a crafted file never runs its code.

    Examples
    --------
    >>> import pickle, tempfile
    >>> from pathlib import Path
    >>> root = Path(tempfile.mkdtemp()); (root / "toy").mkdir()
    >>> files = {"features": np.eye(3), "hypergraph": {"e0": [0, 1], "e1": [1, 2, 2]},
    ...          "labels": [0, 1, 1]}
    >>> for stem, obj in files.items():
    ...     _ = (root / "toy" / f"{stem}.pickle").write_bytes(pickle.dumps(obj))
    >>> load_tricl_format(root, "toy").hypergraph.hyperedges
    ((0, 1), (1, 2))

    Raises
    ------
    FileNotFoundError
        If a file is missing.
    pickle.UnpicklingError
        If a file names anything else (``safe_pickle.UnsafePickleError``, naming the file and the
        refused global) or is not a well-formed pickle.
    TypeError, ValueError
        If a file holds the wrong kind of object (the message names the file).
    """
    owner = "load_tricl_format"
    if not isinstance(root, str | Path):
        raise TypeError(f"{owner}: root must be a folder path (str or Path); got {root!r}.")
    if not isinstance(name, str) or not name:
        raise ValueError(f"{owner}: name must be a dataset folder inside root; got {name!r}.")
    folder = Path(root) / name
    for file in ("features.pickle", "hypergraph.pickle", "labels.pickle"):
        if not (folder / file).is_file():
            raise FileNotFoundError(f"load_tricl_format: {folder / file} does not exist.")
    x = _tricl_features(load_data_pickle(folder / "features.pickle"), folder / "features.pickle")
    edges = _tricl_edges(
        load_data_pickle(folder / "hypergraph.pickle"), folder / "hypergraph.pickle"
    )
    labels = _tricl_labels(load_data_pickle(folder / "labels.pickle"), folder / "labels.pickle")
    hg = Hypergraph(x.shape[0], edges)
    return HypergraphData(x.astype(np.float32), hg, labels, name=name)
