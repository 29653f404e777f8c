"""Real-model paths on tiny local stand-ins saved to tmp_path (HF from_pretrained, peft)."""

import numpy as np
import pytest
import torch
import transformers
from torch import nn

from icml26.core import seeded_default_init
from icml26.debias import (
    LabelTokenClassifier,
    SentenceEncoder,
    TextClassifier,
    add_correction_vectors,
    batch_perturber,
    bias_profile,
    debias_finetune,
    filler,
    load_causal_lm,
    load_minilm,
    lora_model,
    masked_mean_pool,
    residual_write_modules,
    tiny_minilm,
    train_head,
)

WORDS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "set", "an", "alarm", "play", "jazz",
         "hi", "!", "thanks", "please", "the", "news"]  # fmt: skip


@pytest.fixture(scope="module")
def tiny_llama_dir(tmp_path_factory):
    cfg = transformers.LlamaConfig(vocab_size=40, hidden_size=16, intermediate_size=32,
                                   num_hidden_layers=2, num_attention_heads=2,
                                   num_key_value_heads=2, max_position_embeddings=32)  # fmt: skip
    with seeded_default_init(0):
        model = transformers.LlamaForCausalLM(cfg)
    folder = tmp_path_factory.mktemp("llama")
    model.save_pretrained(folder)
    return folder, model


def _ids(n=6, length=7, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.randint(3, 40, (n, length), generator=g)


def test_load_causal_lm_round_trip_is_exact(tiny_llama_dir):
    folder, original = tiny_llama_dir
    loaded = load_causal_lm(folder)
    ids = _ids()
    assert torch.equal(loaded(ids).logits, original.eval()(ids).logits)


def test_zero_hooks_leave_llama_logits_bitwise_equal_and_remove_restores(tiny_llama_dir):
    folder, _ = tiny_llama_dir
    model = load_causal_lm(folder)
    ids = _ids()
    before, keys = model(ids).logits, set(model.state_dict())
    names = residual_write_modules(model)
    assert names == ["model.layers.0.self_attn.o_proj", "model.layers.0.mlp.down_proj",
                     "model.layers.1.self_attn.o_proj", "model.layers.1.mlp.down_proj",
                     "model.norm"]  # fmt: skip
    handle = add_correction_vectors(model, names)
    assert torch.equal(model(ids).logits, before)
    handle.remove()
    assert torch.equal(model(ids).logits, before) and set(model.state_dict()) == keys


def test_bias_only_training_on_llama_changes_only_the_corrections(tiny_llama_dir):
    folder, _ = tiny_llama_dir
    lm = load_causal_lm(folder)
    handle = add_correction_vectors(lm, residual_write_modules(lm))
    clf = LabelTokenClassifier(lm, [5, 6, 7])
    before = {k: v.clone() for k, v in clf.state_dict().items()}
    batch = {"input_ids": _ids(8), "attention_mask": torch.ones(8, 7, dtype=torch.long)}

    def perturb(b, rng):  # replace one random token per prompt (a toy neutral edit)
        ids = b["input_ids"].clone()
        col = torch.as_tensor(rng.integers(0, ids.shape[1], size=ids.shape[0]))
        ids[torch.arange(ids.shape[0]), col] = torch.as_tensor(rng.integers(3, 40, ids.shape[0]))
        return {"input_ids": ids, "attention_mask": b["attention_mask"]}

    log = debias_finetune(clf, [batch], perturb, loss="kl", lr=1e-2, steps=5, params="bias")
    assert set(log.param_names) == {f"model.{n}.debias_correction" for n in handle.names}
    after = clf.state_dict()
    for key in before:
        assert torch.equal(before[key], after[key]) != key.endswith("debias_correction"), key


def test_label_token_classifier_reads_the_last_real_token(tiny_llama_dir):
    _, model = tiny_llama_dir
    clf = LabelTokenClassifier(model.eval(), [5, 9])
    ids = _ids(2, 5)
    mask = torch.tensor([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1]])
    got = clf(ids, mask)
    ref0 = model(ids[:1, :3]).logits[0, -1, [5, 9]]  # the first prompt without its padding
    torch.testing.assert_close(got[0], ref0, rtol=1e-5, atol=1e-5)
    with pytest.raises(ValueError, match="label_token_ids must be >= 2"):
        LabelTokenClassifier(model, [5])


