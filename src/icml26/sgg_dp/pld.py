"""Privacy-loss distributions (PLDs) of SGG mechanisms as dp_accounting objects.

The pair (P, P shifted by Δe₁) dominates one release (spherical symmetry and shift monotonicity),
and n adaptive releases are dominated by the product of such pairs (composition theorem for
dominating pairs, Zhu–Dong–Wang 2022), attained by non-adaptive worst-case shifts: composing the
PLDs is therefore tight up to discretisation (:mod:`icml26.sgg_dp.composition`). All convolution
is done by dp_accounting.

Construction (spec §2.5, changed: see Deviations). The loss L is discretised directly on the grid
c_j = j·vdi. At each radial Gauss–Legendre node r, the conditional survival S(c | r) = P_u[L > c]
is evaluated at every grid level c_j the node's loss range covers: the level set {L > c} is
{u < u₂} (k <= T, where L is decreasing in u) or {u < u₂} ∪ {u > u₁} (k > T, L quasi-convex in
u), with u₁, u₂ the points where L crosses c (:mod:`level_sets`). Each crossing is moved outwards
to the next point of a fixed fine direction table (uniform in u and in the Student-t variable
√(T−1)·u/√(1−u²), M cells each, Beta CDF computed once per (T, M)); this makes Ŝ(c_j | r) the
exact mass of the table cells whose largest edge loss exceeds c_j, an upper bound of S(c_j | r).
The node's mass between two levels goes to the upper level (privacy-loss rounding up), so every
node's loss law is stochastically dominated, which keeps δ(ε) and all compositions pessimistic
in u. The radial rule is a quadrature (not pessimistic), accurate to ~1e-10 relative.

Deviation from the spec's equal-mass cells: an equal-mass cell next to u = −1 carries mass 1/M at
the largest loss and puts a floor ~1/M under δ, which made ε loose as T grew (issue 17). Now the
only costs are the rounding (<= vdi per release) and the table spacing (far below vdi).
Tails: per node the table is cut where the u-law has mass 1e-15 left (lumped at the tail's
largest loss); losses above ``LOSS_CAP`` go to +inf and below −``LOSS_CAP`` are raised to it.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np
from dp_accounting.pld import privacy_loss_distribution as pld_lib
from scipy import special

from icml26.core import check_in_interval, check_positive_int
from icml26.sgg_dp.level_sets import level_set, u_lower
from icml26.sgg_dp.profile import log_loss_survival
from icml26.sgg_dp.radial import log_radial_profile, radius_nodes

__all__ = ["make_pld"]

# Mass moved pessimistically at each end of the loss support (up to +inf / onto the lowest atom
# kept), so that the dense PMF dp_accounting builds stays short.
TAIL_MASS = 1e-15
# Per node, the u-law's tails beyond mass max(Q_TAIL, Q_ABS/weight) are lumped at their largest
# loss (in all <= ~1e-14 of mass, moved up).
Q_TAIL = 1e-15
Q_ABS = 1e-17
# Losses above LOSS_CAP count as +inf (e^{-64} ~ 1e-28: no δ(ε) for ε << 64 can tell).
LOSS_CAP = 64.0
# A loss within ROUND_TOL grid steps above a grid point is rounded down to it: the losses are
# exact to ~1e-15, and pure-DP members' largest loss (Δ/σ)^p must land on its own grid point.
ROUND_TOL = 1e-9
# Crossings are moved outwards by this relative margin before snapping (Newton's roots are exact
# to ~1e-15 but may sit on the inner side).
SNAP_MARGIN = 1e-12
# Studentised direction table spans |√(T−1) u/√(1−u²)| <= V_MAX (normal tail ~1e-33 at T -> ∞).
V_MAX = 12.0
MAX_CROSSINGS = 2_000_000  # per block of radial nodes
# k > T: the upper tail of the loss is checked against its exact survival P[L > c] from the
# profile (:func:`_exact_tail`) on levels SCAN_STEP apart, from where the PLD's survival falls
# to SCAN_FROM; from the first level where the PLD is below it (or looser than those steps),
# the survival is the exact one on levels TAIL_STEP_REL·c (at least TAIL_STEP_MIN) apart, up to
# where it is below TAIL_MASS / 2 (the rest goes to +inf).
SCAN_FROM = 0.1
SCAN_STEP = 0.25
TAIL_STEP_REL = 0.02
TAIL_STEP_MIN = 0.01
SURVIVAL_MARGIN = 1e-6  # relative: the survival's quadrature error is far below


@dataclass(frozen=True)
class _DirectionTable:
    """Points of [−1, 1] for u, as x = (1 + u)/2 and 1 − x, with the Beta CDF at each."""

    x: np.ndarray  # (n,) increasing
    xc: np.ndarray  # (n,) 1 − x, formed directly
    F: np.ndarray  # P(U₁ <= u)
    Fc: np.ndarray  # P(U₁ > u)


@functools.lru_cache(maxsize=8)
def _direction_table(T: int, M: int) -> _DirectionTable:
    """The lower half of the table (x <= ½), mirrored: the u-law is symmetric about 0."""
    a = (T - 1) / 2
    x_u = np.linspace(0.0, 0.5, M // 2 + 1)  # uniform in u, spacing 2/M
    v = np.linspace(-V_MAX, 0.0, M // 2 + 1)  # uniform in the Student-t variable
    x_v = 0.5 * (1 + v / np.sqrt(v * v + T - 1))
    half = np.unique(np.concatenate([x_u, x_v]))  # (n,), half[-1] = 0.5
    F_half = special.betainc(a, a, half)
    x = np.concatenate([half, 1.0 - half[-2::-1]])
    xc = np.concatenate([1.0 - half, half[-2::-1]])
    F = np.concatenate([F_half, 1.0 - F_half[-2::-1]])
    Fc = np.concatenate([1.0 - F_half, F_half[-2::-1]])
    return _DirectionTable(x, xc, F, Fc)


def _loss(r, x, xc, T, k, p, sigma, Delta):
    """L = h(r) − h(ρ) at radii ``r`` and direction points x = (1 + u)/2 (broadcast)."""
    # ρ² = (r + Δ)² − 4rΔx = (r − Δ)² + 4rΔ(1 − x): use the form without cancellation.
    rho2 = np.where(
        x <= 0.5, (r + Delta) ** 2 - 4 * r * Delta * x, (r - Delta) ** 2 + 4 * r * Delta * xc
    )
    rho = np.sqrt(np.maximum(rho2, 0.0))
    with np.errstate(invalid="ignore", divide="ignore"):
        return log_radial_profile(r, T, k, p, sigma) - log_radial_profile(rho, T, k, p, sigma)


def _grid_index(L: np.ndarray, vdi: float, up: bool = True) -> np.ndarray:
    """⌈L/vdi⌉ (``up``) or ⌊L/vdi⌋ (up to ROUND_TOL), as float so that ±inf survives."""
    with np.errstate(invalid="ignore"):
        return np.ceil(L / vdi - ROUND_TOL) if up else np.floor(L / vdi + ROUND_TOL)


class _Accumulator:
    """Rounded PMF on the grid j·vdi, j in [−J, J] (J = ⌈LOSS_CAP/vdi⌉), plus an infinite atom.

    ``up`` (an upper bound of the loss law): losses above the cap go to +inf and those below −cap
    are raised to it. Not ``up`` (a lower bound): losses below −cap go to −inf (``infinity``
    then holds the mass at −inf) and those above the cap are lowered to it.
    """

    def __init__(self, vdi: float, up: bool = True) -> None:
        self.J = math.ceil(LOSS_CAP / vdi)
        self.pmf = np.zeros(2 * self.J + 1)
        self.infinity = 0.0
        self.up = up

    def add(self, j: np.ndarray, mass: np.ndarray) -> None:
        """Add ``mass`` at grid indices ``j`` (float; beyond ±J or NaN: see the class doc)."""
        if self.up:
            finite = np.isfinite(j) & (j <= self.J)
            idx = np.maximum(j[finite], -self.J)
        else:
            finite = j >= -self.J  # False for NaN and −inf
            idx = np.minimum(j[finite], self.J)
        self.infinity += float(mass[~finite].sum())
        idx = idx.astype(np.int64) + self.J
        self.pmf += np.bincount(idx, weights=mass[finite], minlength=len(self.pmf))


def _tail_cuts(W: np.ndarray, table: _DirectionTable) -> tuple[np.ndarray, np.ndarray]:
    """Per node, the table indices (lo, hi) outside which the u-law is lumped.

    A node of weight W lumps at most max(Q_TAIL, Q_ABS/W) (and at most 1%) of its mass per tail,
    i.e. <= Q_ABS in absolute terms for the light nodes of the radial tails, which shortens their
    loss ranges a lot (the mirror-symmetric table makes hi = n − 1 − lo).
    """
    q = np.clip(Q_ABS / np.maximum(W, 1e-300), Q_TAIL, 0.01)
    lo = np.maximum(np.searchsorted(table.F, q, side="right") - 1, 0)
    return lo, len(table.x) - 1 - lo


def _node_ranges(r, lo, hi, T, k, p, sigma, Delta, table, eps0):
    """Per node: loss range of the table part, the two tail lumps (largest loss, mass fraction)
    and the smallest loss over every direction."""
    L_lo = _loss(r, table.x[lo], table.xc[lo], T, k, p, sigma, Delta)
    L_hi = _loss(r, table.x[hi], table.xc[hi], T, k, p, sigma, Delta)
    L_minus = _loss(r, 0.0, 1.0, T, k, p, sigma, Delta)  # u = −1
    L_plus = _loss(r, 1.0, 0.0, T, k, p, sigma, Delta)  # u = +1
    if k <= T:  # L decreasing in u
        top, bottom = L_lo, L_hi
        lumps = ((L_minus, table.F[lo]), (L_hi, table.Fc[hi]))
        lowest = L_plus
    else:  # L quasi-convex in u, smallest where ρ = t* (the maximum of h)
        t_star = sigma * ((k - T) / p) ** (1.0 / p)
        x_star = u_lower(np.log(t_star / r), r, Delta)
        inside = (table.x[lo] < x_star) & (x_star < table.x[hi])
        L_star = log_radial_profile(r, T, k, p, sigma) - log_radial_profile(
            np.asarray(t_star), T, k, p, sigma
        )
        top = np.maximum(L_lo, L_hi)
        bottom = np.where(inside, L_star, np.minimum(L_lo, L_hi))
        lumps = ((np.maximum(L_minus, L_lo), table.F[lo]), (np.maximum(L_hi, L_plus), table.Fc[hi]))
        lowest = np.where((x_star > 0) & (x_star < 1), L_star, np.minimum(L_minus, L_plus))
    if eps0 is not None:  # pure DP: |L| <= ε₀ exactly; clamp round-off
        top, bottom = np.minimum(top, eps0), np.maximum(bottom, -eps0)
        lumps = tuple((np.minimum(L, eps0), m) for L, m in lumps)
        lowest = np.maximum(lowest, -eps0)
    return top, bottom, lumps, lowest


def _survival(r, w, c, lo, hi, T, k, p, Delta, table, up=True):
    """Ŝ(c | r): mass of the table cells in [lo, hi] whose largest edge loss exceeds c (``up``:
    crossings snapped outwards, an upper bound), or whose smallest one does (crossings snapped
    inwards, a lower bound)."""
    total = table.F[hi] - table.F[lo]
    ls = level_set(w, c, T, k, p)
    x2 = u_lower(ls.tau2, r, Delta)  # {L > c} ⊇ {x < x2} (and {x > x1} for k > T)
    if up:
        i2 = np.searchsorted(table.x, x2 * (1 + SNAP_MARGIN), side="left")
    else:
        i2 = np.searchsorted(table.x, x2 * (1 - SNAP_MARGIN), side="right") - 1
    i2 = np.clip(i2, lo, hi)
    S = table.F[i2] - table.F[lo]
    if ls.tau1 is not None:
        x1 = u_lower(ls.tau1, r, Delta)
        if up:
            i1 = np.searchsorted(table.x, x1 * (1 - SNAP_MARGIN), side="right") - 1
        else:
            i1 = np.searchsorted(table.x, x1 * (1 + SNAP_MARGIN), side="left")
        i1 = np.clip(i1, lo, hi)
        S = np.where(i1 < i2, total, np.minimum(S + table.Fc[i1] - table.Fc[hi], total))
    return np.where(ls.everything, total, S)


def _sphere_atoms(acc, r, W, T, k, p, sigma, Delta, vdi, M, eps0):
    """Add the rounded loss law of the nodes (r, W) to ``acc`` (T >= 2), rounded up (an upper
    bound of the law) or, for ``acc.up`` False, down (a lower bound)."""
    up = acc.up
    table = _direction_table(T, M)
    lo, hi = _tail_cuts(W, table)
    total = table.F[hi] - table.F[lo]
    top, bottom, lumps, lowest = _node_ranges(r, lo, hi, T, k, p, sigma, Delta, table, eps0)
    for L, frac in lumps:  # rounded down, a lump goes to the smallest loss of its node
        acc.add(_grid_index(L if up else lowest, vdi, up), W * frac)
    if up:  # levels ⌈bottom⌉ − 1 (all mass above) to ⌈top⌉ (or J + 1 = +inf)
        ja = np.maximum(_grid_index(bottom, vdi) - 1, -acc.J - 1)
        jb = _grid_index(top, vdi)
    else:  # levels ⌊bottom⌋ (or −J − 1 = −inf; all mass above) to ⌊top⌋ + 1 (none above)
        ja = np.maximum(_grid_index(bottom, vdi, up=False), -acc.J - 1)
        jb = _grid_index(top, vdi, up=False) + 1
    jb = np.where(jb <= acc.J, jb, acc.J + 1)  # beyond the cap
    n_inner = (jb - ja - 1).astype(np.int64)  # levels evaluated by crossings
    w = (r / sigma) ** p
    start = 0
    while start < len(r):
        stop = start + max(1, int(np.searchsorted(np.cumsum(n_inner[start:] + 2), MAX_CROSSINGS)))
        nodes = np.arange(start, stop)
        start = stop
        n = n_inner[nodes]
        seg = np.repeat(nodes, n + 2)  # one segment per node: total, inner levels, end
        pos = np.arange(len(seg)) - np.repeat(np.cumsum(n + 2) - (n + 2), n + 2)
        j = ja[seg] + pos
        first, last = pos == 0, pos == n_inner[seg] + 1
        inner = ~first & ~last
        S = np.where(first, total[seg], 0.0)
        i = seg[inner]
        S[inner] = _survival(r[i], w[i], j[inner] * vdi, lo[i], hi[i], T, k, p, Delta, table, up)
        drop_from = S.copy()
        if up:
            # Ŝ is non-increasing in c; enforce it per segment against round-off: the smallest
            # upper bound at a lower level (cumulative min) is still an upper bound.
            S = np.minimum.accumulate(S - 2.0 * seg) + 2.0 * seg
            # The mass between the previous level and level j goes to j; the last level of a
            # node is ⌈top/vdi⌉, or J + 1 (= +inf) where the loss range passes the cap.
            drop = S[:-1] - S[1:]
            keep = ~first[1:]
            acc.add(j[1:][keep], np.maximum(drop[keep], 0.0) * W[seg[1:][keep]])
        else:
            # the largest lower bound at a higher level (cumulative max from the end of each
            # segment) is still a lower bound; the mass between level j and the next goes to j
            S = np.maximum.accumulate((S - 2.0 * seg)[::-1])[::-1] + 2.0 * seg
            drop = S[:-1] - S[1:]
            keep = ~last[:-1]
            acc.add(j[:-1][keep], np.maximum(drop[keep], 0.0) * W[seg[:-1][keep]])
        del drop_from


def _exact_tail(acc, T, k, p, sigma, Delta, vdi) -> None:
    """Raise the accumulated PLD's upper tail to the exact survival of the loss (k > T).

    For k > T the loss is unbounded near x = v, in a region that shrinks like a ball of radius
    e^{−c/(k−T)} around v as the level c grows; the radial rule and the direction table do not
    resolve it, so the accumulated survival Ĝ(c) = P̂[L > c] falls below the exact S(c) in the
    tail (δ(ε) under-reported by orders of magnitude at small δ). With exact values S(c_i) on
    levels c_i of the grid, setting Ĝ(c) := max(Ĝ(c), S(c_i)) for c in [c_i, c_{i+1}) makes
    Ĝ >= S there (S is non-increasing); it is applied from the first scanned level where Ĝ < S,
    and below it Ĝ is raised to at most S of that level, which keeps Ĝ non-increasing.
    """
    pmf = acc.pmf
    # G[i] = P̂[L > (i − J)·vdi]: the mass at higher levels and at +inf
    G = np.concatenate([np.cumsum(pmf[::-1])[::-1][1:], [0.0]]) + acc.infinity
    levels = (np.arange(len(pmf)) - acc.J) * vdi

    def exact(c: float) -> float:
        return math.exp(log_loss_survival(c, T, k, p, sigma, Delta)) * (1 + SURVIVAL_MARGIN)

    def index(c: float) -> int:
        return round(c / vdi) + acc.J

    def step_at(c: float) -> float:
        return max(TAIL_STEP_MIN, TAIL_STEP_REL * c)

    # 1. scan for the first level where the accumulated tail is below the exact one, or above
    # the exact one a fine step lower (looser than the exact steps of part 2 would be)
    start = max(0.0, float(levels[np.argmax(G <= SCAN_FROM)]))
    c, first = start, None
    while c < LOSS_CAP:
        value = exact(c)
        if G[index(c)] < value or G[index(c)] > exact(max(c - step_at(c), 0.0)):
            first = max(start, c - SCAN_STEP)
            break
        if value <= TAIL_MASS / 2:
            return
        c = math.ceil((c + SCAN_STEP) / vdi) * vdi
    if first is None:
        return
    # 2. from there on, Ĝ is the exact survival on a fine set of levels, held constant up to
    # the next one (an upper bound of S); below, Ĝ is raised to at most S(first)
    c, value = first, exact(first)
    G[: index(first)] = np.maximum(G[: index(first)], value)
    while True:
        nxt = math.ceil((c + step_at(c)) / vdi) * vdi
        i, j = index(c), min(index(nxt), len(G))
        G[i:j] = value
        if j >= len(G) or value <= TAIL_MASS / 2:
            G[i:] = value  # the rest (and +inf) keeps this level's mass
            break
        c, value = nxt, exact(nxt)
    infinity = max(acc.infinity, float(G[-1]))
    above = np.concatenate([[acc.infinity + pmf.sum()], G])  # P̂[L > level below] ...
    acc.pmf = np.maximum(above[:-1] - above[1:], 0.0)
    acc.infinity = infinity


def _trim_up(keys: np.ndarray, pmf: np.ndarray, infinity: float):
    """Upper tail (mass TAIL_MASS / 2) to +inf, lower tail raised onto the lowest kept atom."""
    top = np.cumsum(pmf[::-1])[::-1] <= TAIL_MASS / 2
    infinity += float(pmf[top].sum())
    keys, pmf = keys[~top], pmf[~top]
    low = np.searchsorted(np.cumsum(pmf), TAIL_MASS / 2, side="right")
    if low > 0:
        pmf[low] += pmf[:low].sum()
        keys, pmf = keys[low:], pmf[low:]
    return keys, pmf, infinity


def _trim_down(keys: np.ndarray, pmf: np.ndarray, minus_infinity: float):
    """Lower tail (mass TAIL_MASS / 2) to −inf, upper tail lowered onto the highest kept atom."""
    bottom = np.cumsum(pmf) <= TAIL_MASS / 2
    minus_infinity += float(pmf[bottom].sum())
    keys, pmf = keys[~bottom], pmf[~bottom]
    high = np.searchsorted(np.cumsum(pmf[::-1]), TAIL_MASS / 2, side="right")
    if high > 0:
        pmf[-high - 1] += pmf[-high:].sum()
        keys, pmf = keys[:-high], pmf[:-high]
    return keys, pmf, minus_infinity


def _loss_law(T, k, p, sigma, sensitivity, vdi, M, n_panels, up=True):
    """The rounded law of L under P on the grid: (integer keys, masses, mass at ±inf).

    ``up``: every loss rounded up, an upper bound of the law (stochastically larger), the mass
    at +inf last. Not ``up``: rounded down, a lower bound, the mass at −inf last. The radial
    rule is a quadrature in both (not a bound).
    """
    eps0 = (sensitivity / sigma) ** p if (k == T and p <= 1) else None
    r, W = radius_nodes(k, p, sigma, n_panels)
    acc = _Accumulator(vdi, up)
    acc.infinity += max(0.0, 1.0 - float(W.sum()))  # radial tails beyond the rule: ±inf
    W = W / max(1.0, float(W.sum()))
    if T == 1:
        # u = ±1 with probability ½ each: two exact atoms per radius node.
        for x in (0.0, 1.0):
            L = _loss(r, x, 1.0 - x, T, k, p, sigma, sensitivity)
            if eps0 is not None:
                L = np.clip(L, -eps0, eps0)
            acc.add(_grid_index(L, vdi, up), W / 2)
    else:
        _sphere_atoms(acc, r, W, T, k, p, sigma, sensitivity, vdi, M, eps0)
    if k > T and up:  # rounded down, the unresolved upper tail errs on the right side
        _exact_tail(acc, T, k, p, sigma, sensitivity, vdi)
    keys = np.arange(-acc.J, acc.J + 1)
    nonzero = acc.pmf > 0
    trim = _trim_up if up else _trim_down
    return trim(keys[nonzero], acc.pmf[nonzero], acc.infinity)


def _rounded_up(values: np.ndarray, mass: np.ndarray, infinity: float, vdi: float):
    """The law of ``values`` (weights ``mass``; +inf allowed) rounded up to the grid, trimmed."""
    j = _grid_index(values, vdi)
    finite = np.isfinite(j)
    infinity += float(mass[~finite].sum())
    keys, index = np.unique(j[finite].astype(np.int64), return_inverse=True)
    pmf = np.bincount(index, weights=mass[finite], minlength=len(keys))
    return _trim_up(keys, pmf, infinity)


def _subsampled_laws(T, k, p, sigma, sensitivity, q, vdi, M, n_panels):
    """Rounded-up laws of the Poisson-subsampled release's loss, for REMOVE and ADD neighbours.

    With (P, Q) the release's dominating pair and ℓ = ln dP/dQ (law ω under P, −ω under Q, by
    the reflection x ↦ v − x), Poisson subsampling with probability q is dominated by
    (qP + (1 − q)Q, Q) for REMOVE and by (Q, qP + (1 − q)Q) for ADD neighbours (Zhu, Dong &
    Wang 2022, Theorem 11; dp_accounting's ``mu_upper``/``mu_lower``). Their losses are
    increasing functions of ℓ: g(ℓ) = ln(1 − q + q e^ℓ) under qP + (1 − q)Q, i.e. ℓ ~ qω +
    (1 − q)(−ω), and h(z) = −ln(1 − q + q e^{−z}) with z ~ ω. Pushing an upper bound of ω (and,
    in the −ω part, a lower bound, so that −ω is bounded above) through them and rounding up
    keeps both laws upper bounds, hence δ(ε) and every composition pessimistic.
    """
    up_keys, up_mass, up_inf = _loss_law(T, k, p, sigma, sensitivity, vdi, M, n_panels, True)
    dn_keys, dn_mass, dn_minus_inf = _loss_law(T, k, p, sigma, sensitivity, vdi, M, n_panels, False)
    log_q, log_1mq = math.log(q), math.log1p(-q)
    x_up, x_dn = up_keys * vdi, dn_keys * vdi
    # REMOVE: g(ℓ) with ℓ ~ q·ω (upper bound) + (1 − q)·(−ω) (−1 × the lower bound)
    remove = _rounded_up(
        np.logaddexp(log_1mq, log_q + np.concatenate([x_up, -x_dn])),
        np.concatenate([q * up_mass, (1 - q) * dn_mass]),
        q * up_inf + (1 - q) * dn_minus_inf,  # ℓ = +inf in either part: g = +inf
        vdi,
    )
    # ADD: h(z), z ~ ω (upper bound); h(+inf) = −ln(1 − q), the largest loss of the pair
    add = _rounded_up(
        np.concatenate([-np.logaddexp(log_1mq, log_q - x_up), [-log_1mq]]),
        np.concatenate([up_mass, [up_inf]]),
        0.0,
        vdi,
    )
    return remove, add


def make_pld(
    T: int,
    k: float,
    p: float,
    sigma: float,
    sensitivity: float = 1.0,
    value_discretization_interval: float = 1e-4,
    M: int = 65536,
    n_panels: int = 40,
    sampling_prob: float = 1.0,
) -> pld_lib.PrivacyLossDistribution:
    """Pessimistic PLD of one SGG release, as a dp_accounting ``PrivacyLossDistribution``.

    Parameters
    ----------
    T, k, p, sigma, sensitivity
        The SGG mechanism (dimension, shape, power, scale, ℓ2 sensitivity).
    value_discretization_interval
        Loss grid step vdi (dp_accounting's ``value_discretization_interval``, whose default
        1e-4 this is too); every loss is rounded up to the grid, which costs at most vdi per
        release.
    M
        Cells of the direction table (T >= 2), in u and in the Student-t variable; the cost of
        snapping a crossing to the table is far below vdi for the default.
    n_panels
        Gauss–Legendre panels of the radial rule (24 nodes each; a quadrature, not pessimistic).
    sampling_prob
        q in (0, 1]: the release runs on a Poisson subsample that holds each record with
        probability q (DP-SGD's batches), for add-or-remove-one neighbours, as
        dp_accounting's ``from_gaussian_mechanism(..., sampling_prob=q)``. For q < 1 the PLD
        has different REMOVE and ADD laws (built from an upper and a lower bound of the
        release's loss law; about twice the cost).

    Returns
    -------
    PrivacyLossDistribution
        Symmetric for q = 1 (the pair and its reverse have the same loss law).

    Raises
    ------
    ValueError
        If a parameter is out of range.

    Examples
    --------
    A coarser loss grid than the default keeps the example quick (still an upper bound):

    >>> sgg = dict(T=5, k=5.0, p=2.0, sigma=2 * 2**0.5, n_panels=50)
    >>> pld = make_pld(**sgg, value_discretization_interval=1e-3)
    >>> bool(0 < pld.get_delta_for_epsilon(1.0) < 1e-2)
    True
    >>> sampled = make_pld(**sgg, value_discretization_interval=1e-3, sampling_prob=0.1)
    >>> bool(sampled.get_delta_for_epsilon(1.0) < pld.get_delta_for_epsilon(1.0))  # amplified
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
    M = check_positive_int("M", M, owner=owner, minimum=2)
    n_panels = check_positive_int("n_panels", n_panels, owner=owner)
    q = check_in_interval(
        "sampling_prob", sampling_prob, low=0.0, high=1.0, closed="right", owner=owner
    )
    if q == 1.0:
        keys, pmf, infinity = _loss_law(T, k, p, sigma, sensitivity, vdi, M, n_panels)
        return pld_lib.PrivacyLossDistribution.create_from_rounded_probability(
            dict(zip(keys.tolist(), pmf.tolist(), strict=True)),
            infinity,
            vdi,
            pessimistic_estimate=True,
        )
    remove, add = _subsampled_laws(T, k, p, sigma, sensitivity, q, vdi, M, n_panels)
    return pld_lib.PrivacyLossDistribution.create_from_rounded_probability(
        dict(zip(remove[0].tolist(), remove[1].tolist(), strict=True)),
        remove[2],
        vdi,
        pessimistic_estimate=True,
        rounded_probability_mass_function_add=dict(
            zip(add[0].tolist(), add[1].tolist(), strict=True)
        ),
        infinity_mass_add=add[2],
        symmetric=False,
    )
