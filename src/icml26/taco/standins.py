"""The shipped TACO and POT stand-ins and the recipes that retrain them (spec §5.5).

TACO (arXiv:2602.05649) meta-trains on a synthetic prior; we ship small CPU models trained by
:func:`~icml26.taco.training.train_taco` in stages, each stage starting from the shipped
checkpoint before it (``init_from``):

- ``pot_tiny``: POT, 2 000 steps on the shipped prior (64–256 rows, 2–12 features);
- ``taco_tiny``: TACO from ``pot_tiny``'s backbone, 2 000 steps on the same prior;
- ``pot_ext``: POT continuing ``pot_tiny`` for 2 000 steps on the extended prior (64–2 048 rows,
  2–20 features, trees, heavy tails, missing cells; about 1 024 rows per step);
- ``taco_ext``: TACO from ``pot_ext``, 1 600 steps on the extended prior;
- ``taco_long``: ``taco_ext`` continued for 4 000 steps on the extended prior.
- ``pot_v3`` (stage A, issue 48): ``pot_ext`` continued as a whole for 700 steps on prior v3
  (:class:`~icml26.taco.MixturePrior`, up to 32 columns); shipped, not the default;
- ``taco_v3`` (stage A): ``taco_long`` continued the same way; its run stopped at step 500 of 700
  on 2026-12-07 (CPU budget) and is not shipped: ``train-standin taco_v3`` trains it;
- ``pot_v3s`` / ``pot_v3f`` (issue 48 diagnosis): POT from scratch, 2 000 steps on prior v3, with
  the positional codes shuffled per dataset (``shuffle_codes``) and with the fixed codes (the
  control); trained on 2026-12-07, neither reads any column yet, so neither is shipped;
- ``pot_b`` / ``taco_b`` (stage B): E = 64, 4 layers, 64 columns per member, from scratch on
  prior v3 (about 6 + 5 CPU-hours; not run, not shipped).

``TACOClassifier()`` and the quick presets load ``taco_long`` and ``pot_ext``
(:data:`~icml26.taco.training.SHIPPED_CHECKPOINTS`); ``pot_tiny`` and ``taco_ext`` are the stages
they start from, and ``taco_tiny`` is the older TACO the docs' first results were measured with.
``icml26 tool taco train-standin NAME`` retrains one from its recipe (resuming after an
interruption) and writes it with core's metadata.

Deviations: ``pot_tiny`` and ``taco_tiny`` were trained before the core v2 migration (weights
initialised from torch's global RNG, an earlier warm-up schedule), so their recipes retrain other
weights; ``pot_ext``, ``taco_ext`` and ``taco_long`` were trained by the code of their recipes.
The shipped files were converted to core's format without retraining (their metadata says so).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from icml26.core import (
    Progress,
    Standin,
    TrainedStandin,
    TrainingCheckpoint,
    check_one_of,
    checkpoint_dir,
    load_state_dict_strict,
)
from icml26.taco.config import SHIPPED_CONFIG, TACOConfig

__all__ = [
    "EXTENDED_PRIOR",
    "RECIPES",
    "SHIPPED_PRIOR",
    "STAGE_A_PRIOR",
    "STAGE_B_CONFIG",
    "STANDINS",
    "Recipe",
    "train_recipe",
]

PRIOR_CLASSES = ("mlp_scm", "mixture")

SHIPPED_PRIOR: Mapping[str, Any] = {"n_rows": (64, 256), "n_features": (2, 12)}
"""MLPSCMPrior keywords of the first stage (the prior the accuracy experiment evaluates on)."""

EXTENDED_PRIOR: Mapping[str, Any] = {
    "n_features": (2, 20),
    "n_rows": (64, 2048),
    "log_rows": True,
    "tree_prob": 0.3,
    "heavy_tail_prob": 0.2,
    "missing_prob": 0.1,
}
"""MLPSCMPrior keywords of the later stages: larger, log-uniform tables of more kinds."""

STAGE_A_PRIOR: Mapping[str, Any] = {"n_features": (2, 32)}
"""MixturePrior keywords of stage A: prior v3 up to the shipped models' 32 columns."""

STAGE_B_CONFIG = TACOConfig(
    emsize=64, nlayers=4, nhead=4, max_classes=4, max_features=64, pre_norm=True
)
"""Stage B's backbone (issue 48): E = 64, 4 layers, 64 features per member."""

DATA = "fresh datasets from icml26.taco.{prior} (recipe 'prior') at every step"


