"""Perturbation-induced bias of a module, its fluctuation, and the systematic ratio (spec §2.1-2.2).

For a module ``M`` with input ``h`` and a random perturbation ``δ``:

* bias ``b(x) = E_δ[M(h + δh)] − M(h)``;
* fluctuation ``ξ = M(h + δh) − E_δ[M(h + δh)]``, with ``tr Cov_δ[M(h + δh)] = E‖ξ‖²``;
* the exact identity ``E‖M(h + δh) − M(h)‖² = ‖b(x)‖² + tr Cov_δ[M(h + δh)]``;
* the systematic ratio over inputs ``ρ = ‖E_x b(x)‖² / E_x‖b(x)‖² ∈ [0, 1]``.

Everything is estimated from ``K`` perturbed copies per input with population (``1/K``)
normalisation, so the identity holds for the estimates to round-off. For one ReLU unit with
Gaussian pre-activation noise of standard deviation ``s`` the bias has the closed form
``b(u) = u Φ(u/s) + s φ(u/s) − max(u, 0)``.

Deviations: outputs with more than two axes (a sequence of token states) are averaged over the
middle axes to one vector per input unless a ``pool`` is given, because clean and perturbed
prompts may have different lengths. ``ρ`` of an all-zero bias is defined as 1 (a constant zero
shift is input-independent).
"""

from __future__ import annotations

import contextlib
import difflib
import math
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import torch
from torch import nn

from icml26.core import check_array, check_positive_int

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "BiasReport",
    "Pool",
    "bias_profile",
    "capture_outputs",
    "mean_pool",
    "module_bias",
    "relu_gaussian_bias",
    "relu_gaussian_mean",
    "resolve_modules",
    "split_perturbed",
    "systematic_ratio",
]

Pool = Callable[[torch.Tensor, Any], torch.Tensor]
Inputs = torch.Tensor | Mapping[str, torch.Tensor] | Sequence[Any]


# ------------------------------------------------------------------ closed forms (spec §2.2.3)


MAX_MAGNITUDE = 1e300  # |u| and s of the ReLU closed forms: u Φ + s φ stays a finite float


def _check_s(s: Any, owner: str) -> np.ndarray:
    s = check_array("s", s, owner=owner)
    if np.any(s <= 0) or np.any(s > MAX_MAGNITUDE):
        raise ValueError(
            f"{owner}: s must be in (0, {MAX_MAGNITUDE:g}] (a noise standard deviation); got "
            f"{s.min()!r} to {s.max()!r}."
        )
    return s


def _check_u(u: Any, owner: str) -> np.ndarray:
    u = check_array("u", u, owner=owner)
    if np.any(np.abs(u) > MAX_MAGNITUDE):
        raise ValueError(f"{owner}: u must lie in [-{MAX_MAGNITUDE:g}, {MAX_MAGNITUDE:g}].")
    return u


def _check_u_s(u: Any, s: Any, owner: str) -> tuple[np.ndarray, np.ndarray]:
    u, s = _check_u(u, owner), _check_s(s, owner)
    try:
        np.broadcast_shapes(u.shape, s.shape)
    except ValueError:
        raise ValueError(
            f"{owner}: u and s must broadcast together; got shapes {u.shape} and {s.shape}."
        ) from None
    return u, s


def _scalar_or_array(value: np.ndarray) -> float | np.ndarray:
    return float(value) if value.ndim == 0 else value


def relu_gaussian_mean(u: Any, s: Any) -> float | np.ndarray:
    """``E[relu(u + sξ)]``, ``ξ ~ N(0, 1)``: ``u Φ(u/s) + s φ(u/s)``.

    Parameters
    ----------
    u
        Clean pre-activation(s), finite; broadcasts against ``s``.
    s
        Noise standard deviation(s), ``> 0``.

    Returns
    -------
    float or ndarray
        A float for scalar inputs.

    Raises
    ------
    ValueError
        If ``s <= 0``, an input is not finite or its magnitude exceeds ``MAX_MAGNITUDE``
        (1e300).

    Examples
    --------
    >>> round(relu_gaussian_mean(0.0, 1.0), 6)  # s / sqrt(2 pi)
    0.398942
    """
    from scipy.special import ndtr

    u, s = _check_u_s(u, s, "relu_gaussian_mean")
    with np.errstate(over="ignore", under="ignore"):  # |u|/s huge: phi underflows to 0
        t = u / s
        # E[relu(u + s xi)] = u Phi(u/s) + s phi(u/s)
        mean = u * ndtr(t) + s * np.exp(-0.5 * t**2) / math.sqrt(2 * math.pi)
    return _scalar_or_array(mean)


