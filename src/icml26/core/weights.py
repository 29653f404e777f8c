"""Model weights: seeded initialisation and strict state-dict loading.

torch is imported inside the functions, so importing core stays light.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from icml26.core.validation import Seed, check_in_interval, torch_generator

if TYPE_CHECKING:
    import torch
    from torch import nn

__all__ = [
    "StateDictMismatchError",
    "load_state_dict_strict",
    "normal_init_",
    "seeded_default_init",
]


@contextmanager
def seeded_default_init(seed: Seed) -> Iterator[None]:
    """Draw torch's default parameter initialisation inside the block from ``seed``.

    Modules built in the block (``nn.Linear``, ``nn.Embedding``, ...) get their usual
    initialisation, drawn from a stream fixed by ``seed``; torch's global RNG is left as it was.

    Examples
    --------
    >>> from torch import nn
    >>> with seeded_default_init(0):
    ...     a = nn.Linear(3, 2)
    >>> with seeded_default_init(0):
    ...     b = nn.Linear(3, 2)
    >>> bool((a.weight == b.weight).all())
    True
    """
    import torch

    # on the CPU explicitly: under a `with torch.device("meta")` block the draw would have no value
    draw = int(torch.randint(0, 2**62, (1,), generator=torch_generator(seed), device="cpu"))
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(draw)
        yield


def normal_init_(module: nn.Module, *, std: float = 0.02, seed: Seed = 0) -> nn.Module:
    """Redraw every weight matrix (parameters with >= 2 dimensions) of ``module`` from N(0, std²).

    Biases, norms and other 1-D parameters keep their values. Returns ``module``.

    Examples
    --------
    >>> from torch import nn
    >>> net = normal_init_(nn.Linear(1000, 10), std=0.02, seed=0)
    >>> abs(float(net.weight.detach().std()) - 0.02) < 1e-3
    True
    """
    import torch

    std = check_in_interval("std", std, low=0.0, owner="normal_init_")
    generator = torch_generator(seed)
    with torch.no_grad():
        for param in module.parameters():
            if param.dim() >= 2:
                draw = torch.randn(param.shape, generator=generator, dtype=param.dtype)
                param.copy_(draw * std)
    return module


class StateDictMismatchError(ValueError):
    """A checkpoint does not match a model: names every missing, extra or misshapen key."""


def load_state_dict_strict(
    module: nn.Module, state: Mapping[str, torch.Tensor], *, owner: str = "load_state_dict_strict"
) -> nn.Module:
    """Load ``state`` into ``module`` after checking every key and shape; returns ``module``.

    Raises
    ------
    StateDictMismatchError
        Listing every missing key, unexpected key and shape mismatch (not only the first).

    Examples
    --------
    >>> from torch import nn
    >>> net = load_state_dict_strict(nn.Linear(2, 2), nn.Linear(2, 2).state_dict())
    >>> try:
    ...     load_state_dict_strict(nn.Linear(2, 2), {"weight": net.weight})
    ... except StateDictMismatchError as err:
    ...     print(str(err).partition("model: ")[2])
    missing keys ['bias']
    """
    expected: dict[str, Any] = module.state_dict()
    missing = sorted(set(expected) - set(state))
    unexpected = sorted(set(state) - set(expected))
    shapes = [
        f"{key}: checkpoint {tuple(state[key].shape)} vs model {tuple(expected[key].shape)}"
        for key in sorted(set(expected) & set(state))
        if tuple(state[key].shape) != tuple(expected[key].shape)
    ]
    problems = []
    if missing:
        problems.append(f"missing keys {missing}")
    if unexpected:
        problems.append(f"unexpected keys {unexpected}")
    if shapes:
        problems.append("shape mismatches " + "; ".join(shapes))
    if problems:
        raise StateDictMismatchError(
            f"{owner}: checkpoint does not match the model: " + "; ".join(problems)
        )
    module.load_state_dict(dict(state), strict=True)
    return module
