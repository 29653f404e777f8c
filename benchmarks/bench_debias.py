"""debias benchmark: cost of bias-only debiasing vs full fine-tuning vs LoRA, and of certification.

One process, ratios against the anchors measured here:

* trainable parameters and time per optimiser step of ``debias_finetune`` with
  ``params="bias"`` (algorithm B), ``"all"`` (full fine-tuning) and ``"lora"`` (peft LoRA, r = 8,
  on every Linear / the attention query and value projections), on the toy intent net (batch 64)
  and on all-MiniLM-L6-v2 (batch 16, skipped with ``--no-minilm``);
* certification cost per prompt (n = 100 perturbations): one predict call per prompt block
  (``certify_many``) vs one call per perturbed input.

Step times are the median gap between consecutive ``progress`` callbacks after ``WARMUP`` steps
(the optimiser steps of one run, without the teacher pass before them); certification times are
medians of round-robin rounds (``interleaved_median_seconds``).

    python benchmarks/bench_debias.py [--no-minilm] [--steps 12]
"""

from __future__ import annotations

import argparse
import copy
import statistics
import time

import torch

from icml26.core import interleaved_median_seconds, torch_threads
from icml26.debias import (
    TextClassifier,
    batch_perturber,
    certify,
    certify_many,
    debias_finetune,
    intent_perturbation,
    load_minilm,
    lora_model,
    make_intent_texts,
    make_toy_intent_task,
    train_head,
    train_toy_model,
)

WARMUP = 2


def step_time(model, batches, perturb, params, steps, lr):
    """Median seconds per step of ``debias_finetune`` and the trainable-parameter count."""
    stamps = []

    def stamp(done, total, metrics):
        stamps.append(time.perf_counter())

    log = debias_finetune(model, batches, perturb, params=params, steps=steps, lr=lr,
                          progress=stamp)  # fmt: skip
    gaps = [b - a for a, b in zip(stamps[WARMUP:], stamps[WARMUP + 1 :], strict=False)]
    return statistics.median(gaps), log.n_trainable, log.n_total


def compare(name, make_model, lora_targets, batches, perturb, steps, lr):
    rows = {}
    for label, params in (("bias-only", "bias"), ("full FT", "all"), ("LoRA r=8", "lora")):
        model = make_model()
        if params == "lora":
            model = lora_model(model, lora_targets, r=8, seed=0)
        rows[label] = step_time(model, batches, perturb, params, steps, lr)
    full_t = rows["full FT"][0]
    print(f"\n{name}")
    print(f"{'method':<12}{'trainable':>12}{'% of total':>12}{'step (ms)':>12}{'time / full':>13}")
    for label, (t, n, total) in rows.items():
        print(f"{label:<12}{n:>12,}{100 * n / total:>11.3f}%{1e3 * t:>12.1f}{t / full_t:>13.2f}")


def certification_cost(task, model, n_prompts=40, n=100, repeats=3):
    @torch.no_grad()
    def predict(xs):
        return model(torch.stack(xs)).argmax(-1)

    @torch.no_grad()
    def predict_one_by_one(xs):
        return [int(model(x[None]).argmax(-1)) for x in xs]

    xs, ys = list(task.test_tokens[:n_prompts]), task.test_labels[:n_prompts].tolist()

    def batched():
        return certify_many(predict, xs, ys, task.perturb_example, n=n, seed=1,
                            prompts_per_call=20)  # fmt: skip

    def single():
        return [certify(predict_one_by_one, x, y, task.perturb_example, n=n, seed=1)
                for x, y in zip(xs, ys, strict=True)]  # fmt: skip

    if batched()[0] != single()[0]:  # prompt 0 draws the same stream in both modes
        raise RuntimeError("batched and one-by-one certificates differ")
    seconds = interleaved_median_seconds({"batched": batched, "single": single}, repeats)
    t_batched, t_single = seconds["batched"] / n_prompts, seconds["single"] / n_prompts
    print(f"\ncertification, toy net, n = {n} perturbations per prompt")
    print(f"{'mode':<28}{'ms / prompt':>12}{'ratio':>8}")
    print(f"{'batched (certify_many)':<28}{1e3 * t_batched:>12.1f}{1.0:>8.2f}")
    print(f"{'one input per call':<28}{1e3 * t_single:>12.1f}{t_single / t_batched:>8.2f}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--no-minilm", action="store_true")
    parser.add_argument("--steps", type=int, default=12)
    args = parser.parse_args()
    with torch_threads(1):
        task = make_toy_intent_task("systematic", seed=0)
        base = train_toy_model(task, seed=0)
        batches = [task.batch(task.train_tokens[i : i + 64]) for i in range(0, 2000, 64)]
        compare("toy intent net (10,436 parameters), batch 64", lambda: copy.deepcopy(base),
                ["fc1", "fc2", "head"], batches, task.perturb, 5 * args.steps, 1e-2)  # fmt: skip
        certification_cost(task, base)
    if args.no_minilm:
        return
    with torch_threads(1):  # on a shared 2-core box two threads were 5-15x slower
        encoder = load_minilm()
        data = make_intent_texts(64, seed=0)
        with torch.no_grad():
            emb = encoder(data.texts)
        head = train_head(emb, torch.tensor(data.labels), epochs=50, seed=0)
        texts = [data.texts[i : i + 16] for i in range(0, 64, 16)]
        pert = batch_perturber(intent_perturbation(data.keywords))
        compare("all-MiniLM-L6-v2 + MLP head, batch 16",
                lambda: TextClassifier(copy.deepcopy(encoder), copy.deepcopy(head)),
                ["query", "value"], texts, pert, args.steps, 1e-3)  # fmt: skip


if __name__ == "__main__":
    main()
