"""Does a POT backbone read every column, or only the first feature group? (issue 48 diagnosis)

For each checkpoint, on binary sparse GLMs with one informative column among F = 10 (SNR 4,
logistic link, 512 training and 512 test rows), the backbone alone (one forward, no ensemble
rotation) is scored with the informative column moved to the first, middle and last position:
ROC-AUC minus the Bayes AUC, mean over ``--reps`` tables. A backbone that reads every column
scores the same at every position; the shipped ones (2026-12-07) are near the Bayes AUC only
when the column is first and near chance otherwise. Then the per-column permutation importance
(increase of the test loss, nats) on 16 MLP-SCM prior tables with F = 10, where every column
carries signal. The gate of the code-shuffle experiment (docs/taco.md, "Shuffled positional
codes"): the middle and last positions within ``--gate`` (0.05) AUC of the first, and the column
read at all (the best position at least ``--read`` (−0.10) from the Bayes AUC; chance is about
−0.45), so that a backbone at chance everywhere does not pass.

    python benchmarks/bench_taco_position.py [pot_ext pot_v3 ...] [--reps 4] [--gate 0.05]
"""

import argparse
from pathlib import Path

import numpy as np
import torch

from icml26.core import checkpoint_dir
from icml26.taco import MLPSCMPrior, load_checkpoint, roc_auc
from icml26.taco.prior_v3 import sparse_glm_table

N_FEATURES, N_TRAIN = 10, 512


def position_gap(model, position: int, reps: int) -> float:
    """Mean AUC − Bayes AUC with the one informative column at ``position``."""
    gaps = []
    for rep in range(reps):
        rng = np.random.default_rng(1000 + rep)
        X, y, posterior, active = sparse_glm_table(
            rng, 2 * N_TRAIN, N_FEATURES, 2, n_active=1, snr=4.0, link="logistic"
        )
        order = [c for c in range(N_FEATURES) if c != active[0]]
        order.insert(position, int(active[0]))
        X = torch.as_tensor(X[:, order][None], dtype=torch.float32)
        with torch.no_grad():
            logits = model.predictor(X, torch.as_tensor(y[None, :N_TRAIN]))
        proba = logits[0, :, :2].softmax(-1).numpy()
        test = slice(N_TRAIN, None)
        gaps.append(roc_auc(y[test], proba) - roc_auc(y[test], posterior[test]))
    return float(np.mean(gaps))


def column_importance(model) -> list[float]:
    """Test-loss increase (nats) when one column's values are permuted, per column."""
    batch = MLPSCMPrior(n_rows=(512, 512), n_features=(N_FEATURES, N_FEATURES)).sample(16, seed=3)
    n = batch.n_train

    def loss(X: torch.Tensor) -> float:
        with torch.no_grad():
            logits = model.predictor(X, batch.y[:, :n])
        target = batch.y[:, n:].flatten()
        return float(torch.nn.functional.cross_entropy(logits.flatten(0, 1), target))

    base, generator = loss(batch.X), torch.Generator().manual_seed(0)
    out = []
    for j in range(N_FEATURES):
        X = batch.X.clone()
        X[:, :, j] = X[:, torch.randperm(X.shape[1], generator=generator), j]
        out.append(loss(X) - base)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("checkpoints", nargs="*", default=["pot_ext", "pot_v3"])
    parser.add_argument("--reps", type=int, default=4)
    parser.add_argument("--gate", type=float, default=0.05)
    parser.add_argument("--read", type=float, default=-0.10)
    args = parser.parse_args()
    torch.set_num_threads(1)
    positions = {"first": 0, "middle": N_FEATURES // 2, "last": N_FEATURES - 1}
    for name in args.checkpoints:
        stem = Path(name) if "/" in name else checkpoint_dir("taco") / name
        model = load_checkpoint(stem).eval()
        gaps = {k: position_gap(model, p, args.reps) for k, p in positions.items()}
        importance = column_importance(model)
        print(f"{name}: AUC - Bayes by position of the informative column (F = {N_FEATURES}): "
              + ", ".join(f"{k} {v:+.3f}" for k, v in gaps.items()))  # fmt: skip
        print(f"{name}: permutation importance per column (nats): "
              + " ".join(f"{v:+.3f}" for v in importance))  # fmt: skip
        spread = max(abs(gaps["first"] - gaps[k]) for k in ("middle", "last"))
        best = max(gaps.values())
        verdict = "passes" if spread <= args.gate and best >= args.read else "fails"
        print(f"{name}: gate max |first - middle|, |first - last| = {spread:.3f} "
              f"(<= {args.gate}) and best {best:+.3f} (>= {args.read}): {verdict}")  # fmt: skip


if __name__ == "__main__":
    main()
