"""HyperDepth: contrast on the high-frequency path, a prototype-tree energy on the low (spec §2.5).

HyperDepth (ICML 2026; arXiv id, paper and code not found — spec's inferred design)::

    L = L_con + λ · L_hier
    L_con  = InfoNCE(q(Z̃^{(1)}), q(Z̃^{(2)}); τ_c)             updates θ_H, gate, head q
    L_hier = ½ Σ_v E_Gibbs(u^{(v)}),  u = normalize(A_L Z_L)     updates θ_L, A_L, prototypes

Gradient routing comes from the stop-gradient inside ``Z̃`` and from ``u`` reading only ``Z_L``.
``balance="gradnorm"`` rescales ``λ`` so the two terms' gradient norms on their own parameter
groups match (moving average 0.9). The prototypes are initialised by hierarchical k-means on
``u`` of the clean graph; ``refresh_every > 0`` re-runs the closed-form M-step every that many
epochs. :func:`gradient_conflict` measures the cosine between the two losses' gradient fields on
the transformed node signals (the orthogonality proposition of spec §2.6).

Deviations: exact mode draws views by feature masking only, with the projectors of the clean
graph (spec §2.3); the optional group/membership terms (``w_g``, ``w_m``, default 0) act on
``Z̃``; ``gradnorm``'s moving average starts at ``lam``; ``u`` is computed in the hierarchy
dimension ``d_h`` by a bias-free linear map ``A_L``.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any, final

import torch
from torch import nn
from torch.nn import functional as F  # noqa: N812 (torch convention)

from icml26.core import check_in_interval, check_one_of, check_positive_int
from icml26.core.validation import Seed, numpy_generator
from icml26.core.weights import seeded_default_init
from icml26.hyperdepth.data import HypergraphData, mask_features
from icml26.hyperdepth.encoder import MAX_DIM, EncoderOutput, HyperDepthEncoder, projection_head
from icml26.hyperdepth.filters import (
    HIGH_READINGS,
    MAX_ORDER,
    MODES,
    AbstractFilter,
    poly_filters,
)
from icml26.hyperdepth.hypergraph import Hypergraph
from icml26.hyperdepth.objectives import edge_means, group_info_nce, info_nce, membership_loss
from icml26.hyperdepth.prototypes import PrototypeTree, check_tree_sizes
from icml26.hyperdepth.training import (
    PARTS,
    AbstractContrastiveTrainer,
    GraphView,
    NotFittedError,
)

__all__ = ["HyperDepth", "gradient_conflict"]


@final
class HyperDepth(AbstractContrastiveTrainer):
    """HyperDepth trainer (decoupled spectral encoder + prototype-tree energy), sklearn-style.

    Parameters
    ----------
    dim
        Hidden/output dimension ``d``.
    K
        Poly filter order.
    mode
        ``"poly"`` or ``"exact"``.
    cutoff
        Exact-mode cutoff ``λ_c`` in ``(0, 1]``.
    shared_transform
        One MLP for both branches.
    high
        High-branch filter: ``"complement"`` (spec, ``I − F_L``) or ``"band"`` (issue 45's
        band-pass reading, ``P − P⁸`` / an exact band projector).
    gate
        Adaptive gate (``False``: ablation ``Z = Z_L + Z_H``).
    decouple
        Two branches (``False``: coupled single-branch ablation).
    proj_dim
        Projection-head dimension.
    tau_c
        InfoNCE temperature.
    p_f, p_e
        Feature-masking and incidence-dropping rates of the views, in ``[0, 1)``.
    d_h
        Hierarchy-embedding dimension.
    tree
        Prototype-tree level sizes (leaves first).
    tau_h, rho, eta, kappa
        Energy temperature, tree elasticity, balance and consistency weights.
    lam
        Weight ``λ`` of ``L_hier`` (0: the no-energy ablation).
    balance
        ``"fixed"`` (use ``lam``) or ``"gradnorm"``.
    w_g, w_m
        Optional TriCL group- and membership-level weights.
    refresh_every
        Epochs between closed-form prototype refreshes (0: never).
    epochs, lr, weight_decay
        AdamW training budget.
    monitor_every
        Epochs between SFI/uniformity entries of ``history_`` (0: never).
    batch_size
        Nodes (and hyperedges) per epoch in the contrastive terms (``None``: all).
    device
        ``"cpu"`` or ``"cuda"``.

    Attributes
    ----------
    history_
        One dict per epoch: ``loss``, ``con``, ``hier``, ``lam`` (and ``sfi``, ``uniformity``).
    encoder_, head_, hier_map_, tree_
        The trained modules.

    Examples
    --------
    >>> from icml26.hyperdepth import make_hierarchical_hypergraph
    >>> data = make_hierarchical_hypergraph(n_per_fine=10, n_edges=60, dim=8)
    >>> model = HyperDepth(dim=16, proj_dim=16, d_h=8, epochs=3).fit(data, seed=0)
    >>> model.embed(data).shape, len(model.history_)
    ((120, 16), 3)
    """

    _parts = PARTS

    def __init__(
        self,
        *,
        dim: int = 256,
        K: int = 2,
        mode: str = "poly",
        cutoff: float = 0.5,
        shared_transform: bool = False,
        high: str = "complement",
        gate: bool = True,
        decouple: bool = True,
        proj_dim: int = 256,
        tau_c: float = 0.5,
        p_f: float = 0.2,
        p_e: float = 0.2,
        d_h: int = 64,
        tree: Sequence[int] = (16, 4),
        tau_h: float = 0.1,
        rho: float = 0.1,
        eta: float = 0.1,
        kappa: float = 0.0,
        lam: float = 1.0,
        balance: str = "fixed",
        w_g: float = 0.0,
        w_m: float = 0.0,
        refresh_every: int = 0,
        epochs: int = 300,
        lr: float = 1e-3,
        weight_decay: float = 1e-5,
        monitor_every: int = 0,
        batch_size: int | None = None,
        device: str = "cpu",
    ) -> None:
        self.dim, self.K, self.mode, self.cutoff = dim, K, mode, cutoff
        self.shared_transform, self.gate, self.decouple = shared_transform, gate, decouple
        self.high = high
        self.proj_dim, self.tau_c, self.p_f, self.p_e = proj_dim, tau_c, p_f, p_e
        self.d_h, self.tree, self.tau_h, self.rho, self.eta, self.kappa = (
            d_h,
            tree,
            tau_h,
            rho,
            eta,
            kappa,
        )
        self.lam, self.balance, self.w_g, self.w_m = lam, balance, w_g, w_m
        self.refresh_every, self.epochs, self.lr = refresh_every, epochs, lr
        self.weight_decay, self.monitor_every, self.device = weight_decay, monitor_every, device
        self.batch_size = batch_size
        self._check_params()

    def _check_params(self) -> None:
        owner = "HyperDepth"
        self._check_common()
        for name in ("dim", "proj_dim", "d_h"):
            check_positive_int(name, getattr(self, name), owner=owner, maximum=MAX_DIM)
        check_positive_int("K", self.K, owner=owner, maximum=MAX_ORDER)
        check_one_of("mode", self.mode, MODES, owner=owner)
        check_one_of("high", self.high, HIGH_READINGS, owner=owner)
        check_in_interval("cutoff", self.cutoff, low=0.0, high=1.0, closed="right", owner=owner)
        for name in ("tau_c", "tau_h"):
            check_in_interval(name, getattr(self, name), low=0.0, closed="neither", owner=owner)
        for name in ("rho", "eta", "kappa", "lam", "w_g", "w_m"):
            check_in_interval(name, getattr(self, name), low=0.0, owner=owner)
        check_tree_sizes(self.tree, owner, name="tree")
        check_one_of("balance", self.balance, ("fixed", "gradnorm"), owner=owner)
        check_positive_int("refresh_every", self.refresh_every, owner=owner, minimum=0)

    # ------------------------------------------------------------------ modules

    def _build(self, data: HypergraphData, hg: Hypergraph, x: torch.Tensor, seed: int) -> None:
        rng = numpy_generator(seed)
        seeds = [int(s) for s in rng.integers(2**62, size=4)]
        self.encoder_ = HyperDepthEncoder(
            x.shape[1],
            self.dim,
            self.K,
            self.mode,
            self.cutoff,
            self.shared_transform,
            gate=self.gate,
            decouple=self.decouple,
            high=self.high,
            seed=seeds[0],
        ).to(self.device)
        self.head_ = projection_head(self.dim, self.proj_dim, seed=seeds[1]).to(self.device)
        with seeded_default_init(seeds[2]):
            self.hier_map_ = nn.Linear(self.dim, self.d_h, bias=False).to(self.device)
            self.disc_ = nn.Linear(self.dim, self.dim, bias=False).to(self.device)
        self.tree_ = PrototypeTree(
            self.d_h, self.tree, self.tau_h, self.rho, self.eta, self.kappa
        ).to(self.device)
        self.clean_filters_ = self.encoder_.filters(hg, x.dtype)
        self.lam_ = float(self.lam)
        with torch.no_grad():
            u = self._hierarchy_embedding(self.encoder_(x, self.clean_filters_))
        self.tree_.init_from(u, seed=seeds[3])

    def _modules(self) -> list[nn.Module]:
        return [self.encoder_, self.head_, self.hier_map_, self.disc_, self.tree_]

    def _hierarchy_embedding(self, out: EncoderOutput) -> torch.Tensor:
        return F.normalize(self.hier_map_(out.z_low), dim=1)  # u = normalize(A_L z_L), (n, d_h)

    def _view_filters(self, view: GraphView) -> tuple[AbstractFilter, AbstractFilter]:
        if self.mode == "exact":
            return self.clean_filters_
        return poly_filters(view.P, self.K, self.high)

    def _parameter_groups(self) -> tuple[list[nn.Parameter], list[nn.Parameter]]:
        enc = self.encoder_
        con = [*self.head_.parameters(), *self.disc_.parameters()]
        con += list(enc.gate.parameters()) if enc.gate is not None else []
        high = enc.mlp_high if enc.mlp_high is not None else enc.mlp_low
        con += list(high.parameters()) if enc.decouple else []
        hier = [*enc.mlp_low.parameters(), *self.hier_map_.parameters(), *self.tree_.parameters()]
        return con, hier

    # ------------------------------------------------------------------ loss

    def losses(
        self,
        outputs: Sequence[EncoderOutput],
        views: Sequence[GraphView],
        generator: torch.Generator | None = None,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """``(L_con, L_hier)`` of two encoded views (after :meth:`initialize` or :meth:`fit`)."""
        owner = "HyperDepth.losses"
        if not hasattr(self, "in_dim_"):
            raise NotFittedError(
                f"{owner}: call initialize(data) or fit(data) before losses(outputs, views)."
            )
        for name, value, kind in (
            ("outputs", outputs, EncoderOutput),
            ("views", views, GraphView),
        ):
            if (
                not isinstance(value, Sequence)
                or len(value) != 2
                or not all(isinstance(v, kind) for v in value)
            ):
                raise TypeError(f"{owner}: {name} must be two {kind.__name__}s (one per view).")
        if generator is not None and not isinstance(generator, torch.Generator):
            raise TypeError(f"{owner}: generator must be a torch.Generator or None.")
        h = [self.head_(out.z_contrast) for out in outputs]  # (n, proj_dim) each
        idx = self._batch(h[0].shape[0], generator)
        l_con = info_nce(*(h if idx is None else [hv[idx] for hv in h]), self.tau_c)
        if self.w_g > 0 or self.w_m > 0:
            edges = [
                edge_means(out.z_contrast, v.node_idx, v.edge_idx, v.num_edges)
                for out, v in zip(outputs, views, strict=True)
            ]
            if self.w_g > 0:
                keep = (edges[0][1] > 1) & (edges[1][1] > 1)  # non-singleton in both views
                keep = self._batch_mask(keep, generator)
                g = [self.head_(e) for e, _ in edges]
                l_con = l_con + self.w_g * group_info_nce(g[0], g[1], keep, self.tau_c)
            if self.w_m > 0:
                weight = self.disc_.weight
                for out, v, (e, _) in zip(outputs, views, edges, strict=True):
                    m = membership_loss(
                        out.z_contrast, e, v.node_idx, v.edge_idx, weight, generator=generator
                    )
                    l_con = l_con + 0.5 * self.w_m * m
        u = [self._hierarchy_embedding(out) for out in outputs]
        l_hier = 0.5 * (self.tree_.loss(u[0]) + self.tree_.loss(u[1]))
        return l_con, l_hier

    def _loss(self, views: list[GraphView], generator: torch.Generator) -> dict[str, torch.Tensor]:
        outputs = [self.encoder_(v.x, self._view_filters(v)) for v in views]
        l_con, l_hier = self.losses(outputs, views, generator)
        if self.balance == "gradnorm" and self.lam > 0:
            con, hier = self._parameter_groups()
            g_con = torch.autograd.grad(l_con, con, retain_graph=True, allow_unused=True)
            g_hier = torch.autograd.grad(l_hier, hier, retain_graph=True, allow_unused=True)
            norm_con = torch.sqrt(sum((g**2).sum() for g in g_con if g is not None))
            norm_hier = torch.sqrt(sum((g**2).sum() for g in g_hier if g is not None))
            ratio = float(norm_con / norm_hier.clamp_min(1e-12))
            self.lam_ = 0.9 * self.lam_ + 0.1 * ratio
        lam = self.lam_ if self.balance == "gradnorm" else float(self.lam)
        loss = l_con + lam * l_hier
        return {"loss": loss, "con": l_con.detach(), "hier": l_hier.detach(), "lam": lam}

    def _after_step(self, epoch: int, x: torch.Tensor, hg: Hypergraph) -> None:
        if self.refresh_every and (epoch + 1) % self.refresh_every == 0:
            with torch.no_grad():
                u = self._hierarchy_embedding(self.encoder_(x, self.clean_filters_))
            self.tree_.closed_form_update(u)

    def _encode(self, x: torch.Tensor, hg: Hypergraph, part: str) -> torch.Tensor:
        out = self.encoder_(x, self.encoder_.filters(hg, x.dtype))
        if part == "low":
            return out.z_low
        if part == "high":
            return out.z_high
        if part == "concat":
            return torch.cat([out.z_low, out.z_high], dim=1)
        return out.z_fused


def gradient_conflict(model: HyperDepth, data: HypergraphData, seed: Seed = 0) -> float:
    """Cosine between ``∂L_con/∂M`` and ``∂L_hier/∂M`` on the transformed node signals (§2.6).

    ``M`` are the outputs of the branch MLPs of two feature-masked views, taken as leaves; with
    a shared transform the two fields live on the same ``M`` and, in exact mode, are orthogonal
    (``∂L_con/∂M ∈ range(Π_H)``, ``∂L_hier/∂M ∈ range(Π_L)``). Computed in float64 on copies of
    the modules; an unfitted ``model`` is initialised on ``data`` first (cosine at
    initialisation).

    Examples
    --------
    >>> from icml26.hyperdepth import make_hierarchical_hypergraph
    >>> data = make_hierarchical_hypergraph(n_per_fine=10, n_edges=60, dim=8)
    >>> model = HyperDepth(dim=8, proj_dim=8, d_h=4, mode="exact", shared_transform=True)
    >>> abs(gradient_conflict(model, data)) < 1e-8
    True
    """
    if not isinstance(model, HyperDepth):
        raise TypeError(
            f"gradient_conflict: model must be a HyperDepth; got {type(model).__name__}."
        )
    if not hasattr(model, "in_dim_"):
        model = copy.deepcopy(model).initialize(data, seed)
    rng = numpy_generator(seed)
    probe: Any = copy.copy(model)
    for name in ("encoder_", "head_", "hier_map_", "disc_", "tree_"):
        setattr(probe, name, copy.deepcopy(getattr(model, name)).double().eval())
    hg = data.hypergraph.with_self_loops()
    x = torch.from_numpy(data.x).double().to(model.device)
    filters = probe.encoder_.filters(hg, torch.float64)
    probe.clean_filters_ = filters
    outputs, leaves, views = [], [], []
    for _ in range(2):
        x_view = mask_features(x, model.p_f, rng)
        a, b = probe.encoder_.transform(x_view)
        a = a.detach().requires_grad_(True)
        b = a if b is a or probe.encoder_.mlp_high is None else b.detach().requires_grad_(True)
        leaves += [a] if b is a else [a, b]
        outputs.append(probe.encoder_.propagate(a, b, filters))
        views.append(_clean_view(x_view, hg))
    l_con, l_hier = probe.losses(outputs, views)
    g_con = torch.autograd.grad(l_con, leaves, retain_graph=True, allow_unused=True)
    g_hier = torch.autograd.grad(l_hier, leaves, allow_unused=True)
    flat_con = torch.cat([_flat(g, leaf) for g, leaf in zip(g_con, leaves, strict=True)])
    flat_hier = torch.cat([_flat(g, leaf) for g, leaf in zip(g_hier, leaves, strict=True)])
    denom = flat_con.norm() * flat_hier.norm()
    return float((flat_con @ flat_hier) / denom) if denom > 0 else 0.0


def _flat(grad: torch.Tensor | None, leaf: torch.Tensor) -> torch.Tensor:
    return torch.zeros(leaf.numel(), dtype=leaf.dtype) if grad is None else grad.reshape(-1)


def _clean_view(x: torch.Tensor, hg: Hypergraph) -> GraphView:
    node_idx, edge_idx = (torch.tensor(a) for a in hg.incidence_pairs)
    return GraphView(x, node_idx, edge_idx, hg.num_edges, hg.propagation(torch.float64))
