"""Standard tool and real path: HybridLM through Hugging Face's PreTrainedModel / Auto* API."""

import pytest
import torch
from transformers import AutoConfig, AutoModelForCausalLM

from icml26.hybrid_seq import (
    MQAR,
    HybridLM,
    HybridLMConfig,
    HybridLMForCausalLM,
    TrainConfig,
    train,
)


def test_save_pretrained_then_auto_from_pretrained_gives_the_same_model(tmp_path):
    task = MQAR(L=16, n_kv=2, n_keys=8, n_values=8, n_fillers=4)
    model = HybridLM(task.vocab_size, 16, pattern="SA", n_heads=2, seed=0)
    train(model, task, TrainConfig(steps=3, lr=1e-3, batch_size=4, warmup=1))
    wrapped = HybridLMForCausalLM.from_hybrid_lm(model)
    wrapped.save_pretrained(tmp_path)
    assert (tmp_path / "model.safetensors").is_file()
    assert AutoConfig.from_pretrained(tmp_path).pattern == "SA"
    loaded = AutoModelForCausalLM.from_pretrained(tmp_path)
    assert isinstance(loaded, HybridLMForCausalLM)
    batch = task.sample(4, generator=1)
    with torch.no_grad():
        assert torch.equal(loaded(input_ids=batch.inputs).logits, model(batch.inputs))


def test_loss_is_the_shifted_next_token_cross_entropy():
    lm = HybridLMForCausalLM(HybridLMConfig(vocab_size=13, d_model=8, n_heads=1, pattern="AS"))
    ids = torch.randint(0, 13, (2, 9), generator=torch.Generator().manual_seed(0))
    labels = ids.clone()
    labels[0, 4] = -100
    out = lm(input_ids=ids, labels=labels)
    logp = torch.log_softmax(out.logits[:, :-1], dim=-1)
    picked = logp.gather(-1, ids[:, 1:, None])[..., 0]
    keep = labels[:, 1:] != -100
    torch.testing.assert_close(out.loss, -(picked[keep]).mean(), rtol=0, atol=1e-6)


def test_hf_wrapper_rejects_bad_input():
    lm = HybridLMForCausalLM(HybridLMConfig(vocab_size=10, d_model=8, n_heads=1))
    with pytest.raises(ValueError, match=r"input_ids must be in \[0, 9\]"):
        lm(input_ids=torch.tensor([[1, 10]]))
    with pytest.raises(ValueError, match="attention_mask must be all ones"):
        lm(input_ids=torch.tensor([[1, 2]]), attention_mask=torch.tensor([[1, 0]]))
    with pytest.raises(ValueError, match="pattern must be a non-empty string"):
        HybridLMConfig(vocab_size=10, d_model=8, pattern="").build()


def test_hf_generate_is_greedy_decoding_of_the_wrapped_model():
    """Issue 49: transformers' own generate() entry point works on the wrapper; greedy output
    equals the argmax loop over the full prefix, and HybridLM.generate (which streams through
    the recurrent state) agrees where no argmax is id 0."""
    lm = HybridLMForCausalLM(HybridLMConfig(vocab_size=20, d_model=16, n_heads=1)).eval()
    ids = torch.tensor([[3, 5, 7]])
    out = lm.generate(ids, max_new_tokens=5, do_sample=False)
    seq = ids
    for _ in range(5):
        seq = torch.cat([seq, lm(input_ids=seq).logits[:, -1].argmax(-1, keepdim=True)], dim=1)
    assert torch.equal(out, seq)
    if (seq[:, 3:] > 0).all():
        assert torch.equal(lm.model.generate(ids, 5), seq)
