"""Networks that know how to be sliced into exact-shape sub-networks (spec §2.5).

SpineFL ("Required Spine Optional Limbs: Heterogeneous Federated Learning via Backbone-sharing
and Activation-guided Selection", ICML 2026; no arXiv id found) trains, on each client, the
sub-network made of the neurons in index sets S_l (one per prunable layer l, the output units of
a Linear layer or the output channels of a Conv layer). A Linear weight W (N_l x N_{l-1}) becomes
W[S_l][:, S_{l-1}] and its bias b[S_l], with S_0 = all inputs and S_{L+1} = all classes; a Conv
weight becomes weight[S_l][:, S_{l-1}]; the first FC layer after a flatten keeps the input columns
j * (H*W) + p of the kept channels j (channel-major), as in HeteroFL/FedRolex.

Deviations: the CNN uses HeteroFL's static BatchNorm (batch statistics at train and test time,
affine parameters sliced by S), and no output scaler (HeteroFL's 1/r) is applied. Residual
networks (shared index sets across a residual stage) are not built.
"""

from __future__ import annotations

import abc
import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import final

import numpy as np
import torch
from torch import nn

from icml26.core import (
    Seed,
    check_device,
    check_in_interval,
    check_one_of,
    check_positive_int,
    check_tensor,
)
from icml26.core.weights import seeded_default_init

__all__ = [
    "AbstractSliceableModel",
    "SliceAxis",
    "SliceableCNN",
    "SliceableConvNet",
    "SliceableMLP",
    "check_index_sets",
    "extract_submodel",
    "sub_width",
    "submodel_param_index",
]


def sub_width(N: int, ratio: float) -> int:
    """Sub-model width n_l(r) = max(1, ceil(r * N_l)) (HeteroFL/FedRolex rounding, spec §2.1).

    ``r * N`` is rounded to 9 decimals first so that e.g. 0.1 * 30 gives 3, not 4.

    Examples
    --------
    >>> sub_width(256, 0.25), sub_width(10, 0.01), sub_width(30, 0.1)
    (64, 1, 3)
    """
    N = check_positive_int("N", N, owner="sub_width")
    ratio = check_in_interval("ratio", ratio, low=0.0, high=1.0, closed="right", owner="sub_width")
    return max(1, math.ceil(round(ratio * N, 9)))


@dataclass(frozen=True)
class SliceAxis:
    """How one dimension of a parameter is sliced.

    Parameters
    ----------
    layer
        The prunable layer whose index set selects along this dimension (``None``: keep all).
    repeat
        Entries per neuron along this dimension: neuron j owns entries j * repeat + p,
        p < repeat (the flattened spatial positions of a channel feeding a Linear layer).
    """

    layer: str | None = None
    repeat: int = 1


_KEEP = SliceAxis()
MAX_WIDTH = 2**16  # widest layer (units or channels) of a sliceable model
MAX_PARAMS = 2**28  # most weights of a sliceable model (1 GiB of float32)


def _check_input(x: object, shape: tuple, weight: torch.Tensor, owner: str) -> None:
    """A floating input of the model's shape and parameter dtype."""
    check_tensor("x", x, shape=shape, owner=owner)
    if x.dtype != weight.dtype:
        raise TypeError(
            f"{owner}: x must have the parameters' dtype {weight.dtype}; got {x.dtype}."
        )


def _check_widths(widths: object, layers: Sequence[str], owner: str) -> list[int]:
    """One width in [1, MAX_WIDTH] for every prunable layer, in forward order."""
    if not isinstance(widths, Mapping) or set(layers) - set(widths):
        raise TypeError(f"{owner}: widths must map every prunable layer {list(layers)} to a width.")
    return [
        check_positive_int(f"widths[{name!r}]", widths[name], owner=owner, maximum=MAX_WIDTH)
        for name in layers
    ]


