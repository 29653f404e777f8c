"""The shared two-view contrastive training loop and its augmented views (spec §2.3, §2.5).

HyperDepth (ICML 2026; paper not found). Every epoch draws two views — feature masking (each
feature column dropped with probability ``p_f``, the same mask for all nodes) and incidence
dropping (each node–hyperedge membership with probability ``p_e``; self-loops never dropped) —
each with its own propagation ``P``; the trainer's loss is computed on both and one AdamW step is
taken. :class:`AbstractContrastiveTrainer` holds that loop and ``embed``; HyperDepth and the
baselines fill in the modules and the loss.

Deviations: AdamW with a constant learning rate (no schedule is named in the spec); a view keeps
hyperedge indices aligned with the clean graph (emptied hyperedges get a zero ``D_e^{-1}``), so
TriCL's group term can match hyperedges across views.
"""

from __future__ import annotations

import abc
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from sklearn.base import BaseEstimator

from icml26.core import (
    check_in_interval,
    check_one_of,
    check_positive_int,
    check_tensor,
    numpy_generator,
)
from icml26.core.progress import Progress, progress_reporter
from icml26.core.training import adamw, optimizer_step
from icml26.core.validation import Seed, check_device, torch_generator
from icml26.hyperdepth.data import HypergraphData, mask_features
from icml26.hyperdepth.hypergraph import (
    Hypergraph,
    drop_incidence_mask,
    propagation_from_incidence,
    scipy_to_torch,
)
from icml26.hyperdepth.metrics import semantic_flattening_index, uniformity

__all__ = ["AbstractContrastiveTrainer", "GraphView", "NotFittedError", "make_view"]

PARTS = ("fused", "low", "high", "concat")


class NotFittedError(ValueError):
    """A trainer was used before ``fit``."""


@dataclass(frozen=True)
class GraphView:
    """One augmented view: masked features, the kept incidences and their propagation.

    Attributes
    ----------
    x
        Features ``(n, f)`` after column masking.
    node_idx, edge_idx
        Kept incidences (hyperedge ids of the clean graph).
    num_edges
        Hyperedges of the clean graph (some may be empty in the view).
    P
        Sparse ``D_v^{-1/2} H W D_e^{-1} Hᵀ D_v^{-1/2}`` of the view.
    """

    x: torch.Tensor
    node_idx: torch.Tensor
    edge_idx: torch.Tensor
    num_edges: int
    P: torch.Tensor


def make_view(
    x: torch.Tensor,
    hg: Hypergraph,
    p_f: float,
    p_e: float,
    rng: np.random.Generator,
    *,
    device: str = "cpu",
) -> GraphView:
    """One view of ``(x, hg)``: feature masking with ``p_f``, incidence dropping with ``p_e``.

    ``x`` is a floating tensor ``(n, f)`` with one row per node of ``hg``.
    """
    owner = "make_view"
    if not isinstance(hg, Hypergraph):
        raise TypeError(f"{owner}: hg must be a Hypergraph; got {type(hg).__name__}.")
    x = check_tensor("x", x, ndim=2, shape=(hg.num_nodes, None), owner=owner)
    check_device("device", device, owner=owner)
    x_view = mask_features(x, p_f, rng)
    keep = drop_incidence_mask(hg, p_e, rng)
    node_idx, edge_idx = (a[keep] for a in hg.incidence_pairs)
    P = propagation_from_incidence(node_idx, edge_idx, hg.num_nodes, hg.num_edges, hg.weights)
    return GraphView(
        x_view.to(device),
        torch.from_numpy(node_idx).to(device),
        torch.from_numpy(edge_idx).to(device),
        hg.num_edges,
        scipy_to_torch(P, x.dtype).to(device),
    )


