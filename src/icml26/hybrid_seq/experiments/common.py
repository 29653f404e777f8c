"""Pieces the hybrid_seq reproductions share: the paper, where claims come from, resources, and
the learned-model protocol of spec §2.5 (one (pattern, width) trained at each learning rate of the
config, the best kept on a validation stream).

Importing this module stays light: torch and the library are imported inside :func:`fit`.
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING, Any

from icml26.core import ProgressBar, Resources, RunContext, checkpoint_dir

if TYPE_CHECKING:
    from icml26.hybrid_seq import AbstractTask, LRSearchResult

PAPER = (
    "Cooper, Diakonikolas, Ma & Sala, Expressivity-Efficiency Tradeoffs for Hybrid Sequence "
    "Models, ICML 2026 (arXiv:2603.08859)"
)
WHERE_ABSTRACT = "abstract (full text not available)"
WHERE_SPEC = "spec §5 (the spec author's small-scale target; no paper table available)"
WHERE_ISSUE46 = "issue 46 (the project's small-scale target; no paper table available)"
# one thread: these d <= 128 models run several times slower on two OpenMP threads when the
# cores are shared, and barely faster on an idle machine
TRAIN_RESOURCES = Resources(cpus=1)
EXACT_RESOURCES = Resources(cpus=1)
# one model an experiment fits: (name, pattern, d_model, pos_enc, max_len)
FitSpec = tuple[str, str, int, str | None, int]


def fit(
    task: AbstractTask,
    pattern: str,
    d_model: int,
    config: Any,
    ctx: RunContext,
    bar: ProgressBar,
    *,
    pos_enc: str | None = None,
    max_len: int = 2048,
    shipped: str | None = None,
) -> LRSearchResult:
    """Train ``HybridLM(pattern, d_model)`` at each of ``config.lrs``; keep the best on validation.

    ``config`` supplies ``steps``, ``lrs``, ``batch_size``, ``warmup`` and ``n_val``. The
    initialisation seed depends on (pattern, width) only and the data seed is the same for every
    model, so only the learning rate differs between the runs of one search; the validation
    stream is disjoint from training and from the callers' test stream. ``bar`` advances by
    ``len(config.lrs) * config.steps``. ``shipped``: the experiment's name; when its quick
    stand-in (:mod:`icml26.hybrid_seq.standins`) holds this fit for ``(config, ctx.seed)`` the
    shipped model, trained by this same function, is loaded instead (issue 51).
    """
    from icml26.hybrid_seq import HybridLM, LRSearchResult, TrainConfig, train_lr_search

    def make_model() -> HybridLM:
        return HybridLM(
            task.vocab_size,
            d_model,
            pattern=pattern,
            n_heads=max(1, d_model // 16),
            pos_enc=pos_enc,
            max_len=max_len,
            scan="sequential",
            ssm_backend="torch",
            seed=ctx.seed_for(f"init/{pattern}/{d_model}"),
        )

    start = bar.completed
    if shipped is not None:
        found = shipped_fit(
            shipped, fit_key(shipped, config, ctx.seed, pattern, d_model, pos_enc, max_len)
        )
        if found is not None:
            state, record = found
            model = make_model()
            model.load_state_dict(state)
            bar(start + len(config.lrs) * config.steps, bar.total, {})
            return LRSearchResult(
                model=model.eval(),
                lr=record["lr"],
                val_acc=record["val_acc"],
                val_acc_by_lr=dict(record["val_acc_by_lr"]),
            )

    cfg = TrainConfig(
        steps=config.steps,
        lr=config.lrs[0],
        batch_size=config.batch_size,
        warmup=min(config.warmup, config.steps - 1),
        seed=ctx.seed_for("train-data"),
    )

    def progress(done: int, total: int, metrics: Any) -> None:
        bar(start + done, bar.total, metrics)

    return train_lr_search(
        make_model,
        task,
        cfg,
        config.lrs,
        n_val=config.n_val,
        val_seed=ctx.seed_for("validation"),
        progress=progress,
    )


QUICK_SEEDS = 3  # the quick stand-ins hold seed indices 0..2: three values per claim


def fit_key(
    experiment: str,
    config: Any,
    seed: int,
    pattern: str,
    d_model: int,
    pos_enc: str | None,
    max_len: int,
) -> str:
    """The key of one fit (a model an experiment trains) in a quick stand-in."""
    from icml26.core.results import config_hash

    fields = (experiment, config_hash(config), seed, pattern, d_model, pos_enc, max_len)
    return "|".join(str(f) for f in fields)


@cache
def _quick_fits(experiment: str) -> tuple[dict[str, Any], dict[str, Any]]:
    from icml26.core import load_checkpoint

    stem = checkpoint_dir("hybrid_seq") / f"quick_{experiment.removeprefix('hybrid_seq.')}"
    try:
        state, meta = load_checkpoint(stem)
    except FileNotFoundError:
        return {}, {}
    return state, meta["config"]["fits"]


def shipped_fit(experiment: str, key: str) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """The shipped model of fit ``key`` (:func:`fit_key`) of ``experiment``:
    ``(state dict, record)``, or ``None`` when no quick stand-in holds it. Each stand-in file
    is read once per process."""
    state, fits = _quick_fits(experiment)
    record = fits.get(key)
    if record is None:
        return None
    prefix = record["prefix"] + "."
    return {k[len(prefix) :]: v for k, v in state.items() if k.startswith(prefix)}, record


def by_params(row: dict[str, Any]) -> int:
    """Sort key: a run's parameter count."""
    return row["params"]


