import numpy as np
import pytest
import torch

from icml26.core import (
    check_array,
    check_in_interval,
    check_one_of,
    check_positive_int,
    numpy_generator,
    torch_generator,
    torch_threads,
)


def test_messages_name_owner_parameter_allowed_and_received():
    with pytest.raises(ValueError, match=r"^Solver: zeta must be in \(0, 1\]; got 1.5.$"):
        check_in_interval("zeta", 1.5, low=0.0, high=1.0, closed="right", owner="Solver")
    with pytest.raises(ValueError, match=r"kind must be one of 'a', 'b'; got 'c' \(str\)"):
        check_one_of("kind", "c", ("a", "b"))
    with pytest.raises(TypeError, match=r"n must be an integer; got 2.0 \(float\)"):
        check_positive_int("n", 2.0)
    with pytest.raises(TypeError, match="integer; got True"):
        check_positive_int("n", True)
    with pytest.raises(ValueError, match="n must be an integer >= 1; got 0"):
        check_positive_int("n", 0)
    with pytest.raises(ValueError, match="got nan"):
        check_in_interval("x", float("nan"))


def test_interval_ends():
    assert check_in_interval("x", 1.0, low=0.0, high=1.0, closed="right") == 1.0
    with pytest.raises(ValueError, match=r"\(0, 1\]"):
        check_in_interval("x", 0.0, low=0.0, high=1.0, closed="right")


def test_seeds_normalise_reproducibly():
    assert numpy_generator(3).random() == numpy_generator(3).random()
    g = np.random.default_rng(0)
    assert numpy_generator(g) is g
    t = torch_generator(5)
    assert torch_generator(t) is t
    assert torch.equal(torch.rand(4, generator=torch_generator(5)), torch.rand(4, generator=t))
    a = torch.rand(3, generator=torch_generator(np.random.default_rng(1)))
    b = torch.rand(3, generator=torch_generator(np.random.default_rng(1)))
    assert torch.equal(a, b)
    with pytest.raises(TypeError, match="seed must be an int"):
        numpy_generator("0")
    with pytest.raises(TypeError, match="seed must be an int"):
        torch_generator(1.5)


def test_torch_threads_is_scoped_and_restored_after_an_exception():
    before = torch.get_num_threads()
    with pytest.raises(RuntimeError, match="boom"), torch_threads(1):
        assert torch.get_num_threads() == 1
        raise RuntimeError("boom")
    assert torch.get_num_threads() == before
    with pytest.raises(ValueError, match="n must be an integer >= 1"), torch_threads(0):
        pass


@pytest.mark.parametrize("value", [None, [1.0, None], ((0.5,), (None,))])
def test_check_array_refuses_none_even_where_nonfinite_values_are_allowed(value):
    # numpy would read None as NaN; a missing value is a type error, not a number.
    with pytest.raises(TypeError, match="x must be an array"):
        check_array("x", value, finite=False)


def test_generators_name_the_callers_parameter_and_bound_ints():
    with pytest.raises(ValueError, match=r"^rng must be an int >= 0; got -1\.$"):
        numpy_generator(-1, name="rng")
    with pytest.raises(ValueError, match=r"^rng must be an int >= -9223372036854775808"):
        torch_generator(2**64, name="rng")
    with pytest.raises(TypeError, match=r"^seed must be an int"):
        torch_generator(1.5)
    # In range, the generators are numpy's and torch's own seeding.
    assert numpy_generator(2**70).integers(2**62) == np.random.default_rng(2**70).integers(2**62)
    assert torch.equal(
        torch.randn(3, generator=torch_generator(-5)),
        torch.randn(3, generator=torch.Generator().manual_seed(-5)),
    )
