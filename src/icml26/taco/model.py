"""TACO: compressor + projection + predictor, chunked compression and the K rule (spec §2.2).

TACO (arXiv:2602.05649). The compressor C_φ reads the N labelled training rows plus label-hidden
copies of K seed rows; the final states Z of those copies, passed through the residual
projection R(z) = z + W₂ GELU(W₁ z) (W₂ = 0 at init, so R = id), are the compressed context. The
predictor P_θ then answers test rows attending only to the K context rows.

Deviations (inferred): chunks are near-equal contiguous splits of the (shuffled) training rows,
and the encoder statistics are those of the whole training set, shared by every chunk, so that
one set of statistics encodes the test rows.
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from safetensors.torch import load_file, save_file
from torch import nn

from icml26.core import (
    Seed,
    check_in_interval,
    check_one_of,
    check_positive_int,
    check_tensor,
    numpy_generator,
    seeded_default_init,
    torch_generator,
)
from icml26.taco.backbone import PerFeatureTransformer
from icml26.taco.config import TACOConfig
from icml26.taco.encoder import (
    EncoderStats,
    _compute_stats,
    check_code_order,
    check_config,
    check_labels,
    check_rows,
)

__all__ = [
    "RCP_CHOICES",
    "CompressedContext",
    "ResidualMLP",
    "TACOModel",
    "choose_percentage",
    "n_latents",
]

RCP_CHOICES = (1.0, 2.0, 4.0, 8.0, 16.0, 32.0)
MAX_WIDTH = 2**14  # ResidualMLP: token width E (its weights are 4 E² floats)
MAX_CHUNKS = 10**5  # choose_percentage: compression chunks it sums over
MAX_BISECTIONS = 200  # choose_percentage: float64 bisection is exhausted long before


def check_file_path(path: object, *, owner: str, name: str = "path") -> Path:
    """``path`` as a ``Path`` if it is a str/PathLike naming a file (not '' or a bare folder)."""
    if not isinstance(path, str | os.PathLike):
        raise TypeError(f"{owner}: {name} must be a str or PathLike; got {type(path).__name__}.")
    path = Path(path)
    if not path.name:
        raise ValueError(f"{owner}: {name} must name a file; got {str(path)!r}.")
    return path


def n_latents(n_train: int, percentage: float, k_min: int = 1) -> int:
    """K = max(k_min, min(N, ⌈N · p / 100⌉)).

    Parameters
    ----------
    n_train
        Training rows N (>= 1).
    percentage
        Row compression percentage p in (0, 100].
    k_min
        Smallest number of latents.

    Returns
    -------
    int
        The number of latents K.

    Raises
    ------
    ValueError
        If p is outside (0, 100] or N < 1.

    Examples
    --------
    >>> n_latents(1000, 1.0), n_latents(10, 1.0), n_latents(250, 4.0)
    (10, 1, 10)
    """
    n_train = check_positive_int("n_train", n_train, owner="n_latents")
    p = check_in_interval("percentage", percentage, low=0.0, high=100.0, closed="right")
    # Round N·p/100 to 9 significant digits first so that 250 · 4 / 100 is 10, not 10.000000002.
    return max(k_min, min(n_train, math.ceil(round(n_train * p / 100.0, 9))))


def chunk_sizes(n_train: int, max_chunk_size: int) -> list[int]:
    """Sizes of ⌈N / max_chunk_size⌉ near-equal chunks (each <= max_chunk_size)."""
    n_chunks = -(-n_train // max_chunk_size)
    base, extra = divmod(n_train, n_chunks)
    return [base + 1] * extra + [base] * (n_chunks - extra)


def choose_percentage(
    n_train: int, max_chunk_size: int, budget: int, *, k_min: int = 1, iterations: int = 60
) -> float:
    """Largest p in (0, 100] whose chunked K_total = Σ_chunks K(n_c, p) is <= ``budget``.

    Raises
    ------
    TypeError, ValueError
        If a count is not a positive integer, the rows split into more than ``MAX_CHUNKS =
        10**5`` chunks, ``iterations`` exceeds 200 bisections, or even k_min latents per chunk
        exceed the budget.

    Examples
    --------
    >>> p = choose_percentage(20_000, 10_000, 150)  # two chunks of 10 000 rows
    >>> 2 * n_latents(10_000, p)
    150
    """
    owner = "choose_percentage"
    n_train = check_positive_int("n_train", n_train, owner=owner)
    max_chunk_size = check_positive_int("max_chunk_size", max_chunk_size, owner=owner)
    budget = check_positive_int("budget", budget, owner=owner)
    k_min = check_positive_int("k_min", k_min, owner=owner)
    iterations = check_positive_int("iterations", iterations, owner=owner, maximum=MAX_BISECTIONS)
    if -(-n_train // max_chunk_size) > MAX_CHUNKS:
        raise ValueError(
            f"{owner}: n_train / max_chunk_size must give at most {MAX_CHUNKS} chunks; "
            f"got {n_train} / {max_chunk_size}."
        )
    sizes = chunk_sizes(n_train, max_chunk_size)

    def total(p: float) -> int:
        return sum(n_latents(n, p, k_min) for n in sizes)

    if k_min * len(sizes) > budget:
        raise ValueError(
            f"{owner}: budget must be >= k_min × number of chunks = {k_min * len(sizes)}; "
            f"got {budget!r} (int)."
        )
    if total(100.0) <= budget:
        return 100.0
    low, high = (
        0.0,
        100.0,
    )  # invariant: total(low) <= budget < total(high); total(0+) = k_min·chunks
    for _ in range(iterations):
        mid = (low + high) / 2
        low, high = (mid, high) if total(mid) <= budget else (low, mid)
    return low


def _check_seed_idx(seed_idx: object, n: int, owner: str) -> torch.Tensor:
    """``seed_idx`` if it holds K >= 1 distinct integer row ids in ``range(n)``."""
    seed_idx = check_tensor("seed_idx", seed_idx, owner=owner, ndim=1, floating=False)
    integer = not (seed_idx.is_complex() or seed_idx.dtype == torch.bool)
    if not integer or seed_idx.numel() == 0:
        raise ValueError(f"{owner}: seed_idx must hold K >= 1 integer row ids; got {seed_idx!r}.")
    in_range = bool((seed_idx >= 0).all()) and bool((seed_idx < n).all())
    if not in_range or seed_idx.unique().numel() != seed_idx.numel():
        raise ValueError(f"{owner}: seed_idx must hold distinct row ids in range(0, {n}).")
    return seed_idx


class ResidualMLP(nn.Module):
    """Projection R(z) = z + W₂ GELU(W₁ z); W₂ is zero-initialised, so R is the identity at init.

    Parameters
    ----------
    emsize
        Token width E.
    seed
        Seeds the initialisation of W₁ (torch's default init).
    """

    def __init__(self, emsize: int, *, seed: Seed = 0) -> None:
        super().__init__()
        self.emsize = check_positive_int("emsize", emsize, owner="ResidualMLP", maximum=MAX_WIDTH)
        with seeded_default_init(seed):
            self.up = nn.Linear(emsize, 2 * emsize)
            self.down = nn.Linear(2 * emsize, emsize)
        nn.init.zeros_(self.down.weight)
        nn.init.zeros_(self.down.bias)

    def forward(self, z: torch.Tensor) -> torch.Tensor:
        """R(z) for z (..., E).

        Raises
        ------
        TypeError, ValueError
            If ``z`` is not a tensor of the weights' dtype whose last axis has E entries.
        """
        z = check_tensor("z", z, owner="ResidualMLP")
        if z.ndim == 0 or z.shape[-1] != self.emsize or z.dtype != self.up.weight.dtype:
            raise ValueError(
                f"ResidualMLP: z must be (..., {self.emsize}) of {self.up.weight.dtype}; "
                f"got {tuple(z.shape)} {z.dtype}."
            )
        return z + self.down(nn.functional.gelu(self.up(z)))


@dataclass(frozen=True)
class CompressedContext:
    """What the predictor needs after ``compress``; the raw training table is no longer used.

    Attributes
    ----------
    latents
        (B, K_total, G + 1, E) projected compressor states R(Z), chunks concatenated in order.
    stats
        Encoder statistics of the raw training rows (to encode test rows).
    k_per_chunk
        K of every chunk; their sum is K_total.
    """

    latents: torch.Tensor
    stats: EncoderStats
    k_per_chunk: tuple[int, ...]

    def __post_init__(self) -> None:
        owner = "CompressedContext"
        latents = check_tensor("latents", self.latents, owner=owner, ndim=4)
        B, K, C, _ = latents.shape
        if min(B, K) < 1 or C < 2:
            raise ValueError(
                f"{owner}: latents must be (B, K_total, G + 1, E) with B, K_total >= 1, G >= 1; "
                f"got {tuple(latents.shape)}."
            )
        if not isinstance(self.stats, EncoderStats) or self.stats.feature_mean.shape[0] != B:
            raise TypeError(f"{owner}: stats must be the EncoderStats of the B = {B} datasets.")
        ks = self.k_per_chunk
        if not isinstance(ks, tuple | list) or not all(
            isinstance(k, int) and not isinstance(k, bool) and k >= 1 for k in ks
        ):
            raise TypeError(f"{owner}: k_per_chunk must be a tuple of ints >= 1; got {ks!r}.")
        if sum(ks) != K:
            raise ValueError(f"{owner}: k_per_chunk must sum to K_total = {K}; got {ks!r}.")
        object.__setattr__(self, "k_per_chunk", tuple(ks))

    @property
    def n_latents(self) -> int:
        """K_total."""
        return int(self.latents.shape[1])

    def save(self, path: str | Path) -> None:
        """Write the context to one safetensors file.

        Raises
        ------
        TypeError, ValueError
            If ``path`` is not a path naming a file.
        """
        path = check_file_path(path, owner="CompressedContext.save")
        tensors = {"latents": self.latents.detach().contiguous(), **self.stats.to_tensors()}
        save_file(tensors, str(path), metadata={"k_per_chunk": json.dumps(self.k_per_chunk)})

    @classmethod
    def load(cls, path: str | Path) -> CompressedContext:
        """Read a context written by :meth:`save`.

        Raises
        ------
        FileNotFoundError
            If there is no such file.
        TypeError, ValueError
            If ``path`` is not a path or the file holds no compressed context.
        """
        from safetensors import SafetensorError, safe_open

        owner = "CompressedContext.load"
        path = check_file_path(path, owner=owner)
        if not path.is_file():
            raise FileNotFoundError(f"{owner}: no such file {str(path)!r}.")
        try:
            with safe_open(str(path), framework="pt") as f:
                k_per_chunk = tuple(json.loads((f.metadata() or {})["k_per_chunk"]))
            tensors = load_file(str(path))
            return cls(tensors["latents"], EncoderStats.from_tensors(tensors), k_per_chunk)
        except (SafetensorError, KeyError, json.JSONDecodeError) as err:
            raise ValueError(
                f"{owner}: path {str(path)!r} holds no compressed context ({err})."
            ) from None


class TACOModel(nn.Module):
    """TACO (compressor C_φ, projection R, predictor P_θ) or, without compressor, POT.

    Parameters
    ----------
    config
        Backbone architecture shared by compressor and predictor.
    use_compressor
        ``False`` gives the uncompressed baseline (predictor alone, full training context).
    compression_percentage
        Default p in (0, 100] for ``compress`` and for training when ``rcp_sampling="none"``.
    rcp_choices
        Percentages drawn uniformly per training forward when ``rcp_sampling="uniform"``.
    rcp_sampling
        ``"uniform"`` or ``"none"``.
    k_min
        Smallest number of latents per chunk.
    max_chunk_size
        Training rows per compression chunk.
    seed
        Seeds the parameter initialisation; predictor, compressor and projection draw
        independent sub-streams from it. Global RNGs are left alone.

    Examples
    --------
    >>> model = TACOModel(TACOConfig.small(), seed=0)
    >>> X, y = torch.randn(1, 300, 6), torch.randint(0, 3, (1, 300))
    >>> ctx = model.compress(X, y, percentage=4.0)
    >>> ctx.n_latents, model.predict_logits(ctx, torch.randn(1, 7, 6)).shape
    (12, torch.Size([1, 7, 4]))
    """

    def __init__(
        self,
        config: TACOConfig,
        *,
        use_compressor: bool = True,
        compression_percentage: float = 4.0,
        rcp_choices: tuple[float, ...] = RCP_CHOICES,
        rcp_sampling: str = "uniform",
        k_min: int = 1,
        max_chunk_size: int = 10_000,
        seed: Seed = 0,
    ) -> None:
        super().__init__()
        owner = "TACOModel"
        self.config = check_config(config, owner=owner)
        self.use_compressor = bool(use_compressor)
        self.compression_percentage = check_in_interval(
            "compression_percentage", compression_percentage, low=0, high=100, closed="right"
        )
        self.rcp_choices = tuple(
            check_in_interval("rcp_choices", p, low=0, high=100, closed="right", owner=owner)
            for p in rcp_choices
        )
        self.rcp_sampling = check_one_of("rcp_sampling", rcp_sampling, ("uniform", "none"))
        self.k_min = check_positive_int("k_min", k_min, owner=owner)
        self.max_chunk_size = check_positive_int("max_chunk_size", max_chunk_size, owner=owner)
        generator = torch_generator(seed)
        self.predictor = PerFeatureTransformer(config, seed=generator)
        if self.use_compressor:
            self.compressor = PerFeatureTransformer(config, seed=generator)
            self.projection = ResidualMLP(config.emsize, seed=generator)

    def hparams(self) -> dict[str, object]:
        """Constructor keywords other than ``config`` and ``seed`` (JSON-able)."""
        return {
            "use_compressor": self.use_compressor,
            "compression_percentage": self.compression_percentage,
            "rcp_choices": list(self.rcp_choices),
            "rcp_sampling": self.rcp_sampling,
            "k_min": self.k_min,
            "max_chunk_size": self.max_chunk_size,
        }

    def n_latents(self, n_train: int, percentage: float | None = None) -> int:
        """K for one chunk of ``n_train`` rows at ``percentage`` (default: the model's p)."""
        p = self.compression_percentage if percentage is None else percentage
        return n_latents(n_train, p, self.k_min)

    def _compress_chunk(
        self,
        X: torch.Tensor,
        y: torch.Tensor,
        stats: EncoderStats,
        seed_idx: torch.Tensor,
        code_order: torch.Tensor | None = None,
    ) -> torch.Tensor:
        n = X.shape[1]
        rows = torch.cat([X, X[:, seed_idx]], dim=1)  # (B, n + K, F): seed copies, labels hidden
        tokens = self.compressor._encode(rows, y, stats, code_order)
        return self.projection(tokens[:, n:])  # (B, K, G + 1, E)

    def compress(
        self,
        X_train: torch.Tensor,
        y_train: torch.Tensor,
        *,
        percentage: float | None = None,
        seed_idx: torch.Tensor | None = None,
    ) -> CompressedContext:
        """Compress (B, N, F) labelled rows into K_total latents (chunked when N > max_chunk_size).

        The seed rows of a chunk are its last K rows unless ``seed_idx`` (K indices into the
        training rows; one chunk only) is given.

        Raises
        ------
        TypeError, ValueError
            If the model has no compressor, ``X_train`` is not (B, N >= 1, F) rows of the model's
            dtype, ``y_train`` not their (B, N) labels, ``percentage`` not in (0, 100], or
            ``seed_idx`` is not distinct row ids or is given with several chunks.
        """
        owner = "TACOModel.compress"
        if not self.use_compressor:
            raise ValueError("TACOModel: compress needs use_compressor=True; got False (bool).")
        X_train, y_train = self._train_rows(X_train, y_train, owner)
        if percentage is not None:
            check_in_interval(
                "percentage", percentage, low=0, high=100, closed="right", owner=owner
            )
        sizes = chunk_sizes(X_train.shape[1], self.max_chunk_size)
        if seed_idx is not None and len(sizes) > 1:
            raise ValueError(
                f"TACOModel: seed_idx needs a single chunk; got {len(sizes)} chunks (int)."
            )
        if seed_idx is not None:
            seed_idx = _check_seed_idx(seed_idx, X_train.shape[1], owner)
        return self._compress(X_train, y_train, percentage, seed_idx)

    def _compress(
        self,
        X_train: torch.Tensor,
        y_train: torch.Tensor,
        percentage: float | None,
        seed_idx: torch.Tensor | None = None,
        code_order: torch.Tensor | None = None,
    ) -> CompressedContext:
        stats = _compute_stats(X_train)
        latents, ks, start = [], [], 0
        for n in chunk_sizes(X_train.shape[1], self.max_chunk_size):
            X, y = X_train[:, start : start + n], y_train[:, start : start + n]
            k = self.n_latents(n, percentage)
            idx = torch.arange(n - k, n, device=X.device) if seed_idx is None else seed_idx
            latents.append(self._compress_chunk(X, y, stats, idx, code_order))
            ks.append(int(idx.numel()))
            start += n
        return CompressedContext(torch.cat(latents, dim=1), stats, tuple(ks))

    def predict_logits(self, context: CompressedContext, X_test: torch.Tensor) -> torch.Tensor:
        """Logits (B, M, max_classes) of test rows (B, M, F) from the compressed context.

        Raises
        ------
        TypeError, ValueError
            If ``context`` is not a CompressedContext of this model's width or ``X_test`` does
            not have its batch and features.
        """
        if not isinstance(context, CompressedContext):
            raise TypeError(
                f"TACOModel.predict_logits: context must be a CompressedContext; "
                f"got {type(context).__name__}."
            )
        return self.predictor.predict_with_context(context.latents, X_test, context.stats)

    def _train_rows(
        self, X_train: object, y_train: object, owner: str
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """(B, N >= 1, F) rows and their (B, N) labels."""
        X_train = check_rows(
            "X_train", X_train, owner=owner, config=self.config, dtype=self.predictor.dtype, rows=1
        )
        y_train = check_labels(
            "y_train", y_train, owner=owner, batch=X_train.shape[0], max_rows=X_train.shape[1],
            n_classes=self.config.max_classes,
        )  # fmt: skip
        if y_train.shape[1] != X_train.shape[1]:
            raise ValueError(
                f"{owner}: y_train must label every row of X_train ({X_train.shape[1]}); "
                f"got {y_train.shape[1]}."
            )
        return X_train, y_train

    def forward(
        self,
        X: torch.Tensor,
        y_train: torch.Tensor,
        *,
        percentage: float | None = None,
        seed: Seed = None,
        code_order: torch.Tensor | None = None,
    ) -> torch.Tensor:
        """Training path: logits (B, T - N, C) of the test rows of ``X`` (B, T, F).

        With a compressor, p is ``percentage`` or, under ``rcp_sampling="uniform"``, drawn
        uniformly from ``rcp_choices`` with ``seed``; the gradient reaches C_φ, R and P_θ.
        ``code_order`` (B, max_groups), one permutation per dataset, gives feature group j the
        positional code ``r[code_order[b, j]]`` in the compressor and the predictor alike
        (``train_taco(shuffle_codes=True)``); ``None`` is the paper's fixed assignment r_j.
        """
        owner = "TACOModel"
        X = check_rows("X", X, owner=owner, config=self.config, dtype=self.predictor.dtype, rows=1)
        y_train = check_labels(
            "y_train", y_train, owner=owner, batch=X.shape[0], max_rows=X.shape[1],
            n_classes=self.config.max_classes,
        )  # fmt: skip
        code_order = check_code_order(code_order, owner=owner, batch=X.shape[0], config=self.config)
        n_train = y_train.shape[1]
        if not self.use_compressor:
            return self.predictor(X, y_train, code_order=code_order)
        if percentage is None and self.rcp_sampling == "uniform":
            percentage = float(numpy_generator(seed).choice(np.asarray(self.rcp_choices)))
        if percentage is not None:
            check_in_interval(
                "percentage", percentage, low=0, high=100, closed="right", owner=owner
            )
        context = self._compress(X[:, :n_train], y_train, percentage, code_order=code_order)
        return self.predictor._predict_with_context(
            context.latents, X[:, n_train:], context.stats, code_order
        )
