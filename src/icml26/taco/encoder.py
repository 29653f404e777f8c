"""Cell, label and feature-position encoders of the per-feature transformer (spec §2.1 steps 1-4).

TACO (arXiv:2602.05649), backbone taken from TabPFN v2. All statistics come from the training
rows only, and are kept in :class:`EncoderStats` so that test rows can be encoded after the raw
training table is gone (spec §2.2, "Compression").

Deviations (inferred): the standard deviation is the population one and a constant feature gets
std 1; a feature counts as "used" when it is non-constant on the training rows; the hidden test
label is imputed with 0 before its NaN indicator is appended. An optional ``code_order`` (one
permutation of the code table per dataset) reassigns the fixed codes to groups; it is a
training-time augmentation (``train_taco(shuffle_codes=True)``), not the paper's method, and
inference never uses it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, fields

import torch
from torch import nn

from icml26.core import Seed, check_positive_int, check_tensor, seeded_default_init
from icml26.taco.config import TACOConfig

__all__ = ["EncoderStats", "InputEncoder", "check_code_order", "compute_stats"]

NAN_INDICATOR, POS_INF_INDICATOR, NEG_INF_INDICATOR = -2.0, 2.0, 4.0
CLIP = 100.0
MAX_ROWS = 2**24  # rows of one token grid (row attention is quadratic in them)


def check_config(config: object, *, owner: str) -> TACOConfig:
    """``config`` if it is a :class:`TACOConfig`, else a ``TypeError`` naming ``config``."""
    if not isinstance(config, TACOConfig):
        raise TypeError(f"{owner}: config must be a TACOConfig; got {type(config).__name__}.")
    return config


@dataclass(frozen=True)
class EncoderStats:
    """Training-set statistics that the cell encoder needs, per dataset.

    Attributes
    ----------
    feature_mean
        (B, F) mean of the finite training values, used to impute NaN/±inf.
    norm_mean, norm_std
        (B, F) mean and std of the imputed training values (z-normalisation).
    used
        (B, F) bool, feature is non-constant on the training rows.
    """

    feature_mean: torch.Tensor
    norm_mean: torch.Tensor
    norm_std: torch.Tensor
    used: torch.Tensor

    def __post_init__(self) -> None:
        owner = "EncoderStats"
        mean = check_tensor("feature_mean", self.feature_mean, owner=owner, ndim=2, finite=True)
        if min(mean.shape) < 1:
            raise ValueError(
                f"{owner}: feature_mean must be (B, F) with B, F >= 1; got {tuple(mean.shape)}."
            )
        check_tensor("norm_mean", self.norm_mean, owner=owner, shape=mean.shape, finite=True)
        std = check_tensor("norm_std", self.norm_std, owner=owner, shape=mean.shape, finite=True)
        if bool((std <= 0).any()):
            raise ValueError(f"{owner}: norm_std must be > 0; got min {float(std.min())!r}.")
        used = check_tensor("used", self.used, owner=owner, shape=mean.shape, floating=False)
        if used.dtype != torch.bool:
            raise TypeError(f"{owner}: used must be a bool tensor; got dtype {used.dtype}.")
        dtypes = {t.dtype for t in (mean, self.norm_mean, std)}
        if len(dtypes) > 1:
            raise TypeError(
                f"{owner}: the statistics must share one dtype; got {sorted(map(str, dtypes))}."
            )

    @property
    def n_features(self) -> int:
        """Number of raw features F."""
        return int(self.feature_mean.shape[-1])

    def to(self, device: str | torch.device) -> EncoderStats:
        """The same statistics on ``device``."""
        device = as_device(device, owner="EncoderStats.to")
        return EncoderStats(**{f.name: getattr(self, f.name).to(device) for f in fields(self)})

    def detach(self) -> EncoderStats:
        """The same statistics without autograd history."""
        return EncoderStats(**{f.name: getattr(self, f.name).detach() for f in fields(self)})

    def to_tensors(self, prefix: str = "stats.") -> dict[str, torch.Tensor]:
        """A flat ``{name: tensor}`` dict (for safetensors)."""
        _check_prefix(prefix, "EncoderStats.to_tensors")
        return {prefix + f.name: getattr(self, f.name).contiguous() for f in fields(self)}

    @classmethod
    def from_tensors(cls, tensors: dict[str, torch.Tensor], prefix: str = "stats.") -> EncoderStats:
        """Inverse of :meth:`to_tensors`.

        Raises
        ------
        TypeError, ValueError
            If ``tensors`` is not a mapping holding every statistic under ``prefix``.
        """
        owner = "EncoderStats.from_tensors"
        _check_prefix(prefix, owner)
        if not isinstance(tensors, Mapping):
            raise TypeError(f"{owner}: tensors must be a mapping; got {type(tensors).__name__}.")
        missing = [prefix + f.name for f in fields(cls) if prefix + f.name not in tensors]
        if missing:
            raise ValueError(f"{owner}: tensors lacks {missing} (prefix {prefix!r}).")
        return cls(**{f.name: tensors[prefix + f.name] for f in fields(cls)})


def _check_prefix(prefix: object, owner: str) -> None:
    if not isinstance(prefix, str):
        raise TypeError(f"{owner}: prefix must be a str; got {type(prefix).__name__}.")


def as_device(device: object, *, owner: str, name: str = "device") -> torch.device:
    """``device`` as a ``torch.device``; an unknown device string is a ``ValueError``."""
    if not isinstance(device, str | torch.device):
        raise TypeError(f"{owner}: {name} must be a str or torch.device; got {device!r}.")
    try:
        return torch.device(device)
    except RuntimeError as err:
        raise ValueError(
            f"{owner}: {name} must name a torch device; got {device!r} ({err})."
        ) from None


def check_rows(
    name: str, X: object, *, owner: str, config: TACOConfig, dtype: torch.dtype, rows: int = 0
) -> torch.Tensor:
    """``X`` if it is a (B, T, F) tensor of the model's ``dtype`` with T >= ``rows``, B >= 1 and
    1 <= F <= ``config.max_features`` (NaN and ±inf cells are allowed: they are encoded)."""
    X = check_tensor(name, X, owner=owner, ndim=3)
    B, T, F = X.shape
    if B < 1 or rows > T or not 1 <= F <= config.max_features:
        raise ValueError(
            f"{owner}: {name} must be (B >= 1, T >= {rows}, 1 <= F <= {config.max_features}); "
            f"got {tuple(X.shape)}."
        )
    if X.dtype != dtype:
        raise TypeError(f"{owner}: {name} must have the model's dtype {dtype}; got {X.dtype}.")
    return X


def check_labels(
    name: str, y: object, *, owner: str, batch: int, max_rows: int, n_classes: int
) -> torch.Tensor:
    """``y`` if it is a (batch, N) tensor, 1 <= N <= ``max_rows``, of class ids < ``n_classes``."""
    y = check_tensor(name, y, owner=owner, ndim=2, floating=False)
    if y.is_complex() or y.dtype == torch.bool:
        raise TypeError(f"{owner}: {name} must hold integer class ids; got dtype {y.dtype}.")
    if y.shape[0] != batch or not 1 <= y.shape[1] <= max_rows:
        raise ValueError(
            f"{owner}: {name} must be (B = {batch}, 1 <= N <= {max_rows}); got {tuple(y.shape)}."
        )
    fractional = y.is_floating_point() and bool((y != y.round()).any())
    if fractional or bool((y < 0).any()) or bool((y >= n_classes).any()):
        raise ValueError(f"{owner}: {name} must hold class ids in range(0, {n_classes}).")
    return y


def check_code_order(
    code_order: object, *, owner: str, batch: int, config: TACOConfig
) -> torch.Tensor | None:
    """``code_order`` if it is ``None`` or a (batch, max_groups) integer tensor whose every row
    is a permutation of ``range(config.max_groups)``: row b gives group j of dataset b the
    positional code ``r[code_order[b, j]]`` (the training-time shuffle of ``train_taco``)."""
    if code_order is None:
        return None
    code_order = check_tensor("code_order", code_order, owner=owner, ndim=2, floating=False)
    G = config.max_groups
    if code_order.dtype == torch.bool or code_order.is_complex() or code_order.is_floating_point():
        raise TypeError(f"{owner}: code_order must hold integer code ids; got {code_order.dtype}.")
    if tuple(code_order.shape) != (batch, G):
        raise ValueError(
            f"{owner}: code_order must be (B, max_groups) = ({batch}, {G}); "
            f"got {tuple(code_order.shape)}."
        )
    identity = torch.arange(G, device=code_order.device).expand(batch, G)
    if not bool((code_order.sort(dim=1).values == identity).all()):
        raise ValueError(f"{owner}: every row of code_order must be a permutation of range({G}).")
    return code_order.long()


def check_stats(stats: object, *, owner: str, batch: int, n_features: int) -> EncoderStats:
    """``stats`` if it is an :class:`EncoderStats` of (batch, n_features)."""
    if not isinstance(stats, EncoderStats):
        raise TypeError(f"{owner}: stats must be an EncoderStats; got {type(stats).__name__}.")
    if tuple(stats.feature_mean.shape) != (batch, n_features):
        raise ValueError(
            f"{owner}: stats must be of (B, F) = ({batch}, {n_features}); "
            f"got {tuple(stats.feature_mean.shape)}."
        )
    return stats


def compute_stats(X_train: torch.Tensor) -> EncoderStats:
    """Statistics of the training rows ``X_train`` (B, N, F); N may be 1.

    mean_f = mean of finite x_nf; x' = x with non-finite cells replaced by mean_f;
    mu_f, sigma_f = mean and population std of x'_nf over n; used_f = x'_f not constant.

    Raises
    ------
    TypeError, ValueError
        If ``X_train`` is not a floating (B, N, F) tensor with B, N, F >= 1, or a finite value
        is so large that the std over the N rows overflows (beyond ``sqrt(max / N) / 2`` of the
        dtype).

    Examples
    --------
    >>> compute_stats(torch.tensor([[[1.0], [3.0]]])).norm_std
    tensor([[1.]])
    """
    X_train = check_tensor("X_train", X_train, owner="compute_stats", ndim=3)
    if min(X_train.shape) < 1:
        raise ValueError(
            f"compute_stats: X_train must be (B, N, F) with B, N, F >= 1; "
            f"got {tuple(X_train.shape)}."
        )
    # the std sums N squared deviations of up to twice the largest value: keep that finite
    limit = math.sqrt(torch.finfo(X_train.dtype).max / X_train.shape[1]) / 2
    if bool((X_train.abs() > limit).logical_and(torch.isfinite(X_train)).any()):
        raise ValueError(
            f"compute_stats: X_train's finite values must lie within ±{limit:.3g} for "
            f"{X_train.shape[1]} rows in {X_train.dtype} (their spread must have a finite std)."
        )
    return _compute_stats(X_train)


def _compute_stats(X_train: torch.Tensor) -> EncoderStats:
    finite = torch.isfinite(X_train)
    count = finite.sum(dim=1).clamp(min=1)
    feature_mean = torch.where(finite, X_train, 0.0).sum(dim=1) / count  # (B, F)
    imputed = torch.where(finite, X_train, feature_mean[:, None])
    norm_mean = imputed.mean(dim=1)
    norm_std = imputed.std(dim=1, correction=0)
    used = (imputed != imputed[:, :1]).any(dim=1)
    norm_std = torch.where(used & (norm_std > 0), norm_std, torch.ones_like(norm_std))
    return EncoderStats(feature_mean, norm_mean, norm_std, used)


class InputEncoder(nn.Module):
    """Turns raw rows and labels into the token grid (B, T, G + 1, E).

    Feature tokens: Linear([g normalised values ∥ g NaN/inf indicators]) + W_pos r_group;
    target token: Linear([label or 0, is-hidden]).

    Parameters
    ----------
    config
        Architecture (:class:`TACOConfig`); ``feature_pos_seed`` fixes the random codes r_f.
    seed
        Seeds the initialisation of the learned linear maps (torch's default init).
    """

    def __init__(self, config: TACOConfig, *, seed: Seed = 0) -> None:
        super().__init__()
        config = check_config(config, owner="InputEncoder")
        g, E = config.features_per_group, config.emsize
        self.config = config
        with seeded_default_init(seed):
            self.cell = nn.Linear(2 * g, E, bias=False)
            self.label = nn.Linear(2, E)
            self.pos = nn.Linear(E // 4, E)
        generator = torch.Generator().manual_seed(config.feature_pos_seed)
        # Fixed (not learned) random code per feature group, reproducible from the seed.
        self.register_buffer(
            "pos_code",
            torch.randn(config.max_groups, E // 4, generator=generator),
            persistent=False,
        )

    def cells(self, X: torch.Tensor, stats: EncoderStats) -> torch.Tensor:
        """Feature tokens of rows ``X`` (B, T, F) -> (B, T, G, E).

        Raises
        ------
        TypeError, ValueError
            If ``X`` is not a (B, T, F) tensor of the model's dtype with F <= max_features, or
            ``stats`` does not describe (B, F).
        """
        owner = "InputEncoder.cells"
        X = check_rows("X", X, owner=owner, config=self.config, dtype=self.cell.weight.dtype)
        check_stats(stats, owner=owner, batch=X.shape[0], n_features=X.shape[2])
        return self._cells(X, stats)

    def _cells(
        self, X: torch.Tensor, stats: EncoderStats, code_order: torch.Tensor | None = None
    ) -> torch.Tensor:
        B, T, F = X.shape
        g = self.config.features_per_group
        indicator = torch.zeros_like(X)
        indicator = torch.where(torch.isnan(X), NAN_INDICATOR, indicator)
        indicator = torch.where(torch.inf == X, POS_INF_INDICATOR, indicator)
        indicator = torch.where(-torch.inf == X, NEG_INF_INDICATOR, indicator)
        imputed = torch.where(torch.isfinite(X), X, stats.feature_mean[:, None])
        z = (imputed - stats.norm_mean[:, None]) / stats.norm_std[:, None]
        z = z.clamp(-CLIP, CLIP)
        G = -(-F // g)
        pad = G * g - F
        z = nn.functional.pad(z, (0, pad)).view(B, T, G, g)
        indicator = nn.functional.pad(indicator, (0, pad)).view(B, T, G, g)
        n_used = nn.functional.pad(stats.used.float(), (0, pad)).view(B, G, g).sum(-1)
        z = z * torch.sqrt(g / n_used.clamp(min=1.0))[:, None, :, None]  # normalize_by_used
        tokens = self.cell(torch.cat([z, indicator], dim=-1))  # (B, T, G, E)
        if code_order is None:  # the paper's assignment: group j gets code r_j
            return tokens + self.pos(self.pos_code[:G])  # (G, E) broadcast over rows
        return tokens + self.pos(self.pos_code[code_order[:, :G]])[:, None]  # (B, 1, G, E)

    def targets(self, y_train: torch.Tensor, n_rows: int) -> torch.Tensor:
        """Target tokens (B, n_rows, 1, E): the first N rows labelled, the rest hidden.

        Raises
        ------
        TypeError, ValueError
            If ``y_train`` is not (B, N) class ids or ``n_rows`` < N.
        """
        owner = "InputEncoder.targets"
        n_rows = check_positive_int("n_rows", n_rows, owner=owner, minimum=0, maximum=MAX_ROWS)
        y_train = check_tensor("y_train", y_train, owner=owner, ndim=2, floating=False)
        self._check_labels(y_train, owner, batch=max(1, y_train.shape[0]), n_rows=n_rows)
        return self._targets(y_train, n_rows)

    def _check_labels(self, y_train: torch.Tensor, owner: str, *, batch: int, n_rows: int) -> None:
        """(B, N) class ids, or (B, 0): every row hidden."""
        if y_train.shape[1]:
            check_labels(
                "y_train", y_train, owner=owner, batch=batch, max_rows=n_rows,
                n_classes=self.config.max_classes,
            )  # fmt: skip
        elif y_train.shape[0] != batch:
            raise ValueError(
                f"{owner}: y_train must have B = {batch} rows; got {y_train.shape[0]}."
            )

    def _targets(self, y_train: torch.Tensor, n_rows: int) -> torch.Tensor:
        B, N = y_train.shape
        dtype = self.label.weight.dtype
        value = torch.zeros(B, n_rows, device=y_train.device, dtype=dtype)
        value[:, :N] = y_train.to(dtype)
        hidden = torch.ones(B, n_rows, device=y_train.device, dtype=dtype)
        hidden[:, :N] = 0.0
        return self.label(torch.stack([value, hidden], dim=-1))[:, :, None]

    def forward(self, X: torch.Tensor, y_train: torch.Tensor, stats: EncoderStats) -> torch.Tensor:
        """Token grid (B, T, G + 1, E) of ``X`` (B, T, F) with ``y_train`` (B, N) on the first N.

        ``y_train`` may have N = 0 columns (every row hidden: test rows only).

        Raises
        ------
        TypeError, ValueError
            As :meth:`cells`, or if ``y_train`` is not (B, N <= T) class ids.
        """
        owner = "InputEncoder"
        X = check_rows("X", X, owner=owner, config=self.config, dtype=self.cell.weight.dtype)
        check_stats(stats, owner=owner, batch=X.shape[0], n_features=X.shape[2])
        y_train = check_tensor("y_train", y_train, owner=owner, ndim=2, floating=False)
        self._check_labels(y_train, owner, batch=X.shape[0], n_rows=X.shape[1])
        return self._forward(X, y_train, stats)

    def _forward(
        self,
        X: torch.Tensor,
        y_train: torch.Tensor,
        stats: EncoderStats,
        code_order: torch.Tensor | None = None,
    ) -> torch.Tensor:
        cells = self._cells(X, stats, code_order)
        return torch.cat([cells, self._targets(y_train, X.shape[1])], dim=2)
