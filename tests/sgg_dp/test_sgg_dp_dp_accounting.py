"""SGG releases inside dp_accounting's accountants (issues 18 and 49): the Gaussian member matches
dp_accounting's own GaussianDpEvent, `noise_multiplier` keeps dp_accounting's meaning, other
members compose with dp_accounting's events (Poisson-subsampled too), one loss grid everywhere,
and a small DP-SGD loop is accounted through the plain dp_accounting interface."""

import inspect
import math
from pathlib import Path

import pytest
import torch
from dp_accounting import dp_event
from dp_accounting.pld import pld_privacy_accountant
from dp_accounting.privacy_accountant import NeighboringRelation as NeighborRel
from dp_accounting.privacy_accountant import UnsupportedEventError
from dp_accounting.rdp import rdp_privacy_accountant

from icml26.sgg_dp import (
    SGGDpEvent,
    SGGMechanism,
    SGGPLDAccountant,
    SGGRdpAccountant,
    gaussian_member,
    l2_member,
    make_pld,
    sgg_noise_like,
)


def accountant_of(*events, vdi=1e-4):
    acc = SGGPLDAccountant(value_discretization_interval=vdi)
    for event in events:
        acc.compose(event)
    return acc


@pytest.mark.parametrize(("T", "std", "n"), [(1000, 5.0, 50), (7, 1.3, 3)])
def test_gaussian_member_equals_dp_accountings_gaussian_event(T, std, n):
    ours = accountant_of(dp_event.SelfComposedDpEvent(gaussian_member(T, std=std).to_dp_event(), n))
    ref = pld_privacy_accountant.PLDAccountant()  # stock accountant, stock event
    ref.compose(dp_event.SelfComposedDpEvent(dp_event.GaussianDpEvent(noise_multiplier=std), n))
    for delta in (1e-5, 1e-9):
        assert ours.get_epsilon(delta) == pytest.approx(ref.get_epsilon(delta), rel=1e-6)
    assert ours.get_delta(1.0) == pytest.approx(ref.get_delta(1.0), rel=1e-6)


def test_sensitivity_enters_as_noise_multiplier():
    # σ/Δ is what matters: std 6 at sensitivity 2 is a Gaussian with noise multiplier 3
    event = gaussian_member(4, std=6.0, sensitivity=2.0).to_dp_event()
    ref = pld_privacy_accountant.PLDAccountant()
    ref.compose(dp_event.GaussianDpEvent(noise_multiplier=3.0))
    assert accountant_of(event).get_epsilon(1e-6) == pytest.approx(ref.get_epsilon(1e-6), rel=1e-9)


def test_non_gaussian_member_composes_with_dp_accounting_events():
    l2 = l2_member(3).calibrate(1.0, 1e-5)
    event = l2.to_dp_event(n_panels=20)
    gauss = dp_event.GaussianDpEvent(noise_multiplier=4.0)
    mixed = accountant_of(dp_event.ComposedDpEvent([dp_event.SelfComposedDpEvent(event, 5), gauss]))
    alone = accountant_of(dp_event.SelfComposedDpEvent(event, 5))
    both_l2 = accountant_of(dp_event.SelfComposedDpEvent(event, 6))
    # the same PLD as our own accountant: one release reads back ~ (1, 1e-5), pessimistic
    one = accountant_of(event)
    assert 1.0 <= one.get_epsilon(1e-5) <= 1.02
    assert l2.delta(1.0) <= one.get_delta(1.0) <= 1.05 * l2.delta(1.0)
    # composition is monotone: adding a release never lowers ε
    assert alone.get_epsilon(1e-5) < mixed.get_epsilon(1e-5) < both_l2.get_epsilon(1e-5) + 1.0


