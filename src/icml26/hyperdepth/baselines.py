"""Baselines of spec §5.2: raw/propagated features, HyperGRACE and TriCL-lite.

HyperDepth (ICML 2026; paper not found). ``raw_features`` is the untrained ``P^K X``.
``HyperGRACE`` is the flattening-prone reference: a 2-layer HGNN encoder
``Z = P · PReLU(P X W_1) W_2`` trained by node-level InfoNCE only. ``TriCLLite`` follows TriCL
(Lee & Shin, AAAI 2023): one node→hyperedge→node layer (mean aggregation, Linear + PReLU at each
step) with node-, group- and membership-level contrast.

Deviations: HyperGRACE's name and design are the spec's (a GRACE-style objective on an HGNN
encoder); TriCL-lite uses one layer, mean aggregation without TriCL's degree normalisation, one
shuffled negative per incidence in the membership term (scored within each view), and TriCL's
Cora view rates (0.4/0.4) and learning rate (5e-4).
"""

from __future__ import annotations

import itertools
from typing import final

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F  # noqa: N812 (torch convention)

from icml26.core import check_array, check_in_interval, check_positive_int
from icml26.core.validation import numpy_generator
from icml26.core.weights import seeded_default_init
from icml26.hyperdepth.data import HypergraphData
from icml26.hyperdepth.encoder import projection_head
from icml26.hyperdepth.hypergraph import Hypergraph
from icml26.hyperdepth.objectives import edge_means, group_info_nce, info_nce, membership_loss
from icml26.hyperdepth.prototypes import MAX_PROTOTYPES, MAX_TAU, PrototypeTree
from icml26.hyperdepth.training import AbstractContrastiveTrainer, GraphView

__all__ = ["HyperGRACE", "TriCLLite", "raw_features"]


def raw_features(x: np.ndarray, hg: Hypergraph, K: int = 2) -> np.ndarray:
    """``P^K X`` on ``hg`` with self-loops (``K = 0``: ``X`` itself); no training.

    Examples
    --------
    >>> hg = Hypergraph(3, [[0, 1, 2]])
    >>> raw_features(np.eye(3), hg, K=0).shape
    (3, 3)
    """
    x = check_array("x", x, owner="raw_features", ndim=2)
    if not isinstance(hg, Hypergraph):
        raise TypeError(f"raw_features: hg must be a Hypergraph; got {type(hg).__name__}.")
    if x.shape[0] != hg.num_nodes:
        raise ValueError(
            f"raw_features: x must have one row per node ({hg.num_nodes}); got {x.shape[0]}."
        )
    K = check_positive_int("K", K, owner="raw_features", minimum=0)
    P = hg.with_self_loops().propagation_scipy()
    out = x
    for _ in range(K):
        out = P @ out
    return np.asarray(out)


class _HGNN(nn.Module):
    """``Z = P · PReLU(P X W_1) W_2`` (Feng et al. 2019), ``layers`` propagations."""

    def __init__(self, in_dim: int, dim: int, layers: int) -> None:
        super().__init__()
        dims = [in_dim] + [dim] * layers
        self.linears = nn.ModuleList(nn.Linear(a, b) for a, b in itertools.pairwise(dims))
        self.acts = nn.ModuleList(nn.PReLU() for _ in range(layers - 1))

    def forward(self, x: torch.Tensor, P: torch.Tensor) -> torch.Tensor:
        h = x
        for i, linear in enumerate(self.linears):
            h = P @ linear(h)  # (n, dim)
            if i < len(self.acts):
                h = self.acts[i](h)
        return h


