"""Model conversion (spec §2.2 scope): replace the Linears of any torch model by NVFP4Linear.

transformers' ``Conv1D`` (GPT-2's Linears, with the weight stored transposed) becomes
:class:`~icml26.tetrajet.linear.NVFP4Conv1D`.

Embeddings are not Linears and stay FP32; the LM head is excluded by name; norms and the attention
core (QKᵀ, softmax, PV) are untouched, as in TetraJet-v2 (arXiv:2510.27527).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

import numpy as np
import torch
from torch import nn

from icml26.core import Seed, numpy_generator
from icml26.tetrajet.linear import NVFP4Conv1D, NVFP4Linear, QuantSpec
from icml26.tetrajet.recipes import resolve_spec

__all__ = ["quantize_model_", "quantized_layers"]


def quantize_model_(
    model: nn.Module,
    spec: QuantSpec | str,
    *,
    exclude: Sequence[str] = ("lm_head", "head"),
    seed: Seed = None,
) -> nn.Module:
    """Replace, in place, every ``nn.Linear`` (and transformers ``Conv1D``) of ``model`` whose own
    name is not in ``exclude``.

    Parameters
    ----------
    model
        Any torch module (e.g. a GPT or an HF ``Olmo2ForCausalLM``).
    spec
        A :class:`QuantSpec` or a recipe name (see :data:`~icml26.tetrajet.recipes.RECIPES`).
    exclude
        Attribute names of Linears to keep in full precision (the LM head by default).
    seed
        Seeds the layers' generators (one independent stream per layer).

    Returns
    -------
    nn.Module
        ``model`` itself.

    Raises
    ------
    TypeError
        If ``model`` is not an ``nn.Module``.
    ValueError
        For an unknown recipe name, or if ``model`` has no layer to quantize (training it would
        silently stay in full precision).

    Examples
    --------
    >>> net = nn.Sequential(nn.Linear(128, 128), nn.ReLU())
    >>> type(quantize_model_(net, "tetrajet_v2", seed=0)[0]).__name__
    'NVFP4Linear'
    """
    if not isinstance(model, nn.Module):
        raise TypeError(f"quantize_model_: model must be an nn.Module; got {type(model).__name__}.")
    spec = resolve_spec(spec, name="spec", owner="quantize_model_")
    if isinstance(exclude, str) or not all(isinstance(e, str) for e in _iterable(exclude)):
        raise TypeError(f"quantize_model_: exclude must be a sequence of names; got {exclude!r}.")
    if isinstance(seed, bool) or not (
        seed is None or isinstance(seed, int | np.random.Generator | torch.Generator)
    ):
        raise TypeError(f"quantize_model_: seed must be an int, a generator or None; got {seed!r}.")
    if isinstance(seed, int) and seed < 0:
        raise ValueError(f"quantize_model_: seed must be >= 0; got {seed!r}.")
    rng = numpy_generator(seed)
    conv1d = _conv1d_class()
    targets = [
        (parent, name, child)
        for parent in model.modules()
        for name, child in parent.named_children()
        if (type(child) is nn.Linear or type(child) is conv1d) and name not in exclude
    ]
    if not targets:
        raise ValueError(
            f"quantize_model_: {type(model).__name__} has no nn.Linear or transformers Conv1D "
            f"child outside exclude={tuple(exclude)!r}; nothing would be quantized."
        )
    for parent, name, child in targets:
        layer_seed = int(rng.integers(0, 2**62))
        if type(child) is nn.Linear:
            layer = NVFP4Linear.from_linear(child, spec, seed=layer_seed)
        else:
            layer = NVFP4Conv1D.from_conv1d(child, spec, seed=layer_seed)
        setattr(parent, name, layer)
    return model


def _conv1d_class() -> type | None:
    """transformers' ``Conv1D`` if transformers is loaded (a model cannot hold one otherwise)."""
    if "transformers" not in sys.modules:
        return None
    from transformers.pytorch_utils import Conv1D

    return Conv1D


def quantized_layers(model: nn.Module) -> list[NVFP4Linear]:
    """The NVFP4Linear modules of ``model``, in ``model.modules()`` order.

    Examples
    --------
    >>> len(quantized_layers(quantize_model_(nn.Sequential(nn.Linear(16, 16)), "fp32")))
    1
    """
    if not isinstance(model, nn.Module):
        raise TypeError(
            f"quantized_layers: model must be an nn.Module; got {type(model).__name__}."
        )
    return [m for m in model.modules() if isinstance(m, NVFP4Linear)]


def _iterable(value: object) -> list:
    try:
        return list(value)  # type: ignore[call-overload]
    except TypeError:
        return [None]
