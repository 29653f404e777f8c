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
    Progress,
    Seed,
    check_in_interval,
    check_one_of,
    check_positive_int,
    check_tensor,
    numpy_generator,
    optimizer_step,
    progress_reporter,
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
MAX_WIDTH = 2**14  # widest embedding or hidden layer of the toy model
MAX_COPIES = 10**4  # most perturbed copies per prompt
MAX_PROMPTS = 10**7  # most prompts of one split (checked before the token table is built)


def _check_tokens(tokens: object, owner: str, *, ndim: int = 2, room: bool = False) -> torch.Tensor:
    """Integer token ids in ``[0, VOCAB)``; ``room``: ``(..., MAX_LEN)`` with space for fillers."""
    check_tensor("tokens", tokens, ndim=ndim, floating=False, owner=owner)
    if tokens.dtype not in (torch.int64, torch.int32) or (room and tokens.shape[-1] != MAX_LEN):
        raise TypeError(
            f"{owner}: tokens must be integer ids"
            + (f" of shape (..., {MAX_LEN})" if room else "")
            + f"; got dtype {tokens.dtype}, shape {tuple(tokens.shape)}."
        )
    if tokens.numel() and (int(tokens.min()) < 0 or int(tokens.max()) >= VOCAB):
        raise ValueError(f"{owner}: tokens must be ids in [0, {VOCAB}).")
    if room and tokens.numel() and int((tokens != PAD).sum(-1).max()) > MAX_LEN - MAX_FILLERS:
        raise ValueError(
            f"{owner}: tokens must leave room for {MAX_FILLERS} fillers (at most "
            f"{MAX_LEN - MAX_FILLERS} real tokens per prompt)."
        )
    return tokens.long()


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

    Examples
    --------
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
        owner = "ToyIntentNet"
        shape = (N_FILLERS, None)
        check_tensor("filler_embeddings", filler_embeddings, owner=owner, finite=True, shape=shape)
        if not 1 <= filler_embeddings.shape[1] <= MAX_WIDTH:
            raise ValueError(f"{owner}: filler_embeddings must have 1 to {MAX_WIDTH} columns.")
        hidden = check_positive_int("hidden", hidden, owner=owner, maximum=MAX_WIDTH)
        n_classes = check_positive_int("n_classes", n_classes, owner=owner, maximum=MAX_WIDTH)
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
        owner = "ToyIntentNet"
        tokens = _check_tokens(tokens, owner)
        if noise is not None:
            d = self.filler_embed.shape[1]
            check_tensor("noise", noise, shape=(*tokens.shape, d), owner=owner)
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

    def __post_init__(self) -> None:
        owner = "ToyIntentTask"
        check_one_of("regime", self.regime, tuple(REGIMES), owner=owner)
        for split in ("train", "test"):
            tokens, labels = getattr(self, f"{split}_tokens"), getattr(self, f"{split}_labels")
            _check_tokens(tokens, f"{owner} ({split}_tokens)", room=True)
            n = (tokens.shape[0],)
            check_tensor(f"{split}_labels", labels, shape=n, floating=False, owner=owner)
        fillers = self.filler_embeddings
        check_tensor(
            "filler_embeddings", fillers, shape=(N_FILLERS, None), finite=True, owner=owner
        )
        check_in_interval("sigma", self.sigma, low=0.0, closed="neither", owner=owner)
        check_tensor("keyword_ids", self.keyword_ids, floating=False, owner=owner)

    @property
    def d(self) -> int:
        """Embedding width."""
        return int(self.filler_embeddings.shape[1])

    def batch(self, tokens: torch.Tensor) -> Any:
        """The clean model input for ``tokens``: the tokens, or ``{tokens, noise=0}`` (gaussian)."""
        tokens = _check_tokens(tokens, "ToyIntentTask.batch")
        if self.regime == "gaussian":
            return {"tokens": tokens, "noise": torch.zeros(*tokens.shape, self.d)}
        return tokens

    def train_batches(self, batch_size: int, seed: Seed = 0) -> list[Any]:
        """The training prompts in shuffled minibatches, each made by :meth:`batch`.

        One permutation drawn from ``seed``; the last batch holds the remainder. These are the
        clean batches :func:`~icml26.debias.debias_finetune` cycles through.

        Examples
        --------
        >>> task = make_toy_intent_task(seed=0, n_train=100, n_test=10)
        >>> [b.shape[0] for b in task.train_batches(40, seed=0)]
        [40, 40, 20]
        """
        batch_size = check_positive_int("batch_size", batch_size, owner="train_batches")
        perm = numpy_generator(seed).permutation(len(self.train_tokens))
        starts = range(0, len(perm), batch_size)
        return [self.batch(self.train_tokens[perm[i : i + batch_size]]) for i in starts]

    def perturb(self, batch: Any, rng: np.random.Generator) -> Any:
        """A random perturbation of a batch made by :meth:`batch` (``debias_finetune``'s form)."""
        owner = "ToyIntentTask.perturb"
        if not isinstance(rng, np.random.Generator):
            raise TypeError(f"{owner}: rng must be a numpy Generator; got {type(rng).__name__}.")
        if self.regime == "gaussian":
            if not isinstance(batch, dict) or "tokens" not in batch:
                raise TypeError(f"{owner}: batch must be what batch() returns ({{'tokens', ...}}).")
            tokens = _check_tokens(batch["tokens"], owner)
            noise = rng.standard_normal((*tokens.shape, self.d)) * self.sigma
            return {"tokens": tokens, "noise": torch.as_tensor(noise, dtype=torch.float32)}
        return _append_fillers(_check_tokens(batch, owner, room=True), rng)

    def perturb_example(self, tokens: torch.Tensor, rng: random.Random) -> torch.Tensor:
        """Perturb one prompt ``(16,)`` (the ``(x, rng) -> x'`` form ``certify`` takes)."""
        owner = "perturb_example"
        if self.regime == "gaussian":
            raise ValueError(f"{owner}: the gaussian regime perturbs embeddings, not tokens.")
        if not isinstance(rng, random.Random):
            raise TypeError(f"{owner}: rng must be a random.Random; got {type(rng).__name__}.")
        one_prompt = isinstance(tokens, torch.Tensor) and tokens.ndim == 1
        if not (one_prompt and tokens.numel() == MAX_LEN):
            tokens = _check_tokens(tokens, owner, ndim=1, room=True)  # raises with the reason
        ids = tokens.tolist()  # one prompt: Python lists beat numpy/torch calls on 16 ids
        if tokens.dtype not in (torch.int64, torch.int32) or min(ids) < 0 or max(ids) >= VOCAB:
            _check_tokens(tokens, owner, ndim=1, room=True)  # raises with the reason
        length = MAX_LEN - ids.count(PAD)
        if length > MAX_LEN - MAX_FILLERS:
            _check_tokens(tokens, owner, ndim=1, room=True)  # raises with the reason
        # the draws of _append_fillers on a batch of one, so both paths give the same copies
        gen = np.random.default_rng(rng.getrandbits(64))
        m = int(gen.integers(1, MAX_FILLERS + 1, size=1)[0])
        fillers = (FILLER0 + gen.integers(0, N_FILLERS, size=(1, MAX_FILLERS))[0]).tolist()
        ids[length : length + m] = fillers[:m]
        return torch.tensor(ids, dtype=torch.int64)

    def perturbed_copies(self, tokens: torch.Tensor, k: int, seed: Seed) -> Any:
        """``k`` perturbed copies of each row as one flat batch of ``n·k`` rows, input-major."""
        k = check_positive_int("k", k, owner="perturbed_copies", maximum=MAX_COPIES)
        tokens = _check_tokens(tokens, "perturbed_copies", room=self.regime != "gaussian")
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
        Unknown regime, non-positive sizes, more than ``MAX_PROMPTS`` (10^7) prompts per split
        or ``d`` over ``MAX_WIDTH`` (2^14).

    Examples
    --------
    >>> task = make_toy_intent_task("systematic", seed=0, n_train=10, n_test=5)
    >>> task.train_tokens.shape, int((task.train_tokens != 0).sum(1).max())
    (torch.Size([10, 16]), 8)
    """
    owner = "make_toy_intent_task"
    check_one_of("regime", regime, tuple(REGIMES), owner=owner)
    n_train = check_positive_int("n_train", n_train, owner=owner, maximum=MAX_PROMPTS)
    n_test = check_positive_int("n_test", n_test, owner=owner, maximum=MAX_PROMPTS)
    d = check_positive_int("d", d, owner=owner, maximum=MAX_WIDTH)
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
    progress: Progress = None,
) -> ToyIntentNet:
    """Train a :class:`ToyIntentNet` on the clean training prompts (full-batch Adam).

    ``progress`` follows the project's convention (``None``/``False`` silent, ``True`` a bar, or
    ``progress(done, total, metrics)`` after every epoch); a NaN or infinite loss stops training
    with ``NonFiniteLossError``.

    Examples
    --------
    >>> task = make_toy_intent_task(seed=0, n_train=200, n_test=10)
    >>> net = train_toy_model(task, epochs=5, seed=0)
    >>> net.training
    False
    """
    owner = "train_toy_model"
    if not isinstance(task, ToyIntentTask):
        raise TypeError(f"{owner}: task must be a ToyIntentTask; got {type(task)}.")
    epochs = check_positive_int("epochs", epochs, owner=owner)
    model = ToyIntentNet(task.filler_embeddings, hidden=hidden, seed=torch_generator(seed))
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    model.train()
    with progress_reporter(progress, epochs, owner) as report:
        for epoch in range(epochs):
            loss = F.cross_entropy(model(task.train_tokens), task.train_labels)
            value = optimizer_step(loss, optimizer, step=epoch, owner=owner)
            report(epoch + 1, loss=value)
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

    Examples
    --------
    >>> task = make_toy_intent_task(seed=0, n_train=200, n_test=50)
    >>> ev = evaluate_toy(train_toy_model(task, epochs=5), task, k=2)
    >>> 0.0 <= ev.pert_acc <= 1.0
    True
    """
    owner = "evaluate_toy"
    if not isinstance(model, nn.Module):
        raise TypeError(f"{owner}: model must be a torch.nn.Module; got {type(model).__name__}.")
    if not isinstance(task, ToyIntentTask):
        raise TypeError(f"{owner}: task must be a ToyIntentTask; got {type(task).__name__}.")
    if reference is not None and not isinstance(reference, nn.Module):
        raise TypeError(f"{owner}: reference must be a torch.nn.Module or None.")
    k = check_positive_int("k", k, owner=owner, maximum=MAX_COPIES)
    if dict(model.named_modules()).get("head") is None:
        raise ValueError(f"{owner}: model must have a 'head' module (a ToyIntentNet).")
    model.eval()
    clean = task.batch(task.test_tokens)
    pert = task.perturbed_copies(task.test_tokens, k, seed)
    clean_acc = float((call_model(model, clean).argmax(-1) == task.test_labels).float().mean())
    y_rep = task.test_labels.repeat_interleave(k)
    pert_acc = float((call_model(model, pert).argmax(-1) == y_rep).float().mean())
    report = module_bias(model, "head", clean, pert, reference=reference)
    return ToyEval(clean_acc, pert_acc, report.bias_norm)