@final
class HyperGRACE(AbstractContrastiveTrainer):
    """Node-level InfoNCE on a single HGNN branch: the flattening-prone reference.

    Parameters
    ----------
    dim, proj_dim
        Embedding and projection dimensions.
    layers
        HGNN layers (propagations).
    tau_c
        InfoNCE temperature.
    p_f, p_e
        View rates in ``[0, 1)``.
    prototypes
        ``0`` (default): InfoNCE only. ``k > 0``: the hierarchy-aware baseline of issue 45 —
        a one-level :class:`PrototypeTree` of ``k`` prototypes on the evaluated embedding
        ``normalize(Z)`` (k-means init), its Gibbs free energy added with weight ``lam``.
    lam, tau_h
        Weight and temperature of that energy.
    epochs, lr, weight_decay, monitor_every, batch_size, device
        As for :class:`HyperDepth`.

    Examples
    --------
    >>> from icml26.hyperdepth import make_hierarchical_hypergraph
    >>> data = make_hierarchical_hypergraph(n_per_fine=10, n_edges=60, dim=8)
    >>> HyperGRACE(dim=16, proj_dim=16, epochs=2).fit(data).embed(data).shape
    (120, 16)
    >>> sorted(HyperGRACE(dim=16, proj_dim=16, epochs=2, prototypes=12).fit(data).history_[-1])
    ['con', 'epoch', 'hier', 'loss']
    """

    def __init__(
        self,
        *,
        dim: int = 256,
        proj_dim: int = 256,
        layers: int = 2,
        tau_c: float = 0.5,
        p_f: float = 0.2,
        p_e: float = 0.2,
        prototypes: int = 0,
        lam: float = 1.0,
        tau_h: float = 0.1,
        epochs: int = 300,
        lr: float = 1e-3,
        weight_decay: float = 1e-5,
        monitor_every: int = 0,
        batch_size: int | None = None,
        device: str = "cpu",
    ) -> None:
        self.dim, self.proj_dim, self.layers, self.tau_c = dim, proj_dim, layers, tau_c
        self.prototypes, self.lam, self.tau_h = prototypes, lam, tau_h
        self.p_f, self.p_e, self.epochs, self.lr = p_f, p_e, epochs, lr
        self.weight_decay, self.monitor_every, self.device = weight_decay, monitor_every, device
        self.batch_size = batch_size
        self._check_params()

    def _check_params(self) -> None:
        self._check_common()
        for name in ("dim", "proj_dim", "layers"):
            check_positive_int(name, getattr(self, name), owner="HyperGRACE")
        check_in_interval("tau_c", self.tau_c, low=0.0, closed="neither", owner="HyperGRACE")
        check_positive_int(
            "prototypes",
            self.prototypes,
            owner="HyperGRACE",
            minimum=0,
            maximum=MAX_PROTOTYPES // max(1, self.dim),
        )
        check_in_interval("lam", self.lam, low=0.0, owner="HyperGRACE")
        check_in_interval(
            "tau_h", self.tau_h, low=0.0, high=MAX_TAU, closed="right", owner="HyperGRACE"
        )

    def _build(self, data: HypergraphData, hg: Hypergraph, x: torch.Tensor, seed: int) -> None:
        seeds = numpy_generator(seed).integers(2**62, size=2)
        with seeded_default_init(int(seeds[0])):
            self.encoder_ = _HGNN(x.shape[1], self.dim, self.layers).to(self.device)
        self.head_ = projection_head(self.dim, self.proj_dim, seed=int(seeds[1])).to(self.device)
        self.tree_ = None
        if self.prototypes:
            if self.prototypes > x.shape[0]:
                raise ValueError(
                    f"HyperGRACE: prototypes must be <= the number of nodes ({x.shape[0]}); "
                    f"got {self.prototypes}."
                )
            tree = PrototypeTree(self.dim, (self.prototypes,), tau=self.tau_h)
            self.tree_ = tree.to(self.device)
            with torch.no_grad():
                z = self.encoder_(x, hg.propagation(x.dtype).to(x.device))
            self.tree_.init_from(F.normalize(z, dim=1), seed=int(seeds[1]) + 1)

    def _modules(self) -> list[nn.Module]:
        return [self.encoder_, self.head_] + ([self.tree_] if self.tree_ is not None else [])

    def _loss(self, views: list[GraphView], generator: torch.Generator) -> dict[str, torch.Tensor]:
        z = [self.encoder_(v.x, v.P) for v in views]
        h = [self.head_(zv) for zv in z]
        idx = self._batch(h[0].shape[0], generator)
        loss = info_nce(*(h if idx is None else [hv[idx] for hv in h]), self.tau_c)
        terms = {"con": loss.detach()}
        if self.tree_ is not None:
            hier = 0.5 * sum(self.tree_.loss(F.normalize(zv, dim=1)) for zv in z)
            loss = loss + self.lam * hier
            terms["hier"] = hier.detach()
        return {"loss": loss, **terms}

    def _encode(self, x: torch.Tensor, hg: Hypergraph, part: str) -> torch.Tensor:
        return self.encoder_(x, hg.propagation(x.dtype).to(x.device))


class _TriCLConv(nn.Module):
    """Node → hyperedge → node mean aggregation with Linear + PReLU at each step (TriCL)."""

    def __init__(self, in_dim: int, dim: int) -> None:
        super().__init__()
        self.node_to_edge, self.edge_to_node = nn.Linear(in_dim, dim), nn.Linear(dim, dim)
        self.act_edge, self.act_node = nn.PReLU(), nn.PReLU()

    def forward(
        self, x: torch.Tensor, node_idx: torch.Tensor, edge_idx: torch.Tensor, num_edges: int
    ) -> tuple[torch.Tensor, torch.Tensor]:
        e, _ = edge_means(self.node_to_edge(x), node_idx, edge_idx, num_edges)
        e = self.act_edge(e)  # (m, dim)
        # Edge → node: mean over the hyperedges each node belongs to.
        h = self.edge_to_node(e)
        sums = h.new_zeros(x.shape[0], h.shape[1]).index_add(0, node_idx, h[edge_idx])
        counts = torch.bincount(node_idx, minlength=x.shape[0]).to(h.dtype).clamp_min(1.0)
        return self.act_node(sums / counts[:, None]), e  # (n, dim), (m, dim)


