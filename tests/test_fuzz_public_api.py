"""Every public name of every system survives hostile input (issue 16).

Each name in a system's ``__all__`` that can be called (a function or a class, then the public
methods of an instance it built) is called with hypothesis-drawn arguments chosen from each
parameter's annotation: wrong types, NaN/inf, empty and odd-shaped arrays and tensors, negative and
huge sizes; a parameter with a default keeps it half of the time so that calls get past the first
check. A call fails the test when it

- raises anything but ``ValueError``/``TypeError`` (an ``OSError`` is a fair answer to a path or
  model name that does not exist, a ``MissingExtraError`` to a missing optional dependency,
  scikit-learn's ``NotFittedError`` to a method called before ``fit``),
- raises ``ValueError``/``TypeError`` with a message that names none of the callable's parameters,
- returns a NaN although every argument was finite, or
- runs past ``BUDGET_S`` with a huge size among its arguments (sizes are checked against a
  documented maximum before anything is allocated). A call that is merely slow with ordinary
  arguments ends the fuzzing of that name instead.

Abstract base classes are left out (their concrete classes are fuzzed). Every example draws all
its arguments whatever earlier examples did, so timing never changes what is drawn; examples are
derandomised, so the suite is deterministic. A system joins by existing.
"""

from __future__ import annotations

import dataclasses
import enum
import importlib
import inspect
import math
import os
import re
import resource
import signal
import traceback
import typing
import warnings
from pathlib import Path

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis import strategies as st
from sklearn.exceptions import NotFittedError

from icml26.core import discover
from icml26.core.imports import MissingExtraError

SYSTEMS = discover().systems()
BUDGET_S = 4.0
HUGE = (2**31, 10**12)
# A campaign beyond the suite's derandomised draws: ICML26_FUZZ_EXAMPLES=48 ICML26_FUZZ_SEED=1
# python -m pytest tests/test_fuzz_public_api.py (issue 40 asks for thousands of calls).
EXAMPLES = int(os.environ.get("ICML26_FUZZ_EXAMPLES", "12"))
CAMPAIGN_SEED = os.environ.get("ICML26_FUZZ_SEED")
MEMORY_HEADROOM = 6 * 2**30  # address space a fuzzed call may add


def _public_callables():
    for slug in SYSTEMS:
        module = importlib.import_module(f"icml26.{slug}")
        for name in module.__all__:
            obj, test_id = getattr(module, name), f"{slug}.{name}"
            if inspect.isclass(obj) and (
                issubclass(obj, (BaseException, enum.Enum)) or inspect.isabstract(obj)
            ):
                continue  # abstract bases are reached through their concrete classes
            if callable(obj) and not _is_typing_alias(obj):
                yield pytest.param(obj, id=test_id)


def _is_typing_alias(obj) -> bool:
    return type(obj).__module__ in ("typing", "types") and not inspect.isroutine(obj)


# ----------------------------------------------------------------- strategies per parameter kind

FINITE_FLOATS = st.floats(-10.0, 10.0, allow_nan=False) | st.sampled_from([0.0, -1.0, 1e-12, 1e6])
HOSTILE_FLOATS = st.sampled_from([math.nan, math.inf, -math.inf, 1e300, -1e300])
FLOATS = FINITE_FLOATS | HOSTILE_FLOATS
INTS = st.integers(-3, 40) | st.sampled_from([0, -1, *HUGE])
STRINGS = st.sampled_from(["", "x", "auto", "none", "cpu", "mean", "../nope", "é"])
JUNK = st.sampled_from([None, 0, -1, 2.5, "x", (), [], {}, object()])