def relu_gaussian_bias(u: Any, s: Any) -> float | np.ndarray:
    """Perturbation-induced bias of a ReLU unit: ``E[relu(u + sξ)] − relu(u) ≥ 0``.

    Evaluated in the even form ``s φ(t) − |u| Φ(−t)``, ``t = |u|/s``, with the scaled
    complementary error function so that large ``|u|/s`` loses no precision to cancellation.
    The maximum, ``s/√(2π)``, is at ``u = 0``.

    Parameters
    ----------
    u
        Clean pre-activation(s), finite.
    s
        Noise standard deviation(s), ``> 0``.

    Returns
    -------
    float or ndarray

    Raises
    ------
    ValueError
        If ``s <= 0``, an input is not finite or its magnitude exceeds ``MAX_MAGNITUDE``
        (1e300).

    Examples
    --------
    >>> round(relu_gaussian_bias(1.0, 1.0), 6), round(relu_gaussian_bias(-1.0, 1.0), 6)
    (0.083315, 0.083315)
    """
    from scipy.special import erfcx

    u, s = _check_u_s(u, s, "relu_gaussian_bias")
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        t = np.abs(u) / s
        phi = np.exp(-0.5 * t**2) / math.sqrt(2 * math.pi)
        # Phi(-t)/phi(t) = sqrt(pi/2) erfcx(t/sqrt(2)) (Mills ratio): b = s phi(t) (1 - t R(t))
        mills = math.sqrt(math.pi / 2) * erfcx(t / math.sqrt(2))
        bias = np.where(phi > 0, s * phi * (1.0 - t * mills), 0.0)  # phi = 0: b underflows to 0
    return _scalar_or_array(np.maximum(bias, 0.0))  # >= 0 exactly; clip round-off below zero


def systematic_ratio(bias: Any) -> float:
    """``ρ = ‖mean_x b(x)‖² / mean_x ‖b(x)‖²`` of per-input biases ``(n_inputs, dim)``.

    ``ρ = 1`` when every input has the same shift (also for an all-zero bias), ``≈ 0`` when the
    shifts cancel across inputs.

    Examples
    --------
    >>> systematic_ratio([[1.0, 2.0], [1.0, 2.0]])
    1.0
    """
    b = check_array("bias", bias, owner="systematic_ratio", ndim=2)
    if b.shape[0] == 0:
        raise ValueError("systematic_ratio: bias has no rows; give at least one input.")
    scale = float(np.max(np.abs(b))) if b.size else 0.0  # no columns: a zero shift
    if scale == 0.0:
        return 1.0
    b = b / scale  # rho is scale-free; squaring entries near 1e300 would overflow to inf / inf
    den = float(np.mean(np.sum(b**2, axis=1)))
    num = float(np.sum(np.mean(b, axis=0) ** 2))
    return min(num / den, 1.0)  # <= 1 by Jensen; clip round-off


# ----------------------------------------------------------------------- capturing activations


def mean_pool(output: torch.Tensor, inputs: Any = None) -> torch.Tensor:
    """Default pooling: keep ``(batch, dim)``; average ``(batch, ..., dim)`` over the middle axes.

    Examples
    --------
    >>> import torch
    >>> mean_pool(torch.ones(2, 5, 3)).shape
    torch.Size([2, 3])
    """
    if not isinstance(output, torch.Tensor) or output.ndim == 0:
        raise ValueError(
            f"mean_pool: output must be a tensor (batch, ..., dim); got "
            f"{getattr(output, 'shape', type(output).__name__)}."
        )
    if output.ndim == 1:
        return output[:, None]
    if output.ndim == 2:
        return output
    middle = output.flatten(1, -2)  # (batch, positions, dim)
    if middle.shape[1] == 0:
        raise ValueError(
            f"mean_pool: output has no positions to average; got {tuple(output.shape)}."
        )
    return (middle if middle.is_floating_point() else middle.double()).mean(dim=1)


