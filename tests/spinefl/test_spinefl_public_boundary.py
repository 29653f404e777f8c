"""Regression tests of the public boundary (issue 16): each kind of bad input the fuzz test
found is refused with a ValueError / TypeError that names the parameter, before any work."""

import gzip
import os

import numpy as np
import pytest
import torch

from icml26.spinefl import (
    History,
    MagnitudeSelector,
    RandomSelector,
    SliceableCNN,
    SliceableMLP,
    aggregate_counts,
    client_seed,
    compare_methods,
    default_ratios,
    evaluate_accuracy,
    gumbel_topk,
    iid_partition,
    load_cifar10,
    load_digits_split,
    load_fashion_mnist,
    make_client_app,
    results_frame,
    round_generator,
    run_flower_simulation,
)


def test_aggregate_counts_checks_the_kinds_of_its_containers():
    g = {"w": torch.zeros(3)}
    with pytest.raises(TypeError, match="global_state"):
        aggregate_counts(None, [], [], [])
    with pytest.raises(TypeError, match="client_states"):
        aggregate_counts(g, 2.5, [], [])
    with pytest.raises(TypeError, match="client_param_index"):
        aggregate_counts(g, [{"w": torch.ones(1)}], [0.0], [1.0])
    with pytest.raises(TypeError, match="client_param_index"):
        aggregate_counts(g, [{"w": torch.ones(1)}], [{"w": ([0.5],)}], [1.0])
    # valid input still averages: entry 1 is (1·2 + 3·6) / 4 = 5, entry 0 keeps client 0's 2
    out = aggregate_counts(
        g,
        [{"w": torch.tensor([2.0, 2.0])}, {"w": torch.tensor([6.0])}],
        [{"w": (np.array([0, 1]),)}, {"w": (np.array([1]),)}],
        [1.0, 3.0],
    )
    assert out["w"].tolist() == [2.0, 5.0, 0.0]


def test_sizes_are_bounded_before_allocating():
    with pytest.raises(ValueError, match="n_clients"):
        default_ratios(2**31)
    with pytest.raises(ValueError, match="n"):
        iid_partition(2**31, 3)
    with pytest.raises(ValueError, match="dims"):
        SliceableMLP([4, 2**16, 2**16, 2])
    with pytest.raises(ValueError, match="hidden"):
        SliceableCNN(hidden=10**12)
    with pytest.raises(ValueError, match="seed"):  # sklearn's random_state stops at 2**32 - 1
        load_digits_split(2**33 - 1)


def test_sequences_of_records_are_type_checked():
    with pytest.raises(TypeError, match="rows"):
        results_frame(None)
    with pytest.raises(TypeError, match="rows"):
        results_frame([{"task": "t"}])
    with pytest.raises(TypeError, match="task"):
        compare_methods({}, ["SpineFL"], 0, rounds=1)


def test_loaders_name_a_root_that_is_not_a_path():
    with pytest.raises(TypeError, match="root"):
        load_cifar10(None)
    with pytest.raises(TypeError, match="root"):
        load_fashion_mnist(3)


def _write_idx(path, array):
    header = bytes([0, 0, 8, array.ndim]) + b"".join(int(d).to_bytes(4, "big") for d in array.shape)
    path.write_bytes(gzip.compress(header + array.astype(np.uint8).tobytes()))


def test_idx_files_are_decoded_once_and_reread_when_they_change(tmp_path):
    rng = np.random.default_rng(1)
    first, second = rng.integers(0, 256, size=(2, 4, 28, 28))
    labels = np.array([0, 1, 2, 3])
    for split in ("train", "t10k"):
        _write_idx(tmp_path / f"{split}-images-idx3-ubyte.gz", first)
        _write_idx(tmp_path / f"{split}-labels-idx1-ubyte.gz", labels)
    a = load_fashion_mnist(tmp_path)[0]
    a[:] = -1.0  # the caller's copy is its own: the cache is not changed through it
    np.testing.assert_array_equal(
        load_fashion_mnist(tmp_path)[0], first.reshape(4, -1).astype(np.float32) / 255.0
    )
    path = tmp_path / "train-images-idx3-ubyte.gz"
    _write_idx(path, second)
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))
    expected = second.reshape(4, -1).astype(np.float32) / 255.0
    np.testing.assert_array_equal(load_fashion_mnist(tmp_path)[0], expected)


