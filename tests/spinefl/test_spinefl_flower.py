"""The distributed path: SpineFL through Flower's simulation engine equals the in-process loop."""

import subprocess
import sys
from functools import partial

import numpy as np
import pytest
import torch

from icml26.spinefl import (
    HeteroSimulation,
    SliceableMLP,
    SpineFLStrategy,
    SpineSelector,
    SubmodelServer,
    run_flower_simulation,
)

RATIOS = [1.0, 0.5, 0.25, 0.25]


def _clients():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 6))
    y = (X[:, 0] + X[:, 1] - X[:, 2] > 0).astype(np.int64)
    sizes = [30, 45, 55, 70]  # unequal n_c: the count weights matter
    cuts = np.cumsum(sizes)[:-1]
    return list(zip(np.split(X, cuts), np.split(y, cuts), strict=True)), (X, y)


def test_two_flower_rounds_match_the_in_process_loop():
    # One integration test through flwr.simulation.run_simulation (4 supernodes, Ray backend):
    # every draw derives from (seed, round, client), so the global weights agree. float64
    # models: any residual difference could only come from thread-dependent summation order.
    clients, test = _clients()
    model_fn = partial(SliceableMLP, [6, 24, 16, 2], seed=5, device="cpu")

    def model64():
        return model_fn().double()

    local = HeteroSimulation(
        model64,
        SpineSelector(),
        clients,
        RATIOS,
        rounds=2,
        participation=0.75,
        seed=11,
        local_epochs=2,
        test=test,
        eval_levels=False,
    ).run()
    selector = SpineSelector()
    server = SubmodelServer(model64(), selector, RATIOS, participation=0.75, seed=11)
    flower = run_flower_simulation(model64, server, clients, 2, local_epochs=2, test=test)
    for name, value in local.final_state.items():
        torch.testing.assert_close(flower.final_state[name], value, atol=1e-6, rtol=0)
    assert flower.global_acc == local.global_acc
    assert flower.train_loss == pytest.approx(local.train_loss, abs=1e-9)
    # the strategy updated the same selector's histories from the nodes' reports
    assert selector.client_history_ and not np.all(selector.global_history_["layers.0"] == 1.0)


def test_strategy_checks_the_node_mapping():
    server = SubmodelServer(SliceableMLP([3, 4, 2]), SpineSelector(), RATIOS)
    with pytest.raises(ValueError, match="node_to_client must map one node to each of the 4"):
        SpineFLStrategy(server, {1: 0, 2: 1})
    with pytest.raises(TypeError, match="server must be a SubmodelServer"):
        SpineFLStrategy(object(), {1: 0})
    with pytest.raises(ValueError, match="one dataset per client"):
        run_flower_simulation(SliceableMLP, server, _clients()[0][:2], 1)


def test_missing_flower_names_the_extra():
    code = (
        "import sys\nsys.modules['flwr'] = None\n"
        "import icml26.spinefl as s\ns.HeteroSimulation\ns.SpineFLStrategy"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode != 0
    assert "MissingExtraError" in result.stderr
    assert "pip install 'icml26[spinefl]'" in result.stderr