def resolve_modules(
    model: nn.Module, names: Sequence[str], owner: str, arg: str = "module_names"
) -> list[nn.Module]:
    """The submodules called ``names``; an unknown name is a ``ValueError`` with close matches.

    Examples
    --------
    >>> from torch import nn
    >>> len(resolve_modules(nn.Sequential(nn.Linear(2, 2)), ["0"], owner="demo"))
    1
    """
    if not isinstance(model, nn.Module):
        raise TypeError(f"{owner}: model must be a torch.nn.Module; got {type(model).__name__}.")
    if isinstance(names, str) or not isinstance(names, Iterable):
        raise TypeError(f"{owner}: {arg} must be a list of module names; got {names!r}.")
    names = list(names)
    if not names:
        raise ValueError(f"{owner}: {arg} is empty; give at least one module name.")
    if not all(isinstance(name, str) for name in names):
        raise TypeError(f"{owner}: {arg} must hold module names (str); got {names!r}.")
    table = dict(model.named_modules())
    out = []
    for name in names:
        if name not in table or name == "":
            close = difflib.get_close_matches(str(name), [n for n in table if n], n=5)
            hint = f" Close matches: {', '.join(close)}." if close else ""
            raise ValueError(f"{owner}: {arg} {name!r} is not a submodule of the model.{hint}")
        out.append(table[name])
    return out


def _n_rows(inputs: Inputs, owner: str, name: str) -> int:
    if isinstance(inputs, torch.Tensor):
        n = inputs.shape[0] if inputs.ndim else 0
    elif isinstance(inputs, Mapping):
        if not inputs:
            raise ValueError(f"{owner}: {name} is an empty mapping.")
        if not all(isinstance(v, torch.Tensor) and v.ndim for v in inputs.values()):
            raise TypeError(f"{owner}: {name} must map names to tensors (n, ...).")
        sizes = {k: v.shape[0] for k, v in inputs.items()}
        if len(set(sizes.values())) != 1:
            raise ValueError(f"{owner}: {name} entries have different lengths: {sizes}.")
        n = next(iter(sizes.values()))
    elif isinstance(inputs, Sequence) and not isinstance(inputs, str):
        n = len(inputs)
    else:
        raise TypeError(
            f"{owner}: {name} must be a tensor, a mapping of tensors or a list; "
            f"got {type(inputs).__name__}."
        )
    if n == 0:
        raise ValueError(f"{owner}: {name} is empty; give at least one input.")
    return n


def _rows(inputs: Inputs, start: int, stop: int) -> Inputs:
    if isinstance(inputs, Mapping):
        return {k: v[start:stop] for k, v in inputs.items()}
    return inputs[start:stop]


@contextlib.contextmanager
def eval_mode(model: nn.Module) -> Iterator[nn.Module]:
    """Run a block with every submodule in eval mode; restore each one's own mode after.

    (``model.train(flag)`` would force one flag onto every child, e.g. wake up dropout in an
    encoder that was in eval mode inside a wrapper in train mode.)
    """
    modes = {m: m.training for m in model.modules()}
    model.eval()
    try:
        yield model
    finally:
        for module, training in modes.items():
            module.training = training


def call_model(model: nn.Module, batch: Inputs, *, owner: str = "", arg: str = "inputs") -> Any:
    """``model(**batch)`` for a mapping (HF style), else ``model(batch)``.

    With ``owner``, an input the model cannot take (a shape, dtype or type mismatch inside
    torch) becomes a ``ValueError`` naming the caller's parameter ``arg``.
    """
    try:
        if isinstance(batch, Mapping):
            return model(**batch)
        return model(batch)
    except (RuntimeError, TypeError, IndexError, AttributeError) as err:
        if not owner:
            raise
        raise ValueError(f"{owner}: the model cannot take {arg}: {err}") from err


