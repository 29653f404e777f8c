"""The shipped denoisers of ``rex.learned``'s quick preset, and the recipe that retrains them.

``learned_quick`` holds the two :class:`~icml26.rex.MLPDenoiser` eps-predictors (two moons and the
2-D mixture) of the quick preset's seed (issue 51): each is exactly what the quick task trains —
:func:`~icml26.rex.train_denoiser` on the same data draw with the same seed
(``derive_seed("rex.learned", quick config, 0) + problem index``), 1500 steps. ``rex.learned``
loads one when the problem, seed and training settings match and trains it otherwise (any
``--set`` of a training field, more seeds, the full preset).

``icml26 tool rex train-standin learned_quick`` retrains it (two short runs: an interrupted run
starts again rather than resuming).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from icml26.core import Progress, Standin, TrainedStandin, TrainingCheckpoint, checkpoint_dir

__all__ = ["STANDINS", "learned_data", "shipped_denoiser"]

EXPERIMENT = "rex.learned"
NAME = "learned_quick"
TRAIN_FIELDS = ("train_steps", "n_train", "t_end")  # with the problem and seed

_LOADED: dict[str, Any] = {}  # one read of the shipped file per process


def learned_data(name: str, n: int, seed: int) -> Any:
    """``n`` points of problem ``name`` (``"moons"`` or ``"gmm"``), float64, from ``seed``."""
    from icml26.rex import GaussianMixtureData, make_moons_data

    if name == "moons":
        return make_moons_data(n, seed=seed)
    return GaussianMixtureData().sample(n, seed)


def _key(name: str, config: Any, seed: int) -> str:
    return "|".join([name, str(seed), *(repr(getattr(config, f)) for f in TRAIN_FIELDS)])


def shipped_denoiser(name: str, config: Any, seed: int) -> Any:
    """The shipped denoiser of problem ``name`` for ``(config, seed)``, or ``None``."""
    from icml26.core import load_checkpoint
    from icml26.rex.learned import MLPDenoiser

    if "meta" not in _LOADED:
        try:
            _LOADED["state"], _LOADED["meta"] = load_checkpoint(checkpoint_dir("rex") / NAME)
        except FileNotFoundError:
            _LOADED["state"], _LOADED["meta"] = {}, {"config": {"keys": {}}}
    prefix = _LOADED["meta"]["config"]["keys"].get(_key(name, config, seed))
    if prefix is None:
        return None
    state = {k[len(prefix) + 1 :]: v for k, v in _LOADED["state"].items()
             if k.startswith(prefix + ".")}  # fmt: skip
    net = MLPDenoiser(int(_LOADED["meta"]["config"]["dim"]))
    net.load_state_dict(state)
    return net.eval().requires_grad_(False)


def train_learned_quick(resume: TrainingCheckpoint, progress: Progress = None) -> TrainedStandin:
    """Train the quick preset's two denoisers as the task does (``resume`` unused)."""
    import torch

    from icml26.core import discover
    from icml26.core.runner import derive_seed
    from icml26.rex import VPSchedule, train_denoiser

    quick = discover().get(EXPERIMENT).presets["quick"]  # the registry: no import cycle
    seed = derive_seed(EXPERIMENT, quick, 0)
    schedule = VPSchedule(t_data=quick.t_end)
    nets, keys, losses = {}, {}, {}
    for p_i, name in enumerate(quick.problems):
        data = learned_data(name, quick.n_train, seed + p_i)
        seen: dict[str, float] = {}
        nets[name] = train_denoiser(data, schedule, steps=quick.train_steps, seed=seed + p_i,
                                    progress=lambda d, t, m, seen=seen: seen.update(m))  # fmt: skip
        keys[_key(name, quick, seed + p_i)] = name
        losses[f"{name}_final_loss"] = seen["loss"]
    recipe = {
        "experiment": EXPERIMENT,
        "preset": "quick",
        "seed_index": 0,
        "problems": list(quick.problems),
        "train_steps": quick.train_steps,
        "n_train": quick.n_train,
        "schedule": f"VPSchedule(t_data={quick.t_end})",
        "train_seed": "seed + problem index (as the task)",
    }
    return TrainedStandin(
        model=torch.nn.ModuleDict(nets),
        config={"keys": keys, "dim": 2, "seed": seed},
        recipe=recipe,
        data="make_moons_data / GaussianMixtureData().sample of n_train points, seed + index",
        metrics=losses,
    )


STANDINS: Mapping[str, Standin] = {
    NAME: Standin(
        name=NAME,
        system="rex",
        description="the two MLP eps-predictors of rex.learned's quick seed (moons, mixture)",
        train=train_learned_quick,
    )
}
