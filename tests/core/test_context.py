"""RunContext: generators, artifact folder, progress bars; Resources validation."""

import numpy as np
import pytest
import torch

from icml26.core import Resources, RunContext


def test_generators_restart_per_call_and_streams_are_independent(tmp_path):
    ctx = RunContext(seed=123, artifact_dir=tmp_path)
    a, b = ctx.numpy_generator().random(5), ctx.numpy_generator().random(5)
    assert np.array_equal(a, b)
    assert np.array_equal(a, np.random.default_rng(123).random(5))  # the seed itself, unchanged
    assert not np.array_equal(a, ctx.numpy_generator("init").random(5))
    t = torch.rand(4, generator=ctx.torch_generator())
    assert torch.equal(t, torch.rand(4, generator=torch.Generator().manual_seed(123)))
    assert not torch.equal(t, torch.rand(4, generator=ctx.torch_generator("data")))
    assert not np.array_equal(a, RunContext(seed=124).numpy_generator().random(5))


def test_artifacts_and_progress_events(tmp_path):
    events = []
    ctx = RunContext(seed=0, artifact_dir=tmp_path / "art", progress_sink=events.append)
    assert not (tmp_path / "art").exists()  # created only when a file is asked for
    ctx.artifact("x.txt").write_text("hi")
    assert (tmp_path / "art" / "x.txt").read_text() == "hi"
    with ctx.progress(2, "steps") as bar:
        bar.advance()
        bar.advance()
    kinds = [e[0] for e in events]
    assert kinds == ["start", "advance", "advance", "stop"]
    assert events[0][2:] == (2, "steps") and bar.completed == 2


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"seed": -1}, ValueError, "seed must be an integer >= 0"),
        ({"seed": 1.5}, TypeError, "seed must be an integer"),
        ({"seed": 0, "device": "tpu"}, ValueError, "device must be one of 'cpu', 'cuda'"),
        ({"seed": 0, "threads": 0}, ValueError, "threads must be an integer >= 1"),
    ],
)
def test_context_validates(kwargs, error, match):
    with pytest.raises(error, match=match):
        RunContext(**kwargs)


def test_resources_validate():
    assert Resources() == Resources(cpus=1, gpus=0, memory_gb=None)
    with pytest.raises(ValueError, match="Resources: cpus must be an integer >= 1"):
        Resources(cpus=0)
    with pytest.raises(ValueError, match="memory_gb must be > 0 or None"):
        Resources(memory_gb=0)
    with pytest.raises(TypeError, match="gpus must be an integer"):
        Resources(gpus=0.5)
