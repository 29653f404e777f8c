"""Pieces the SGG experiments share: the paper reference, resources, the baselines' MSE."""

from __future__ import annotations

from typing import Any

from icml26.core import Resources

PAPER = (
    "Wei, Bienstock & Polychroniadou, Asymptotic Optimality of the High-Dimensional Gaussian "
    "Mechanism and Improved Low-Dimensional Mechanisms for DP, ICML 2026 (arXiv:2606.08681)"
)
RESOURCES = Resources(cpus=1)  # numpy / scipy quadrature: no torch threads to spend
# icml26.sgg_dp.search's MAX_T and MAX_GRID_POINTS (not imported: it loads scipy, and configs
# are built when the experiments are listed)
MAX_T = 10**6
MAX_GRID_POINTS = 10_000
INF = float("inf")


def check_config(config: object, ints: dict, reals: dict) -> None:
    """Validate an experiment config in its ``__post_init__`` (issue 40), naming the field.

    Field types are core's ``check_fields``. ``ints`` maps fields to ``(low, high)``; ``reals``
    to ``(low, high)`` or ``(low, high, closed)`` (``check_in_interval``'s ``closed``, default
    ``"both"``). A tuple field must be non-empty and each entry is checked.
    """
    from icml26.core import check_fields, check_in_interval, check_positive_int

    owner = type(config).__name__
    check_fields(config)
    for name, (low, high) in ints.items():
        for v in _entries(config, name, owner):
            check_positive_int(name, v, owner=owner, minimum=low, maximum=high)
    for name, (low, high, *closed) in reals.items():
        for v in _entries(config, name, owner):
            check_in_interval(name, v, low=low, high=high, closed=(closed or ["both"])[0],
                              owner=owner)  # fmt: skip


def _entries(config: object, name: str, owner: str) -> tuple:
    value = getattr(config, name)
    if not isinstance(value, tuple):
        return (value,)
    if not value:
        raise ValueError(f"{owner}: {name} must hold at least one value; got ().")
    return value


def check_table(config: Any) -> None:
    """``check_config`` for ``sgg_dp.table``'s config, and each row's (ε, δ, T) and k grid."""
    from icml26.core import check_in_interval, check_positive_int

    unit = (0.0, 1.0, "neither")
    check_config(
        config,
        {"composed_dim": (1, MAX_T), "n_compositions": (1, 10**4), "mc_batches": (1, 10**4),
         "M": (2, 2**24)},
        {"p_grid": (0.0, INF, "neither"), "k_offsets": (-INF, INF), "composed_eps": (0.0, INF),
         "composed_delta": unit, "target_delta": unit, "mc_deltas": unit,
         "value_discretization_interval": (0.0, 1.0, "right")},
    )  # fmt: skip
    owner = type(config).__name__
    # two draws a batch: each batch's z-score needs a sample sd
    check_positive_int("mc_samples", config.mc_samples, owner=owner,
                       minimum=2 * config.mc_batches, maximum=10**8)  # fmt: skip
    for eps, delta, T in config.rows:  # rows may be empty: the verdicts then read NaN
        check_in_interval("rows", eps, low=0.0, owner=owner)
        check_in_interval("rows", delta, low=0.0, high=1.0, closed="neither", owner=owner)
        check_positive_int("rows", T, owner=owner, maximum=MAX_T)
        n_k = len(k_grid(T, config.k_offsets))
        if not 1 <= n_k * len(config.p_grid) <= MAX_GRID_POINTS:
            raise ValueError(
                f"{owner}: rows' T = {T} with k_offsets {config.k_offsets} gives {n_k} k > 0; "
                f"k × p_grid must have 1 to {MAX_GRID_POINTS} points (best_member)."
            )


def k_grid(T: int, k_offsets: tuple[float, ...]) -> list[float]:
    """The k grid of a ``sgg_dp.table`` row: T + offset where positive, k = 1 alone at T = 1."""
    if T == 1:
        return [1.0]  # the slower exact 1-D routine: only k = 1, as in the spec's table
    return [T + o for o in k_offsets if T + o > 0]


def rel_err(value: float, reference: float) -> float:
    """|value − reference| / reference (the absolute error where the reference is 0)."""
    return abs(value - reference) / reference if reference > 0 else abs(value)


def baselines(eps: float, delta: float, T: int) -> tuple[float, float]:
    """MSE of the analytic Gaussian mechanism and of the calibrated ℓ2 mechanism at (ε, δ, T)."""
    from icml26.sgg_dp import analytic_gaussian_sigma, l2_member

    gauss = T * analytic_gaussian_sigma(eps, delta) ** 2
    return gauss, l2_member(T).calibrate(eps, delta).mse()
