"""The real path on a tiny random Qwen2.5-Omni thinker saved to a temporary folder: our layer loop
equals HF's forward, mu = 1 is bit-identical, prune mode equals the attention-mask reference with
the gathered 3-D (TMRoPE) position ids, and the eager attention map equals HF's own."""

import pytest
import torch
from transformers import Qwen2_5OmniThinkerConfig, Qwen2_5OmniThinkerForConditionalGeneration

from icml26.omnifit import LAHPProfile, OmniFitCompressor, lahp_calibrate, run_compressed
from icml26.omnifit.hf import QwenOmniAdapter, load_omni_model

AUDIO, IMAGE, VIDEO = 150, 151, 152


def tiny_config():
    return Qwen2_5OmniThinkerConfig(
        text_config={
            "hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 3,
            "num_attention_heads": 4, "num_key_value_heads": 2, "vocab_size": 160,
            "max_position_embeddings": 512,
            "rope_parameters": {
                "rope_type": "default", "rope_theta": 10000.0, "mrope_section": [2, 1, 1],
            },
        },
        audio_config={"d_model": 16, "encoder_layers": 1, "encoder_attention_heads": 2,
                      "encoder_ffn_dim": 32, "num_mel_bins": 16, "output_dim": 32},
        vision_config={"depth": 1, "hidden_size": 16, "intermediate_size": 32, "num_heads": 2,
                       "out_hidden_size": 32, "fullatt_block_indexes": [0]},
        audio_token_index=AUDIO, image_token_index=IMAGE, video_token_index=VIDEO,
    )  # fmt: skip


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    folder = tmp_path_factory.mktemp("tiny-thinker")
    with torch.random.fork_rng():
        torch.manual_seed(0)  # HF initialises from the global generator; fork keeps it untouched
        Qwen2_5OmniThinkerForConditionalGeneration(tiny_config()).save_pretrained(folder)
    return folder


@pytest.fixture(scope="module")
def adapter(saved):
    return load_omni_model(saved, dtype="float64")


@pytest.fixture(scope="module")
def batch():
    # two 2-s chunks: 4 video placeholders then 3 audio placeholders each, between text tokens
    chunk = [VIDEO] * 4 + [AUDIO] * 3
    ids = torch.tensor([[1, 2, *chunk, *chunk, 3, 4, 5]] * 2)
    n = ids.shape[1]
    g = torch.Generator().manual_seed(1)
    t = torch.arange(n)
    # TMRoPE-like ids: temporal, height and width differ for the multimodal tokens
    pos = torch.stack([t, t + (t % 4), t + (t % 2)])[:, None].expand(3, 2, n)
    return {
        "input_ids": ids,
        "inputs_embeds": torch.randn(2, n, 32, generator=g, dtype=torch.float64),
        "attention_mask": torch.ones_like(ids),
        "position_ids": pos,
    }


def test_layer_loop_equals_the_hf_forward(adapter, batch):
    with torch.no_grad():
        reference = adapter.thinker(**batch).logits[:, -1]
        ours = run_compressed(adapter, batch).logits
    torch.testing.assert_close(ours, reference, atol=1e-10, rtol=0)  # float64: round-off only


def test_modality_codes_come_from_the_config_token_ids(adapter, batch):
    _, ids, pos = adapter.embed(batch)
    assert ids.tolist() == [0, 0] + ([1] * 4 + [2] * 3) * 2 + [0, 0, 0]
    assert torch.equal(pos, batch["position_ids"])


def test_mu_one_is_bit_identical(adapter, batch):
    with torch.no_grad():
        full = run_compressed(adapter, batch).logits
        same = run_compressed(adapter, batch, OmniFitCompressor(LAHPProfile.uniform(3, 32), 1.0))
    assert torch.equal(same.logits, full)


def test_prune_mode_equals_the_attention_mask_reference_with_3d_ids(adapter, batch):
    profile = LAHPProfile([32, 20, 10], 32, {"video": [1.0] * 3, "audio": [1.0] * 3}, 100.0, 1.0)
    seen = []

    class Spy:
        def __getattr__(self, name):
            return getattr(adapter, name)

        def run_layer(self, layer, h, pos, mask):
            seen.append(pos)
            return adapter.run_layer(layer, h, pos, mask)

    with torch.no_grad():
        out = run_compressed(Spy(), batch, OmniFitCompressor(profile, 0.4, mode="prune", M=2, k=2))
        h, _, pos = adapter.embed(batch)
        n = h.shape[1]
        for layer, idx in enumerate(out.kept):
            alive = torch.zeros(2, n, dtype=torch.bool).scatter_(1, idx, True)
            h = adapter.run_layer(layer, h, pos, alive[:, None, :] | torch.eye(n, dtype=torch.bool))
        reference = adapter.head(h)
    torch.testing.assert_close(out.logits, reference, atol=1e-5, rtol=0)
    assert out.alive[-1] < n
    for p, idx in zip(seen, out.kept, strict=True):  # the kept tokens' own 3-D ids
        assert torch.equal(p, batch["position_ids"].gather(2, idx[None].expand(3, -1, -1)))


