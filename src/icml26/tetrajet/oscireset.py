"""OsciReset: detect and reset oscillating FP4 weights (TetraJet-v2, arXiv:2510.27527, spec §2.4).

For a quantized weight w with elementwise scale s = s_O·s_b of the forward RTN quantization Q,
the latent is ℓ = w/s and the grid value g = Q(w)/s. The default distance-ratio detector, for steps
t ≥ S0 with r = (t - S0) mod P:

* r = 0: snapshot W_prev ← W, Ŵ_prev ← Q(W); D_W = D_Q = 0;
* 1 ≤ r ≤ T: D_Q += |Q(W) - Ŵ_prev|, D_W += |W - W_prev|, snapshots updated;
* r = T + 1: ρ = D_Q / D_W (0 where D_W = 0); W ← Q(W) where ρ ≥ τ.

ρ ≈ 1 for a weight drifting through bins; ρ ≫ 1 when Q(W) flips while W barely moves. The
memory-efficient detector tracks only the ``sample_percent`` % of elements closest to a bin edge
(largest |ℓ - g|/β(g)); the bin-edge ablation resets every P steps all elements with
|ℓ - g| > 0.495·β(g). Optimizer moments are never touched.

Deviations: the memory-efficient detector is gated by S0 like the others (the official code
starts it at step 0).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

from icml26.core import check_in_interval, check_one_of, check_positive_int, check_tensor
from icml26.tetrajet.convert import quantized_layers
from icml26.tetrajet.formats import _bin_width
from icml26.tetrajet.linear import NVFP4Linear

__all__ = ["DETECTORS", "OsciReset", "oscillation_stats"]

DETECTORS = ("dist_ratio", "dist_ratio_memeff", "bin_edge")


@dataclass
class _Track:
    columns: torch.Tensor  # FP4 input channels at the snapshot
    index: torch.Tensor | None  # tracked flat elements (memeff) or None (all)
    w_prev: torch.Tensor
    q_prev: torch.Tensor
    d_w: torch.Tensor
    d_q: torch.Tensor


def _grid(layer: NVFP4Linear) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """(W, Q(W), s) on the layer's FP4 columns, and those columns."""
    qt, columns = layer.fp4_weight()
    return layer.weight.detach()[:, columns], qt.dequantize(), qt.element_scales(), columns


class OsciReset:
    """Oscillation detection and reset for the NVFP4Linear layers of a model.

    Parameters
    ----------
    model
        Model converted by :func:`~icml26.tetrajet.convert.quantize_model_`.
    start_step
        S0, the first step of the schedule (official: ≈ 60-70 % of training).
    period
        P, steps between snapshots (official: 200 or 400).
    track_steps
        T, steps of accumulation after a snapshot (official: 50); must be < P.
    threshold
        τ, the distance ratio at or above which a weight is reset (official configs: 8).
    detector
        ``"dist_ratio"``, ``"dist_ratio_memeff"`` or ``"bin_edge"``.
    sample_percent
        Tracked share (%) for the memory-efficient detector.
    edge_fraction
        Bin-edge detector threshold as a fraction of the bin width.

    Examples
    --------
    >>> from icml26.tetrajet import quantize_model_
    >>> net = quantize_model_(nn.Sequential(nn.Linear(128, 128)), "tetrajet_v2", seed=0)
    >>> osc = OsciReset(net, start_step=0, period=4, track_steps=2)
    >>> [osc.step(t) is not None for t in range(4)]
    [False, False, False, True]
    """

    def __init__(
        self,
        model: nn.Module,
        *,
        start_step: int,
        period: int = 200,
        track_steps: int = 50,
        threshold: float = 8.0,
        detector: str = "dist_ratio",
        sample_percent: float = 10.0,
        edge_fraction: float = 0.495,
    ) -> None:
        owner = "OsciReset"
        self.start_step = check_positive_int("start_step", start_step, owner=owner, minimum=0)
        self.period = check_positive_int("period", period, owner=owner)
        self.track_steps = check_positive_int("track_steps", track_steps, owner=owner)
        if self.track_steps + 1 >= self.period:
            raise ValueError(
                f"{owner}: track_steps must be < period - 1; got {track_steps!r} (int) "
                f"with period={period!r}."
            )
        self.threshold = check_in_interval("threshold", threshold, low=0.0, owner=owner)
        self.detector = check_one_of("detector", detector, DETECTORS, owner=owner)
        self.sample_percent = check_in_interval(
            "sample_percent", sample_percent, low=0.0, high=100.0, closed="right", owner=owner
        )
        self.edge_fraction = check_in_interval(
            "edge_fraction", edge_fraction, low=0.0, high=0.5, owner=owner
        )
        self.layers = quantized_layers(model)
        if not self.layers:
            raise ValueError(f"{owner}: model must contain NVFP4Linear layers; got none.")
        self._tracks: dict[int, _Track] = {}

    def step(self, t: int) -> dict[str, float] | None:
        """Advance after optimizer step ``t``; on a reset step return ``n_reset``/``frac_reset``."""
        t = check_positive_int("t", t, owner="OsciReset.step", minimum=0)
        if t < self.start_step:
            return None
        r = (t - self.start_step) % self.period
        if self.detector == "bin_edge":
            return self._reset_edges() if r == 0 else None
        if r == 0:
            self._snapshot()
        elif r <= self.track_steps and self._tracks:
            self._accumulate()
        elif r == self.track_steps + 1 and self._tracks:
            return self._reset_ratios()
        return None

    def _snapshot(self) -> None:
        self._tracks = {}
        for i, layer in enumerate(self.layers):
            w, q, s, columns = _grid(layer)
            index = None
            if self.detector == "dist_ratio_memeff":
                g = q / s
                closeness = (w / s - g).abs() / _bin_width(g.abs())  # |ℓ - g| / β(g)
                count = max(1, round(closeness.numel() * self.sample_percent / 100))
                index = torch.topk(closeness.flatten(), count).indices
                w, q = w.flatten()[index], q.flatten()[index]
            zeros = torch.zeros_like(w)
            self._tracks[i] = _Track(columns, index, w.clone(), q, zeros, zeros.clone())

    def _accumulate(self) -> None:
        for i, track in list(self._tracks.items()):
            w, q, _, columns = _grid(self.layers[i])
            if not torch.equal(columns, track.columns):  # channels re-calibrated: drop
                del self._tracks[i]
                continue
            if track.index is not None:
                w, q = w.flatten()[track.index], q.flatten()[track.index]
            track.d_q += (q - track.q_prev).abs()
            track.d_w += (w - track.w_prev).abs()
            track.w_prev, track.q_prev = w.clone(), q

    def _reset_ratios(self) -> dict[str, float]:
        n_reset, n_total = 0, 0
        for i, layer in enumerate(self.layers):
            w, q, _, columns = _grid(layer)
            n_total += w.numel()
            track = self._tracks.get(i)
            if track is None or not torch.equal(columns, track.columns):
                continue
            rho = torch.where(track.d_w > 0, track.d_q / track.d_w, 0.0)
            mask = rho >= self.threshold
            if track.index is not None:
                full = torch.zeros(w.numel(), dtype=torch.bool, device=w.device)
                full[track.index] = mask
                mask = full.reshape(w.shape)
            n_reset += self._apply(layer, w, q, mask, columns)
        self._tracks = {}
        return {"n_reset": float(n_reset), "frac_reset": n_reset / max(n_total, 1)}

    def _reset_edges(self) -> dict[str, float]:
        n_reset, n_total = 0, 0
        for layer in self.layers:
            w, q, s, columns = _grid(layer)
            g = q / s
            mask = (w / s - g).abs() > self.edge_fraction * _bin_width(g.abs())
            n_total += w.numel()
            n_reset += self._apply(layer, w, q, mask, columns)
        return {"n_reset": float(n_reset), "frac_reset": n_reset / max(n_total, 1)}

    @staticmethod
    def _apply(
        layer: NVFP4Linear, w: torch.Tensor, q: torch.Tensor, mask: torch.Tensor, cols: torch.Tensor
    ) -> int:
        # W ← Q(W) on the mask: the master weight moves exactly onto its grid value.
        with torch.no_grad():
            layer.weight[:, cols] = torch.where(mask, q, w)
        return int(mask.sum())


