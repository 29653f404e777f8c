"""``taco.real_tables`` (issue 19): the shipped TACOClassifier on real tables it never saw.

Per table of :data:`~icml26.taco.real_tables.PANEL`, stratified splits; ROC-AUC of TACO@4 %
(the default classifier), the uncompressed POT (same backbone and ensemble), POT on a random
stratified K-row subsample of the training rows (naive compression at TACO's K), logistic
regression and HistGradientBoosting. The accuracy claims are paired per table (the mean over
the splits of each table's difference; a bootstrap over seeds, then tables); gates check that
the context matters (POT beats its own random subsample) and that the backbone is competitive
(POT vs HGB). The speed claims time the predict step of TACO@1 %, TACO@4 % and POT at a context
of N rows (one member each, interleaved rounds on ``ctx.clock``; each round's POT / TACO ratio
is one replicate; timing metrics), beside the analytic multiply-adds (deterministic).

Importing this module stays light (``icml26 list``): everything heavy is imported in the run.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from icml26.core import Resources, RunContext, Table, register
from icml26.taco.experiments.common import PAPER
from icml26.taco.experiments.real_tables_claims import REAL_TABLES_CLAIMS

MODELS = ("taco_4", "taco_1", "pot", "pot_random_4", "lr", "hgb")


@dataclass(frozen=True)
class RealTablesConfig:
    tables: tuple[str, ...] = ()  # panel keys; empty: the whole panel
    splits: int = 5
    max_train: int = 3000
    max_test: int = 3000
    speed_table: str = "ISLR/Default"
    speed_n: int = 4096
    speed_test: int = 512
    speed_repeats: int = 5  # timed rounds: each gives one paired POT / TACO ratio

    def __post_init__(self) -> None:
        from icml26.core import check_positive_int
        from icml26.taco.real_tables import PANEL

        owner = "RealTablesConfig"
        keys = {t.key for t in PANEL}
        if not isinstance(self.tables, tuple) or any(t not in keys for t in self.tables):
            raise ValueError(
                f"{owner}: tables must be a tuple of panel keys ({sorted(keys)}); "
                f"got {self.tables!r}."
            )
        if self.speed_table not in keys:
            raise ValueError(f"{owner}: speed_table must be a panel key; got {self.speed_table!r}.")
        check_positive_int("splits", self.splits, owner=owner, maximum=1000)
        check_positive_int("max_train", self.max_train, owner=owner, minimum=16, maximum=10**6)
        check_positive_int("max_test", self.max_test, owner=owner, minimum=16, maximum=10**6)
        check_positive_int("speed_n", self.speed_n, owner=owner, minimum=16, maximum=10**6)
        check_positive_int("speed_test", self.speed_test, owner=owner, maximum=10**6)
        check_positive_int("speed_repeats", self.speed_repeats, owner=owner, maximum=1000)


CONFIG = RealTablesConfig()
QUICK_TABLES = (
    "ISLR/Default", "ISLR/OJ", "ISLR/Carseats", "ISLR/Caravan", "MASS/biopsy", "AER/CreditCard",
    "AER/HMDA", "AER/SwissLabor", "carData/Mroz", "carData/Chile", "Ecdat/Benefits",
    "Stat2Data/Titanic",
)  # fmt: skip
PRESETS = {
    "smoke": replace(
        CONFIG,
        tables=("MASS/biopsy", "ISLR/Carseats"),
        splits=1,
        max_train=128,
        max_test=128,
        speed_n=256,
        speed_test=64,
        speed_repeats=1,
    ),
    # 12 tables, one split of at most 512/512 rows: about a minute on 2 cores
    "quick": replace(CONFIG, tables=QUICK_TABLES, splits=1, max_train=512, max_test=512),
    # all 18 tables, 5 splits of up to 3000/3000 rows (issue 19's protocol)
    "full": CONFIG,
}


def _models(seed: int) -> dict[str, Any]:
    from sklearn.ensemble import HistGradientBoostingClassifier

    from icml26.taco import TACOClassifier, linear_baseline

    return {
        "taco_4": TACOClassifier(seed=seed),
        "taco_1": TACOClassifier(row_compression_percentage=1, seed=seed),
        "pot": TACOClassifier(use_compressor=False, seed=seed),
        "lr": linear_baseline(),
        "hgb": HistGradientBoostingClassifier(categorical_features="from_dtype", random_state=seed),
    }


def _stratified_rows(y: np.ndarray, k: int, rng: np.random.Generator) -> np.ndarray:
    """``k`` random positions of ``y`` holding every class at least once (sorted)."""
    classes = np.unique(y)
    first = np.array([rng.choice(np.flatnonzero(y == c)) for c in classes])
    rest = rng.permutation(np.setdiff1d(np.arange(len(y)), first))
    return np.sort(np.concatenate([first, rest[: max(0, k - len(first))]]))


def _panel_scores(config: RealTablesConfig, ctx: RunContext) -> tuple[dict, dict]:
    """ROC-AUC per table, model and split; and K at 1 % and 4 % per table."""
    from sklearn.model_selection import StratifiedShuffleSplit

    from icml26.taco import PANEL, TACOClassifier, load_real_table, n_latents, roc_auc

    keys = config.tables or tuple(t.key for t in PANEL)
    sklearn_seed = ctx.seed % 2**31  # scikit-learn's random_state takes a 32-bit int
    rng = ctx.numpy_generator("random subsample")
    out: dict[str, dict[str, list[float]]] = {}
    latents: dict[str, dict[str, int]] = {}
    with ctx.progress(len(keys) * config.splits, "real-table splits") as bar:
        for key in keys:
            X, y = load_real_table(key)
            n_train = min(config.max_train, len(y) // 2)
            n_test = min(config.max_test, len(y) - n_train)
            split = StratifiedShuffleSplit(
                config.splits, train_size=n_train, test_size=n_test, random_state=sklearn_seed
            )
            scores: dict[str, list[float]] = {m: [] for m in MODELS}
            for train, test in split.split(X, y):
                models = _models(sklearn_seed)
                # naive compression: POT on K random training rows, K = TACO@4 %'s latents
                k = n_latents(len(train), models["taco_4"].row_compression_percentage)
                sub = train[_stratified_rows(y[train], k, rng)]
                models["pot_random_4"] = TACOClassifier(use_compressor=False, seed=sklearn_seed)
                for name in MODELS:
                    rows = sub if name == "pot_random_4" else train
                    model = models[name].fit(X.iloc[rows], y[rows])
                    scores[name].append(roc_auc(y[test], model.predict_proba(X.iloc[test])))
                bar.advance()
            out[key] = scores
            latents[key] = {"n_train": n_train, "k_1": n_latents(n_train, 1.0),
                            "k_4": n_latents(n_train, 4.0)}  # fmt: skip
    return out, latents


def _predict_cost(config: RealTablesConfig, ctx: RunContext) -> dict[str, Any]:
    """Predict cost of TACO@1 %, TACO@4 % and POT (one member each) at ``speed_n`` rows.

    ``rounds_*``: seconds of each interleaved round on ``ctx.clock`` (one warm-up round first);
    ``macs_*``: the analytic multiply-adds of the same predict step
    (:func:`~icml26.taco.predict_macs`).
    """
    from icml26.taco import (
        TACOClassifier,
        activation_elements,
        load_real_table,
        n_latents,
        predict_macs,
    )

    X, y = load_real_table(config.speed_table)
    n = config.speed_n + config.speed_test
    if len(y) < n:
        raise ValueError(
            f"taco.real_tables: speed_table {config.speed_table!r} has {len(y)} rows; "
            f"speed_n + speed_test needs {n}."
        )
    rows = ctx.numpy_generator("speed rows").permutation(len(y))[:n]
    train, test = rows[: config.speed_n], rows[config.speed_n :]
    percentages = {"taco_1": 1.0, "taco_4": 4.0, "pot": None}
    fitted = {
        name: TACOClassifier(
            use_compressor=p is not None,
            row_compression_percentage=p or 4.0,
            n_estimators=1,
            seed=ctx.seed,
        ).fit(X.iloc[train], y[train])
        for name, p in percentages.items()
    }
    cfg, f, q = fitted["pot"].model_.config, X.shape[1], config.speed_test
    X_test = X.iloc[test]
    predicts = {name: (lambda m=model: m.predict_proba(X_test)) for name, model in fitted.items()}
    # one round per call (the warm-up before the first), so every round's seconds are kept
    rounds = [
        ctx.median_seconds(predicts, 1, warmup=int(r == 0)) for r in range(config.speed_repeats)
    ]
    out: dict[str, Any] = {f"rounds_{name}": [r[name] for r in rounds] for name in percentages}
    out["macs_pot"] = float(predict_macs(q + config.speed_n, config.speed_n, f, cfg))
    out["activations_pot"] = float(activation_elements(config.speed_n, q, f, cfg))
    for name, p in percentages.items():
        if p is not None:
            k = n_latents(config.speed_n, p)
            out[f"macs_{name}"] = float(predict_macs(q + k, k, f, cfg))
            out[f"activations_{name}"] = float(activation_elements(k, q, f, cfg))
    return out


def _per_table(auc: dict[str, dict[str, list[float]]], a: str, b: str) -> list[float]:
    """Per table, the mean over its splits of the paired AUC difference ``a − b``."""
    return [float(np.mean(np.asarray(s[a]) - np.asarray(s[b]))) for s in auc.values()]


def _per_table_auc(metrics: list[dict[str, Any]]) -> dict[str, dict[str, float]]:
    """Mean ROC-AUC per table and model over every seed's splits."""
    return {
        key: {
            name: float(np.mean([v for seed in metrics for v in seed["auc"][key][name]]))
            for name in MODELS
        }
        for key in metrics[0]["auc"]
    }