@final
class TriCLLite(AbstractContrastiveTrainer):
    """TriCL-lite: node-, group- and membership-level contrast (Lee & Shin, AAAI 2023).

    Parameters
    ----------
    dim, proj_dim
        Embedding and projection dimensions.
    tau_n, tau_g, tau_m
        Temperatures of the node, group and membership terms.
    w_g, w_m
        Weights of the group and membership terms.
    p_f, p_e
        View rates in ``[0, 1)`` (TriCL's Cora setting 0.4/0.4).
    epochs, lr, weight_decay, monitor_every, batch_size, device
        As for :class:`HyperDepth`.

    Examples
    --------
    >>> from icml26.hyperdepth import make_hierarchical_hypergraph
    >>> data = make_hierarchical_hypergraph(n_per_fine=10, n_edges=60, dim=8)
    >>> TriCLLite(dim=16, proj_dim=16, epochs=2).fit(data).embed(data).shape
    (120, 16)
    """

    def __init__(
        self,
        *,
        dim: int = 256,
        proj_dim: int = 256,
        tau_n: float = 0.5,
        tau_g: float = 0.5,
        tau_m: float = 1.0,
        w_g: float = 1.0,
        w_m: float = 1.0,
        p_f: float = 0.4,
        p_e: float = 0.4,
        epochs: int = 300,
        lr: float = 5e-4,
        weight_decay: float = 1e-5,
        monitor_every: int = 0,
        batch_size: int | None = None,
        device: str = "cpu",
    ) -> None:
        self.dim, self.proj_dim = dim, proj_dim
        self.tau_n, self.tau_g, self.tau_m, self.w_g, self.w_m = tau_n, tau_g, tau_m, w_g, w_m
        self.p_f, self.p_e, self.epochs, self.lr = p_f, p_e, epochs, lr
        self.weight_decay, self.monitor_every, self.device = weight_decay, monitor_every, device
        self.batch_size = batch_size
        self._check_params()

    def _check_params(self) -> None:
        owner = "TriCLLite"
        self._check_common()
        for name in ("dim", "proj_dim"):
            check_positive_int(name, getattr(self, name), owner=owner)
        for name in ("tau_n", "tau_g", "tau_m"):
            check_in_interval(name, getattr(self, name), low=0.0, closed="neither", owner=owner)
        for name in ("w_g", "w_m"):
            check_in_interval(name, getattr(self, name), low=0.0, owner=owner)

    def _build(self, data: HypergraphData, hg: Hypergraph, x: torch.Tensor, seed: int) -> None:
        seeds = numpy_generator(seed).integers(2**62, size=4)
        with seeded_default_init(int(seeds[0])):
            self.encoder_ = _TriCLConv(x.shape[1], self.dim).to(self.device)
            self.disc_ = nn.Linear(self.dim, self.dim, bias=False).to(self.device)
        self.head_ = projection_head(self.dim, self.proj_dim, seed=int(seeds[1])).to(self.device)
        self.edge_head_ = projection_head(self.dim, self.proj_dim, seed=int(seeds[2]))
        self.edge_head_ = self.edge_head_.to(self.device)

    def _modules(self) -> list[nn.Module]:
        return [self.encoder_, self.disc_, self.head_, self.edge_head_]

    def _loss(self, views: list[GraphView], generator: torch.Generator) -> dict[str, torch.Tensor]:
        encoded = [self.encoder_(v.x, v.node_idx, v.edge_idx, v.num_edges) for v in views]
        h = [self.head_(n) for n, _ in encoded]
        idx = self._batch(h[0].shape[0], generator)
        l_node = info_nce(*(h if idx is None else [hv[idx] for hv in h]), self.tau_n)
        sizes = [torch.bincount(v.edge_idx, minlength=v.num_edges) for v in views]
        keep = (sizes[0] > 1) & (sizes[1] > 1)  # non-singleton hyperedges present in both views
        keep = self._batch_mask(keep, generator)
        g = [self.edge_head_(e) for _, e in encoded]
        l_group = group_info_nce(g[0], g[1], keep, self.tau_g)
        l_member = sum(
            membership_loss(
                n, e, v.node_idx, v.edge_idx, self.disc_.weight, self.tau_m, generator=generator
            )
            for (n, e), v in zip(encoded, views, strict=True)
        )
        loss = l_node + self.w_g * l_group + self.w_m * 0.5 * l_member
        return {"loss": loss, "con": l_node.detach(), "group": l_group.detach()}

    def _encode(self, x: torch.Tensor, hg: Hypergraph, part: str) -> torch.Tensor:
        node_idx, edge_idx = (torch.tensor(a, device=x.device) for a in hg.incidence_pairs)
        return self.encoder_(x, node_idx, edge_idx, hg.num_edges)[0]
