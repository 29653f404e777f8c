"""Rex and diffusers: the adapter, the exact time mapping, and RexScheduler inside a real pipeline.

Every model here is a tiny randomly initialised diffusers UNet saved to a temporary folder and
loaded back; nothing is downloaded. float64 throughout, so agreement is to round-off.
"""

import itertools
from types import SimpleNamespace

import diffusers
import numpy as np
import pytest
import torch
from diffusers.utils.torch_utils import randn_tensor

from icml26.core import seeded_default_init
from icml26.rex import (
    DiscreteVPSchedule,
    RexInversion,
    RexScheduler,
    RexSolver,
    VPSchedule,
    from_diffusers,
    guided_unet,
)
from icml26.rex.diffusers_adapter import load_diffusers_unet

SCHEDULES = ["linear", "scaled_linear", "squaredcos_cap_v2"]


class FakeUNet:
    """Records calls; returns 2 x where the hidden state is positive and x elsewhere."""

    def __init__(self):
        self.calls = []

    def __call__(self, x, timestep, encoder_hidden_states=None):
        self.calls.append((x.shape[0], timestep, encoder_hidden_states))
        if encoder_hidden_states is None:
            return SimpleNamespace(sample=x)
        scale = 1.0 + (encoder_hidden_states.sum(dim=-1) > 0).to(x.dtype)  # (batch,)
        return SimpleNamespace(sample=scale.reshape(-1, *[1] * (x.ndim - 1)) * x)


def tiny_unet():
    with seeded_default_init(0):
        return diffusers.UNet2DModel(
            sample_size=8, in_channels=1, out_channels=1, block_out_channels=(16, 16),
            down_block_types=("DownBlock2D", "DownBlock2D"),
            up_block_types=("UpBlock2D", "UpBlock2D"), layers_per_block=1, norm_num_groups=4,
        )  # fmt: skip


@pytest.fixture(scope="module")
def saved_pipeline(tmp_path_factory):
    """A DDPMPipeline (tiny random UNet + DDPM linear scheduler) saved and reloaded, in float64."""
    folder = tmp_path_factory.mktemp("ddpm")
    unet, scheduler = tiny_unet(), diffusers.DDPMScheduler()
    diffusers.DDPMPipeline(unet=unet, scheduler=scheduler).save_pretrained(folder / "pipeline")
    unet.save_pretrained(folder / "flat")  # the google/ddpm-* layout: no subfolders
    scheduler.save_pretrained(folder / "flat")
    pipe = diffusers.DDPMPipeline.from_pretrained(folder / "pipeline")
    pipe.unet.double().eval()
    pipe.set_progress_bar_config(disable=True)
    return pipe, folder


# --- the exact time mapping --------------------------------------------------------------------


@pytest.mark.parametrize("beta_schedule", SCHEDULES)
def test_time_mapping_is_the_schedulers_own_alphas_cumprod(beta_schedule):
    ddpm = diffusers.DDPMScheduler(beta_schedule=beta_schedule)
    abar = ddpm.alphas_cumprod.double().numpy()  # diffusers' own definition
    unet = FakeUNet()
    model, schedule, output = from_diffusers(unet, ddpm)
    rex = RexScheduler.from_config(ddpm.config)
    n = len(abar)
    for sched in (schedule, rex.schedule):
        alpha = np.array([sched.alpha((k + 1) / n) for k in range(n)])
        sigma = np.array([sched.sigma((k + 1) / n) for k in range(n)])
        # exact up to the float64 sqrt (and (k + 1) / n * n - 1 landing on k): 1e-12 relative
        np.testing.assert_allclose(alpha**2, abar, rtol=1e-12, atol=0)
        np.testing.assert_allclose(sigma**2, 1 - abar, rtol=1e-12, atol=1e-15)
    # the UNet sees timestep k at t_k = (k + 1) / N
    x = torch.ones(2, 3, dtype=torch.float64)
    for k in (0, 17, 500, n - 1):
        model(x, torch.full((2,), (k + 1) / n, dtype=torch.float64))
        assert torch.allclose(unet.calls[-1][1], torch.full((2,), float(k), dtype=torch.float64))
    assert output == "noise"


