"""Shipped behaviour-cloned TinyARVLA policies: save, load, and the command that trains them.

SCALE is a test-time method applied to an already trained VLA. The quick reproduction therefore
evaluates a shipped policy instead of training one (about 6 CPU-minutes). A policy is
``<stem>.pt`` (the state dict, read with ``weights_only=True``) beside ``<stem>.json`` (the
TinyARVLA keywords, the recipe and the final BC loss). The shipped ``reach_quick`` comes from::

    OMP_NUM_THREADS=1 python -m icml26.scale.policies --demos 3000 --steps 6000 \\
        --d-vision 32 --d-model 48 --layers 2 --mlp-ratio 2 --walls 1 1 \\
        --out src/icml26/scale/checkpoints/reach_quick
"""

from __future__ import annotations

import argparse
import json
import logging
from pathlib import Path
from typing import Any

import numpy as np
import torch

from icml26.core.validation import Seed, check_in_interval, check_positive_int
from icml26.scale.env import AmbiguousReach2DEnv
from icml26.scale.model import TinyARVLA
from icml26.scale.training import collect_demonstrations, train_bc

__all__ = ["SHIPPED_POLICIES", "load_policy", "save_policy", "train_policy"]

_LOG = logging.getLogger(__name__)
CHECKPOINT_DIR = Path(__file__).parent / "checkpoints"
SHIPPED_POLICIES = ("reach_quick",)


def _files(stem: str | Path) -> tuple[Path, Path]:
    """The ``.pt`` and ``.json`` files of a stem (which may name either file)."""
    text = str(stem)
    if text.endswith((".pt", ".json")):
        text = text.rsplit(".", 1)[0]
    return Path(text + ".pt"), Path(text + ".json")


def save_policy(model: TinyARVLA, path: str | Path, recipe: dict[str, Any]) -> Path:
    """Write ``model`` to ``<path>.pt`` and ``<path>.json`` (keywords, recipe); returns the stem.

    Example
    -------
    >>> import tempfile
    >>> model = TinyARVLA(d_vision=16, d_model=16, seed=0)
    >>> stem = save_policy(model, tempfile.mkdtemp() + "/policy", {})
    >>> load_policy(stem)[0].config["d_model"]
    16
    """
    if not isinstance(model, TinyARVLA):
        raise TypeError(f"save_policy: model must be a TinyARVLA; got {type(model).__name__}.")
    if not isinstance(recipe, dict):
        raise TypeError(f"save_policy: recipe must be a dict; got {type(recipe).__name__}.")
    if not isinstance(path, str | Path):
        raise TypeError(f"save_policy: path must be a str or Path; got {type(path).__name__}.")
    weights, meta_file = _files(path)
    weights.parent.mkdir(parents=True, exist_ok=True)
    torch.save(model.state_dict(), weights)
    meta = {"model": model.config, "recipe": recipe}
    meta_file.write_text(json.dumps(meta, indent=2) + "\n")
    return weights.with_suffix("")


def load_policy(name_or_path: str | Path) -> tuple[TinyARVLA, dict[str, Any]]:
    """Load a shipped policy by name (:data:`SHIPPED_POLICIES`) or a saved stem.

    Returns the model in eval mode and its metadata (``{"model": keywords, "recipe": ...}``).

    Example
    -------
    >>> model, meta = load_policy("reach_quick")
    >>> meta["recipe"]["demos"], meta["recipe"]["steps"]
    (3000, 6000)
    """
    if not isinstance(name_or_path, str | Path):
        raise TypeError(
            f"load_policy: name_or_path must be a str or Path; got {type(name_or_path).__name__}."
        )
    if isinstance(name_or_path, str) and name_or_path in SHIPPED_POLICIES:
        name_or_path = CHECKPOINT_DIR / name_or_path
    weights, meta_file = _files(name_or_path)
    if not (weights.is_file() and meta_file.is_file()):
        raise ValueError(
            f"load_policy: name_or_path must be one of {list(SHIPPED_POLICIES)} or a stem with "
            f"a .pt and a .json file; got {str(name_or_path)!r}."
        )
    meta = json.loads(meta_file.read_text())
    model = TinyARVLA(**meta["model"], seed=0)
    model.load_state_dict(torch.load(weights, weights_only=True))
    model.eval()
    return model, meta


def train_policy(
    demos: int = 3000,
    steps: int = 6000,
    batch_size: int = 64,
    lr: float = 1e-3,
    walls: tuple[int, int] = (1, 1),
    seed: Seed = 0,
    **model_kwargs: Any,
) -> tuple[TinyARVLA, list[float]]:
    """Roll out ``demos`` expert episodes on the ID split and behaviour-clone a TinyARVLA.

    ``seed`` seeds the demonstrations, the initialisation and the minibatches; ``model_kwargs``
    go to :class:`TinyARVLA`. Returns the trained model (eval mode) and its per-step losses.

    Example
    -------
    >>> model, losses = train_policy(demos=2, steps=3, batch_size=4, d_vision=16, d_model=16)
    >>> len(losses)
    3
    """
    owner = "train_policy"
    demos = check_positive_int("demos", demos, owner=owner, maximum=100_000)
    steps = check_positive_int("steps", steps, owner=owner, maximum=10**6)
    batch_size = check_positive_int("batch_size", batch_size, owner=owner, maximum=4096)
    lr = check_in_interval("lr", lr, low=0.0, high=1.0, closed="right", owner=owner)
    if (
        not isinstance(walls, tuple | list)
        or len(walls) != 2
        or not all(isinstance(w, int) and not isinstance(w, bool) for w in walls)
        or not 0 <= walls[0] <= walls[1] <= 3
    ):
        raise ValueError(f"{owner}: walls must be two ints 0 <= low <= high <= 3; got {walls!r}.")
    env = AmbiguousReach2DEnv("id", n_walls=tuple(walls))
    data = collect_demonstrations(env, demos, seed=seed)
    model = TinyARVLA(**model_kwargs, seed=seed)
    losses = train_bc(model, data, steps=steps, batch_size=batch_size, lr=lr, seed=seed)
    return model, losses


def main(argv: list[str] | None = None) -> None:
    """Command line: train a policy with :func:`train_policy` and save it."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--demos", type=int, default=3000)
    parser.add_argument("--steps", type=int, default=6000)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--walls", type=int, nargs=2, default=(1, 1))
    parser.add_argument("--d-vision", type=int, default=64)
    parser.add_argument("--d-model", type=int, default=96)
    parser.add_argument("--layers", type=int, default=3)
    parser.add_argument("--mlp-ratio", type=int, default=4)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO)
    recipe = {
        "demos": args.demos, "steps": args.steps, "batch_size": args.batch_size,
        "lr": args.lr, "walls": list(args.walls), "seed": args.seed,
    }  # fmt: skip
    model, losses = train_policy(
        args.demos, args.steps, args.batch_size, args.lr, tuple(args.walls), args.seed,
        d_vision=args.d_vision, d_model=args.d_model, vision_layers=args.layers,
        layers=args.layers, mlp_ratio=args.mlp_ratio,
    )  # fmt: skip
    recipe["final_bc_loss"] = float(np.mean(losses[-20:]))
    stem = save_policy(model, args.out, recipe)
    _LOG.info("saved %s (final BC loss %.4f)", stem, recipe["final_bc_loss"])


if __name__ == "__main__":
    main()
