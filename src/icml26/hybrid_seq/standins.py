"""The shipped models of hybrid_seq's quick presets and the recipes that retrain them.

**Quick fits** (issue 51): ``quick_mqar_smoke``, ``quick_length_gen`` and ``quick_ood`` hold every
model that experiment's quick preset trains, at seed indices 0, 1 and 2: each is exactly what the
task's :func:`~icml26.hybrid_seq.experiments.common.fit` trains for that seed (same code, same
derived seed, one torch thread), keyed in the JSON's ``config["fits"]`` by
:func:`~icml26.hybrid_seq.experiments.common.fit_key`. The
quick tasks load them instead of training; any other config or seed trains (``full``, a ``--set``,
a fourth seed). ``icml26 tool hybrid_seq train-standin quick_ood`` retrains one (an interrupted
run starts again).

**Sweeps** (issue 46), the shipped parameter-efficiency sweeps:

Each stand-in is one whole sweep of one task at seed 0 (:data:`~icml26.hybrid_seq.sweep.SWEEPS`):
every model's weights in one safetensors file (keys ``<family>-<d>.<parameter>``) and every run's
record (family, width, total and non-embedding parameters, steps run, test accuracy) in the
JSON's ``config["runs"]``. ``icml26 tool hybrid_seq train-standin sweep_sc_seed0`` retrains one;
an interrupted sweep resumes from the runs already finished (kept beside the checkpoint in
``<name>.resume.d/`` until the sweep is written).
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator, Mapping
from dataclasses import asdict
from functools import cache
from pathlib import Path
from typing import Any

from icml26.core import Progress, Standin, TrainedStandin, TrainingCheckpoint, torch_threads

__all__ = ["STANDINS", "load_sweep"]

QUICK_EXPERIMENTS = ("mqar_smoke", "length_gen", "ood")


def _sweep_config_json(task: str) -> dict[str, Any]:
    from icml26.hybrid_seq.sweep import SWEEPS

    out = asdict(SWEEPS[task])
    out["widths"] = {k: list(v) for k, v in SWEEPS[task].widths.items()}
    return out


class _FinishedRuns(Mapping):
    """The runs already saved in a resume folder, read when asked (so that several processes
    may share one sweep: each skips what another has finished)."""

    def __init__(self, folder: Path, task: str) -> None:
        self.folder, self.task = folder, task

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and (self.folder / f"{name}.json").is_file()

    def __getitem__(self, name: str) -> tuple[Any, dict[str, Any]]:
        from icml26.core import load_checkpoint
        from icml26.hybrid_seq.sweep import build_family_model, sweep_task

        if name not in self:
            raise KeyError(name)
        state, record = load_checkpoint(self.folder / name)
        model = build_family_model(sweep_task(self.task), record["family"], record["d_model"], 0)
        model.load_state_dict(state)
        return model, record

    def __iter__(self) -> Iterator[str]:
        return iter(sorted(p.stem for p in self.folder.glob("*.json")))

    def __len__(self) -> int:
        return len(list(self.folder.glob("*.json")))


def _trainer(task: str) -> Any:
    def train(resume: TrainingCheckpoint, progress: Progress) -> TrainedStandin:
        from torch import nn

        from icml26.core import save_checkpoint
        from icml26.hybrid_seq.sweep import SWEEPS, train_sweep

        cfg = SWEEPS[task]
        folder = resume.path.with_suffix(".d")
        folder.mkdir(parents=True, exist_ok=True)
        done = _FinishedRuns(folder, task)

        def save(name: str, model: nn.Module, record: dict[str, Any]) -> None:
            save_checkpoint(folder / name, model, record)

        models, records = train_sweep(cfg, done=done, on_run=save)
        shutil.rmtree(folder)
        return TrainedStandin(
            model=nn.ModuleDict(models),
            config={"task": task, "sweep": _sweep_config_json(task), "runs": records},
            recipe={"seed": cfg.seed, "steps": cfg.steps, "lr": cfg.lr, "batch": cfg.batch_size},
            data=f"fresh samples of icml26.hybrid_seq.sweep.sweep_task({task!r}) at every step",
            metrics={"n_runs": len(records)},
        )

    return train


def _quick_trainer(what: str) -> Any:
    def train(resume: TrainingCheckpoint, progress: Progress) -> TrainedStandin:
        import importlib

        from torch import nn

        from icml26.core import RunContext, derive_seed, discover
        from icml26.hybrid_seq.experiments.common import QUICK_SEEDS, fit, fit_key

        name = f"hybrid_seq.{what}"
        quick = discover().get(name).presets["quick"]
        task, specs = importlib.import_module(f"icml26.hybrid_seq.experiments.{what}").fit_specs(
            quick
        )
        models, fits, metrics = {}, {}, {}
        with torch_threads(1):  # as the runner runs the task (Resources(cpus=1))
            for index in range(QUICK_SEEDS):
                ctx = RunContext(seed=derive_seed(name, quick, index))
                with ctx.progress(len(specs) * quick.steps * len(quick.lrs), name) as bar:
                    for label, pattern, d, pos, max_len in specs:
                        search = fit(
                            task, pattern, d, quick, ctx, bar, pos_enc=pos, max_len=max_len
                        )
                        prefix = f"seed{index}_{label}"
                        models[prefix] = search.model
                        fits[fit_key(name, quick, ctx.seed, pattern, d, pos, max_len)] = {
                            "prefix": prefix,
                            "seed_index": index,
                            "lr": search.lr,
                            "val_acc": search.val_acc,
                            "val_acc_by_lr": [[lr, a] for lr, a in search.val_acc_by_lr.items()],
                        }
                        metrics[f"{prefix}_val_acc"] = search.val_acc
        return TrainedStandin(
            model=nn.ModuleDict(models),
            config={"experiment": name, "preset": "quick", "fits": fits},
            recipe={
                "seed": f"derive_seed({name!r}, quick config, i) for i in 0..{QUICK_SEEDS - 1}",
                "steps": quick.steps,
                "lrs": list(quick.lrs),
                "batch": quick.batch_size,
                "threads": 1,
            },
            data=f"fresh samples of {name}'s quick training task at every step (its fit)",
            metrics=metrics,
        )

    return train


STANDINS = {
    f"sweep_{task}_seed0": Standin(
        name=f"sweep_{task}_seed0",
        system="hybrid_seq",
        description=f"issue 46's reduced accuracy-vs-parameters sweep on {task}, seed 0",
        train=_trainer(task),
    )
    for task in ("sc", "mqar")
} | {
    f"quick_{what}": Standin(
        name=f"quick_{what}",
        system="hybrid_seq",
        description=f"the models hybrid_seq.{what}'s quick preset trains, seeds 0-2 (issue 51)",
        train=_quick_trainer(what),
    )
    for what in QUICK_EXPERIMENTS
}


@cache
def load_sweep(task: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The shipped sweep of ``task`` (``"sc"`` or ``"mqar"``), loaded once per process:
    ``({run name: model in eval mode}, [run record, ...])``."""
    from icml26.core import check_one_of
    from icml26.hybrid_seq.sweep import build_family_model, sweep_task

    check_one_of("task", task, ("sc", "mqar"), owner="load_sweep")
    state, meta = STANDINS[f"sweep_{task}_seed0"].load()
    models = {}
    for record in meta["config"]["runs"]:
        name = record["name"]
        model = build_family_model(sweep_task(task), record["family"], record["d_model"], 0)
        prefix = name + "."
        model.load_state_dict(
            {k[len(prefix) :]: v for k, v in state.items() if k.startswith(prefix)}
        )
        models[name] = model.eval()
    return models, list(meta["config"]["runs"])
