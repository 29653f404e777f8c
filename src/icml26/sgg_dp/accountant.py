"""SGG releases as dp_accounting events, composable inside dp_accounting's PLD accountant.

dp_accounting accounts for a release through a ``DpEvent`` that its accountants recognise; an SGG
release is none of its built-in events, so ``PLDAccountant.compose`` rejects it. Here
:class:`SGGDpEvent` describes one SGG release (shape (T, k, p) and noise scale per unit of
sensitivity, as ``GaussianDpEvent``'s ``noise_multiplier`` does), and :class:`SGGPLDAccountant`
is dp_accounting's ``PLDAccountant`` that also composes it (spec §2.5: the pessimistic PLD of
the dominating pair, :func:`make_pld`), inside ``SelfComposedDpEvent``/``ComposedDpEvent`` and
together with every event the base class knows. The Gaussian member is composed through
dp_accounting's own Gaussian PLD, so its result is the one of ``GaussianDpEvent``.

Subsampling (``PoissonSampledDpEvent`` around an SGG event) is not supported: amplification by
subsampling is not covered for SGG noise (docs/sgg_dp.md), and the accountant says so.

Example
-------
>>> from dp_accounting import dp_event
>>> from icml26.sgg_dp import SGGPLDAccountant, gaussian_member
>>> mech = gaussian_member(10, std=4.0)
>>> ours = SGGPLDAccountant().compose(dp_event.SelfComposedDpEvent(mech.to_dp_event(), 20))
>>> ref = SGGPLDAccountant().compose(dp_event.SelfComposedDpEvent(
...     dp_event.GaussianDpEvent(noise_multiplier=4.0), 20))
>>> abs(ours.get_epsilon(1e-5) - ref.get_epsilon(1e-5)) < 1e-12
True
"""

from __future__ import annotations

import math

import attr
from dp_accounting import dp_event
from dp_accounting.pld import pld_privacy_accountant
from dp_accounting.pld import privacy_loss_distribution as pld_lib
from dp_accounting.privacy_accountant import NeighboringRelation as NeighborRel

from icml26.core import check_in_interval, check_positive_int
from icml26.sgg_dp.pld import make_pld

__all__ = ["SGGDpEvent", "SGGPLDAccountant"]

OWNER = "SGGDpEvent"


@attr.s(frozen=True, slots=True, auto_attribs=True)
class SGGDpEvent(dp_event.DpEvent):
    """One release of a calibrated SGG mechanism with ℓ2 sensitivity ``Δ``.

    Attributes
    ----------
    T, k, p
        The member's dimension and shape (``SGGMechanism``'s).
    noise_multiplier
        σ/Δ, the scale per unit of sensitivity (as for ``GaussianDpEvent``).
    M, n_panels
        Resolution of the member's PLD (see :func:`icml26.sgg_dp.make_pld`).
    """

    T: int
    k: float
    p: float
    noise_multiplier: float
    M: int = 65536
    n_panels: int = 40

    def __attrs_post_init__(self) -> None:
        check_positive_int("T", self.T, owner=OWNER)
        check_in_interval("k", self.k, low=0.0, closed="neither", owner=OWNER)
        check_in_interval("p", self.p, low=0.0, closed="neither", owner=OWNER)
        check_in_interval(
            "noise_multiplier", self.noise_multiplier, low=0.0, closed="neither", owner=OWNER
        )

    @property
    def is_gaussian(self) -> bool:
        """k = T and p = 2: N(0, s²I) with s = σ/√2."""
        return self.k == self.T and self.p == 2.0


class SGGPLDAccountant(pld_privacy_accountant.PLDAccountant):
    """dp_accounting's ``PLDAccountant`` that also composes :class:`SGGDpEvent`.

    Parameters
    ----------
    neighboring_relation
        As for ``PLDAccountant``; an SGG event's sensitivity is the ℓ2 change of the query
        under that relation (e.g. the clipping norm for add/remove-one DP-SGD), so the relation
        does not change its PLD.
    value_discretization_interval
        The PLD grid, in (0, 1] (dp_accounting's default 1e-4).

    Raises
    ------
    TypeError
        If ``neighboring_relation`` is not a ``NeighboringRelation``.
    ValueError
        If ``value_discretization_interval`` is not in (0, 1].
    """

    def __init__(
        self,
        neighboring_relation: NeighborRel = NeighborRel.ADD_OR_REMOVE_ONE,
        value_discretization_interval: float = 1e-4,
    ) -> None:
        owner = "SGGPLDAccountant"
        if not isinstance(neighboring_relation, NeighborRel):
            raise TypeError(
                f"{owner}: neighboring_relation must be a dp_accounting NeighboringRelation; "
                f"got {type(neighboring_relation).__name__}."
            )
        vdi = check_in_interval(
            "value_discretization_interval", value_discretization_interval, low=0.0,
            high=1.0, closed="right", owner=owner,
        )  # fmt: skip
        super().__init__(neighboring_relation, vdi)
        self._release_plds: dict[SGGDpEvent, pld_lib.PrivacyLossDistribution] = {}

    def _release_pld(self, event: SGGDpEvent) -> pld_lib.PrivacyLossDistribution:
        """One release's PLD, built once per event (a DP-SGD loop composes the same one)."""
        if event not in self._release_plds:
            self._release_plds[event] = make_pld(
                event.T, event.k, event.p, event.noise_multiplier, 1.0,
                self._value_discretization_interval, event.M, event.n_panels,
            )  # fmt: skip
        return self._release_plds[event]

    def _maybe_compose(self, event, count, do_compose):
        if not isinstance(event, SGGDpEvent):
            if isinstance(event, dp_event.PoissonSampledDpEvent) and isinstance(
                event.event, SGGDpEvent
            ):
                return self.CompositionErrorDetails(
                    invalid_event=event,
                    error_message="subsampling amplification is not covered for SGG noise",
                )
            return super()._maybe_compose(event, count, do_compose)
        if do_compose:
            vdi = self._value_discretization_interval
            if event.is_gaussian:  # the same PLD as for GaussianDpEvent
                release = pld_lib.from_gaussian_mechanism(
                    standard_deviation=event.noise_multiplier / math.sqrt(2) / math.sqrt(count),
                    value_discretization_interval=vdi,
                    neighboring_relation=self.neighboring_relation,
                )
            else:
                release = self._release_pld(event)
                release = release if count == 1 else release.self_compose(count)
            self._pld = self._pld.compose(release)
        return None
