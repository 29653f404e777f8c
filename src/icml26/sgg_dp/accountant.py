"""SGG releases as dp_accounting events, composable inside dp_accounting's PLD and RDP accountants.

dp_accounting accounts for a release through a ``DpEvent`` that its accountants recognise. Names
borrowed from dp_accounting keep its meaning here:

- ``noise_multiplier`` is dp_accounting's: the Gaussian noise standard deviation per unit of
  sensitivity. Only the Gaussian member has one (std/Δ = σ/(√2 Δ)); for it,
  :meth:`SGGMechanism.to_dp_event` returns dp_accounting's own ``GaussianDpEvent``, which every
  stock accountant composes (PLD and RDP, Poisson-subsampled too).
- :class:`SGGDpEvent` describes one release of any member by its shape (T, k, p) and its own
  scale ``sgg_scale`` = σ/Δ (the SGG scale per unit of sensitivity; √2 × noise_multiplier for
  the Gaussian member). Its ``noise_multiplier`` exists for the Gaussian member only and raises
  for the others: no Gaussian noise multiplier states their privacy (a ``GaussianDpEvent``
  built from ``sgg_scale`` would under-report ε: 0.68 for a Gaussian member calibrated to 1).

:class:`SGGPLDAccountant` is dp_accounting's ``PLDAccountant`` that also composes SGG events
(spec §2.5: the pessimistic PLD of the dominating pair, :func:`make_pld`), inside
``SelfComposedDpEvent``/``ComposedDpEvent``/``PoissonSampledDpEvent`` and together with every
event the base class knows. The Gaussian member is composed through dp_accounting's own Gaussian
PLD (``sampling_prob`` included), so its result is the one of ``GaussianDpEvent``. Poisson
subsampling of other members uses the subsampled PLD of :func:`make_pld` (add-or-remove-one
neighbours). :class:`SGGRdpAccountant` is dp_accounting's ``RdpAccountant`` that composes the
Gaussian member's SGG events as ``GaussianDpEvent`` and refuses the other members with a clear
error: no certified RDP curve of non-Gaussian SGG noise is derived here (use the PLD accountant).

Examples
--------
>>> from dp_accounting import dp_event
>>> from icml26.sgg_dp import SGGDpEvent, SGGPLDAccountant
>>> event = SGGDpEvent(T=10, k=10.0, p=2.0, sgg_scale=4.0 * 2**0.5)  # the Gaussian member
>>> round(event.noise_multiplier, 12)  # dp_accounting's meaning: std / sensitivity
4.0
>>> ours = SGGPLDAccountant().compose(dp_event.SelfComposedDpEvent(event, 20))
>>> ref = SGGPLDAccountant().compose(dp_event.SelfComposedDpEvent(
...     dp_event.GaussianDpEvent(noise_multiplier=4.0), 20))
>>> abs(ours.get_epsilon(1e-5) - ref.get_epsilon(1e-5)) < 1e-9
True
"""

from __future__ import annotations

import math

import attr
from dp_accounting import dp_event
from dp_accounting.pld import pld_privacy_accountant
from dp_accounting.pld import privacy_loss_distribution as pld_lib
from dp_accounting.privacy_accountant import NeighboringRelation as NeighborRel
from dp_accounting.rdp import rdp_privacy_accountant

from icml26.core import check_in_interval, check_positive_int
from icml26.sgg_dp.pld import make_pld

__all__ = ["SGGDpEvent", "SGGPLDAccountant", "SGGRdpAccountant"]

OWNER = "SGGDpEvent"


