"""Energy-based hierarchical alignment: a learnable prototype tree (spec §2.4).

HyperDepth (ICML 2026; paper not found, the energy is the spec's inferred design). Levels
``ℓ = 1..T`` with sizes ``K_1 > K_2 > …``, prototypes ``μ_k^{(ℓ)}``, a fixed parent map
``π_ℓ: [K_ℓ] → [K_{ℓ+1}]`` and distances ``e_ik^{(ℓ)} = ‖u_i − μ_k^{(ℓ)}‖²``::

    E(q, μ) = (1/n) Σ_i Σ_ℓ [ Σ_k q_ik e_ik + τ Σ_k q_ik log q_ik ]        fit + entropy
            + ρ Σ_{ℓ<T} Σ_k ‖μ_k^{(ℓ)} − μ_{π(k)}^{(ℓ+1)}‖²                  tree elasticity
            + η Σ_ℓ Σ_k q̄_k log(K_ℓ q̄_k),  q̄ = mean_i q_i                  balanced usage
            + κ (1/n) Σ_i Σ_{ℓ<T} KL(q_i^{(ℓ+1)} ‖ C_ℓᵀ q_i^{(ℓ)})            consistency

The Gibbs posterior ``q = softmax(−e/τ)`` minimises the first line, whose minimum is the free
energy ``F = −τ log Σ_k exp(−e_k/τ)``; ``L_hier`` is the energy at the Gibbs ``q``.

Deviations: prototypes are Euclidean k-means centroids (not re-normalised to the sphere); a
top-level cluster with fewer points than children gets children at jittered copies of its
centroid; in the M-step a prototype with no mass (``N_k < 1e-12``) and no tree neighbour
(``ρ = 0``) keeps its value.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any, final

import numpy as np
import torch
from torch import nn

from icml26.core import check_in_interval, check_positive_int, check_tensor, numpy_generator
from icml26.core.validation import Seed

__all__ = ["PrototypeTree", "check_tree_sizes", "free_energy", "gibbs"]


MAX_TAU = 1e6  # temperatures above it make −τ log K overflow float32 long before they mean anything


def _check_energy_inputs(dist: Any, tau: Any, owner: str) -> tuple[torch.Tensor, float]:
    tau = check_in_interval("tau", tau, low=0.0, high=MAX_TAU, closed="right", owner=owner)
    dist = check_tensor("dist", dist, owner=owner)
    if dist.dim() == 0 or dist.shape[-1] == 0:
        shape = tuple(dist.shape)
        raise ValueError(
            f"{owner}: dist must have at least one entry on its last axis; got {shape}."
        )
    return dist, tau


def free_energy(dist: torch.Tensor, tau: float) -> torch.Tensor:
    """``F = −τ log Σ_k exp(−e_k / τ)`` over the last axis (the Gibbs minimum of fit + entropy).

    Bounds: ``min_k e_k − τ log K <= F <= min_k e_k``; ``0 < τ <= MAX_TAU`` (10^6).

    Examples
    --------
    >>> float(free_energy(torch.tensor([0.0, 0.0], dtype=torch.float64), 1.0))  # −log 2
    -0.6931471805599453
    """
    dist, tau = _check_energy_inputs(dist, tau, "free_energy")
    return -tau * torch.logsumexp(-dist / tau, dim=-1)


def gibbs(dist: torch.Tensor, tau: float) -> torch.Tensor:
    """The Gibbs posterior ``q = softmax(−e / τ)`` over the last axis (``0 < τ <= MAX_TAU``)."""
    dist, tau = _check_energy_inputs(dist, tau, "gibbs")
    return torch.softmax(-dist / tau, dim=-1)


MAX_PROTOTYPES = 2**26  # most prototype numbers (sum of sizes x dim) of a tree


def check_tree_sizes(sizes: Sequence[int], owner: str, name: str = "sizes") -> tuple[int, ...]:
    """Validate level sizes: strictly decreasing, each divisible by the next (balanced tree)."""
    if isinstance(sizes, str | bytes) or not isinstance(sizes, Sequence) or len(sizes) == 0:
        raise ValueError(f"{owner}: {name} must be a non-empty sequence of ints; got {sizes!r}.")
    out = tuple(check_positive_int(name, s, owner=owner, maximum=MAX_PROTOTYPES) for s in sizes)
    for child, parent in itertools.pairwise(out):
        if not child > parent or child % parent:
            raise ValueError(
                f"{owner}: {name} must be strictly decreasing with each level divisible by the "
                f"next (e.g. (16, 4)); got {out!r}."
            )
    return out


def _kmeans(points: np.ndarray, k: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """k-means centroids and labels; fewer points than ``k`` gives jittered copies."""
    from sklearn.cluster import KMeans

    if points.shape[0] < k:
        centre = points.mean(axis=0)
        centroids = centre + 1e-3 * rng.standard_normal((k, points.shape[1]))
        labels = np.argmin(((points[:, None] - centroids[None]) ** 2).sum(-1), axis=1)
        return centroids, labels
    model = KMeans(n_clusters=k, n_init=4, random_state=int(rng.integers(2**31 - 1)))
    labels = model.fit_predict(points)
    return model.cluster_centers_, labels


@final
class PrototypeTree(nn.Module):
    """A learnable tree of prototypes fitted to hierarchy embeddings by an energy (spec §2.4).

    Parameters
    ----------
    dim
        Dimension ``d_h`` of the embeddings ``u``.
    sizes
        Level sizes from leaves to root level, strictly decreasing, each divisible by the next.
    tau
        Energy temperature ``τ_h > 0``.
    rho
        Tree elasticity ``ρ >= 0``.
    eta
        Balanced-usage weight ``η >= 0``.
    kappa
        Child→parent consistency weight ``κ >= 0``.

    Examples
    --------
    >>> import torch
    >>> g = torch.Generator().manual_seed(0)
    >>> u = torch.nn.functional.normalize(torch.randn(40, 3, generator=g), dim=1)
    >>> tree = PrototypeTree(3, sizes=(4, 2))
    >>> tree.init_from(u, seed=0)
    >>> [tuple(q.shape) for q in tree.assignments(u)]
    [(40, 4), (40, 2)]
    """

    def __init__(
        self,
        dim: int,
        sizes: Sequence[int] = (16, 4),
        tau: float = 0.1,
        rho: float = 0.1,
        eta: float = 0.1,
        kappa: float = 0.0,
    ) -> None:
        super().__init__()
        owner = "PrototypeTree"
        self.dim = check_positive_int("dim", dim, owner=owner, maximum=MAX_PROTOTYPES)
        self.sizes = check_tree_sizes(sizes, owner)
        if sum(self.sizes) * self.dim > MAX_PROTOTYPES:
            raise ValueError(
                f"{owner}: sizes {self.sizes} x dim {self.dim} exceed {MAX_PROTOTYPES} numbers."
            )
        self.tau = check_in_interval("tau", tau, low=0.0, high=MAX_TAU, closed="right", owner=owner)
        self.rho = check_in_interval("rho", rho, low=0.0, owner=owner)
        self.eta = check_in_interval("eta", eta, low=0.0, owner=owner)
        self.kappa = check_in_interval("kappa", kappa, low=0.0, owner=owner)
        self.prototypes = nn.ParameterList(nn.Parameter(torch.zeros(k, self.dim)) for k in sizes)
        for level, (child, parent) in enumerate(zip(self.sizes, self.sizes[1:], strict=False)):
            # Default parent map before init_from: consecutive blocks of children.
            self.register_buffer(f"parent_{level}", torch.arange(child) // (child // parent))

    def parents(self, level: int) -> torch.Tensor:
        """The parent map ``π_level``: for each prototype at ``level``, its parent's index."""
        check_positive_int(
            "level", level, minimum=0, maximum=len(self.sizes) - 2, owner="PrototypeTree.parents"
        )
        return getattr(self, f"parent_{level}")

    # ------------------------------------------------------------------ initialisation

    @torch.no_grad()
    def init_from(self, u: torch.Tensor, seed: Seed = None) -> None:
        """Hierarchical k-means on ``u``: ``K_T`` clusters, then k-means inside each for children.

        Sets every level's prototypes and the parent maps (balanced: each parent gets
        ``K_ℓ / K_{ℓ+1}`` children).
        """
        u = check_tensor("u", u, owner="PrototypeTree.init_from", ndim=2, shape=(None, self.dim))
        if u.shape[0] == 0:
            raise ValueError("PrototypeTree.init_from: u must hold at least one point.")
        rng = numpy_generator(seed)
        points = u.detach().double().cpu().numpy()
        top = len(self.sizes) - 1
        centroids, labels = _kmeans(points, self.sizes[top], rng)
        self.prototypes[top].copy_(torch.from_numpy(centroids))
        groups = [np.flatnonzero(labels == c) for c in range(self.sizes[top])]
        for level in range(top - 1, -1, -1):
            fan_out = self.sizes[level] // self.sizes[level + 1]
            children, parents, child_groups = [], [], []
            for parent, members in enumerate(groups):
                subset = points[members] if members.size else centroids[parent : parent + 1]
                sub_centroids, sub_labels = _kmeans(subset, fan_out, rng)
                children.append(sub_centroids)
                parents += [parent] * fan_out
                child_groups += [members[sub_labels == c] for c in range(fan_out)]
            self.prototypes[level].copy_(torch.from_numpy(np.concatenate(children)))
            self.parents(level).copy_(torch.tensor(parents))
            centroids, groups = np.concatenate(children), child_groups

    def _check_q(self, q: object, u: torch.Tensor, method: str) -> list[torch.Tensor]:
        """One posterior ``(n, K_ℓ)`` per level."""
        owner = f"PrototypeTree.{method}"
        if isinstance(q, torch.Tensor) or not isinstance(q, Sequence) or len(q) != len(self.sizes):
            raise ValueError(
                f"{owner}: q must be a list of one posterior per level ({len(self.sizes)})."
            )
        for level, (qi, k) in enumerate(zip(q, self.sizes, strict=True)):
            check_tensor(f"q[{level}]", qi, shape=(u.shape[0], k), owner=owner)
        return [qi.to(u.dtype) for qi in q]

    # ------------------------------------------------------------------ energy

    def distances(self, u: torch.Tensor) -> list[torch.Tensor]:
        """``e^{(ℓ)}_{ik} = ‖u_i − μ_k^{(ℓ)}‖²`` per level, each of shape ``(n, K_ℓ)``."""
        u = check_tensor("u", u, owner="PrototypeTree", ndim=2, shape=(None, self.dim))
        out = []
        for mu in self.prototypes:
            mu = mu.to(u.dtype)
            sq = (u * u).sum(1, keepdim=True) - 2 * u @ mu.T + (mu * mu).sum(1)[None]  # (n, K)
            out.append(sq.clamp_min(0.0))
        return out

    def assignments(self, u: torch.Tensor) -> list[torch.Tensor]:
        """The Gibbs posteriors ``q^{(ℓ)} = softmax(−e^{(ℓ)} / τ)`` per level."""
        return [gibbs(e, self.tau) for e in self.distances(u)]

    def forward(self, u: torch.Tensor) -> list[torch.Tensor]:
        """``tree(u)``: the per-level Gibbs posteriors, as :meth:`assignments`."""
        return self.assignments(u)

    def tree_term(self) -> torch.Tensor:
        """``Σ_{ℓ<T} Σ_k ‖μ_k^{(ℓ)} − μ_{π(k)}^{(ℓ+1)}‖²``."""
        total = self.prototypes[0].new_zeros(())
        for level in range(len(self.sizes) - 1):
            child, parent = self.prototypes[level], self.prototypes[level + 1]
            total = total + ((child - parent[self.parents(level)]) ** 2).sum()
        return total

    def energy(
        self, u: torch.Tensor, q: Sequence[torch.Tensor] | None = None
    ) -> dict[str, torch.Tensor]:
        """The named energy terms at ``q`` (the Gibbs posteriors when ``q`` is ``None``).

        Returns
        -------
        dict
            ``fit``, ``entropy`` (the ``τ Σ q log q`` term), ``free_energy`` (the Gibbs minimum
            of fit + entropy), ``tree``, ``balance``, ``consistency`` (unweighted) and ``total``
            ``= fit + entropy + ρ·tree + η·balance + κ·consistency``.
        """
        dist = self.distances(u)
        n = u.shape[0]
        if n == 0:
            raise ValueError("PrototypeTree.energy: u must hold at least one point.")
        q = [gibbs(e, self.tau) for e in dist] if q is None else self._check_q(q, u, "energy")
        fit = sum((qi * e).sum() for qi, e in zip(q, dist, strict=True)) / n
        entropy = self.tau * sum(torch.special.xlogy(qi, qi).sum() for qi in q) / n
        free = sum(free_energy(e, self.tau).sum() for e in dist) / n
        balance = u.new_zeros(())
        for qi, k in zip(q, self.sizes, strict=True):
            q_bar = qi.mean(0)  # (K,)
            balance = balance + torch.special.xlogy(q_bar, k * q_bar).sum()
        consistency = u.new_zeros(())
        for level in range(len(self.sizes) - 1):
            # C_ℓᵀ q^{(ℓ)}: children's mass summed into their parents, (n, K_{ℓ+1}).
            pooled = q[level].new_zeros(n, self.sizes[level + 1])
            pooled = pooled.index_add(1, self.parents(level), q[level])
            parent_q = q[level + 1]
            kl = torch.special.xlogy(parent_q, parent_q) - torch.special.xlogy(parent_q, pooled)
            consistency = consistency + kl.sum() / n
        tree = self.tree_term().to(u.dtype)
        total = fit + entropy + self.rho * tree + self.eta * balance + self.kappa * consistency
        return {
            "fit": fit,
            "entropy": entropy,
            "free_energy": free,
            "tree": tree,
            "balance": balance,
            "consistency": consistency,
            "total": total,
        }

    def loss(self, u: torch.Tensor) -> torch.Tensor:
        """``L_hier = (1/n) Σ_i Σ_ℓ F_i^{(ℓ)} + ρ·tree + η·balance + κ·consistency`` (Gibbs q)."""
        terms = self.energy(u)
        rest = self.rho * terms["tree"] + self.eta * terms["balance"]
        return terms["free_energy"] + rest + self.kappa * terms["consistency"]

    # ------------------------------------------------------------------ M-step

    def tree_laplacian(self) -> torch.Tensor:
        """The Laplacian of the prototype tree over all levels stacked, ``(ΣK, ΣK)`` float64."""
        total = sum(self.sizes)
        offsets = np.concatenate([[0], np.cumsum(self.sizes)])
        L = torch.zeros(total, total, dtype=torch.float64)
        for level in range(len(self.sizes) - 1):
            children = torch.arange(self.sizes[level]) + int(offsets[level])
            parents = self.parents(level).cpu() + int(offsets[level + 1])
            ones = torch.ones(children.shape[0], dtype=torch.float64)
            # accumulate=True: a parent with several children gets one +1 per child.
            for rows, cols, sign in (
                (children, children, 1.0),
                (parents, parents, 1.0),
                (children, parents, -1.0),
                (parents, children, -1.0),
            ):
                L.index_put_((rows, cols), sign * ones, accumulate=True)
        return L

    @torch.no_grad()
    def closed_form_update(self, u: torch.Tensor, q: Sequence[torch.Tensor] | None = None) -> None:
        """M-step: minimise fit + ρ·tree over ``μ`` for fixed ``q`` (Gibbs at the current ``μ``).

        Solves ``(diag(N) + ρ L_tree) μ = b`` with ``N_k = (1/n) Σ_i q_ik`` and
        ``b_k = (1/n) Σ_i q_ik u_i``, all levels stacked (float64).
        """
        u64 = check_tensor("u", u, owner="PrototypeTree", ndim=2, shape=(None, self.dim)).double()
        if u64.shape[0] == 0:
            raise ValueError("PrototypeTree.closed_form_update: u must hold at least one point.")
        if q is None:
            q = self.assignments(u64)
        else:
            q = [qi.double() for qi in self._check_q(q, u64, "closed_form_update")]
        n = u64.shape[0]
        N = torch.cat([qi.sum(0) for qi in q]) / n  # (ΣK,)
        b = torch.cat([qi.T @ u64 for qi in q]) / n  # (ΣK, d_h)
        A = torch.diag(N) + self.rho * self.tree_laplacian()
        current = torch.cat([mu.detach().double() for mu in self.prototypes])
        free = (N > 1e-12) | (A.abs().sum(1) - A.diagonal().abs() > 0)
        mu = current.clone()
        idx = torch.nonzero(free).flatten()
        fixed = torch.nonzero(~free).flatten()
        rhs = b[idx] - A[idx][:, fixed] @ current[fixed]
        mu[idx] = torch.linalg.solve(A[idx][:, idx], rhs)
        for level, chunk in enumerate(torch.split(mu, list(self.sizes))):
            self.prototypes[level].copy_(chunk.to(self.prototypes[level].dtype))
