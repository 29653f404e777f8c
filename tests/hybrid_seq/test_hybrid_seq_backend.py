"""The ``mamba_ssm`` backend's fallbacks (the CUDA kernel itself cannot run here: no GPU).

``ssm_backend="auto"`` must resolve to the PyTorch scan when the package is missing or when it
is installed but fails to import (a CUDA extension that does not load); an explicit
``"mamba_ssm"`` without the package is a clear ``MissingExtraError``; and with the package
importable, CPU tensors still take the PyTorch scan, so outputs equal the ``"torch"`` model's.
"""

import importlib.abc
import sys
import types

import pytest
import torch

from icml26.core import MissingExtraError
from icml26.hybrid_seq import HybridLM, MambaBlock

VOCAB = 11
NAMES = ("mamba_ssm", "mamba_ssm.ops", "mamba_ssm.ops.selective_scan_interface")


def _tokens() -> torch.Tensor:
    return torch.randint(1, VOCAB, (2, 9), generator=torch.Generator().manual_seed(0))


def _torch_model() -> HybridLM:
    return HybridLM(VOCAB, 16, pattern="SA", n_heads=2, ssm_backend="torch", seed=3)


class _BrokenFinder(importlib.abc.MetaPathFinder):
    """Finds ``mamba_ssm`` but fails to load it, as a wheel built for another CUDA does."""

    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] == "mamba_ssm":
            raise ImportError("libcudart.so.12: cannot open shared object file")
        return None


@pytest.fixture
def no_mamba_ssm(monkeypatch):
    for name in NAMES:  # None in sys.modules makes `import` raise ModuleNotFoundError
        monkeypatch.setitem(sys.modules, name, None)


@pytest.fixture
def broken_mamba_ssm(monkeypatch):
    for name in NAMES:
        monkeypatch.delitem(sys.modules, name, raising=False)
    monkeypatch.setattr(sys, "meta_path", [_BrokenFinder(), *sys.meta_path])


@pytest.fixture
def fake_mamba_ssm(monkeypatch):
    """An importable ``mamba_ssm`` whose kernel records every call (it must not be called)."""
    calls = []

    def selective_scan_fn(*args, **kwargs):
        calls.append(args)
        raise AssertionError("the CUDA kernel was called on CPU tensors")

    modules = {name: types.ModuleType(name) for name in NAMES}
    modules[NAMES[2]].selective_scan_fn = selective_scan_fn
    for name, module in modules.items():
        monkeypatch.setitem(sys.modules, name, module)
    return calls


def test_auto_falls_back_to_torch_when_mamba_ssm_is_missing(no_mamba_ssm):
    model = HybridLM(VOCAB, 16, pattern="SA", n_heads=2, ssm_backend="auto", seed=3)
    assert model.ssm_backend == "torch"
    assert all(b.mixer.backend == "torch" for b in model.blocks if hasattr(b, "mixer"))
    x = _tokens()
    assert torch.equal(model(x), _torch_model()(x))


def test_auto_falls_back_to_torch_when_mamba_ssm_fails_to_import(broken_mamba_ssm):
    with pytest.raises(ImportError, match="libcudart"):  # the finder really is in the way
        __import__("mamba_ssm")
    model = HybridLM(VOCAB, 16, pattern="SA", n_heads=2, ssm_backend="auto", seed=3)
    assert model.ssm_backend == "torch"
    x = _tokens()
    assert torch.equal(model(x), _torch_model()(x))


def test_explicit_mamba_ssm_without_the_package_names_the_extra(no_mamba_ssm):
    with pytest.raises(MissingExtraError, match="hybrid_seq"):
        HybridLM(VOCAB, 16, pattern="SA", n_heads=2, ssm_backend="mamba_ssm", seed=3)
    with pytest.raises(MissingExtraError, match="hybrid_seq"):
        MambaBlock(8, backend="mamba_ssm")


@pytest.mark.parametrize("backend", ["auto", "mamba_ssm"])
def test_cpu_tensors_take_the_torch_scan_when_mamba_ssm_imports(fake_mamba_ssm, backend):
    model = HybridLM(VOCAB, 16, pattern="SA", n_heads=2, ssm_backend=backend, seed=3)
    assert model.ssm_backend == "mamba_ssm"
    reference = _torch_model()
    x = _tokens()
    with torch.no_grad():
        assert torch.equal(model(x), reference(x))
        cache = ref_cache = None
        for t in range(x.shape[1]):
            logits, cache = model.step(x[:, t], cache)
            ref_logits, ref_cache = reference.step(x[:, t], ref_cache)
            assert torch.equal(logits, ref_logits)
    assert fake_mamba_ssm == []  # the kernel was never reached on CPU