class AbstractContrastiveTrainer(BaseEstimator, abc.ABC):
    """Two-view contrastive training on a hypergraph, scikit-learn style.

    Subclasses keep their hyper-parameters as constructor keywords (so ``get_params`` and
    ``sklearn.base.clone`` work) and implement :meth:`_build`, :meth:`_loss` and :meth:`_encode`.
    Common hyper-parameters: ``epochs``, ``lr``, ``weight_decay``, ``p_f``, ``p_e``,
    ``monitor_every`` (epochs between SFI/uniformity entries in ``history_``; 0: never),
    ``batch_size`` (``None``: contrast all nodes; an int: that many random nodes/hyperedges per
    epoch, TriCL's large-graph setting) and ``device``.
    """

    _parts: tuple[str, ...] = ("fused",)

    @abc.abstractmethod
    def _build(self, data: HypergraphData, hg: Hypergraph, x: torch.Tensor, seed: int) -> None:
        """Create the modules (seeded by ``seed``) and store them as attributes ending in ``_``."""

    @abc.abstractmethod
    def _loss(self, views: list[GraphView], generator: torch.Generator) -> dict[str, torch.Tensor]:
        """The training loss on two views: ``{"loss": total, other named terms...}``."""

    @abc.abstractmethod
    def _encode(self, x: torch.Tensor, hg: Hypergraph, part: str) -> torch.Tensor:
        """Embeddings of the clean graph (eval mode, no grad)."""

    @abc.abstractmethod
    def _modules(self) -> list[torch.nn.Module]:
        """The trainable modules (for the optimizer and train/eval switching)."""

    def _batch(self, n: int, generator: torch.Generator | None) -> torch.Tensor | None:
        """Random rows for the contrastive terms (``batch_size`` of them), or ``None`` for all."""
        if self.batch_size is None or generator is None or n <= self.batch_size:
            return None
        return torch.randperm(n, generator=generator)[: self.batch_size].to(self.device)

    def _batch_mask(self, keep: torch.Tensor, generator: torch.Generator | None) -> torch.Tensor:
        """``keep`` restricted to at most ``batch_size`` random entries."""
        idx = self._batch(int(keep.shape[0]), generator)
        if idx is None:
            return keep
        chosen = torch.zeros_like(keep)
        chosen[idx] = True
        return keep & chosen

    def _after_step(self, epoch: int, x: torch.Tensor, hg: Hypergraph) -> None:
        """Hook after each optimizer step (HyperDepth's prototype refresh)."""

    # ------------------------------------------------------------------ validation

    def _check_common(self) -> None:
        owner = type(self).__name__
        check_positive_int("epochs", self.epochs, owner=owner, minimum=0)
        check_in_interval("lr", self.lr, low=0.0, closed="neither", owner=owner)
        check_in_interval("weight_decay", self.weight_decay, low=0.0, owner=owner)
        check_in_interval("p_f", self.p_f, low=0.0, high=1.0, closed="left", owner=owner)
        check_in_interval("p_e", self.p_e, low=0.0, high=1.0, closed="left", owner=owner)
        check_positive_int("monitor_every", self.monitor_every, owner=owner, minimum=0)
        check_one_of("device", self.device, ("cpu", "cuda"), owner=owner)
        if self.batch_size is not None:
            check_positive_int("batch_size", self.batch_size, owner=owner, minimum=2)

    def _check_data(self, data: Any, method: str) -> HypergraphData:
        if not isinstance(data, HypergraphData):
            raise TypeError(
                f"{type(self).__name__}.{method}: data must be a HypergraphData; "
                f"got {type(data).__name__}."
            )
        return data

    # ------------------------------------------------------------------ public API

    def initialize(self, data: HypergraphData, seed: Seed = 0) -> AbstractContrastiveTrainer:
        """Build the modules for ``data`` without training (what ``fit`` does before epoch 1)."""
        self._check_params()
        data = self._check_data(data, "initialize")
        rng = numpy_generator(seed)
        hg = data.hypergraph.with_self_loops()
        x = torch.from_numpy(data.x).to(self.device)
        self._build(data, hg, x, int(rng.integers(2**62)))
        self.rng_ = rng
        self.in_dim_ = data.x.shape[1]
        self.history_: list[dict[str, float]] = []
        return self

    def fit(
        self, data: HypergraphData, seed: Seed = 0, progress: Progress = None
    ) -> AbstractContrastiveTrainer:
        """Train on ``data`` for ``epochs`` epochs; returns ``self``.

        Every random draw (initialisation, views, negatives) comes from ``seed``. ``progress``
        is ``None``/``False`` (silent), ``True`` (a rich bar) or a callable
        ``progress(done, total, metrics)`` called after every epoch (:mod:`icml26.core.progress`).

        Raises
        ------
        icml26.core.NonFiniteLossError
            When the loss of an epoch is NaN or infinite (before that update; lower ``lr``).
        """
        self.initialize(data, seed)
        rng = self.rng_
        generator = torch_generator(int(rng.integers(2**62)))
        hg = data.hypergraph.with_self_loops()
        x = torch.from_numpy(data.x).to(self.device)
        params = [p for module in self._modules() for p in module.parameters()]
        optimizer = adamw(params, lr=self.lr, weight_decay=self.weight_decay)
        owner = f"{type(self).__name__}.fit"
        with progress_reporter(progress, self.epochs, owner) as report:
            for epoch in range(self.epochs):
                for module in self._modules():
                    module.train()
                views = [
                    make_view(x, hg, self.p_f, self.p_e, rng, device=self.device) for _ in "12"
                ]
                terms = self._loss(views, generator)
                loss = optimizer_step(terms["loss"], optimizer, step=epoch, owner=owner)
                self._after_step(epoch, x, hg)
                record = {"epoch": float(epoch + 1)}
                record.update({k: float(torch.as_tensor(v).detach()) for k, v in terms.items()})
                last = epoch + 1 == self.epochs
                if self.monitor_every and ((epoch + 1) % self.monitor_every == 0 or last):
                    record.update(self._monitor(data, x, hg))
                self.history_.append(record)
                report(epoch + 1, loss=loss)
        return self

    def _monitor(self, data: HypergraphData, x: torch.Tensor, hg: Hypergraph) -> dict[str, float]:
        z = self._embed_tensor(x, hg, "fused")
        out = {"uniformity": uniformity(z)}
        if data.y is not None and data.y_coarse is not None:
            out["sfi"] = semantic_flattening_index(z, data.y, data.y_coarse)
        return out

    def _embed_tensor(self, x: torch.Tensor, hg: Hypergraph, part: str) -> np.ndarray:
        for module in self._modules():
            module.eval()
        with torch.no_grad():
            z = self._encode(x, hg, part)
        return z.detach().cpu().numpy().astype(np.float64)

    def embed(self, data: HypergraphData, part: str = "fused") -> np.ndarray:
        """Embeddings of ``data``'s clean graph (with self-loops), eval mode, shape ``(n, ·)``.

        Raises
        ------
        NotFittedError
            If called before ``fit`` (a ``ValueError``).
        """
        owner = type(self).__name__
        if not hasattr(self, "in_dim_"):
            raise NotFittedError(
                f"{owner}: this instance is not fitted yet; call fit(data) before embed."
            )
        check_one_of("part", part, self._parts, owner=f"{owner}.embed")
        data = self._check_data(data, "embed")
        if data.x.shape[1] != self.in_dim_:
            raise ValueError(
                f"{owner}.embed: data.x must have {self.in_dim_} feature columns (as in fit); "
                f"got {data.x.shape[1]}."
            )
        x = torch.from_numpy(data.x).to(self.device)
        return self._embed_tensor(x, data.hypergraph.with_self_loops(), part)

    @abc.abstractmethod
    def _check_params(self) -> None:
        """Validate the hyper-parameters (called by ``__init__`` and ``fit``)."""