@st.composite
def arrays(draw, dtype=None):
    ndim = draw(st.integers(0, 3))
    shape = tuple(draw(st.lists(st.integers(0, 5), min_size=ndim, max_size=ndim)))
    dtype = dtype or draw(st.sampled_from(["float64", "float32", "int64", "bool"]))
    size = int(np.prod(shape))
    if dtype in ("float64", "float32"):
        values = draw(st.lists(FINITE_FLOATS | HOSTILE_FLOATS, min_size=size, max_size=size))
    elif dtype == "int64":
        values = draw(st.lists(st.integers(-3, 9), min_size=size, max_size=size))
    else:
        values = draw(st.lists(st.booleans(), min_size=size, max_size=size))
    return np.asarray(values, dtype=dtype).reshape(shape)


def tensors():
    dtypes = st.sampled_from([torch.float32, torch.float64, torch.int64])
    return st.builds(lambda a, d: torch.as_tensor(a.astype("float64")).to(d), arrays(), dtypes)


SEEDS = (
    st.integers(-2, 2**33)
    | st.none()
    | st.builds(np.random.default_rng, st.integers(0, 9))
    | st.builds(lambda s: torch.Generator().manual_seed(s), st.integers(0, 9))
)
MODULES = st.sampled_from([torch.nn.Linear(4, 4), torch.nn.Identity()]) | JUNK


def _instance_of(cls):
    """A default-built instance of a project class, when it can be built without arguments."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return st.just(cls()) | JUNK
    except Exception:
        return JUNK


def _from_hint(hint, depth=0):  # one branch per kind of parameter
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if hint is inspect.Parameter.empty or hint is typing.Any or hint is object or depth > 3:
        return FLOATS | INTS | JUNK | arrays()
    if origin is typing.Annotated:
        return _from_hint(args[0], depth + 1)
    if origin is typing.Literal:
        return st.sampled_from(args) | STRINGS
    if origin in (typing.Union, getattr(__import__("types"), "UnionType", None)):
        return (
            st.one_of([_from_hint(a, depth + 1) for a in args if a is not type(None)]) | st.none()
        )
    if origin in (list, tuple, set, frozenset) or origin in _SEQUENCE_ORIGINS:
        inner = args[0] if args else typing.Any
        lists = st.lists(_from_hint(inner, depth + 1), max_size=4)
        return (lists.map(tuple) if origin is tuple else lists) | JUNK
    if origin is dict or origin in _MAPPING_ORIGINS:
        return st.dictionaries(STRINGS, FLOATS | INTS, max_size=3) | JUNK
    if origin is not None and callable(origin):
        return JUNK
    if hint is bool:
        return st.booleans() | st.sampled_from([2, "yes"])
    if hint is int:
        return INTS | st.sampled_from([1.5, True])
    if hint is float:
        return FLOATS | INTS
    if hint is str:
        return STRINGS | JUNK
    if hint is Path:
        return STRINGS.map(Path)
    if hint is np.ndarray:
        return arrays() | st.lists(FLOATS, max_size=4) | JUNK
    if hint is torch.Tensor:
        return tensors() | arrays() | JUNK
    if hint is np.random.Generator or hint is torch.Generator:
        return SEEDS
    if hint is torch.dtype:
        return st.sampled_from([torch.float32, torch.float64, torch.int8, torch.bool]) | JUNK
    if inspect.isclass(hint) and issubclass(hint, torch.nn.Module):
        return MODULES
    if inspect.isclass(hint) and issubclass(hint, enum.Enum):
        return st.sampled_from(list(hint)) | STRINGS
    if inspect.isclass(hint) and hint.__module__.startswith("icml26"):
        return _instance_of(hint)
    if inspect.isclass(hint) and hint.__module__.startswith("pandas"):
        import pandas as pd

        return st.builds(pd.DataFrame, arrays("float64").filter(lambda a: a.ndim == 2)) | JUNK
    return JUNK | FLOATS | INTS


_SEQUENCE_ORIGINS = tuple(
    getattr(__import__("collections.abc", fromlist=["x"]), n)
    for n in ("Sequence", "Iterable", "Collection", "MutableSequence")
)
_MAPPING_ORIGINS = tuple(
    getattr(__import__("collections.abc", fromlist=["x"]), n) for n in ("Mapping", "MutableMapping")
)


def _hints(fn):
    try:
        return typing.get_type_hints(fn, include_extras=True)
    except Exception:
        return {}


def _from_string_hint(text: str):
    """Annotations that could not be evaluated (names under TYPE_CHECKING): guess from the text."""
    for needle, strategy in (
        ("Tensor", tensors() | JUNK),
        ("ndarray", arrays() | JUNK),
        ("Seed", SEEDS),
        ("Generator", SEEDS),
        ("float", FLOATS),
        ("int", INTS),
        ("str", STRINGS),
        ("bool", st.booleans()),
        ("Module", MODULES),
    ):
        if needle in text:
            return strategy
    return JUNK | FLOATS | INTS


def parameter_strategies(fn):
    """One strategy per parameter of ``fn``: ``*args`` get up to two values, ``**kwargs`` none."""
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError):
        return None
    hints = _hints(fn)
    out = {}
    for name, p in signature.parameters.items():
        if name in ("self", "cls") or p.kind == p.VAR_KEYWORD:
            continue
        hint = hints.get(name, p.annotation)
        if name in ("seed", "rng", "generator"):
            strategy = SEEDS | JUNK
        elif isinstance(hint, str):
            strategy = _from_string_hint(hint)
        else:
            strategy = _from_hint(hint)
        if p.default is not p.empty:
            strategy = st.just(p.default) | strategy
        if p.kind == p.VAR_POSITIONAL:
            strategy = st.lists(strategy, max_size=2)
        out[name] = (p.kind, strategy)
    return out


# ----------------------------------------------------------------------------- the judge


class Hang(BaseException):
    """The alarm's signal that a call ran past BUDGET_S (a BaseException: no except catches it)."""