@dataclass(frozen=True)
class Recipe:
    """How one stand-in is meta-trained: the arguments of ``train_taco`` and the model's.

    Parameters
    ----------
    use_compressor
        TACO (True) or POT (False).
    steps, batch_size, lr, weight_decay, warmup, clip, rows_per_step, seed
        As in :func:`~icml26.taco.training.train_taco`; ``seed`` also seeds the model's
        initialisation.
    prior
        :class:`~icml26.taco.MLPSCMPrior` keywords.
    architecture
        The backbone's :class:`~icml26.taco.TACOConfig`.
    init_from
        The checkpoint whose backbone starts the run: a stand-in name (a file of the shipped
        folder) or a path stem; ``None`` starts from the seeded initialisation.
    prior_class
        ``"mlp_scm"`` (:class:`~icml26.taco.MLPSCMPrior`) or ``"mixture"`` (prior v3,
        :class:`~icml26.taco.MixturePrior`).
    init_full
        Continue ``init_from`` as a whole (every weight, compressor and projection included)
        instead of copying its predictor backbone (:func:`~icml26.taco.init_from_pot`).
    shuffle_codes
        Draw a fresh permutation of the positional code table per training dataset
        (``train_taco(shuffle_codes=True)``, a training-time augmentation, not the paper's).
    """

    use_compressor: bool
    steps: int
    batch_size: int = 8
    lr: float = 1e-3  # tiny models: the paper's 1e-4 barely moves them in a few thousand steps
    weight_decay: float = 0.01
    warmup: float = 0.02
    clip: float = 1.0
    rows_per_step: int | None = None
    seed: int = 0
    prior: Mapping[str, Any] = field(default_factory=lambda: dict(SHIPPED_PRIOR))
    architecture: TACOConfig = SHIPPED_CONFIG
    init_from: str | None = None
    prior_class: str = "mlp_scm"
    init_full: bool = False
    shuffle_codes: bool = False

    def __post_init__(self) -> None:
        owner = "Recipe"
        check_one_of("prior_class", self.prior_class, PRIOR_CLASSES, owner=owner)
        for name in ("use_compressor", "init_full", "shuffle_codes"):
            if not isinstance(getattr(self, name), bool):
                raise TypeError(f"{owner}: {name} must be a bool; got {getattr(self, name)!r}.")
        if self.init_full and self.init_from is None:
            raise ValueError(f"{owner}: init_full needs init_from; got init_from=None.")

    def init_path(self) -> Path | None:
        """The stem ``init_from`` names (a bare name is a file of the shipped folder)."""
        if self.init_from is None:
            return None
        path = Path(self.init_from)
        return checkpoint_dir("taco") / path if path.parent == Path(".") else path


def train_recipe(
    recipe: Recipe, resume: TrainingCheckpoint | None = None, progress: Progress = None
) -> TrainedStandin:
    """Meta-train the model ``recipe`` describes, deterministically; resumable through ``resume``.

    Returns
    -------
    icml26.core.TrainedStandin
        The trained model (eval mode), its :func:`~icml26.taco.training.checkpoint_config`, the
        recipe as recorded (the prior with all its keywords), the data and the mean loss of the
        last 10 steps.

    Examples
    --------
    >>> tiny = Recipe(use_compressor=False, steps=2, batch_size=2, prior={"n_rows": (30, 40)},
    ...               architecture=TACOConfig.small(emsize=16, nhead=2, nlayers=1))
    >>> trained = train_recipe(tiny)
    >>> trained.config["model"]["use_compressor"], sorted(trained.metrics)
    (False, ['final_loss_mean_last_10'])
    """
    from icml26.taco.model import TACOModel
    from icml26.taco.prior import MLPSCMPrior
    from icml26.taco.prior_v3 import MixturePrior
    from icml26.taco.training import checkpoint_config, load_checkpoint, train_taco

    if not isinstance(recipe, Recipe):
        raise TypeError(f"train_recipe: recipe must be a Recipe; got {type(recipe).__name__}.")
    prior_class = MixturePrior if recipe.prior_class == "mixture" else MLPSCMPrior
    prior = prior_class(**recipe.prior)
    model = TACOModel(recipe.architecture, use_compressor=recipe.use_compressor, seed=recipe.seed)
    init_from = recipe.init_path()
    if recipe.init_full:  # continue every weight (a resumed run then restores its own state)
        load_state_dict_strict(model, load_checkpoint(init_from).state_dict(), owner="Recipe")
        init_from = None
    history = train_taco(
        model,
        prior,
        steps=recipe.steps,
        batch_size=recipe.batch_size,
        lr=recipe.lr,
        weight_decay=recipe.weight_decay,
        warmup=recipe.warmup,
        clip=recipe.clip,
        seed=recipe.seed,
        init_from=init_from,
        rows_per_step=recipe.rows_per_step,
        resume=resume,
        progress=progress,
        shuffle_codes=recipe.shuffle_codes,
    )
    record = {
        "steps": recipe.steps,
        "batch_size": recipe.batch_size,
        "lr": recipe.lr,
        "weight_decay": recipe.weight_decay,
        "warmup": recipe.warmup,
        "clip": recipe.clip,
        "rows_per_step": recipe.rows_per_step,
        "seed": recipe.seed,
        "prior": dict(vars(prior)),
        "init_from": recipe.init_from,
        **({"prior_class": recipe.prior_class} if recipe.prior_class != "mlp_scm" else {}),
        **({"init_full": True} if recipe.init_full else {}),
        **({"shuffle_codes": True} if recipe.shuffle_codes else {}),
    }
    last = [h["loss"] for h in history[-10:]]
    return TrainedStandin(
        model=model.eval(),
        config=checkpoint_config(model),
        recipe=record,
        data=DATA.format(prior=prior_class.__name__),
        metrics={"final_loss_mean_last_10": sum(last) / len(last)},
    )


