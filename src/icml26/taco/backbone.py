"""TabPFN-v2-style per-feature transformer, the backbone of TACO and of the POT baseline.

TACO (arXiv:2602.05649), spec §2.1 steps 5-7: a token grid of T rows × (G + 1) columns; each
post-norm layer runs (a) attention between the tokens of one row, (b) attention between rows of
one column where every row uses only the first ``n_ctx`` (context/training) rows as keys and
values, and (c) an MLP; the target tokens of the remaining rows are decoded to class logits.
The last linear of every sub-layer is zero-initialised.

Deviations: dropout is absent (the released config uses 0). ``TACOConfig(pre_norm=True)`` (used by
the tiny shipped models, not the released default) runs x + f(LayerNorm(x)) instead of post-norm:
at E = 32 and a few thousand CPU steps the post-norm + zero-init model never left the chance-loss
plateau on random linear tasks, the pre-norm one did within ~400 steps.
"""

from __future__ import annotations

import torch
from torch import nn

from icml26.core import Seed, check_positive_int, check_tensor, seeded_default_init, torch_generator
from icml26.taco.config import TACOConfig
from icml26.taco.encoder import (
    EncoderStats,
    InputEncoder,
    _compute_stats,
    check_code_order,
    check_config,
    check_labels,
    check_rows,
    check_stats,
)

__all__ = ["KVCache", "PerFeatureTransformer"]

KVCache = list[tuple[torch.Tensor, torch.Tensor]]
"""Per layer, the row-attention keys and values of the context rows, each (B·(G+1), H, n, d)."""


