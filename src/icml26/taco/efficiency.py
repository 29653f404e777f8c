"""Predict-time cost of TACO vs the uncompressed POT, with and without a KV cache (spec §2.4, E1).

TACO (arXiv:2602.05649) claims up to 94× faster inference and 97 % less memory. We time the
predict step of (i) POT without cache: each test batch is run jointly with the N training rows,
(ii) POT with the training rows' keys/values cached per layer, and (iii) TACO with a compressed
context of K rows, round-robin (``icml26.core.interleaved_median_seconds``); we count activations
(rows × (G + 1) × E of one layer's token grid) and multiply-adds (:func:`predict_macs`)
analytically and measure the increase of peak RSS of a forked process over its RSS before
predicting.

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
from queue import Empty

import torch

from icml26.core import (
    Seed,
    check_in_interval,
    check_positive_int,
    interleaved_median_seconds,
    torch_generator,
)
from icml26.taco.config import TACOConfig
from icml26.taco.encoder import check_config, compute_stats
from icml26.taco.model import TACOModel

MAX_BENCH_ROWS = 10**6  # benchmark_inference: n_train + n_test random rows
MAX_REPEATS = 1000  # benchmark_inference: timed repetitions

__all__ = [
    "InferenceCost",
    "activation_elements",
    "benchmark_inference",
    "peak_rss_increase",
    "predict_macs",
]


def activation_elements(n_context: int, n_batch: int, n_features: int, config: TACOConfig) -> int:
    """Elements of one layer's token grid: (n_context + n_batch) · (G + 1) · E (spec §2.4).

    Raises
    ------
    TypeError, ValueError
        If a count is not an integer (n_context, n_batch >= 0; n_features >= 1) or ``config``
        is not a TACOConfig.

    Examples
    --------
    >>> activation_elements(100, 28, 10, TACOConfig.small())
    49152
    """
    owner = "activation_elements"
    n_context = check_positive_int("n_context", n_context, owner=owner, minimum=0)
    n_batch = check_positive_int("n_batch", n_batch, owner=owner, minimum=0)
    n_features = check_positive_int("n_features", n_features, owner=owner)
    config = check_config(config, owner=owner)
    G = -(-n_features // config.features_per_group)
    return (n_context + n_batch) * (G + 1) * config.emsize


def predict_macs(n_query: int, n_context: int, n_features: int, config: TACOConfig) -> int:
    """Multiply-adds of one forward pass in which ``n_query`` rows attend to ``n_context`` rows.

    Per layer and token (C = ⌈F/g⌉ + 1 tokens per row, g features per group, width E): the
    projections and the MLP, 16 E², and feature attention over the row's C tokens, 2 C E; plus
    row attention, scores and values, 2 n_context E per token. Layer norms, the encoder and the
    decoder are left out:

        MACs = L · (n_query · C · (16 E² + 2 C E) + 2 · n_query · n_context · C · E)

    POT without a cache runs N + B rows attending to N; with a cache, B rows attending to N;
    TACO, K + B rows attending to K.

    Raises
    ------
    TypeError, ValueError
        If a count is not an integer (n_query, n_context >= 0; n_features >= 1) or ``config``
        is not a TACOConfig.

    Examples
    --------
    >>> predict_macs(1, 0, 2, TACOConfig.small(emsize=4, nlayers=1))
    544
    """
    owner = "predict_macs"
    n_query = check_positive_int("n_query", n_query, owner=owner, minimum=0)
    n_context = check_positive_int("n_context", n_context, owner=owner, minimum=0)
    n_features = check_positive_int("n_features", n_features, owner=owner)
    config = check_config(config, owner=owner)
    C, E = -(-n_features // config.features_per_group) + 1, config.emsize
    per_layer = n_query * C * (16 * E * E + 2 * C * E) + 2 * n_query * n_context * C * E
    return config.nlayers * per_layer


def _rss_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * resource.getpagesize()


def _child(fn: Callable[..., object], args: tuple, queue: multiprocessing.Queue) -> None:
    try:
        before = _rss_bytes()
        fn(*args)
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # KiB on Linux
        queue.put(("ok", max(0, peak - before)))
    except Exception as err:  # handed to the parent, which re-raises it
        queue.put(("error", err if _picklable(err) else RuntimeError(repr(err))))


def _picklable(value: object) -> bool:
    import pickle

    try:
        pickle.dumps(value)
    except Exception:
        return False
    return True


def peak_rss_increase(fn: Callable[..., object], *args: object) -> int:
    """Bytes by which peak RSS rises while ``fn(*args)`` runs in a fresh (spawned) process.

    ``fn`` and ``args`` must be picklable. The result is the child's peak RSS minus its RSS just
    before the call (spec E1); a fresh process keeps earlier peaks of the caller out of it. An
    exception raised by ``fn`` in the child is raised here.

    Raises
    ------
    TypeError
        If ``fn`` is not callable.
    RuntimeError
        If the child process dies without reporting (e.g. killed for memory).

    Examples
    --------
    >>> peak_rss_increase(bytearray, 64 * 2**20) >= 0
    True
    """
    if not callable(fn):
        raise TypeError(f"peak_rss_increase: fn must be callable; got {fn!r}.")
    context = multiprocessing.get_context("spawn")  # fork deadlocks torch's OpenMP pool
    queue = context.Queue()
    process = context.Process(target=_child, args=(fn, args, queue))
    process.start()
    while True:  # a child that dies without a word must not leave the parent waiting
        try:
            status, result = queue.get(timeout=0.5)
            break
        except Empty:
            if not process.is_alive() and queue.empty():
                process.join()
                raise RuntimeError(
                    f"peak_rss_increase: the child process died (exit code {process.exitcode})."
                ) from None
    process.join()
    if status == "error":
        raise result
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


@dataclass(frozen=True)
class InferenceCost:
    """Predict cost at one training-set size N and compression percentage p.

    ``time_*`` are median seconds (the clock), ``macs_*`` multiply-adds of all test batches
    (:func:`predict_macs`; compress: N + K rows attending to N), ``activations_*`` elements of
    one layer's token grid, ``rss_*`` bytes (``None`` unless measured). ``rounds_*`` hold the
    seconds of every timed round (the medians' samples, in round order): round i of POT and of
    TACO ran back to back, so their ratio is one paired replicate of the speed-up.
    """

    n_train: int
    percentage: float
    n_latents: int
    time_pot: float
    time_pot_cache: float
    time_taco: float
    time_compress: float
    macs_pot: int
    macs_pot_cache: int
    macs_taco: int
    macs_compress: int
    activations_pot: int
    activations_taco: int
    rss_pot: int | None
    rss_taco: int | None
    rounds_pot: tuple[float, ...] = ()
    rounds_pot_cache: tuple[float, ...] = ()
    rounds_taco: tuple[float, ...] = ()


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
    clock: Callable[[], float] = time.perf_counter,
) -> list[InferenceCost]:
    """Time predict of POT, POT+cache and TACO at each p; count their multiply-adds.

    ``model`` must have a compressor; its predictor serves as POT (same architecture, so the cost
    comparison is like for like whatever the weights). After one warm-up round, POT, POT+cache
    and TACO at every p are timed round-robin ``repeats`` times on ``clock``; the medians and
    every round's seconds (``rounds_*``) are kept. A spike of load on a shared machine slows
    every callable of its round alike. Compression is timed once after a warm-up.

    Parameters
    ----------
    clock
        Reads seconds (``time.perf_counter``; an experiment passes ``ctx.clock``).

    Returns
    -------
    list of InferenceCost
        One per percentage; POT figures are shared.

    Raises
    ------
    TypeError, ValueError
        If ``model`` is not a TACOModel with a compressor, a size is not a positive integer
        (``n_train + n_test <= 10**6``, ``n_features <= max_features``, ``repeats <= 1000``)
        or a percentage is outside (0, 100].

    Examples
    --------
    >>> costs = benchmark_inference(TACOModel(TACOConfig.small(nlayers=1)), 200, (10.0,),
    ...                             n_test=20, batch_size=10, repeats=1)
    >>> costs[0].n_latents, costs[0].macs_pot > costs[0].macs_taco
    (20, True)
    """
    owner = "benchmark_inference"
    if not isinstance(model, TACOModel):
        raise TypeError(f"{owner}: model must be a TACOModel; got {type(model).__name__}.")
    if not model.use_compressor:
        raise ValueError(f"{owner}: model must have use_compressor=True; got False (bool).")
    for name, value in (("n_train", n_train), ("n_test", n_test), ("batch_size", batch_size)):
        check_positive_int(name, value, owner=owner, maximum=MAX_BENCH_ROWS)
    if n_train + n_test > MAX_BENCH_ROWS:
        raise ValueError(
            f"{owner}: n_train + n_test must be <= {MAX_BENCH_ROWS}; got {n_train + n_test}."
        )
    check_positive_int("n_features", n_features, owner=owner, maximum=model.config.max_features)
    check_positive_int("repeats", repeats, owner=owner, maximum=MAX_REPEATS)
    if isinstance(percentages, str) or not isinstance(percentages, tuple | list):
        raise TypeError(f"{owner}: percentages must be a tuple of floats; got {percentages!r}.")
    percentages = tuple(
        check_in_interval("percentages", p, low=0, high=100, closed="right", owner=owner)
        for p in percentages
    )
    if not isinstance(measure_rss, bool):
        raise TypeError(f"{owner}: measure_rss must be a bool; got {measure_rss!r}.")
    if not callable(clock):
        raise TypeError(f"{owner}: clock must be callable; got {type(clock).__name__}.")
    generator = torch_generator(seed)
    dtype = model.predictor.dtype
    X = torch.randn(1, n_train + n_test, n_features, generator=generator, dtype=dtype)
    y = torch.randint(0, 2, (1, n_train), generator=generator)
    X_train, X_test = X[:, :n_train], X[:, n_train:]
    batches = X_test.split(batch_size, dim=1)
    predictor = model.predictor.eval()
    stats = compute_stats(X_train)
    config = model.config

    def macs(n_query: int, n_context: int) -> int:  # summed over the test batches
        return sum(
            predict_macs(n_query + b.shape[1], n_context, n_features, config) for b in batches
        )

    with torch.no_grad():
        cache = predictor.build_cache(X_train, y)
        contexts = [model.compress(X_train, y, percentage=p) for p in percentages]
        fns = {
            "pot": lambda: _predict_pot(predictor, X_train, y, batches),
            "pot_cache": lambda: [predictor.predict_with_cache(cache, b, stats) for b in batches],
        }
        for i, context in enumerate(contexts):
            fns[f"taco_{i}"] = lambda context=context: _predict_taco(model, context, batches)
        # one round per call (warm-up before the first), so every round's seconds are kept
        rounds = [
            interleaved_median_seconds(fns, 1, warmup=int(r == 0), clock=clock)
            for r in range(repeats)
        ]
        samples = {name: tuple(t[name] for t in rounds) for name in fns}
        seconds = {name: statistics.median(ts) for name, ts in samples.items()}
        compress = interleaved_median_seconds(
            {
                f"compress_{i}": lambda p=p: model.compress(X_train, y, percentage=p)
                for i, p in enumerate(percentages)
            },
            1,
            warmup=1,
            clock=clock,
        )
        rss_pot = (
            peak_rss_increase(_predict_pot, predictor, X_train, y, batches) if measure_rss else None
        )
        costs = []
        for i, (p, context) in enumerate(zip(percentages, contexts, strict=True)):
            K = context.n_latents
            costs.append(
                InferenceCost(
                    n_train=n_train,
                    percentage=p,
                    n_latents=K,
                    time_pot=seconds["pot"],
                    time_pot_cache=seconds["pot_cache"],
                    time_taco=seconds[f"taco_{i}"],
                    time_compress=compress[f"compress_{i}"],
                    macs_pot=macs(n_train, n_train),
                    macs_pot_cache=macs(0, n_train),
                    macs_taco=macs(K, K),
                    macs_compress=predict_macs(n_train + K, n_train, n_features, config),
                    activations_pot=activation_elements(n_train, batch_size, n_features, config),
                    activations_taco=activation_elements(K, batch_size, n_features, config),
                    rss_pot=rss_pot,
                    rss_taco=(
                        peak_rss_increase(_predict_taco, model, context, batches)
                        if measure_rss
                        else None
                    ),
                    rounds_pot=samples["pot"],
                    rounds_pot_cache=samples["pot_cache"],
                    rounds_taco=samples[f"taco_{i}"],
                )
            )
    return costs