# issue 48 diagnosis: from scratch on prior v3 with the paper's fixed positional codes
_V3_FROM_SCRATCH = Recipe(
    use_compressor=False,
    steps=2000,
    batch_size=16,
    rows_per_step=1024,
    prior=STAGE_A_PRIOR,
    prior_class="mixture",
)

RECIPES: dict[str, Recipe] = {
    "pot_tiny": Recipe(use_compressor=False, steps=2000),
    "taco_tiny": Recipe(use_compressor=True, steps=2000, init_from="pot_tiny"),
    "pot_ext": Recipe(
        use_compressor=False,
        steps=2000,
        batch_size=16,
        rows_per_step=1024,
        prior=EXTENDED_PRIOR,
        init_from="pot_tiny",
    ),
    "taco_ext": Recipe(
        use_compressor=True,
        steps=1600,
        batch_size=16,
        rows_per_step=1024,
        prior=EXTENDED_PRIOR,
        init_from="pot_ext",
    ),
    "taco_long": Recipe(
        use_compressor=True,
        steps=4000,
        batch_size=16,
        rows_per_step=1024,
        prior=EXTENDED_PRIOR,
        init_from="taco_ext",
    ),
    # stage A (issue 48): today's E = 32 models continued on prior v3, ~7 and ~5 CPU-minutes
    "pot_v3": Recipe(
        use_compressor=False,
        steps=700,
        batch_size=16,
        rows_per_step=1024,
        prior=STAGE_A_PRIOR,
        prior_class="mixture",
        init_from="pot_ext",
        init_full=True,
    ),
    "taco_v3": Recipe(
        use_compressor=True,
        steps=700,
        batch_size=16,
        rows_per_step=1024,
        prior=STAGE_A_PRIOR,
        prior_class="mixture",
        init_from="taco_long",
        init_full=True,
    ),
    # issue 48 diagnosis: from scratch on prior v3, positional codes shuffled per dataset
    # (pot_v3s) against the paper's fixed codes (pot_v3f, the control); ~17 CPU-minutes each
    "pot_v3s": replace(_V3_FROM_SCRATCH, shuffle_codes=True),
    "pot_v3f": _V3_FROM_SCRATCH,
    # stage B (issue 48; not shipped yet): CPU-hours, see docs/taco.md for the cost
    "pot_b": Recipe(
        use_compressor=False,
        steps=20_000,
        batch_size=16,
        rows_per_step=2048,
        prior={},
        prior_class="mixture",
        architecture=STAGE_B_CONFIG,
    ),
    "taco_b": Recipe(
        use_compressor=True,
        steps=10_000,
        batch_size=16,
        rows_per_step=2048,
        prior={},
        prior_class="mixture",
        architecture=STAGE_B_CONFIG,
        init_from="pot_b",
    ),
}
"""The recipe of every shipped stand-in (recorded in its metadata's ``recipe``)."""

_DESCRIPTIONS = {
    "pot_tiny": "POT, stage 1: 2000 steps on the shipped prior (weights predate core v2)",
    "taco_tiny": "TACO from pot_tiny, 2000 steps on the shipped prior (weights predate core v2)",
    "pot_ext": "POT of the quick presets: pot_tiny continued 2000 steps on the extended prior",
    "taco_ext": "TACO from pot_ext, 1600 steps on the extended prior (start of taco_long)",
    "taco_long": "TACO of the quick presets: taco_ext continued 4000 steps on the extended prior",
    "pot_v3": "Stage A POT: pot_ext continued 700 steps on prior v3 (MixturePrior, F <= 32)",
    "taco_v3": "Stage A TACO: taco_long continued 700 steps on prior v3 (MixturePrior, F <= 32)",
    "pot_v3s": "POT (not shipped) from scratch, 2000 steps on prior v3 (F <= 32), positional "
    "codes shuffled per dataset",
    "pot_v3f": "POT (not shipped) from scratch, 2000 steps on prior v3 (F <= 32), fixed "
    "positional codes (control of pot_v3s)",
    "pot_b": "Stage B POT (not shipped): E=64, 4 layers, 64 features, 20000 steps on prior v3",
    "taco_b": "Stage B TACO (not shipped): from pot_b, 10000 steps on prior v3",
}


def _trainer(recipe: Recipe) -> Any:
    def train(resume: TrainingCheckpoint, progress: Progress) -> TrainedStandin:
        return train_recipe(recipe, resume, progress)

    return train


STANDINS = {
    name: Standin(
        name=name,
        system="taco",
        description=_DESCRIPTIONS[name],
        train=_trainer(recipe),
        checkpoint_every=100,  # a step takes ~0.5-1 s on one core: lose at most a minute or two
    )
    for name, recipe in RECIPES.items()
}
"""Shipped stand-ins, retrained by ``icml26 tool taco train-standin NAME``."""
