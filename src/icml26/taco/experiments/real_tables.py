"""``taco.real_tables`` (issue 19): the shipped TACOClassifier on real tables it never saw.

Per table of :data:`~icml26.taco.real_tables.PANEL`, stratified splits; ROC-AUC of TACO@4 %
(the default classifier), the uncompressed POT (same backbone and ensemble), logistic regression
and HistGradientBoosting. The claims compare medians over tables ("retaining performance") and
the predict time of TACO vs POT at a context of N rows on the largest table (one member each,
interleaved repeats on ``ctx.clock``, median; timing metrics), beside the analytic multiply-adds
of the same predict step (deterministic).

Importing this module stays light (``icml26 list``): everything heavy is imported in the run.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from icml26.core import Claim, Resources, RunContext, Table, register
from icml26.taco.experiments.common import PAPER

MODELS = ("taco_4", "pot", "lr", "hgb")


@dataclass(frozen=True)
class RealTablesConfig:
    tables: tuple[str, ...] = ()  # panel keys; empty: the whole panel
    splits: int = 5
    max_train: int = 3000
    max_test: int = 3000
    speed_table: str = "ISLR/Default"
    speed_n: int = 4096
    speed_test: int = 512
    speed_repeats: int = 3


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
        "pot": TACOClassifier(use_compressor=False, seed=seed),
        "lr": linear_baseline(),
        "hgb": HistGradientBoostingClassifier(categorical_features="from_dtype", random_state=seed),
    }


def _panel_scores(config: RealTablesConfig, ctx: RunContext) -> dict[str, dict[str, list[float]]]:
    from sklearn.model_selection import StratifiedShuffleSplit

    from icml26.taco import PANEL, load_real_table, roc_auc

    keys = config.tables or tuple(t.key for t in PANEL)
    sklearn_seed = ctx.seed % 2**31  # scikit-learn's random_state takes a 32-bit int
    out: dict[str, dict[str, list[float]]] = {}
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
                for name, model in _models(sklearn_seed).items():
                    proba = model.fit(X.iloc[train], y[train]).predict_proba(X.iloc[test])
                    scores[name].append(roc_auc(y[test], proba))
                bar.advance()
            out[key] = scores
    return out


def _predict_cost(config: RealTablesConfig, ctx: RunContext) -> dict[str, float]:
    """Predict cost of TACO@4 % and POT (one member each) at ``speed_n`` context rows.

    ``seconds_*``: median time on ``ctx.clock``; ``macs_*``: the analytic multiply-adds of the
    same predict step (:func:`~icml26.taco.predict_macs`).
    """
    from icml26.taco import TACOClassifier, load_real_table, n_latents, predict_macs

    X, y = load_real_table(config.speed_table)
    n = config.speed_n + config.speed_test
    if len(y) < n:
        raise ValueError(
            f"taco.real_tables: speed_table {config.speed_table!r} has {len(y)} rows; "
            f"speed_n + speed_test needs {n}."
        )
    rows = ctx.numpy_generator("speed rows").permutation(len(y))[:n]
    train, test = rows[: config.speed_n], rows[config.speed_n :]
    fitted = {
        name: TACOClassifier(use_compressor=name == "taco_4", n_estimators=1, seed=ctx.seed).fit(
            X.iloc[train], y[train]
        )
        for name in ("taco_4", "pot")
    }
    cfg, f, q = fitted["pot"].model_.config, X.shape[1], config.speed_test
    k = n_latents(config.speed_n, fitted["taco_4"].row_compression_percentage)
    X_test = X.iloc[test]
    predicts = {name: (lambda m=model: m.predict_proba(X_test)) for name, model in fitted.items()}
    seconds = ctx.median_seconds(predicts, config.speed_repeats, warmup=1)
    return {
        "seconds_taco_4": seconds["taco_4"],
        "seconds_pot": seconds["pot"],
        "macs_pot": float(predict_macs(q + config.speed_n, config.speed_n, f, cfg)),
        "macs_taco_4": float(predict_macs(q + k, k, f, cfg)),
    }


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
    rows = [[key, *(f"{scores[name]:.3f}" for name in MODELS)] for key, scores in auc.items()]
    medians = [float(np.median([s[name] for s in auc.values()])) for name in MODELS]
    rows.append(["**median**", *(f"{m:.3f}" for m in medians)])
    seconds = {
        name: np.mean([seed[f"predict_s_{name}"] for seed in metrics]) for name in ("taco_4", "pot")
    }
    return [
        Table(
            f"Real tables: ROC-AUC, mean over {config.splits} stratified split(s){over} of at "
            f"most {config.max_train}/{config.max_test} train/test rows",
            ["table", "TACO@4 %", "POT", "LogisticRegression", "HistGradientBoosting"],
            rows,
            note="TACO and POT: the shipped checkpoints with the default 4-member ensemble; "
            "no table was used for training or tuning.",
        ),
        Table(
            f"Predict cost at N = {config.speed_n} context rows ({config.speed_table}, "
            f"{config.speed_test} test rows, one member, median of {config.speed_repeats}"
            f"{over})",
            ["model", "seconds", "multiply-adds"],
            [
                [
                    "TACO@4 %",
                    f"{seconds['taco_4']:.4g}",
                    f"{metrics[0]['predict_macs_taco_4']:.4g}",
                ],
                ["POT", f"{seconds['pot']:.4g}", f"{metrics[0]['predict_macs_pot']:.4g}"],
            ],
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
    claims=(
        Claim(
            "T1",
            "median ROC-AUC over tables: TACO@4 % − LogisticRegression",
            "median_taco_minus_lr",
            ">=",
            -0.02,
            "retaining performance",
            "abstract; bar from issue 19",
            source="paper",
            kind="claim",
        ),
        Claim(
            "T2",
            "median ROC-AUC over tables: TACO@4 % − POT",
            "median_taco_minus_pot",
            ">=",
            -0.01,
            "retaining performance",
            "abstract; bar from issue 19",
            source="paper",
            kind="claim",
        ),
        Claim(
            "T3",
            "predict time POT / TACO@4 % at N context rows",
            "predict_speedup",
            ">=",
            10.0,
            "up to 94× faster inference",
            "abstract; bar from issue 19",
            source="paper",
            kind="claim",
        ),
    ),
    presets=PRESETS,
    tables=_tables,
    plot=_plot,
    seeds=1,  # the spread is over tables and splits
    extra="taco-tables",
    resources=Resources(cpus=1),  # tiny models: one torch thread is fastest
    timing_metrics=("predict_s_*", "predict_speedup"),
)
def real_tables(config: RealTablesConfig, ctx: RunContext) -> dict[str, Any]:
    auc = _panel_scores(config, ctx)
    medians = {
        f"median_auc_{name}": float(np.median([np.mean(s[name]) for s in auc.values()]))
        for name in MODELS
    }
    cost = _predict_cost(config, ctx)
    return {
        "auc": auc,
        **medians,
        "median_taco_minus_lr": medians["median_auc_taco_4"] - medians["median_auc_lr"],
        "median_taco_minus_pot": medians["median_auc_taco_4"] - medians["median_auc_pot"],
        "median_auc_hgb_minus_lr": medians["median_auc_hgb"] - medians["median_auc_lr"],
        "predict_s_taco_4": cost["seconds_taco_4"],
        "predict_s_pot": cost["seconds_pot"],
        "predict_speedup": cost["seconds_pot"] / cost["seconds_taco_4"],
        "predict_macs_taco_4": cost["macs_taco_4"],
        "predict_macs_pot": cost["macs_pot"],
        "predict_macs_ratio": cost["macs_pot"] / cost["macs_taco_4"],
    }
