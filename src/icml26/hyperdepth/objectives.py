"""Contrastive objectives: node-level InfoNCE and TriCL's group- and membership-level terms.

HyperDepth (ICML 2026; paper not found) trains its high-frequency path with TriCL's node-level
"semi-loss" (spec §2.3): with ``s(a, b) = cos(a, b) / τ``::

    ℓ(i; 1→2) = −log [ exp s(h1_i, h2_i) / Σ_j exp s(h1_i, h2_j) ]
    L_con     = ½ mean_i [ ℓ(i; 1→2) + ℓ(i; 2→1) ]

Negatives are the other nodes of the *other* view. The group-level term (hyperedge embeddings =
mean of members) and the membership-level term (bilinear node–hyperedge discriminator against a
shuffled partner) follow TriCL (Lee & Shin, AAAI 2023).

Deviations: the membership term uses one shuffled negative per incidence, on both sides (node and
hyperedge), scored ``−log σ((s⁺ − s⁻)/τ_m)``; the group term skips singleton (self-loop)
hyperedges and hyperedges left empty by a view.
"""

from __future__ import annotations

import torch
from torch.nn import functional as F  # noqa: N812 (torch convention)

from icml26.core import check_in_interval, check_positive_int, check_tensor

__all__ = ["edge_means", "group_info_nce", "info_nce", "membership_loss"]


def info_nce(h1: torch.Tensor, h2: torch.Tensor, tau: float = 0.5) -> torch.Tensor:
    """Symmetric node-level InfoNCE between two views (TriCL semi-loss), a scalar ``> 0``.

    Parameters
    ----------
    h1, h2
        Projected embeddings of the two views, shape ``(n, d)``; row ``i`` is node ``i``.
    tau
        Temperature ``τ_c > 0``.

    Examples
    --------
    >>> import math, torch
    >>> h = torch.ones(5, 3)  # equal similarities everywhere: the loss is log n
    >>> abs(float(info_nce(h, h)) - math.log(5)) < 1e-6
    True
    """
    tau = check_in_interval("tau", tau, low=0.0, closed="neither", owner="info_nce")
    h1 = check_tensor("h1", h1, owner="info_nce", ndim=2)
    h2 = check_tensor("h2", h2, owner="info_nce", ndim=2, shape=tuple(h1.shape))
    _same_dtype("h2", h2, h1, "info_nce")
    if h1.shape[0] == 0:
        raise ValueError("info_nce: h1 and h2 have no rows; the loss averages over nodes.")
    s = F.normalize(h1, dim=1) @ F.normalize(h2, dim=1).T / tau  # (n, n)
    target = torch.arange(s.shape[0], device=s.device)
    # ℓ(i;1→2) reads row i of s, ℓ(i;2→1) column i.
    return 0.5 * (F.cross_entropy(s, target) + F.cross_entropy(s.T, target))


def edge_means(
    z: torch.Tensor, node_idx: torch.Tensor, edge_idx: torch.Tensor, num_edges: int
) -> tuple[torch.Tensor, torch.Tensor]:
    """Hyperedge embeddings ``mean_{v ∈ e} z_v`` and the member counts (empty edges: zero).

    ``z`` is ``(n, d)``, ``node_idx``/``edge_idx`` the incidences (integer, same length, node ids
    in ``[0, n)``, edge ids in ``[0, num_edges)``) and ``num_edges`` at most 2**26.
    """
    owner = "edge_means"
    z = check_tensor("z", z, ndim=2, owner=owner)
    num_edges = check_positive_int("num_edges", num_edges, minimum=0, maximum=2**26, owner=owner)
    node_idx, edge_idx = _check_incidences(node_idx, edge_idx, z.shape[0], num_edges, owner)
    sums = z.new_zeros(num_edges, z.shape[1]).index_add(0, edge_idx, z[node_idx])  # (m, d)
    counts = torch.bincount(edge_idx, minlength=num_edges).to(z.dtype)  # (m,)
    return sums / counts.clamp_min(1.0)[:, None], counts


