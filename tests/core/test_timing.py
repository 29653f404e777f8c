"""core.timing: round-robin medians."""

import pytest

from icml26.core import interleaved_median_seconds


def test_callables_run_round_robin_and_medians_come_from_the_timed_rounds():
    clock, calls = [0.0], []

    def job(name, cost):
        def run():
            calls.append(name)
            clock[0] += cost[len([c for c in calls if c == name]) - 1]

        return run

    # a costs 100 on its warm-up call (excluded), then 1, 5, 2; b always 3
    fns = {"a": job("a", [100, 1, 5, 2]), "b": job("b", [3, 3, 3, 3])}
    medians = interleaved_median_seconds(fns, repeats=3, warmup=1, clock=lambda: clock[0])
    assert calls == ["a", "b"] * 4
    assert medians == {"a": 2.0, "b": 3.0}


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"fns": {}, "repeats": 1}, TypeError, "fns"),
        ({"fns": {"a": 3}, "repeats": 1}, TypeError, "callable"),
        ({"fns": {"a": print}, "repeats": 0}, ValueError, "repeats"),
        ({"fns": {"a": print}, "repeats": 1, "warmup": -1}, ValueError, "warmup"),
    ],
)
def test_bad_inputs(kwargs, error, match):
    with pytest.raises(error, match=match):
        interleaved_median_seconds(**kwargs)


def test_the_context_times_on_its_own_clock():
    from icml26.core import RunContext

    ticks = iter(range(0, 1000, 2))
    ctx = RunContext(seed=0, clock=lambda: float(next(ticks)))
    assert ctx.median_seconds({"a": lambda: None, "b": lambda: None}, repeats=3) == {
        "a": 2.0,
        "b": 2.0,
    }