def oscillation_stats(
    weights: torch.Tensor,
    quantized: torch.Tensor,
    bin_widths: torch.Tensor,
    *,
    window: int = 100,
    min_flips: int = 4,
) -> dict[str, float]:
    """Share of weights that oscillate: ≥ ``min_flips`` grid changes in a window while Σ|Δw| < β/2.

    Parameters
    ----------
    weights, quantized
        Trajectories of the master weights and their quantized values, shape ``(steps, n)``.
    bin_widths
        Bin widths β·s in weight units, shape ``(n,)``.
    window
        Window length in steps (the spec uses 100); consecutive full windows are averaged (a
        trajectory shorter than one window is one window) and a trailing partial one is dropped.
    min_flips
        Grid-value changes that count as oscillation.

    Returns
    -------
    dict
        ``fraction`` (mean over windows of the oscillating share) and ``mean_flips``.

    Raises
    ------
    ValueError
        If the shapes disagree or fewer than two steps are given.

    Examples
    --------
    >>> q = torch.tensor([[0.0], [0.5], [0.0], [0.5], [0.0]])
    >>> w = torch.tensor([[0.24], [0.26], [0.24], [0.26], [0.24]])
    >>> oscillation_stats(w, q, torch.tensor([0.5]))["fraction"]
    1.0
    """
    owner = "oscillation_stats"
    check_tensor("weights", weights, owner=owner, finite=True)
    check_tensor("quantized", quantized, owner=owner, finite=True)
    check_tensor("bin_widths", bin_widths, owner=owner)  # NaN: no FP4 bin (never counted)
    window = check_positive_int("window", window, owner=owner, minimum=2)
    min_flips = check_positive_int("min_flips", min_flips, owner=owner)
    if weights.shape != quantized.shape or weights.dim() != 2 or weights.shape[0] < 2:
        raise ValueError(
            f"{owner}: weights and quantized must share a (steps >= 2, n) shape; got "
            f"{tuple(weights.shape)} and {tuple(quantized.shape)}."
        )
    if bin_widths.shape != weights.shape[1:]:
        raise ValueError(
            f"{owner}: bin_widths must have shape ({weights.shape[1]},); "
            f"got {tuple(bin_widths.shape)}."
        )
    fractions, flips_all = [], []
    n_diffs = weights.shape[0] - 1
    for start in range(0, max(n_diffs - window, 0) + 1, window):
        w, q = weights[start : start + window + 1], quantized[start : start + window + 1]
        flips = (q[1:] != q[:-1]).sum(0)
        moved = (w[1:] - w[:-1]).abs().sum(0)
        fractions.append(((flips >= min_flips) & (moved < bin_widths / 2)).float().mean())
        flips_all.append(flips.float().mean())
    return {
        "fraction": float(torch.stack(fractions).mean()),
        "mean_flips": float(torch.stack(flips_all).mean()),
    }