def _tables(metrics: list[dict[str, Any]], config: RealTablesConfig) -> list[Table]:
    auc = _per_table_auc(metrics)
    over = "" if len(metrics) == 1 else f" × {len(metrics)} seeds"
    latents = metrics[0].get("latents", {})
    rows = [
        [key, f"{latents.get(key, {}).get('k_1', '')}/{latents.get(key, {}).get('k_4', '')}",
         *(f"{scores[name]:.3f}" for name in MODELS)]
        for key, scores in auc.items()
    ]  # fmt: skip
    medians = [float(np.median([s[name] for s in auc.values()])) for name in MODELS]
    rows.append(["**median**", "", *(f"{m:.3f}" for m in medians)])
    speed = []
    for name, label in (("taco_1", "TACO@1 %"), ("taco_4", "TACO@4 %"), ("pot", "POT")):
        seconds = np.median([t for seed in metrics for t in seed[f"predict_rounds_{name}"]])
        speed.append([label, f"{seconds:.4g}", f"{metrics[0][f'predict_macs_{name}']:.4g}"])
    return [
        Table(
            f"Real tables: ROC-AUC, mean over {config.splits} stratified split(s){over} of at "
            f"most {config.max_train}/{config.max_test} train/test rows",
            ["table", "K@1 %/4 %", "TACO@4 %", "TACO@1 %", "POT", "POT-random@4 %", "LR", "HGB"],
            rows,
            note="TACO and POT: the shipped checkpoints with the default 4-member ensemble; "
            "POT-random@4 %: the same POT on K random training rows (K = TACO@4 %'s latents); "
            "no table was used for training or tuning.",
        ),
        Table(
            f"Predict cost at N = {config.speed_n} context rows ({config.speed_table}, "
            f"{config.speed_test} test rows, one member, median of {config.speed_repeats} "
            f"rounds{over})",
            ["model", "seconds", "multiply-adds"],
            speed,
        ),
    ]