def _first_tensor(output: Any, name: str = "", names_arg: str = "") -> torch.Tensor:
    if isinstance(output, torch.Tensor):
        return output
    if hasattr(output, "logits"):
        return output.logits
    if isinstance(output, tuple | list) and output and isinstance(output[0], torch.Tensor):
        return output[0]
    if hasattr(output, "last_hidden_state"):
        return output.last_hidden_state
    where = f"{names_arg} entry {name!r}" if names_arg else "the model"
    raise TypeError(
        f"the output of {where} must be a tensor (or a tuple led by one); "
        f"got {type(output).__name__}."
    )


@torch.no_grad()
def capture_outputs(
    model: nn.Module,
    module_names: Sequence[str],
    inputs: Inputs,
    *,
    pool: Pool | None = None,
    batch_size: int = 1024,
    skip_unused: bool = False,
) -> dict[str, torch.Tensor]:
    """Run ``model`` in eval mode on ``inputs`` and return each module's pooled output.

    Parameters
    ----------
    model
        Any ``nn.Module``; a mapping batch is passed as ``model(**batch)``.
    module_names
        Names from ``model.named_modules()``; ``""`` is not allowed (use the logits directly).
    inputs
        A tensor ``(n, ...)``, a mapping of such tensors, or a list of ``n`` items.
    pool
        ``pool(output, batch) -> (batch, dim)``; default :func:`mean_pool`.
    batch_size
        Rows per forward pass.
    skip_unused
        Leave out modules that never run in the forward pass instead of raising.

    Returns
    -------
    dict
        ``name -> (n, dim)`` float64 tensor.

    Examples
    --------
    >>> import torch
    >>> from torch import nn
    >>> net = nn.Sequential(nn.Linear(3, 2))
    >>> capture_outputs(net, ["0"], torch.zeros(4, 3))["0"].shape
    torch.Size([4, 2])
    """
    names = {"owner": "capture_outputs", "names_arg": "module_names", "inputs_arg": "inputs"}
    return _capture(
        model,
        module_names,
        inputs,
        pool=pool,
        batch_size=batch_size,
        skip_unused=skip_unused,
        **names,
    )


def _capture(
    model: nn.Module,
    module_names: Sequence[str],
    inputs: Inputs,
    *,
    pool: Pool | None,
    batch_size: int,
    skip_unused: bool,
    owner: str,
    names_arg: str,
    inputs_arg: str,
) -> dict[str, torch.Tensor]:
    """:func:`capture_outputs` with messages naming the public caller's own parameters."""
    modules = resolve_modules(model, module_names, owner, names_arg)
    module_names = list(module_names)
    batch_size = check_positive_int("batch_size", batch_size, owner=owner)
    if pool is not None and not callable(pool):
        raise TypeError(f"{owner}: pool must be callable or None; got {type(pool).__name__}.")
    pool = pool or mean_pool
    n = _n_rows(inputs, owner, inputs_arg)
    store: dict[str, list[torch.Tensor]] = {name: [] for name in module_names}
    current: dict[str, Any] = {}

    def hook_for(name: str) -> Callable:
        def hook(module: nn.Module, args: Any, output: Any) -> None:
            pooled = pool(_first_tensor(output, name, names_arg), current["batch"])
            if not isinstance(pooled, torch.Tensor) or pooled.ndim != 2:
                raise ValueError(
                    f"{owner}: pool must map the output of {name!r} to (batch, dim); got "
                    f"{getattr(pooled, 'shape', type(pooled).__name__)}."
                )
            store[name].append(pooled.detach().to(torch.float64))  # (batch, dim)

        return hook

    handles = [
        m.register_forward_hook(hook_for(n_)) for n_, m in zip(module_names, modules, strict=True)
    ]
    try:
        with eval_mode(model):
            for start in range(0, n, batch_size):
                current["batch"] = _rows(inputs, start, start + batch_size)
                call_model(model, current["batch"], owner=owner, arg=inputs_arg)
    finally:
        for h in handles:
            h.remove()
    unused = [name for name, chunks in store.items() if not chunks]
    if unused and not skip_unused:
        raise ValueError(
            f"{owner}: modules {unused} never ran in the model's forward pass (see {names_arg})."
        )
    return {name: torch.cat(chunks) for name, chunks in store.items() if chunks}


