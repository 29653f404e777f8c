"""Spec §7 items 6-7: SCA and DLA identities, exact direct ablation, zero/null-space ablations."""

import pytest
import torch

from icml26.nana import (
    ablate,
    coverage_size,
    decompose_mlp,
    dla,
    dominant_pathway,
    mean_coefficients,
    neuron_basis,
    neuron_contributions,
    random_basis,
    subspace_contributions,
)


def test_all_component_dla_sums_to_the_logit(adapter, tokens, targets):
    parts = dla(adapter, tokens, targets)
    logits = adapter.logits(tokens).gather(-1, targets[..., None])[..., 0]
    assert torch.allclose(sum(parts.values()), logits, atol=1e-10)
    contrast = (targets + 1) % adapter.vocab_size
    diff = dla(adapter, tokens, targets, contrast)
    full = adapter.logits(tokens)
    ref = full.gather(-1, targets[..., None])[..., 0] - full.gather(-1, contrast[..., None])[..., 0]
    assert torch.allclose(sum(diff.values()), ref, atol=1e-10)


@pytest.mark.parametrize("basis", ["deu", "neuron", "random"])
def test_sca_rows_plus_bias_equal_the_mlp_dla(adapter, tokens, targets, basis):
    units = decompose_mlp(adapter, 1, "out")
    if basis == "neuron":
        units = neuron_basis(adapter, 1)
    elif basis == "random":
        units = random_basis(units, seed=0)
    sca = subspace_contributions(adapter, tokens, 1, targets, units)
    cache = adapter.run_with_cache(tokens)
    bias = (adapter.W_U.T[targets] @ adapter.mlp(1).b_out) / cache.sigma_f
    mlp_dla = dla(adapter, tokens, targets)["mlp1"]
    assert torch.allclose(sca.sum(-1) + bias, mlp_dla, atol=1e-10)


def test_neuron_contributions_match_a_direct_numpy_formula(adapter, tokens, targets):
    got = neuron_contributions(adapter, tokens[0], 0, targets[0])  # (T, d_mlp)
    cache = adapter.run_with_cache(tokens[0])
    a = cache.acts[0][0].numpy()
    W_out, w = adapter.mlp(0).W_out.numpy(), adapter.W_U.T[targets[0]].numpy()
    ref = a * (w @ W_out.T) / cache.sigma_f[0].numpy()[:, None]
    assert got.shape == (tokens.shape[1], adapter.d_mlp)
    assert torch.allclose(got, torch.from_numpy(ref), atol=1e-10)


def test_sca_is_invariant_to_unit_signs_up_to_the_unit_sign(adapter, tokens, targets):
    a = decompose_mlp(adapter, 1, "out", sign="vocab")
    b = decompose_mlp(adapter, 1, "out", sign="data", ref_tokens=tokens)
    sa = subspace_contributions(adapter, tokens, 1, targets, a)
    sb = subspace_contributions(adapter, tokens, 1, targets, b)
    assert torch.allclose(sa, sb, atol=1e-12)  # α_k v_k is sign-free, so is SCA


def test_direct_mean_ablation_changes_the_target_logit_by_minus_the_centred_sca(
    adapter, tokens, targets
):
    deus = decompose_mlp(adapter, 1, "out")
    means = mean_coefficients(adapter, tokens, {(1, "out"): deus})
    k = 3
    clean = adapter.logits(tokens)
    edited = ablate(adapter, tokens, [(1, "out", [k], "mean")], ref_means=means, effect="direct")
    cache = adapter.run_with_cache(tokens)
    cached = mean_coefficients(adapter, tokens, {(1, "out"): deus}, cache=cache)
    assert torch.equal(cached[(1, "out")], means[(1, "out")])  # one forward pass shared
    alpha = deus.coefficients(cache.acts[1])[..., k]
    w = adapter.W_U.T[targets]
    expected = -(alpha - means[(1, "out")][k]) * (w @ deus.effectors[k]) / cache.sigma_f
    got = (edited - clean).gather(-1, targets[..., None])[..., 0]
    assert torch.allclose(got, expected, atol=1e-10)


