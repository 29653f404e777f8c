"""Edge decisions on a p-value matrix: Benjamini–Hochberg FDR and PLaCy's cycle breaking."""

from __future__ import annotations

import itertools

import numpy as np

from icml26.core import check_array, check_in_interval

__all__ = ["benjamini_hochberg", "find_cycle", "is_dag", "make_acyclic"]


def benjamini_hochberg(pvalues: object, alpha: float = 0.05) -> np.ndarray:
    """Rejections of the Benjamini–Hochberg step-up procedure at FDR level ``alpha``.

    With the m finite p-values sorted, p_(1) <= ... <= p_(m), every hypothesis with
    p <= p_(k*) is rejected, where k* = max{k : p_(k) <= k α / m}. NaN entries are not tested:
    they are left out of m and never rejected.

    Parameters
    ----------
    pvalues
        Array of p-values in [0, 1] (any shape; NaN allowed).
    alpha
        FDR level in (0, 1).

    Returns
    -------
    numpy.ndarray
        Boolean mask of the rejected hypotheses, the shape of ``pvalues``.

    Raises
    ------
    ValueError
        If ``alpha`` is outside (0, 1) or a p-value is outside [0, 1].

    Examples
    --------
    >>> benjamini_hochberg([0.001, 0.02, 0.03, 0.5], alpha=0.05).tolist()
    [True, True, True, False]
    """
    alpha = check_in_interval("alpha", alpha, low=0.0, high=1.0, closed="neither",
                              owner="benjamini_hochberg")  # fmt: skip
    p = check_array("pvalues", pvalues, owner="benjamini_hochberg", finite=False)  # NaN: untested
    tested = ~np.isnan(p)
    if np.any((p[tested] < 0) | (p[tested] > 1)):
        raise ValueError(
            "benjamini_hochberg: pvalues must be in [0, 1] (or NaN); got values outside."
        )
    finite = np.sort(p[tested])
    m = finite.size
    passed = np.nonzero(finite <= alpha * np.arange(1, m + 1) / max(m, 1))[0]
    if passed.size == 0:
        return np.zeros(p.shape, dtype=bool)
    return tested & (p <= finite[passed[-1]])


def check_adjacency(name: str, adjacency: object, *, owner: str) -> np.ndarray:
    """``adjacency`` as a boolean (N, N) edge mask (nonzero entries are edges).

    Raises
    ------
    TypeError
        If it is not numeric.
    ValueError
        If it is not a finite square 2-D array.

    Examples
    --------
    >>> check_adjacency("A", [[0, 2], [0, 0]], owner="demo").tolist()
    [[False, True], [False, False]]
    """
    A = check_array(name, adjacency, owner=owner, dtype=np.float64)
    if A.ndim != 2 or A.shape[0] != A.shape[1]:
        raise ValueError(f"{owner}: {name} must be a square 2-D array; got shape {A.shape}.")
    return A != 0


def find_cycle(adjacency: np.ndarray) -> list[tuple[int, int]] | None:
    """A directed cycle of ``adjacency`` (A[j, i] = 1 means j → i) as its edges, or None.

    Depth-first search from node 0, 1, ... in index order, successors in index order.

    Raises
    ------
    TypeError, ValueError
        If ``adjacency`` is not a finite square numeric array.

    Examples
    --------
    >>> import numpy as np
    >>> find_cycle(np.array([[0, 1, 0], [0, 0, 1], [1, 0, 0]]))
    [(0, 1), (1, 2), (2, 0)]
    """
    A = check_adjacency("adjacency", adjacency, owner="find_cycle")
    return _find_cycle(A)


def _find_cycle(A: np.ndarray) -> list[tuple[int, int]] | None:
    n = A.shape[0]
    state = np.zeros(n, dtype=int)  # 0 unvisited, 1 on the stack, 2 done
    for root in range(n):
        if state[root]:
            continue
        path = [root]
        successors = [iter(np.nonzero(A[root])[0])]
        state[root] = 1
        while path:
            child = next(successors[-1], None)
            if child is None:
                state[path.pop()] = 2
                successors.pop()
            elif state[child] == 1:
                cycle = [*path[path.index(child) :], int(child)]
                return [(int(a), int(b)) for a, b in itertools.pairwise(cycle)]
            elif state[child] == 0:
                state[child] = 1
                path.append(int(child))
                successors.append(iter(np.nonzero(A[child])[0]))
    return None


def is_dag(adjacency: object) -> bool:
    """True when the directed graph has no cycle (self-loops count as cycles).

    Raises
    ------
    TypeError, ValueError
        If ``adjacency`` is not a finite square numeric array.

    Examples
    --------
    >>> is_dag([[0, 1], [0, 0]]), is_dag([[0, 1], [1, 0]])
    (True, False)
    """
    return _find_cycle(check_adjacency("adjacency", adjacency, owner="is_dag")) is None


def make_acyclic(adjacency: object, pvalues: object) -> np.ndarray:
    """Break cycles: while one exists, delete its edge with the largest p-value (NaN counts as 1).

    Parameters
    ----------
    adjacency
        Square 0/1 array, A[j, i] = 1 meaning j → i.
    pvalues
        Array of the same shape: the p-value of each edge.

    Returns
    -------
    numpy.ndarray
        A copy of ``adjacency`` (int) without directed cycles; a DAG input comes back unchanged.

    Raises
    ------
    TypeError
        If an array is not numeric.
    ValueError
        If ``adjacency`` is not finite and square or the shapes differ.

    Examples
    --------
    >>> import numpy as np
    >>> A = np.array([[0, 1], [1, 0]])
    >>> make_acyclic(A, np.array([[np.nan, 0.01], [0.04, np.nan]])).tolist()
    [[0, 1], [0, 0]]
    """
    owner = "make_acyclic"
    A = check_adjacency("adjacency", adjacency, owner=owner).astype(int)
    P = check_array("pvalues", pvalues, owner=owner, finite=False)  # NaN: untested
    if P.shape != A.shape:
        raise ValueError(
            f"{owner}: pvalues must have the shape of adjacency {A.shape}; got {P.shape}."
        )
    P = np.where(np.isnan(P), 1.0, P)
    while (cycle := _find_cycle(A != 0)) is not None:
        worst = max(cycle, key=lambda edge: P[edge])
        A[worst] = 0
    return A
