"""The reproductions draw from the task's seed as before, and report progress per network."""

import numpy as np

from icml26.core import RunContext
from icml26.floatnet import FloatFormat, random_table
from icml26.floatnet.experiments import depth3, width


def test_depth3_draws_its_tables_from_the_task_seed_as_before(tmp_path):
    # ctx.numpy_generator() is np.random.default_rng(ctx.seed), the generator the old
    # run(config, seed) made: the first random table is the same as before.
    ctx = RunContext(seed=11, artifact_dir=tmp_path)
    fmt = FloatFormat(3, 3)
    expected = np.random.default_rng(11).choice(fmt.values(), size=len(fmt.grid(1)))
    assert np.array_equal(random_table(fmt, len(fmt.grid(1)), ctx.numpy_generator()), expected)
    metrics = depth3.run(depth3.DEPTH3_PRESETS["smoke"], ctx)
    assert metrics["exact_fraction_min"] == 1.0
    assert metrics["widths"] == {"3,3,1": [232, 55, 1]}


def test_width_reports_one_progress_step_per_network(tmp_path):
    events = []
    config = width.WIDTH_PRESETS["smoke"]
    ctx = RunContext(seed=0, artifact_dir=tmp_path, progress_sink=events.append)
    metrics = width.run(config, ctx)
    assert metrics["monotone_fraction"] == 1.0
    n = len(config.cases) + 1 + config.n_monotone
    assert [e[0] for e in events] == ["start"] + ["advance"] * n + ["stop"]
    assert events[0][2] == n