def test_the_continuous_fit_it_replaces_was_off_by_4_percent():
    # the defect of issue 18, measured on diffusers' own DDPM linear alphas_cumprod
    ddpm = diffusers.DDPMScheduler(beta_schedule="linear")
    abar = ddpm.alphas_cumprod.double().numpy()
    old = VPSchedule.from_betas(ddpm.betas)
    rel = [abs(old.alpha(max(k / 1000, 1e-12)) / np.sqrt(abar[k]) - 1) for k in range(1000)]
    assert max(rel) > 0.04
    new = DiscreteVPSchedule(ddpm.alphas_cumprod)
    assert max(abs(new.alpha((k + 1) / 1000) / np.sqrt(abar[k]) - 1) for k in range(1000)) < 1e-12


def test_discrete_schedule_between_nodes():
    abar = diffusers.DDPMScheduler(num_train_timesteps=50).alphas_cumprod
    s = DiscreteVPSchedule(abar)
    rng = np.random.default_rng(0)
    for t in rng.uniform(1 / 50, 1, 200):
        lam = s.log_snr(t)
        assert s.alpha(t) ** 2 + s.sigma(t) ** 2 == pytest.approx(1.0, abs=1e-15)
        assert s.t_of_log_snr(lam) == pytest.approx(t, abs=1e-13)
        # alpha_dot against a central difference inside the piece (lambda is linear there)
        k = int(np.floor(50 * t - 1))
        h = 1e-7
        if (k + 1) / 50 + h < t < (k + 2) / 50 - h:
            fd = (s.alpha(t + h) - s.alpha(t - h)) / (2 * h)
            assert s.alpha_dot(t) == pytest.approx(fd, rel=1e-6)  # O(h^2) + round-off / h
    nodes = [s.log_snr((k + 1) / 50) for k in range(50)]
    assert all(a > b for a, b in itertools.pairwise(nodes))  # strictly decreasing


def test_discrete_schedule_bad_inputs():
    with pytest.raises(ValueError, match="alphas_cumprod must be strictly decreasing"):
        DiscreteVPSchedule([0.9, 0.9, 0.5])
    with pytest.raises(ValueError, match=r"alphas_cumprod must lie in \(0, 1\)"):
        DiscreteVPSchedule([1.0, 0.5])
    with pytest.raises(TypeError, match="alphas_cumprod must be a 1-D sequence"):
        DiscreteVPSchedule("0.5")
    with pytest.raises(ValueError, match=r"DiscreteVPSchedule: t must be in \[0.5, 1\]"):
        DiscreteVPSchedule([0.9, 0.5]).alpha(0.1)  # below t_0 = 1 / N


# --- the adapter -------------------------------------------------------------------------------


def test_guidance_is_one_batched_unet_call():
    unet = FakeUNet()
    cond, uncond = torch.ones(1, 4), -torch.ones(1, 4)
    model, _, _ = from_diffusers(unet, diffusers.DDPMScheduler(), cond=cond, uncond=uncond,
                                 cfg_scale=3.0)  # fmt: skip
    x = torch.randn(2, 3, generator=torch.Generator().manual_seed(0))
    out = model(x, torch.full((2,), 0.25))
    assert len(unet.calls) == 1 and unet.calls[0][0] == 4  # one call on the stacked 2 B batch
    assert torch.allclose(out, x + 3.0 * (2 * x - x))  # eps_u + w (eps_c - eps_u)


@pytest.fixture(scope="module")
def conditional_unet():
    with seeded_default_init(1):
        return diffusers.UNet2DConditionModel(
            sample_size=8, in_channels=1, out_channels=1, block_out_channels=(8, 16),
            down_block_types=("CrossAttnDownBlock2D", "DownBlock2D"),
            up_block_types=("UpBlock2D", "CrossAttnUpBlock2D"), cross_attention_dim=8,
            layers_per_block=1, norm_num_groups=4, attention_head_dim=2,
        ).double().eval()  # fmt: skip