_ALARM = {"fired": False}


def _alarm(signum, frame):
    _ALARM["fired"] = True
    raise Hang


def numeric_leaves(value, depth=0):
    """The floats, float arrays and float tensors inside ``value`` (containers up to 4 deep)."""
    if isinstance(value, float | complex | np.floating | np.complexfloating):
        yield np.asarray(value)
    elif isinstance(value, torch.Tensor):
        if (value.is_floating_point() or value.is_complex()) and value.numel() < 10**7:
            yield value.detach().cpu().numpy()
    elif isinstance(value, np.ndarray):
        if value.dtype.kind in "fc" and value.size < 10**7:
            yield value
    elif depth < 4:
        if isinstance(value, dict):
            children = list(value.values())
        elif isinstance(value, list | tuple):
            children = value[:1000]
        elif dataclasses.is_dataclass(value) and not isinstance(value, type):
            children = [getattr(value, f.name) for f in dataclasses.fields(value)]
        else:
            children = []
        for child in children:
            yield from numeric_leaves(child, depth + 1)


def has_nonfinite(value) -> bool:
    """Whether ``value`` holds a NaN or an infinity."""
    return any(not np.isfinite(leaf).all() for leaf in numeric_leaves(value))


def has_nan(value) -> bool:
    """Whether ``value`` holds a NaN (inf can be a true answer, e.g. ε at δ = 0)."""
    return any(np.isnan(leaf).any() for leaf in numeric_leaves(value))


def _names_a_parameter(message: str, names) -> bool:
    return any(
        re.search(rf"(?<![A-Za-z0-9_]){re.escape(n)}(?![A-Za-z0-9_])", message) for n in names
    )


class SlowCallError(Exception):
    """A call was slow with ordinary arguments: stop fuzzing this name."""