class AbstractSliceableModel(nn.Module, abc.ABC):
    """A network whose prunable layers can be sliced by index sets.

    Subclasses declare their prunable layers (forward order), the size of each, how each
    parameter is sliced (:class:`SliceAxis` per dimension), the module whose output is the
    post-nonlinearity activation of each prunable layer, and how to build the same architecture
    at other widths.
    """

    @abc.abstractmethod
    def prunable_layers(self) -> list[str]:
        """Names of the prunable layers (modules with a ``weight``), in forward order."""

    @abc.abstractmethod
    def layer_sizes(self) -> dict[str, int]:
        """N_l for every prunable layer."""

    @abc.abstractmethod
    def param_axes(self) -> dict[str, tuple[SliceAxis, ...]]:
        """For every parameter name, one :class:`SliceAxis` per dimension."""

    @abc.abstractmethod
    def activation_modules(self) -> dict[str, nn.Module]:
        """For every prunable layer, the module whose output is its post-ReLU activation."""

    @abc.abstractmethod
    def with_widths(self, widths: Mapping[str, int], *, device: str = "meta") -> nn.Module:
        """The same architecture with ``widths[l]`` neurons in prunable layer l (empty weights)."""


@final
class SliceableMLP(AbstractSliceableModel):
    """ReLU MLP ``dims[0] -> dims[1] -> ... -> dims[-1]`` whose hidden layers are prunable.

    Parameters
    ----------
    dims
        Layer sizes, at least ``[d_in, d_hidden, n_classes]``.
    seed
        Seed of torch's default initialisation (the global RNG is left untouched).
    device
        Where the parameters are created; ``"meta"`` builds an empty shell (no initialisation).

    Examples
    --------
    >>> net = SliceableMLP([4, 8, 8, 3])
    >>> net.prunable_layers(), net(torch.zeros(2, 4)).shape
    (['layers.0', 'layers.1'], torch.Size([2, 3]))
    """

    def __init__(self, dims: Sequence[int], *, seed: Seed = 0, device: str = "cpu") -> None:
        super().__init__()
        owner = "SliceableMLP"
        if isinstance(dims, str) or not isinstance(dims, Sequence):
            raise TypeError(f"{owner}: dims must be a list of layer sizes; got {dims!r}.")
        dims = [check_positive_int("dims[i]", d, owner=owner, maximum=MAX_WIDTH) for d in dims]
        if sum(a * b for a, b in itertools.pairwise(dims)) > MAX_PARAMS:
            raise ValueError(f"{owner}: dims {dims} make more than {MAX_PARAMS} weights.")
        if len(dims) < 3:
            raise ValueError(
                f"SliceableMLP: dims must list at least 3 sizes (input, hidden, classes); "
                f"got {dims!r}."
            )
        self.dims = tuple(dims)
        self._build(check_device("device", device, owner=owner), seed)

    def _build(self, device: str, seed: Seed) -> None:
        def make() -> None:
            self.layers = nn.ModuleList(
                nn.Linear(a, b, device=device)
                for a, b in zip(self.dims[:-1], self.dims[1:], strict=True)
            )
            self.acts = nn.ModuleList(nn.ReLU() for _ in self.dims[1:-1])

        if device == "meta":
            make()
        else:
            with seeded_default_init(seed):
                make()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Logits ``(batch, n_classes)`` of inputs ``(batch, dims[0])``."""
        _check_input(x, (None, self.dims[0]), self.layers[0].weight, "SliceableMLP")
        for linear, act in zip(self.layers[:-1], self.acts, strict=True):
            x = act(linear(x))  # (batch, N_l)
        return self.layers[-1](x)

    def prunable_layers(self) -> list[str]:
        """``["layers.0", ..., "layers.{L-2}"]``: every hidden Linear layer."""
        return [f"layers.{i}" for i in range(len(self.dims) - 2)]

    def layer_sizes(self) -> dict[str, int]:
        """Hidden widths by layer name."""
        return {f"layers.{i}": d for i, d in enumerate(self.dims[1:-1])}

    def param_axes(self) -> dict[str, tuple[SliceAxis, ...]]:
        """Rows by the layer's own index set, columns by the previous layer's."""
        hidden = self.prunable_layers()
        axes = {}
        for i in range(len(self.dims) - 1):
            out = SliceAxis(hidden[i]) if i < len(hidden) else _KEEP
            inp = SliceAxis(hidden[i - 1]) if i > 0 else _KEEP
            axes[f"layers.{i}.weight"] = (out, inp)
            axes[f"layers.{i}.bias"] = (out,)
        return axes

    def activation_modules(self) -> dict[str, nn.Module]:
        """The ReLU after each hidden layer."""
        return {f"layers.{i}": act for i, act in enumerate(self.acts)}

    def with_widths(self, widths: Mapping[str, int], *, device: str = "meta") -> SliceableMLP:
        """An MLP with hidden widths ``widths`` (an empty shell on ``"meta"`` by default)."""
        hidden = _check_widths(widths, self.prunable_layers(), "SliceableMLP.with_widths")
        return SliceableMLP([self.dims[0], *hidden, self.dims[-1]], device=device)


@final
class SliceableCNN(AbstractSliceableModel):
    """conv-sBN-ReLU x 2, max-pool 2, FC-ReLU, FC (spec §5.2); convs and hidden FC prunable.

    Parameters
    ----------
    in_channels, image_size
        Input shape ``(batch, in_channels, image_size, image_size)``; ``image_size`` even.
    channels
        Output channels of the two 3x3 convolutions (padding 1).
    hidden
        Width of the hidden FC layer.
    n_classes
        Number of classes.
    norm
        ``"sbn"`` (static BatchNorm: batch statistics always, no running averages) or ``"none"``.
    seed, device
        As for :class:`SliceableMLP`.

    Examples
    --------
    >>> net = SliceableCNN(image_size=8, channels=(4, 6), hidden=5)
    >>> net(torch.zeros(3, 1, 8, 8)).shape
    torch.Size([3, 10])
    """

    def __init__(
        self,
        *,
        in_channels: int = 1,
        image_size: int = 8,
        channels: Sequence[int] = (32, 64),
        hidden: int = 128,
        n_classes: int = 10,
        norm: str = "sbn",
        seed: Seed = 0,
        device: str = "cpu",
    ) -> None:
        super().__init__()
        owner = "SliceableCNN"
        width = {"owner": owner, "maximum": MAX_WIDTH}
        self.in_channels = check_positive_int("in_channels", in_channels, **width)
        self.image_size = check_positive_int("image_size", image_size, minimum=2, **width)
        if self.image_size % 2:
            raise ValueError(f"{owner}: image_size must be even; got {image_size!r}.")
        if isinstance(channels, str) or not isinstance(channels, Sequence):
            raise TypeError(f"{owner}: channels must be a pair of sizes; got {channels!r}.")
        channels = tuple(check_positive_int("channels[i]", c, **width) for c in channels)
        if len(channels) != 2:
            raise ValueError(f"{owner}: channels must hold 2 sizes; got {channels!r}.")
        self.channels = channels
        self.hidden = check_positive_int("hidden", hidden, **width)
        self.n_classes = check_positive_int("n_classes", n_classes, **width)
        self.norm = check_one_of("norm", norm, ("sbn", "none"), owner=owner)
        c0, c1 = channels
        weights = 9 * (self.in_channels * c0 + c0 * c1)
        weights += (c1 * self._positions + self.n_classes) * self.hidden
        if weights > MAX_PARAMS:
            raise ValueError(
                f"{owner}: channels={channels}, hidden={self.hidden} and image_size="
                f"{self.image_size} make more than {MAX_PARAMS} weights."
            )
        self._build(check_device("device", device, owner=owner), seed)

    @property
    def _positions(self) -> int:
        return (self.image_size // 2) ** 2  # spatial positions per channel after the pool

    def _build(self, device: str, seed: Seed) -> None:
        c0, c1 = self.channels

        def make() -> None:
            self.convs = nn.ModuleList(
                [
                    nn.Conv2d(self.in_channels, c0, 3, padding=1, device=device),
                    nn.Conv2d(c0, c1, 3, padding=1, device=device),
                ]
            )
            if self.norm == "sbn":
                self.norms = nn.ModuleList(
                    nn.BatchNorm2d(c, track_running_stats=False, device=device) for c in (c0, c1)
                )
            self.fc = nn.ModuleList(
                [
                    nn.Linear(c1 * self._positions, self.hidden, device=device),
                    nn.Linear(self.hidden, self.n_classes, device=device),
                ]
            )
            self.acts = nn.ModuleList(nn.ReLU() for _ in range(3))
            self.pool = nn.MaxPool2d(2)

        if device == "meta":
            make()
        else:
            with seeded_default_init(seed):
                make()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Logits ``(batch, n_classes)`` of images ``(batch, in_channels, H, W)``."""
        shape = (None, self.in_channels, self.image_size, self.image_size)
        _check_input(x, shape, self.convs[0].weight, "SliceableCNN")
        for i, conv in enumerate(self.convs):
            x = conv(x)  # (batch, C_i, H, W)
            if self.norm == "sbn":
                x = self.norms[i](x)
            x = self.acts[i](x)
        x = self.pool(x).flatten(1)  # (batch, C_1 * H/2 * W/2), channel-major
        x = self.acts[2](self.fc[0](x))  # (batch, hidden)
        return self.fc[1](x)

    def prunable_layers(self) -> list[str]:
        """``["convs.0", "convs.1", "fc.0"]``."""
        return ["convs.0", "convs.1", "fc.0"]

    def layer_sizes(self) -> dict[str, int]:
        """Channels of both convs and the hidden FC width."""
        return {"convs.0": self.channels[0], "convs.1": self.channels[1], "fc.0": self.hidden}

    def param_axes(self) -> dict[str, tuple[SliceAxis, ...]]:
        """Conv kernels by (out, in) channels; the first FC's columns by channel blocks."""
        c0, c1, f0 = SliceAxis("convs.0"), SliceAxis("convs.1"), SliceAxis("fc.0")
        axes = {
            "convs.0.weight": (c0, _KEEP, _KEEP, _KEEP),
            "convs.0.bias": (c0,),
            "convs.1.weight": (c1, c0, _KEEP, _KEEP),
            "convs.1.bias": (c1,),
            "fc.0.weight": (f0, SliceAxis("convs.1", repeat=self._positions)),
            "fc.0.bias": (f0,),
            "fc.1.weight": (_KEEP, f0),
            "fc.1.bias": (_KEEP,),
        }
        if self.norm == "sbn":
            for i, axis in enumerate((c0, c1)):
                axes[f"norms.{i}.weight"] = (axis,)
                axes[f"norms.{i}.bias"] = (axis,)
        return axes

    def activation_modules(self) -> dict[str, nn.Module]:
        """The ReLU after each conv (before the pool) and after the hidden FC."""
        return dict(zip(self.prunable_layers(), self.acts, strict=True))

    def with_widths(self, widths: Mapping[str, int], *, device: str = "meta") -> SliceableCNN:
        """A CNN with the given channels / hidden width (an empty shell on ``"meta"``)."""
        c0, c1, f0 = _check_widths(widths, self.prunable_layers(), "SliceableCNN.with_widths")
        return SliceableCNN(
            in_channels=self.in_channels,
            image_size=self.image_size,
            channels=(c0, c1),
            hidden=f0,
            n_classes=self.n_classes,
            norm=self.norm,
            device=device,
        )


