"""Privacy-loss distributions (PLDs) of SGG mechanisms as dp_accounting objects, and composition.

The pair (P, P shifted by Δe₁) dominates one release (spherical symmetry and shift monotonicity),
and n adaptive releases are dominated by the product of such pairs (composition theorem for
dominating pairs, Zhu–Dong–Wang 2022), attained by non-adaptive worst-case shifts: composing the
PLDs is therefore tight up to discretisation. All convolution is done by dp_accounting.

Construction: radial Gauss–Legendre nodes r; at each node the direction law u is cut into M cells
of equal mass; the loss of a cell is the larger of its two edge values (exact upper bound: h∘ρ
is unimodal in u, so the cell's smallest h(ρ) sits at an edge); losses are rounded up to the grid
vdi·⌈L/vdi⌉ and handed to ``create_from_rounded_probability(pessimistic_estimate=True)``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
from dp_accounting.pld import privacy_loss_distribution as pld_lib
from scipy import special

from icml26.core import check_in_interval, check_positive_int
from icml26.sgg_dp.radial import log_radial_profile, radius_nodes

if TYPE_CHECKING:
    from icml26.sgg_dp.mechanism import SGGMechanism

__all__ = ["compose_delta", "compose_epsilon", "composed_pld", "make_pld"]

# Mass moved pessimistically at each end of the loss support (up to +inf / onto the lowest atom
# kept), so that the dense PMF dp_accounting builds stays short.
TAIL_MASS = 1e-15
CHUNK = 256  # radius nodes per block of the (nodes, M) loss array


def _edge_losses(r, edges_u, T, k, p, sigma, Delta):
    """L at every (radius, direction-edge) pair: shape (len(r), len(edges_u))."""
    rho2 = r[:, None] ** 2 + Delta**2 - 2 * r[:, None] * Delta * edges_u[None, :]
    rho = np.sqrt(np.maximum(rho2, 0.0))
    with np.errstate(invalid="ignore"):
        return log_radial_profile(r[:, None], T, k, p, sigma) - log_radial_profile(
            rho, T, k, p, sigma
        )


def _atoms(T, k, p, sigma, Delta, M, n_panels):
    """(loss, mass) pairs; each loss is an upper bound over its cell."""
    r, w = radius_nodes(k, p, sigma, n_panels)
    w = w / w.sum()
    if T == 1:
        # u = ±1 with probability ½ each: two exact atoms per radius node.
        L = _edge_losses(r, np.array([-1.0, 1.0]), T, k, p, sigma, Delta)
        yield L.ravel(), np.repeat(w / 2, 2)
        return
    a = (T - 1) / 2
    edges_u = 2 * special.betaincinv(a, a, np.linspace(0, 1, M + 1)) - 1  # equal-mass cells
    for start in range(0, len(r), CHUNK):
        block = slice(start, start + CHUNK)
        L = _edge_losses(r[block], edges_u, T, k, p, sigma, Delta)
        cell = np.maximum(L[:, :-1], L[:, 1:])  # (nodes, M)
        yield cell.ravel(), np.repeat(w[block] / M, M)


def make_pld(
    T: int,
    k: float,
    p: float,
    sigma: float,
    sensitivity: float = 1.0,
    value_discretization_interval: float = 1e-3,
    M: int = 2000,
    n_panels: int = 200,
) -> pld_lib.PrivacyLossDistribution:
    """Pessimistic PLD of one SGG release, as a dp_accounting ``PrivacyLossDistribution``.

    Parameters
    ----------
    T, k, p, sigma, sensitivity
        The SGG mechanism (dimension, shape, power, scale, ℓ2 sensitivity).
    value_discretization_interval
        Loss grid step (dp_accounting's ``value_discretization_interval``).
    M
        Equal-mass direction cells per radius node (T >= 2; pessimistic in u).
    n_panels
        Gauss–Legendre panels of the radial rule (24 nodes each; not pessimistic in r).

    Returns
    -------
    PrivacyLossDistribution
        Symmetric PLD (the pair and its reverse have the same loss law).

    Raises
    ------
    ValueError
        If a parameter is out of range.

    Example
    -------
    >>> pld = make_pld(T=5, k=5.0, p=2.0, sigma=2 * 2**0.5, M=200, n_panels=50)
    >>> bool(0 < pld.get_delta_for_epsilon(1.0) < 1e-2)
    True
    """
    owner = "make_pld"
    T = check_positive_int("T", T, owner=owner)
    for name, value in (("k", k), ("p", p), ("sigma", sigma), ("sensitivity", sensitivity)):
        check_in_interval(name, value, low=0.0, closed="neither", owner=owner)
    vdi = check_in_interval(
        "value_discretization_interval",
        value_discretization_interval,
        low=0.0,
        high=1.0,
        closed="right",
        owner=owner,
    )
    M = check_positive_int("M", M, owner=owner)
    n_panels = check_positive_int("n_panels", n_panels, owner=owner)

    keys, masses, infinity_mass = [], [], 0.0
    for L, mass in _atoms(T, k, p, sigma, sensitivity, M, n_panels):
        finite = np.isfinite(L) | (L < 0)  # -inf (a null set) is kept and raised below
        infinity_mass += float(mass[~finite].sum())
        idx = np.ceil(np.maximum(L[finite], -1e6) / vdi).astype(np.int64)
        uniq, inverse = np.unique(idx, return_inverse=True)
        keys.append(uniq)
        masses.append(np.bincount(inverse, weights=mass[finite]))
    uniq, inverse = np.unique(np.concatenate(keys), return_inverse=True)
    pmf = np.bincount(inverse, weights=np.concatenate(masses))

    # Upper tail to +inf, lower tail raised onto the lowest kept atom: both pessimistic.
    top = np.cumsum(pmf[::-1])[::-1] <= TAIL_MASS / 2
    infinity_mass += float(pmf[top].sum())
    uniq, pmf = uniq[~top], pmf[~top]
    low = np.searchsorted(np.cumsum(pmf), TAIL_MASS / 2, side="right")
    if low > 0:
        pmf[low] += pmf[:low].sum()
        uniq, pmf = uniq[low:], pmf[low:]
    return pld_lib.PrivacyLossDistribution.create_from_rounded_probability(
        dict(zip(uniq.tolist(), pmf.tolist(), strict=True)),
        infinity_mass,
        vdi,
        pessimistic_estimate=True,
    )


def composed_pld(
    mechanisms: Sequence[tuple[SGGMechanism, int]], **pld_options: float
) -> pld_lib.PrivacyLossDistribution:
    """PLD of releasing each mechanism ``count`` times (dp_accounting self-compose and compose).

    Parameters
    ----------
    mechanisms
        ``[(mechanism, count), ...]`` of calibrated mechanisms and positive counts.
    pld_options
        Passed to :meth:`SGGMechanism.to_pld` (``value_discretization_interval``, ``M``,
        ``n_panels``); all PLDs must share one discretisation to be composable.

    Raises
    ------
    ValueError
        If the list is empty or a count is not a positive integer.
    """
    if len(mechanisms) == 0:
        raise ValueError("composed_pld: mechanisms must be a non-empty list of (mechanism, count).")
    total = None
    for mechanism, count in mechanisms:
        count = check_positive_int("count", count, owner="composed_pld")
        pld = mechanism.to_pld(**pld_options).self_compose(count)
        total = pld if total is None else total.compose(pld)
    return total


def compose_epsilon(
    mechanisms: Sequence[tuple[SGGMechanism, int]], delta: float, **pld_options: float
) -> float:
    """ε of the composition of ``mechanisms`` at ``delta`` (tight PLD accounting).

    Parameters
    ----------
    mechanisms
        ``[(mechanism, count), ...]``.
    delta
        Target δ in (0, 1).
    pld_options
        See :func:`composed_pld`.

    Returns
    -------
    float
        The smallest ε on the PLD's grid with δ_composed(ε) <= ``delta``.

    Raises
    ------
    ValueError
        If ``delta`` is not in (0, 1) or ``mechanisms`` is malformed.

    Example
    -------
    >>> from icml26.sgg_dp import gaussian_member
    >>> eps = compose_epsilon([(gaussian_member(3, std=4.0), 4)], 1e-5, M=200, n_panels=50)
    >>> round(eps, 1)
    2.0
    """
    delta = check_in_interval(
        "delta", delta, low=0.0, high=1.0, closed="neither", owner="compose_epsilon"
    )
    return float(composed_pld(mechanisms, **pld_options).get_epsilon_for_delta(delta))


def compose_delta(
    mechanisms: Sequence[tuple[SGGMechanism, int]], eps: float, **pld_options: float
) -> float:
    """δ(ε) of the composition of ``mechanisms`` (tight PLD accounting).

    See :func:`compose_epsilon` for the parameters.

    Raises
    ------
    ValueError
        If ``eps < 0`` or ``mechanisms`` is malformed.
    """
    eps = check_in_interval("eps", eps, low=0.0, owner="compose_delta")
    return float(composed_pld(mechanisms, **pld_options).get_delta_for_epsilon(eps))
