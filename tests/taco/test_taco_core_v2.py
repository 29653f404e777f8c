"""Seeded models, strictly loaded shipped checkpoints, and E1 run on a context with a clock."""

import itertools

import pytest
import torch

from icml26.core import RunContext
from icml26.taco import PerFeatureTransformer, TACOConfig, TACOModel, load_checkpoint
from icml26.taco.experiments.speed_memory import PRESETS, speed_memory


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
    ticks = itertools.count()  # a fake clock: every timed call lasts one tick
    clock = lambda: float(next(ticks))  # noqa: E731
    ctx = RunContext(seed=5, artifact_dir=tmp_path, progress_sink=events.append, clock=clock)
    config = PRESETS["smoke"]
    first = speed_memory(config, ctx)
    again = speed_memory(config, RunContext(seed=5, artifact_dir=tmp_path, clock=clock))
    assert first == again  # with a deterministic clock, the timings repeat too
    assert first["threads"] == ctx.threads
    advances = [e for e in events if e[0] == "advance"]
    assert len(advances) == len(config.n_train)
    # every call took one tick: one ratio of 1 per timed round
    assert first["speedup_p1_largest"] == [1.0] * config.repeats
    assert all(m["time_taco"] == 1.0 for m in first["measured"])
    # analytic cost: K = ceil(N/100) rows replace N, so TACO is far cheaper
    assert first["macs_speedup_p1_largest"] > 1 and first["activation_reduction_p1_largest"] > 0.5
    # rows hold deterministic counts; the clock's readings go to "measured"
    assert not {"time_pot", "rss_pot", "rounds_pot"} & set(first["rows"][0])