def test_stock_accountant_refuses_a_non_gaussian_member_and_ours_supports_it():
    event = SGGMechanism(3, 3.0, 1.35, 2.0).to_dp_event()
    assert not pld_privacy_accountant.PLDAccountant().supports(event)
    assert SGGPLDAccountant().supports(dp_event.SelfComposedDpEvent(event, 3))
    assert SGGPLDAccountant().supports(dp_event.PoissonSampledDpEvent(0.01, event))


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"T": 0}, "T"),
        ({"k": -1.0}, "k"),
        ({"p": 0.0}, "p"),
        ({"sgg_scale": 0.0}, "sgg_scale"),
        ({"M": 1}, "M"),
    ],
)
def test_event_checks_its_parameters(kwargs, name):
    args = {"T": 3, "k": 3.0, "p": 1.5, "sgg_scale": 1.0, **kwargs}
    with pytest.raises(ValueError, match=name):
        SGGDpEvent(**args)


def test_dp_sgd_loop_accounted_with_plain_dp_accounting():
    # DP-SGD on a 6-parameter least-squares model: per-example clipping to C, the SGG noise for
    # the summed gradient, every step one full-batch release accounted by the dp_accounting API
    torch.manual_seed(0)
    x, y = torch.randn(32, 6), torch.randn(32)
    w, C, steps = torch.zeros(6, requires_grad=False), 1.0, 25
    mech = SGGMechanism(T=6, k=6.0, p=1.5, sensitivity=C).calibrate(2.0, 1e-5)
    accountant, event = SGGPLDAccountant(), mech.to_dp_event(M=4000, n_panels=20)
    generator = torch.Generator().manual_seed(1)
    losses = []
    for _ in range(steps):
        residual = x @ w - y
        per_example = 2 * residual[:, None] * x  # ∇ of (x·w − y)² per example
        norms = per_example.norm(dim=1, keepdim=True)
        clipped = per_example * torch.clamp(C / norms, max=1.0)
        noisy = clipped.sum(0) + sgg_noise_like(clipped.sum(0), mech, seed=generator)
        w = w - 0.01 * noisy / len(x)
        accountant.compose(event)  # one release per step; its PLD is built once
        losses.append(float(((x @ w - y) ** 2).mean()))
    eps = accountant.get_epsilon(1e-5)
    # tight composition: above one step's ε, below basic composition (n·ε₁ at δ/n)
    assert mech.epsilon(1e-5) < eps < steps * mech.epsilon(1e-5 / steps)
    assert math.isfinite(losses[-1]) and losses[-1] < losses[0]


def test_gaussian_member_under_replace_one_equals_dp_accountings_gaussian_event():
    # the neighbouring relation reaches dp_accounting's Gaussian PLD unchanged
    relation = NeighborRel.REPLACE_ONE
    ours = SGGPLDAccountant(relation).compose(
        dp_event.SelfComposedDpEvent(gaussian_member(12, std=2.5).to_dp_event(), 9)
    )
    ref = pld_privacy_accountant.PLDAccountant(relation).compose(
        dp_event.SelfComposedDpEvent(dp_event.GaussianDpEvent(noise_multiplier=2.5), 9)
    )
    assert ours.get_epsilon(1e-7) == pytest.approx(ref.get_epsilon(1e-7), rel=1e-6)


@pytest.mark.parametrize(
    ("args", "error", "name"),
    [
        (("add_or_remove",), TypeError, "neighboring_relation"),
        ((NeighborRel.ADD_OR_REMOVE_ONE, 0.0), ValueError, "value_discretization_interval"),
        ((NeighborRel.ADD_OR_REMOVE_ONE, math.nan), ValueError, "value_discretization_interval"),
    ],
)
def test_accountant_checks_its_arguments(args, error, name):
    with pytest.raises(error, match=name):
        SGGPLDAccountant(*args)


