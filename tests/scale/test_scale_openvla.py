"""Real path on a tiny stand-in: load_openvla -> OpenVLAAdapter -> decoders, saved to tmp_path."""

import json

import numpy as np
import pytest
import torch
from torch import nn
from transformers import (
    AutoConfig,
    AutoModelForImageTextToText,
    GPT2Config,
    GPT2LMHeadModel,
    PretrainedConfig,
    PreTrainedModel,
    ViTConfig,
    ViTModel,
)

from icml26.core import MissingExtraError, seeded_default_init
from icml26.scale import (
    GreedyDecoder,
    OpenVLAAdapter,
    ScaleDecoder,
    UncertaintyState,
    load_openvla,
    run_libero,
)

VOCAB, PAD = 300, 4  # text vocabulary 300 (action ids 44..299), padded to 304 like OpenVLA


class StandInConfig(PretrainedConfig):
    model_type = "scale_test_prismatic"

    def __init__(self, vocab_size=VOCAB + PAD, pad_to_multiple_of=PAD, image_size=16, **kwargs):
        super().__init__(**kwargs)
        self.vocab_size, self.pad_to_multiple_of, self.image_size = (
            vocab_size,
            pad_to_multiple_of,
            image_size,
        )


class StandInVLA(PreTrainedModel):
    """Prismatic-shaped: ViT patches inserted after BOS into a GPT-2 language model."""

    config_class = StandInConfig

    def __init__(self, config):
        super().__init__(config)
        vit = ViTConfig(
            hidden_size=16,
            num_hidden_layers=2,
            num_attention_heads=2,
            intermediate_size=32,
            image_size=config.image_size,
            patch_size=8,
        )
        self.vision_backbone = ViTModel(vit, add_pooling_layer=False)
        self.projector = nn.Linear(16, 32)
        self.language_model = GPT2LMHeadModel(
            GPT2Config(
                vocab_size=config.vocab_size,
                n_embd=32,
                n_layer=2,
                n_head=2,
                n_positions=128,
                bos_token_id=1,
                eos_token_id=1,
            )
        )
        self.post_init()

    def forward(
        self,
        input_ids=None,
        pixel_values=None,
        attention_mask=None,
        past_key_values=None,
        use_cache=None,
        **kw,
    ):
        if past_key_values is not None:  # one cached token, as OpenVLA's generation path
            return self.language_model(
                input_ids=input_ids, past_key_values=past_key_values, use_cache=True
            )
        patches = self.projector(self.vision_backbone(pixel_values=pixel_values).last_hidden_state)
        text = self.language_model.transformer.wte(input_ids)
        embeds = torch.cat([text[:, :1], patches, text[:, 1:]], dim=1)
        return self.language_model(inputs_embeds=embeds, use_cache=use_cache)


AutoConfig.register(StandInConfig.model_type, StandInConfig, exist_ok=True)
AutoModelForImageTextToText.register(StandInConfig, StandInVLA, exist_ok=True)


def processor(prompt, image):
    ids = [1] + [2 + ord(c) % 40 for c in prompt]  # non-action ids only (< 44)
    pixels = torch.as_tensor(np.asarray(image, dtype=np.float32) / 255.0).permute(2, 0, 1)[None]
    return {
        "input_ids": torch.tensor([ids]),
        "attention_mask": torch.ones(1, len(ids), dtype=torch.long),
        "pixel_values": pixels,
    }


STATS = {
    "toy_dataset": {
        "action": {
            "q01": [-2.0] * 6 + [0.0],
            "q99": [3.0] * 6 + [1.0],
            "mask": [True] * 6 + [False],
        }
    }
}


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    path = tmp_path_factory.mktemp("openvla")
    with seeded_default_init(0):
        StandInVLA(StandInConfig()).save_pretrained(path)
    (path / "dataset_statistics.json").write_text(json.dumps(STATS))
    return path


def reference_action(model, image, instruction, append=29871):
    """Full re-forward greedy decoding over the action ids, then OpenVLA's bins and q01/q99."""
    inputs = processor(f"In: What action should the robot take to {instruction}?\nOut:", image)
    ids = inputs["input_ids"]
    tokens = []
    with torch.no_grad():
        for _ in range(7):
            logits = model(input_ids=ids, pixel_values=inputs["pixel_values"]).logits[0, -1]
            token = 44 + int(logits[44:VOCAB].argmax())
            tokens.append(token)
            ids = torch.cat([ids, torch.tensor([[token]])], dim=1)
    bins = np.linspace(-1, 1, 256)
    centers = (bins[:-1] + bins[1:]) / 2
    normalized = centers[np.clip(VOCAB - np.array(tokens) - 1, 0, 254)]
    q01, q99 = (
        np.array(STATS["toy_dataset"]["action"]["q01"]),
        np.array(STATS["toy_dataset"]["action"]["q99"]),
    )
    mask = np.array(STATS["toy_dataset"]["action"]["mask"])
    return np.where(mask, 0.5 * (normalized + 1) * (q99 - q01) + q01, normalized), tokens


