"""The diffusers adapter: duck-typed checks always, and a tiny real UNet saved and reloaded."""

from types import SimpleNamespace

import pytest
import torch

from icml26.core import seeded_default_init
from icml26.rex import RexSolver
from icml26.rex.diffusers_adapter import from_diffusers, load_diffusers_unet
from icml26.rex.metrics import roundtrip_error


class FakeUNet:
    """Records calls; returns 2 x for the conditional branch and x otherwise."""

    def __init__(self):
        self.calls = []

    def __call__(self, x, timestep, encoder_hidden_states=None):
        self.calls.append((timestep, encoder_hidden_states))
        scale = (
            2.0 if encoder_hidden_states is not None and encoder_hidden_states.sum() > 0 else 1.0
        )
        return SimpleNamespace(sample=scale * x)


def fake_scheduler(prediction="epsilon", schedule="scaled_linear"):
    betas = torch.linspace(0.00085**0.5, 0.012**0.5, 1000) ** 2
    config = SimpleNamespace(beta_schedule=schedule, prediction_type=prediction)
    return SimpleNamespace(betas=betas, config=config)


def test_adapter_maps_time_schedule_and_guidance():
    unet = FakeUNet()
    cond, uncond = torch.ones(1, 4), torch.zeros(1, 4)
    model, schedule, output = from_diffusers(unet, fake_scheduler(), cond=cond, uncond=uncond,
                                             cfg_scale=3.0)  # fmt: skip
    assert output == "noise" and schedule.kind == "scaled_linear"
    assert (schedule.beta0, schedule.beta1) == pytest.approx((0.85, 12.0), rel=1e-5)
    x = torch.randn(2, 3, generator=torch.Generator().manual_seed(0))
    out = model(x, torch.full((2,), 0.25))
    assert torch.allclose(out, x + 3.0 * (2 * x - x))  # eps_u + w (eps_c - eps_u)
    assert torch.allclose(unet.calls[0][0], torch.full((2,), 250.0))  # timestep = 1000 t


def test_adapter_converts_v_prediction_to_noise():
    model, schedule, output = from_diffusers(FakeUNet(), fake_scheduler("v_prediction"))
    x = torch.randn(3, 2, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    t = 0.4
    eps = model(x, torch.full((3,), t, dtype=torch.float64))
    # the fake returns v = x; eps = sigma x + alpha v
    assert output == "noise"
    assert torch.allclose(eps, (schedule.sigma(t) + schedule.alpha(t)) * x)


def test_adapter_bad_inputs():
    with pytest.raises(ValueError, match="beta_schedule must be 'linear' or 'scaled_linear'"):
        from_diffusers(FakeUNet(), fake_scheduler(schedule="squaredcos_cap_v2"))
    with pytest.raises(ValueError, match="prediction_type must be"):
        from_diffusers(FakeUNet(), fake_scheduler("flow"))
    with pytest.raises(ValueError, match="cfg_scale needs both cond and uncond"):
        from_diffusers(FakeUNet(), fake_scheduler(), cfg_scale=2.0)


def test_tiny_saved_unet_loads_and_round_trips(tmp_path):
    import diffusers

    with seeded_default_init(0):
        unet = diffusers.UNet2DModel(
            sample_size=8, in_channels=1, out_channels=1, block_out_channels=(16, 16),
            down_block_types=("DownBlock2D", "DownBlock2D"),
            up_block_types=("UpBlock2D", "UpBlock2D"), layers_per_block=1, norm_num_groups=4,
        )  # fmt: skip
    unet.save_pretrained(tmp_path)
    diffusers.DDPMScheduler(beta_schedule="linear").save_pretrained(tmp_path)
    loaded, scheduler = load_diffusers_unet(str(tmp_path), subfolder=None, conditional=False)
    x = torch.randn(2, 1, 8, 8, generator=torch.Generator().manual_seed(0))
    t = torch.full((2,), 0.3)
    model, schedule, output = from_diffusers(loaded, scheduler)
    with torch.no_grad():
        assert torch.equal(model(x, t), unet(x, 1000 * t).sample)
    assert schedule.kind == "linear" and schedule.beta1 == pytest.approx(20.0)
    model64, schedule, output = from_diffusers(loaded.double(), scheduler)
    solver = RexSolver(model64, schedule, model_output=output, tableau="midpoint", n_steps=8)
    data = x.double()
    ts = solver.timesteps()
    x_T, x_T_hat = solver.encode(data, ts)
    assert roundtrip_error(solver.decode(x_T, x_T_hat, ts)[0], data, "max") < 1e-10
