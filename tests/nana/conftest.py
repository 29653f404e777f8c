"""Shared fixtures of the nana tests: one torch thread, small GPT-2 / BERT stand-ins in float64."""

import pytest
import torch

from icml26.core import seeded_default_init, torch_threads


@pytest.fixture(autouse=True)
def _one_thread():
    # Small SVDs and matmuls: two OpenMP threads on shared cores are many times slower.
    with torch_threads(1):
        yield


def make_gpt2(seed=0, *, n_embd=32, n_layer=2, n_head=4, vocab=97, perturb_ln=True):
    """A random GPT-2 whose LayerNorm affines are perturbed (so folding them matters)."""
    from transformers import GPT2Config, GPT2LMHeadModel

    cfg = GPT2Config(
        vocab_size=vocab,
        n_positions=32,
        n_embd=n_embd,
        n_layer=n_layer,
        n_head=n_head,
        bos_token_id=0,
        eos_token_id=0,
        resid_pdrop=0.0,
        embd_pdrop=0.0,
        attn_pdrop=0.0,
    )
    with seeded_default_init(seed):
        model = GPT2LMHeadModel(cfg).eval()
    g = torch.Generator().manual_seed(seed + 1)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if perturb_ln and ("ln_" in name):
                p.add_(0.3 * torch.randn(p.shape, generator=g))
            if name.endswith("bias") and "mlp" in name:
                p.add_(0.1 * torch.randn(p.shape, generator=g))
    return model


@pytest.fixture(scope="module")
def gpt2():
    return make_gpt2()


@pytest.fixture(scope="module")
def adapter(gpt2):
    from icml26.nana import from_hf_gpt2

    return from_hf_gpt2(gpt2)


@pytest.fixture(scope="module")
def tokens():
    return torch.randint(0, 97, (3, 12), generator=torch.Generator().manual_seed(5))


@pytest.fixture(scope="module")
def targets():
    return torch.randint(0, 97, (3, 12), generator=torch.Generator().manual_seed(6))


@pytest.fixture(scope="module")
def bert():
    from transformers import BertConfig, BertModel

    cfg = BertConfig(
        vocab_size=60,
        hidden_size=24,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=48,
        max_position_embeddings=32,
    )
    with seeded_default_init(3):
        return BertModel(cfg).eval()