def test_load_prefill_step_and_detokenize_match_full_forward_reference(saved):
    model, proc = load_openvla(str(saved), dtype="float32", load_processor=False)
    assert proc is None and isinstance(model, StandInVLA)
    adapter = OpenVLAAdapter(model, processor, append_token=None)  # stats from the model folder
    assert adapter.action_token_range == (44, 300)
    assert len(adapter.vision_attention_modules()) == 2  # the ViT's two attention layers
    image = np.random.default_rng(0).integers(0, 256, (16, 16, 3), dtype=np.uint8)
    expected, _ = reference_action(model, image, "Pick up the cup".lower())
    got = adapter.predict_action(image, "Pick up the cup")
    # float32 cached vs uncached GPT-2 forward: the argmax tokens agree, values are exact centres
    np.testing.assert_allclose(got, expected, atol=1e-12)
    assert got[-1] == expected[-1] and -1 <= got[-1] <= 1  # masked gripper stays normalised


def test_scale_runs_through_the_adapter_with_single_pass_cost(saved):
    model, _ = load_openvla(str(saved), dtype="float32", load_processor=False)
    adapter = OpenVLAAdapter(model, processor, unnorm_key="toy_dataset", append_token=29871 % VOCAB)
    state = UncertaintyState(7)
    image = np.zeros((16, 16, 3), dtype=np.uint8)
    decoder = ScaleDecoder(seed=0)
    gammas = []
    for _ in range(3):
        expected = 1.0 if state.first else 2 ** np.tanh(0.3 * state.delta())
        tokens, info = decoder.decode(adapter, image, "open the drawer", state)
        assert info.forward_passes == 7 and tokens.shape == (1, 7)  # 1 prefix + 6 cached
        gammas.append(float(info.gamma[0]))
        assert gammas[-1] == pytest.approx(expected)
    assert gammas[:2] == [1.0, 1.0] and gammas[2] != 1.0  # Δu = 0 until two steps are seen
    # greedy through the adapter = predict_action
    greedy = GreedyDecoder().decode(adapter, image, "open the drawer")[0]
    np.testing.assert_array_equal(
        adapter.detokenize(greedy)[0], adapter.predict_action(image, "open the drawer")
    )


def test_bad_input_and_missing_libero(saved):
    model, _ = load_openvla(str(saved), dtype="float32", load_processor=False)
    with pytest.raises(ValueError, match="unnorm_key"):
        OpenVLAAdapter(model, processor, unnorm_key="nope")
    with pytest.raises(TypeError, match="processor"):
        OpenVLAAdapter(model, processor="not callable")
    with pytest.raises(TypeError, match="model"):
        OpenVLAAdapter(nn.Linear(2, 2), processor)
    with pytest.raises(ValueError, match="dtype"):
        load_openvla(str(saved), dtype="int8")
    with pytest.raises(ValueError, match="suite"):
        run_libero(GreedyDecoder(), "kitchen")
    with pytest.raises(MissingExtraError, match="libero"):
        run_libero(GreedyDecoder(), "10", trials=1)


def test_remote_code_is_opt_in_and_architecture_checked_before_building(tmp_path, saved):
    """Issue 40: a checkpoint whose classes live in its own folder runs nothing by default."""
    marker = tmp_path / "ran"
    folder = tmp_path / "remote"
    folder.mkdir()
    (folder / "configuration_evil.py").write_text(
        f"open({str(marker)!r}, 'w').write('x')\n"
        "from transformers import PretrainedConfig\n"
        "class EvilConfig(PretrainedConfig):\n    model_type = 'openvla'\n"
    )
    (folder / "config.json").write_text(
        json.dumps(
            {"model_type": "openvla", "auto_map": {"AutoConfig": "configuration_evil.EvilConfig"}}
        )
    )
    with pytest.raises(ValueError, match="trust_remote_code=True"):
        load_openvla(str(folder), dtype="float32", load_processor=False)
    assert not marker.exists()
    for bad in ("yes", 1, None):
        with pytest.raises(TypeError, match="trust_remote_code"):
            load_openvla(str(saved), trust_remote_code=bad)
    with pytest.raises(TypeError, match="revision"):
        load_openvla(str(saved), revision="")
    # another architecture is refused on its config, before any weights are built
    other = tmp_path / "gpt2"
    GPT2LMHeadModel(GPT2Config(n_layer=1, n_head=1, n_embd=8, vocab_size=16)).save_pretrained(other)
    with pytest.raises(ValueError, match="not an OpenVLA-style"):
        load_openvla(str(other), dtype="float32", load_processor=False)
    # the stand-in (a registered class, no remote code) loads with the default
    model, _ = load_openvla(str(saved), dtype="float32", load_processor=False, revision="main")
    assert isinstance(model, StandInVLA)
