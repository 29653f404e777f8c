"""The instruction-FiLM option of TinyOpenVLA's conv stem (issue 41): off by default and then the
model of before bit for bit; on, the stem reads the instruction with the sign FiLM prescribes,
starts as the unconditioned model, learns, and is rebuilt from a checkpoint's config."""

import pytest
import torch
import torch.nn.functional as F  # noqa: N812

from icml26.core import torch_threads
from icml26.core.standins import save_checkpoint
from icml26.scale import POLICIES_V1, POLICIES_V1_ALLOCENTRIC, TinyOpenVLA, load_policy
from icml26.scale.hf_vla import ConvStem
from icml26.scale.standins import policy_v1_trainer

SMALL = {"d_vision": 16, "d_model": 16, "heads": 2, "mlp_ratio": 2}
IDS = torch.tensor([0, 3, 5, 7])


@pytest.fixture(autouse=True)
def _one_torch_thread():
    with torch_threads(1):
        yield


@pytest.fixture(scope="module")
def images():
    g = torch.Generator().manual_seed(0)
    return torch.randint(0, 256, (4, 32, 32, 3), dtype=torch.uint8, generator=g)


def _summary(t: torch.Tensor) -> list[float]:
    """Six evenly spaced logits, their sum and their absolute sum: a wiring change moves them by
    far more than the tolerance, a CPU's different float summation order does not."""
    sample = t.reshape(-1)[:: t.numel() // 6][:6].tolist()
    return [*sample, float(t.double().sum()), float(t.double().abs().sum())]


def test_off_by_default_the_shipped_policy_and_a_fresh_model_are_unchanged(images):
    # prefill logits of the code before the option (2026-12-07, 1 thread; their SHA-256 digests
    # matched the code after bit for bit on this machine)
    model, meta = load_policy("reach_v1_s0")
    fresh = TinyOpenVLA(seed=0, **SMALL)
    shipped = [-4.53566, -1.46078, -1.20972, -5.2677, -1.49653, -1.1652, -2009.44732, 2116.51222]
    init = [0.0755, -0.04744, -0.01442, 0.07969, -0.04795, -0.00785, -0.51163, 70.39404]
    with torch.no_grad():
        assert _summary(model.prefill(images, IDS)[0]) == pytest.approx(shipped, abs=2e-4)
        assert _summary(fresh.prefill(images, IDS)[0]) == pytest.approx(init, abs=2e-4)
    for name in POLICIES_V1_ALLOCENTRIC:  # their records hold no FiLM key, load without FiLM
        model, meta = load_policy(name)
        assert "instruction_film" not in meta["config"] and not model.instruction_film
        assert not any("film" in key for key in model.state_dict())
    for name in POLICIES_V1:  # the policies scale.reach_v1 evaluates are rebuilt with FiLM
        model, meta = load_policy(name)
        assert meta["config"]["instruction_film"] is True and model.instruction_film
        film = [v for k, v in model.state_dict().items() if "film" in k]
        assert film and all(v.abs().sum() > 0 for v in film)  # trained, not the zero table
    assert "instruction_film" not in fresh.config


def test_off_the_image_encoding_ignores_the_instruction_on_it_does_not(images):
    off = TinyOpenVLA(seed=1, **SMALL)
    on = TinyOpenVLA(seed=1, instruction_film=True, **SMALL)
    with torch.no_grad():
        on._siglip().embeddings.patch_embedding.film.weight.normal_(0, 0.5)
        for model, depends in ((off, False), (on, True)):
            a = model.prefix_embeddings(images, IDS)[:, 1:]  # the projected patches
            b = model.prefix_embeddings(images, (IDS + 1) % 8)[:, 1:]
            assert (not torch.equal(a, b)) is depends
        # the same instruction gives the same patches; the stem's ids are cleared after use
        assert torch.equal(on.prefix_embeddings(images, IDS), on.prefix_embeddings(images, IDS))
        assert on._siglip().embeddings.patch_embedding.ids is None


def test_film_starts_as_the_unconditioned_model(images):
    # the table is zeros and building it draws no random numbers: same seed, same logits
    off = TinyOpenVLA(seed=2, **SMALL)
    on = TinyOpenVLA(seed=2, instruction_film=True, **SMALL)
    with torch.no_grad():
        assert torch.equal(off.prefill(images, IDS)[0], on.prefill(images, IDS)[0])
    assert on.config["instruction_film"] is True


def test_film_scales_and_shifts_the_first_features_with_the_right_sign():
    torch.manual_seed(0)
    stem = ConvStem(16, n_film=8)
    pixels = torch.randn(2, 3, 32, 32)
    ids = torch.tensor([2, 6])
    width = stem.conv1.out_channels
    with torch.no_grad():
        stem.film.weight[2, :width] = 1.0  # gain +1 for id 2: features doubled
        stem.film.weight[6, width:] = 0.5  # bias +0.5 for id 6: features shifted up
        stem.ids = ids
        out = stem(pixels)
        h = F.gelu(stem.conv1(pixels))
        expected = torch.cat([2 * h[:1], h[1:] + 0.5])
        assert torch.allclose(out, stem.conv3(F.gelu(stem.conv2(expected))), atol=1e-6)
        wrong = torch.cat([0 * h[:1], h[1:] - 0.5])  # (1 - g), -b
        assert not torch.allclose(out, stem.conv3(F.gelu(stem.conv2(wrong))), atol=1e-3)
        stem.ids = None
        with pytest.raises(RuntimeError, match="instruction"):
            stem(pixels)


def test_the_film_table_learns_and_a_checkpoint_rebuilds_it(tmp_path, images):
    train = policy_v1_trainer({**SMALL, "instruction_film": True}, demos=2, steps=3,
                              batch_size=4)  # fmt: skip
    trained = train(None, None)
    model = trained.model
    assert trained.config["instruction_film"] is True
    assert model._siglip().embeddings.patch_embedding.film.weight.abs().sum() > 0
    stem = save_checkpoint(tmp_path / "film", model, {"config": trained.config})
    loaded, meta = load_policy(stem)
    assert loaded.instruction_film and meta["config"]["instruction_film"] is True
    with torch.no_grad():
        assert torch.equal(loaded.prefill(images, IDS)[0], model.prefill(images, IDS)[0])


def test_bad_options_are_refused():
    with pytest.raises(TypeError, match="instruction_film"):
        TinyOpenVLA(instruction_film="yes", **SMALL)
    with pytest.raises(ValueError, match="instruction_film"):
        TinyOpenVLA(instruction_film=True, stem="patch", **SMALL)
