"""Closed forms, limits, bounds, gradients and bad inputs of the DPO and CPO losses (§7.1-7.7)."""

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from icml26.cpo import (
    constrained_po_loss,
    constrained_po_target,
    dpo_loss,
    ipo_loss,
    loss_to_delta_lower_bound,
    simpo_loss,
    soft_margin_ranking_loss,
)

LOG2 = math.log(2.0)


def t(*values):
    return torch.tensor(values, dtype=torch.float64)


def pair(delta_pi, delta_ref):
    """Scores with the given log-ratios (rejected scores fixed at -1)."""
    delta_pi, delta_ref = torch.as_tensor(delta_pi).double(), torch.as_tensor(delta_ref).double()
    minus_one = -torch.ones_like(delta_pi)
    return delta_pi - 1.0, minus_one, delta_ref - 1.0, minus_one


def softplus(z):
    return math.log1p(math.exp(z))


# 1. At initialisation (π_θ = π_ref)
@pytest.mark.parametrize("beta", [0.1, 1.0, 2.5])
def test_at_init_dpo_is_log2_and_smooth_cpo_is_softplus_of_margin(beta):
    ref_c, ref_r = t(-1.0, -3.0, -0.2), t(-2.0, -0.5, -0.2)
    assert torch.allclose(dpo_loss(ref_c, ref_r, ref_c, ref_r, beta).losses, t(LOG2, LOG2, LOG2))
    out = constrained_po_loss(ref_c, ref_r, ref_c, ref_r, beta=beta, gamma=0.5, tau=2.0, alpha=1.0)
    d_ref = ref_c - ref_r
    m = torch.log1p(torch.exp(2.0 * (0.5 - d_ref))) / 2.0
    # float64 evaluation of the same expression: round-off only
    assert torch.allclose(out.losses, torch.log1p(torch.exp(beta * m)), atol=1e-12)
    assert bool((out.losses > LOG2).all())


# 2. Limits
def test_alpha_to_infinity_recovers_dpo():
    pc, pr, rc, rr = pair(t(-2.0, -0.3, 0.0, 1.0, 4.0), t(-3.0, -1.0, 0.2, 0.5, 2.0))
    cpo = constrained_po_loss(pc, pr, rc, rr, beta=1.0, alpha=1e8).losses
    # |Δloss| ≤ β m / α ≤ 3.6 / 1e8
    assert torch.allclose(cpo, dpo_loss(pc, pr, rc, rr, 1.0).losses, atol=1e-6, rtol=0)
    inf = constrained_po_loss(pc, pr, rc, rr, beta=1.0, alpha=math.inf).losses
    assert torch.equal(inf, dpo_loss(pc, pr, rc, rr, 1.0).losses)


def test_large_tau_gives_hard_max_target():
    d_ref = torch.linspace(-3, 3, 61, dtype=torch.float64)
    target = constrained_po_target(d_ref, gamma=0.5, tau=1e4, alpha=1.0)
    # sandwich: the soft max exceeds the hard one by at most log(2)/τ ≈ 7e-5
    assert torch.allclose(target, d_ref.clamp(min=0.5), atol=1e-3, rtol=0)


def test_clip_is_smooth_with_gamma0_tau_inf():
    d_ref = torch.linspace(-3, 3, 61, dtype=torch.float64)
    clip = constrained_po_target(d_ref, variant="clip")
    assert torch.equal(clip, d_ref.clamp(min=0.0))
    smooth = constrained_po_target(d_ref, gamma=0.0, tau=1e4, alpha=1.0)
    assert torch.allclose(clip, smooth, atol=1e-4, rtol=0)  # log(2)/1e4 = 6.9e-5


# 3. Sandwich bound for finite τ (α = 1)
@pytest.mark.parametrize("tau", [0.5, 2.0, 10.0])
@pytest.mark.parametrize("gamma", [0.0, 0.5, 2.0])
def test_sandwich_bound(tau, gamma):
    d_ref = torch.linspace(-5, 5, 201, dtype=torch.float64)
    target = constrained_po_target(d_ref, gamma=gamma, tau=tau, alpha=1.0)
    hard = d_ref.clamp(min=gamma)
    # 1e-12: float64 round-off of δ_ref + (γ - δ_ref) when the hinge is active
    assert bool((target >= hard - 1e-12).all())
    assert bool((target <= hard + math.log(2) / tau + 1e-12).all())
    at_gamma = constrained_po_target(t(gamma), gamma=gamma, tau=tau, alpha=1.0)
    assert float(at_gamma) == pytest.approx(gamma + math.log(2) / tau, abs=1e-12)


# 4. Monotonicity
def test_loss_strictly_decreasing_in_delta_pi():
    d = torch.linspace(-5, 5, 101, dtype=torch.float64)
    for variant in ("smooth", "clip"):
        losses = constrained_po_loss(*pair(d, torch.full_like(d, -1.0)), beta=1.0, variant=variant)
        assert bool((losses.losses.diff() < 0).all())
    assert bool((dpo_loss(*pair(d, torch.full_like(d, -1.0)), beta=1.0).losses.diff() < 0).all())