def test_docs_dp_accounting_example_runs_and_its_numbers_hold():
    # the API section's first code block (docs/sgg_dp.md) is the dp_accounting usage: run it
    docs = Path(__file__).resolve().parents[2] / "docs" / "sgg_dp.md"
    if not docs.exists():
        pytest.skip("docs/ is not shipped with an installed wheel")
    text = docs.read_text()
    section = text[text.index("### Through dp_accounting") :]
    code = section.split("```python\n", 1)[1].split("```", 1)[0]
    namespace: dict = {}
    exec(compile(code, str(docs), "exec"), namespace)
    mech, steps = namespace["mech"], namespace["steps"]
    eps = namespace["accountant"].get_epsilon(1e-5)
    # the numbers the docs quote: ~17.5 composed; one release 2.24 at δ/25 (basic composition)
    assert eps == pytest.approx(17.5, abs=0.05)
    assert mech.epsilon(1e-5 / steps) == pytest.approx(2.24, abs=0.005)
    assert eps < steps * mech.epsilon(1e-5 / steps)
    # the mixed composition adds a Gaussian release: more ε than the SGG steps alone, and less
    # than adding that Gaussian's own ε (composition is sub-additive)
    gauss = pld_privacy_accountant.PLDAccountant().compose(dp_event.GaussianDpEvent(4.0))
    mixed = namespace["acc"].get_epsilon(1e-5)
    assert eps < mixed < eps + gauss.get_epsilon(1e-9) + 0.01


# --- issue 49: names borrowed from dp_accounting keep dp_accounting's meaning --------------------


@pytest.mark.parametrize("T", [1, 5, 40])
def test_noise_multiplier_is_dp_accountings_and_never_under_reports(T):
    # A Gaussian member calibrated to (1, 1e-5): a GaussianDpEvent built from the event's
    # noise_multiplier must report ε = 1 (before issue 49 it was the SGG scale √2·std: ε 0.68)
    mech = gaussian_member(T).calibrate(1.0, 1e-5)
    exact = mech.epsilon(1e-5)
    for event in (
        mech.to_dp_event(),  # dp_accounting's own GaussianDpEvent
        SGGDpEvent(T, float(T), 2.0, mech.sigma / mech.sensitivity),
    ):
        stock = pld_privacy_accountant.PLDAccountant()
        eps = stock.compose(dp_event.GaussianDpEvent(event.noise_multiplier)).get_epsilon(1e-5)
        # the exact ε up to root-finding (dp_accounting's and ours agree to ~1e-9), and above by
        # at most the 1e-4 loss grid's rounding
        assert exact - 1e-8 <= eps <= exact + 1e-3
    # the stock RDP accountant takes the event too (RDP is looser, never tighter)
    rdp = rdp_privacy_accountant.RdpAccountant().compose(mech.to_dp_event())
    assert rdp.get_epsilon(1e-5) >= exact


def test_a_non_gaussian_member_has_its_own_scale_and_no_noise_multiplier():
    mech = SGGMechanism(3, 3.0, 1.35).calibrate(1.0, 1e-5)
    event = mech.to_dp_event()
    assert isinstance(event, SGGDpEvent) and event.sgg_scale == mech.sigma
    with pytest.raises(ValueError, match=r"not Gaussian.*SGGPLDAccountant"):
        dp_event.GaussianDpEvent(event.noise_multiplier)


def test_gaussian_sgg_event_under_poisson_sampling_equals_dp_accountings():
    std, q, n = 1.5, 0.05, 200
    event = SGGDpEvent(T=8, k=8.0, p=2.0, sgg_scale=math.sqrt(2) * std)
    ours = SGGPLDAccountant().compose(dp_event.PoissonSampledDpEvent(q, event), n)
    ref = pld_privacy_accountant.PLDAccountant().compose(
        dp_event.PoissonSampledDpEvent(q, dp_event.GaussianDpEvent(std)), n
    )
    assert ours.get_epsilon(1e-6) == ref.get_epsilon(1e-6)


@pytest.mark.parametrize("q", [0.01, 0.2])
def test_subsampled_pld_of_the_general_construction_matches_dp_accountings_gaussian(q):
    # to_pld builds the subsampled PLD from the SGG loss law (no Gaussian formula): on the
    # Gaussian member it must bound dp_accounting's subsampled Gaussian from above, closely
    std, n = 1.0, 100
    ours = gaussian_member(3, std=std).to_pld(n_panels=20, sampling_prob=q)
    ref = pld_privacy_accountant.PLDAccountant().compose(
        dp_event.PoissonSampledDpEvent(q, dp_event.GaussianDpEvent(std))
    )
    composed = ours.self_compose(n)
    ref_n = pld_privacy_accountant.PLDAccountant().compose(
        dp_event.PoissonSampledDpEvent(q, dp_event.GaussianDpEvent(std)), n
    )
    for eps in (0.5, 1.0, 2.0):
        # one release: within 0.5 %; 100 releases: within 10 % of δ (measured ≤ 7 %: the loss
        # law is rounded up twice, once as a bound of the release and once after subsampling)
        assert 1.0 <= ours.get_delta_for_epsilon(eps) / ref.get_delta(eps) <= 1.005
        assert 1.0 <= composed.get_delta_for_epsilon(eps) / ref_n.get_delta(eps) <= 1.1
    assert 1.0 <= composed.get_epsilon_for_delta(1e-5) / ref_n.get_epsilon(1e-5) <= 1.01


