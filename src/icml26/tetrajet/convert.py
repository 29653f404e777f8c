"""Model conversion (spec §2.2 scope): replace the Linears of any torch model by NVFP4Linear.

Embeddings are not Linears and stay FP32; the LM head is excluded by name; norms and the attention
core (QKᵀ, softmax, PV) are untouched, as in TetraJet-v2 (arXiv:2510.27527).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch
from torch import nn

from icml26.core import Seed, numpy_generator
from icml26.tetrajet.linear import NVFP4Linear, QuantSpec
from icml26.tetrajet.recipes import resolve_spec

__all__ = ["quantize_model_", "quantized_layers"]


def quantize_model_(
    model: nn.Module,
    spec: QuantSpec | str,
    *,
    exclude: Sequence[str] = ("lm_head", "head"),
    seed: Seed = None,
) -> nn.Module:
    """Replace, in place, every ``nn.Linear`` of ``model`` whose own name is not in ``exclude``.

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
        For an unknown recipe name.

    Example
    -------
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
    targets = [
        (parent, name, child)
        for parent in model.modules()
        for name, child in parent.named_children()
        if type(child) is nn.Linear and name not in exclude
    ]
    for parent, name, child in targets:
        layer_seed = int(rng.integers(0, 2**62))
        setattr(parent, name, NVFP4Linear.from_linear(child, spec, seed=layer_seed))
    return model


def quantized_layers(model: nn.Module) -> list[NVFP4Linear]:
    """The NVFP4Linear modules of ``model``, in ``model.modules()`` order.

    Example
    -------
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