def split_perturbed(
    clean_n: int, perturbed: Inputs, owner: str, arg: str = "perturbed_inputs"
) -> tuple[Inputs, int]:
    """Flatten ``(n, K, ...)`` perturbed tensors to ``(n·K, ...)`` and return ``K``.

    A flat batch must hold ``n·K`` rows ordered input-major (all ``K`` copies of input 0 first).
    """
    rows = _n_rows(perturbed, owner, arg)
    if isinstance(perturbed, torch.Tensor) and rows == clean_n and perturbed.ndim >= 3:
        k = perturbed.shape[1]
        return perturbed.flatten(0, 1), k
    if rows % clean_n:
        raise ValueError(
            f"{owner}: clean and perturbed batches have different lengths: {clean_n} clean "
            f"inputs but {rows} rows in {arg} (need K copies per input, input-major)."
        )
    return perturbed, rows // clean_n


# --------------------------------------------------------------------------- the bias report


@dataclass(frozen=True)
class BiasReport:
    """Bias and fluctuation of one module's output over a set of inputs.

    Attributes
    ----------
    bias
        ``(n, dim)``: per-input bias ``b(x) = mean_k M(x'_k) − M_ref(x)``.
    fluct_var
        ``(n,)``: per-input ``tr Cov_k[M(x'_k)]`` (population normalised).
    rho
        Systematic ratio ``‖mean b‖² / mean ‖b‖²``.
    sq_shift
        ``(n,)``: per-input ``mean_k ‖M(x'_k) − M_ref(x)‖²``, computed directly; equals
        ``‖b‖² + fluct_var`` to round-off (the decomposition identity).
    """

    bias: torch.Tensor
    fluct_var: torch.Tensor
    rho: float
    sq_shift: torch.Tensor

    @property
    def mean_bias(self) -> torch.Tensor:
        """``E_x b(x)``, ``(dim,)``: the shift a constant correction can remove."""
        return self.bias.mean(dim=0)

    @property
    def bias_norm(self) -> float:
        """``‖E_x b(x)‖``."""
        return float(self.mean_bias.norm())

    @property
    def bias_sq(self) -> float:
        """``E_x ‖b(x)‖²``."""
        return float((self.bias**2).sum(dim=1).mean())

    @property
    def fluct(self) -> float:
        """``E_x tr Cov[M(x')]``."""
        return float(self.fluct_var.mean())


def _report(clean: torch.Tensor, pert: torch.Tensor, k: int) -> BiasReport:
    pert = pert.reshape(clean.shape[0], k, -1)  # (n, K, dim)
    clean = clean.reshape(clean.shape[0], -1)  # (n, dim)
    mean_pert = pert.mean(dim=1)  # (n, dim)
    bias = mean_pert - clean
    fluct = ((pert - mean_pert[:, None]) ** 2).sum(dim=2).mean(dim=1)  # (n,)
    sq_shift = ((pert - clean[:, None]) ** 2).sum(dim=2).mean(dim=1)  # (n,)
    return BiasReport(bias, fluct, systematic_ratio(bias.numpy()), sq_shift)


def module_bias(
    model: nn.Module,
    module_name: str,
    clean_inputs: Inputs,
    perturbed_inputs: Inputs,
    *,
    reference: nn.Module | None = None,
    pool: Pool | None = None,
    batch_size: int = 1024,
) -> BiasReport:
    """Estimate the perturbation-induced bias and fluctuation of one module.

    Parameters
    ----------
    model
        The network; ``module_name`` is one of ``model.named_modules()``.
    module_name
        The module whose output is analysed.
    clean_inputs
        ``n`` clean inputs (tensor, mapping of tensors, or list).
    perturbed_inputs
        ``K`` perturbed copies of each: a tensor ``(n, K, ...)`` or a flat batch of ``n·K`` rows,
        input-major.
    reference
        Model whose clean outputs define ``M(x)`` (e.g. the original network before debiasing);
        default ``model`` itself.
    pool, batch_size
        As in :func:`capture_outputs`.

    Returns
    -------
    BiasReport

    Raises
    ------
    ValueError
        Unknown module name (close matches are listed) or mismatched batch lengths.

    Examples
    --------
    >>> import torch
    >>> from torch import nn
    >>> lin = nn.Sequential(nn.Linear(3, 2, dtype=torch.float64))
    >>> x = torch.zeros(5, 3, dtype=torch.float64)
    >>> d = torch.randn(5, 4, 3, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    >>> rep = module_bias(lin, "0", x, torch.cat([d, -d], dim=1))  # antithetic pairs
    >>> bool(rep.bias.abs().max() < 1e-12)
    True
    """
    owner = "module_bias"
    if not isinstance(module_name, str):
        raise TypeError(f"{owner}: module_name must be a str; got {type(module_name).__name__}.")
    n = _n_rows(clean_inputs, owner, "clean_inputs")
    flat, k = split_perturbed(n, perturbed_inputs, owner)
    ref = _reference(model, reference, owner)
    common = {"pool": pool, "batch_size": batch_size, "skip_unused": False, "owner": owner}
    common["names_arg"] = "module_name"
    clean = _capture(ref, [module_name], clean_inputs, **common, inputs_arg="clean_inputs")
    pert = _capture(model, [module_name], flat, **common, inputs_arg="perturbed_inputs")
    return _report(clean[module_name], pert[module_name], k)