def group_info_nce(
    e1: torch.Tensor, e2: torch.Tensor, keep: torch.Tensor, tau: float = 0.5
) -> torch.Tensor:
    """TriCL's group-level InfoNCE on hyperedge embeddings of two views, over edges ``keep``.

    ``e1``, ``e2`` are ``(m, d)``, ``keep`` a bool mask ``(m,)``; 0 when fewer than 2 are kept.
    """
    owner = "group_info_nce"
    e1 = check_tensor("e1", e1, ndim=2, owner=owner)
    _same_dtype("e2", check_tensor("e2", e2, shape=tuple(e1.shape), owner=owner), e1, owner)
    check_tensor("keep", keep, shape=(e1.shape[0],), floating=False, owner=owner)
    if keep.dtype != torch.bool:
        raise TypeError(f"{owner}: keep must be a bool mask; got dtype {keep.dtype}.")
    check_in_interval("tau", tau, low=0.0, closed="neither", owner=owner)
    if int(keep.sum()) < 2:
        return e1.new_zeros(())
    return info_nce(e1[keep], e2[keep], tau)


def membership_loss(
    z_nodes: torch.Tensor,
    z_edges: torch.Tensor,
    node_idx: torch.Tensor,
    edge_idx: torch.Tensor,
    weight: torch.Tensor,
    tau: float = 1.0,
    *,
    generator: torch.Generator | None = None,
) -> torch.Tensor:
    """Membership-level contrast: a bilinear score ``s(v, e) = z_vᵀ W z_e`` of true incidences
    against shuffled partners, ``mean −log σ((s⁺ − s⁻)/τ_m)`` over both sides.
    """
    owner = "membership_loss"
    tau = check_in_interval("tau", tau, low=0.0, closed="neither", owner=owner)
    z_nodes = check_tensor("z_nodes", z_nodes, ndim=2, owner=owner)
    d = z_nodes.shape[1]
    z_edges = check_tensor("z_edges", z_edges, shape=(None, d), owner=owner)
    check_tensor("weight", weight, shape=(d, d), owner=owner)
    _same_dtype("z_edges", z_edges, z_nodes, owner)
    _same_dtype("weight", weight, z_nodes, owner)
    node_idx, edge_idx = _check_incidences(
        node_idx, edge_idx, z_nodes.shape[0], z_edges.shape[0], owner
    )
    if node_idx.numel() == 0:
        raise ValueError(f"{owner}: node_idx and edge_idx must hold at least one incidence.")
    if generator is not None and not isinstance(generator, torch.Generator):
        raise TypeError(f"{owner}: generator must be a torch.Generator or None.")
    nodes = F.normalize(z_nodes[node_idx], dim=1)  # (nnz, d)
    edges = F.normalize(z_edges[edge_idx], dim=1)  # (nnz, d)
    perm_e = torch.randperm(edges.shape[0], generator=generator)
    perm_v = torch.randperm(nodes.shape[0], generator=generator)
    positive = ((nodes @ weight) * edges).sum(1)
    negative_e = ((nodes @ weight) * edges[perm_e]).sum(1)
    negative_v = ((nodes[perm_v] @ weight) * edges).sum(1)
    loss_e = F.softplus((negative_e - positive) / tau).mean()
    loss_v = F.softplus((negative_v - positive) / tau).mean()
    return 0.5 * (loss_e + loss_v)


def _check_incidences(
    node_idx: object, edge_idx: object, n: int, m: int, owner: str
) -> tuple[torch.Tensor, torch.Tensor]:
    """Integer incidence lists of one length, node ids in ``[0, n)``, edge ids in ``[0, m)``."""
    for name, idx, size in (("node_idx", node_idx, n), ("edge_idx", edge_idx, m)):
        check_tensor(name, idx, ndim=1, floating=False, owner=owner)
        if idx.dtype not in (torch.int64, torch.int32):
            raise TypeError(f"{owner}: {name} must hold integer ids; got dtype {idx.dtype}.")
        if idx.numel() and (int(idx.min()) < 0 or int(idx.max()) >= size):
            raise ValueError(f"{owner}: {name} must hold ids in [0, {size}).")
    if node_idx.shape != edge_idx.shape:
        raise ValueError(
            f"{owner}: node_idx and edge_idx must have one length; got {tuple(node_idx.shape)} "
            f"and {tuple(edge_idx.shape)}."
        )
    return node_idx.long(), edge_idx.long()


def _same_dtype(name: str, t: torch.Tensor, ref: torch.Tensor, owner: str) -> None:
    if t.dtype != ref.dtype:
        raise TypeError(
            f"{owner}: {name} must have dtype {ref.dtype} like the first; got {t.dtype}."
        )
