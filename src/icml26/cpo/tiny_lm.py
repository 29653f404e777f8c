"""A tiny causal LM on a synthetic arithmetic preference task (spec §5.2 of the cpo spec).

Prompts ``Q <op> a b =`` over the integers ``0 … N-1``; each of the ``n_types`` operations
answers ``(a or b) + shift mod N``. The SFT corpus of a few "violated" operation types gives a
fluent wrong answer (the other operand, "misread") in ``wrong_frac`` of its completions, so the SFT
reference prefers the rejected response there: ``δ_ref ≈ log((1 - wrong_frac) / wrong_frac) < 0``.
Preference pairs put the correct answer against that habitual wrong one, with Bradley–Terry label
noise. With
``β = 2.5`` and flip probability 0.1 the DPO optimum ``δ_ref + logit(0.9)/β ≈ -1.39 + 0.88`` is
negative on the violated types: assumption (A) fails and DPO's optimum lies in ``U``.

Deviations: answers are single tokens (no filler), so the length-normalised score equals the
summed one; prompts with ``a = b`` are dropped (there the misread answer is correct); the SFT
reference minimises the *expected* NLL of the corpus (soft targets ``wrong_frac`` /
``1 - wrong_frac``) instead of a sampled corpus; the noisy preference label of a prompt is drawn
afresh each time the prompt is drawn (an unlimited pool of annotators), so that DPO's optimum is the
finite population one and not per-prompt memorisation of a single label.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Literal, final

import torch
from torch import nn

from icml26.core import (
    Progress,
    Seed,
    check_in_interval,
    check_one_of,
    check_positive_int,
    check_tensor,
    normal_init_,
    numpy_generator,
    optimizer_step,
    progress_reporter,
    seeded_default_init,
    set_lr,
    torch_generator,
)
from icml26.cpo.diagnostics import _check_ids, frac_in_undesirable, policy_preference_accuracy
from icml26.cpo.losses import PrefLossOutput, constrained_po_loss, dpo_loss, sequence_logps

__all__ = [
    "LM_METHODS",
    "ArithPreferenceTask",
    "TinyCausalLM",
    "make_arith_preference_task",
    "tiny_lm_metrics",
    "train_sft",
    "train_tiny_lm",
]

LM_METHODS = ("dpo", "smooth", "clip", "easy")
MAX_NUMBERS = 1000  # make_arith_preference_task: operand range N
MAX_TYPES = 1000  # make_arith_preference_task: operation types
MAX_PROMPTS = 10**7  # make_arith_preference_task: prompts n_types · N · (N - 1)
MAX_VOCAB = 2**17  # TinyCausalLM sizes: vocabulary,
MAX_WIDTH = 4096  # width d_model (and heads),
MAX_LAYERS = 64  # depth,
MAX_LEN = 4096  # and positions
MAX_STEPS = 10**6  # train_sft / train_tiny_lm: Adam steps
MAX_BATCH = 2**16  # train_sft / train_tiny_lm: prompts per step


@dataclass(frozen=True)
class ArithPreferenceTask:
    """The synthetic arithmetic task (integer tensors; prompts are ``(rows, 5)`` token ids).

    Vocabulary: numbers ``0 … n_numbers-1``, then ``Q``, the ``n_types`` operation tokens, ``=``.

    Attributes
    ----------
    n_numbers, n_types
        ``N`` and the number of operation types.
    violated_types
        ``(n_violated,)`` operation types whose SFT corpus prefers the wrong answer.
    wrong_frac
        Fraction of SFT completions that are the wrong answer on violated types.
    train_prompts, test_prompts
        ``(rows, 5)`` prompts ``Q op a b =`` of the two splits.
    train_correct, train_wrong, test_correct, test_wrong
        ``(rows,)`` correct and habitual wrong answer tokens.
    train_type, test_type
        ``(rows,)`` operation type of each prompt.
    label_flip
        Probability that a preference label marks the wrong answer as chosen.
    """

    n_numbers: int
    n_types: int
    violated_types: torch.Tensor
    wrong_frac: float
    train_prompts: torch.Tensor
    train_correct: torch.Tensor
    train_wrong: torch.Tensor
    train_type: torch.Tensor
    label_flip: float
    test_prompts: torch.Tensor
    test_correct: torch.Tensor
    test_wrong: torch.Tensor
    test_type: torch.Tensor

    @property
    def vocab_size(self) -> int:
        """Numbers, ``Q``, the operation tokens and ``=``."""
        return self.n_numbers + self.n_types + 2

    def __post_init__(self) -> None:
        owner = "ArithPreferenceTask"
        check_positive_int("n_numbers", self.n_numbers, owner=owner, minimum=3)
        check_positive_int("n_types", self.n_types, owner=owner)
        _check_ids(owner, "violated_types", self.violated_types, self.n_types, (None,))
        check_in_interval(
            "wrong_frac", self.wrong_frac, low=0.0, high=1.0, closed="neither", owner=owner
        )
        check_in_interval(
            "label_flip", self.label_flip, low=0.0, high=0.5, closed="left", owner=owner
        )
        for split in ("train", "test"):
            prompts = getattr(self, f"{split}_prompts")
            _check_ids(owner, f"{split}_prompts", prompts, self.vocab_size, (None, 5))
            rows = prompts.shape[0]
            if rows == 0:
                raise ValueError(f"{owner}: {split}_prompts must hold at least one prompt.")
            for name, size in (("correct", self.n_numbers), ("wrong", self.n_numbers)):
                _check_ids(
                    owner, f"{split}_{name}", getattr(self, f"{split}_{name}"), size, (rows,)
                )
            _check_ids(
                owner, f"{split}_type", getattr(self, f"{split}_type"), self.n_types, (rows,)
            )

    def is_violated(self, types: torch.Tensor) -> torch.Tensor:
        """Boolean mask: which of ``types`` (an integer tensor) are violated operation types."""
        check_tensor("types", types, owner="ArithPreferenceTask.is_violated", floating=False)
        return torch.isin(types, self.violated_types)


def make_arith_preference_task(
    n_numbers: int = 30,
    n_types: int = 8,
    n_violated: int = 3,
    wrong_frac: float = 0.8,
    label_flip: float = 0.1,
    train_frac: float = 0.5,
    seed: Seed = 0,
) -> ArithPreferenceTask:
    """Draw the task: all prompts ``Q op a b =`` with ``a ≠ b`` and a random train/test split.

    Operation ``k`` answers ``(a if k even else b) + k // 2 mod N``; its habitual wrong answer
    misreads the operand, ``(b if k even else a) + k // 2 mod N``. A random ``n_violated`` of the
    types are violated.

    Parameters
    ----------
    n_numbers
        ``N ≥ 3``, the operand range (at most ``MAX_NUMBERS = 1000``).
    n_types
        Number of operation types (at most ``MAX_TYPES = 1000``), with at most
        ``MAX_PROMPTS = 10**7`` prompts ``n_types · N · (N - 1)``.
    n_violated
        How many types are violated (``≤ n_types``).
    wrong_frac
        Share of wrong SFT completions on violated types, in ``(0, 1)``.
    label_flip
        Probability in ``[0, 0.5)`` that a preference label marks the wrong answer as chosen.
    train_frac
        Share of prompts in the training split, in ``(0, 1)``.
    seed
        Randomness (int, generator or None).

    Returns
    -------
    ArithPreferenceTask

    Raises
    ------
    ValueError
        On out-of-range sizes or fractions.

    Examples
    --------
    >>> t = make_arith_preference_task(n_numbers=5, seed=0)
    >>> tuple(t.train_prompts.shape[1:]), t.vocab_size, int(t.violated_types.numel())
    ((5,), 15, 3)
    """
    owner = "make_arith_preference_task"
    n_numbers = check_positive_int(
        "n_numbers", n_numbers, owner=owner, minimum=3, maximum=MAX_NUMBERS
    )
    n_types = check_positive_int("n_types", n_types, owner=owner, maximum=MAX_TYPES)
    if n_types * n_numbers * (n_numbers - 1) > MAX_PROMPTS:
        raise ValueError(
            f"{owner}: n_types * n_numbers * (n_numbers - 1) must be <= {MAX_PROMPTS} prompts; "
            f"got {n_types} * {n_numbers} * {n_numbers - 1}."
        )
    n_violated = check_positive_int("n_violated", n_violated, owner=owner, minimum=0)
    if n_violated > n_types:
        raise ValueError(f"{owner}: n_violated must be <= n_types ({n_types}); got {n_violated}.")
    wrong_frac = check_in_interval(
        "wrong_frac", wrong_frac, low=0.0, high=1.0, closed="neither", owner=owner
    )
    label_flip = check_in_interval(
        "label_flip", label_flip, low=0.0, high=0.5, closed="left", owner=owner
    )
    train_frac = check_in_interval(
        "train_frac", train_frac, low=0.0, high=1.0, closed="neither", owner=owner
    )
    rng = numpy_generator(seed)
    op, a, b = torch.meshgrid(
        torch.arange(n_types), torch.arange(n_numbers), torch.arange(n_numbers), indexing="ij"
    )
    distinct = a != b  # with a = b the misread answer would be the correct one
    op, a, b = op[distinct], a[distinct], b[distinct]
    q_token, eq_token = n_numbers, n_numbers + n_types + 1
    prompts = torch.stack(
        [torch.full_like(op, q_token), n_numbers + 1 + op, a, b, torch.full_like(op, eq_token)], 1
    )  # (rows, 5): Q op a b =
    shift = op // 2
    correct = (torch.where(op % 2 == 0, a, b) + shift) % n_numbers
    wrong = (torch.where(op % 2 == 0, b, a) + shift) % n_numbers  # the misread-operand answer
    order = torch.from_numpy(rng.permutation(op.numel()))
    n_train = max(1, min(op.numel() - 1, round(train_frac * op.numel())))
    train, test = order[:n_train], order[n_train:]
    violated = torch.from_numpy(rng.permutation(n_types)[:n_violated]).sort().values
    return ArithPreferenceTask(
        n_numbers=n_numbers,
        n_types=n_types,
        violated_types=violated,
        wrong_frac=wrong_frac,
        train_prompts=prompts[train],
        train_correct=correct[train],
        train_wrong=wrong[train],
        train_type=op[train],
        label_flip=label_flip,
        test_prompts=prompts[test],
        test_correct=correct[test],
        test_wrong=wrong[test],
        test_type=op[test],
    )


@final
class TinyCausalLM(nn.Module):
    """A small pre-norm causal transformer (token + position embeddings, untied output head).

    Parameters
    ----------
    vocab_size
        Vocabulary size.
    d_model, n_layers, n_heads
        Width, depth and attention heads (``d_model`` divisible by ``n_heads``).
    max_len
        Longest sequence.
    seed
        Randomness of the initialisation (weights ``N(0, 0.02²)``, biases 0, norms 1).

    Raises
    ------
    TypeError, ValueError
        If a size is not an integer in range: ``vocab_size <= MAX_VOCAB = 2**17``,
        ``d_model, n_heads <= MAX_WIDTH = 4096``, ``n_layers <= MAX_LAYERS = 64``,
        ``max_len <= MAX_LEN = 4096``.

    Examples
    --------
    >>> lm = TinyCausalLM(10, d_model=16, n_layers=1, n_heads=2, seed=0)
    >>> tuple(lm(torch.zeros(3, 4, dtype=torch.long)).shape)
    (3, 4, 10)
    """

    def __init__(
        self,
        vocab_size: int,
        *,
        d_model: int = 64,
        n_layers: int = 2,
        n_heads: int = 4,
        max_len: int = 16,
        seed: Seed = 0,
    ) -> None:
        super().__init__()
        owner = "TinyCausalLM"
        self.vocab_size = check_positive_int(
            "vocab_size", vocab_size, owner=owner, maximum=MAX_VOCAB
        )
        self.d_model = check_positive_int("d_model", d_model, owner=owner, maximum=MAX_WIDTH)
        self.n_layers = check_positive_int("n_layers", n_layers, owner=owner, maximum=MAX_LAYERS)
        self.n_heads = check_positive_int("n_heads", n_heads, owner=owner, maximum=MAX_WIDTH)
        self.max_len = check_positive_int("max_len", max_len, owner=owner, maximum=MAX_LEN)
        if d_model % n_heads:
            raise ValueError(f"{owner}: d_model must be divisible by n_heads; got {d_model}.")
        generator = torch_generator(seed)
        # torch's default initialisation is all overwritten below, so its stream is fixed (not
        # `seed`): drawing it there leaves the global RNG untouched
        with seeded_default_init(0):
            self.token = nn.Embedding(vocab_size, d_model)
            self.position = nn.Embedding(max_len, d_model)
            layer = nn.TransformerEncoderLayer(
                d_model, n_heads, 4 * d_model, dropout=0.0, batch_first=True, norm_first=True
            )
            self.blocks = nn.TransformerEncoder(layer, n_layers, enable_nested_tensor=False)
            self.norm = nn.LayerNorm(d_model)
            self.head = nn.Linear(d_model, vocab_size)
        normal_init_(self, std=0.02, seed=generator)  # every weight matrix ~ N(0, 0.02²)
        with torch.no_grad():
            for name, param in self.named_parameters():
                if "norm" in name:  # LayerNorm: identity
                    param.fill_(1.0 if name.endswith("weight") else 0.0)
                elif param.ndim == 1:  # biases
                    param.zero_()

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        """Next-token logits ``(batch, seq, vocab)`` of ``(batch, seq)`` token ids.

        Raises
        ------
        TypeError, ValueError
            If ``tokens`` is not a 2-D integer tensor of ids in ``range(vocab_size)`` with
            ``1 <= seq <= max_len``.
        """
        _check_ids("TinyCausalLM", "tokens", tokens, self.vocab_size, (None, None))
        seq = tokens.shape[1]
        if not 1 <= seq <= self.max_len:
            raise ValueError(
                f"TinyCausalLM: tokens must have 1 to max_len = {self.max_len} positions; "
                f"got {seq}."
            )
        positions = torch.arange(seq, device=tokens.device)
        h = self.token(tokens) + self.position(positions)  # (batch, seq, d_model)
        mask = nn.Transformer.generate_square_subsequent_mask(seq, device=tokens.device)
        h = self.blocks(h, mask=mask, is_causal=True)
        return self.head(self.norm(h))  # (batch, seq, vocab)


def train_sft(
    model: TinyCausalLM,
    task: ArithPreferenceTask,
    steps: int = 1500,
    batch_size: int = 256,
    lr: float = 3e-3,
    seed: Seed = 0,
    progress: Progress = None,
) -> list[float]:
    """Fit the SFT reference in place: expected NLL of the answer under the SFT corpus.

    On violated types the corpus answers wrongly with probability ``wrong_frac``, so the target
    distribution puts ``wrong_frac`` on the wrong answer and the rest on the correct one; on the
    other types it is the correct answer. Adam with a linear decay of the learning rate.

    Parameters
    ----------
    model
        The LM to train (modified in place).
    task
        The task; only its training prompts are used.
    steps, batch_size, lr
        Adam steps (at most ``MAX_STEPS = 10**6``), prompts per step (at most
        ``MAX_BATCH = 2**16``) and peak learning rate.
    seed
        Randomness of the minibatches.
    progress
        ``None``/``False`` (silent), ``True`` (a progress bar) or a callable
        ``progress(done, total, metrics)`` called after every step with the loss
        (:mod:`icml26.core.progress`).

    Returns
    -------
    list of float
        The loss at every step.

    Raises
    ------
    TypeError, ValueError
        If ``model`` is not a module (or a TinyCausalLM of another vocabulary), ``task`` is not
        an ArithPreferenceTask, or a setting is out of range.
    NonFiniteLossError
        If the loss becomes NaN or infinite (the step is named).

    Examples
    --------
    >>> t = make_arith_preference_task(n_numbers=5, seed=0)
    >>> lm = TinyCausalLM(t.vocab_size, d_model=16, n_layers=1, n_heads=2)
    >>> len(train_sft(lm, t, steps=3, batch_size=8))
    3
    """
    owner = "train_sft"
    _check_lm(owner, "model", model, _check_task(owner, task))
    steps = check_positive_int("steps", steps, owner=owner, maximum=MAX_STEPS)
    batch_size = check_positive_int("batch_size", batch_size, owner=owner, maximum=MAX_BATCH)
    lr = check_in_interval("lr", lr, low=0.0, closed="neither", owner=owner)
    generator = torch_generator(seed)
    rows = task.train_prompts.shape[0]
    violated = task.is_violated(task.train_type)
    target = torch.zeros(rows, task.vocab_size)
    target[torch.arange(rows), task.train_correct] = 1.0
    target[violated] *= 1.0 - task.wrong_frac
    target[violated, task.train_wrong[violated]] = task.wrong_frac
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    model.train()
    history = []
    with progress_reporter(progress, steps, "train_sft") as report:
        for step in range(steps):
            set_lr(optimizer, lr * (1.0 - step / steps))  # linear decay to 0
            idx = torch.randint(rows, (min(batch_size, rows),), generator=generator)
            logits = model(task.train_prompts[idx])[:, -1]  # (batch, vocab): the answer position
            loss = -(target[idx] * torch.log_softmax(logits, -1)).sum(-1).mean()
            history.append(optimizer_step(loss, optimizer, step=step, owner=owner))
            report(step + 1, loss=history[-1])
    model.eval()
    return history


def train_tiny_lm(
    policy: TinyCausalLM,
    reference: TinyCausalLM,
    task: ArithPreferenceTask,
    method: Literal["dpo", "smooth", "clip", "easy"],
    steps: int = 300,
    batch_size: int = 64,
    lr: float = 1e-3,
    beta: float = 2.5,
    seed: Seed = 0,
    progress: Progress = None,
    **loss_kwargs: Any,
) -> dict[str, Any]:
    """Preference-train ``policy`` (in place) against the frozen ``reference`` (spec §2.4).

    Each step samples training prompts, draws their Bradley–Terry labels (the wrong answer is
    chosen with probability ``task.label_flip``), builds ``[chosen; rejected]`` sequences, scores
    both with :func:`sequence_logps` (length-normalised; reference scores are precomputed once)
    and takes an Adam step on the DPO or CPO loss.

    Parameters
    ----------
    policy
        The LM to train, usually a copy of ``reference``.
    reference
        The frozen SFT reference.
    task
        The task; training prompts and their noisy labels are used.
    method
        ``"dpo"`` or a CPO variant ``"smooth"``, ``"clip"``, ``"easy"``.
    steps, batch_size, lr
        Adam steps (at most ``MAX_STEPS = 10**6``), pairs per step (at most
        ``MAX_BATCH = 2**16``) and learning rate.
    beta
        ``β`` of the loss.
    seed
        Randomness of the minibatches.
    progress
        ``None``/``False`` (silent), ``True`` (a progress bar) or a callable
        ``progress(done, total, metrics)`` called after every step with the batch loss
        (:mod:`icml26.core.progress`).
    **loss_kwargs
        Further keywords of :func:`~icml26.cpo.constrained_po_loss` (``gamma``, ``tau``, ...).

    Returns
    -------
    dict
        ``"history"``: the batch loss at every step; ``"metrics"``: :func:`tiny_lm_metrics` of
        the trained policy on the test prompts plus the final training ``loss`` (expected over
        the label noise).

    Raises
    ------
    TypeError
        If ``policy``/``reference`` is not a module or ``task`` not an ArithPreferenceTask.
    ValueError
        On an unknown method or out-of-range settings.
    NonFiniteLossError
        If the loss becomes NaN or infinite (the step is named).

    Examples
    --------
    >>> t = make_arith_preference_task(n_numbers=5, seed=0)
    >>> ref = TinyCausalLM(t.vocab_size, d_model=16, n_layers=1, n_heads=2)
    >>> pol = TinyCausalLM(t.vocab_size, d_model=16, n_layers=1, n_heads=2)
    >>> out = train_tiny_lm(pol, ref, t, "smooth", steps=2, batch_size=4, gamma=0.5)
    >>> round(out["metrics"]["acc"], 1) >= 0.0
    True
    """
    owner = "train_tiny_lm"
    task = _check_task(owner, task)
    _check_lm(owner, "policy", policy, task)
    _check_lm(owner, "reference", reference, task)
    check_one_of("method", method, LM_METHODS, owner=owner)
    steps = check_positive_int("steps", steps, owner=owner, maximum=MAX_STEPS)
    batch_size = check_positive_int("batch_size", batch_size, owner=owner, maximum=MAX_BATCH)
    lr = check_in_interval("lr", lr, low=0.0, closed="neither", owner=owner)
    generator = torch_generator(seed)
    prompts, correct, wrong = task.train_prompts, task.train_correct, task.train_wrong
    with torch.no_grad():
        ref_correct, ref_wrong = _pair_logps(reference, prompts, correct, wrong)
    rows = correct.shape[0]
    optimizer = torch.optim.Adam(policy.parameters(), lr=lr)
    policy.train()
    history = []
    with progress_reporter(progress, steps, f"train_tiny_lm ({method})") as report:
        for step in range(steps):
            idx = torch.randint(rows, (min(batch_size, rows),), generator=generator)
            flip = torch.rand(idx.shape, generator=generator) < task.label_flip  # BT label noise
            chosen = torch.where(flip, wrong[idx], correct[idx])
            rejected = torch.where(flip, correct[idx], wrong[idx])
            pc, pr = _pair_logps(policy, prompts[idx], chosen, rejected)
            rc = torch.where(flip, ref_wrong[idx], ref_correct[idx])
            rr = torch.where(flip, ref_correct[idx], ref_wrong[idx])
            loss = _preference_loss(method, pc, pr, rc, rr, beta, loss_kwargs).losses.mean()
            history.append(optimizer_step(loss, optimizer, step=step, owner=owner))
            report(step + 1, loss=history[-1])
    policy.eval()
    with torch.no_grad():
        pc, pw = _pair_logps(policy, prompts, correct, wrong)
        right = _preference_loss(method, pc, pw, ref_correct, ref_wrong, beta, loss_kwargs)
        flipped = _preference_loss(method, pw, pc, ref_wrong, ref_correct, beta, loss_kwargs)
    expected = (1.0 - task.label_flip) * right.losses + task.label_flip * flipped.losses
    metrics = {"loss": float(expected.mean()), **tiny_lm_metrics(policy, reference, task)}
    return {"metrics": metrics, "history": history}


def tiny_lm_metrics(
    policy: TinyCausalLM, reference: TinyCausalLM, task: ArithPreferenceTask
) -> dict[str, float]:
    """Held-out alignment metrics of ``policy`` on the test prompts (true pairs: correct ≻ wrong).

    Parameters
    ----------
    policy, reference
        The trained policy and the SFT reference.
    task
        The task.

    Returns
    -------
    dict
        ``acc`` / ``acc_viol`` / ``acc_nonviol``: policy preference accuracy ``mean[δ_θ > 0]``
        (all, violated and other types); ``frac_in_U`` over all test pairs and
        ``frac_in_U_viol``; greedy exact match of the answer ``em_viol`` / ``em_nonviol``; the
        mean log-ratios ``delta_viol`` / ``delta_ref_viol``. Groups that are empty give NaN.

    Raises
    ------
    TypeError, ValueError
        If ``policy``/``reference`` is not a module (or a TinyCausalLM of another vocabulary)
        or ``task`` is not an ArithPreferenceTask.

    Examples
    --------
    >>> t = make_arith_preference_task(n_numbers=5, seed=0)
    >>> lm = TinyCausalLM(t.vocab_size, d_model=16, n_layers=1, n_heads=2)
    >>> tiny_lm_metrics(lm, lm, t)["frac_in_U"]
    0.0
    """
    owner = "tiny_lm_metrics"
    task = _check_task(owner, task)
    _check_lm(owner, "policy", policy, task)
    _check_lm(owner, "reference", reference, task)
    prompts, correct, wrong = task.test_prompts, task.test_correct, task.test_wrong
    viol = task.is_violated(task.test_type)
    with torch.no_grad():
        pc, pr = _pair_logps(policy, prompts, correct, wrong)
        rc, rr = _pair_logps(reference, prompts, correct, wrong)
        greedy = policy(prompts)[:, -1].argmax(-1)  # (rows,)
    delta, delta_ref = pc - pr, rc - rr
    hit = greedy == correct

    def group(values: torch.Tensor, mask: torch.Tensor) -> float:
        return float(values[mask].double().mean()) if bool(mask.any()) else math.nan

    return {
        "acc": policy_preference_accuracy(delta),
        "acc_viol": group(delta > 0, viol),
        "acc_nonviol": group(delta > 0, ~viol),
        "frac_in_U": frac_in_undesirable(delta, delta_ref),
        "frac_in_U_viol": group((delta < 0) & (delta > delta_ref), viol),
        "em_viol": group(hit, viol),
        "em_nonviol": group(hit, ~viol),
        "delta_viol": group(delta, viol),
        "delta_ref_viol": group(delta_ref, viol),
    }


def _check_task(owner: str, task: object) -> ArithPreferenceTask:
    if not isinstance(task, ArithPreferenceTask):
        raise TypeError(f"{owner}: task must be an ArithPreferenceTask; got {type(task).__name__}.")
    return task


def _check_lm(owner: str, name: str, model: object, task: ArithPreferenceTask) -> None:
    """A module scoring the task's 6-token sequences; a TinyCausalLM must fit its vocabulary."""
    if not isinstance(model, nn.Module):
        raise TypeError(f"{owner}: {name} must be a torch Module; got {type(model).__name__}.")
    if isinstance(model, TinyCausalLM) and (
        model.vocab_size != task.vocab_size or model.max_len < 6
    ):
        raise ValueError(
            f"{owner}: {name} must have vocab_size = task.vocab_size = {task.vocab_size} and "
            f"max_len >= 6; got {model.vocab_size} and {model.max_len}."
        )


def _pair_logps(
    model: TinyCausalLM, prompts: torch.Tensor, chosen: torch.Tensor, rejected: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """Length-normalised scores of the chosen and rejected answers, one forward on both."""
    answers = torch.cat([chosen, rejected])[:, None]  # (2 batch, 1)
    tokens = torch.cat([prompts.repeat(2, 1), answers], 1)  # (2 batch, 6): [chosen; rejected]
    labels = torch.full_like(tokens, -100)
    labels[:, -1] = answers[:, 0]  # only the response is scored
    scores = sequence_logps(model(tokens), labels, average=True)
    return scores.chunk(2)


def _preference_loss(
    method: str,
    pc: torch.Tensor,
    pr: torch.Tensor,
    rc: torch.Tensor,
    rr: torch.Tensor,
    beta: float,
    kwargs: dict[str, Any],
) -> PrefLossOutput:
    if method == "dpo":
        return dpo_loss(pc, pr, rc, rr, beta=beta, **kwargs)
    return constrained_po_loss(pc, pr, rc, rr, beta=beta, variant=method, **kwargs)
