from icml26.tetrajet.convert import quantize_model_, quantized_layers
from icml26.tetrajet.data import TextData, load_corpus, load_text_data, sample_batch
from icml26.tetrajet.formats import (
    E2M1_VALUES,
    E4M3_MAX,
    NVFP4Tensor,
    bin_width,
    cast_e4m3,
    e8m0_scale,
    hadamard16,
    mxfp8_fake_quant,
    nvfp4_fake_quant,
    nvfp4_quantize,
    random_signs,
    rht16,
    round_e2m1,
)
from icml26.tetrajet.linear import NVFP4Conv1D, NVFP4Linear, QuantSpec, quantized_linear
from icml26.tetrajet.model import OLMO2_SIZES, GPTConfig, TinyGPT, olmo2_model
from icml26.tetrajet.oscireset import DETECTORS, OsciReset, oscillation_stats
from icml26.tetrajet.outcontrol import OutlierChannelCalibrator, outlier_channel_count
from icml26.tetrajet.recipes import (
    RECIPES,
    fp32,
    get_recipe,
    naive_nvfp4,
    nvidia_nvfp4,
    tetrajet_v2,
)
from icml26.tetrajet.toy import (
    OscillationToy,
    ToyResult,
    oscillation_toy_problem,
    train_oscillation_toy,
)
from icml26.tetrajet.training import TrainConfig, TrainResult, train_lm

__all__ = [
    "DETECTORS",
    "E2M1_VALUES",
    "E4M3_MAX",
    "OLMO2_SIZES",
    "RECIPES",
    "GPTConfig",
    "NVFP4Conv1D",
    "NVFP4Linear",
    "NVFP4Tensor",
    "OsciReset",
    "OscillationToy",
    "OutlierChannelCalibrator",
    "QuantSpec",
    "TextData",
    "TinyGPT",
    "ToyResult",
    "TrainConfig",
    "TrainResult",
    "bin_width",
    "cast_e4m3",
    "e8m0_scale",
    "fp32",
    "get_recipe",
    "hadamard16",
    "load_corpus",
    "load_text_data",
    "mxfp8_fake_quant",
    "naive_nvfp4",
    "nvfp4_fake_quant",
    "nvfp4_quantize",
    "nvidia_nvfp4",
    "olmo2_model",
    "oscillation_stats",
    "oscillation_toy_problem",
    "outlier_channel_count",
    "quantize_model_",
    "quantized_layers",
    "quantized_linear",
    "random_signs",
    "rht16",
    "round_e2m1",
    "sample_batch",
    "tetrajet_v2",
    "train_lm",
    "train_oscillation_toy",
]