class SliceableConvNet(AbstractSliceableModel):
    """4 x (conv3x3-sBN-ReLU), max-pool 2 after the first three, global average pool, FC.

    The channel-sliced conv net of issue 50 (HeteroFL's conv family; ~100 k parameters at the
    default channels 16/32/64/128 on 28x28 images). Every conv's output channels are prunable;
    the classifier keeps every class and takes the pooled channels of the last conv.

    Parameters
    ----------
    in_channels, image_size
        Input shape ``(batch, in_channels, image_size, image_size)``; ``image_size >= 8``.
    channels
        Output channels of the four 3x3 convolutions (padding 1).
    n_classes
        Number of classes.
    seed, device
        As for :class:`SliceableMLP`.

    Attributes
    ----------
    rate
        HeteroFL's scaler: in train mode the pooled features are divided by ``rate`` (the
        client's width ratio, set by ``local_train``); 1.0 for the global model.

    Notes
    -----
    Normalisation is HeteroFL's static BatchNorm (``track_running_stats=False``: batch
    statistics at train and test time, affine parameters sliced with their channels).

    Examples
    --------
    >>> net = SliceableConvNet()
    >>> net(torch.zeros(2, 1, 28, 28)).shape, sum(p.numel() for p in net.parameters())
    (torch.Size([2, 10]), 98922)
    """

    def __init__(
        self,
        *,
        in_channels: int = 1,
        image_size: int = 28,
        channels: Sequence[int] = (16, 32, 64, 128),
        n_classes: int = 10,
        seed: Seed = 0,
        device: str = "cpu",
    ) -> None:
        super().__init__()
        owner = "SliceableConvNet"
        width = {"owner": owner, "maximum": MAX_WIDTH}
        self.in_channels = check_positive_int("in_channels", in_channels, **width)
        self.image_size = check_positive_int("image_size", image_size, minimum=8, **width)
        if isinstance(channels, str) or not isinstance(channels, Sequence):
            raise TypeError(f"{owner}: channels must be 4 sizes; got {channels!r}.")
        channels = tuple(check_positive_int("channels[i]", c, **width) for c in channels)
        if len(channels) != 4:
            raise ValueError(f"{owner}: channels must hold 4 sizes; got {channels!r}.")
        self.channels = channels
        self.n_classes = check_positive_int("n_classes", n_classes, **width)
        ins = (self.in_channels, *channels[:-1])
        weights = sum(9 * a * b for a, b in zip(ins, channels, strict=True))
        if weights + channels[-1] * self.n_classes > MAX_PARAMS:
            raise ValueError(f"{owner}: channels={channels} make more than {MAX_PARAMS} weights.")
        self.rate = 1.0
        device = check_device("device", device, owner=owner)

        def make() -> None:
            self.convs = nn.ModuleList(
                nn.Conv2d(a, b, 3, padding=1, device=device)
                for a, b in zip(ins, channels, strict=True)
            )
            self.norms = nn.ModuleList(
                nn.BatchNorm2d(c, track_running_stats=False, device=device) for c in channels
            )
            self.acts = nn.ModuleList(nn.ReLU() for _ in channels)
            self.head = nn.Linear(channels[-1], self.n_classes, device=device)

        if device == "meta":
            make()
        else:
            with seeded_default_init(seed):
                make()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Logits ``(batch, n_classes)`` of images ``(batch, in_channels, H, W)``."""
        shape = (None, self.in_channels, self.image_size, self.image_size)
        _check_input(x, shape, self.convs[0].weight, "SliceableConvNet")
        for i, (conv, norm, act) in enumerate(zip(self.convs, self.norms, self.acts, strict=True)):
            x = act(norm(conv(x)))  # (batch, C_i, H_i, W_i)
            if i < 3:
                x = nn.functional.max_pool2d(x, 2)
        x = x.mean(dim=(2, 3))  # (batch, C_3): global average pool
        if self.training and self.rate != 1.0:
            x = x / self.rate
        return self.head(x)

    def prunable_layers(self) -> list[str]:
        """``["convs.0", ..., "convs.3"]``."""
        return [f"convs.{i}" for i in range(4)]

    def layer_sizes(self) -> dict[str, int]:
        """Output channels of every conv."""
        return dict(zip(self.prunable_layers(), self.channels, strict=True))

    def param_axes(self) -> dict[str, tuple[SliceAxis, ...]]:
        """Kernels by (out, in) channels, sBN affine by channel, head columns by channel."""
        layers = [SliceAxis(name) for name in self.prunable_layers()]
        axes: dict[str, tuple[SliceAxis, ...]] = {}
        for i, out in enumerate(layers):
            inp = layers[i - 1] if i else _KEEP
            axes[f"convs.{i}.weight"] = (out, inp, _KEEP, _KEEP)
            axes[f"convs.{i}.bias"] = (out,)
            axes[f"norms.{i}.weight"] = (out,)
            axes[f"norms.{i}.bias"] = (out,)
        axes["head.weight"] = (_KEEP, layers[-1])
        axes["head.bias"] = (_KEEP,)
        return axes

    def activation_modules(self) -> dict[str, nn.Module]:
        """The ReLU after every conv + sBN."""
        return dict(zip(self.prunable_layers(), self.acts, strict=True))

    def with_widths(self, widths: Mapping[str, int], *, device: str = "meta") -> SliceableConvNet:
        """The same net with the given channels (an empty shell on ``"meta"``)."""
        channels = _check_widths(widths, self.prunable_layers(), "SliceableConvNet.with_widths")
        return SliceableConvNet(
            in_channels=self.in_channels,
            image_size=self.image_size,
            channels=channels,
            n_classes=self.n_classes,
            device=device,
        )


def _check_model(model: object, owner: str) -> AbstractSliceableModel:
    if not isinstance(model, AbstractSliceableModel):
        raise TypeError(
            f"{owner}: model must be a SliceableMLP, SliceableCNN or another "
            f"AbstractSliceableModel; got {type(model).__name__}."
        )
    return model


def check_index_sets(
    model: AbstractSliceableModel, index_sets: Mapping[str, object], *, owner: str = "index_sets"
) -> dict[str, np.ndarray]:
    """Validate one index set per prunable layer: 1-D integers, strictly increasing, in range.

    Returns the sets as ``int64`` arrays. Raises ``ValueError`` naming ``index_sets`` and the
    layer for a missing or unknown layer, an empty, unsorted, duplicated or out-of-range set.

    Examples
    --------
    >>> net = SliceableMLP([2, 4, 3])
    >>> check_index_sets(net, {"layers.0": [0, 2]})["layers.0"]
    array([0, 2])
    """
    model = _check_model(model, owner)
    if not isinstance(index_sets, Mapping):
        raise TypeError(
            f"{owner}: index_sets must be a mapping layer -> indices; "
            f"got {type(index_sets).__name__}."
        )
    sizes = model.layer_sizes()
    unknown = sorted(set(index_sets) - set(sizes))
    missing = [name for name in sizes if name not in index_sets]
    if unknown or missing:
        raise ValueError(
            f"{owner}: index_sets must have exactly the prunable layers {list(sizes)}; "
            f"missing {missing}, unknown {unknown}."
        )
    out = {}
    for name, N in sizes.items():
        raw = np.asarray(index_sets[name])
        if raw.ndim != 1 or raw.size == 0 or raw.dtype.kind not in "iu":
            raise ValueError(
                f"{owner}: index_sets[{name!r}] must be a non-empty 1-D integer array; "
                f"got shape {raw.shape}, dtype {raw.dtype}."
            )
        idx = raw.astype(np.int64)
        if np.any(np.diff(idx) <= 0):
            raise ValueError(
                f"{owner}: index_sets[{name!r}] must be sorted and without duplicates; "
                f"got {idx.tolist()}."
            )
        if idx[0] < 0 or idx[-1] >= N:
            raise ValueError(
                f"{owner}: index_sets[{name!r}] must lie in range(0, {N}); got {idx.tolist()}."
            )
        out[name] = idx
    return out


def _axis_index(axis: SliceAxis, size: int, index_sets: Mapping[str, np.ndarray]) -> np.ndarray:
    if axis.layer is None:
        return np.arange(size)
    idx = index_sets[axis.layer]
    # neuron j owns entries j * repeat + p, p < repeat (channel-major flatten)
    return (idx[:, None] * axis.repeat + np.arange(axis.repeat)[None, :]).ravel()


def submodel_param_index(
    model: AbstractSliceableModel, index_sets: Mapping[str, object]
) -> dict[str, tuple[np.ndarray, ...]]:
    """For every parameter, the global indices along each dimension kept by ``index_sets``.

    ``W_sub = W[np.ix_(*index[name])]`` for every parameter ``name`` of ``model``.

    Examples
    --------
    >>> net = SliceableMLP([2, 4, 3])
    >>> [a.tolist() for a in submodel_param_index(net, {"layers.0": [1, 3]})["layers.1.weight"]]
    [[0, 1, 2], [1, 3]]
    """
    model = _check_model(model, "submodel_param_index")
    sets = check_index_sets(model, index_sets, owner="submodel_param_index")
    params = dict(model.named_parameters())
    return {
        name: tuple(
            _axis_index(axis, size, sets)
            for axis, size in zip(axes, params[name].shape, strict=True)
        )
        for name, axes in model.param_axes().items()
    }


def slice_tensor(tensor: torch.Tensor, index: Sequence[np.ndarray]) -> torch.Tensor:
    """``tensor[np.ix_(*index)]`` as a fresh tensor (dimension by dimension)."""
    out = tensor
    for dim, idx in enumerate(index):
        if len(idx) != out.shape[dim] or np.any(idx != np.arange(out.shape[dim])):
            out = out.index_select(dim, torch.as_tensor(idx, device=out.device))
    return out.detach().clone()


def extract_submodel(
    model: AbstractSliceableModel, index_sets: Mapping[str, object]
) -> AbstractSliceableModel:
    """The exact-shape sub-network of ``model`` made of the neurons in ``index_sets`` (§2.5).

    The result is a fresh module of the same class with widths ``len(index_sets[l])`` whose
    parameters are copies of the sliced global ones; ``model`` is not changed.

    Examples
    --------
    >>> net = SliceableMLP([4, 8, 3])
    >>> sub = extract_submodel(net, {"layers.0": [0, 5, 7]})
    >>> tuple(sub.layers[0].weight.shape), tuple(sub.layers[1].weight.shape)
    ((3, 4), (3, 3))
    """
    model = _check_model(model, "extract_submodel")
    sets = check_index_sets(model, index_sets, owner="extract_submodel")
    index = submodel_param_index(model, sets)
    sub = model.with_widths({name: len(idx) for name, idx in sets.items()}, device="meta")
    params = dict(model.named_parameters())
    state = {name: slice_tensor(params[name], index[name]) for name in index}
    sub.load_state_dict(state, strict=True, assign=True)
    return sub.train(model.training)
