"""N5: how many units cover 80 % of the MLPs' direct effect on the target: DEUs vs neurons vs a
random basis of the same subspace, and the aggregated dominant pathway."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from icml26.core import Claim, RunContext, register
from icml26.nana.experiments.common import (
    FULL_STANDIN,
    PAPER,
    RESOURCES,
    SMOKE_STANDIN,
    WHERE,
    StandinConfig,
    corpus_missing,
    trained_standin,
)


@dataclass(frozen=True)
class ConcentrationConfig(StandinConfig):
    n_prompts: int = 64
    prompt_len: int = 64
    coverage: float = 0.8


DEFAULT = ConcentrationConfig()
PRESETS = {
    "smoke": replace(  # seconds: a barely trained model; the expectation may fail
        DEFAULT,
        **SMOKE_STANDIN,
        batch_size=4,
        train_steps=3,
        n_prompts=4,
        prompt_len=16,
    ),
    "quick": DEFAULT,
    "full": replace(
        DEFAULT,
        **FULL_STANDIN,
        n_prompts=200,
    ),
}
CLAIMS = (
    Claim(
        "N5",
        "DEUs concentrate the MLPs' direct effect: K_0.8(DEU) / K_0.8(random basis of the same "
        "subspace) ≤ 1 (mean over prompts, all layers)",
        "k_deu_over_k_random",
        "<=",
        1.0,
        "spec expectation: DEU ≤ random",
        WHERE,
        source="spec",
    ),
)


@register(
    name="nana.concentration",
    title="N5: units needed to cover 80 % of the MLP direct effect: DEU vs neuron vs random basis",
    paper=PAPER,
    claims=CLAIMS,
    presets=PRESETS,
    data_check=corpus_missing,
    seeds=1,  # one trained model per run
    resources=RESOURCES,
)
def concentration(config: ConcentrationConfig, ctx: RunContext) -> dict[str, Any]:
    import torch

    from icml26.nana import (
        coverage_size,
        decompose_mlp,
        dominant_pathway,
        from_hf_gpt2,
        neuron_basis,
        next_token_prompts,
        random_basis,
        subspace_contributions,
    )

    s = trained_standin(config, ctx)
    adapter = from_hf_gpt2(s.model)
    layers = range(adapter.n_layers)
    deus = {layer: decompose_mlp(adapter, layer, "out") for layer in layers}
    bases = {
        "deu": deus,
        "neuron": {layer: neuron_basis(adapter, layer) for layer in layers},
        "random": {
            layer: random_basis(deus[layer], seed=ctx.torch_generator(f"rot{layer}"))
            for layer in layers
        },
    }
    prompts, targets = next_token_prompts(
        s.val, config.n_prompts, config.prompt_len, seed=ctx.torch_generator("prompts")
    )
    sizes: dict[str, list[int]] = {name: [] for name in bases}
    skipped = 0
    with ctx.progress(config.n_prompts, "prompts") as bar:
        for prompt, target in zip(prompts, targets.tolist(), strict=True):
            tokens = prompt[None]
            y = torch.full_like(tokens, target)
            cache = adapter.run_with_cache(tokens)
            contributions = {
                name: torch.cat(
                    [
                        subspace_contributions(adapter, tokens, l_, y, basis[l_], cache=cache)[
                            0, -1
                        ]
                        for l_ in layers
                    ]
                )
                for name, basis in bases.items()
            }
            if float(contributions["deu"].sum()) <= 0:  # MLPs push away from y: nothing to cover
                skipped += 1
            else:
                for name, values in contributions.items():
                    sizes[name].append(coverage_size(values, config.coverage))
            bar.advance()
    mean_k = {name: float(np.mean(v)) if v else float("nan") for name, v in sizes.items()}
    path = dominant_pathway(
        adapter,
        list(prompts),
        targets,
        config.coverage,
        deus={(layer, "out"): deus[layer] for layer in layers},
    )
    return {
        "k_deu_over_k_random": mean_k["deu"] / mean_k["random"],
        "k_deu_over_k_neuron": mean_k["deu"] / mean_k["neuron"],
        **{f"mean_k_{name}": v for name, v in mean_k.items()},
        "prompts_used": float(len(sizes["deu"])),
        "prompts_skipped": float(skipped),
        "pathway_size": float(path.size),
        "pathway_units": [list(u) for u in path.units[:16]],
        "val_loss": s.val_loss,
    }