@pytest.fixture(scope="module")
def tiny_bert_dir(tmp_path_factory):
    folder = tmp_path_factory.mktemp("bert")
    (folder / "vocab.txt").write_text("\n".join(WORDS) + "\n")
    tokenizer = transformers.BertTokenizerFast(vocab_file=str(folder / "vocab.txt"))
    tokenizer.save_pretrained(folder)
    cfg = transformers.BertConfig(vocab_size=len(WORDS), hidden_size=16, num_hidden_layers=2,
                                  num_attention_heads=2, intermediate_size=32)  # fmt: skip
    with seeded_default_init(0):
        model = transformers.BertModel(cfg)
    model.save_pretrained(folder)
    return folder, model, tokenizer


def test_load_minilm_path_mean_pools_over_real_tokens(tiny_bert_dir):
    folder, model, tokenizer = tiny_bert_dir
    enc = load_minilm(folder)
    texts = ["set an alarm", "play jazz please thanks"]
    emb = enc(texts)
    torch.testing.assert_close(emb.norm(dim=1), torch.ones(2))  # L2-normalised
    # independent reference: the saved BertModel, one unpadded sentence at a time
    for i, text in enumerate(texts):
        batch = tokenizer([text], return_tensors="pt")
        h = model.eval()(**batch).last_hidden_state.mean(dim=1)[0]
        torch.testing.assert_close(emb[i], h / h.norm(), rtol=1e-5, atol=1e-6)


def test_bias_profile_on_an_hf_encoder_and_bitfit(tiny_bert_dir):
    folder, _, _ = tiny_bert_dir
    enc = load_minilm(folder)
    texts = ["set an alarm", "play jazz", "the news please"]
    copies = [f"hi ! {t} thanks" for t in texts for _ in range(2)]
    names = ["embeddings", "encoder.layer.0", "encoder.layer.1"]
    df = bias_profile(enc.model, enc.tokenize(texts), enc.tokenize(copies), names,
                      pool=masked_mean_pool)  # fmt: skip
    assert list(df["module"]) == names and np.all(df["bias_norm"] > 0)
    assert np.all((df["rho"] >= 0) & (df["rho"] <= 1 + 1e-12))
    with seeded_default_init(1):
        clf = TextClassifier(enc, nn.Linear(16, 3))
    before = {k: v.clone() for k, v in clf.state_dict().items()}
    # the tokenizer lowercases, so casing alone would be a no-op here: add fillers
    pert = batch_perturber(filler(["hi !"], ["thanks"]))
    log = debias_finetune(clf, [texts], pert, steps=2, params="bias")
    assert log.trainable_fraction < 0.05
    after = clf.state_dict()
    changed = {k for k in before if not torch.equal(before[k], after[k])}
    assert changed and all(k.endswith("bias") for k in changed)


def test_lora_baseline_trains_only_adapter_weights():
    with seeded_default_init(0):
        net = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))
    state = {k: v.clone() for k, v in net.state_dict().items()}
    lora = lora_model(net, ["0", "2"], r=2, seed=0)
    x = [torch.randn(16, 4, generator=torch.Generator().manual_seed(0))]
    log = debias_finetune(lora, x, lambda b, rng: b + 1.0, lr=1e-2, steps=5, params="lora")
    assert log.n_trainable == 2 * (4 + 8) + 2 * (8 + 3)  # r·(in + out) per adapted Linear
    base = lora.get_base_model()
    for key, value in state.items():
        peft_key = key.replace(".weight", ".base_layer.weight").replace(".bias", ".base_layer.bias")
        assert torch.equal(base.state_dict()[peft_key], value)


def test_sentence_encoder_bad_input(tiny_bert_dir):
    folder, _, _ = tiny_bert_dir
    enc = load_minilm(folder)
    with pytest.raises(ValueError, match="non-empty list of strings"):
        enc([])
    with pytest.raises(TypeError, match="name_or_dir must be a str or path"):
        load_causal_lm(3)
    assert isinstance(enc, SentenceEncoder)