def test_eager_attention_map_equals_hf_attentions(saved, batch):
    eager = load_omni_model(saved, attn="eager", dtype="float64")
    with torch.no_grad():
        hf = eager.thinker(**batch, output_attentions=True).attentions
        h, _, pos = eager.embed(batch)
        for layer in range(3):
            torch.testing.assert_close(eager.attention_map(layer, h, pos, None), hf[layer])
            h = eager.run_layer(layer, h, pos, None)


def test_calibration_runs_on_the_thinker(adapter, batch):
    with torch.no_grad():
        profile = lahp_calibrate(adapter, [batch], mu=0.3)
    assert profile.n_layers == 3 and profile.d == 32
    assert all(1 <= k <= 32 for k in profile.k_eff)


def test_a_non_thinker_is_refused():
    with pytest.raises(TypeError, match="thinker"):
        QwenOmniAdapter(torch.nn.Linear(2, 2))


def test_bad_attention_implementation_is_refused(saved):
    with pytest.raises(ValueError, match="attn"):
        load_omni_model(saved, attn="flash")


def hf_recompute_greedy(thinker, batch, steps):
    """No cache: HF's own thinker forward on prompt + generated tokens at every step; new
    tokens take 3-D ids max + 1, max + 2, ... (Qwen2.5-Omni's rule for text after media)."""
    ids, embeds, pos = batch["input_ids"], batch["inputs_embeds"], batch["position_ids"]
    start = pos.amax(dim=(0, 2)) + 1  # (B,)
    tokens, all_logits = [], []
    for step in range(steps):
        logits = thinker(
            input_ids=ids, inputs_embeds=embeds, position_ids=pos,
            attention_mask=torch.ones_like(ids), use_cache=False,
        ).logits[:, -1]  # fmt: skip
        all_logits.append(logits)
        token = logits.argmax(-1, keepdim=True)  # (B, 1)
        tokens.append(token)
        ids = torch.cat([ids, token], 1)
        embeds = torch.cat([embeds, thinker.get_input_embeddings()(token)], 1)
        new_pos = (start + step)[None, :, None].expand(3, -1, 1)
        pos = torch.cat([pos, new_pos], 2)
    return torch.cat(tokens, 1), torch.stack(all_logits, 1)


def test_generate_equals_hf_recompute_and_caches_shrink(adapter, batch):
    from icml26.omnifit import generate

    steps = 5
    with torch.no_grad():
        full = generate(adapter, batch, None, max_new_tokens=steps)
        mu_one = generate(adapter, batch, OmniFitCompressor(LAHPProfile.uniform(3, 32), 1.0), steps)
        ref_tokens, ref_logits = hf_recompute_greedy(adapter.thinker, batch, steps)
        profile = LAHPProfile([16, 8, 4], 32, {"video": [0.5] * 3, "audio": [0.5] * 3}, 1.0, 1.0)
        small = generate(adapter, batch, OmniFitCompressor(profile, 0.4, M=2, k=1), steps)
    assert torch.equal(mu_one.logits, full.logits)
    assert torch.equal(full.tokens, ref_tokens)
    assert len(torch.unique(full.tokens)) > 1  # not a constant sequence (vacuous check)
    torch.testing.assert_close(full.logits, ref_logits, atol=1e-10, rtol=0)  # float64 round-off
    n = batch["input_ids"].shape[1]
    assert full.cache_lengths == [n + steps - 1] * 3
    assert max(small.alive) < n
    assert small.cache_lengths == [a + steps - 1 for a in small.alive]


@pytest.mark.parametrize("make", ["llama", "qwen2"])
def test_another_architecture_is_refused_before_anything_is_built(tmp_path, monkeypatch, make):
    """Issue 43/49: a folder of another real HF architecture is refused from its config.json;
    neither model class is touched (before the fix a default-size thinker, 22 GB, was built)."""
    import transformers

    config = {
        "llama": transformers.LlamaConfig(hidden_size=8, num_hidden_layers=1,
                                          num_attention_heads=2, intermediate_size=16),
        "qwen2": transformers.Qwen2Config(hidden_size=8, num_hidden_layers=1,
                                          num_attention_heads=2, intermediate_size=16),
    }[make]  # fmt: skip
    config.save_pretrained(tmp_path)

    def built(*args, **kwargs):
        raise AssertionError("a model was built for a wrong architecture")

    for cls in (transformers.Qwen2_5OmniThinkerForConditionalGeneration,
                transformers.Qwen2_5OmniForConditionalGeneration):  # fmt: skip
        monkeypatch.setattr(cls, "from_pretrained", built)
    with pytest.raises(ValueError, match=f"model_type '{make}'"):
        load_omni_model(tmp_path)


def test_revision_must_be_a_string(saved):
    with pytest.raises(TypeError, match="revision"):
        load_omni_model(saved, revision=3)