def _plot(metrics: list[dict[str, Any]], config: RealTablesConfig) -> dict[str, Any]:
    """Per-table AUC of TACO@4 % against each baseline (points above the diagonal: TACO wins)."""
    import matplotlib.pyplot as plt

    from icml26.core.plotting import legend_outside

    auc = _per_table_auc(metrics)
    fig, ax = plt.subplots(figsize=(6.0, 4.5))
    taco = [s["taco_4"] for s in auc.values()]
    for name, label in (("lr", "LogisticRegression"), ("pot", "POT"), ("hgb", "HGB")):
        ax.scatter([s[name] for s in auc.values()], taco, label=label, s=18)
    ax.plot([0.4, 1.0], [0.4, 1.0], color="grey", lw=0.8)
    ax.set_xlabel("baseline ROC-AUC (mean over splits and seeds)")
    ax.set_ylabel("TACO@4 % ROC-AUC")
    ax.set_title(f"{len(auc)} real tables: TACO@4 % vs baselines")
    legend_outside(ax)
    fig.tight_layout()
    return {"real_tables_auc": fig}


@register(
    name="taco.real_tables",
    title="Issue 19: the shipped TACOClassifier on real tables vs POT, LR and HGB",
    paper=PAPER,
    claims=REAL_TABLES_CLAIMS,
    presets=PRESETS,
    tables=_tables,
    plot=_plot,
    seeds=1,  # accuracy claims pair over tables (and splits); speed claims over timed rounds
    extra="taco-tables",
    resources=Resources(cpus=1),  # tiny models: one torch thread is fastest
    timing_metrics=("predict_rounds_*", "predict_speedup*"),
    deterministic_metrics=("predict_macs_*", "activation_reduction_*", "latents"),
)
def real_tables(config: RealTablesConfig, ctx: RunContext) -> dict[str, Any]:
    auc, latents = _panel_scores(config, ctx)
    medians = {
        f"median_auc_{name}": float(np.median([np.mean(s[name]) for s in auc.values()]))
        for name in MODELS
    }
    cost = _predict_cost(config, ctx)
    pot = np.asarray(cost["rounds_pot"])

    def speedup(name: str) -> list[float]:
        """POT / TACO predict time in each round (a paired replicate)."""
        return (pot / np.asarray(cost[f"rounds_{name}"])).tolist()

    return {
        "auc": auc,
        "latents": latents,
        **medians,
        # paired per table: the items of the accuracy claims and gates
        "taco_minus_lr": _per_table(auc, "taco_4", "lr"),
        "taco_minus_pot": _per_table(auc, "taco_4", "pot"),
        "taco1_minus_pot": _per_table(auc, "taco_1", "pot"),
        "pot_minus_random4": _per_table(auc, "pot", "pot_random_4"),
        "pot_minus_hgb": _per_table(auc, "pot", "hgb"),
        "random4_minus_lr": _per_table(auc, "pot_random_4", "lr"),
        "random4_minus_pot": _per_table(auc, "pot_random_4", "pot"),
        "hgb_minus_lr": _per_table(auc, "hgb", "lr"),
        **{f"predict_rounds_{n}": cost[f"rounds_{n}"] for n in ("taco_1", "taco_4", "pot")},
        "predict_speedup": speedup("taco_4"),
        "predict_speedup_p1": speedup("taco_1"),
        **{f"predict_macs_{n}": cost[f"macs_{n}"] for n in ("taco_1", "taco_4", "pot")},
        "predict_macs_ratio": cost["macs_pot"] / cost["macs_taco_4"],
        "predict_macs_ratio_p1": cost["macs_pot"] / cost["macs_taco_1"],
        # analytic activations of the timed predict step (N or K context rows + the test rows)
        "activation_reduction_p1": 1 - cost["activations_taco_1"] / cost["activations_pot"],
    }
