"""Count-based aggregation (spec §7 items 3, 4, 5) and its bad inputs."""

import numpy as np
import pytest
import torch

from icml26.spinefl import (
    HeteroSimulation,
    SliceableMLP,
    SpineSelector,
    StaticSelector,
    aggregate_counts,
    extract_submodel,
    submodel_param_index,
)


def test_hand_computed_two_client_aggregation():
    # Item 5: a 4-unit layer, overlapping index sets, n = (1, 3).
    model = SliceableMLP([2, 4, 1]).double()
    g = {k: v.detach().clone() for k, v in model.named_parameters()}
    sets = [{"layers.0": np.array([0, 1, 2])}, {"layers.0": np.array([1, 3])}]
    index = [submodel_param_index(model, s) for s in sets]
    states = [
        {
            k: torch.full(tuple(len(i) for i in index[c][k]), float(c + 1), dtype=torch.float64)
            for k in g
        }
        for c in range(2)
    ]
    new = aggregate_counts(g, states, index, weights=[1, 3])
    # bias of layer 0: unit 0 only client A (1), unit 1 both ((1*1 + 3*2)/4), 2 only A, 3 only B
    assert new["layers.0.bias"].tolist() == [1.0, 7 / 4, 1.0, 2.0]
    # the output weight columns follow the same rule; the output bias is covered by both
    assert new["layers.1.weight"].tolist() == [[1.0, 7 / 4, 1.0, 2.0]]
    assert new["layers.1.bias"].tolist() == [7 / 4]
    # every row of layer 0's weight as its unit's bias
    assert torch.equal(new["layers.0.weight"][:, 0], new["layers.0.bias"])


def test_uniform_weighting_ignores_sample_counts():
    g = {"w": torch.zeros(2, dtype=torch.float64)}
    idx = [{"w": (np.array([0, 1]),)}, {"w": (np.array([1]),)}]
    states = [
        {"w": torch.tensor([2.0, 2.0], dtype=torch.float64)},
        {"w": torch.tensor([6.0], dtype=torch.float64)},
    ]
    assert aggregate_counts(g, states, idx, [1, 100], weighting="uniform")["w"].tolist() == [2, 4]


def test_single_participant_covered_entries_replaced_rest_unchanged():
    # Item 3, second half.
    model = SliceableMLP([3, 6, 2]).double()
    g = {k: v.detach().clone() for k, v in model.named_parameters()}
    sets = {"layers.0": np.array([1, 4])}
    index = submodel_param_index(model, sets)
    sub = {k: v.detach() + 1.0 for k, v in extract_submodel(model, sets).named_parameters()}
    new = aggregate_counts(g, [sub], [index], [5])
    covered = np.zeros((6, 3), bool)
    covered[[1, 4]] = True
    w_new, w_old = new["layers.0.weight"].numpy(), g["layers.0.weight"].numpy()
    assert np.array_equal(w_new[covered], w_old[covered] + 1.0)
    assert np.array_equal(w_new[~covered], w_old[~covered])
    assert torch.equal(new["layers.1.bias"], g["layers.1.bias"] + 1.0)


def test_idempotent_when_clients_return_what_they_received():
    # Item 4: unchanged sub-weights leave the global model unchanged (any overlap pattern).
    model = SliceableMLP([3, 8, 5, 2]).double()
    g = {k: v.detach().clone() for k, v in model.named_parameters()}
    rng = np.random.default_rng(0)
    sets = [
        {name: np.sort(rng.choice(N, k, replace=False)) for name, N in model.layer_sizes().items()}
        for k in (2, 3, 5)
    ]
    index = [submodel_param_index(model, s) for s in sets]
    states = [dict(extract_submodel(model, s).named_parameters()) for s in sets]
    new = aggregate_counts(g, states, index, [3, 1, 7])
    for k in g:
        torch.testing.assert_close(new[k], g[k], atol=1e-15, rtol=0)  # (w x) / w round-off


def _clients(seed=0, n=4):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n * 30, 5)).astype(np.float64)
    y = (X[:, 0] + X[:, 1] > 0).astype(np.int64)
    sizes = [20, 25, 35, 40][:n]
    cuts = np.cumsum(sizes)[:-1]
    return [(a, b) for a, b in zip(np.split(X, cuts), np.split(y, cuts), strict=True)], (X, y)


@pytest.mark.parametrize("beta", [0.0, 0.5, 1.0])
def test_full_width_spinefl_round_is_a_fedavg_round(beta):
    # Item 3: with r = 1 for everyone, every selector gives all indices and one round is
    # FedAvg weighted by n_c; the FedAvg reference trains full copies with the same seeds.
    from icml26.spinefl import client_seed, local_train

    clients, _ = _clients()

    def model_fn():
        return SliceableMLP([5, 8, 2], seed=1).double()

    sim = HeteroSimulation(
        model_fn,
        SpineSelector(beta=beta),
        clients,
        [1.0] * 4,
        rounds=1,
        participation=1.0,
        local_epochs=1,
        lr=0.1,
        seed=3,
        eval_levels=False,
    )
    spine = sim.run().final_state
    updates = [
        local_train(model_fn(), X, y, epochs=1, lr=0.1, seed=client_seed(3, 0, c))
        for c, (X, y) in enumerate(clients)
    ]
    n = np.array([u.n_samples for u in updates], float)
    for name, value in spine.items():
        fedavg = sum(w * u.state[name] for w, u in zip(n / n.sum(), updates, strict=True))
        torch.testing.assert_close(value, fedavg, atol=1e-7, rtol=0)  # spec: to 1e-7


def test_static_and_spine_agree_at_full_width():
    clients, _ = _clients()
    runs = [
        HeteroSimulation(
            lambda: SliceableMLP([5, 8, 2], seed=1).double(),
            sel,
            clients,
            [1.0] * 4,
            rounds=2,
            participation=0.5,
            seed=2,
            eval_levels=False,
        )
        .run()
        .final_state
        for sel in (StaticSelector(), SpineSelector())
    ]
    for name in runs[0]:
        torch.testing.assert_close(runs[0][name], runs[1][name], atol=1e-12, rtol=0)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"weights": [1, 2]}, "one entry per client"),
        ({"weights": [-1]}, "finite and >= 0"),
        ({"weights": [np.nan]}, "finite and >= 0"),
        ({"weighting": "median"}, "weighting must be one of 'samples', 'uniform'"),
        ({"client_states": [{"w": torch.zeros(3)}]}, r"has shape \(3,\) but its index sets"),
        ({"client_states": [{"v": torch.zeros(2)}]}, "name different parameters"),
        ({"client_param_index": [{"w": (np.array([0, 5]),)}]}, r"range\(0, 4\)"),
        ({"client_param_index": [{"w": (np.array([1, 1]),)}]}, "distinct"),
    ],
)
def test_bad_aggregation_inputs(kwargs, match):
    args = {
        "global_state": {"w": torch.zeros(4)},
        "client_states": [{"w": torch.ones(2)}],
        "client_param_index": [{"w": (np.array([0, 2]),)}],
        "weights": [1],
    }
    args.update(kwargs)
    with pytest.raises(ValueError, match=match):
        aggregate_counts(**args)