def test_poisson_subsampled_non_gaussian_member_is_amplified_and_exact_at_q_one():
    event = SGGMechanism(3, 3.0, 1.35).calibrate(1.0, 1e-5).to_dp_event(M=4000, n_panels=20)
    full = SGGPLDAccountant().compose(event, 10).get_epsilon(1e-5)
    at_one = SGGPLDAccountant().compose(dp_event.PoissonSampledDpEvent(1.0, event), 10)
    assert at_one.get_epsilon(1e-5) == full
    eps = [
        SGGPLDAccountant().compose(dp_event.PoissonSampledDpEvent(q, event), 10).get_epsilon(1e-5)
        for q in (0.01, 0.1, 0.5)
    ]
    assert eps == sorted(eps) and eps[-1] < full
    # amplification by subsampling: one release on a q-subsample is
    # (ln(1 + q(e^ε − 1)), q·δ(ε))-DP; the PLD meets it up to its loss grid (measured ≤ 0.7 %)
    one = SGGPLDAccountant().compose(dp_event.PoissonSampledDpEvent(0.1, event))
    alone = SGGPLDAccountant().compose(event)
    for e in (0.5, 1.0):
        assert one.get_delta(math.log1p(0.1 * math.expm1(e))) <= 1.02 * 0.1 * alone.get_delta(e)
    with pytest.raises(UnsupportedEventError, match="ADD_OR_REMOVE_ONE"):
        SGGPLDAccountant(NeighborRel.REPLACE_ONE).compose(
            dp_event.PoissonSampledDpEvent(0.1, event)
        )


def test_rdp_accountant_composes_the_gaussian_member_and_refuses_the_others():
    event = SGGDpEvent(T=4, k=4.0, p=2.0, sgg_scale=math.sqrt(2) * 2.0)
    ours = SGGRdpAccountant().compose(dp_event.PoissonSampledDpEvent(0.1, event), 30)
    ref = rdp_privacy_accountant.RdpAccountant().compose(
        dp_event.PoissonSampledDpEvent(0.1, dp_event.GaussianDpEvent(2.0)), 30
    )
    assert ours.get_epsilon(1e-5) == ref.get_epsilon(1e-5)
    other = SGGDpEvent(T=4, k=4.0, p=1.35, sgg_scale=2.0)
    with pytest.raises(UnsupportedEventError, match=r"non-Gaussian SGG member.*SGGPLDAccountant"):
        SGGRdpAccountant().compose(dp_event.ComposedDpEvent([event, other]))


def test_one_loss_grid_everywhere_dp_accountings():
    stock = inspect.signature(pld_privacy_accountant.PLDAccountant).parameters
    default = stock["value_discretization_interval"].default
    for fn in (SGGMechanism.to_pld, make_pld, SGGPLDAccountant):
        assert inspect.signature(fn).parameters["value_discretization_interval"].default == default


@pytest.mark.parametrize("k", [2, 8, 32])
def test_default_pld_composes_like_the_accountant(k):
    # before issue 49, to_pld() read δ of k composed ℓ2 releases 2–18 % above the accountant's
    mech = l2_member(3).calibrate(1.0, 1e-5)
    event = mech.to_dp_event(M=4000, n_panels=20)
    acc = SGGPLDAccountant().compose(event, k)
    pld = mech.to_pld(M=4000, n_panels=20).self_compose(k)
    eps = acc.get_epsilon(1e-5)
    assert pld.get_delta_for_epsilon(eps) == pytest.approx(acc.get_delta(eps), rel=1e-9)
