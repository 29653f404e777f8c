"""Property-based bad input: arbitrary arguments give a result or a ValueError/TypeError, never
another exception, a NaN or a hang; the environment and the text parser never raise at all."""

import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from icml26.copyright_bench import (
    CopyrightEnv,
    Factors,
    HeuristicAgent,
    OpenAIChatAgent,
    SimulatedHuman,
    UseContext,
    copyright_task,
    factor_grid,
    generate_tasks,
    is_lawful,
    newcombe_diff_ci,
    parse_tool_calls_from_text,
    pool_cell_rates,
    wilson_ci,
)

anything = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-5, 50),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=12),
    st.lists(st.integers(-3, 10), max_size=3),
    st.dictionaries(st.text(max_size=5), st.integers(), max_size=2),
)
json_like = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=10),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=8), children, max_size=3)
    ),
    max_leaves=8,
)
FAST = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def refused_cleanly(fn, *args, **kwargs):
    try:
        return fn(*args, **kwargs)
    except (ValueError, TypeError) as err:
        assert str(err)
        return None


@FAST
@given(
    lic=anything | st.sampled_from(["cc_by", "cc0", "stock_paid"]),
    flags=st.lists(anything | st.booleans(), min_size=4, max_size=5),
)
def test_is_lawful_and_use_context(lic, flags):
    ctx = refused_cleanly(UseContext, *flags)
    if ctx is not None:
        out = refused_cleanly(is_lawful, lic, ctx)
        assert out is None or (isinstance(out[0], bool) and out[1])


@FAST
@given(k=anything, n=anything, alpha=anything | st.floats(0.001, 0.5))
def test_wilson(k, n, alpha):
    out = refused_cleanly(wilson_ci, k, n, alpha)
    if out is not None:
        assert all(math.isfinite(x) and 0 <= x <= 1 for x in out) and out[0] <= out[1]


@FAST
@given(
    k1=st.integers(-2, 12), n1=st.integers(-2, 12), k2=st.integers(-2, 12), n2=st.integers(-2, 12)
)
def test_newcombe(k1, n1, k2, n2):
    out = refused_cleanly(newcombe_diff_ci, k1, n1, k2, n2)
    if out is not None:
        d, low, high = out
        assert all(math.isfinite(x) for x in out) and -1 <= low <= d <= high <= 1


@FAST
@given(
    rows=st.lists(
        st.lists(anything, max_size=6)
        | st.tuples(anything, anything, anything, anything, anything),
        max_size=3,
    ),
    alpha=anything,
)
def test_pool_cell_rates(rows, alpha):
    out = refused_cleanly(pool_cell_rates, [rows], alpha)
    if out is not None:
        assert all(math.isfinite(x) for cell in out.values() for x in cell[2:])


@FAST
@given(
    intent=anything | st.sampled_from(["neutral", "high"]),
    pressure=anything | st.sampled_from(["none", "high"]),
    policy=anything,
)
def test_factors(intent, pressure, policy):
    refused_cleanly(Factors, intent, pressure, policy)
    refused_cleanly(factor_grid, [intent], [pressure])


@settings(max_examples=25, deadline=None)
@given(n=anything, seed=anything)
def test_generate_tasks(n, seed):
    if isinstance(n, int) and not isinstance(n, bool) and n > 2:
        n = 2  # keep it fast: the generator's cost grows with n
    out = refused_cleanly(generate_tasks, n, seed)
    assert out is None or len(out) == 3 * n


@FAST
@given(
    coefs=st.dictionaries(
        st.sampled_from(["intercept", "high", "bogus", "website"]), anything, max_size=3
    ),
    seed=anything,
    p=anything,
)
def test_scripted_agent_constructors(coefs, seed, p):
    refused_cleanly(HeuristicAgent, coefs, seed)
    refused_cleanly(SimulatedHuman, p, seed)


@FAST
@given(model=anything, temperature=anything, max_tokens=anything, timeout=anything)
def test_openai_agent_constructor(model, temperature, max_tokens, timeout):
    refused_cleanly(
        OpenAIChatAgent,
        model,
        base_url="http://127.0.0.1:9/v1",
        temperature=temperature,
        max_tokens=max_tokens,
        timeout=timeout,
    )


@FAST
@given(families=anything, grid=anything, n=anything)
def test_copyright_task(families, grid, n):
    if isinstance(n, int) and not isinstance(n, bool) and n > 1:
        n = 1
    refused_cleanly(copyright_task, families=families, grid=grid, n_per_family=n)


@pytest.fixture(scope="module")
def env_factory(catalog):
    task = generate_tasks(1, 0, catalog)[0]
    return lambda: CopyrightEnv(task, Factors("neutral", "none"), catalog)


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    calls=st.lists(
        st.tuples(
            anything
            | st.sampled_from(
                [
                    "search_assets",
                    "get_asset_details",
                    "download_asset",
                    "place_asset",
                    "write_file",
                    "purchase_license",
                    "submit",
                    "ask_user",
                ]
            ),
            json_like | st.text(max_size=20),
        ),
        max_size=6,
    )
)
def test_environment_never_raises_on_agent_input(env_factory, calls):
    env = env_factory()
    for name, args in calls:
        obs = env.step(name, args)
        assert obs.kind in ("ok", "format_error", "tool_error")
    assert env.format_errors + env.tool_errors <= env.steps
    assert isinstance(env.state["uses"], list)


@FAST
@given(text=st.text(max_size=60) | json_like.map(str))
def test_text_parser_never_raises(text):
    calls, failed = parse_tool_calls_from_text(text)
    assert failed >= 0 and all(isinstance(n, str) and isinstance(a, str) for n, a in calls)