def test_guidance_on_a_real_conditional_unet_matches_two_separate_calls(conditional_unet):
    unet = conditional_unet
    g = torch.Generator().manual_seed(0)
    cond = torch.randn(1, 3, 8, generator=g, dtype=torch.float64)
    uncond = torch.randn(1, 3, 8, generator=g, dtype=torch.float64)
    x = torch.randn(2, 1, 8, 8, generator=g, dtype=torch.float64)
    t = torch.tensor(421.5, dtype=torch.float64)
    with torch.no_grad():
        guided = guided_unet(unet, cond, uncond, 2.5)(x, t)
        eps_c = unet(x, t, encoder_hidden_states=cond.expand(2, 3, 8)).sample
        eps_u = unet(x, t, encoder_hidden_states=uncond.expand(2, 3, 8)).sample
    # the same network on a batch of 4 instead of 2: equal up to float64 round-off
    torch.testing.assert_close(guided, eps_u + 2.5 * (eps_c - eps_u), rtol=0, atol=1e-12)


def test_adapter_converts_v_prediction_to_noise():
    ddpm = diffusers.DDPMScheduler(prediction_type="v_prediction")
    model, schedule, output = from_diffusers(FakeUNet(), ddpm)
    x = torch.randn(3, 2, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    t = 0.4
    eps = model(x, torch.full((3,), t, dtype=torch.float64))
    # the fake returns v = x; eps = sigma x + alpha v
    assert output == "noise"
    assert torch.allclose(eps, (schedule.sigma(t) + schedule.alpha(t)) * x)


def test_adapter_bad_inputs():
    ddpm = diffusers.DDPMScheduler()
    with pytest.raises(ValueError, match="prediction_type must be"):
        flow = SimpleNamespace(prediction_type="flow")
        from_diffusers(FakeUNet(), SimpleNamespace(alphas_cumprod=ddpm.alphas_cumprod, config=flow))
    with pytest.raises(ValueError, match="cfg_scale needs both cond and uncond"):
        from_diffusers(FakeUNet(), ddpm, cfg_scale=2.0)
    with pytest.raises(TypeError, match="scheduler must be a diffusers scheduler"):
        from_diffusers(FakeUNet(), object())
    with pytest.raises(ValueError, match="uncond must have batch size 1 or 2"):
        guided_unet(FakeUNet(), torch.ones(1, 4), torch.ones(3, 4), 1.0)(
            torch.ones(2, 3), torch.tensor(1.0)
        )


def test_tiny_saved_unet_loads_and_round_trips(saved_pipeline):
    pipe, folder = saved_pipeline
    loaded, scheduler = load_diffusers_unet(str(folder / "flat"), subfolder=None,
                                            conditional=False)  # fmt: skip
    x = torch.randn(2, 1, 8, 8, generator=torch.Generator().manual_seed(0))
    t = torch.full((2,), 0.3)
    model, schedule, output = from_diffusers(loaded, scheduler)
    with torch.no_grad():
        assert torch.equal(model(x, t), tiny_unet()(x, 1000 * t - 1).sample)
    assert isinstance(schedule, DiscreteVPSchedule) and schedule.num_train_timesteps == 1000
    model64, schedule, output = from_diffusers(pipe.unet, pipe.scheduler)
    solver = RexSolver(model64, schedule, model_output=output, tableau="midpoint", n_steps=8)
    data = x.double()
    ts = solver.timesteps()
    x_T, x_T_hat = solver.encode(data, ts)
    assert (solver.decode(x_T, x_T_hat, ts)[0] - data).abs().max() < 1e-10


# --- RexScheduler inside a real pipeline ---------------------------------------------------------

CASES = [
    {"tableau": "euler"},
    {"tableau": "rk4", "prediction_type": "sample"},
    {"tableau": "midpoint", "prediction": "noise", "grid": "logsnr"},
    {"tableau": "heun", "prediction_type": "v_prediction"},
    {"sde": "em", "seed": 3, "prediction_type": "sample"},
    {"sde": "shark", "seed": 4, "prediction_type": "sample"},
]


def case_id(case):
    return "-".join(map(str, case.values()))


def reference_solver(pipe, n_steps, case):
    """RexSolver on the same UNet through from_diffusers, with the scheduler's settings."""
    case = dict(case)
    ddpm = diffusers.DDPMScheduler.from_config(
        pipe.scheduler.config, prediction_type=case.pop("prediction_type", "epsilon")
    )
    model, schedule, output = from_diffusers(pipe.unet, ddpm)
    return RexSolver(model, schedule, model_output=output, n_steps=n_steps, **case)


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_pipeline_with_rex_scheduler_equals_rex_solver(saved_pipeline, case):
    pipe, _ = saved_pipeline
    ddpm = pipe.scheduler
    n_steps = 6
    pipe.scheduler = RexScheduler.from_config(ddpm.config, **case)
    try:
        images = pipe(batch_size=2, generator=torch.Generator().manual_seed(0),
                      num_inference_steps=n_steps, output_type="np").images  # fmt: skip
        rex = pipe.scheduler
    finally:
        pipe.scheduler = ddpm
    assert isinstance(rex, RexScheduler) and rex.init_noise_sigma == 1.0
    calls = 2 * {"em": 1, "shark": 2}.get(case.get("sde"), rex._solver.tableau.stages)
    assert len(rex.timesteps) == n_steps * calls + (case.get("sde") == "shark")
    # the pipeline's own noise: randn_tensor with the same generator, shape and dtype
    x_T = randn_tensor((2, 1, 8, 8), generator=torch.Generator().manual_seed(0),
                       dtype=torch.float64)  # fmt: skip
    x0, x0_hat, _ = reference_solver(pipe, n_steps, case).sample(x_T)
    x_pipe, x_hat_pipe = rex.pair  # the pair the scheduler held when the pipeline finished
    # the bar: 1e-10 in float64 (the same arithmetic, so round-off only)
    assert (x_pipe - x0).abs().max() < 1e-10 and (x_hat_pipe - x0_hat).abs().max() < 1e-10
    expected = (x0 / 2 + 0.5).clamp(0, 1).permute(0, 2, 3, 1).numpy()
    np.testing.assert_allclose(images, expected, rtol=0, atol=1e-10)
    if case.get("prediction_type") == "sample":
        # a random UNet's x0 prediction is O(1): most pixels are compared unclamped (with eps or
        # v the random network's x0 is far outside [-1, 1] and the images are mostly clamped)
        assert ((images > 0) & (images < 1)).mean() > 0.5


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_invert_then_sample_round_trips_through_the_diffusers_loop(saved_pipeline, case):
    pipe, _ = saved_pipeline
    rex = RexScheduler.from_config(pipe.scheduler.config, **case)
    data = 0.5 * torch.randn(2, 1, 8, 8, generator=torch.Generator().manual_seed(1),
                             dtype=torch.float64)  # fmt: skip
    inversion = rex.invert(pipe.unet, data, num_inference_steps=6)
    # the same encoding as RexSolver's
    x_T, x_T_hat = reference_solver(pipe, 6, case).encode(data, rex._ts)
    assert (inversion.latents - x_T).abs().max() < 1e-10
    assert (inversion.latents_hat - x_T_hat).abs().max() < 1e-10
    rex.set_inversion(inversion)
    rex.set_timesteps(6)  # what a pipeline does first: the inversion stays pending
    sample = inversion.pipeline_latents
    with torch.no_grad():
        for t in rex.timesteps:  # diffusers' loop, written out
            sample = rex.step(pipe.unet(sample, t).sample, t, sample).prev_sample
    # data round trips are at round-off (docs: R1a / R2a). The SDE cases predict x0: with eps
    # a random UNet drives the encoded latents to ~1e13, where round-off alone is ~1e-2 (measured)
    assert (sample - data).abs().max() < 1e-10


def test_scheduler_config_round_trips_and_reads_other_schedulers(tmp_path):
    ddim = diffusers.DDIMScheduler(beta_schedule="scaled_linear", beta_start=0.00085,
                                   beta_end=0.012, prediction_type="v_prediction")  # fmt: skip
    rex = RexScheduler.from_config(ddim.config, tableau="midpoint", zeta=1.0)
    assert torch.equal(rex.alphas_cumprod, ddim.alphas_cumprod)
    assert rex.config.prediction_type == "v_prediction" and rex.config.zeta == 1.0
    rex.save_pretrained(tmp_path)
    again = RexScheduler.from_pretrained(tmp_path)
    public = {k: v for k, v in rex.config.items() if not k.startswith("_")}
    assert {k: v for k, v in again.config.items() if not k.startswith("_")} == public
    rex.set_timesteps(4)
    again.set_timesteps(4)
    assert torch.equal(rex.timesteps, again.timesteps)
    # diffusers' own registry: the DDIM scheduler lists RexScheduler's compatibles and back
    assert "DDIMScheduler" in [c.__name__ for c in rex.compatibles]


def test_timesteps_are_the_stage_times_in_call_order():
    rex = RexScheduler(tableau="midpoint", grid="t")
    rex.set_timesteps(2)
    # grid t = 1, (1 + 1/1000) / 2, 1/1000 -> timesteps 999, 499.5, 0; midpoint stages at c = 0,
    # 1/2 (in varsigma), forward from t_n then backward from t_{n+1}
    ts = rex.timesteps.tolist()
    assert len(ts) == 8
    assert ts[0] == 999.0 and ts[2] == pytest.approx(499.5) and ts[6] == 0.0
    assert ts[1] == ts[3] and ts[5] == ts[7]  # the two increments share their midpoint times
    assert 499.5 < ts[1] < 999 and 0 < ts[5] < 499.5


def test_scheduler_bad_inputs(saved_pipeline):
    pipe, _ = saved_pipeline
    x = torch.zeros(1, 1, 8, 8, dtype=torch.float64)
    rex = RexScheduler()
    with pytest.raises(ValueError, match="call set_timesteps"):
        rex.step(x, 999, x)
    rex.set_timesteps(2)
    with pytest.raises(ValueError, match=r"timestep must be timesteps\[0\]"):
        rex.step(x, 500, x)
    first = rex.step(x, rex.timesteps[0], x).prev_sample
    with pytest.raises(ValueError, match="sample must be the prev_sample"):
        rex.step(x, rex.timesteps[1], first + 1)
    with pytest.raises(ValueError, match="RexScheduler: beta_schedule must be one of 'linear'"):
        RexScheduler(beta_schedule="cosine")
    with pytest.raises(ValueError, match="RexScheduler: tableau must be one of 'euler'"):
        RexScheduler(tableau="rk5")
    with pytest.raises(TypeError, match="seed must be an int or None"):
        RexScheduler(seed=1.5)
    with pytest.raises(ValueError, match="trained_betas must hold num_train_timesteps=1000"):
        RexScheduler(trained_betas=[0.1, 0.2])
    inversion = rex.invert(pipe.unet, x, num_inference_steps=2)
    assert isinstance(inversion, RexInversion)
    rex.set_inversion(inversion)
    with pytest.raises(ValueError, match="decodes only from its own pipeline_latents"):
        rex.step(x, rex.timesteps[0], x + 1)
    with pytest.raises(TypeError, match="inversion must be a RexInversion"):
        rex.set_inversion((x, x))


def test_guided_inversion_round_trips_with_a_conditional_unet(conditional_unet):
    g = torch.Generator().manual_seed(2)
    cond = torch.randn(1, 3, 8, generator=g, dtype=torch.float64)
    uncond = torch.randn(1, 3, 8, generator=g, dtype=torch.float64)
    data = 0.5 * torch.randn(2, 1, 8, 8, generator=g, dtype=torch.float64)
    model = guided_unet(conditional_unet, cond, uncond, guidance_scale=4.0)
    rex = RexScheduler(tableau="midpoint", prediction_type="sample")
    inversion = rex.invert(model, data, num_inference_steps=3)
    rex.set_inversion(inversion)
    sample = inversion.pipeline_latents
    with torch.no_grad():
        for t in rex.timesteps:
            sample = rex.step(model(sample, t), t, sample).prev_sample
    assert (sample - data).abs().max() < 1e-10  # round-off, as for the unconditional UNet


def test_seed_none_takes_the_brownian_key_from_the_pipelines_generator(saved_pipeline):
    pipe, _ = saved_pipeline
    ddpm = pipe.scheduler
    pipe.scheduler = RexScheduler.from_config(ddpm.config, sde="em", seed=None,
                                              prediction_type="sample")  # fmt: skip
    try:
        runs = [
            pipe(batch_size=1, generator=torch.Generator().manual_seed(s), num_inference_steps=4,
                 output_type="np").images
            for s in (5, 5, 6)
        ]  # fmt: skip
        key = pipe.scheduler._solver.seed
    finally:
        pipe.scheduler = ddpm
    assert np.array_equal(runs[0], runs[1]) and not np.array_equal(runs[0], runs[2])
    # the key is drawn (as RexSolver draws one from a generator seed) from the pipeline's
    # generator right after the pipeline drew its noise with it
    g = torch.Generator().manual_seed(6)
    randn_tensor((1, 1, 8, 8), generator=g, dtype=torch.float64)
    assert key == RexSolver(lambda x, t: x, DiscreteVPSchedule([0.9, 0.5]), seed=g).seed


# --- issue 49: the keyword arguments diffusers pipelines pass, add_noise -----------------------


def test_ddim_pipeline_runs_with_rex_scheduler_and_equals_rex_solver(saved_pipeline):
    """DDIMPipeline passes eta, use_clipped_model_output and generator to step()."""
    pipe, _ = saved_pipeline
    ddim = diffusers.DDIMPipeline(unet=pipe.unet, scheduler=diffusers.DDIMScheduler())
    ddim.set_progress_bar_config(disable=True)
    # DDIMPipeline turns any scheduler into DDIM: set Rex after construction
    ddim.scheduler = RexScheduler.from_config(pipe.scheduler.config, tableau="euler")
    images = ddim(batch_size=2, generator=torch.Generator().manual_seed(0), eta=0.0,
                  num_inference_steps=4, output_type="np").images  # fmt: skip
    x_T = randn_tensor((2, 1, 8, 8), generator=torch.Generator().manual_seed(0),
                       dtype=torch.float64)  # fmt: skip
    x0, _, _ = reference_solver(pipe, 4, {"tableau": "euler"}).sample(x_T)
    assert (ddim.scheduler.pair[0] - x0).abs().max() < 1e-10
    np.testing.assert_allclose(images, (x0 / 2 + 0.5).clamp(0, 1).permute(0, 2, 3, 1).numpy(),
                               rtol=0, atol=1e-10)  # fmt: skip
    with pytest.warns(UserWarning, match=r"eta > 0 ignored: Rex is deterministic"):
        ddim(batch_size=1, eta=1.0, num_inference_steps=2, output_type="np")
    with pytest.raises(ValueError, match=r"eta must be in \[0, 1\]"):
        ddim.scheduler.step(torch.zeros(1), ddim.scheduler.timesteps[0], torch.zeros(1), eta=-1)


def test_add_noise_is_diffusers_forward_noising():
    rex, ddpm = (
        RexScheduler(beta_schedule="scaled_linear"),
        diffusers.DDPMScheduler(beta_schedule="scaled_linear"),
    )
    g = torch.Generator().manual_seed(0)
    x0, noise = torch.randn(3, 1, 4, 4, generator=g), torch.randn(3, 1, 4, 4, generator=g)
    t = torch.tensor([0, 500, 999])
    torch.testing.assert_close(rex.add_noise(x0, noise, t), ddpm.add_noise(x0, noise, t))
    with pytest.raises(ValueError, match=r"timesteps must lie in \[0, 1000\)"):
        rex.add_noise(x0, noise, torch.tensor([0, 1, 1000]))
    with pytest.raises(TypeError, match="timesteps must be an integer tensor"):
        rex.add_noise(x0, noise, torch.tensor([0.5, 1.0, 2.0]))
    with pytest.raises(ValueError, match="noise must have shape"):
        rex.add_noise(x0, noise[:2], t)


@pytest.mark.parametrize("kind", ["linear", "scaled_linear"])
def test_vp_schedule_accepts_a_constant_beta(kind):
    s = VPSchedule(beta0=2.0, beta1=2.0, kind=kind)
    assert s.beta(0.3) == pytest.approx(2.0) and s.alpha(0.5) == pytest.approx(np.exp(-0.5))
    assert s.t_of_log_snr(s.log_snr(0.4)) == pytest.approx(0.4, abs=1e-12)
    with pytest.raises(ValueError, match="beta1 must be >= beta0"):
        VPSchedule(beta0=2.0, beta1=1.0)
