"""Spec §7 item 5 (weight processing) and the real paths: load_gpt2, BERT / MiniLM adapters."""

import pytest
import torch

from icml26.nana import decompose_mlp, from_hf_bert, from_hf_gpt2, load_gpt2, load_minilm

from .conftest import make_gpt2


def test_processing_leaves_log_softmax_unchanged_and_shifts_logits_per_position(
    gpt2, adapter, tokens
):
    ours = adapter.logits(tokens)
    with torch.no_grad():
        ref = adapter.model(input_ids=tokens, use_cache=False).logits  # float64 copy of gpt2
    # float64 throughout: agreement to round-off, far inside the spec's 1e-4
    assert float((ours.log_softmax(-1) - ref.log_softmax(-1)).abs().max()) < 1e-10
    shift = ours - ref
    assert float((shift - shift.mean(-1, keepdim=True)).abs().max()) < 1e-10
    # the float32 model itself agrees to float32 round-off
    with torch.no_grad():
        ref32 = gpt2(input_ids=tokens).logits.double()
    assert float((ours.log_softmax(-1) - ref32.log_softmax(-1)).abs().max()) < 1e-4


def test_folded_w_in_on_normalised_input_gives_the_original_pre_activations(gpt2, adapter, tokens):
    cache = adapter.run_with_cache(tokens)
    for layer, block in enumerate(adapter.model.transformer.h):
        w = adapter.mlp(layer)
        ours = cache.normed[layer] @ w.W_in + w.b_in
        # independent reference: the model's own LN₂ and c_fc on the residual stream
        resid = {}

        def grab(module, args, resid=resid):
            resid["x"] = args[0]

        hook = block.ln_2.register_forward_pre_hook(grab)
        with torch.no_grad():
            adapter.model(input_ids=tokens, use_cache=False)
        hook.remove()
        with torch.no_grad():
            ref = block.mlp.c_fc(block.ln_2(resid["x"]))
        assert torch.allclose(ours, ref, atol=1e-10)
        assert torch.allclose(
            w.W_in.mean(0), torch.zeros(adapter.d_mlp, dtype=torch.float64), atol=1e-12
        )
        assert torch.allclose(
            w.W_out.mean(1), torch.zeros(adapter.d_mlp, dtype=torch.float64), atol=1e-12
        )


def test_raw_adapter_keeps_hf_logits_and_weights(gpt2, tokens):
    raw = from_hf_gpt2(gpt2, processed=False)
    with torch.no_grad():
        ref = raw.model(input_ids=tokens, use_cache=False).logits
    assert torch.allclose(raw.logits(tokens), ref, atol=1e-10)
    assert torch.equal(raw.mlp(0).W_out, gpt2.transformer.h[0].mlp.c_proj.weight.double())


def test_float32_adapter_shares_the_model_and_float64_copies_it(gpt2):
    assert from_hf_gpt2(gpt2, dtype=torch.float32).model is gpt2
    ad = from_hf_gpt2(gpt2)
    assert ad.model is not gpt2 and next(gpt2.parameters()).dtype == torch.float32


def test_the_float64_copy_runs_torch_s_fused_gelu_with_hf_s_logits(gpt2, tokens):
    import copy

    from transformers.activations import NewGELUActivation

    ad = from_hf_gpt2(gpt2, processed=False)
    assert isinstance(ad.model.transformer.h[0].mlp.act, torch.nn.GELU)
    assert isinstance(gpt2.transformer.h[0].mlp.act, NewGELUActivation)  # the caller's stays
    hf64 = copy.deepcopy(gpt2).double()  # HF's own gelu_new in float64
    with torch.no_grad():
        ref = hf64(input_ids=tokens).logits
    assert float((ad.logits(tokens) - ref).abs().max()) < 1e-12


def test_load_gpt2_reads_a_saved_folder_with_identical_logits(tmp_path, tokens):
    model = make_gpt2(4)
    model.save_pretrained(tmp_path)
    loaded = load_gpt2(tmp_path)
    with torch.no_grad():
        assert torch.equal(loaded(input_ids=tokens).logits, model(input_ids=tokens).logits)
    a, b = from_hf_gpt2(model), from_hf_gpt2(loaded)
    assert torch.equal(decompose_mlp(a, 1).effectors, decompose_mlp(b, 1).effectors)


def test_load_gpt2_does_not_download_by_default(tmp_path):
    with pytest.raises(OSError):
        load_gpt2(tmp_path / "no-such-model")


def test_bert_adapter_reconstructs_the_output_dense_layer(bert):
    ad = from_hf_bert(bert)
    tokens = torch.randint(0, 60, (2, 10), generator=torch.Generator().manual_seed(0))
    outs, ins = {}, {}
    layer = ad.model.encoder.layer[1]

    def grab_out(module, args, out):
        outs["o"] = (args[0], out)

    def grab_in(module, args, out):
        ins["i"] = (args[0], out)

    h1 = layer.output.dense.register_forward_hook(grab_out)
    h2 = layer.intermediate.dense.register_forward_hook(grab_in)
    with torch.no_grad():
        ad.model(input_ids=tokens)
    h1.remove()
    h2.remove()
    acts, out = outs["o"]
    x, pre = ins["i"]
    assert torch.allclose(decompose_mlp(ad, 1, "out").reconstruct(acts), out, atol=1e-12)
    assert torch.allclose(decompose_mlp(ad, 1, "in").reconstruct(x), pre, atol=1e-12)
    assert torch.equal(ad.W_U, ad.W_E.T) and not ad.has_lm_head


def test_real_minilm_weights_decompose_exactly():
    model, tokenizer = load_minilm()
    ad = from_hf_bert(model)
    assert (ad.n_layers, ad.d_model, ad.d_mlp, ad.vocab_size) == (6, 384, 1536, 30522)
    tokens = tokenizer(["Fair is foul, and foul is fair."], return_tensors="pt")["input_ids"]
    cache = ad.run_with_cache(tokens)
    deus = decompose_mlp(ad, 5, "out")
    err = (deus.reconstruct(cache.acts[5]) - cache.mlp_out[5]).norm() / cache.mlp_out[5].norm()
    assert float(err) < 1e-12  # float64 SVD of the real weights


def test_processing_logsoftmax_error_is_round_off(adapter, tokens):
    from icml26.nana import processing_logsoftmax_error

    assert processing_logsoftmax_error(adapter, tokens) < 1e-10  # float64: as above
    with pytest.raises(TypeError, match="adapter"):
        processing_logsoftmax_error(None, tokens)
