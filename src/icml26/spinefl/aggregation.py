"""Count-based selective averaging of sub-models into the global model (spec §2.7).

For every parameter and every entry e of the global tensor (HeteroFL/FedRolex "combine"):

    W_new[e] = sum_{c: e in idx_c} w_c W_c[e] / sum_{c: e in idx_c} w_c   if some client covers e,
    W_new[e] = W_old[e]                                                    otherwise,

with w_c = n_c (``weighting="samples"``) or w_c = 1 (``"uniform"``, FedRolex's K = 1). With every
client at full width this is FedAvg. Sums are taken in float64 and cast back to each tensor's
dtype.

Deviations: none (a direct transcription of the spec's rule).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import torch

from icml26.core import check_array, check_one_of

__all__ = ["aggregate_counts"]


def aggregate_counts(
    global_state: Mapping[str, torch.Tensor],
    client_states: Sequence[Mapping[str, torch.Tensor]],
    client_param_index: Sequence[Mapping[str, Sequence[np.ndarray]]],
    weights: Sequence[float],
    weighting: str = "samples",
) -> dict[str, torch.Tensor]:
    """The count-averaged global state (§2.7); ``global_state`` is not modified.

    Parameters
    ----------
    global_state
        The current global parameters by name.
    client_states
        Each participant's trained sub-model parameters (names as in ``global_state``).
    client_param_index
        For each participant, ``submodel_param_index(model, index_sets)``: the global indices of
        its entries along every dimension of every parameter it returns.
    weights
        n_c per participant (>= 0; only used with ``weighting="samples"``).
    weighting
        ``"samples"`` (weights n_c) or ``"uniform"`` (every participant counts 1).

    Returns
    -------
    dict
        New tensors with the global shapes and dtypes.

    Examples
    --------
    >>> g = {"w": torch.zeros(3)}
    >>> c1, c2 = {"w": torch.tensor([1.0, 1.0])}, {"w": torch.tensor([5.0])}
    >>> idx = [{"w": (np.array([0, 1]),)}, {"w": (np.array([1]),)}]
    >>> aggregate_counts(g, [c1, c2], idx, weights=[1, 3])["w"].tolist()
    [1.0, 4.0, 0.0]
    """
    owner = "aggregate_counts"
    weighting = check_one_of("weighting", weighting, ("samples", "uniform"), owner=owner)
    _check_state("global_state", global_state, owner)
    for name, value in (
        ("client_states", client_states),
        ("client_param_index", client_param_index),
        ("weights", weights),
    ):
        if not isinstance(value, Sequence) or isinstance(value, str):
            raise TypeError(f"{owner}: {name} must be a list; got {type(value).__name__}.")
    for c, state in enumerate(client_states):
        _check_state(f"client_states[{c}]", state, owner)
    for c, index in enumerate(client_param_index):
        if not isinstance(index, Mapping):
            raise TypeError(
                f"{owner}: client_param_index[{c}] must map parameter names to index sets; "
                f"got {type(index).__name__}."
            )
    if not (len(client_states) == len(client_param_index) == len(weights)):
        raise ValueError(
            f"{owner}: client_states, client_param_index and weights must have one entry per "
            f"client; got lengths {len(client_states)}, {len(client_param_index)}, "
            f"{len(weights)}."
        )
    w = check_array("weights", weights, owner=owner, finite=False)
    if w.ndim != 1 or not np.all(np.isfinite(w)) or np.any(w < 0):
        raise ValueError(f"{owner}: weights must be finite and >= 0; got {list(weights)!r}.")
    if weighting == "uniform":
        w = np.ones_like(w)
    sums = {k: np.zeros(tuple(v.shape)) for k, v in global_state.items()}
    counts = {k: np.zeros(tuple(v.shape)) for k, v in global_state.items()}
    for c, (state, index, w_c) in enumerate(zip(client_states, client_param_index, w, strict=True)):
        if set(state) != set(index):
            raise ValueError(
                f"{owner}: client {c}'s state and param index name different parameters: "
                f"{sorted(set(state) ^ set(index))}."
            )
        for name, value in state.items():
            if name not in global_state:
                raise ValueError(f"{owner}: client {c} returned unknown parameter {name!r}.")
            idx = _index_sets(index[name], f"client_param_index[{c}][{name!r}]", owner)
            g_shape = tuple(global_state[name].shape)
            expected = tuple(len(i) for i in idx)
            if tuple(value.shape) != expected or len(idx) != len(g_shape):
                raise ValueError(
                    f"{owner}: client {c}'s {name!r} has shape {tuple(value.shape)} but its "
                    f"index sets give {expected} (global shape {g_shape})."
                )
            for i, size in zip(idx, g_shape, strict=True):
                if i.size and (i.min() < 0 or i.max() >= size or np.unique(i).size != i.size):
                    raise ValueError(
                        f"{owner}: client {c}'s index for {name!r} must be distinct entries of "
                        f"range(0, {size})."
                    )
            cell = np.ix_(*idx)
            sums[name][cell] += w_c * value.detach().cpu().to(torch.float64).numpy()
            counts[name][cell] += w_c
    out = {}
    for name, old in global_state.items():
        covered = counts[name] > 0
        new = old.detach().cpu().to(torch.float64).numpy().copy()
        new[covered] = sums[name][covered] / counts[name][covered]  # §2.7
        out[name] = torch.as_tensor(new, dtype=old.dtype, device=old.device)
    return out


def _check_state(name: str, state: object, owner: str) -> None:
    """A mapping from parameter names to tensors."""
    if not isinstance(state, Mapping) or not all(
        isinstance(v, torch.Tensor) for v in state.values()
    ):
        raise TypeError(f"{owner}: {name} must map parameter names to tensors.")


def _index_sets(value: object, name: str, owner: str) -> tuple[np.ndarray, ...]:
    """One 1-D integer array per dimension."""
    if not isinstance(value, Sequence) or isinstance(value, str):
        raise TypeError(f"{owner}: {name} must be a tuple of index arrays; got {value!r}.")
    out = []
    for i in value:
        array = np.asarray(i)
        if array.ndim != 1 or (array.size and array.dtype.kind not in "iu"):
            raise TypeError(f"{owner}: {name} must hold 1-D integer index arrays.")
        out.append(array.astype(np.int64))
    return tuple(out)