def _reference(model: nn.Module, reference: Any, owner: str) -> nn.Module:
    if reference is not None and not isinstance(reference, nn.Module):
        raise TypeError(
            f"{owner}: reference must be a torch.nn.Module or None; got {type(reference).__name__}."
        )
    return model if reference is None else reference


def _leaf_modules(model: nn.Module) -> list[str]:
    return [name for name, m in model.named_modules() if name and not list(m.children())]


def bias_profile(
    model: nn.Module,
    X: Inputs,
    X_pert: Inputs,
    modules: Sequence[str] | None = None,
    *,
    reference: nn.Module | None = None,
    pool: Pool | None = None,
    batch_size: int = 1024,
) -> pd.DataFrame:
    """Module-wise bias / fluctuation table (one forward pass over all modules).

    Parameters
    ----------
    model, X, X_pert, reference, pool, batch_size
        As in :func:`module_bias` (``X`` clean, ``X_pert`` its perturbed copies).
    modules
        Module names; default every leaf module that runs in the forward pass, in
        ``named_modules()`` order.

    Returns
    -------
    pandas.DataFrame
        One row per module: ``module``, ``dim``, ``bias_norm`` (``‖E b‖``), ``bias_sq``
        (``E‖b‖²``), ``fluct`` (``E tr Cov``), ``sq_shift`` (``E‖M(x')−M(x)‖²``), ``rho`` and
        ``bias_share`` (``bias_sq / sq_shift``).

    Examples
    --------
    >>> import torch
    >>> from torch import nn
    >>> net = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
    >>> X = torch.randn(8, 3, generator=torch.Generator().manual_seed(0))
    >>> list(bias_profile(net, X, X[:, None] + 0.1)["module"])
    ['0', '1', '2']
    """
    import pandas as pd

    owner = "bias_profile"
    if not isinstance(model, nn.Module):
        raise TypeError(f"{owner}: model must be a torch.nn.Module; got {type(model).__name__}.")
    names = _leaf_modules(model) if modules is None else modules
    resolve_modules(model, names, owner, "modules")
    names = list(names)
    n = _n_rows(X, owner, "X")
    flat, k = split_perturbed(n, X_pert, owner, "X_pert")
    ref = _reference(model, reference, owner)
    common = {"pool": pool, "batch_size": batch_size, "skip_unused": modules is None}
    common.update(owner=owner, names_arg="modules")
    clean = _capture(ref, names, X, **common, inputs_arg="X")
    pert = _capture(model, names, flat, **common, inputs_arg="X_pert")
    names = [name for name in names if name in clean and name in pert]
    rows = []
    for name in names:
        rep = _report(clean[name], pert[name], k)
        sq = float(rep.sq_shift.mean())
        rows.append(
            {
                "module": name,
                "dim": int(rep.bias.shape[1]),
                "bias_norm": rep.bias_norm,
                "bias_sq": rep.bias_sq,
                "fluct": rep.fluct,
                "sq_shift": sq,
                "rho": rep.rho,
                "bias_share": rep.bias_sq / sq if sq > 0 else 0.0,
            }
        )
    return pd.DataFrame(rows)
