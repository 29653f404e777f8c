"""Pieces every rex reproduction shares: the paper, and replicates from disjoint point subsets.

A task's metric varies with its seed (the noise and data points drawn), so a verdict needs
>= 3 independent values. The points of one batch are independent draws, so the experiments
measure on the whole batch at once and report each metric on ``N_REPLICATES`` disjoint subsets
of the points: three independent values at the cost of one run.
"""

from __future__ import annotations

import itertools
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # `icml26 list` imports the experiments: torch stays out of module import
    import torch

    from icml26.rex import RexSolver

PAPER = "Blasingame & Liu, Rex: reversible exponential (stochastic) Runge-Kutta solvers, ICML 2026"
N_REPLICATES = 3  # disjoint subsets of the points: independent values of every metric


def subsets(n_points: int, k: int = N_REPLICATES) -> list[slice]:
    """``k`` disjoint, nearly equal slices covering ``range(n_points)`` (``n_points >= k``)."""
    if n_points < k:
        raise ValueError(f"subsets: need at least {k} points for {k} replicates; got {n_points}.")
    edges = [round(i * n_points / k) for i in range(k + 1)]
    return [slice(a, b) for a, b in itertools.pairwise(edges)]


def errors_by_subset(a: torch.Tensor, b: torch.Tensor, kind: str = "max") -> list[float]:
    """:func:`~icml26.rex.roundtrip_error` of ``a`` against ``b`` on each subset of the points
    (the first dimension)."""
    from icml26.rex import roundtrip_error

    return [roundtrip_error(a[s], b[s], kind) for s in subsets(a.shape[0])]


def roundtrip_errors_by_subset(
    solver: RexSolver, data: torch.Tensor, noise: torch.Tensor, amplification: bool = False
) -> dict[str, object]:
    """:func:`~icml26.rex.roundtrip_errors` (max-abs) on each subset, and what it computed.

    ``data`` / ``noise``: data -> noise -> data and noise -> data -> noise (the worse of the two
    coupled states) per subset; ``decoded``: the sample decoded from ``noise``. With
    ``amplification``, also how much the backward sweep magnifies a perturbation of 1e-14 (about
    50 ulps) of the decoded pair: the growth that round-off left by decoding undergoes in the
    noise round trip.
    """
    import torch

    ts = solver.timesteps()
    x_T, x_T_hat = solver.encode(data, ts)
    data_back, _ = solver.decode(x_T, x_T_hat, ts)
    x_0, x_0_hat = solver.decode(noise, noise.clone(), ts)
    back, back_hat = solver.backward_solve(x_0, x_0_hat, ts)
    noise_err = [
        max(x, y)
        for x, y in zip(errors_by_subset(back, noise), errors_by_subset(back_hat, noise),
                        strict=True)
    ]  # fmt: skip
    out: dict[str, object] = {
        "data": errors_by_subset(data_back, data),
        "noise": noise_err,
        "decoded": x_0,
    }
    if amplification:
        delta = 1e-14
        g = torch.Generator().manual_seed(0)
        u = delta * torch.sign(torch.randn(x_0.shape, dtype=x_0.dtype, generator=g))
        moved, moved_hat = solver.backward_solve(x_0 + u, x_0_hat + u, ts)
        growth = torch.maximum((moved - back).abs(), (moved_hat - back_hat).abs()).max()
        out["amplification"] = float(growth) / delta
    return out


def worst(current: list[float] | None, new: list[float]) -> list[float]:
    """Element-wise maximum of two per-subset lists (``current`` may be ``None``)."""
    return list(new) if current is None else [max(x, y) for x, y in zip(current, new, strict=True)]


def least(current: list[float] | None, new: list[float]) -> list[float]:
    """Element-wise minimum of two per-subset lists (``current`` may be ``None``)."""
    return list(new) if current is None else [min(x, y) for x, y in zip(current, new, strict=True)]


def check_config(
    config: Any,
    *,
    zero_ok: tuple[str, ...] = (),
    unit: tuple[str, ...] = (),
    positive: tuple[str, ...] = (),
    choices: dict[str, tuple[Any, ...]] | None = None,
) -> None:
    """Validate an experiment config in its ``__post_init__`` (issue 40), naming the field.

    Field types are core's ``check_fields``; every int is in ``[1, 10**8]`` (``[0, ...]`` for
    the fields in ``zero_ok``); every float and every number in a tuple is finite, in
    ``[0, 1]`` for the fields in ``unit`` and ``> 0`` for those in ``positive``; a tuple is
    non-empty (unless in ``zero_ok``); ``choices`` lists the values a field (or each entry of a
    tuple field) may take.
    """
    import math
    from dataclasses import fields

    from icml26.core import check_fields, check_in_interval, check_one_of, check_positive_int

    owner = type(config).__name__
    check_fields(config)
    for f in fields(config):
        value = getattr(config, f.name)
        items = value if isinstance(value, tuple) else (value,)
        if isinstance(value, tuple) and not value and f.name not in zero_ok:
            raise ValueError(f"{owner}: {f.name} must not be empty.")
        for v in items:
            if isinstance(v, bool) or not isinstance(v, int | float):
                continue
            if isinstance(v, int):
                low = 0 if f.name in zero_ok else 1
                check_positive_int(f.name, v, owner=owner, minimum=low, maximum=10**8)
            elif not math.isfinite(v):
                raise ValueError(f"{owner}: {f.name} must be finite; got {v!r}.")
            elif f.name in unit:
                check_in_interval(f.name, v, low=0.0, high=1.0, owner=owner)
            elif f.name in positive:
                check_in_interval(f.name, v, low=0.0, closed="neither", owner=owner)
    for name, allowed in (choices or {}).items():
        value = getattr(config, name)
        for v in value if isinstance(value, tuple) else (value,):
            check_one_of(name, v, allowed, owner=owner)
