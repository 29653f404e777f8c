"""Predict-time cost of TACO vs the uncompressed POT, with and without a KV cache (spec §2.4, E1).

TACO (arXiv:2602.05649) claims up to 94× faster inference and 97 % less memory. We time the
predict step of (i) POT without cache: each test batch is run jointly with the N training rows,
(ii) POT with the training rows' keys/values cached per layer, and (iii) TACO with a compressed
context of K rows; we count activations analytically (rows × (G + 1) × E of one layer's token
grid) and measure the increase of peak RSS of a forked process over its RSS before predicting.

Deviations: peak RSS is read in a forked child (Linux ``fork``); the spec's fresh child process
would re-import torch for every measurement.
"""

from __future__ import annotations

import multiprocessing
import resource
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass

import torch

from icml26.core import Seed, check_positive_int, torch_generator
from icml26.taco.config import TACOConfig
from icml26.taco.encoder import compute_stats
from icml26.taco.model import TACOModel

__all__ = ["InferenceCost", "activation_elements", "benchmark_inference", "peak_rss_increase"]


def activation_elements(n_context: int, n_batch: int, n_features: int, config: TACOConfig) -> int:
    """Elements of one layer's token grid: (n_context + n_batch) · (G + 1) · E (spec §2.4).

    Example
    -------
    >>> activation_elements(100, 28, 10, TACOConfig.small())
    49152
    """
    G = -(-n_features // config.features_per_group)
    return (n_context + n_batch) * (G + 1) * config.emsize


def _rss_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * resource.getpagesize()


def _child(fn: Callable[..., object], args: tuple, queue: multiprocessing.Queue) -> None:
    before = _rss_bytes()
    fn(*args)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # KiB on Linux
    queue.put(max(0, peak - before))


def peak_rss_increase(fn: Callable[..., object], *args: object) -> int:
    """Bytes by which peak RSS rises while ``fn(*args)`` runs in a fresh (spawned) process.

    ``fn`` and ``args`` must be picklable. The result is the child's peak RSS minus its RSS just
    before the call (spec E1); a fresh process keeps earlier peaks of the caller out of it.

    Example
    -------
    >>> peak_rss_increase(bytearray, 64 * 2**20) >= 0
    True
    """
    context = multiprocessing.get_context("spawn")  # fork deadlocks torch's OpenMP pool
    queue = context.Queue()
    process = context.Process(target=_child, args=(fn, args, queue))
    process.start()
    result = queue.get()
    process.join()
    return int(result)


def _predict_pot(predictor: torch.nn.Module, X_train, y, batches) -> None:
    stats = compute_stats(X_train)
    with torch.no_grad():
        for X_b in batches:
            predictor(torch.cat([X_train, X_b], dim=1), y, stats)


def _predict_taco(model: TACOModel, context, batches) -> None:
    with torch.no_grad():
        for X_b in batches:
            model.predict_logits(context, X_b)


def _median_time(fn: Callable[[], object], repeats: int) -> float:
    fn()  # warm-up
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


@dataclass(frozen=True)
class InferenceCost:
    """Predict cost at one training-set size N and compression percentage p."""

    n_train: int
    percentage: float
    n_latents: int
    time_pot: float
    time_pot_cache: float
    time_taco: float
    time_compress: float
    activations_pot: int
    activations_taco: int
    rss_pot: int | None
    rss_taco: int | None


def benchmark_inference(
    model: TACOModel,
    n_train: int,
    percentages: tuple[float, ...],
    *,
    n_test: int = 1024,
    batch_size: int = 256,
    n_features: int = 10,
    repeats: int = 3,
    measure_rss: bool = False,
    seed: Seed = 0,
) -> list[InferenceCost]:
    """Time (median of ``repeats`` after a warm-up) predict of POT, POT+cache and TACO at each p.

    ``model`` must have a compressor; its predictor serves as POT (same architecture, so the cost
    comparison is like for like whatever the weights).

    Returns
    -------
    list of InferenceCost
        One per percentage; POT figures are shared.

    Raises
    ------
    ValueError
        If the model has no compressor or a size is not a positive integer.

    Example
    -------
    >>> costs = benchmark_inference(TACOModel(TACOConfig.small(nlayers=1)), 200, (10.0,),
    ...                             n_test=20, batch_size=10, repeats=1)
    >>> costs[0].n_latents
    20
    """
    owner = "benchmark_inference"
    if not model.use_compressor:
        raise ValueError(f"{owner}: model must have use_compressor=True; got False (bool).")
    for name, value in (("n_train", n_train), ("n_test", n_test), ("batch_size", batch_size)):
        check_positive_int(name, value, owner=owner)
    generator = torch_generator(seed)
    X = torch.randn(1, n_train + n_test, n_features, generator=generator)
    y = torch.randint(0, 2, (1, n_train), generator=generator)
    X_train, X_test = X[:, :n_train], X[:, n_train:]
    batches = X_test.split(batch_size, dim=1)
    predictor = model.predictor.eval()
    stats = compute_stats(X_train)

    def pot() -> None:
        _predict_pot(predictor, X_train, y, batches)

    costs = []
    with torch.no_grad():
        cache = predictor.build_cache(X_train, y)
        time_pot = _median_time(pot, repeats)
        time_cache = _median_time(
            lambda: [predictor.predict_with_cache(cache, X_b, stats) for X_b in batches], repeats
        )
        rss_pot = (
            peak_rss_increase(_predict_pot, predictor, X_train, y, batches) if measure_rss else None
        )
        for p in percentages:
            context = model.compress(X_train, y, percentage=p)

            def taco(context=context) -> None:
                _predict_taco(model, context, batches)

            K = context.n_latents
            costs.append(
                InferenceCost(
                    n_train=n_train,
                    percentage=p,
                    n_latents=K,
                    time_pot=time_pot,
                    time_pot_cache=time_cache,
                    time_taco=_median_time(taco, repeats),
                    time_compress=_median_time(
                        lambda p=p: model.compress(X_train, y, percentage=p), 1
                    ),
                    activations_pot=activation_elements(
                        n_train, batch_size, n_features, model.config
                    ),
                    activations_taco=activation_elements(K, batch_size, n_features, model.config),
                    rss_pot=rss_pot,
                    rss_taco=(
                        peak_rss_increase(_predict_taco, model, context, batches)
                        if measure_rss
                        else None
                    ),
                )
            )
    return costs