@attr.s(frozen=True, slots=True, auto_attribs=True)
class SGGDpEvent(dp_event.DpEvent):
    """One release of a calibrated SGG mechanism with ℓ2 sensitivity ``Δ``.

    Attributes
    ----------
    T, k, p
        The member's dimension and shape (``SGGMechanism``'s).
    sgg_scale
        σ/Δ, the SGG scale per unit of sensitivity (``SGGMechanism.sigma / sensitivity``). For
        the Gaussian member it is √2 × the Gaussian ``noise_multiplier``, not that multiplier.
    M, n_panels
        Resolution of the member's PLD (see :func:`icml26.sgg_dp.make_pld`).

    Examples
    --------
    >>> gauss = SGGDpEvent(T=3, k=3.0, p=2.0, sgg_scale=2.0 * 2**0.5)
    >>> round(gauss.noise_multiplier, 12)
    2.0
    >>> SGGDpEvent(T=3, k=3.0, p=1.35, sgg_scale=2.0).noise_multiplier
    Traceback (most recent call last):
    ...
    ValueError: SGGDpEvent: noise_multiplier is dp_accounting's Gaussian noise multiplier ...
    """

    T: int
    k: float
    p: float
    sgg_scale: float
    M: int = 65536
    n_panels: int = 40

    def __attrs_post_init__(self) -> None:
        check_positive_int("T", self.T, owner=OWNER)
        check_in_interval("k", self.k, low=0.0, closed="neither", owner=OWNER)
        check_in_interval("p", self.p, low=0.0, closed="neither", owner=OWNER)
        check_in_interval("sgg_scale", self.sgg_scale, low=0.0, closed="neither", owner=OWNER)
        check_positive_int("M", self.M, owner=OWNER, minimum=2)
        check_positive_int("n_panels", self.n_panels, owner=OWNER)

    @property
    def is_gaussian(self) -> bool:
        """k = T and p = 2: N(0, s²I) with s = σ/√2."""
        return self.k == self.T and self.p == 2.0

    @property
    def noise_multiplier(self) -> float:
        """dp_accounting's noise multiplier, std/Δ = ``sgg_scale``/√2 (the Gaussian member only).

        Raises
        ------
        ValueError
            For a non-Gaussian member: no Gaussian noise multiplier states its privacy (its
            loss has other tails), so a ``GaussianDpEvent`` of any number would misstate ε.
        """
        if not self.is_gaussian:
            raise ValueError(
                f"{OWNER}: noise_multiplier is dp_accounting's Gaussian noise multiplier "
                f"(std / sensitivity); the member (T, k, p) = ({self.T}, {self.k:g}, "
                f"{self.p:g}) is not Gaussian, and no GaussianDpEvent states its privacy. "
                "Compose the SGGDpEvent itself with SGGPLDAccountant; its own scale is "
                f"sgg_scale = {self.sgg_scale:g}."
            )
        return self.sgg_scale / math.sqrt(2)

    def as_gaussian_event(self) -> dp_event.GaussianDpEvent:
        """dp_accounting's ``GaussianDpEvent`` of the Gaussian member (raises for the others)."""
        return dp_event.GaussianDpEvent(noise_multiplier=self.noise_multiplier)


def _check_relation(neighboring_relation: object, owner: str) -> NeighborRel:
    if not isinstance(neighboring_relation, NeighborRel):
        raise TypeError(
            f"{owner}: neighboring_relation must be a dp_accounting NeighboringRelation; "
            f"got {type(neighboring_relation).__name__}."
        )
    return neighboring_relation


class SGGPLDAccountant(pld_privacy_accountant.PLDAccountant):
    """dp_accounting's ``PLDAccountant`` that also composes :class:`SGGDpEvent`.

    SGG events are composed alone, inside ``SelfComposedDpEvent``/``ComposedDpEvent`` and inside
    ``PoissonSampledDpEvent`` (Poisson subsampling; for a non-Gaussian member with
    add-or-remove-one neighbours), mixed with every event the stock accountant knows.

    Parameters
    ----------
    neighboring_relation
        As for ``PLDAccountant``; an SGG event's sensitivity is the ℓ2 change of the query
        under that relation (e.g. the clipping norm for add/remove-one DP-SGD), so the relation
        does not change an unsampled release's PLD.
    value_discretization_interval
        The PLD grid, in (0, 1] (dp_accounting's default 1e-4, also :func:`make_pld`'s).

    Raises
    ------
    TypeError
        If ``neighboring_relation`` is not a ``NeighboringRelation``.
    ValueError
        If ``value_discretization_interval`` is not in (0, 1].

    Examples
    --------
    >>> from dp_accounting import dp_event
    >>> from icml26.sgg_dp import SGGMechanism
    >>> event = SGGMechanism(T=3, k=3.0, p=1.35).calibrate(1.0, 1e-5).to_dp_event(n_panels=20)
    >>> acc = SGGPLDAccountant().compose(
    ...     dp_event.SelfComposedDpEvent(dp_event.PoissonSampledDpEvent(0.01, event), 100))
    >>> 0 < acc.get_epsilon(1e-5) < 1.0  # amplified: 100 subsampled steps cost less than one
    True
    """

    def __init__(
        self,
        neighboring_relation: NeighborRel = NeighborRel.ADD_OR_REMOVE_ONE,
        value_discretization_interval: float = 1e-4,
    ) -> None:
        owner = "SGGPLDAccountant"
        neighboring_relation = _check_relation(neighboring_relation, owner)
        vdi = check_in_interval(
            "value_discretization_interval", value_discretization_interval, low=0.0,
            high=1.0, closed="right", owner=owner,
        )  # fmt: skip
        super().__init__(neighboring_relation, vdi)
        self._release_plds: dict[tuple[SGGDpEvent, float], pld_lib.PrivacyLossDistribution] = {}

    def _release_pld(self, event: SGGDpEvent, q: float) -> pld_lib.PrivacyLossDistribution:
        """One (subsampled) release's PLD, built once (a DP-SGD loop composes the same one)."""
        if (event, q) not in self._release_plds:
            self._release_plds[(event, q)] = make_pld(
                event.T, event.k, event.p, event.sgg_scale, 1.0,
                self._value_discretization_interval, event.M, event.n_panels, sampling_prob=q,
            )  # fmt: skip
        return self._release_plds[(event, q)]

    def _maybe_compose(self, event, count, do_compose):
        sampled = isinstance(event, dp_event.PoissonSampledDpEvent)
        release = event.event if sampled else event
        if not isinstance(release, SGGDpEvent):
            return super()._maybe_compose(event, count, do_compose)
        q = float(event.sampling_probability) if sampled else 1.0
        if release.is_gaussian:  # dp_accounting's own Gaussian (and subsampled Gaussian) PLD
            gaussian = release.as_gaussian_event()
            as_dp = dp_event.PoissonSampledDpEvent(q, gaussian) if sampled else gaussian
            return super()._maybe_compose(as_dp, count, do_compose)
        if sampled and self.neighboring_relation != NeighborRel.ADD_OR_REMOVE_ONE:
            return self.CompositionErrorDetails(
                invalid_event=event,
                error_message=(
                    "Poisson subsampling of a non-Gaussian SGG event is accounted for "
                    "ADD_OR_REMOVE_ONE neighbours only; found "
                    f"{self.neighboring_relation}."
                ),
            )
        if do_compose and q > 0:
            pld = self._release_pld(release, q)
            self._pld = self._pld.compose(pld if count == 1 else pld.self_compose(count))
        return None


