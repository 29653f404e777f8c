"""What ``debias.minilm`` and its shipped BitFit stand-in share: one seed's setup and training.

:func:`seed_setup` and :func:`train_bitfit` are the task's own steps, which
``icml26.debias.standins`` replays to retrain the shipped biases; :func:`base_embeddings` reads the
base encoder's embeddings off the passes of its per-module profile.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

from icml26.core import RunContext


@dataclass(frozen=True)
class SeedSetup:
    """One seed's prompts, perturbation, clean training embeddings, base head and batches."""

    train: list[str]
    test: list[str]
    y_train: Any
    y_test: Any
    pert: Any
    emb_train: Any
    head: Any
    batches: list[list[str]]


def seed_setup(c: Any, ctx: RunContext, i: int, encoder: Any) -> SeedSetup:
    """What every arm of seed ``i`` starts from: data, the head trained on clean embeddings."""
    import torch

    from icml26.debias import intent_perturbation, make_intent_texts, train_head

    data = make_intent_texts(c.n_train + c.n_test, ctx.numpy_generator(f"texts{i}"))
    train, test = data.texts[: c.n_train], data.texts[c.n_train :]
    y_train, y_test = torch.tensor(data.labels[: c.n_train]), torch.tensor(data.labels[c.n_train :])
    pert = intent_perturbation(data.keywords, p_case=c.p_case, p_typo=c.p_typo)
    emb_train = encoder.embed(train)
    head = train_head(emb_train, y_train, epochs=c.head_epochs, lr=c.head_lr,
                      seed=ctx.torch_generator(f"head{i}"))  # fmt: skip
    order = ctx.numpy_generator(f"batches{i}").permutation(c.n_train)
    batches = [[train[j] for j in order[s : s + c.batch_size]]
               for s in range(0, c.n_train, c.batch_size)]  # fmt: skip
    return SeedSetup(train, test, y_train, y_test, pert, emb_train, head, batches)


def train_bitfit(c: Any, ctx: RunContext, i: int, encoder: Any, s: SeedSetup) -> Any:
    """Algorithm B inside the encoder: every encoder and head bias, KL to the clean logits.

    Returns the trained ``TextClassifier`` (on a copy of ``encoder``) and its ``TrainLog``.
    """
    from icml26.debias import TextClassifier, batch_perturber, debias_finetune

    model = TextClassifier(copy.deepcopy(encoder), copy.deepcopy(s.head))
    log = debias_finetune(model, s.batches, batch_perturber(s.pert), loss=c.loss,
                          p_clean=c.p_clean, lr=c.encoder_lr, steps=c.steps, params="bias",
                          seed=ctx.numpy_generator(f"bitfit{i}"))  # fmt: skip
    return model, log


def base_embeddings(
    c: Any, encoder: Any, test: list[str], test_pert: list[str], *, profile: bool
) -> tuple[Any, Any, Any]:
    """The base encoder's embeddings of the test prompts and their copies, and its profile.

    With ``profile``, the first ``n_profile`` prompts and their ``k_eval`` copies go through
    :func:`bias_profile` (the embeddings, modules and layers 0-5) and their embeddings are read
    off those same passes; the other prompts are embedded as usual.
    """
    import torch

    from icml26.debias import bias_profile

    if not profile:
        return encoder.embed(test), encoder.embed(test_pert), None
    k, n = c.k_eval, min(c.n_profile, len(test))
    rows = [test_pert[j * k : (j + 1) * k] for j in range(n)]
    # prompts in order of their longest copy, so that a batch pads little once trimmed (the
    # profile's statistics are averages over prompts: the order does not change them)
    longest = [int(encoder.tokenize(row)["attention_mask"].sum(1).max()) for row in rows]
    order = sorted(range(n), key=longest.__getitem__)
    clean, pert = _trimmed(encoder), _trimmed(encoder)
    names = ["embeddings"] + [f"encoder.layer.{j}" for j in range(len(encoder.model.encoder.layer))]
    table = bias_profile(pert, encoder.tokenize([test[j] for j in order]),
                         encoder.tokenize([t for j in order for t in rows[j]]),
                         [f"model.{name}" for name in names], reference=clean,
                         pool=_trimmed_pool, batch_size=64)  # fmt: skip
    back = torch.empty(n, dtype=torch.long)
    back[torch.tensor(order)] = torch.arange(n)
    emb_test = torch.cat(clean.embeddings)[back]
    emb_pert = torch.cat(pert.embeddings).view(n, k, -1)[back].flatten(0, 1)
    if n < len(test):
        emb_test = torch.cat([emb_test, encoder.embed(test[n:])])
        emb_pert = torch.cat([emb_pert, encoder.embed(test_pert[n * k :])])
    return emb_test, emb_pert, table.assign(module=names)


def _trimmed(encoder: Any) -> Any:
    """``encoder.model`` on a tokenised batch cut to its longest real row (the rest is padding).

    It keeps the encoder's sentence embedding of every row it sees, in order.
    """
    import torch
    from torch import nn

    from icml26.debias import masked_mean_pool

    class Trimmed(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.model = encoder.model
            self.embeddings: list[torch.Tensor] = []

        @torch.no_grad()
        def forward(self, input_ids: Any, attention_mask: Any) -> Any:
            n = int(attention_mask.sum(1).max())
            batch = {"input_ids": input_ids[:, :n], "attention_mask": attention_mask[:, :n]}
            out = self.model(**batch)
            pooled = masked_mean_pool(out.last_hidden_state, batch)
            normalize = torch.nn.functional.normalize
            self.embeddings.append(normalize(pooled, dim=-1) if encoder.normalize else pooled)
            return out

    return Trimmed()


def _trimmed_pool(output: Any, batch: Any) -> Any:
    """:func:`masked_mean_pool` of a :func:`_trimmed` model's output (the cut columns are pads)."""
    from icml26.debias import masked_mean_pool

    mask = batch["attention_mask"][:, : output.shape[1]]
    return masked_mean_pool(output, {"attention_mask": mask})
