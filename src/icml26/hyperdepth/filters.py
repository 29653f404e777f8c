"""Complementary spectral filters ``F_L + F_H = I`` on a hypergraph (spec §2.2).

HyperDepth (ICML 2026; paper not found, design inferred from the abstract). With ``Δ = I − P``
and eigenpairs ``(λ_i, u_i)``:

- poly mode (default, scalable): ``F_L = P^K`` (response ``(1 − λ)^K``), ``F_H = I − P^K``
  (response ``1 − (1 − λ)^K``);
- exact mode (small graphs, theory): ``U_low`` = eigenvectors with ``λ < cutoff`` (at least two),
  ``F_L = Π_L = U_low U_lowᵀ`` and ``F_H = Π_H = I − Π_L``, orthogonal projectors.

Deviations: "at least two vectors" is read as "the two lowest eigenvectors when fewer than two
eigenvalues lie below the cutoff" (spec §2.2). Filters are applied as operators (``K`` sparse
products, or ``U(Uᵀ z)``), never formed densely except by :meth:`AbstractFilter.matrix`.
"""

from __future__ import annotations

import abc
from typing import TYPE_CHECKING, final

import numpy as np

from icml26.core import check_in_interval, check_one_of, check_positive_int

if TYPE_CHECKING:
    import torch

    from icml26.hyperdepth.hypergraph import Hypergraph

__all__ = ["AbstractFilter", "PolyFilter", "ProjectorFilter", "spectral_filters"]

MODES = ("poly", "exact")


class AbstractFilter(abc.ABC):
    """A fixed linear operator ``F`` on node signals of shape ``(n, d)``."""

    num_nodes: int

    @abc.abstractmethod
    def __call__(self, z: torch.Tensor) -> torch.Tensor:
        """``F z`` for a node signal ``z`` of shape ``(n, d)``."""

    @abc.abstractmethod
    def response(self, eigenvalues: np.ndarray) -> np.ndarray:
        """The spectral response ``h(λ)`` of ``F`` at Laplacian eigenvalues ``λ``."""

    def matrix(self, dtype: torch.dtype | None = None) -> torch.Tensor:
        """``F`` as a dense ``(n, n)`` tensor (for tests and small graphs)."""
        import torch

        return self(torch.eye(self.num_nodes, dtype=dtype or self.dtype))

    @property
    @abc.abstractmethod
    def dtype(self) -> torch.dtype:
        """The floating dtype the filter computes in."""


@final
class PolyFilter(AbstractFilter):
    """``F_L = P^K`` (``high=False``) or ``F_H = I − P^K`` (``high=True``).

    Parameters
    ----------
    propagation
        The sparse propagation ``P``, shape ``(n, n)``.
    K
        Polynomial order ``K >= 1``.
    high
        Return the high-pass complement.
    """

    def __init__(self, propagation: torch.Tensor, K: int, *, high: bool) -> None:
        self.P = propagation
        self.K = check_positive_int("K", K, owner="PolyFilter")
        self.high = bool(high)
        self.num_nodes = int(propagation.shape[0])

    @property
    def dtype(self) -> torch.dtype:
        """The dtype of ``P``."""
        return self.P.dtype

    def __call__(self, z: torch.Tensor) -> torch.Tensor:
        """``P^K z`` or ``z − P^K z``."""
        low = z
        for _ in range(self.K):
            low = self.P @ low  # (n, d)
        return z - low if self.high else low

    def response(self, eigenvalues: np.ndarray) -> np.ndarray:
        """``(1 − λ)^K`` or ``1 − (1 − λ)^K``."""
        low = (1.0 - np.asarray(eigenvalues, dtype=np.float64)) ** self.K
        return 1.0 - low if self.high else low


@final
class ProjectorFilter(AbstractFilter):
    """``Π_L = U_low U_lowᵀ`` (``high=False``) or ``Π_H = I − Π_L`` (``high=True``).

    Parameters
    ----------
    basis
        ``U_low``, shape ``(n, r)``, orthonormal columns.
    threshold
        The largest eigenvalue kept in ``U_low`` (defines the response).
    high
        Return the complementary projector.
    """

    def __init__(self, basis: torch.Tensor, threshold: float, *, high: bool) -> None:
        self.U = basis
        self.threshold = float(threshold)
        self.high = bool(high)
        self.num_nodes = int(basis.shape[0])

    @property
    def dtype(self) -> torch.dtype:
        """The dtype of ``U_low``."""
        return self.U.dtype

    def __call__(self, z: torch.Tensor) -> torch.Tensor:
        """``U (Uᵀ z)`` or ``z − U (Uᵀ z)``."""
        low = self.U @ (self.U.T @ z)  # (n, d)
        return z - low if self.high else low

    def response(self, eigenvalues: np.ndarray) -> np.ndarray:
        """``1[λ <= threshold]`` or its complement."""
        low = (np.asarray(eigenvalues, dtype=np.float64) <= self.threshold).astype(np.float64)
        return 1.0 - low if self.high else low


def spectral_filters(
    hg: Hypergraph,
    mode: str = "poly",
    K: int = 2,
    cutoff: float = 0.5,
    *,
    dtype: torch.dtype | None = None,
) -> tuple[AbstractFilter, AbstractFilter]:
    """The complementary pair ``(F_L, F_H)`` with ``F_L + F_H = I`` (spec §2.2).

    Parameters
    ----------
    hg
        The hypergraph (add self-loops first for the spec's convention).
    mode
        ``"poly"`` (``P^K``, ``I − P^K``) or ``"exact"`` (projectors on ``λ < cutoff``).
    K
        Polynomial order (poly mode), ``K >= 1``.
    cutoff
        Exact-mode cutoff ``λ_c`` in ``(0, 1]``.
    dtype
        Floating dtype of the operators (default float32).

    Raises
    ------
    ValueError
        If ``mode`` is unknown, ``K < 1`` or ``cutoff`` is outside ``(0, 1]``.

    Example
    -------
    >>> import torch
    >>> from icml26.hyperdepth import Hypergraph
    >>> hg = Hypergraph(5, [[0, 1, 2], [2, 3, 4]]).with_self_loops()
    >>> low, high = spectral_filters(hg, "exact", dtype=torch.float64)
    >>> z = torch.randn(5, 3, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    >>> bool(torch.allclose(low(z) + high(z), z))
    True
    """
    import torch

    check_one_of("mode", mode, MODES, owner="spectral_filters")
    K = check_positive_int("K", K, owner="spectral_filters")
    cutoff = check_in_interval(
        "cutoff", cutoff, low=0.0, high=1.0, closed="right", owner="spectral_filters"
    )
    dtype = dtype or torch.float32
    if mode == "poly":
        P = hg.propagation(dtype)
        return PolyFilter(P, K, high=False), PolyFilter(P, K, high=True)
    eigenvalues, eigenvectors = hg.laplacian_eigh()
    r = max(int(np.sum(eigenvalues < cutoff)), min(2, hg.num_nodes))
    U = torch.from_numpy(np.ascontiguousarray(eigenvectors[:, :r])).to(dtype)
    threshold = float(eigenvalues[r - 1])
    return ProjectorFilter(U, threshold, high=False), ProjectorFilter(U, threshold, high=True)
