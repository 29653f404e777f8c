"""N5: how many units cover 80 % of the MLPs' direct effect on the target: DEUs vs neurons vs a
random basis of the same subspace, and the aggregated dominant pathway.

N5 is judged on each prompt's paired difference K_0.8(DEU) − K_0.8(random basis) (bootstrap
over prompts; a fresh random basis for every prompt), behind the stand-in's competence gate (T);
the control is a random basis in place of the DEUs, for which the difference is 0 on average.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from icml26.core import Claim, RunContext, check_in_interval, register
from icml26.nana.experiments.common import (
    FULL_STANDIN,
    PAPER,
    RESOURCES,
    SMOKE_STANDIN,
    TRAINING_GATE,
    WHERE,
    StandinConfig,
    check_sizes,
    corpus_missing,
    trained_standin,
    training_target_margins,
)


@dataclass(frozen=True)
class ConcentrationConfig(StandinConfig):
    n_prompts: int = 64
    prompt_len: int = 64
    coverage: float = 0.8

    def __post_init__(self) -> None:
        super().__post_init__()
        check_sizes(self, {"n_prompts": (1, 10**4), "prompt_len": (1, 128)})
        check_in_interval(
            "coverage",
            self.coverage,
            low=0.0,
            high=1.0,
            closed="right",
            owner="ConcentrationConfig",
        )


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
    TRAINING_GATE,
    Claim(
        "N5",
        "DEUs concentrate the MLPs' direct effect more than a random basis of the same subspace: "
        "paired K_0.8(DEU) − K_0.8(random basis) per prompt (all layers), < 0",
        "k_deu_minus_k_random",
        "<",
        0.0,
        "spec expectation: DEU ≤ random",
        WHERE,
        source="spec",
        over="items",
        control="a random orthonormal basis of the same subspace in place of the DEUs: "
        "difference 0",
        control_value=0.0,
    ),
)


@register(
    name="nana.concentration",
    title="N5: units needed to cover 80 % of the MLP direct effect: DEU vs neuron vs random basis",
    paper=PAPER,
    claims=CLAIMS,
    presets=PRESETS,
    data_check=corpus_missing,
    seeds=1,  # one model per run (quick: the shipped one); N5 and T are judged per prompt / window
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
    fixed = {"deu": deus, "neuron": {layer: neuron_basis(adapter, layer) for layer in layers}}
    rotations = ctx.torch_generator("rotations")  # a fresh random basis for every prompt, so
    # that the prompts are independent draws of the control too
    prompts, targets = next_token_prompts(
        s.val, config.n_prompts, config.prompt_len, seed=ctx.torch_generator("prompts")
    )
    sizes: dict[str, list[int]] = {name: [] for name in (*fixed, "random")}
    skipped = 0
    with ctx.progress(config.n_prompts, "prompts") as bar:
        for prompt, target in zip(prompts, targets.tolist(), strict=True):
            tokens = prompt[None]
            y = torch.full_like(tokens, target)
            cache = adapter.run_with_cache(tokens)
            bases = fixed | {
                "random": {layer: random_basis(deus[layer], seed=rotations) for layer in layers}
            }
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
    paired = [d - r for d, r in zip(sizes["deu"], sizes["random"], strict=True)]
    return {
        "k_deu_minus_k_random": [float(v) for v in paired] or [float("nan")],
        "train_target_margin": training_target_margins(s),
        "k_deu_over_k_random": mean_k["deu"] / mean_k["random"],
        "k_deu_over_k_neuron": mean_k["deu"] / mean_k["neuron"],
        **{f"mean_k_{name}": v for name, v in mean_k.items()},
        "prompts_used": float(len(sizes["deu"])),
        "prompts_skipped": float(skipped),
        "pathway_size": float(path.size),
        "pathway_units": [list(u) for u in path.units[:16]],
        "val_loss": s.val_loss,
    }
