"""Core v2 contract for taco: light imports, install hint, seeded models, run(config, ctx)."""

import subprocess
import sys

import pytest
import torch

from icml26.core import RunContext
from icml26.taco import PerFeatureTransformer, TACOConfig, TACOModel, load_checkpoint
from icml26.taco.experiments import SPEED_PRESETS, speed_memory

HEAVY = ("torch", "transformers", "scipy", "matplotlib", "sklearn", "safetensors")


def _python(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)


def test_package_and_experiments_import_no_heavy_module():
    code = (
        "import sys\n"
        "import icml26.taco, icml26.taco.experiments\n"
        "from icml26.taco import TACOConfig\n"  # config.py needs core only
        f"print(sorted({{m.split('.')[0] for m in sys.modules}} & {set(HEAVY)!r}))\n"
    )
    out = _python(code)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def _params(module: torch.nn.Module) -> dict[str, torch.Tensor]:
    return {k: v.clone() for k, v in module.state_dict().items()}


def test_models_are_seeded_and_leave_the_global_rng_alone():
    cfg = TACOConfig.small(nlayers=1, emsize=16, nhead=2)
    before = torch.random.get_rng_state()
    a, b, c = TACOModel(cfg, seed=3), TACOModel(cfg, seed=3), TACOModel(cfg, seed=4)
    assert torch.equal(torch.random.get_rng_state(), before)
    pa, pb, pc = _params(a), _params(b), _params(c)
    assert all(torch.equal(pa[k], pb[k]) for k in pa)
    assert not torch.equal(pa["predictor.encoder.cell.weight"], pc["predictor.encoder.cell.weight"])
    # predictor and compressor draw independent sub-streams of one seed
    assert not torch.equal(
        pa["predictor.layers.0.mlp.0.weight"], pa["compressor.layers.0.mlp.0.weight"]
    )
    generator = torch.Generator().manual_seed(3)
    same = PerFeatureTransformer(cfg, seed=generator).state_dict()
    other = PerFeatureTransformer(cfg, seed=generator).state_dict()  # the generator advanced
    assert torch.equal(same["decoder.0.weight"], a.predictor.state_dict()["decoder.0.weight"])
    assert not torch.equal(same["decoder.0.weight"], other["decoder.0.weight"])


@pytest.mark.parametrize("use_compressor", [True, False])
def test_shipped_checkpoints_load_strictly(use_compressor):
    from icml26.taco import shipped_checkpoint

    model = load_checkpoint(shipped_checkpoint(use_compressor))
    assert model.use_compressor is use_compressor and model.config.emsize == 32
    assert not model.training


def test_speed_memory_runs_on_a_context(tmp_path):
    events = []
    ctx = RunContext(seed=5, artifact_dir=tmp_path, progress_sink=events.append)
    config = SPEED_PRESETS["smoke"]
    first = speed_memory(config, ctx)
    assert first == speed_memory(config, RunContext(seed=5, artifact_dir=tmp_path))
    assert first["threads"] == ctx.threads
    advances = [e for e in events if e[0] == "advance"]
    assert len(advances) == len(config.n_train)
    # analytic cost model (smoke): K = ceil(N/100) rows replace N, so TACO is far cheaper
    assert first["speedup_p1_largest"] > 1 and first["activation_reduction_p1_largest"] > 0.5
