"""Model selection of the TACO stand-ins on synthetic data only (issue 48; never the real panels).

For each candidate checkpoint: the held-out loss on prior v3 (``MixturePrior`` up to 32 columns,
``held_out_prior_loss``, nats per test row) and the competence panel (``competence_panel`` drawn
from a selection seed that no experiment uses) — mean POT − LR (POT candidates) or
TACO@4 % − LR (TACO candidates), paired per table.

Rule, fixed before the stage-A runs finished: a candidate replaces the shipped default only if
its competence-panel mean is higher by >= 0.005; within 0.005 the lower held-out prior-v3 loss
decides.

    python benchmarks/bench_taco_select.py [--pot pot_ext pot_v3] [--taco taco_long taco_v3]
        [--dir src/icml26/taco/checkpoints] [--tables 12] [--datasets 100]
"""

import argparse
from pathlib import Path

import numpy as np
import torch

from icml26.core import checkpoint_dir
from icml26.taco import MixturePrior, competence_panel, load_checkpoint
from icml26.taco.experiments.competence import CompetenceConfig, paired, score_panel
from icml26.taco.standins import STAGE_A_PRIOR
from icml26.taco.training import held_out_prior_loss

SELECTION_SEED = 100  # the experiments draw their panels from ctx seeds 0, 1, ...


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pot", nargs="*", default=["pot_ext", "pot_v3"])
    parser.add_argument("--taco", nargs="*", default=["taco_long", "taco_v3"])
    parser.add_argument("--dir", type=Path, default=checkpoint_dir("taco"))
    parser.add_argument("--tables", type=int, default=12)
    parser.add_argument("--datasets", type=int, default=100)
    args = parser.parse_args()
    torch.set_num_threads(1)
    panel = competence_panel(args.tables, seed=SELECTION_SEED)
    prior = MixturePrior(**STAGE_A_PRIOR)
    print(f"{'candidate':12s} {'prior-v3 loss':>14s} {'label-freq':>10s} {'panel mean':>11s}")
    for names, is_taco in ((args.pot, False), (args.taco, True)):
        for name in names:
            print(f"{name} ...", flush=True)
            stem = Path(name) if "/" in name else args.dir / name  # a path, or a shipped name
            loss = held_out_prior_loss(load_checkpoint(stem), prior, n_datasets=args.datasets)
            key = "taco_checkpoint" if is_taco else "pot_checkpoint"
            config = CompetenceConfig(n_tables=args.tables, **{key: str(stem)})
            auc = score_panel(panel, config, 0, np.random.default_rng(0))["auc"]
            diff = paired(auc, "taco_4" if is_taco else "pot", "lr")
            label = "TACO@4 % − LR" if is_taco else "POT − LR"
            print(f"{name:12s} {loss['model']:14.4f} {loss['label_frequency']:10.4f} "
                  f"{np.mean(diff):+11.4f}  ({label})")  # fmt: skip


if __name__ == "__main__":
    main()
