"""Phase II of OmniFit: Alignment-Rectified Token Selection (ARTS), spec §2.3.

Anchors are the density peaks of each modality's input embeddings ``H^(0)`` (DPC-KNN); a token's
importance ``S_i = ||x_i|| + lam ReLU(max_{a in A_other} x_i^T a / ||a||)`` rewards projecting onto
an anchor of the *other* modality; before each layer the top tokens by ``S`` of each modality are
kept (text always), so with fixed scores and non-increasing budgets the kept sets are nested.
Dropped tokens are merged into their most similar kept token of the same modality
(``x_k <- (S_k x_k + sum_j S_j x_j) / (S_k + sum_j S_j)``) or discarded.

Deviations (inferred; see docs/omnifit.md): anchors are the M tokens with the largest
``rho_i delta_i`` (the standard DPC centre rule), ranked in log space (``log rho = -mean d^2``,
the same order without underflow); ties in density are broken by index; text tokens score
``||x||`` (they are never dropped); a modality with no tokens contributes no anchors and so no
cross-modal bonus; a merge whose total weight is zero falls back to the plain mean.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Literal

from icml26.core.validation import check_in_interval, check_one_of, check_positive_int, check_tensor
from icml26.omnifit.lahp import LAHPProfile
from icml26.omnifit.tokens import (
    AUDIO,
    AUDIO_NAME,
    TEXT,
    VIDEO,
    VIDEO_NAME,
    check_modality_ids,
    modality_counts,
)

if TYPE_CHECKING:
    import torch

__all__ = [
    "arts_scores",
    "dpc_knn_anchors",
    "fit_global_anchors",
    "merge_tokens",
    "modality_anchors",
    "plan_keep_indices",
]

MAX_ANCHORS = 100_000
MAX_POOL = 8192  # tokens pooled by fit_global_anchors (its distance matrix is pool^2)
CROSS_WEIGHTS = ("const", "layer_avg_pref")
OTHER = {VIDEO: AUDIO_NAME, AUDIO: VIDEO_NAME}


def dpc_knn_anchors(H: torch.Tensor, M: int = 32, k: int = 5) -> torch.Tensor:
    """Indices of the ``M`` density peaks of ``H`` (DPC-KNN), best first.

    ``rho_i = exp(-(1/k) sum_{j in kNN(i)} ||h_i - h_j||^2)``, ``delta_i = min_{rho_j > rho_i}
    ||h_i - h_j||`` (the densest point takes its largest distance) and the anchors are the
    ``M`` largest ``rho_i delta_i``. With ``M >= n`` every index is returned.

    Parameters
    ----------
    H
        Tokens of one modality, shape ``(n, d)``, finite (``n <= 100000``).
    M
        Number of anchors, ``>= 1``.
    k
        Neighbours in the density estimate, ``>= 1`` (``min(k, n - 1)`` are used).

    Returns
    -------
    torch.LongTensor
        ``min(M, n)`` distinct indices.

    Examples
    --------
    >>> import torch
    >>> H = torch.tensor([[0.0, 0.0], [0.1, 0.0], [0.0, 0.1], [5.0, 5.0], [5.1, 5.0], [5.0, 5.1]])
    >>> sorted(dpc_knn_anchors(H, M=2, k=2).tolist())
    [0, 3]
    """
    import torch

    owner = "dpc_knn_anchors"
    check_tensor("H", H, ndim=2, finite=True, owner=owner)
    M = check_positive_int("M", M, maximum=MAX_ANCHORS, owner=owner)
    k = check_positive_int("k", k, maximum=MAX_ANCHORS, owner=owner)
    n = H.shape[0]
    if n > MAX_ANCHORS:
        raise ValueError(f"{owner}: H has {n} tokens; at most {MAX_ANCHORS} are supported.")
    if n <= M:
        return torch.arange(n)
    return _dpc_batch(H[None], M, k)[0]


def _dpc_batch(X: torch.Tensor, M: int, k: int) -> torch.Tensor:
    """DPC-KNN anchor indices of each of ``B`` token sets, ``(B, n, d) -> (B, M)`` (``M < n``)."""
    import torch

    n = X.shape[1]
    dist = torch.cdist(X, X)  # (B, n, n) in the input's dtype
    kk = min(k, n - 1)
    # the k nearest neighbours exclude the point itself (distance 0 at the smallest slot)
    knn = torch.topk(dist, kk + 1, dim=2, largest=False).values[..., 1:]
    log_rho = -(knn**2).mean(dim=2)  # (B, n): log of the density, same order, no underflow
    order = torch.argsort(log_rho, dim=1, descending=True, stable=True)  # densest first
    rank = torch.empty_like(order).scatter_(1, order, torch.arange(n).expand_as(order))
    densest = order[:, :1]  # the densest point takes its largest distance
    largest = dist.gather(1, densest[..., None].expand(-1, -1, n)).amax(dim=2)  # (B, 1)
    # delta_i = min distance to a denser point (ties by index: a lower rank is denser)
    not_denser = rank[:, None, :] >= rank[:, :, None]  # (B, n, n): [b, i, j] = j not denser
    delta = dist.masked_fill_(not_denser, float("inf")).amin(dim=2).scatter_(1, densest, largest)
    gamma = log_rho + torch.log(delta)  # log(rho delta)
    return torch.argsort(gamma, dim=1, descending=True, stable=True)[:, :M]


def modality_anchors(
    H0: torch.Tensor, modality_ids: torch.Tensor, M: int = 32, k: int = 5
) -> dict[str, torch.Tensor]:
    """Per-input anchors of each modality: ``{"video": (B, M_v, d), "audio": (B, M_a, d)}``.

    ``M_m = min(M, N_m)``; a modality without tokens gets an empty ``(B, 0, d)`` tensor.

    Examples
    --------
    >>> import torch
    >>> H0 = torch.randn(2, 6, 4, generator=torch.Generator().manual_seed(0))
    >>> a = modality_anchors(H0, torch.tensor([0, 1, 1, 1, 2, 2]), M=2, k=1)
    >>> tuple(a["video"].shape), tuple(a["audio"].shape)
    ((2, 2, 4), (2, 2, 4))
    """
    import torch

    owner = "modality_anchors"
    check_tensor("H0", H0, ndim=3, finite=True, owner=owner)
    ids = check_modality_ids(modality_ids, H0.shape[1], owner=owner)
    M = check_positive_int("M", M, maximum=MAX_ANCHORS, owner=owner)
    k = check_positive_int("k", k, maximum=MAX_ANCHORS, owner=owner)
    out = {}
    for code, name in ((VIDEO, VIDEO_NAME), (AUDIO, AUDIO_NAME)):
        members = torch.nonzero(ids == code).flatten()
        tokens = H0[:, members]  # (B, N_m, d)
        if tokens.shape[1] <= M:
            out[name] = tokens
        else:
            chosen = _dpc_batch(tokens, M, k)  # (B, M)
            out[name] = tokens.gather(1, chosen[..., None].expand(-1, -1, tokens.shape[2]))
    return out


def fit_global_anchors(
    H0: torch.Tensor, modality_ids: torch.Tensor, M: int = 32, k: int = 5
) -> dict[str, torch.Tensor]:
    """Anchors pre-computed on a training set (the appendix reading): ``{"video": (M, d), ...}``.

    The tokens of each modality are pooled over the batch ``H0`` (``(B, n, d)``; the first
    8192 are used) and the density peaks of the pool are the anchors.
    """
    import torch

    owner = "fit_global_anchors"
    check_tensor("H0", H0, ndim=3, finite=True, owner=owner)
    ids = check_modality_ids(modality_ids, H0.shape[1], owner=owner)
    M = check_positive_int("M", M, maximum=MAX_ANCHORS, owner=owner)
    k = check_positive_int("k", k, maximum=MAX_ANCHORS, owner=owner)
    out = {}
    for code, name in ((VIDEO, VIDEO_NAME), (AUDIO, AUDIO_NAME)):
        pool = H0[:, torch.nonzero(ids == code).flatten()].reshape(-1, H0.shape[-1])[:MAX_POOL]
        out[name] = pool[dpc_knn_anchors(pool, M, k)]
    return out


def arts_scores(
    H0: torch.Tensor,
    modality_ids: torch.Tensor,
    anchors: Mapping[str, torch.Tensor],
    lam: float = 1.5,
    cross_weight: Literal["const", "layer_avg_pref"] = "const",
    preference: Mapping[str, float] | None = None,
) -> torch.Tensor:
    """Importance ``S_i = ||x_i|| + lam w ReLU(max_{a in A_other} x_i^T a / ||a||)`` (Eq. 8).

    Video tokens look at the audio anchors and vice versa; text tokens score ``||x_i||``.

    Parameters
    ----------
    H0
        Input embeddings, shape ``(B, n, d)``.
    modality_ids
        Codes of the ``n`` tokens, shape ``(n,)``.
    anchors
        ``{"video": ..., "audio": ...}`` anchor vectors, each ``(M, d)`` (shared) or
        ``(B, M, d)`` (per input), e.g. from :func:`modality_anchors`.
    lam
        Weight of the cross-modal term, ``>= 0``.
    cross_weight
        ``"const"`` (``w = 1``, Eq. 8) or ``"layer_avg_pref"``: the cross term of modality ``m``
        is multiplied by ``w = rho_bar_other / ((rho_bar_v + rho_bar_a) / 2)``.
    preference
        ``{"video": rho_bar_v, "audio": rho_bar_a}``, layer-averaged preferences; needed only for
        ``"layer_avg_pref"``.

    Returns
    -------
    torch.Tensor
        Scores, shape ``(B, n)``, non-negative.

    Examples
    --------
    >>> import torch
    >>> H0 = torch.tensor([[[3.0, 4.0], [1.0, 0.0], [0.0, 2.0]]])
    >>> A = {"video": torch.tensor([[1.0, 0.0]]), "audio": torch.tensor([[0.0, 1.0]])}
    >>> arts_scores(H0, torch.tensor([0, 1, 2]), A, lam=1.0).tolist()
    [[5.0, 1.0, 2.0]]
    """
    import torch

    owner = "arts_scores"
    check_tensor("H0", H0, ndim=3, finite=True, owner=owner)
    B, n, d = H0.shape
    ids = check_modality_ids(modality_ids, n, owner=owner)
    lam = check_in_interval("lam", lam, low=0.0, high=1e6, owner=owner)
    check_one_of("cross_weight", cross_weight, CROSS_WEIGHTS, owner=owner)
    if not isinstance(anchors, Mapping):
        raise TypeError(f"{owner}: anchors must map 'video'/'audio' to anchor tensors.")
    weights = {VIDEO_NAME: 1.0, AUDIO_NAME: 1.0}
    if cross_weight == "layer_avg_pref":
        if not isinstance(preference, Mapping):
            raise ValueError(f"{owner}: preference is required for cross_weight='layer_avg_pref'.")
        rv = check_in_interval(
            "preference['video']", preference.get(VIDEO_NAME), low=0.0, high=1e300, owner=owner
        )
        ra = check_in_interval(
            "preference['audio']", preference.get(AUDIO_NAME), low=0.0, high=1e300, owner=owner
        )
        mean = (rv + ra) / 2
        weights = {VIDEO_NAME: rv / mean, AUDIO_NAME: ra / mean} if mean > 0 else weights
    scores = H0.norm(dim=-1)  # (B, n): intrinsic strength
    for code in (VIDEO, AUDIO):
        other = OTHER[code]
        members = torch.nonzero(ids == code).flatten()
        if other not in anchors:
            raise ValueError(f"{owner}: anchors needs the key {other!r}.")
        bank = check_tensor(f"anchors[{other!r}]", anchors[other], finite=True, owner=owner)
        if bank.ndim == 2:
            bank = bank.expand(B, *bank.shape)
        if bank.ndim != 3 or bank.shape[0] != B or bank.shape[2] != d:
            raise ValueError(
                f"{owner}: anchors[{other!r}] must have shape (M, {d}) or ({B}, M, {d}); "
                f"got {tuple(anchors[other].shape)}."
            )
        if members.numel() == 0 or bank.shape[1] == 0:
            continue
        unit = bank / bank.norm(dim=-1, keepdim=True).clamp_min(1e-30)  # (B, M, d)
        projection = torch.einsum("bnd,bmd->bnm", H0[:, members], unit.to(H0.dtype))
        bonus = torch.relu(projection.max(dim=-1).values)  # (B, N_m)
        scores[:, members] = scores[:, members] + lam * weights[other] * bonus
    if not bool(torch.isfinite(scores).all()):
        raise ValueError(
            f"{owner}: the scores overflow {H0.dtype} (|H0| up to {float(H0.abs().max()):.3g}); "
            "scale H0 down or pass it in float64."
        )
    return scores


def plan_keep_indices(
    scores: torch.Tensor, modality_ids: torch.Tensor, profile: LAHPProfile, mu: float
) -> list[torch.Tensor]:
    """Original indices of the tokens alive before each layer, nested across layers.

    Before layer ``l`` each modality keeps its top ``kept_m^(l)`` tokens by score (ties by
    index) and every text token; indices are sorted so the sequence keeps its order.

    Parameters
    ----------
    scores
        ``(B, n)`` importance scores.
    modality_ids
        ``(n,)`` codes.
    profile
        The :class:`~icml26.omnifit.LAHPProfile` giving the per-layer budgets.
    mu
        Retention in ``(0, 1]``; ``1`` keeps everything.

    Returns
    -------
    list of torch.LongTensor
        One ``(B, n_l)`` tensor per layer.

    Examples
    --------
    >>> import torch
    >>> from icml26.omnifit import LAHPProfile
    >>> plan = plan_keep_indices(torch.tensor([[0.0, 3.0, 1.0, 2.0]]), torch.tensor([0, 1, 1, 1]),
    ...                          LAHPProfile.uniform(2, 4), 0.34)
    >>> [p.tolist() for p in plan]
    [[[0, 1]], [[0, 1]]]
    """
    import torch

    owner = "plan_keep_indices"
    check_tensor("scores", scores, ndim=2, finite=True, owner=owner)
    B, n = scores.shape
    ids = check_modality_ids(modality_ids, n, owner=owner)
    if not isinstance(profile, LAHPProfile):
        raise TypeError(f"{owner}: profile must be an LAHPProfile; got {type(profile).__name__}.")
    mu = check_in_interval("mu", mu, low=0.0, high=1.0, closed="right", owner=owner)
    if mu <= 0:
        raise ValueError(f"{owner}: mu must be in (0, 1]; got {mu!r}.")
    budgets = profile.layer_budgets(mu, modality_counts(ids))
    text = torch.nonzero(ids == TEXT).flatten().expand(B, -1)
    ranked = {}
    for code, name in ((VIDEO, VIDEO_NAME), (AUDIO, AUDIO_NAME)):
        members = torch.nonzero(ids == code).flatten()
        order = torch.argsort(scores[:, members], dim=1, descending=True, stable=True)
        ranked[name] = members[order]  # (B, N_m): best first
    plan = []
    for budget in budgets:
        parts = [text] + [ranked[name][:, : budget[name]] for name in (VIDEO_NAME, AUDIO_NAME)]
        plan.append(torch.sort(torch.cat(parts, dim=1), dim=1).values)
    return plan


def merge_tokens(
    x: torch.Tensor,
    keep_idx: torch.Tensor,
    drop_idx: torch.Tensor,
    scores: torch.Tensor,
    *,
    modality_ids: torch.Tensor | None = None,
    return_weights: bool = False,
) -> torch.Tensor | tuple[torch.Tensor, torch.Tensor]:
    """Merge each dropped token into its most similar kept token (cosine, same modality).

    ``x_k <- (S_k x_k + sum_{j -> k} S_j x_j) / (S_k + sum_{j -> k} S_j)``; a dropped token
    whose modality has no kept token is discarded.

    Parameters
    ----------
    x
        Current hidden states, ``(B, n, d)``.
    keep_idx, drop_idx
        Positions in ``x`` of the kept and dropped tokens, ``(B, n_keep)`` and ``(B, n_drop)``.
    scores
        Merge weights ``S`` of the ``n`` tokens, ``(B, n)``, non-negative.
    modality_ids
        Codes of the ``n`` tokens, ``(n,)`` or ``(B, n)``; ``None``: one modality.
    return_weights
        Also return the merged weights ``S_k + sum_j S_j`` of the kept tokens.

    Returns
    -------
    torch.Tensor or (torch.Tensor, torch.Tensor)
        The kept tokens after merging, ``(B, n_keep, d)`` (and their weights, ``(B, n_keep)``).

    Examples
    --------
    >>> import torch
    >>> x = torch.tensor([[[0.0, 2.0], [1.0, 1.0], [0.0, 4.0]]])
    >>> out = merge_tokens(x, torch.tensor([[0, 1]]), torch.tensor([[2]]), torch.ones(1, 3))
    >>> out.tolist()
    [[[0.0, 3.0], [1.0, 1.0]]]
    """
    import torch

    owner = "merge_tokens"
    check_tensor("x", x, ndim=3, finite=True, owner=owner)
    B, n, d = x.shape
    keep_idx = _check_index("keep_idx", keep_idx, B, n, owner)
    drop_idx = _check_index("drop_idx", drop_idx, B, n, owner)
    check_tensor("scores", scores, shape=(B, n), finite=True, owner=owner)
    if bool((scores < 0).any()):
        raise ValueError(f"{owner}: scores must be non-negative (they are merge weights).")
    if modality_ids is None:
        ids = torch.zeros(B, n, dtype=torch.long)
    elif modality_ids.ndim == 1:
        ids = check_modality_ids(modality_ids, n, owner=owner).expand(B, n)
    else:
        check_tensor("modality_ids", modality_ids, shape=(B, n), floating=False, owner=owner)
        ids = modality_ids.long()
    kept = x.gather(1, keep_idx[..., None].expand(-1, -1, d))  # (B, n_keep, d)
    w_keep = scores.gather(1, keep_idx).to(x.dtype)
    if drop_idx.shape[1] == 0 or keep_idx.shape[1] == 0:
        return (kept, w_keep) if return_weights else kept
    dropped = x.gather(1, drop_idx[..., None].expand(-1, -1, d))  # (B, n_drop, d)
    w_drop = scores.gather(1, drop_idx).to(x.dtype)
    cos = torch.einsum(
        "bjd,bkd->bjk",
        dropped / dropped.norm(dim=-1, keepdim=True).clamp_min(1e-30),
        kept / kept.norm(dim=-1, keepdim=True).clamp_min(1e-30),
    )  # (B, n_drop, n_keep)
    same = ids.gather(1, drop_idx)[:, :, None] == ids.gather(1, keep_idx)[:, None, :]
    cos = torch.where(same, cos, torch.full_like(cos, -torch.inf))
    target = cos.argmax(dim=-1)  # (B, n_drop)
    has_target = same.any(dim=-1)
    w_drop = torch.where(has_target, w_drop, torch.zeros_like(w_drop))
    numerator = kept * w_keep[..., None]
    numerator = numerator.scatter_add(
        1, target[..., None].expand(-1, -1, d), dropped * w_drop[..., None]
    )
    total = w_keep.scatter_add(1, target, w_drop)
    # equal weights when every weight of a group is zero: the plain mean
    count = torch.ones_like(w_keep).scatter_add(1, target, has_target.to(x.dtype))
    plain = (
        kept.scatter_add(
            1, target[..., None].expand(-1, -1, d), dropped * has_target[..., None].to(x.dtype)
        )
        / count[..., None]
    )
    merged = torch.where(
        (total > 0)[..., None], numerator / total.clamp_min(1e-300)[..., None], plain
    )
    return (merged, total) if return_weights else merged


def _check_index(name: str, idx: torch.Tensor, B: int, n: int, owner: str) -> torch.Tensor:
    import torch

    if not isinstance(idx, torch.Tensor):
        raise TypeError(f"{owner}: {name} must be a torch.LongTensor; got {type(idx).__name__}.")
    if idx.is_floating_point() or idx.ndim != 2 or idx.shape[0] != B:
        raise ValueError(
            f"{owner}: {name} must be an integer tensor of shape ({B}, m); got "
            f"{tuple(idx.shape)} {idx.dtype}."
        )
    if idx.numel() and (int(idx.min()) < 0 or int(idx.max()) >= n):
        raise ValueError(f"{owner}: {name} must index positions in [0, {n}).")
    return idx.long()
