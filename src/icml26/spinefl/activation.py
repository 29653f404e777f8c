"""Per-neuron firing frequencies recorded with forward hooks (spec §2.3).

Neuron j of a Linear layer is active on input x if its post-ReLU output exceeds theta
(a_{l,j}(x) = 1[h_{l,j}(x) > theta]); a conv channel counts the fraction of spatial positions
above theta. During local training a client accumulates over every forward pass

    f_{c,l,j} = sum_x a_{l,j}(x) / (number of samples processed)   in [0, 1].

Deviations: none beyond the spec's inferred definition (the paper's exact activation statistic is
unknown); theta defaults to 0 (ReLU firing).
"""

from __future__ import annotations

from typing import final

import numpy as np
import torch

from icml26.core import check_in_interval
from icml26.spinefl.models import AbstractSliceableModel

__all__ = ["ActivationRecorder"]


@final
class ActivationRecorder:
    """Context manager: forward hooks on every prunable layer's activation -> firing frequency.

    Parameters
    ----------
    model
        A sliceable model (its :meth:`activation_modules` are hooked).
    threshold
        theta: a unit fires when its post-nonlinearity output exceeds it.

    Examples
    --------
    >>> from icml26.spinefl import SliceableMLP
    >>> net = SliceableMLP([2, 3, 2])
    >>> with ActivationRecorder(net) as rec:
    ...     _ = net(torch.randn(5, 2, generator=torch.Generator().manual_seed(0)))
    >>> rec.n_samples, rec.frequencies()["layers.0"].shape
    (5, (3,))
    """

    def __init__(self, model: AbstractSliceableModel, *, threshold: float = 0.0) -> None:
        if not isinstance(model, AbstractSliceableModel):
            raise TypeError(
                "ActivationRecorder: model must be an AbstractSliceableModel; "
                f"got {type(model).__name__}."
            )
        self.model = model
        self.threshold = check_in_interval("threshold", threshold, owner="ActivationRecorder")
        self._counts: dict[str, torch.Tensor] = {}
        self._samples: dict[str, int] = {}
        self._handles: list[torch.utils.hooks.RemovableHandle] = []

    def _hook(self, layer: str):
        def record(module: torch.nn.Module, inputs: object, output: torch.Tensor) -> None:
            with torch.no_grad():
                fired = output.detach() > self.threshold  # (batch, N) or (batch, C, H, W)
                if fired.dim() > 2:
                    # a channel's activity: the fraction of its positions that fire
                    total = fired.flatten(2).to(torch.float64).mean(dim=2).sum(dim=0)
                else:
                    total = fired.sum(dim=0, dtype=torch.float64)  # (N,) exact counts
                if layer in self._counts:
                    self._counts[layer] += total
                else:
                    self._counts[layer] = total
            self._samples[layer] = self._samples.get(layer, 0) + output.shape[0]

        return record

    def __enter__(self) -> ActivationRecorder:
        for layer, module in self.model.activation_modules().items():
            self._handles.append(module.register_forward_hook(self._hook(layer)))
        return self

    def __exit__(self, *exc: object) -> None:
        for handle in self._handles:
            handle.remove()
        self._handles = []

    @property
    def n_samples(self) -> int:
        """Samples seen by the first prunable layer."""
        return max(self._samples.values(), default=0)

    def frequencies(self) -> dict[str, np.ndarray]:
        """f_l in [0, 1]^{N_l} per prunable layer (zeros for a layer that saw no sample)."""
        sizes = self.model.layer_sizes()
        out = {}
        for layer, N in sizes.items():
            seen = self._samples.get(layer, 0)
            out[layer] = self._counts[layer].cpu().numpy() / seen if seen else np.zeros(N)
        return out