def _as_gaussian_events(event: dp_event.DpEvent) -> dp_event.DpEvent:
    """``event`` with every Gaussian-member SGGDpEvent replaced by its ``GaussianDpEvent``; a
    non-Gaussian SGGDpEvent is returned alone (the invalid subevent)."""
    if isinstance(event, SGGDpEvent):
        return event.as_gaussian_event() if event.is_gaussian else event
    if isinstance(event, dp_event.SelfComposedDpEvent):
        inner = _as_gaussian_events(event.event)
        return inner if isinstance(inner, SGGDpEvent) else attr.evolve(event, event=inner)
    if isinstance(event, dp_event.PoissonSampledDpEvent):
        inner = _as_gaussian_events(event.event)
        return inner if isinstance(inner, SGGDpEvent) else attr.evolve(event, event=inner)
    if isinstance(event, dp_event.ComposedDpEvent):
        events = [_as_gaussian_events(e) for e in event.events]
        bad = [e for e in events if isinstance(e, SGGDpEvent)]
        return bad[0] if bad else attr.evolve(event, events=events)
    return event


class SGGRdpAccountant(rdp_privacy_accountant.RdpAccountant):
    """dp_accounting's ``RdpAccountant`` that composes the Gaussian member's :class:`SGGDpEvent`.

    The Gaussian member is composed as dp_accounting's ``GaussianDpEvent`` (its RDP curve, and
    the subsampled Gaussian's inside ``PoissonSampledDpEvent``). A non-Gaussian member is
    refused with ``UnsupportedEventError``: no certified RDP curve of its noise is derived here
    (its Rényi divergences are finite only for orders below T/(T − k) when k < T, and a
    quadrature of them could under-report ε at large orders); :class:`SGGPLDAccountant`
    accounts for it tightly, Poisson subsampling included.

    Parameters
    ----------
    orders, neighboring_relation
        As for ``RdpAccountant``.

    Examples
    --------
    >>> from dp_accounting import dp_event
    >>> event = SGGDpEvent(T=5, k=5.0, p=2.0, sgg_scale=3.0 * 2**0.5)
    >>> ours = SGGRdpAccountant().compose(dp_event.PoissonSampledDpEvent(0.1, event), 50)
    >>> ref = SGGRdpAccountant().compose(
    ...     dp_event.PoissonSampledDpEvent(0.1, dp_event.GaussianDpEvent(3.0)), 50)
    >>> bool(ours.get_epsilon(1e-5) == ref.get_epsilon(1e-5))
    True
    """

    def __init__(
        self,
        orders: list[float] | None = None,
        neighboring_relation: NeighborRel = NeighborRel.ADD_OR_REMOVE_ONE,
    ) -> None:
        super().__init__(orders, _check_relation(neighboring_relation, "SGGRdpAccountant"))

    def _maybe_compose(self, event, count, do_compose):
        translated = _as_gaussian_events(event)
        if isinstance(translated, SGGDpEvent):
            return self.CompositionErrorDetails(
                invalid_event=translated,
                error_message=(
                    f"RDP accounting of the non-Gaussian SGG member (T, k, p) = ({translated.T}, "
                    f"{translated.k:g}, {translated.p:g}) is not provided (no certified RDP "
                    "curve of its noise is derived); compose it with SGGPLDAccountant, which "
                    "accounts for it tightly, Poisson subsampling included."
                ),
            )
        return super()._maybe_compose(translated, count, do_compose)