def test_target_monotone_in_gamma_and_alpha_and_above_reference():
    d_ref = torch.linspace(-4, 4, 81, dtype=torch.float64)
    gammas = [0.0, 0.1, 0.5, 1.0, 3.0]
    by_gamma = torch.stack([constrained_po_target(d_ref, gamma=g) for g in gammas])
    assert bool((by_gamma.diff(dim=0) >= 0).all())
    alphas = [0.5, 1.0, 2.0, 10.0, math.inf]
    by_alpha = torch.stack([constrained_po_target(d_ref, alpha=a) for a in alphas])
    assert bool((by_alpha.diff(dim=0) <= 0).all())
    assert bool((by_alpha >= d_ref).all())


# 5. Gradient
@pytest.mark.parametrize("variant", ["smooth", "clip", "easy"])
def test_autograd_matches_closed_form_gradient(variant):
    beta = 0.7
    pc = t(-1.0, -2.5, -0.4).requires_grad_(True)
    pr = t(-1.5, -0.5, -0.9)
    rc = t(-2.0, -0.8, -1.1).requires_grad_(True)
    rr = t(-1.0, -1.2, -0.3).requires_grad_(True)
    out = constrained_po_loss(pc, pr, rc, rr, beta=beta, gamma=0.3, variant=variant)
    out.losses.sum().backward()
    delta = (pc - pr).detach()
    expected = -beta * torch.sigmoid(-beta * (delta - out.target))
    assert torch.allclose(pc.grad, expected, atol=1e-12)  # float64, same expression
    assert rc.grad is None and rr.grad is None  # the reference is detached


# 6. Worked numbers (β=1, γ=0.5, τ=2, α=1)
@pytest.mark.parametrize(
    ("d_ref", "d_pi", "margin", "cpo", "dpo"),
    [(-1.0, 0.0, 1.524294, 0.989268, 0.313262),
     (-1.0, -0.5, 1.524294, 1.331080, 0.474077),
     (2.0, 2.5, 0.024294, 0.483318, 0.474077)],
)  # fmt: skip
def test_worked_numbers(d_ref, d_pi, margin, cpo, dpo):
    scores = pair(t(d_pi), t(d_ref))
    out = constrained_po_loss(*scores, beta=1.0, gamma=0.5, tau=2.0, alpha=1.0)
    # the spec's figures are rounded to 6 decimals
    assert float(out.margin) == pytest.approx(margin, abs=1e-6)
    assert float(out.target) == pytest.approx(d_ref + margin, abs=1e-6)
    assert float(out.losses) == pytest.approx(cpo, abs=1e-6)
    assert float(dpo_loss(*scores, beta=1.0).losses) == pytest.approx(dpo, abs=1e-6)


def test_worked_clip_and_easy_numbers():
    clip = constrained_po_loss(*pair(t(0.0), t(-1.0)), beta=1.0, variant="clip")
    assert float(clip.losses) == pytest.approx(LOG2, abs=1e-12)
    easy = constrained_po_loss(
        t(-1.5), t(-1.2), t(-2.0), t(-1.0), beta=2.5, gamma=0.05, variant="easy"
    )
    # m_e = 0.05 (-1/2 - 1) = -0.075; logit 2.5 * 0.7 + 0.075 = 1.825
    assert float(easy.margin) * 2.5 == pytest.approx(-0.075, abs=1e-12)
    assert float(easy.losses) == pytest.approx(softplus(-1.825), abs=1e-12)
    assert float(easy.losses) == pytest.approx(0.149469, abs=1e-6)


def test_rewards_are_beta_times_log_ratios():
    pc, pr, rc, rr = t(-1.0, -2.0), t(-3.0, -0.5), t(-1.5, -1.0), t(-2.0, -1.0)
    out = dpo_loss(pc, pr, rc, rr, beta=0.5)
    assert torch.allclose(out.chosen_rewards, 0.5 * (pc - rc))
    assert torch.allclose(out.rejected_rewards, 0.5 * (pr - rr))
    assert torch.equal(out.margin, torch.zeros(2, dtype=torch.float64))


def test_baselines_closed_forms():
    z = t(0.0)
    assert float(ipo_loss(*pair(t(1.0), t(0.0)), beta=0.5).losses) == pytest.approx(0.0)
    assert float(ipo_loss(z, z, z, z, beta=0.25).losses) == pytest.approx(4.0)
    assert float(simpo_loss(t(-1.0), t(-1.5), beta=2.0, gamma=0.5).losses) == pytest.approx(
        softplus(-(2.0 * 0.5 - 0.5))
    )