def test_embed_batches_like_one_call_and_tiny_minilm_is_seeded():
    enc = tiny_minilm(seed=0)
    texts = ["set an alarm", "play some jazz please", "the news", "hi!", "thanks"]
    with torch.no_grad():
        whole = enc(texts)
    # padding differs per chunk; masked mean pooling ignores it (float32 rounding only)
    assert torch.allclose(enc.embed(texts, batch_size=2), whole, atol=1e-6)
    # embed batches by token count: rows still come back in the order given
    assert torch.allclose(enc.embed(texts[::-1], batch_size=2), whole.flip(0), atol=1e-6)
    assert torch.equal(tiny_minilm(seed=0).embed(texts), enc.embed(texts))
    assert not torch.equal(tiny_minilm(seed=1).embed(texts), enc.embed(texts))
    assert enc.tokenizer.vocab_size == 30522  # the real all-MiniLM-L6-v2 tokenizer
    with pytest.raises(ValueError, match="hidden_size must be divisible by n_heads"):
        tiny_minilm(hidden_size=30, n_heads=4)
    with pytest.raises(ValueError, match="batch_size must be an integer"):
        enc.embed(texts, batch_size=0)


def test_train_head_reports_progress_per_epoch():
    x = torch.randn(20, 3, generator=torch.Generator().manual_seed(0))
    seen = []
    train_head(x, (x[:, 0] > 0).long(), hidden=4, epochs=2, progress=lambda *a: seen.append(a))
    assert [(done, total) for done, total, _ in seen] == [(1, 2), (2, 2)]


def test_load_causal_lm_checks_the_device():
    with pytest.raises(ValueError, match="load_causal_lm: device must be a torch device name"):
        load_causal_lm("some/model", device="gpu0")


def _tiny_decoder(family):
    """A tiny random GPT-2 or Qwen2 causal LM (issue 49: not only Llama)."""
    if family == "gpt2":
        cfg = transformers.GPT2Config(vocab_size=40, n_positions=32, n_embd=16, n_layer=2,
                                      n_head=2)  # fmt: skip
        cls = transformers.GPT2LMHeadModel
        names = ["transformer.h.0.attn.c_proj", "transformer.h.0.mlp.c_proj",
                 "transformer.h.1.attn.c_proj", "transformer.h.1.mlp.c_proj",
                 "transformer.ln_f"]  # fmt: skip
    else:
        cfg = transformers.Qwen2Config(
            vocab_size=40, hidden_size=16, intermediate_size=32, num_hidden_layers=2,
            num_attention_heads=2, num_key_value_heads=2, max_position_embeddings=32,
        )  # fmt: skip
        cls = transformers.Qwen2ForCausalLM
        names = ["model.layers.0.self_attn.o_proj", "model.layers.0.mlp.down_proj",
                 "model.layers.1.self_attn.o_proj", "model.layers.1.mlp.down_proj",
                 "model.norm"]  # fmt: skip
    with seeded_default_init(0):
        return cls(cfg), names


@pytest.mark.parametrize("family", ["gpt2", "qwen2"])
def test_corrections_on_gpt2_and_qwen2_decoders(family, tmp_path):
    """Issue 49: the correction sites, zero hooks and bias-only training beyond Llama."""
    model, expected = _tiny_decoder(family)
    model.save_pretrained(tmp_path)
    lm = load_causal_lm(tmp_path)
    ids = _ids()
    before = lm(ids).logits
    assert residual_write_modules(lm) == expected
    handle = add_correction_vectors(lm, residual_write_modules(lm))
    assert torch.equal(lm(ids).logits, before)  # zero corrections change nothing
    clf = LabelTokenClassifier(lm, [5, 6, 7])
    state = {k: v.clone() for k, v in clf.state_dict().items()}
    batch = {"input_ids": _ids(8), "attention_mask": torch.ones(8, 7, dtype=torch.long)}

    def perturb(b, rng):
        ids = b["input_ids"].clone()
        ids[:, 0] = torch.as_tensor(rng.integers(3, 40, ids.shape[0]))
        return {"input_ids": ids, "attention_mask": b["attention_mask"]}

    debias_finetune(clf, [batch], perturb, loss="kl", lr=1e-2, steps=3, params="bias")
    changed = {k for k, v in clf.state_dict().items() if not torch.equal(v, state[k])}
    assert changed and all(k.endswith(("bias", "debias_correction")) for k in changed)
    assert any(k.endswith("debias_correction") for k in changed)
    handle.remove()
