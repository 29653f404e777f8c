"""The recipes R0-R5 of the TetraJet-v2 reproduction (arXiv:2510.27527, spec §5) as QuantSpecs.

R0 FP32; R1 naive NVFP4 (per-tensor + 1x16, RTN everywhere, no RHT, backward re-quantizes raw
X, W); R2 NVIDIA-like (per-tensor + 1x16 activations/gradients, 16x16 weight tiles, SR on the
gradients only, RTN when the activation is re-quantized for dW, RHT on the weight-gradient GEMM
only); R3 TetraJet-v2 base (double-block 1x16/1x128, SR backward,
RHT on both backward GEMMs, aligned re-quantization); R4 = R3 + MXFP8 outlier channels (ratio 0.1);
R5 = R4 + OsciReset.

Deviations: R2 keeps every layer in NVFP4 (NVIDIA keeps the last ~15% in BF16 and switches to
BF16 near the end of training).
"""

from __future__ import annotations

from functools import partial

from icml26.core import check_one_of
from icml26.tetrajet.linear import QuantSpec

__all__ = ["RECIPES", "fp32", "get_recipe", "naive_nvfp4", "nvidia_nvfp4", "tetrajet_v2"]


def fp32() -> QuantSpec:
    """R0: no quantization (the layer is exactly ``nn.Linear``).

    Examples
    --------
    >>> fp32().enabled
    False
    """
    return QuantSpec(name="fp32", quantize=(False,) * 6)


def naive_nvfp4() -> QuantSpec:
    """R1: standard NVFP4 (per-tensor scale), RTN in all six quantizers, no RHT, raw re-quantizing.

    Examples
    --------
    >>> naive_nvfp4().outer is None
    True
    """
    return QuantSpec(
        name="naive_nvfp4",
        outer=None,
        backward_rounding="rtn",
        rht_dgrad=False,
        rht_wgrad=False,
        aligned_weight=False,
        aligned_activation=False,
    )


def nvidia_nvfp4() -> QuantSpec:
    """R2: NVIDIA's recipe: 16x16 weight tiles reused in dX, SR on gradients only, RHT on dW only.

    Q6 (the activation re-quantized for the dW GEMM) rounds to nearest: NVIDIA's recipe applies
    stochastic rounding to gradients only (arXiv:2509.25149).

    Examples
    --------
    >>> nvidia_nvfp4().weight_2d
    True
    """
    return QuantSpec(
        name="nvidia_nvfp4",
        outer=None,
        weight_2d=True,
        operand_rounding="rtn",
        rht_dgrad=False,
        aligned_activation=False,
    )


def tetrajet_v2(
    *, outcontrol: bool = True, oscireset: bool = True, outlier_ratio: float = 0.1
) -> QuantSpec:
    """R3-R5: TetraJet-v2 double-block NVFP4; ``outcontrol`` adds MXFP8 channels, then OsciReset.

    Parameters
    ----------
    outcontrol
        Keep ``outlier_ratio`` of the input channels in MXFP8 after calibration (R4).
    oscireset
        Train with OsciReset (R5; the official configs use it together with OutControl).
    outlier_ratio
        Share of outlier channels (all official configs: 0.1).

    Returns
    -------
    QuantSpec

    Examples
    --------
    >>> tetrajet_v2(outcontrol=False, oscireset=False).name
    'tetrajet_v2_base'
    """
    name = "tetrajet_v2" if outcontrol and oscireset else "tetrajet_v2_base"
    if outcontrol and not oscireset:
        name = "tetrajet_v2_mix_fp8"
    elif oscireset and not outcontrol:
        name = "tetrajet_v2_oscireset"
    return QuantSpec(
        name=name, outlier_ratio=outlier_ratio if outcontrol else 0.0, oscireset=oscireset
    )


RECIPES = {
    "fp32": fp32,
    "naive_nvfp4": naive_nvfp4,
    "nvidia_nvfp4": nvidia_nvfp4,
    "tetrajet_v2_base": partial(tetrajet_v2, outcontrol=False, oscireset=False),
    "tetrajet_v2_mix_fp8": partial(tetrajet_v2, outcontrol=True, oscireset=False),
    "tetrajet_v2": tetrajet_v2,
}
"""Recipe names R0-R5 in order, each mapped to a zero-argument factory."""


def get_recipe(recipe: str | QuantSpec) -> QuantSpec:
    """The QuantSpec of a recipe name (one of :data:`RECIPES`); a QuantSpec passes through.

    Raises
    ------
    ValueError
        For an unknown name.

    Examples
    --------
    >>> get_recipe("tetrajet_v2").oscireset
    True
    """
    return resolve_spec(recipe, name="recipe", owner="get_recipe")


def resolve_spec(spec: str | QuantSpec, *, name: str, owner: str) -> QuantSpec:
    """``spec`` as a QuantSpec: a recipe name is looked up; errors name ``name`` and ``owner``."""
    if isinstance(spec, QuantSpec):
        return spec
    if not isinstance(spec, str):
        raise TypeError(
            f"{owner}: {name} must be a QuantSpec or a recipe name; got {type(spec).__name__}."
        )
    check_one_of(name, spec, tuple(RECIPES), owner=owner)
    return RECIPES[spec]()
