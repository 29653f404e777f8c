"""The recipes R0-R5 of the TetraJet-v2 reproduction (arXiv:2510.27527, spec §5) as QuantSpecs.

R0 FP32; R1 naive NVFP4 (per-tensor + 1x16, RTN everywhere, no RHT, backward re-quantizes raw
X, W); R2 NVIDIA-like (per-tensor + 1x16 activations/gradients, 16x16 weight tiles, SR on the
gradients only, RTN when the activation is re-quantized for dW, RHT on the weight-gradient GEMM
only); R3 TetraJet-v2 base (double-block 1x16/1x128, SR backward,
RHT on both backward GEMMs, aligned re-quantization); R4 = R3 + MXFP8 outlier channels (ratio 0.1);
R5 = R4 + OsciReset. Two further prior FP4 recipes (issue 47): ``fp4_all_the_way`` (Chmiel et
al.: standard NVFP4, RTN forward, SR on all four backward operands, no Hadamard) and R2+
``nvidia_nvfp4_published`` (R2 with the last transformer block and the final 10 % of the steps in
full precision, as NVIDIA published it, arXiv:2509.25149).

Deviations: R2 keeps every layer in NVFP4 (R2+ is NVIDIA's recipe as published); "higher
precision" is FP32 here (BF16 in the papers). ``fp4_all_the_way`` re-quantizes the raw X, W for
the backward GEMMs (the aligned double quantization is TetraJet-v2's; inferred, not stated).
"""

from __future__ import annotations

from dataclasses import replace
from functools import partial

from icml26.core import check_one_of
from icml26.tetrajet.linear import QuantSpec

__all__ = [
    "RECIPES",
    "fp4_all_the_way",
    "fp32",
    "get_recipe",
    "naive_nvfp4",
    "nvidia_nvfp4",
    "nvidia_nvfp4_published",
    "tetrajet_v2",
]


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


def nvidia_nvfp4_published() -> QuantSpec:
    """R2+: R2 with the last block and the final 10 % of the steps in full precision.

    NVIDIA's published recipe (arXiv:2509.25149) keeps the last layers in BF16 (about 15 % of
    them; one of the tiny GPT's blocks) and switches to BF16 for the end of training; both are
    applied by :func:`~icml26.tetrajet.train_lm`.

    Examples
    --------
    >>> spec = nvidia_nvfp4_published()
    >>> spec.high_precision_last_blocks, spec.high_precision_final_fraction
    (1, 0.1)
    """
    return replace(
        nvidia_nvfp4(),
        name="nvidia_nvfp4_published",
        high_precision_last_blocks=1,
        high_precision_final_fraction=0.1,
    )


def fp4_all_the_way() -> QuantSpec:
    """FP4 all the way (Chmiel et al.): standard NVFP4, RTN forward, SR on every backward operand.

    Q3-Q6 round stochastically; no Hadamard transform; the backward re-quantizes the raw X, W.

    Examples
    --------
    >>> spec = fp4_all_the_way()
    >>> spec.operand_rounding, spec.rht_dgrad or spec.rht_wgrad
    ('sr', False)
    """
    return QuantSpec(
        name="fp4_all_the_way",
        outer=None,
        backward_rounding="sr",
        operand_rounding="sr",
        rht_dgrad=False,
        rht_wgrad=False,
        aligned_weight=False,
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
    "nvidia_nvfp4_published": nvidia_nvfp4_published,
    "fp4_all_the_way": fp4_all_the_way,
    "tetrajet_v2_base": partial(tetrajet_v2, outcontrol=False, oscireset=False),
    "tetrajet_v2_mix_fp8": partial(tetrajet_v2, outcontrol=True, oscireset=False),
    "tetrajet_v2": tetrajet_v2,
}
"""Recipe names (R0-R2, R2+, FP4-all-the-way, R3-R5), each mapped to a zero-argument factory."""


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
