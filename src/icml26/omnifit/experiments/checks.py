"""The field checks of the omnifit experiment configs (issue 40): a bad ``--set`` exits 2 before
any task runs. The bounds are those of the library functions that consume each field."""

from __future__ import annotations

from typing import Any

from icml26.core import check_fields, check_in_interval, check_positive_int


def check_standin_config(config: Any, min_train_samples: int = 1) -> None:
    """Validate a ``StandInConfig`` (or a subclass) in its ``__post_init__`` (issue 40)."""
    # the bounds of TinyOmniConfig (mirrored: building a preset must not import torch),
    # make_dataset, train_standin / train_tinyomni, lahp_calibrate and OmniFitCompressor
    owner = type(config).__name__
    check_fields(config)
    for name, low, high in (
        ("n_layers", 1, 256),
        ("d", 1, 4096),
        ("n_heads", 1, config.d),
        ("d_ff", 1, 16384),
        ("windows", 2, 256),
        ("train_samples", min_train_samples, 200_000),
        ("epochs", 1, 10_000),
        ("batch_size", 1, 100_000),
        ("test_samples", 1, 200_000),
        ("calib_samples", 1, 200_000),
        ("M", 1, 100_000),
        ("k", 1, 100_000),
    ):
        check_positive_int(name, getattr(config, name), minimum=low, maximum=high, owner=owner)
    if config.d % config.n_heads or (config.d // config.n_heads) % 2:
        raise ValueError(
            f"{owner}: d / n_heads must be an even integer; got d={config.d}, "
            f"n_heads={config.n_heads}."
        )
    check_in_interval("clutter", config.clutter, low=0.0, high=1.0, owner=owner)
    check_in_interval("lr", config.lr, low=0.0, high=1.0, closed="right", owner=owner)
    check_in_interval("infonce_weight", config.infonce_weight, low=0.0, high=1e3, owner=owner)
    check_in_interval("lam", config.lam, low=0.0, high=1e6, owner=owner)
    check_in_interval("delta", config.delta, low=0.0, high=1.0, closed="neither", owner=owner)
    check_retention("r_min", config.r_min, owner)


def check_retention(name: str, value: float, owner: str, *, at_least: float = 0.0) -> None:
    """Raise ``ValueError`` naming ``name`` unless ``at_least <= value`` and ``value`` in (0, 1]."""
    if check_in_interval(name, value, low=0.0, high=1.0, closed="right", owner=owner) <= 0:
        raise ValueError(f"{owner}: {name} must be in (0, 1]; got {value!r}.")
    if value < at_least:
        raise ValueError(f"{owner}: {name} must be at least r_min = {at_least:g}; got {value!r}.")


def check_mus(config: Any) -> None:
    """A non-empty tuple of distinct retentions, each at least the config's ``r_min``."""
    owner = type(config).__name__
    if not config.mus or len(set(config.mus)) != len(config.mus):
        raise ValueError(f"{owner}: mus must be distinct retentions; got {config.mus}.")
    for mu in config.mus:
        check_retention("mus", mu, owner, at_least=config.r_min)