def call(fn, drawn, kinds, constructor_parameters=()):
    """Call ``fn`` with ``drawn`` arguments under the budget; return (ok, result) or fail.

    A method's error may name its instance's ``constructor_parameters`` instead (scikit-learn
    estimators check their hyper-parameters in ``fit``).
    """
    positional, keywords = [], {}
    # Parameters before a *args are passed by position, or *args would bind to them.
    before_star = inspect.Parameter.VAR_POSITIONAL in kinds.values()
    for name, value in drawn.items():
        if kinds[name] == inspect.Parameter.VAR_POSITIONAL:
            positional.extend(value)
            before_star = False
        elif kinds[name] == inspect.Parameter.POSITIONAL_ONLY or before_star:
            positional.append(value)
        else:
            keywords[name] = value
    finite_input = not has_nonfinite(list(drawn.values()))
    huge = any(isinstance(v, int) and abs(v) >= HUGE[0] for v in drawn.values())
    previous = signal.signal(signal.SIGALRM, _alarm)
    _ALARM["fired"] = False
    signal.setitimer(signal.ITIMER_REAL, BUDGET_S)
    try:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                result = fn(*positional, **keywords)
        except Exception:
            # Hang raised inside C code (the parser, an import) can come out as another error,
            # e.g. "SystemError: AST constructor recursion depth mismatch".
            if _ALARM["fired"]:
                raise Hang from None
            raise
    except Hang:
        if huge:
            pytest.fail(f"ran past {BUDGET_S} s with a huge size: {_shown(drawn)}")
        raise SlowCallError from None
    except NotFittedError:  # scikit-learn's contract for a method called before fit
        return False, None
    except (ValueError, TypeError) as err:
        if not _names_a_parameter(str(err), [*drawn, *constructor_parameters]):
            pytest.fail(
                f"{type(err).__name__} names no parameter of {list(drawn)}: {err}\n"
                f"arguments: {_shown(drawn)}\n{_tail(err)}"
            )
        return False, None
    except OSError:  # a path or model name that does not exist
        return False, None
    except MissingExtraError:  # names the extra to install; CI installs only [dev]
        return False, None
    except Exception as err:
        pytest.fail(
            f"deep crash {type(err).__name__}: {err}\narguments: {_shown(drawn)}\n{_tail(err)}"
        )
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    if finite_input and has_nan(result):
        pytest.fail(f"NaN output from finite input: {_shown(drawn)}")
    return True, result


def _shown(drawn) -> str:
    return ", ".join(f"{k}={_short(v)}" for k, v in drawn.items())


def _short(value) -> str:
    if isinstance(value, np.ndarray | torch.Tensor):
        return f"{type(value).__name__}(shape={tuple(value.shape)}, dtype={value.dtype})"
    text = repr(value)
    return text if len(text) < 60 else text[:57] + "..."


def _tail(err) -> str:
    return "".join(traceback.format_exception(err)[-4:])


def public_methods(cls):
    """(name, function) of the public methods ``cls`` itself defines in icml26."""
    if not inspect.isclass(cls):
        return
    for name, member in inspect.getmembers(cls):
        if name.startswith("_") or not inspect.isfunction(member):
            continue
        if not member.__module__.startswith("icml26"):  # inherited from torch, sklearn, ...
            continue
        yield name, member


@pytest.fixture(scope="module", autouse=True)
def bounded_memory():
    """A call allocating for a huge size gets a MemoryError, not the machine's OOM killer."""
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    in_use = int(Path("/proc/self/statm").read_text().split()[0]) * resource.getpagesize()
    resource.setrlimit(resource.RLIMIT_AS, (in_use + MEMORY_HEADROOM, hard))
    yield
    resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


@pytest.fixture
def isolated(tmp_path, monkeypatch):
    """Fuzzed calls write only under tmp_path and cannot change torch's global settings."""
    monkeypatch.chdir(tmp_path)
    threads, dtype, grad = (
        torch.get_num_threads(),
        torch.get_default_dtype(),
        torch.is_grad_enabled(),
    )
    yield
    torch.set_num_threads(threads)
    torch.set_default_dtype(dtype)
    torch.set_grad_enabled(grad)


