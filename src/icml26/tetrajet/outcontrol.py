"""OutControl's outlier channels (TetraJet-v2, arXiv:2510.27527, spec §2.3b).

After ``record_start`` steps of plain FP4 training, every NVFP4Linear accumulates
n_c += ‖X[:, c]‖₂ for ``record_iters`` steps; then the top-|C| channels by n_c are frozen as the
layer's MXFP8 channels. |C| = round(ratio·K) (the accuracy runs of the paper) or the kernel's
min(⌊K/128⌋·128, ⌈⌊ratio·K⌋/128⌉·128).
"""

from __future__ import annotations

import math

import torch
from torch import nn

from icml26.core import check_in_interval, check_one_of, check_positive_int
from icml26.tetrajet.convert import quantized_layers

__all__ = ["OutlierChannelCalibrator", "outlier_channel_count"]

COUNT_RULES = ("paper", "kernel")


def outlier_channel_count(k: int, ratio: float, rounding: str = "paper") -> int:
    """|C| for K input channels: ``"paper"`` round(ratio·K), ``"kernel"`` whole 128-groups.

    Examples
    --------
    >>> outlier_channel_count(128, 0.1), outlier_channel_count(1024, 0.1, "kernel")
    (13, 128)
    """
    k = check_positive_int("k", k, owner="outlier_channel_count")
    ratio = check_in_interval("ratio", ratio, low=0.0, high=1.0, owner="outlier_channel_count")
    check_one_of("rounding", rounding, COUNT_RULES, owner="outlier_channel_count")
    if rounding == "paper":
        return min(k, math.floor(ratio * k + 0.5))  # round half up
    return min(k // 128 * 128, math.ceil(math.floor(ratio * k) / 128) * 128)


class OutlierChannelCalibrator:
    """Select and freeze each quantized layer's MXFP8 outlier channels on a step schedule.

    Parameters
    ----------
    model
        A model whose Linears were converted by :func:`~icml26.tetrajet.convert.quantize_model_`.
    ratio
        Share of channels kept in MXFP8 (official configs: 0.1).
    record_start
        First step whose forward pass is recorded (official: 501 of 12,505).
    record_iters
        Number of recorded steps (official: 50).
    rounding
        |C| rule, ``"paper"`` or ``"kernel"`` (see :func:`outlier_channel_count`).

    Examples
    --------
    >>> from icml26.tetrajet import quantize_model_
    >>> net = quantize_model_(nn.Sequential(nn.Linear(128, 128)), "tetrajet_v2", seed=0)
    >>> cal = OutlierChannelCalibrator(net, record_start=0, record_iters=1)
    >>> _ = net(torch.randn(4, 128)); cal.step(0)
    True
    >>> net[0].outlier_channels.numel()
    13
    """

    def __init__(
        self,
        model: nn.Module,
        *,
        ratio: float = 0.1,
        record_start: int = 501,
        record_iters: int = 50,
        rounding: str = "paper",
    ) -> None:
        owner = "OutlierChannelCalibrator"
        self.ratio = check_in_interval("ratio", ratio, low=0.0, high=1.0, owner=owner)
        self.record_start = check_positive_int("record_start", record_start, owner=owner, minimum=0)
        self.record_iters = check_positive_int("record_iters", record_iters, owner=owner)
        self.rounding = check_one_of("rounding", rounding, COUNT_RULES, owner=owner)
        if not isinstance(model, nn.Module):
            raise TypeError(f"{owner}: model must be an nn.Module; got {type(model).__name__}.")
        self.layers = quantized_layers(model)
        if not self.layers:
            raise ValueError(f"{owner}: model must contain NVFP4Linear layers; got none.")
        self.frozen_ = False
        self._set_recording(record_start == 0)

    def _set_recording(self, on: bool) -> None:
        for layer in self.layers:
            layer.recording = on

    def step(self, t: int) -> bool:
        """Advance after optimizer step ``t``; returns ``True`` on the step that froze C."""
        t = check_positive_int("t", t, owner="OutlierChannelCalibrator.step", minimum=0)
        if self.frozen_:
            return False
        if t + 1 == self.record_start:
            self._set_recording(True)
        if t == self.record_start + self.record_iters - 1:
            self._set_recording(False)
            for layer in self.layers:
                count = outlier_channel_count(layer.in_features, self.ratio, self.rounding)
                chosen = torch.topk(layer.channel_norms, count).indices.sort().values
                layer.outlier_channels = chosen
            self.frozen_ = True
            return True
        return False
