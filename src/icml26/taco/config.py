"""Architecture config of the TACO backbone (spec §2.1, §5.1).

"End-to-End Compression for Tabular Foundation Models" (TACO, arXiv:2602.05649). The defaults are
the released models' (E = 192, 12 layers, 6 heads, g = 2, 10 classes, 100 features); the small
CPU reproduction uses ``TACOConfig.small()``.

Deviations: only the per-feature tokenization is implemented (the spec's per-row CPU fallback was
not needed at our sizes).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from icml26.core import check_positive_int

__all__ = ["SHIPPED_CONFIG", "TACOConfig"]


@dataclass(frozen=True)
class TACOConfig:
    """Shape of one per-feature transformer backbone (compressor and predictor share it).

    Parameters
    ----------
    emsize
        Token width E; must be divisible by ``nhead`` and by 4 (the positional code has E/4 dims).
    nlayers
        Number of transformer layers.
    nhead
        Attention heads.
    features_per_group
        Features g packed into one token.
    max_classes
        Output classes C of the decoder; datasets may have fewer.
    max_features
        Largest number of input features the positional embedding table covers.
    feature_pos_seed
        Seed of the fixed random feature-position vectors r_f.
    pre_norm
        ``False`` (released models): post-norm, LayerNorm(x + f(x)). ``True``: pre-norm,
        x + f(LayerNorm(x)); the tiny shipped models use it because post-norm plus zero-init
        stays on the chance-loss plateau for thousands of CPU steps (docs/taco.md).

    Raises
    ------
    TypeError, ValueError
        On a non-integer or out-of-range field.

    Examples
    --------
    >>> TACOConfig.small().emsize
    64
    """

    emsize: int = 192
    nlayers: int = 12
    nhead: int = 6
    features_per_group: int = 2
    max_classes: int = 10
    max_features: int = 100
    feature_pos_seed: int = 0
    pre_norm: bool = False

    def __post_init__(self) -> None:
        if not isinstance(self.pre_norm, bool):
            raise TypeError(
                f"TACOConfig: pre_norm must be a bool; got {type(self.pre_norm).__name__}."
            )
        for f in dataclasses.fields(self):
            if f.name == "pre_norm":
                continue
            minimum = 0 if f.name == "feature_pos_seed" else 1
            check_positive_int(f.name, getattr(self, f.name), owner="TACOConfig", minimum=minimum)
        if self.emsize % self.nhead or self.emsize % 4:
            raise ValueError(
                "TACOConfig: emsize must be divisible by nhead and by 4; "
                f"got emsize={self.emsize!r} (int), nhead={self.nhead!r} (int)."
            )
        if self.max_classes < 2:
            raise ValueError(f"TACOConfig: max_classes must be >= 2; got {self.max_classes!r}.")

    @classmethod
    def small(cls, **changes: Any) -> TACOConfig:
        """The spec's scaled-down CPU config (§5.1), with optional field changes."""
        base = cls(emsize=64, nlayers=4, nhead=4, max_classes=4, max_features=16)
        return dataclasses.replace(base, **changes)

    @property
    def max_groups(self) -> int:
        """Number of feature tokens G for ``max_features`` features."""
        return -(-self.max_features // self.features_per_group)

    def to_dict(self) -> dict[str, int | bool]:
        """JSON-able fields (the inverse is ``TACOConfig(**d)``)."""
        return dataclasses.asdict(self)


SHIPPED_CONFIG = TACOConfig(
    emsize=32, nlayers=3, nhead=4, max_classes=4, max_features=32, pre_norm=True
)
"""The architecture of the shipped stand-ins (:mod:`icml26.taco.standins`)."""