def test_models_check_dims_widths_device_and_input():
    with pytest.raises(TypeError, match="dims"):
        SliceableMLP(0)
    with pytest.raises(ValueError, match="device"):
        SliceableMLP([4, 8, 2], device="x")
    net = SliceableMLP([4, 8, 2])
    with pytest.raises(TypeError, match="widths"):
        net.with_widths({})
    with pytest.raises(ValueError, match="widths"):
        net.with_widths({"layers.0": 0})
    with pytest.raises(ValueError, match="x"):
        net(torch.zeros(3, 5))
    with pytest.raises(TypeError, match="x"):
        net(torch.zeros(3, 4, dtype=torch.float64))
    cnn = SliceableCNN(image_size=8, channels=(2, 3), hidden=4)
    with pytest.raises(ValueError, match="x"):
        cnn(torch.zeros(()))
    with pytest.raises(TypeError, match="widths"):
        cnn.with_widths({})


def test_selector_server_seeds_and_history_check_their_arguments():
    with pytest.raises(TypeError, match="importance"):
        MagnitudeSelector().observe_weights(2.5)
    with pytest.raises(TypeError, match="seed"):
        client_seed(None, 0, 0)
    with pytest.raises(ValueError, match="t"):
        round_generator(0, -1)
    assert client_seed(3, 1, 2) == client_seed(3, 1, 2) != client_seed(3, 1, 3)


def test_magnitude_selector_refuses_a_layer_that_is_not_a_name():
    mag = MagnitudeSelector()
    mag.observe_weights({"fc": np.array([0.1, 3.0, 2.0])})
    rng = np.random.default_rng(0)
    with pytest.raises(TypeError, match="layer must be a layer name"):
        mag.select({}, 3, 2, 0, 0, rng)
    with pytest.raises(TypeError, match="layer must be a layer name"):
        mag.deploy_indices(["fc"], 3, 2)
    with pytest.raises(TypeError, match="importance keys"):
        mag.observe_weights({0: np.ones(3)})
    assert mag.select("fc", 3, 2, 0, 0, rng).tolist() == [1, 2]


def test_gumbel_topk_names_log_weights_and_rng():
    with pytest.raises(TypeError, match="log_weights"):
        gumbel_topk(object(), 1, np.random.default_rng(0))
    with pytest.raises(TypeError, match="log_weights"):
        gumbel_topk([[0.0], [0.0, 1.0]], 1, np.random.default_rng(0))  # ragged
    with pytest.raises(TypeError, match="rng must be a numpy Generator"):
        gumbel_topk(np.zeros(3), 1, 7)
    assert gumbel_topk(np.log([1.0, 2.0, 3.0]), 2, 7, noise=np.zeros(3)).tolist() == [2, 1]


def test_history_refuses_to_average_nothing_instead_of_returning_nan():
    with pytest.raises(ValueError, match="last"):
        History().final_accuracy()
    with pytest.raises(ValueError, match="ratio"):
        History(level_acc={0.5: []}).final_level_accuracy(0.5)
    with pytest.raises(ValueError, match="ratio"):
        History().final_level_accuracy(0.25)
    with pytest.raises(TypeError, match="global_acc"):
        History(global_acc="x")
    assert History(global_acc=[0.2, 0.4, 0.6]).final_accuracy(last=2) == pytest.approx(0.5)
    # fuzz campaign 5: a NaN accuracy made final_accuracy NaN, and round -1 was accepted
    with pytest.raises(ValueError, match="finite accuracies"):
        History(global_acc=[float("nan"), 0.5])
    with pytest.raises(ValueError, match="finite accuracies"):
        History(level_acc={0.5: [float("inf")]})
    with pytest.raises(ValueError, match="rounds must be 1-based"):
        History(rounds=[23, -1])


def test_evaluate_accuracy_names_x_for_inputs_the_model_cannot_take():
    with pytest.raises(TypeError, match="X"):
        evaluate_accuracy(torch.nn.Linear(4, 4), np.zeros(()), np.zeros(()))
    with pytest.raises(ValueError, match="X"):
        evaluate_accuracy(torch.nn.Linear(4, 4), np.zeros((3, 2)), np.zeros(3, dtype=int))
    with pytest.raises(TypeError, match="model"):
        evaluate_accuracy(None, np.zeros((3, 4)), np.zeros(3, dtype=int))
    # a parameter-free model: argmax of X itself, by hand 2 of 3 right
    X = np.array([[0.0, 1.0], [2.0, 0.0], [0.0, 3.0]], dtype=np.float32)
    assert evaluate_accuracy(torch.nn.Identity(), X, [1, 0, 0]) == pytest.approx(2 / 3)


def test_flower_entry_points_check_clients_and_server_first():
    with pytest.raises(TypeError, match="clients"):
        make_client_app(SliceableMLP, 2.5)
    with pytest.raises(TypeError, match="model_fn"):
        make_client_app({}, [])
    with pytest.raises(TypeError, match="server"):
        run_flower_simulation(SliceableMLP, 2.5, [], 1)


def test_random_selector_names_an_rng_that_is_no_generator():
    with pytest.raises(TypeError, match="rng must be a numpy Generator; got int"):
        RandomSelector().select("fc", 8, 3, t=0, c=0, rng=0)