class Attention(nn.Module):
    """Multi-head attention with separate query and key/value inputs (SDPA kernel)."""

    def __init__(self, emsize: int, nhead: int) -> None:
        super().__init__()
        self.nhead = nhead
        self.q = nn.Linear(emsize, emsize)
        self.kv = nn.Linear(emsize, 2 * emsize)
        self.out = nn.Linear(emsize, emsize)
        nn.init.zeros_(self.out.weight)
        nn.init.zeros_(self.out.bias)

    def _heads(self, x: torch.Tensor) -> torch.Tensor:
        S, L, E = x.shape
        return x.view(S, L, self.nhead, E // self.nhead).transpose(1, 2)  # (S, H, L, d)

    def keys_values(self, source: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Keys and values of ``source`` (S, L_kv, E), each (S, H, L_kv, d)."""
        k, v = self.kv(source).chunk(2, dim=-1)
        return self._heads(k), self._heads(v)

    def attend(self, query: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        """softmax(Q Kᵀ / sqrt(d)) V for ``query`` (S, L_q, E) -> (S, L_q, E)."""
        S, L, E = query.shape
        h = nn.functional.scaled_dot_product_attention(
            self._heads(self.q(query)), k, v
        )  # (S, H, L_q, d)
        return self.out(h.transpose(1, 2).reshape(S, L, E))

    def forward(self, query: torch.Tensor, source: torch.Tensor) -> torch.Tensor:
        """Attention of ``query`` over ``source``."""
        return self.attend(query, *self.keys_values(source))


class Layer(nn.Module):
    """One post-norm layer: feature attention, row attention over context rows, MLP."""

    def __init__(self, config: TACOConfig) -> None:
        super().__init__()
        E = config.emsize
        self.feature_attn = Attention(E, config.nhead)
        self.row_attn = Attention(E, config.nhead)
        self.mlp = nn.Sequential(nn.Linear(E, 4 * E), nn.GELU(), nn.Linear(4 * E, E))
        nn.init.zeros_(self.mlp[2].weight)
        nn.init.zeros_(self.mlp[2].bias)
        self.norm_feature, self.norm_row, self.norm_mlp = (nn.LayerNorm(E) for _ in range(3))
        self.pre_norm = config.pre_norm
        self.row_entries = 0  # query rows × key rows of the last row attention, per column

    def _feature_attention(self, x: torch.Tensor) -> torch.Tensor:
        B, T, C, E = x.shape
        h = x.reshape(B * T, C, E)
        if self.pre_norm:
            n = self.norm_feature(h)
            return (h + self.feature_attn(n, n)).view(B, T, C, E)
        return self.norm_feature(h + self.feature_attn(h, h)).view(B, T, C, E)

    def _row_attention(
        self, x: torch.Tensor, kv: tuple[torch.Tensor, torch.Tensor] | None, n_ctx: int
    ) -> tuple[torch.Tensor, tuple[torch.Tensor, torch.Tensor]]:
        B, T, C, E = x.shape
        r = x.transpose(1, 2).reshape(B * C, T, E)  # columns become the batch
        n = self.norm_row(r) if self.pre_norm else r
        if kv is None:
            kv = self.row_attn.keys_values(n[:, :n_ctx])
        self.row_entries = T * kv[0].shape[2]
        r = r + self.row_attn.attend(n, *kv)
        r = r if self.pre_norm else self.norm_row(r)
        return r.view(B, C, T, E).transpose(1, 2), kv

    def forward(
        self, x: torch.Tensor, n_ctx: int, kv: tuple[torch.Tensor, torch.Tensor] | None = None
    ) -> tuple[torch.Tensor, tuple[torch.Tensor, torch.Tensor]]:
        """Update ``x`` (B, T, G + 1, E); rows attend to the first ``n_ctx`` rows (or to ``kv``)."""
        x, kv = self._row_attention(self._feature_attention(x), kv, n_ctx)
        if self.pre_norm:
            return x + self.mlp(self.norm_mlp(x)), kv
        return self.norm_mlp(x + self.mlp(x)), kv


class PerFeatureTransformer(nn.Module):
    """The per-feature ICL transformer (used alone it is the uncompressed "POT" model).

    Parameters
    ----------
    config
        Architecture (:class:`TACOConfig`).
    seed
        Seeds the parameter initialisation (torch's default init, zero-init last linears).

    Examples
    --------
    >>> net = PerFeatureTransformer(TACOConfig.small(), seed=0)
    >>> X, y = torch.randn(2, 30, 5), torch.randint(0, 2, (2, 20))
    >>> net(X, y).shape
    torch.Size([2, 10, 4])
    """

    def __init__(self, config: TACOConfig, *, seed: Seed = 0) -> None:
        super().__init__()
        E = check_config(config, owner="PerFeatureTransformer").emsize
        self.config = config
        generator = torch_generator(seed)  # one stream; each part below draws its own sub-seed
        self.encoder = InputEncoder(config, seed=generator)
        with seeded_default_init(generator):
            self.layers = nn.ModuleList(Layer(config) for _ in range(config.nlayers))
            self.decoder = nn.Sequential(
                nn.Linear(E, 4 * E), nn.GELU(), nn.Linear(4 * E, config.max_classes)
            )

    def row_attention_entries(self) -> list[int]:
        """Row-attention score entries (query rows × key rows, per column) of the last call."""
        return [layer.row_entries for layer in self.layers]

    @property
    def dtype(self) -> torch.dtype:
        """The parameters' dtype: inputs must have it."""
        return self.decoder[0].weight.dtype

    def _tokens(self, name: str, tokens: object, owner: str, rows: int = 1) -> torch.Tensor:
        """A (B, T >= rows, C, E) token grid of the model's width and dtype."""
        tokens = check_tensor(name, tokens, owner=owner, ndim=4)
        B, T, C, E = tokens.shape
        if B < 1 or rows > T or C < 2 or self.config.emsize != E:
            raise ValueError(
                f"{owner}: {name} must be (B >= 1, T >= {rows}, G + 1 >= 2, "
                f"E = {self.config.emsize}); got {tuple(tokens.shape)}."
            )
        if tokens.dtype != self.dtype:
            raise TypeError(f"{owner}: {name} must have dtype {self.dtype}; got {tokens.dtype}.")
        return tokens

    def run_layers(self, tokens: torch.Tensor, n_ctx: int) -> torch.Tensor:
        """All layers on ``tokens`` (B, T, G + 1, E); the first ``n_ctx`` rows are the context.

        Raises
        ------
        TypeError, ValueError
            If ``tokens`` is not such a grid or ``n_ctx`` is not in [1, T] (rows attend to the
            context only: without one there is nothing to attend to).
        """
        owner = "PerFeatureTransformer.run_layers"
        tokens = self._tokens("tokens", tokens, owner)
        n_ctx = check_positive_int("n_ctx", n_ctx, owner=owner, maximum=tokens.shape[1])
        return self._run_layers(tokens, n_ctx)

    def _run_layers(self, tokens: torch.Tensor, n_ctx: int) -> torch.Tensor:
        for layer in self.layers:
            tokens, _ = layer(tokens, n_ctx)
        return tokens

    def decode(self, tokens: torch.Tensor) -> torch.Tensor:
        """Logits (B, M, max_classes) from the target tokens of ``tokens`` (B, M, G + 1, E).

        Raises
        ------
        TypeError, ValueError
            If ``tokens`` is not a token grid of the model's width and dtype.
        """
        return self.decoder(
            self._tokens("tokens", tokens, "PerFeatureTransformer.decode", 0)[:, :, -1]
        )

    def _inputs(
        self, X: object, y_train: object, stats: object, owner: str
    ) -> tuple[torch.Tensor, torch.Tensor, EncoderStats]:
        """Rows (B, T, F), labels of the first N >= 1 rows, and the statistics (default: theirs)."""
        X = check_rows("X", X, owner=owner, config=self.config, dtype=self.dtype, rows=1)
        y_train = check_labels(
            "y_train", y_train, owner=owner, batch=X.shape[0], max_rows=X.shape[1],
            n_classes=self.config.max_classes,
        )  # fmt: skip
        if stats is None:
            stats = _compute_stats(X[:, : y_train.shape[1]])
        else:
            stats = check_stats(stats, owner=owner, batch=X.shape[0], n_features=X.shape[2])
        return X, y_train, stats

    def encode(
        self, X: torch.Tensor, y_train: torch.Tensor, stats: EncoderStats | None = None
    ) -> torch.Tensor:
        """Final token states (B, T, G + 1, E); the first N = ``y_train.shape[1]`` rows train.

        Raises
        ------
        TypeError, ValueError
            If ``X`` is not (B, T, F) rows of the model's dtype, ``y_train`` not (B, 1 <= N <= T)
            class ids or ``stats`` not of (B, F).
        """
        X, y_train, stats = self._inputs(X, y_train, stats, "PerFeatureTransformer.encode")
        return self._encode(X, y_train, stats)

    def _encode(
        self,
        X: torch.Tensor,
        y_train: torch.Tensor,
        stats: EncoderStats,
        code_order: torch.Tensor | None = None,
    ) -> torch.Tensor:
        tokens = self.encoder._forward(X, y_train, stats, code_order)
        return self._run_layers(tokens, y_train.shape[1])

    def forward(
        self,
        X: torch.Tensor,
        y_train: torch.Tensor,
        stats: EncoderStats | None = None,
        *,
        code_order: torch.Tensor | None = None,
    ) -> torch.Tensor:
        """Logits (B, T - N, max_classes) of the test rows of ``X`` (B, T, F).

        ``code_order`` (B, max_groups), a permutation per dataset, gives group j the positional
        code ``r[code_order[b, j]]`` (training-time shuffle); ``None``: group j gets r_j.

        Raises
        ------
        TypeError, ValueError
            As :meth:`encode`, or if ``code_order`` is not one permutation per dataset.
        """
        owner = "PerFeatureTransformer"
        X, y_train, stats = self._inputs(X, y_train, stats, owner)
        code_order = check_code_order(code_order, owner=owner, batch=X.shape[0], config=self.config)
        tokens = self._encode(X, y_train, stats, code_order)
        return self.decoder(tokens[:, y_train.shape[1] :, -1])

    def predict_with_context(
        self, context: torch.Tensor, X_test: torch.Tensor, stats: EncoderStats
    ) -> torch.Tensor:
        """Logits (B, M, C) of ``X_test`` (B, M, F) attending only to ``context`` (B, K, G+1, E).

        The context rows enter the layers as they are (no encoder, label or position added).

        Raises
        ------
        TypeError, ValueError
            If ``context`` is not a (B, K >= 1, G + 1, E) grid, ``X_test`` not (B, M, F) rows
            with ⌈F / g⌉ = G, or ``stats`` not of (B, F).
        """
        owner = "PerFeatureTransformer.predict_with_context"
        context = self._tokens("context", context, owner)
        X_test = self._test_rows(X_test, context.shape[0], context.shape[2] - 1, owner)
        check_stats(stats, owner=owner, batch=X_test.shape[0], n_features=X_test.shape[2])
        return self._predict_with_context(context, X_test, stats)

    def _test_rows(self, X_test: object, batch: int, groups: int, owner: str) -> torch.Tensor:
        X_test = check_rows("X_test", X_test, owner=owner, config=self.config, dtype=self.dtype)
        g = self.config.features_per_group
        if X_test.shape[0] != batch or -(-X_test.shape[2] // g) != groups:
            raise ValueError(
                f"{owner}: X_test must have B = {batch} and ⌈F / {g}⌉ = {groups} feature groups; "
                f"got {tuple(X_test.shape)}."
            )
        return X_test

    def _predict_with_context(
        self,
        context: torch.Tensor,
        X_test: torch.Tensor,
        stats: EncoderStats,
        code_order: torch.Tensor | None = None,
    ) -> torch.Tensor:
        empty = torch.zeros(X_test.shape[0], 0, device=X_test.device)
        test_tokens = self.encoder._forward(X_test, empty, stats, code_order)
        tokens = self._run_layers(torch.cat([context, test_tokens], dim=1), context.shape[1])
        return self.decoder(tokens[:, context.shape[1] :, -1])

    def build_cache(self, X_train: torch.Tensor, y_train: torch.Tensor) -> KVCache:
        """Row-attention keys/values of every layer for the training rows (POT with a KV cache).

        Raises
        ------
        TypeError, ValueError
            If ``X_train`` is not (B, N >= 1, F) rows or ``y_train`` not their (B, N) labels.
        """
        owner = "PerFeatureTransformer.build_cache"
        X_train = check_rows(
            "X_train", X_train, owner=owner, config=self.config, dtype=self.dtype, rows=1
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
        tokens = self.encoder._forward(X_train, y_train, _compute_stats(X_train))
        cache = []
        for layer in self.layers:
            tokens, kv = layer(tokens, X_train.shape[1])
            cache.append(kv)
        return cache

    def predict_with_cache(
        self, cache: KVCache, X_test: torch.Tensor, stats: EncoderStats
    ) -> torch.Tensor:
        """Logits (B, M, C) of ``X_test`` given the cached training keys/values.

        Raises
        ------
        TypeError, ValueError
            If ``cache`` is not one (keys, values) pair of (B·(G+1), H, n >= 1, E/H) tensors per
            layer, or ``X_test``/``stats`` do not match it.
        """
        owner = "PerFeatureTransformer.predict_with_cache"
        if not isinstance(cache, list | tuple) or len(cache) != len(self.layers):
            raise TypeError(
                f"{owner}: cache must hold one (keys, values) pair per layer "
                f"({len(self.layers)}); got {type(cache).__name__}."
            )
        X_test = check_rows("X_test", X_test, owner=owner, config=self.config, dtype=self.dtype)
        check_stats(stats, owner=owner, batch=X_test.shape[0], n_features=X_test.shape[2])
        G = -(-X_test.shape[2] // self.config.features_per_group)
        H, E = self.config.nhead, self.config.emsize
        for i, pair in enumerate(cache):
            if not isinstance(pair, list | tuple) or len(pair) != 2:
                raise TypeError(f"{owner}: cache[{i}] must be a (keys, values) pair.")
            for t in pair:
                t = check_tensor(f"cache[{i}]", t, owner=owner, ndim=4)
                if t.shape[0] != X_test.shape[0] * (G + 1) or t.shape[1] != H or t.shape[2] < 1 \
                        or t.shape[3] != E // H or t.dtype != self.dtype:  # fmt: skip
                    raise ValueError(
                        f"{owner}: cache[{i}] tensors must be (B·(G+1), H, n >= 1, E/H) = "
                        f"({X_test.shape[0] * (G + 1)}, {H}, n, {E // H}) of {self.dtype}; "
                        f"got {tuple(t.shape)} {t.dtype}."
                    )
        empty = torch.zeros(X_test.shape[0], 0, device=X_test.device)
        tokens = self.encoder._forward(X_test, empty, stats)
        for layer, kv in zip(self.layers, cache, strict=True):
            tokens, _ = layer(tokens, 0, kv)
        return self.decoder(tokens[:, :, -1])
