"""Experiment configs check their fields when built, so a bad --set exits 2 before any task."""

from dataclasses import replace

import pytest
from cli_checks import assert_cli_refuses

from icml26.nana.experiments import (
    causal,
    concentration,
    efficiency,
    exactness,
    minilm_readout,
    planted,
)

MODULES = (causal, concentration, efficiency, exactness, minilm_readout, planted)

BAD = [
    (exactness, "seq_len", 65, ValueError),  # past the planted model's 64 positions
    (exactness, "n_sequences", 0, ValueError),
    (exactness, "minilm", "yes", TypeError),
    (planted, "n_units", 16, ValueError),  # 2 n_units < d_model = 32
    (planted, "ratio", 0.95, ValueError),  # singular values < 10 % apart
    (planted, "noise", float("nan"), TypeError),  # check_fields: floats must be finite
    (minilm_readout, "layers", (0, 6), ValueError),
    (minilm_readout, "layers", (), ValueError),
    (minilm_readout, "n_effectors", 385, ValueError),
    (causal, "top_k", 0, ValueError),
    (causal, "prompt_len", 129, ValueError),
    (causal, "standin", "downloaded", ValueError),
    (causal, "corpora", ("gutenberg", "folio"), ValueError),
    (causal, "train_steps", -5, ValueError),
    (causal, "n_prompts", True, TypeError),
    (efficiency, "plateau_rtol", 0.0, ValueError),
    (efficiency, "repeats", 0, ValueError),
    (concentration, "coverage", 1.5, ValueError),
    (concentration, "vocab_size", 10**9, ValueError),
    (concentration, "gate_windows", 513, ValueError),  # the record has 512
]


@pytest.mark.parametrize("module", MODULES, ids=lambda m: m.__name__.rsplit(".", 1)[-1])
def test_every_preset_is_a_valid_config(module):
    for config in module.PRESETS.values():
        assert replace(config) == config


@pytest.mark.parametrize(
    ("module", "field", "value", "error"),
    BAD,
    ids=[f"{m.__name__.rsplit('.', 1)[-1]}.{f}={v!r}" for m, f, v, _ in BAD],
)
def test_bad_fields_are_refused_by_name(module, field, value, error):
    with pytest.raises(error, match=field):
        replace(module.DEFAULT, **{field: value})


def test_the_cli_refuses_a_bad_set_before_any_task(tmp_path):
    assert_cli_refuses(tmp_path, "nana.causal", "top_k=0")


def test_the_configs_know_the_corpora_the_loader_reads():
    from icml26.nana.experiments.common import CORPORA as CONFIG_CORPORA
    from icml26.nana.standin import CORPORA

    assert CONFIG_CORPORA == CORPORA
