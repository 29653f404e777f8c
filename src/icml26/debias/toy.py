"""The toy intent classifier of spec §5.1 Q2, trained from scratch, and its perturbations.

Vocabulary: ``<pad>``, ``<unk>``, 4 classes × 15 keyword tokens, 60 neutral tokens and 12 filler
tokens. A prompt is 2 keywords of its class + 1 keyword of another class + 5 neutral tokens,
shuffled, padded to 16. The network mean-pools token embeddings (``d = 32``) and applies
``Linear 64 → ReLU → Linear 64 → ReLU → Linear 4``. Filler embeddings play pretrained tokens the
classifier never saw: ``c·u + s·N(0, I)`` for a fixed random unit vector ``u``, kept in a buffer
(frozen by construction). A perturbation appends 1–4 random fillers.

Regimes: ``"systematic"`` (``c = 3``, ``s = 0.3``: a shared shift), ``"variance"``
(``c = 1``, ``s = 1.5``: fluctuation dominates) and ``"gaussian"`` (the negative control: no
fillers; zero-mean noise ``N(0, σ² I)``, ``σ = 1``, added to every token embedding).

Deviations: in the ``gaussian`` regime the noise is added per token before pooling (the spec
says only "zero-mean Gaussian embedding noise"); evaluation perturbations are drawn fresh from a
fixed seed rather than pre-drawn copies.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F  # noqa: N812
from torch import nn

from icml26.core import (
    Seed,
    check_one_of,
    check_positive_int,
    numpy_generator,
    seeded_default_init,
    torch_generator,
)
from icml26.debias.analysis import call_model, module_bias

__all__ = [
    "REGIMES",
    "ToyEval",
    "ToyIntentNet",
    "ToyIntentTask",
    "evaluate_toy",
    "make_toy_intent_task",
    "train_toy_model",
]

REGIMES = {"systematic": (3.0, 0.3), "variance": (1.0, 1.5), "gaussian": (3.0, 0.3)}
PAD, UNK = 0, 1
N_CLASSES, N_KEYWORDS, N_NEUTRAL, N_FILLERS = 4, 15, 60, 12
KEYWORD0 = 2
NEUTRAL0 = KEYWORD0 + N_CLASSES * N_KEYWORDS  # 62
FILLER0 = NEUTRAL0 + N_NEUTRAL  # 122: first filler id; ids below are trainable embeddings
VOCAB = FILLER0 + N_FILLERS  # 134
MAX_LEN = 16
PROMPT_LEN = 8  # 2 own keywords + 1 distractor keyword + 5 neutral tokens
MAX_FILLERS = 4


class ToyIntentNet(nn.Module):
    """Mean-pooled embeddings → MLP classifier; filler embeddings are a frozen buffer.

    Parameters
    ----------
    filler_embeddings
        ``(n_fillers, d)`` embeddings of the filler tokens (ids ``122 ... 133``).
    hidden, n_classes
        MLP width and number of classes.
    seed
        Seed of the default initialisation.

    Example
    -------
    >>> import torch
    >>> net = ToyIntentNet(torch.zeros(12, 32), seed=0)
    >>> net(torch.full((2, 16), 5)).shape
    torch.Size([2, 4])
    """

    def __init__(
        self,
        filler_embeddings: torch.Tensor,
        *,
        hidden: int = 64,
        n_classes: int = N_CLASSES,
        seed: Seed = 0,
    ) -> None:
        super().__init__()
        if not isinstance(filler_embeddings, torch.Tensor) or filler_embeddings.ndim != 2:
            raise TypeError("ToyIntentNet: filler_embeddings must be a (n_fillers, d) tensor.")
        hidden = check_positive_int("hidden", hidden, owner="ToyIntentNet")
        n_classes = check_positive_int("n_classes", n_classes, owner="ToyIntentNet")
        d = filler_embeddings.shape[1]
        with seeded_default_init(seed):
            self.embed = nn.Embedding(FILLER0, d, padding_idx=PAD)
            self.pool = nn.Identity()  # a named site for the pooled input (bias profiles)
            self.fc1 = nn.Linear(d, hidden)
            self.act1 = nn.ReLU()
            self.fc2 = nn.Linear(hidden, hidden)
            self.act2 = nn.ReLU()
            self.head = nn.Linear(hidden, n_classes)
        self.register_buffer("filler_embed", filler_embeddings.detach().clone().float())

    def pooled(self, tokens: torch.Tensor, noise: torch.Tensor | None = None) -> torch.Tensor:
        """Mean of the non-pad token embeddings (plus ``noise`` on each), ``(batch, d)``."""
        table = torch.cat([self.embed.weight, self.filler_embed])  # (vocab, d)
        emb = F.embedding(tokens, table)  # (batch, len, d)
        if noise is not None:
            emb = emb + noise
        mask = (tokens != PAD).unsqueeze(-1).to(emb.dtype)  # (batch, len, 1)
        return (emb * mask).sum(dim=1) / mask.sum(dim=1).clamp(min=1.0)

    def forward(self, tokens: torch.Tensor, noise: torch.Tensor | None = None) -> torch.Tensor:
        """Logits ``(batch, n_classes)`` of token ids ``(batch, len)``."""
        h = self.act1(self.fc1(self.pool(self.pooled(tokens, noise))))
        h = self.act2(self.fc2(h))
        return self.head(h)


@dataclass(frozen=True)
class ToyIntentTask:
    """Data and perturbation of one regime (built by :func:`make_toy_intent_task`).

    Attributes
    ----------
    regime
        ``"systematic"``, ``"variance"`` or ``"gaussian"``.
    train_tokens, train_labels, test_tokens, test_labels
        ``(n, 16)`` token ids and ``(n,)`` labels.
    filler_embeddings
        ``(12, d)`` frozen filler embeddings ``c·u + s·N(0, I)``.
    sigma
        Standard deviation of the embedding noise (``gaussian`` regime only).
    keyword_ids
        ``(4, 15)`` keyword ids per class (the "protected" tokens).
    """

    regime: str
    train_tokens: torch.Tensor
    train_labels: torch.Tensor
    test_tokens: torch.Tensor
    test_labels: torch.Tensor
    filler_embeddings: torch.Tensor
    sigma: float
    keyword_ids: torch.Tensor

    @property
    def d(self) -> int:
        """Embedding width."""
        return int(self.filler_embeddings.shape[1])

    def batch(self, tokens: torch.Tensor) -> Any:
        """The clean model input for ``tokens``: the tokens, or ``{tokens, noise=0}`` (gaussian)."""
        if self.regime == "gaussian":
            return {"tokens": tokens, "noise": torch.zeros(*tokens.shape, self.d)}
        return tokens

    def perturb(self, batch: Any, rng: np.random.Generator) -> Any:
        """A random perturbation of a batch made by :meth:`batch` (``debias_finetune``'s form)."""
        if self.regime == "gaussian":
            tokens = batch["tokens"]
            noise = rng.standard_normal((*tokens.shape, self.d)) * self.sigma
            return {"tokens": tokens, "noise": torch.as_tensor(noise, dtype=torch.float32)}
        return _append_fillers(batch, rng)

    def perturb_example(self, tokens: torch.Tensor, rng: random.Random) -> torch.Tensor:
        """Perturb one prompt ``(16,)`` (the ``(x, rng) -> x'`` form ``certify`` takes)."""
        if self.regime == "gaussian":
            raise ValueError(
                "perturb_example: the gaussian regime perturbs embeddings, not tokens."
            )
        return _append_fillers(tokens[None], np.random.default_rng(rng.getrandbits(64)))[0]

    def perturbed_copies(self, tokens: torch.Tensor, k: int, seed: Seed) -> Any:
        """``k`` perturbed copies of each row as one flat batch of ``n·k`` rows, input-major."""
        k = check_positive_int("k", k, owner="perturbed_copies")
        return self.perturb(self.batch(tokens.repeat_interleave(k, dim=0)), numpy_generator(seed))


def _append_fillers(tokens: torch.Tensor, rng: np.random.Generator) -> torch.Tensor:
    out = tokens.clone().numpy()  # (batch, len)
    lengths = (out != PAD).sum(axis=1)
    m = rng.integers(1, MAX_FILLERS + 1, size=len(out))  # 1-4 fillers per prompt
    ids = FILLER0 + rng.integers(0, N_FILLERS, size=(len(out), MAX_FILLERS))
    for j in range(MAX_FILLERS):
        rows = np.nonzero(j < m)[0]
        out[rows, lengths[rows] + j] = ids[rows, j]
    return torch.as_tensor(out)


def _prompts(n: int, rng: np.random.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    labels = rng.integers(0, N_CLASSES, size=n)
    tokens = np.full((n, MAX_LEN), PAD, dtype=np.int64)
    for i, y in enumerate(labels):
        other = (y + rng.integers(1, N_CLASSES)) % N_CLASSES
        own = KEYWORD0 + N_KEYWORDS * y + rng.choice(N_KEYWORDS, size=2, replace=False)
        distractor = KEYWORD0 + N_KEYWORDS * other + rng.integers(N_KEYWORDS)
        neutral = NEUTRAL0 + rng.integers(0, N_NEUTRAL, size=5)
        tokens[i, :PROMPT_LEN] = rng.permutation(np.concatenate([own, [distractor], neutral]))
    return torch.as_tensor(tokens), torch.as_tensor(labels)


def make_toy_intent_task(
    regime: str = "systematic",
    seed: Seed = 0,
    *,
    n_train: int = 2000,
    n_test: int = 1000,
    d: int = 32,
    sigma: float = 1.0,
) -> ToyIntentTask:
    """Draw the toy intent task of one regime.

    Parameters
    ----------
    regime
        ``"systematic"`` (``c = 3, s = 0.3``), ``"variance"`` (``c = 1, s = 1.5``) or
        ``"gaussian"`` (zero-mean embedding noise of std ``sigma``).
    seed
        Seed of the prompts and of the filler embeddings.
    n_train, n_test, d
        Training / test prompts and embedding width.

    Returns
    -------
    ToyIntentTask

    Raises
    ------
    ValueError
        Unknown regime or non-positive sizes.

    Example
    -------
    >>> task = make_toy_intent_task("systematic", seed=0, n_train=10, n_test=5)
    >>> task.train_tokens.shape, int((task.train_tokens != 0).sum(1).max())
    (torch.Size([10, 16]), 8)
    """
    owner = "make_toy_intent_task"
    check_one_of("regime", regime, tuple(REGIMES), owner=owner)
    n_train = check_positive_int("n_train", n_train, owner=owner)
    n_test = check_positive_int("n_test", n_test, owner=owner)
    d = check_positive_int("d", d, owner=owner)
    if not sigma > 0:
        raise ValueError(f"{owner}: sigma must be > 0; got {sigma!r}.")
    rng = numpy_generator(seed)
    train_tokens, train_labels = _prompts(n_train, rng)
    test_tokens, test_labels = _prompts(n_test, rng)
    c, s = REGIMES[regime]
    u = rng.standard_normal(d)
    u /= np.linalg.norm(u)
    fillers = c * u + s * rng.standard_normal((N_FILLERS, d))  # c·u + s·N(0, I)
    keywords = KEYWORD0 + np.arange(N_CLASSES * N_KEYWORDS).reshape(N_CLASSES, N_KEYWORDS)
    return ToyIntentTask(
        regime=regime,
        train_tokens=train_tokens,
        train_labels=train_labels,
        test_tokens=test_tokens,
        test_labels=test_labels,
        filler_embeddings=torch.as_tensor(fillers, dtype=torch.float32),
        sigma=float(sigma),
        keyword_ids=torch.as_tensor(keywords),
    )


def train_toy_model(
    task: ToyIntentTask,
    *,
    epochs: int = 80,
    lr: float = 1e-2,
    hidden: int = 64,
    seed: Seed = 0,
) -> ToyIntentNet:
    """Train a :class:`ToyIntentNet` on the clean training prompts (full-batch Adam).

    Example
    -------
    >>> task = make_toy_intent_task(seed=0, n_train=200, n_test=10)
    >>> net = train_toy_model(task, epochs=5, seed=0)
    >>> net.training
    False
    """
    if not isinstance(task, ToyIntentTask):
        raise TypeError(f"train_toy_model: task must be a ToyIntentTask; got {type(task)}.")
    epochs = check_positive_int("epochs", epochs, owner="train_toy_model")
    model = ToyIntentNet(task.filler_embeddings, hidden=hidden, seed=torch_generator(seed))
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    model.train()
    for _ in range(epochs):
        loss = F.cross_entropy(model(task.train_tokens), task.train_labels)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
    return model.eval()


@dataclass(frozen=True)
class ToyEval:
    """Clean and perturbed test accuracy and the output-bias norm of a toy model."""

    clean_acc: float
    pert_acc: float
    output_bias_norm: float


@torch.no_grad()
def evaluate_toy(
    model: nn.Module,
    task: ToyIntentTask,
    *,
    k: int = 8,
    seed: Seed = 0,
    reference: nn.Module | None = None,
) -> ToyEval:
    """Accuracy on the clean test prompts and on ``k`` perturbed copies of each.

    ``output_bias_norm = ‖mean_{x,k} F(x'_k) − mean_x F_ref(x)‖`` with ``F_ref = reference``
    (the base model before debiasing; default ``model``). Use the same ``seed`` for every model
    compared, so they see the same perturbations.

    Example
    -------
    >>> task = make_toy_intent_task(seed=0, n_train=200, n_test=50)
    >>> ev = evaluate_toy(train_toy_model(task, epochs=5), task, k=2)
    >>> 0.0 <= ev.pert_acc <= 1.0
    True
    """
    k = check_positive_int("k", k, owner="evaluate_toy")
    model.eval()
    clean = task.batch(task.test_tokens)
    pert = task.perturbed_copies(task.test_tokens, k, seed)
    clean_acc = float((call_model(model, clean).argmax(-1) == task.test_labels).float().mean())
    y_rep = task.test_labels.repeat_interleave(k)
    pert_acc = float((call_model(model, pert).argmax(-1) == y_rep).float().mean())
    report = module_bias(model, "head", clean, pert, reference=reference)
    return ToyEval(clean_acc, pert_acc, report.bias_norm)