# 7. Loss-to-δ bridge
@settings(max_examples=100, deadline=None)
@given(
    delta=st.floats(-20, 20),
    target=st.floats(-20, 20),
    beta=st.floats(0.05, 5.0),
    eps=st.floats(1e-3, 3.0),
)
def test_bridge_property(delta, target, beta, eps):
    loss = soft_margin_ranking_loss(t(delta), t(target), beta)
    bound = loss_to_delta_lower_bound(t(eps), t(target), beta)
    if float(loss) <= eps:
        assert delta >= float(bound) - 1e-9  # float64 round-off in log(e^ε - 1)
    # the bound is tight: the loss at δ = bound equals ε
    at_bound = soft_margin_ranking_loss(bound, t(target), beta)
    assert float(at_bound) == pytest.approx(eps, rel=1e-9)


def test_loss_below_log2_certifies_only_delta_above_target():
    target = t(-2.0)
    below = loss_to_delta_lower_bound(t(LOG2 - 0.01), target, 1.0)
    assert float(target) < float(below) < 0.0  # the DPO "improvement" still prefers y_l


# Bad inputs
def test_mismatched_shapes_are_refused():
    with pytest.raises(ValueError, match=r"dpo_loss: ref_rejected must have the shape"):
        dpo_loss(t(1.0, 2.0), t(1.0, 2.0), t(1.0, 2.0), t(1.0))
    with pytest.raises(ValueError, match=r"constrained_po_loss: policy_rejected must have"):
        constrained_po_loss(t(1.0, 2.0), t(1.0), t(1.0, 2.0), t(1.0, 2.0))


def test_non_tensor_scores_are_refused():
    with pytest.raises(TypeError, match=r"dpo_loss: policy_chosen must be a torch\.Tensor"):
        dpo_loss([1.0], t(1.0), t(1.0), t(1.0))
    integer = torch.tensor([1])
    with pytest.raises(TypeError, match=r"ref_chosen must be a floating-point tensor"):
        constrained_po_loss(t(1.0), t(1.0), integer, t(1.0))
    with pytest.raises(TypeError, match=r"constrained_po_target: ref_logratio must be a torch"):
        constrained_po_target([0.0])


@pytest.mark.parametrize("name", ["beta", "tau", "alpha"])
@pytest.mark.parametrize("value", [0.0, -1.0])
def test_non_positive_hyper_parameters_are_refused(name, value):
    scores = pair(t(0.0), t(-1.0))
    bounds = r"\[1e-06, 1e\+06\]" if name == "beta" else r"\(0, inf"
    with pytest.raises(ValueError, match=rf"{name} must be in {bounds}"):
        constrained_po_loss(*scores, **{name: value})


def test_dpo_beta_and_negative_gamma_are_refused():
    with pytest.raises(ValueError, match=r"dpo_loss: beta must be in \[1e-06, 1e\+06\]; got 0.0"):
        dpo_loss(*pair(t(0.0), t(0.0)), beta=0.0)
    with pytest.raises(ValueError, match=r"gamma must be in \[0, inf\)"):
        constrained_po_loss(*pair(t(0.0), t(0.0)), gamma=-0.1)


@pytest.mark.parametrize("beta", [1e300, 1e-300])
def test_a_beta_outside_float32_products_is_refused(beta):
    """Fuzz campaign 4: simpo_loss at beta = 1e300 (inf in float32) gave inf * 0 = NaN."""
    with pytest.raises(ValueError, match="simpo_loss: beta must be in"):
        simpo_loss(t(0.0), t(0.0), beta=beta, gamma=1e6)
    assert torch.isfinite(simpo_loss(t(0.0), t(0.0), beta=1e6, gamma=1e6).losses).all()


def test_unknown_variant_is_refused():
    with pytest.raises(ValueError, match="variant must be one of 'smooth', 'clip', 'easy'"):
        constrained_po_loss(*pair(t(0.0), t(0.0)), variant="hard")


def test_easy_clamps_non_negative_reference_scores_with_a_warning():
    with pytest.warns(RuntimeWarning, match="clamping values"):
        out = constrained_po_loss(
            t(-1.0), t(-1.0), t(0.0), t(-1.0), beta=1.0, gamma=0.05, variant="easy", eps=1e-6
        )
    # ℓ_ref(y_w) = 0 becomes -1e-6: m_e = 0.05 (-1e6 - 1)
    assert float(out.margin) == pytest.approx(0.05 * (-1e6 - 1.0), rel=1e-12)
    assert math.isfinite(float(out.losses))


def test_easy_target_needs_reference_scores():
    with pytest.raises(ValueError, match="variant 'easy' needs ref_chosen and ref_rejected"):
        constrained_po_target(t(0.0), variant="easy")
    with pytest.raises(ValueError, match=r"ref_rejected must have shape \(1,?\); got \(2,\)"):
        constrained_po_target(t(0.0), variant="easy", ref_chosen=t(-1.0), ref_rejected=t(-1, -2))
