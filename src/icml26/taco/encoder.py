"""Cell, label and feature-position encoders of the per-feature transformer (spec §2.1 steps 1-4).

TACO (arXiv:2602.05649), backbone taken from TabPFN v2. All statistics come from the training
rows only, and are kept in :class:`EncoderStats` so that test rows can be encoded after the raw
training table is gone (spec §2.2, "Compression").

Deviations (inferred): the standard deviation is the population one and a constant feature gets
std 1; a feature counts as "used" when it is non-constant on the training rows; the hidden test
label is imputed with 0 before its NaN indicator is appended.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

import torch
from torch import nn

from icml26.core import Seed, seeded_default_init
from icml26.taco.config import TACOConfig

__all__ = ["EncoderStats", "InputEncoder", "compute_stats"]

NAN_INDICATOR, POS_INF_INDICATOR, NEG_INF_INDICATOR = -2.0, 2.0, 4.0
CLIP = 100.0


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

    @property
    def n_features(self) -> int:
        """Number of raw features F."""
        return int(self.feature_mean.shape[-1])

    def to(self, device: str | torch.device) -> EncoderStats:
        """The same statistics on ``device``."""
        return EncoderStats(**{f.name: getattr(self, f.name).to(device) for f in fields(self)})

    def detach(self) -> EncoderStats:
        """The same statistics without autograd history."""
        return EncoderStats(**{f.name: getattr(self, f.name).detach() for f in fields(self)})

    def to_tensors(self, prefix: str = "stats.") -> dict[str, torch.Tensor]:
        """A flat ``{name: tensor}`` dict (for safetensors)."""
        return {prefix + f.name: getattr(self, f.name).contiguous() for f in fields(self)}

    @classmethod
    def from_tensors(cls, tensors: dict[str, torch.Tensor], prefix: str = "stats.") -> EncoderStats:
        """Inverse of :meth:`to_tensors`."""
        return cls(**{f.name: tensors[prefix + f.name] for f in fields(cls)})


def compute_stats(X_train: torch.Tensor) -> EncoderStats:
    """Statistics of the training rows ``X_train`` (B, N, F); N may be 1.

    mean_f = mean of finite x_nf; x' = x with non-finite cells replaced by mean_f;
    mu_f, sigma_f = mean and population std of x'_nf over n; used_f = x'_f not constant.

    Example
    -------
    >>> compute_stats(torch.tensor([[[1.0], [3.0]]])).norm_std
    tensor([[1.]])
    """
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
        """Feature tokens of rows ``X`` (B, T, F) -> (B, T, G, E)."""
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
        return tokens + self.pos(self.pos_code[:G])  # (G, E) broadcast over rows

    def targets(self, y_train: torch.Tensor, n_rows: int) -> torch.Tensor:
        """Target tokens (B, n_rows, 1, E): the first N rows labelled, the rest hidden."""
        B, N = y_train.shape
        dtype = self.label.weight.dtype
        value = torch.zeros(B, n_rows, device=y_train.device, dtype=dtype)
        value[:, :N] = y_train.to(dtype)
        hidden = torch.ones(B, n_rows, device=y_train.device, dtype=dtype)
        hidden[:, :N] = 0.0
        return self.label(torch.stack([value, hidden], dim=-1))[:, :, None]

    def forward(self, X: torch.Tensor, y_train: torch.Tensor, stats: EncoderStats) -> torch.Tensor:
        """Token grid (B, T, G + 1, E) of ``X`` (B, T, F) with ``y_train`` (B, N) on the first N."""
        return torch.cat([self.cells(X, stats), self.targets(y_train, X.shape[1])], dim=2)
