"""Spec §7 item 8: planted recovery, and readouts (an effector equal to W_U[:, t] reads t)."""

import torch

from icml26.nana import (
    decompose_mlp,
    detector_tokens,
    deu_set_from_matrix,
    effector_tokens,
    from_hf_gpt2,
    planted_mlp,
    subspace_contributions,
    token_coherence,
    top_activating_contexts,
)


def test_planted_units_are_recovered_and_read_out():
    p = planted_mlp(seed=3)
    ad = from_hf_gpt2(p.model)
    deus = decompose_mlp(ad, 0, "out")
    # noise 1e-3 against σ gaps ≥ 0.4: first-order angle ~ 1e-3 / 0.4, so cos ≥ 1 - 1e-5
    assert float((deus.effectors[:8] * p.v).sum(1).abs().min()) > 0.999
    assert float((deus.detectors[:8] * p.u).sum(1).abs().min()) > 0.999
    assert torch.allclose(deus.sigmas[:8], p.sigmas, rtol=1e-2)
    tokens, units = p.crafted_inputs(6, 8, seed=1)
    sca = subspace_contributions(ad, tokens, 0, p.designated[units, 0], deus)
    assert torch.equal(sca.argmax(-1), units)
    for k, readout in enumerate(effector_tokens(deus, ad, None, range(8), top=5)):
        assert readout.top_ids == p.designated[k].tolist()  # in the designated order
        assert len(readout.bottom_ids) == 5


def test_an_effector_equal_to_an_unembedding_column_reads_that_token(adapter):
    t = 11
    column = adapter.W_U[:, t] / adapter.W_U[:, t].norm()
    # a rank-1 W_out writing exactly W_U[:, t]
    W = torch.zeros(adapter.d_mlp, adapter.d_model, dtype=torch.float64)
    W[0] = column
    units = deu_set_from_matrix(W, torch.zeros(adapter.d_model, dtype=torch.float64))
    units = units.__class__(
        0,
        "out",
        units.detectors,
        units.sigmas,
        units.effectors * torch.sign(units.effectors @ column)[:, None],
        units.bias,
    )
    assert effector_tokens(units, adapter, None, [0], top=1)[0].top_ids == [t]


def test_detector_tokens_at_layer_zero_read_the_embedding(adapter):
    units = decompose_mlp(adapter, 0, "in")
    got = detector_tokens(units, adapter, None, [0], top=3)[0]
    scores = adapter.W_E @ units.detectors[0]
    assert got.top_ids == torch.topk(scores, 3).indices.tolist()
    lens = detector_tokens(units, adapter, None, [0], top=3, lens="unembed")[0]
    assert lens.top_ids == torch.topk(units.detectors[0] @ adapter.W_U, 3).indices.tolist()


def test_top_activating_contexts_are_the_largest_coefficients(adapter, tokens):
    units = decompose_mlp(adapter, 1, "out")
    contexts = top_activating_contexts(units, adapter, tokens, [2], top=4, window=3)[2]
    alpha = units.coefficients(adapter.run_with_cache(tokens).acts[1])[..., 2]
    assert [c.alpha for c in contexts] == sorted(alpha.reshape(-1).tolist(), reverse=True)[:4]
    best = contexts[0]
    assert (
        best.token_ids
        == tokens[best.sequence, max(0, best.position - 2) : best.position + 1].tolist()
    )


def test_token_coherence_is_the_mean_off_diagonal_cosine():
    E = torch.tensor([[1.0, 0.0], [1.0, 1.0], [0.0, 2.0]], dtype=torch.float64)
    c = 2**-0.5
    assert abs(token_coherence([0, 1, 2], E) - (c + 0.0 + c) / 3) < 1e-12


def test_planted_experiment_is_reproducible_from_the_context():
    from icml26.core import RunContext
    from icml26.nana.experiments.planted import PRESETS, planted

    a = planted(PRESETS["smoke"], RunContext(seed=3))
    b = planted(PRESETS["smoke"], RunContext(seed=3))
    assert a == b and a["sca_top1_rate"] == 1.0
