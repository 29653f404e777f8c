"""ReLU networks whose parameters lie in F and whose every product and sum is rounded to F.

Park, Park & Hwang, *On Minimum Depth and Width of Floating-Point Neural Networks for Representing
Floating-Point Functions* (ICML 2026), the network model (spec section 2.2): a neuron computes
z = b (+) (w_1 (*) a_1) (+) ... (+) (w_n (*) a_n) in a fixed summation order, then ReLU(z) =
max(z, 0) on hidden layers (ReLU(-inf) = 0, NaN propagates); the output layer has no ReLU.

Deviations: the summation order acts on the bias and the *non-zero-weight* terms of a neuron.
Zero-weight products change nothing numerically (z (+) +-0 = z), so the ``sparse`` engine skips
them; the ``dense`` engine computes every product anyway (in place for the sequential orders,
after the tree for ``pairwise``) so that 0 (*) inf = NaN surfaces. The two engines therefore agree
exactly whenever every activation is finite.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, final

import numpy as np
from numpy.typing import ArrayLike

from icml26.core import check_one_of, check_positive_int
from icml26.floatnet.formats import FloatFormat

__all__ = ["ENGINES", "ORDERS", "FloatReLUNet", "NetOutput"]

ENGINES = ("dense", "sparse")
ORDERS = ("bias_first", "bias_last", "reversed", "pairwise")
_CHUNK = 4_000_000  # elements per pairwise block: bounds memory of (batch, neurons, terms)


@dataclass(frozen=True)
class NetOutput:
    """Output of :meth:`FloatReLUNet.evaluate`.

    Attributes
    ----------
    y
        ``(batch,)`` network outputs.
    nonfinite
        ``(batch,)`` bool: some hidden activation of this input was +inf or NaN.
    """

    y: np.ndarray
    nonfinite: np.ndarray


@final
class FloatReLUNet:
    """A feed-forward ReLU network with parameters in F, evaluated with rounded operations.

    Parameters
    ----------
    fmt
        The float format F of parameters and arithmetic.
    layers
        ``[(W_1, b_1), ..., (W_L, b_L)]`` with ``W_l`` of shape ``(n_l, n_{l-1})`` and ``b_l`` of
        shape ``(n_l,)``; every entry a finite value of F. The last layer has one output.

    Attributes
    ----------
    depth
        Number of affine layers L (L - 1 hidden ReLU layers).
    width
        Largest hidden width (0 for L = 1).
    widths
        Output sizes of all layers, ``(n_1, ..., n_L)``.

    Raises
    ------
    ValueError
        If shapes do not chain, the last layer is not scalar, or an entry is not in F.

    Examples
    --------
    >>> fmt = FloatFormat(3, 3)
    >>> net = FloatReLUNet(fmt, [(np.array([[1.0], [-1.0]]), np.zeros(2)),
    ...                          (np.array([[1.0, 1.0]]), np.zeros(1))])   # |x|
    >>> net(np.array([[-2.5], [3.0]])).tolist(), net.depth, net.width
    ([2.5, 3.0], 2, 2)
    """

    def __init__(self, fmt: FloatFormat, layers: Sequence[tuple[ArrayLike, ArrayLike]]) -> None:
        if not isinstance(fmt, FloatFormat):
            raise TypeError(
                f"FloatReLUNet: fmt must be a FloatFormat; got {fmt!r} ({type(fmt).__name__})."
            )
        if len(layers) == 0:
            raise ValueError("FloatReLUNet: layers must hold at least one (W, b); got 0 layers.")
        self.fmt = fmt
        self.layers: list[tuple[np.ndarray, np.ndarray]] = []
        n_in = None
        for k, (W, b) in enumerate(layers, start=1):
            W, b = np.asarray(W, dtype=np.float64), np.asarray(b, dtype=np.float64)
            if W.ndim != 2 or b.shape != (W.shape[0],) or (n_in is not None and W.shape[1] != n_in):
                raise ValueError(
                    f"FloatReLUNet: layer {k} must have W of shape (n_out, {n_in or 'n_in'}) and b "
                    f"of shape (n_out,); got W {W.shape}, b {b.shape}."
                )
            fmt._check_members(f"layer {k} weights", W)
            fmt._check_members(f"layer {k} bias", b)
            self.layers.append((W, b))
            n_in = W.shape[0]
        if n_in != 1:
            raise ValueError(f"FloatReLUNet: the last layer must have 1 output; got {n_in}.")
        self._structure = [_Structure(W) for W, _ in self.layers]

    @property
    def d(self) -> int:
        """Input dimension."""
        return self.layers[0][0].shape[1]

    @property
    def depth(self) -> int:
        """Number of affine layers."""
        return len(self.layers)

    @property
    def widths(self) -> tuple[int, ...]:
        """Output size of every layer, the last one being 1."""
        return tuple(W.shape[0] for W, _ in self.layers)

    @property
    def width(self) -> int:
        """Largest hidden-layer width (0 when there is no hidden layer)."""
        return max(self.widths[:-1], default=0)

    # ----- evaluation ---------------------------------------------------------------------------
    def __call__(
        self, X: ArrayLike, *, engine: str = "dense", order: str = "bias_first"
    ) -> np.ndarray:
        """Network outputs ``(batch,)`` for inputs ``X`` of shape ``(batch, d)`` holding F values.

        Parameters
        ----------
        X
            Inputs, each entry a finite value of F.
        engine
            ``"dense"`` (every product computed) or ``"sparse"`` (zero weights skipped).
        order
            Summation order of each neuron: ``"bias_first"`` (b, then terms left to right),
            ``"bias_last"`` (terms left to right, then b), ``"reversed"`` (b, then right to left)
            or ``"pairwise"`` (tree sum over [b, terms], adjacent pairs level by level).

        Raises
        ------
        ValueError
            If ``X`` has the wrong shape or holds values outside F, or an option is unknown.
        """
        return self.evaluate(X, engine=engine, order=order).y

    def evaluate(
        self, X: ArrayLike, *, engine: str = "dense", order: str = "bias_first"
    ) -> NetOutput:
        """Outputs and, per input, whether a hidden activation was +inf or NaN.

        Parameters and errors as for ``__call__``.
        """
        out, nonfinite = self._run(X, engine, order, stop=self.depth)
        return NetOutput(y=out[:, 0], nonfinite=nonfinite)

    def hidden(
        self, X: ArrayLike, layer: int, *, engine: str = "dense", order: str = "bias_first"
    ) -> np.ndarray:
        """Post-ReLU activations ``(batch, n_layer)`` of hidden layer ``layer`` (1-based).

        Raises
        ------
        ValueError
            If ``layer`` is not in ``1 .. depth - 1``.
        """
        check_positive_int("layer", layer, owner="FloatReLUNet.hidden")
        if layer >= self.depth:
            raise ValueError(
                f"FloatReLUNet.hidden: layer must be in [1, {self.depth - 1}]; got {layer!r} (int)."
            )
        return self._run(X, engine, order, stop=layer)[0]

    def _run(self, X: ArrayLike, engine: str, order: str, stop: int) -> tuple[np.ndarray, Any]:
        check_one_of("engine", engine, ENGINES, owner="FloatReLUNet")
        check_one_of("order", order, ORDERS, owner="FloatReLUNet")
        A = np.asarray(X, dtype=np.float64)
        if A.ndim != 2 or A.shape[1] != self.d:
            raise ValueError(
                f"FloatReLUNet: X must have shape (batch, {self.d}); "
                f"got {A.shape} ({type(X).__name__})."
            )
        self.fmt._check_members("X", A)
        nonfinite = np.zeros(A.shape[0], dtype=bool)
        for k in range(stop):
            W, b = self.layers[k]
            Z = _affine(self.fmt, W, b, self._structure[k], A, engine, order)
            if k == self.depth - 1:
                return Z, nonfinite
            A = np.maximum(Z, 0.0)  # ReLU; np.maximum propagates NaN
            nonfinite |= ~np.all(np.isfinite(A), axis=1)
        return A, nonfinite

    # ----- serialisation ------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """JSON-able dict: the format's parameters and every layer's W and b as nested lists."""
        f = self.fmt
        return {
            "format": {"p": f.p, "emax": f.emax, "variant": f.variant},
            "layers": [{"W": W.tolist(), "b": b.tolist()} for W, b in self.layers],
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> FloatReLUNet:
        """Rebuild a network from :meth:`to_dict` output (validated like the constructor)."""
        fmt = FloatFormat(**data["format"])
        return cls(fmt, [(layer["W"], layer["b"]) for layer in data["layers"]])


class _Structure:
    """Non-zero pattern of W, precomputed for the sparse engine and the pairwise tree."""

    def __init__(self, W: np.ndarray) -> None:
        nz = W != 0
        self.zero_cols = [np.nonzero(~nz[:, j])[0] for j in range(W.shape[1])]
        self.nz_rows = [np.nonzero(nz[:, j])[0] for j in range(W.shape[1])]
        counts = nz.sum(axis=1)
        kmax = int(counts.max(initial=0))
        # Left-aligned (neuron, slot) -> column of its slot-th non-zero term; -1 marks "absent".
        self.slots = np.full((W.shape[0], kmax), -1, dtype=np.int64)
        rows, cols = np.nonzero(nz)
        position = np.arange(len(rows)) - np.repeat(np.cumsum(counts) - counts, counts)
        self.slots[rows, position] = cols


def _affine(
    fmt: FloatFormat,
    W: np.ndarray,
    b: np.ndarray,
    structure: _Structure,
    A: np.ndarray,
    engine: str,
    order: str,
) -> np.ndarray:
    """Rounded pre-activations ``(batch, n_out)`` of one layer on activations ``A``."""
    if order == "pairwise":
        Z = _pairwise(fmt, W, b, structure, A)
        if engine == "dense":
            for j, rows in enumerate(structure.zero_cols):
                if len(rows):
                    Z[:, rows] = fmt.add(Z[:, rows], fmt.mul(A[:, j : j + 1], W[rows, j]))
        return Z
    columns = range(W.shape[1] - 1, -1, -1) if order == "reversed" else range(W.shape[1])
    start = np.zeros_like(b) if order == "bias_last" else b
    Z = np.broadcast_to(start, (A.shape[0], len(b))).copy()
    for j in columns:
        if engine == "dense":
            Z = fmt.add(Z, fmt.mul(A[:, j : j + 1], W[:, j]))
        else:
            rows = structure.nz_rows[j]
            if len(rows):
                Z[:, rows] = fmt.add(Z[:, rows], fmt.mul(A[:, j : j + 1], W[rows, j]))
    if order == "bias_last":
        Z = fmt.add(Z, b)  # 0 (+) t = t exactly, so starting from +0 adds the terms alone first
    return Z


def _pairwise(
    fmt: FloatFormat, W: np.ndarray, b: np.ndarray, structure: _Structure, A: np.ndarray
) -> np.ndarray:
    """Tree sum over [b, non-zero terms] per neuron, in blocks of neurons to bound memory."""
    batch, n_out = A.shape[0], len(b)
    slots = structure.slots
    per_block = max(1, _CHUNK // max(1, batch * (slots.shape[1] + 1)))
    Z = np.empty((batch, n_out))
    for lo in range(0, n_out, per_block):
        idx = slots[lo : lo + per_block]  # (neurons, kmax)
        present = np.concatenate([np.ones((len(idx), 1), dtype=bool), idx >= 0], axis=1)
        w = np.where(idx >= 0, W[np.arange(lo, lo + len(idx))[:, None], idx], 0.0)
        terms = fmt.mul(A[:, np.maximum(idx, 0)], w)  # (batch, neurons, kmax)
        terms = np.concatenate(
            [np.broadcast_to(b[lo : lo + len(idx), None], (batch, len(idx), 1)), terms], axis=2
        )
        while terms.shape[2] > 1:
            if terms.shape[2] % 2:
                terms = np.concatenate([terms, np.zeros_like(terms[:, :, :1])], axis=2)
                present = np.concatenate([present, np.zeros_like(present[:, :1])], axis=1)
            left, right = terms[:, :, 0::2], terms[:, :, 1::2]
            has_right = present[:, 1::2]
            terms = np.where(has_right, fmt.add(left, right), left)  # an absent leaf passes x up
            present = present[:, 0::2] | has_right
        Z[:, lo : lo + len(idx)] = terms[:, :, 0]
    return Z
