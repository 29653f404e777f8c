"""``scale.reach_v1`` and ``scale.reach_v1_ablations``: SCALE on AmbiguousReach2D-v1 (issue 41).

Three behaviour-cloned TinyOpenVLA policies (SigLIP + MLP projector + Llama, the shipped
``reach_v1_film_s0..2``: egocentric view, instruction-FiLM stem) are the three seeds: seed index
i evaluates policy i, so every interval is a hierarchical bootstrap over policies, then paired
episodes (every decoder runs the same episodes). The quick presets evaluate the shipped policies
on the ID split (60 / 40 episodes per policy); the full presets run the three splits with 500
episodes each. Each policy is evaluated in the view it was trained on (:func:`policy_view`: the
recipe's ``view``), so ``--set 'policies=[reach_v1_s0,reach_v1_s1,reach_v1_s2]'`` reruns the
first, allocentric v1 policies (which fail gate G1) on allocentric episodes.

Gates, decided without SCALE's success (issue 41): the expert solves the episodes (E1); greedy is
competent and leaves room (G1, G2: 35-80 %); u ranks the tokens where greedy is far from the
expert (G3: AUROC >= 0.70, per policy); a useful share of SCALE's tokens get a temperature
between 0.05 and 0.95 (G4: 10-60 %, per policy); and Best-of-4 with an oracle progress verifier
beats greedy by >= 10 points (G5: better actions exist in the policy's own distribution; main
experiment only). Claims: the headline S1 at the paper's +5.8 points, the small-scale bar +3
(S1a), and the control C1: SCALE must beat the same temperatures drawn independently of the
uncertainty ("shuffled tau") by >= 2 points. The ablation experiment holds S2 (SCALE vs the best
of greedy and the fixed samplers after a temperature sweep), S3 (each component vs greedy, both
vs the better component) and A2 (Δu vs the instantaneous u driving the vision temperature).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from icml26.core import Resources, RunContext, Table, register
from icml26.scale.experiments.checks import check_int_fields, check_names
from icml26.scale.experiments.common import PAPER
from icml26.scale.experiments.v1_claims import ABLATION_CLAIMS, MAIN_CLAIMS

# icml26.scale.POLICIES_V1 (not imported: importing the experiments stays light)
POLICIES = ("reach_v1_film_s0", "reach_v1_film_s1", "reach_v1_film_s2")
POLICIES_ALLOCENTRIC = ("reach_v1_s0", "reach_v1_s1", "reach_v1_s2")  # the first v1 policies
SPLITS = ("id", "ood_hue", "ood_noise")
SWEEP = ("temp_0.3", "temp_0.6", "temp_1.0", "top_k", "top_p")
COMPONENTS = ("scale_action_only", "scale_vision_only")
MAIN = ("greedy", "scale", "shuffled_tau", "bon_oracle")
ABLATION = ("greedy", "scale", *SWEEP, *COMPONENTS, "scale_instantaneous")
DECODERS = (*MAIN, *SWEEP, *COMPONENTS, "scale_instantaneous")
TAU_BAND = (0.05, 0.95)


@dataclass(frozen=True)
class ReachV1Config:
    """What a v1 run evaluates.

    Parameters
    ----------
    policies
        Shipped policy names or checkpoint stems; seed index i evaluates ``policies[i % n]``.
    episodes
        Episodes per split and policy, in [1, 10000] (every decoder runs the same ones).
    splits
        Non-empty subset of ``("id", "ood_hue", "ood_noise")``.
    decoders
        Non-empty subset of :data:`DECODERS`, with ``"greedy"`` and ``"scale"``
        (``"shuffled_tau"`` needs ``"scale"`` first: it reuses SCALE's temperatures).
    best_of
        Candidates of ``bon_oracle``, in [1, 64].
    expert_episodes
        Episodes of the scripted expert per split, in [1, 10000].
    """

    policies: tuple[str, ...] = POLICIES
    episodes: int = 500
    splits: tuple[str, ...] = SPLITS
    decoders: tuple[str, ...] = MAIN
    best_of: int = 4
    expert_episodes: int = 100

    def __post_init__(self) -> None:
        check_names(self, "splits", SPLITS)
        check_names(self, "decoders", DECODERS)
        policies = self.policies
        if isinstance(policies, list):
            policies = tuple(policies)
            object.__setattr__(self, "policies", policies)
        if (
            not isinstance(policies, tuple)
            or not 1 <= len(policies) <= 64
            or not all(isinstance(p, str) and p for p in policies)
        ):
            raise ValueError(
                f"ReachV1Config: policies must be 1 to 64 non-empty names; got {policies!r}."
            )
        if not {"greedy", "scale"} <= set(self.decoders):
            raise ValueError("ReachV1Config: decoders must include 'greedy' and 'scale'.")
        check_int_fields(self, {"episodes": (1, 10_000), "best_of": (1, 64),
                                "expert_episodes": (1, 10_000)})  # fmt: skip


MAIN_DEFAULT = ReachV1Config()
MAIN_PRESETS = {
    "smoke": replace(MAIN_DEFAULT, episodes=4, splits=("id",), expert_episodes=4),
    # the shipped policies on the ID split, 60 episodes each: paired over 3 x 60 episodes
    "quick": replace(MAIN_DEFAULT, episodes=60, splits=("id",), expert_episodes=50),
    "full": MAIN_DEFAULT,
}
ABLATION_DEFAULT = replace(MAIN_DEFAULT, decoders=ABLATION)
ABLATION_PRESETS = {
    "smoke": replace(MAIN_PRESETS["smoke"], decoders=ABLATION),
    "quick": replace(MAIN_PRESETS["quick"], decoders=ABLATION, episodes=40),
    "full": ABLATION_DEFAULT,
}


def make_v1_decoder(name: str, seed: Any, best_of: int = 4, pools: Any = None):
    """The v1 decoders by name (paper hyper-parameters; ``temp_T`` is temperature T)."""
    from icml26.scale import (
        BestOfN,
        OracleVerifier,
        ShuffledTauDecoder,
        TemperatureDecoder,
        make_decoder,
    )

    if name.startswith("temp_"):
        return TemperatureDecoder(float(name[5:]), seed=seed)
    if name == "bon_oracle":
        return BestOfN(OracleVerifier(), n=best_of, seed=seed)
    if name == "shuffled_tau":
        return ShuffledTauDecoder(pools, seed=seed)
    return make_decoder(name, seed=seed)


_POLICY_CACHE: dict[str, Any] = {}


def _policy(name: str) -> tuple[Any, dict[str, Any]]:
    """A shipped policy, loaded once per process (several tasks evaluate it)."""
    from icml26.scale import load_policy

    if name not in _POLICY_CACHE:
        _POLICY_CACHE[name] = load_policy(name)
    return _POLICY_CACHE[name]


def _seed_index(experiment: str, config: ReachV1Config, ctx: RunContext) -> int:
    """The task's seed index (the runner derives ``ctx.seed`` from it); else seed mod n."""
    from icml26.core.runner import derive_seed

    for index in range(256):
        if derive_seed(experiment, config, index) == ctx.seed:
            return index
    return ctx.seed % len(config.policies)


def auroc(scores: np.ndarray, labels: np.ndarray) -> float:
    """Area under the ROC curve of ``scores`` for the boolean ``labels`` (ties averaged).

    Examples
    --------
    >>> auroc(np.array([0.1, 0.9, 0.5]), np.array([False, True, False]))
    1.0
    """
    from scipy.stats import rankdata

    labels = np.asarray(labels, dtype=bool)
    n_pos, n_neg = int(labels.sum()), int((~labels).sum())
    if n_pos == 0 or n_neg == 0:
        return float("nan")
    ranks = rankdata(scores)
    return float((ranks[labels].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))


def _gap(out: dict[str, Any], a: str, b: str, splits) -> list[float]:
    """Per-episode paired differences a - b in points, pooled over the splits."""
    return [
        100.0 * (x - y)
        for s in splits
        for x, y in zip(out[f"ep_{s}_{a}"], out[f"ep_{s}_{b}"], strict=True)
    ]


def _gap_to_best(out: dict[str, Any], a: str, others, splits, pick=max) -> list[float]:
    """Paired differences ``a`` minus the ``pick`` (by mean) of ``others``; [] if not all ran."""
    if not all(f"ep_{splits[0]}_{n}" in out for n in (a, *others)):
        return []
    chosen = pick(others, key=lambda n: np.mean([out[f"sr_{s}_{n}"] for s in splits]))
    return _gap(out, a, chosen, splits)


def run_v1(experiment: str, config: ReachV1Config, ctx: RunContext) -> dict[str, Any]:
    """Evaluate every decoder of ``config`` with this seed's policy on common episodes."""
    import torch

    from icml26.scale import (
        AmbiguousReach2DV1Env,
        SharedPrefixAdapter,
        TinyVLAAdapter,
        evaluate_many,
        policy_view,
    )
    from icml26.scale.evaluation import expert_episode_success

    index = _seed_index(experiment, config, ctx)
    name = config.policies[index % len(config.policies)]
    model, meta = _policy(name)
    adapter = TinyVLAAdapter(model)
    eval_seed = index  # the same episodes for every decoder (and every experiment)
    out: dict[str, Any] = {"policy": name, "policy_index": index}
    out["final_bc_loss"] = float(meta["metrics"]["final_bc_loss"])
    passes: dict[str, float] = {}
    tokens: dict[str, dict[str, list[np.ndarray]]] = {"greedy": {}, "scale": {}}
    # the decoders of the shared loop run in one lock-step batch; Best-of-N and shuffled tau
    # (which needs SCALE's temperatures first) decode their own way, each in a batch of its own
    alone = ("bon_oracle", "shuffled_tau")
    groups = [[d for d in config.decoders if d not in alone]]
    groups += [[d] for d in alone if d in config.decoders]
    with ctx.progress(len(config.splits) * (len(groups) + 1), "decoder groups x splits") as bar:
        for split in config.splits:
            env = AmbiguousReach2DV1Env(split, view=policy_view(meta))
            for group in groups:
                pools = None
                if group == ["shuffled_tau"]:  # SCALE's temperatures on this split, per token
                    tau = tokens["scale"]["tau"][-1]
                    pools = [tau[:, k] for k in range(tau.shape[1])]
                decoders = [make_v1_decoder(d, ctx.torch_generator(f"{d}|{split}"),
                                            config.best_of, pools) for d in group]  # fmt: skip
                oracle = bool({"greedy", "scale", "bon_oracle"} & set(group))
                # Best-of-N's candidates share their identical prefix pass (same draws)
                shared = SharedPrefixAdapter(model) if group == ["bon_oracle"] else adapter
                with torch.no_grad():
                    results = evaluate_many(
                        decoders, env, config.episodes, [eval_seed], shared, oracle
                    )
                for d, result in zip(group, results, strict=True):
                    out[f"ep_{split}_{d}"] = result.episode_success[0].tolist()
                    out[f"sr_{split}_{d}"] = result.mean
                    passes[d] = result.forward_passes_per_step
                    if d in tokens:
                        record = tokens[d]
                        record.setdefault("u", []).append(result.token_u)
                        record.setdefault("tau", []).append(result.token_tau)
                        record.setdefault("error", []).append(result.token_error)
                bar.advance()
            wins = expert_episode_success(env, config.expert_episodes, eval_seed)
            out[f"expert_{split}"] = wins.tolist()
            bar.advance()
    splits = config.splits
    worst = min(splits, key=lambda s: np.mean(out[f"expert_{s}"]))
    out["expert_worst_split_episodes"] = out[f"expert_{worst}"]
    out["greedy_episodes"] = [x for s in splits for x in out[f"ep_{s}_greedy"]]
    greedy_u = np.concatenate(tokens["greedy"]["u"])
    greedy_error = np.concatenate(tokens["greedy"]["error"])
    out["u_error_auroc"] = auroc(greedy_u.ravel(), greedy_error.ravel())
    out["greedy_token_error_rate"] = float(greedy_error.mean())
    tau = np.concatenate(tokens["scale"]["tau"])
    out["tau_mid_share"] = float(((tau > TAU_BAND[0]) & (tau < TAU_BAND[1])).mean())
    out["scale_mean_tau_per_dim"] = tau.mean(axis=0).tolist()
    for d in config.decoders:
        out[f"sr_mean_{d}"] = float(np.mean([out[f"sr_{s}_{d}"] for s in splits]))
    out["scale_minus_greedy_pt"] = _gap(out, "scale", "greedy", splits)
    out["forward_pass_gap"] = abs(passes["scale"] - passes["greedy"])
    if "shuffled_tau" in config.decoders:
        out["scale_minus_shuffled_tau_pt"] = _gap(out, "scale", "shuffled_tau", splits)
    if "bon_oracle" in config.decoders:
        out["bon_minus_greedy_pt"] = _gap(out, "bon_oracle", "greedy", splits)
    if set(SWEEP) <= set(config.decoders):
        out["scale_minus_best_fixed_pt"] = _gap_to_best(out, "scale", ("greedy", *SWEEP), splits)
    if set(COMPONENTS) <= set(config.decoders):
        out["action_only_minus_greedy_pt"] = _gap(out, "scale_action_only", "greedy", splits)
        out["vision_only_minus_greedy_pt"] = _gap(out, "scale_vision_only", "greedy", splits)
        out["scale_minus_best_component_pt"] = _gap_to_best(out, "scale", COMPONENTS, splits)
    if "scale_instantaneous" in config.decoders:
        out["scale_minus_instantaneous_pt"] = _gap(out, "scale", "scale_instantaneous", splits)
    return out


def v1_tables(metrics: list[dict[str, Any]], config: ReachV1Config) -> list[Table]:
    def cell(key: str) -> str:
        values = [100.0 * m[key] for m in metrics if key in m]
        return f"{np.mean(values):.1f} ({', '.join(f'{v:.0f}' for v in values)})"

    rows = [[d, *(cell(f"sr_{s}_{d}") for s in config.splits), cell(f"sr_mean_{d}")]
            for d in config.decoders]  # fmt: skip
    testbed = [
        [m["policy"], f"{m['final_bc_loss']:.3f}", f"{m['u_error_auroc']:.3f}",
         f"{m['tau_mid_share']:.3f}", ", ".join(f"{t:.3f}" for t in m["scale_mean_tau_per_dim"])]
        for m in metrics
    ]  # fmt: skip
    return [
        Table("Success rate (%) per split and decoder: mean over policies (per policy)",
              ["decoder", *config.splits, "mean"], rows,
              note="paper (OpenVLA, LIBERO avg.): greedy 75.7, best fixed 77.2, SCALE 81.5"),
        Table("Testbed per policy", ["policy", "BC loss", "u AUROC (greedy errors)",
              "τ in (0.05, 0.95)", "mean τ (dx, dy, grip)"], testbed),
    ]  # fmt: skip


def v1_figure(metrics: list[dict[str, Any]], config: ReachV1Config) -> dict[str, Any]:
    import matplotlib.pyplot as plt

    from icml26.core.plotting import bars_with_seeds, seeds_note, stack

    fig, ax = plt.subplots(figsize=(9, 3.4))
    values = np.stack([stack(metrics, f"sr_mean_{d}") for d in config.decoders], axis=1)
    bars_with_seeds(ax, list(config.decoders), 100 * values)
    ax.set_xticks(np.arange(len(config.decoders)), config.decoders, rotation=20)
    ax.set_ylabel("success rate (%)")
    ax.set_title(f"AmbiguousReach2D-v1 ({seeds_note(len(metrics))}: one policy each)")
    fig.tight_layout()
    return {"success_rates": fig}


@register(
    name="scale.reach_v1",
    title="AmbiguousReach2D-v1: SCALE vs greedy and shuffled tau on 3 TinyOpenVLA policies",
    paper=PAPER,
    claims=MAIN_CLAIMS,
    presets=MAIN_PRESETS,
    plot=v1_figure,
    tables=v1_tables,
    seeds=3,  # one seed per shipped policy
    resources=Resources(cpus=1),
    deterministic_metrics=("forward_pass_gap",),
)
def reach_v1(config: ReachV1Config, ctx: RunContext) -> dict[str, Any]:
    return run_v1("scale.reach_v1", config, ctx)


@register(
    name="scale.reach_v1_ablations",
    title="AmbiguousReach2D-v1: temperature sweep, components and Δu vs u (S2, S3, A2)",
    paper=PAPER,
    claims=ABLATION_CLAIMS,
    presets=ABLATION_PRESETS,
    plot=v1_figure,
    tables=v1_tables,
    seeds=3,
    resources=Resources(cpus=1),
    deterministic_metrics=("forward_pass_gap",),
)
def reach_v1_ablations(config: ReachV1Config, ctx: RunContext) -> dict[str, Any]:
    return run_v1("scale.reach_v1_ablations", config, ctx)