@pytest.mark.parametrize("obj", list(_public_callables()))
def test_public_name_survives_hostile_input(obj, isolated):
    strategies = parameter_strategies(obj)
    if strategies is None:
        pytest.fail(f"{obj!r} has no inspectable signature")
    kinds = {n: kind for n, (kind, _) in strategies.items()}
    methods = {
        name: ms for name, fn in public_methods(obj) if (ms := parameter_strategies(fn)) is not None
    }
    slow: set[str] = set()

    @settings(
        max_examples=EXAMPLES,
        derandomize=CAMPAIGN_SEED is None,
        database=None,
        deadline=None,
        phases=[Phase.explicit, Phase.generate],  # no shrinking: the first finding is reported
        suppress_health_check=list(HealthCheck),
    )
    @given(st.data())
    def fuzz(data):
        # Every argument is drawn on every example, whatever happened before: what an example
        # draws must not depend on timing, or hypothesis reports inconsistent data generation.
        drawn = {n: data.draw(s, label=n) for n, (_, s) in strategies.items()}
        method_args = {
            name: {n: data.draw(s, label=f"{name}.{n}") for n, (_, s) in ms.items()}
            for name, ms in methods.items()
        }
        if "__init__" in slow:
            return
        try:
            ok, result = call(obj, drawn, kinds)
        except SlowCallError:
            slow.add("__init__")
            return
        if not ok or not inspect.isclass(obj):
            return
        for name, args in method_args.items():
            if name in slow:
                continue
            method_kinds = {n: kind for n, (kind, _) in methods[name].items()}
            try:
                call(getattr(result, name), args, method_kinds, constructor_parameters=drawn)
            except SlowCallError:
                slow.add(name)

    if CAMPAIGN_SEED is not None:
        fuzz = seed(int(CAMPAIGN_SEED))(fuzz)
    fuzz()


# ------------------------------------------------------------------- the judge judges rightly

POS = inspect.Parameter.POSITIONAL_OR_KEYWORD


def _refuses(x):
    raise ValueError(f"x must be positive; got {x}")


def _crashes(x):
    return x.shape  # AttributeError on a float


def _silent_nan(x):
    return math.nan


def _anonymous(x):
    raise TypeError("unsupported operand")


def test_judge_accepts_a_named_refusal_and_a_finite_answer():
    assert call(_refuses, {"x": -1.0}, {"x": POS}) == (False, None)
    assert call(abs, {"x": -1.0}, {"x": inspect.Parameter.POSITIONAL_ONLY}) == (True, 1.0)
    assert call(_silent_nan, {"x": math.nan}, {"x": POS})[0]  # NaN in, NaN out is fair


def test_judge_lets_a_method_name_its_constructor_parameter_and_nothing_else():
    def fit(X):
        raise ValueError("alpha must be positive; got -1")

    assert call(fit, {"X": 0.0}, {"X": POS}, constructor_parameters={"alpha": -1}) == (False, None)
    with pytest.raises(pytest.fail.Exception, match="names no"):
        call(fit, {"X": 0.0}, {"X": POS}, constructor_parameters={"beta": 1})


@pytest.mark.parametrize(
    ("fn", "finding"),
    [
        (_crashes, "deep crash AttributeError"),
        (_silent_nan, "NaN output"),
        (_anonymous, "names no"),
    ],
)
def test_judge_fails_deep_crashes_silent_nan_and_anonymous_errors(fn, finding):
    with pytest.raises(pytest.fail.Exception, match=finding):
        call(fn, {"x": 1.0}, {"x": POS})


def test_judge_fails_a_hang_on_a_huge_size_and_only_then():
    def sleeps(n):
        import time

        time.sleep(BUDGET_S + 1)

    with pytest.raises(pytest.fail.Exception, match="huge size"):
        call(sleeps, {"n": HUGE[1]}, {"n": POS})
    with pytest.raises(SlowCallError):
        call(sleeps, {"n": 3}, {"n": POS})
