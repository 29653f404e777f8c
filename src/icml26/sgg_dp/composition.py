"""Tight composition of SGG releases: dp_accounting PLDs of each mechanism, composed.

The pair (P, P shifted by Δe₁) dominates one release, and n adaptive releases are dominated by
the product of such pairs (Zhu–Dong–Wang 2022), so composing the pessimistic PLDs of
:func:`icml26.sgg_dp.make_pld` (dp_accounting's ``self_compose`` and ``compose``) is tight up to
discretisation.
"""

from __future__ import annotations

from collections.abc import Sequence

from dp_accounting.pld import privacy_loss_distribution as pld_lib

from icml26.core import check_in_interval, check_positive_int
from icml26.sgg_dp.mechanism import SGGMechanism, check_mechanism

__all__ = ["compose_delta", "compose_epsilon", "composed_pld"]

MAX_COUNT = 100_000  # largest count of one mechanism in a composition (checked first)


def composed_pld(
    mechanisms: Sequence[tuple[SGGMechanism, int]], **pld_options: float
) -> pld_lib.PrivacyLossDistribution:
    """PLD of releasing each mechanism ``count`` times (dp_accounting self-compose and compose).

    Parameters
    ----------
    mechanisms
        ``[(mechanism, count), ...]`` of calibrated mechanisms and positive counts
        (each at most ``MAX_COUNT`` = 100 000).
    pld_options
        Passed to :meth:`SGGMechanism.to_pld` (``value_discretization_interval``, ``M``,
        ``n_panels``); all PLDs must share one discretisation to be composable.

    Raises
    ------
    TypeError
        If ``mechanisms`` is not a list of (SGGMechanism, int) pairs.
    ValueError
        If the list is empty, a count is not in [1, MAX_COUNT] or a mechanism is uncalibrated.
    """
    owner = "composed_pld"
    shape = "a non-empty list of (SGGMechanism, count) pairs"
    if not isinstance(mechanisms, Sequence) or isinstance(mechanisms, str):
        raise TypeError(f"{owner}: mechanisms must be {shape}; got {type(mechanisms).__name__}.")
    if len(mechanisms) == 0:
        raise ValueError(f"{owner}: mechanisms must be {shape}; got an empty list.")
    pairs = []
    for item in mechanisms:
        if not isinstance(item, Sequence) or len(item) != 2:
            raise TypeError(f"{owner}: mechanisms must be {shape}; got an item {item!r}.")
        mechanism = check_mechanism("mechanisms", item[0], owner)
        count = check_positive_int("count", item[1], owner=owner, maximum=MAX_COUNT)
        mechanism._scale("build its PLD")
        pairs.append((mechanism, count))
    total = None
    for mechanism, count in pairs:
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

    Examples
    --------
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
