"""N6: coherence of the tokens the real MiniLM's largest effectors promote, against random
directions of the residual stream read the same way.

N6 is judged on each effector's margin coherence − 1.3 × (mean coherence of its layer's random
directions), with a bootstrap interval over the effectors; the control is random directions in
place of the effectors, whose margin is −0.3 × the random coherence.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from icml26.core import Claim, RunContext, check_fields, check_positive_int, register
from icml26.nana.experiments.common import PAPER, RESOURCES, WHERE, check_sizes


@dataclass(frozen=True)
class ReadoutConfig:
    n_effectors: int = 16  # the largest effectors of each layer
    top_tokens: int = 20
    n_random: int = 64  # random unit directions of the residual stream per layer
    layers: tuple[int, ...] = (0, 1, 2, 3, 4, 5)

    def __post_init__(self) -> None:
        check_fields(self)
        # MiniLM: 6 layers of d = 384 (effectors per layer), a vocabulary of 30,522
        check_sizes(
            self, {"n_effectors": (1, 384), "top_tokens": (2, 1000), "n_random": (1, 10**4)}
        )
        if not self.layers or len(set(self.layers)) != len(self.layers):
            raise ValueError("ReadoutConfig: layers must be distinct MiniLM layers in [0, 5].")
        for layer in self.layers:
            check_positive_int("layers", layer, owner="ReadoutConfig", minimum=0, maximum=5)


DEFAULT = ReadoutConfig()
PRESETS = {
    "smoke": replace(DEFAULT, n_effectors=4, n_random=4, layers=(5,)),  # seconds
    "quick": DEFAULT,
    "full": replace(DEFAULT, n_random=256),
}
RATIO = 1.3  # the spec's soft target
CLAIMS = (
    Claim(
        "N6",
        "MiniLM effector top-20 tokens are coherent: mean pairwise embedding cosine ≥ 1.3× that of "
        "random directions' top-20 (margin per effector against its layer's random directions, "
        "≥ 0)",
        "coherence_margin",
        ">=",
        0.0,
        "spec soft target: ≥ 1.3×",
        WHERE,
        source="spec",
        over="items",
        control="random unit directions in place of the effectors: margin −0.3 × their "
        "coherence, about −0.02",
        control_value=-0.02,
    ),
)


def coherence_margins(
    scores: list[float], random_scores: list[float], ratio: float = RATIO
) -> list[float]:
    """Each unit's coherence minus ``ratio`` × the mean coherence of random directions."""
    baseline = ratio * float(np.mean(random_scores))
    return [c - baseline for c in scores]


@register(
    name="nana.minilm_readout",
    title="N6: effector-token coherence of the real MiniLM weights vs random directions",
    paper=PAPER,
    claims=CLAIMS,
    presets=PRESETS,
    seeds=1,  # real weights; only the random directions are drawn
    resources=RESOURCES,
)
def minilm_readout(config: ReadoutConfig, ctx: RunContext) -> dict[str, Any]:
    from icml26.nana import (
        decompose_mlp,
        effector_tokens,
        from_hf_bert,
        load_minilm,
        random_effectors,
        token_coherence,
    )

    model, tokenizer = load_minilm()
    adapter = from_hf_bert(model)
    g = ctx.torch_generator("directions")  # one stream: fresh directions for every layer
    E = adapter.W_E
    deu_scores, random_scores, margins, examples = [], [], [], {}
    with ctx.progress(len(config.layers), "layers") as bar:
        for layer in config.layers:
            deus = decompose_mlp(adapter, layer, "out")
            readout = effector_tokens(
                deus, adapter, tokenizer, range(config.n_effectors), config.top_tokens, False
            )
            layer_scores = [token_coherence(r.top_ids, E) for r in readout]
            deu_scores += layer_scores
            examples[f"layer{layer}_unit0"] = readout[0].top_tokens[:10]
            random_units = random_effectors(
                config.n_random, adapter.d_model, layer=layer, seed=g, dtype=E.dtype
            )
            random_readout = effector_tokens(
                random_units, adapter, None, None, config.top_tokens, False
            )
            layer_random = [token_coherence(r.top_ids, E) for r in random_readout]
            random_scores += layer_random
            margins += coherence_margins(layer_scores, layer_random)
            bar.advance()
    return {
        "coherence_margin": margins,
        "coherence_ratio": float(np.mean(deu_scores) / np.mean(random_scores)),
        "coherence_deu": float(np.mean(deu_scores)),
        "coherence_random": float(np.mean(random_scores)),
        "examples": examples,
    }
