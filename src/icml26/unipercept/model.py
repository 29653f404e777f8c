"""TinyPercept: the CPU stand-in for UniPercept's MLLM, with a Token-As-Score head (spec §5).

A small CNN encodes the image (mean and standard-deviation pooling of the last feature map, so
both content and local statistics such as noise reach the trunk); a query embedding sums the
(domain, category, criterion, template) ids of the question; a fused MLP trunk feeds two heads:

    score head    logits over the 101 score tokens (Token As Score, spec §2.3)
    option head   logit_j = <W h, E[option_j]> + b[option_j] over the item's 2–4 options

Both heads are categorical "policies" over one next token, which is what GRPO needs. A batch
mixes rating and question rows: :meth:`TinyPercept.forward` returns (B, 101) logits, with the
options of a question row in its first columns and -inf elsewhere.

Deviations: the option head reads option texts from a closed vocabulary (``option_vocab``) and
the question text itself is not read (the query ids carry the taxonomy path and template).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from icml26.core.validation import check_positive_int
from icml26.core.weights import seeded_default_init
from icml26.unipercept.items import (
    LETTERS,
    GenericQAItem,
    VQAItem,
    VRItem,
    check_image,
    check_sequence,
)
from icml26.unipercept.taxonomy import DOMAINS, TEMPLATES, Taxonomy
from icml26.unipercept.tokens import N_SCORES

__all__ = ["PerceptBatch", "TinyPercept", "encode_items"]

MAX_OPTIONS = 4
_RATING_TEMPLATE = len(TEMPLATES)  # an extra template id: "rate this image"


@dataclass(frozen=True)
class PerceptBatch:
    """Tensors of a mixed batch of rating and question items.

    Attributes
    ----------
    images
        (B, 3, H, W) float32 in [0, 1].
    domain, category, criterion, template
        (B,) query ids; rating rows use the extra "none" category/criterion and rating template.
    is_rating
        (B,) bool: rating row (101 score tokens) or question row (options).
    option_ids, option_mask
        (B, 4) option vocabulary ids and which of the 4 slots hold an option.
    target
        (B,) round(MOS) for rating rows, the answer index for question rows.
    mos
        (B,) float MOS of rating rows (NaN for question rows).
    """

    images: torch.Tensor
    domain: torch.Tensor
    category: torch.Tensor
    criterion: torch.Tensor
    template: torch.Tensor
    is_rating: torch.Tensor
    option_ids: torch.Tensor
    option_mask: torch.Tensor
    target: torch.Tensor
    mos: torch.Tensor

    def __post_init__(self) -> None:
        rows = None
        for name in self.__dataclass_fields__:
            value = getattr(self, name)
            if not isinstance(value, torch.Tensor) or value.ndim == 0:
                raise TypeError(f"PerceptBatch: {name} must be a torch.Tensor with a batch axis.")
            if rows is not None and value.shape[0] != rows:
                raise ValueError(
                    f"PerceptBatch: {name} must have {rows} rows; got {value.shape[0]}."
                )
            rows = value.shape[0]
        if (
            self.images.ndim != 4
            or self.images.shape[1] != 3
            or not self.images.is_floating_point()
        ):
            raise ValueError("PerceptBatch: images must be a float (B, 3, H, W) tensor.")
        if (
            tuple(self.option_ids.shape[1:]) != (MAX_OPTIONS,)
            or self.option_mask.shape != self.option_ids.shape
        ):
            raise ValueError("PerceptBatch: option_ids and option_mask must be (B, 4).")

    def __len__(self) -> int:
        return int(self.images.shape[0])

    def subset(self, index: torch.Tensor) -> PerceptBatch:
        """The rows ``index`` (a 1-D integer tensor) of the batch."""
        if not isinstance(index, torch.Tensor) or index.ndim != 1 or index.is_floating_point():
            raise TypeError("PerceptBatch.subset: index must be a 1-D integer tensor.")
        if index.numel() and (int(index.min()) < -len(self) or int(index.max()) >= len(self)):
            raise ValueError(f"PerceptBatch.subset: index must lie in [0, {len(self)}).")
        return type(self)(**{k: getattr(self, k)[index] for k in self.__dataclass_fields__})

    @property
    def action_mask(self) -> torch.Tensor:
        """(B, 101) bool: which of the 101 columns are valid actions of each row."""
        mask = torch.zeros(len(self), N_SCORES, dtype=torch.bool)
        mask[self.is_rating] = True
        mask[~self.is_rating, :MAX_OPTIONS] = self.option_mask[~self.is_rating]
        return mask


class TinyPercept(nn.Module):
    """CNN encoder + query embedding + fused trunk + 101-way score head + option head.

    Parameters
    ----------
    option_vocab
        Every option text the model may be asked to choose between.
    channels
        Output channels of the four 3x3 conv layers (the first at stride 1, then stride 2).
    d_model
        Width of the query embedding and of the trunk.
    seed
        Seed of the parameter initialisation.

    Examples
    --------
    >>> model = TinyPercept(option_vocab=("blur", "noise"), channels=(8, 8, 8, 8), d_model=16)
    >>> x = np.zeros((2, 16, 16, 3), np.float32)
    >>> model.rate(x, "IQA").shape
    (2,)
    """

    def __init__(
        self,
        *,
        option_vocab: Sequence[str],
        channels: Sequence[int] = (16, 32, 64, 128),
        d_model: int = 128,
        seed: int = 0,
    ) -> None:
        super().__init__()
        vocab = tuple(option_vocab) if not isinstance(option_vocab, str) else ()
        if not vocab or not all(isinstance(v, str) and v for v in vocab):
            raise TypeError("TinyPercept: option_vocab must be a non-empty sequence of strings.")
        if len(set(vocab)) != len(vocab):
            raise ValueError("TinyPercept: option_vocab must not repeat an option.")
        if not isinstance(channels, list | tuple) or len(channels) != 4:
            raise ValueError(f"TinyPercept: channels must be 4 integers; got {channels!r}.")
        channels = tuple(check_positive_int("channels", c, owner="TinyPercept", maximum=512)
                         for c in channels)  # fmt: skip
        d_model = check_positive_int("d_model", d_model, owner="TinyPercept", maximum=2048)
        seed = check_positive_int("seed", seed, owner="TinyPercept", minimum=0, maximum=2**62)
        self.option_vocab = vocab
        self.channels = channels
        self.d_model = d_model
        self.seed = seed
        self._option_index = {v: i for i, v in enumerate(vocab)}
        taxonomy = Taxonomy.load_default()
        n_cat, n_crit = taxonomy.counts()["categories"], taxonomy.counts()["criteria"]
        with seeded_default_init(seed):
            layers: list[nn.Module] = []
            c_in = 3
            for i, c_out in enumerate(channels):
                stride = 1 if i == 0 else 2
                layers += [nn.Conv2d(c_in, c_out, 3, stride=stride, padding=1, bias=False),
                           nn.BatchNorm2d(c_out), nn.ReLU()]  # fmt: skip
                c_in = c_out
            self.encoder = nn.Sequential(*layers)
            self.pool_norm = nn.LayerNorm(2 * c_in)
            self.image_proj = nn.Linear(2 * c_in, d_model)
            self.query_norm = nn.LayerNorm(d_model)
            self.domain_emb = nn.Embedding(len(DOMAINS), d_model)
            self.category_emb = nn.Embedding(n_cat + 1, d_model)  # + "none" (rating rows)
            self.criterion_emb = nn.Embedding(n_crit + 1, d_model)
            self.template_emb = nn.Embedding(len(TEMPLATES) + 1, d_model)  # + rating template
            self.trunk = nn.Sequential(
                nn.Linear(2 * d_model, 2 * d_model), nn.GELU(),
                nn.Linear(2 * d_model, d_model), nn.GELU(),
            )  # fmt: skip
            self.score_head = nn.Linear(d_model, N_SCORES)
            self.option_proj = nn.Linear(d_model, d_model)
            self.option_emb = nn.Embedding(len(vocab), d_model)
            self.option_bias = nn.Embedding(len(vocab), 1)

    def config(self) -> dict[str, Any]:
        """The constructor keywords (JSON-able)."""
        return {"option_vocab": list(self.option_vocab), "channels": list(self.channels),
                "d_model": self.d_model, "seed": self.seed}  # fmt: skip

    # --- forward ------------------------------------------------------------------------------

    def features(self, batch: PerceptBatch) -> torch.Tensor:
        """The fused trunk state h of every row, (B, d_model)."""
        if not isinstance(batch, PerceptBatch):
            raise TypeError(
                f"TinyPercept: batch must be a PerceptBatch; got {type(batch).__name__}."
            )
        if min(batch.images.shape[2:]) < 4:
            raise ValueError("TinyPercept: batch images must be at least 4 x 4 pixels.")
        fmap = self.encoder(batch.images * 2.0 - 1.0)  # (B, C, H', W')
        pooled = torch.cat(
            [fmap.mean(dim=(2, 3)), fmap.std(dim=(2, 3), correction=0)], dim=1
        )  # (B, 2C)
        image = self.image_proj(self.pool_norm(pooled))  # (B, d)
        query = self.query_norm(
            self.domain_emb(batch.domain)
            + self.category_emb(batch.category)
            + self.criterion_emb(batch.criterion)
            + self.template_emb(batch.template)
        )  # (B, d): both inputs of the trunk on one scale
        return self.trunk(torch.cat([image, query], dim=1))

    def forward(self, batch: PerceptBatch) -> torch.Tensor:
        """(B, 101) next-token logits: score tokens for rating rows, options (then -inf) else."""
        h = self.features(batch)
        score_logits = self.score_head(h)  # (B, 101)
        opt = self.option_emb(batch.option_ids)  # (B, 4, d)
        option_logits = torch.einsum("bd,bkd->bk", self.option_proj(h), opt) / self.d_model**0.5
        option_logits = option_logits + self.option_bias(batch.option_ids).squeeze(-1)  # (B, 4)
        padded = torch.full_like(score_logits, -torch.inf)
        padded[:, :MAX_OPTIONS] = option_logits.masked_fill(~batch.option_mask, -torch.inf)
        return torch.where(batch.is_rating[:, None], score_logits, padded)

    def encode(self, items: Sequence[VRItem | VQAItem]) -> PerceptBatch:
        """The :class:`PerceptBatch` of ``items`` (:func:`encode_items`)."""
        return encode_items(items, self)

    # --- convenience read-outs ----------------------------------------------------------------

    @torch.no_grad()
    def rate(self, images: np.ndarray, domain: str, batch_size: int = 256) -> np.ndarray:
        """Token-As-Score ratings (0–100) of (N, H, W, 3) float images in one domain."""
        if domain not in DOMAINS:
            raise ValueError(f"TinyPercept.rate: domain must be one of {DOMAINS}; got {domain!r}.")
        if not isinstance(images, np.ndarray) or images.ndim != 4:
            raise ValueError("TinyPercept.rate: images must be an (N, H, W, 3) numpy array.")
        batch_size = check_positive_int(
            "batch_size", batch_size, owner="TinyPercept.rate", maximum=65536
        )
        items = [
            VRItem(check_image("images", im, "TinyPercept.rate"), domain, 0.0) for im in images
        ]
        return self.expected_scores(items, batch_size)

    @torch.no_grad()
    def expected_scores(self, items: Sequence[VRItem], batch_size: int = 256) -> np.ndarray:
        """Token-As-Score expectation sum_s s softmax(logits)[s] of rating items."""
        items = check_sequence(
            "items", items, "TinyPercept.expected_scores", VRItem, allow_empty=True
        )
        batch_size = check_positive_int(
            "batch_size", batch_size, owner="TinyPercept", maximum=65536
        )
        was_training = self.training
        self.eval()
        out = []
        for start in range(0, len(items), batch_size):
            batch = encode_items(items[start : start + batch_size], self)
            probs = torch.softmax(self(batch), dim=-1)  # (b, 101)
            out.append(probs @ torch.arange(N_SCORES, dtype=probs.dtype))
        self.train(was_training)
        return torch.cat(out).numpy().astype(float) if out else np.zeros(0)

    @torch.no_grad()
    def choose(self, items: Sequence[VQAItem], batch_size: int = 256) -> list[str]:
        """The most likely option letter of each question item (greedy decoding)."""
        items = check_sequence("items", items, "TinyPercept.choose", VQAItem, allow_empty=True)
        batch_size = check_positive_int(
            "batch_size", batch_size, owner="TinyPercept", maximum=65536
        )
        was_training = self.training
        self.eval()
        letters: list[str] = []
        for start in range(0, len(items), batch_size):
            batch = encode_items(items[start : start + batch_size], self)
            best = self(batch).argmax(dim=-1)
            letters += [LETTERS[int(i)] for i in best]
        self.train(was_training)
        return letters

    # --- persistence --------------------------------------------------------------------------

    def save_pretrained(self, path: str | Path) -> None:
        """Write ``config.json`` and ``model.safetensors`` to the folder ``path``."""
        from safetensors.torch import save_file

        if not isinstance(path, str | Path):
            raise TypeError(
                "TinyPercept.save_pretrained: path must be a str or Path; "
                f"got {type(path).__name__}."
            )
        folder = Path(path)
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "config.json").write_text(json.dumps(self.config()))
        save_file(
            {k: v.contiguous() for k, v in self.state_dict().items()}, folder / "model.safetensors"
        )

    @classmethod
    def from_pretrained(cls, path: str | Path) -> TinyPercept:
        """Load a model written by :meth:`save_pretrained` (strict key and shape check)."""
        from safetensors.torch import load_file

        from icml26.core.weights import load_state_dict_strict

        folder = Path(path)
        if not (folder / "config.json").is_file():
            raise FileNotFoundError(f"TinyPercept.from_pretrained: no config.json in {folder}")
        model = cls(**json.loads((folder / "config.json").read_text()))
        load_state_dict_strict(model, load_file(folder / "model.safetensors"))
        return model


def encode_items(items: Sequence[VRItem | VQAItem], model: TinyPercept) -> PerceptBatch:
    """Stack items of one image size into a :class:`PerceptBatch` for ``model``.

    Examples
    --------
    >>> model = TinyPercept(option_vocab=("Yes", "No"), channels=(4, 4, 4, 4), d_model=8)
    >>> b = encode_items([VRItem(np.zeros((8, 8, 3), np.float32), "ISTA", 12.4)], model)
    >>> b.target.tolist(), b.is_rating.tolist()
    ([12], [True])
    """
    if not isinstance(model, TinyPercept):
        raise TypeError(f"encode_items: model must be a TinyPercept; got {type(model).__name__}.")
    check_sequence("items", items, "encode_items", (VRItem, VQAItem))
    return _encode(items, model._option_index)


def _encode(
    items: Sequence[VRItem | VQAItem | GenericQAItem], option_index: dict[str, int] | None
) -> PerceptBatch:
    """The batch of ``items``; option ids from ``option_index`` (``None``: all 0, unused)."""
    items = check_sequence("items", items, "encode_items", (VRItem, VQAItem, GenericQAItem))
    shapes = {it.image.shape for it in items}
    if len(shapes) != 1:
        raise ValueError("encode_items: items must be VRItem/VQAItem of one image shape.")
    ids = Taxonomy.load_default().index()
    n_cat, n_crit = len(ids["category"]), len(ids["criterion"])
    rows: dict[str, list[Any]] = {k: [] for k in (
        "domain", "category", "criterion", "template", "is_rating", "option_ids", "option_mask",
        "target", "mos")}  # fmt: skip
    for it in items:
        generic = isinstance(it, GenericQAItem)  # no taxonomy path: the "none" ids
        rows["domain"].append(0 if generic else ids["domain"][it.domain])
        if isinstance(it, VRItem):
            rows["category"].append(n_cat)
            rows["criterion"].append(n_crit)
            rows["template"].append(_RATING_TEMPLATE)
            rows["is_rating"].append(True)
            rows["option_ids"].append([0] * MAX_OPTIONS)
            rows["option_mask"].append([False] * MAX_OPTIONS)
            rows["target"].append(round(it.mos))
            rows["mos"].append(it.mos)
            continue
        unknown = [o for o in it.options if option_index is not None and o not in option_index]
        if unknown:
            raise ValueError(
                f"encode_items: items hold options outside the model's vocabulary: {unknown}"
            )
        k = len(it.options)
        rows["category"].append(n_cat if generic else ids["category"][it.category])
        rows["criterion"].append(n_crit if generic else ids["criterion"][it.criterion])
        rows["template"].append(_RATING_TEMPLATE if generic else TEMPLATES.index(it.template))
        rows["is_rating"].append(False)
        rows["option_ids"].append(
            [option_index[o] if option_index else 0 for o in it.options] + [0] * (MAX_OPTIONS - k)
        )
        rows["option_mask"].append([True] * k + [False] * (MAX_OPTIONS - k))
        rows["target"].append(it.answer_index)
        rows["mos"].append(float("nan"))
    images = np.stack([it.image for it in items]).transpose(0, 3, 1, 2)  # (B, 3, H, W)
    return PerceptBatch(
        images=torch.from_numpy(np.ascontiguousarray(images, dtype=np.float32)),
        domain=torch.tensor(rows["domain"]),
        category=torch.tensor(rows["category"]),
        criterion=torch.tensor(rows["criterion"]),
        template=torch.tensor(rows["template"]),
        is_rating=torch.tensor(rows["is_rating"]),
        option_ids=torch.tensor(rows["option_ids"]),
        option_mask=torch.tensor(rows["option_mask"]),
        target=torch.tensor(rows["target"]),
        mos=torch.tensor(rows["mos"], dtype=torch.float32),
    )