def test_total_zero_ablation_of_all_units_equals_replacing_the_mlp_by_its_bias(adapter, tokens):
    deus = decompose_mlp(adapter, 0, "out")
    edited = ablate(adapter, tokens, [(0, "out", range(deus.rank), "zero")], effect="total")
    block = adapter.model.transformer.h[0]
    hook = block.mlp.c_proj.register_forward_hook(lambda m, a, o: m.bias.expand_as(o))
    with torch.no_grad():
        ref = adapter.model(input_ids=tokens, use_cache=False).logits
    hook.remove()
    assert torch.allclose(edited.log_softmax(-1), ref.log_softmax(-1), atol=1e-10)


def test_total_and_direct_effects_agree_at_the_last_layer(adapter, tokens):
    # Nothing is downstream of the last MLP except LN_f: with σ_f frozen the two coincide
    # only in the centred direction; check that both move log-probs and the direct one is exact.
    last = adapter.n_layers - 1
    deus = decompose_mlp(adapter, last, "out")
    means = mean_coefficients(adapter, tokens, {(last, "out"): deus})
    edits = [(last, "out", [0, 1], "mean")]
    direct = ablate(adapter, tokens, edits, ref_means=means, effect="direct")
    total = ablate(adapter, tokens, edits, ref_means=means, effect="total")
    cache = adapter.run_with_cache(tokens)
    delta = (
        -(deus.coefficients(cache.acts[last])[..., :2] - means[(last, "out")][:2])
        @ (deus.effectors[:2])
    )
    resid = cache.resid_final + delta
    expected, _ = adapter.unembed(resid)
    assert torch.allclose(total, expected, atol=1e-9)
    assert not torch.allclose(direct, adapter.logits(tokens))


def test_null_space_edit_changes_nothing(adapter, tokens):
    deus = decompose_mlp(adapter, 0, "out")
    # a hidden direction orthogonal to every detector u_k: W_outᵀ maps it to zero
    g = torch.Generator().manual_seed(0)
    h = torch.randn(adapter.d_mlp, generator=g, dtype=torch.float64)
    h = h - deus.detectors.T @ (deus.detectors @ h)
    assert float((h @ adapter.mlp(0).W_out).abs().max()) < 1e-10
    clean = adapter.logits(tokens)

    def edit(acts, out):
        return out + (5.0 * h @ adapter.model.transformer.h[0].mlp.c_proj.weight)

    edited = adapter.logits(tokens, write_edits={0: edit})
    # raw W_out maps h to a multiple of the all-ones vector, which every LayerNorm removes
    assert torch.allclose(edited.log_softmax(-1), clean.log_softmax(-1), atol=1e-9)


def test_read_side_direct_ablation_reruns_the_mlp_exactly(adapter, tokens, targets):
    units = decompose_mlp(adapter, 0, "in")
    direct = ablate(adapter, tokens, [(0, "in", [0, 2], "zero")], effect="direct")
    cache = adapter.run_with_cache(tokens)
    w = adapter.mlp(0)
    pre = cache.normed[0] @ w.W_in + w.b_in
    sel = units.select([0, 2])
    pre_edit = pre - sel.coefficients(cache.normed[0]) @ sel.effectors
    act = adapter.model.transformer.h[0].mlp.act
    delta = (act(pre_edit) - act(pre)) @ w.W_out
    expected = cache.logits + (delta / cache.sigma_f[..., None]) @ adapter.W_U
    assert torch.allclose(direct, expected, atol=1e-10)


def test_coverage_size_and_dominant_pathway(adapter, tokens):
    assert coverage_size(torch.tensor([1.0, 1.0, 1.0, 1.0]), 0.5) == 2
    assert coverage_size(torch.tensor([4.0, -1.0, 0.5]), 1.0) == 1  # 4 ≥ 3.5
    assert coverage_size(torch.tensor([-1.0, -2.0]), 0.8) == 2
    prompts = [tokens[0], tokens[1, :8]]
    path = dominant_pathway(adapter, prompts, [5, 7], coverage=0.8)
    assert path.size >= 1 and path.covered >= 0.8 - 1e-12
    assert path.contributions == sorted(path.contributions, reverse=True)
    full = dominant_pathway(adapter, prompts, [5, 7], coverage=1.0)
    assert full.size >= path.size


def test_sca_identity_error_is_round_off_and_refuses_bert(adapter, tokens, targets, bert):
    from icml26.nana import from_hf_bert, sca_identity_error

    assert sca_identity_error(adapter, tokens, targets) < 1e-12  # float64 throughout
    with pytest.raises(ValueError, match="LM head"):
        sca_identity_error(from_hf_bert(bert), tokens[:, :4] % 60, targets[:, :4] % 60)