_FRACTIONS = ("match_tolerance",)  # float fields in [0, 1]
_LARGEST = {"batch_size": 4096, "eval_batch": 4096}  # int fields with a smaller cap


def validate_config(config: Any) -> None:
    """Check an experiment config's fields by their kind (issue 40: a bad ``--set`` exits 2).

    Integers (bools refused) in [1, 10**6] (``warmup`` from 0; batch sizes at most 4096);
    floats finite, learning rates in (0, 1], ``power_a`` > 0, tolerances in [0, 1]; tuples of
    integers non-empty with every entry in [1, 10**6]; block patterns non-empty over ``A``,
    ``S``, ``M``. Raises ``ValueError`` / ``TypeError`` naming the field.
    """
    import dataclasses
    import math

    from icml26.core import check_in_interval, check_positive_int

    owner = type(config).__name__
    for f in dataclasses.fields(config):
        name, value = f.name, getattr(config, f.name)
        if isinstance(value, bool):
            raise TypeError(f"{owner}: {name} must not be a bool; got {value!r}.")
        if isinstance(value, int):
            low = 0 if name == "warmup" else 1
            check_positive_int(
                name, value, owner=owner, minimum=low, maximum=_LARGEST.get(name, 10**6)
            )
        elif isinstance(value, float):
            if not math.isfinite(value):
                raise ValueError(f"{owner}: {name} must be finite; got {value!r}.")
            if name in _FRACTIONS:
                check_in_interval(name, value, low=0.0, high=1.0, owner=owner)
            else:
                check_in_interval(name, value, low=0.0, closed="neither", owner=owner)
        elif name.endswith("pattern") or name.endswith("patterns"):
            patterns = value if isinstance(value, tuple) else (value,)
            if not patterns:
                raise ValueError(f"{owner}: {name} must not be empty.")
            for p in patterns:
                if not isinstance(p, str) or not p or set(p) - set("ASM"):
                    raise ValueError(
                        f"{owner}: {name} must be non-empty strings over 'A', 'S', 'M'; got {p!r}."
                    )
        elif isinstance(value, tuple):
            if not value:
                raise ValueError(f"{owner}: {name} must not be empty.")
            for i, v in enumerate(value):
                if name == "lrs":
                    check_in_interval(
                        f"{name}[{i}]", v, low=0.0, high=1.0, closed="right", owner=owner
                    )
                else:
                    check_positive_int(f"{name}[{i}]", v, owner=owner, maximum=10**6)
