"""A tiny real InternVL that reads question text and sees layout (issue 44).

Cao et al., UniPercept (arXiv:2512.21675), train InternVL3-8B. The stand-in is a
``transformers.InternVLForConditionalGeneration`` built locally at a tiny size: a 2-layer
InternVL vision tower on 4-px patches, pixel shuffle (downsample ratio 0.5: 4 patches -> one
token), the MLP projector and a 4-layer Qwen2 language model. Its tokenizer is a ``tokenizers``
WordLevel model over the question bank's words (:func:`~icml26.unipercept.questions.bank_texts`),
the 101 score tokens and the option letters. An item becomes
``<img> <IMG_CONTEXT> x 16 </img> {question} A. ... B. ... Answer with the letter.``; the model's
answer is read from ``lm_head`` at the last position, as in the spec (§2.3):

* rating: Token-As-Score, sum_s s softmax(logits of the 101 score tokens)[s];
* question: the most likely option letter.

:class:`PerceptVLM` has TinyPercept's interface (``forward(batch)`` -> (B, 101) next-token
logits of the valid actions, ``rate``, ``choose``, ``encode``), so DAPT, GRPO
(:func:`~icml26.unipercept.grpo_step` through :class:`~icml26.unipercept.PerceptPolicy`) and
the evaluation run on it unchanged. ``question_blind=True`` leaves the question out of every
prompt: the control that text-dependent items need.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

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
from icml26.unipercept.model import MAX_OPTIONS, PerceptBatch, _encode
from icml26.unipercept.taxonomy import DOMAINS
from icml26.unipercept.tokens import N_SCORES, SCORE_TOKENS

__all__ = ["PerceptVLM", "VLMBatch", "build_tokenizer"]

SPECIAL_TOKENS: Final = ("<pad>", "<unk>", "<img>", "</img>", "<IMG_CONTEXT>")
PATCH: Final = 4  # pixels per vision patch side
_CONFIG_KEYS: Final = {"image_size", "vision_hidden", "text_hidden", "vision_layers",
                       "text_layers", "question_blind", "seed"}  # fmt: skip
Item = VRItem | VQAItem | GenericQAItem
_MEAN = torch.tensor([0.485, 0.456, 0.406]).view(1, 3, 1, 1)  # InternVL's ImageNet normalisation
_STD = torch.tensor([0.229, 0.224, 0.225]).view(1, 3, 1, 1)


def build_tokenizer(texts: Sequence[str] | None = None) -> Any:
    """A WordLevel ``PreTrainedTokenizerFast`` over the words of ``texts`` (default: the bank).

    The vocabulary is the special tokens, the 101 score tokens, the letters A–D and every word
    and punctuation mark of the texts, in first-seen order (so the same texts give the same ids).

    Examples
    --------
    >>> tok = build_tokenizer(["Rate the quality of this image."])
    >>> tok.convert_ids_to_tokens(tok.encode("Rate the quality ax"))
    ['Rate', 'the', 'quality', 'ax']
    """
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    from icml26.unipercept.questions import bank_texts

    texts = (
        bank_texts() if texts is None else check_sequence("texts", texts, "build_tokenizer", str)
    )
    split = pre_tokenizers.Whitespace()
    words = (w for text in texts for w, _ in split.pre_tokenize_str(text))
    vocab = dict.fromkeys((*SPECIAL_TOKENS, *SCORE_TOKENS, *LETTERS[:MAX_OPTIONS], *words))
    core = Tokenizer(models.WordLevel({w: i for i, w in enumerate(vocab)}, unk_token="<unk>"))
    core.pre_tokenizer = split
    return PreTrainedTokenizerFast(
        tokenizer_object=core, pad_token="<pad>", unk_token="<unk>",
        additional_special_tokens=list(SPECIAL_TOKENS[2:]),
    )  # fmt: skip


@dataclass(frozen=True)
class VLMBatch(PerceptBatch):
    """A :class:`~icml26.unipercept.PerceptBatch` with the prompts' token ids.

    ``input_ids`` and ``attention_mask`` are (B, L), left-padded, so that the last position is
    where every row's answer token is read.
    """

    input_ids: torch.Tensor
    attention_mask: torch.Tensor


class PerceptVLM(nn.Module):
    """Tiny ``InternVLForConditionalGeneration`` with Token-As-Score and letter read-outs.

    Parameters
    ----------
    image_size
        Side of the square input images (a multiple of 8: 4-px patches, pixel shuffle 0.5).
    vision_hidden, text_hidden
        Widths of the vision tower and of the Qwen2 language model.
    vision_layers, text_layers
        Depths (issue 44: 2 and 4).
    question_blind
        Leave the question out of every prompt (the text-dependence control).
    seed
        Seed of the parameter initialisation.

    Examples
    --------
    >>> model = PerceptVLM(16, vision_hidden=16, text_hidden=16, text_layers=1, vision_layers=1)
    >>> model.rate(np.zeros((2, 16, 16, 3), np.float32), "IQA").shape
    (2,)
    """

    def __init__(
        self, image_size: int = 32, *, vision_hidden: int = 64, text_hidden: int = 128,
        vision_layers: int = 2, text_layers: int = 4, question_blind: bool = False, seed: int = 0,
    ) -> None:  # fmt: skip
        from transformers import InternVLConfig, InternVLForConditionalGeneration

        super().__init__()
        owner = "PerceptVLM"
        image_size = check_positive_int(
            "image_size", image_size, owner=owner, minimum=8, maximum=128
        )
        if image_size % (2 * PATCH):
            raise ValueError(f"{owner}: image_size must be a multiple of 8; got {image_size}.")
        for name, value in (("vision_hidden", vision_hidden), ("text_hidden", text_hidden)):
            check_positive_int(name, value, owner=owner, minimum=8, maximum=1024)
            if value % 8:
                raise ValueError(f"{owner}: {name} must be a multiple of 8 (heads); got {value}.")
        for name, value in (("vision_layers", vision_layers), ("text_layers", text_layers)):
            check_positive_int(name, value, owner=owner, maximum=24)
        if not isinstance(question_blind, bool):
            raise TypeError(f"{owner}: question_blind must be a bool.")
        self.seed = check_positive_int("seed", seed, owner=owner, minimum=0, maximum=2**62)
        self.image_size, self.question_blind = image_size, question_blind
        self.sizes = {"vision_hidden": vision_hidden, "text_hidden": text_hidden,
                      "vision_layers": vision_layers, "text_layers": text_layers}  # fmt: skip
        self.tokenizer = build_tokenizer()
        ids = self.tokenizer.convert_tokens_to_ids
        self.n_image_tokens = (image_size // PATCH // 2) ** 2
        config = InternVLConfig(
            vision_config={
                "hidden_size": vision_hidden, "num_hidden_layers": vision_layers,
                "num_attention_heads": 4, "intermediate_size": 2 * vision_hidden,
                "image_size": [image_size, image_size], "patch_size": [PATCH, PATCH],
            },
            text_config={
                "model_type": "qwen2", "vocab_size": len(self.tokenizer),
                "hidden_size": text_hidden, "num_hidden_layers": text_layers,
                "num_attention_heads": 4, "num_key_value_heads": 2,
                "intermediate_size": 2 * text_hidden, "max_position_embeddings": 256,
                "tie_word_embeddings": True, "pad_token_id": ids("<pad>"),
            },
            image_token_id=ids("<IMG_CONTEXT>"), image_seq_length=self.n_image_tokens,
            downsample_ratio=0.5, tie_word_embeddings=True,
        )  # fmt: skip
        with seeded_default_init(seed):
            self.model = InternVLForConditionalGeneration(config).eval()
        self.register_buffer("score_ids", torch.tensor(ids(list(SCORE_TOKENS))), persistent=False)
        letters = ids(list(LETTERS[:MAX_OPTIONS]))
        self.register_buffer("letter_ids", torch.tensor(letters), persistent=False)

    def config(self) -> dict[str, Any]:
        """The constructor keywords (JSON-able)."""
        return {"image_size": self.image_size, **self.sizes,
                "question_blind": self.question_blind, "seed": self.seed}  # fmt: skip

    def prompt_ids(self, item: Item, rng: Any = None) -> list[int]:
        """Token ids of an item's prompt, image placeholders first."""
        from icml26.unipercept.questions import prompt_text

        text = prompt_text(item, rng, question_blind=self.question_blind)
        image = ["<img>", *["<IMG_CONTEXT>"] * self.n_image_tokens, "</img>"]
        ids = self.tokenizer.convert_tokens_to_ids(image)
        return ids + self.tokenizer.encode(text, add_special_tokens=False)

    def encode(
        self, items: Sequence[VRItem | VQAItem | GenericQAItem], rng: Any = None
    ) -> VLMBatch:
        """A left-padded :class:`VLMBatch` of items (``rng``: draw question paraphrases)."""
        items = check_sequence(
            "items", items, "PerceptVLM.encode", (VRItem, VQAItem, GenericQAItem)
        )
        if any(it.image.shape[:2] != (self.image_size,) * 2 for it in items):
            raise ValueError(f"PerceptVLM.encode: images must be {self.image_size} px square.")
        rows = [self.prompt_ids(it, rng) for it in items]
        width = max(len(r) for r in rows)
        pad = self.tokenizer.pad_token_id
        ids = torch.tensor([[pad] * (width - len(r)) + r for r in rows])
        mask = torch.tensor([[0] * (width - len(r)) + [1] * len(r) for r in rows])
        base = _encode(items, None)
        fields = {k: getattr(base, k) for k in PerceptBatch.__dataclass_fields__}
        return VLMBatch(**fields, input_ids=ids, attention_mask=mask)

    def forward(self, batch: VLMBatch) -> torch.Tensor:
        """(B, 101) next-token logits: score tokens for rating rows, letters (then -inf) else."""
        if not isinstance(batch, VLMBatch):
            raise TypeError("PerceptVLM: batch must be a VLMBatch from PerceptVLM.encode.")
        position = (batch.attention_mask.cumsum(dim=1) - 1).clamp(min=0)
        out = self.model(
            input_ids=batch.input_ids, attention_mask=batch.attention_mask,
            position_ids=position, pixel_values=(batch.images - _MEAN) / _STD, logits_to_keep=1,
        )  # fmt: skip
        logits = out.logits[:, -1]  # (B, vocab): lm_head at the answer position
        letters = logits[:, self.letter_ids].masked_fill(~batch.option_mask, -torch.inf)
        padded = torch.full((len(batch), N_SCORES), -torch.inf, dtype=logits.dtype)
        padded[:, :MAX_OPTIONS] = letters
        return torch.where(batch.is_rating[:, None], logits[:, self.score_ids], padded)

    @torch.no_grad()
    def rate(self, images: np.ndarray, domain: str, batch_size: int = 256) -> np.ndarray:
        """Token-As-Score ratings (0–100) of (N, H, W, 3) float images in one domain."""
        if domain not in DOMAINS:
            raise ValueError(f"PerceptVLM.rate: domain must be one of {DOMAINS}; got {domain!r}.")
        if not isinstance(images, np.ndarray) or images.ndim != 4:
            raise ValueError("PerceptVLM.rate: images must be an (N, H, W, 3) numpy array.")
        items = [VRItem(check_image("images", im, "PerceptVLM.rate"), domain, 0.0) for im in images]
        return self.expected_scores(items, batch_size)

    @torch.no_grad()
    def expected_scores(self, items: Sequence[VRItem], batch_size: int = 256) -> np.ndarray:
        """Token-As-Score expectation sum_s s softmax(score-token logits)[s] of rating items."""
        items = check_sequence("items", items, "PerceptVLM", VRItem, allow_empty=True)
        batch_size = check_positive_int("batch_size", batch_size, owner="PerceptVLM", maximum=65536)
        out = [torch.softmax(self(self.encode(items[i : i + batch_size])), dim=-1)
               @ torch.arange(N_SCORES, dtype=torch.float32)
               for i in range(0, len(items), batch_size)]  # fmt: skip
        return torch.cat(out).numpy().astype(float) if out else np.zeros(0)

    @torch.no_grad()
    def choose(self, items: Sequence[VQAItem], batch_size: int = 256) -> list[str]:
        """The most likely option letter of each question item (greedy first token)."""
        items = check_sequence(
            "items", items, "PerceptVLM.choose", (VQAItem, GenericQAItem), allow_empty=True
        )
        batch_size = check_positive_int("batch_size", batch_size, owner="PerceptVLM", maximum=65536)
        best = [self(self.encode(items[i : i + batch_size])).argmax(dim=-1)
                for i in range(0, len(items), batch_size)]  # fmt: skip
        return [LETTERS[int(i)] for i in torch.cat(best)] if best else []

    def save_pretrained(self, path: str | Path) -> None:
        """Write ``config.json`` and ``model.safetensors`` to the folder ``path``."""
        from safetensors.torch import save_file

        if not isinstance(path, str | Path):
            raise TypeError(
                f"PerceptVLM.save_pretrained: path must be a str or Path; got {path!r}."
            )
        folder = Path(path)
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "config.json").write_text(json.dumps(self.config()))
        state = {k: v.contiguous() for k, v in self.model.state_dict().items()}
        state.pop("lm_head.weight", None)  # tied to the input embeddings
        save_file(state, folder / "model.safetensors")

    @classmethod
    def from_pretrained(cls, path: str | Path) -> PerceptVLM:
        """Load a model written by :meth:`save_pretrained` (architecture checked first)."""
        from safetensors.torch import load_file

        folder = Path(path)
        if not (folder / "config.json").is_file():
            raise FileNotFoundError(f"PerceptVLM.from_pretrained: no config.json in {folder}")
        config = json.loads((folder / "config.json").read_text())
        if not isinstance(config, dict) or set(config) != _CONFIG_KEYS:
            raise ValueError(
                f"PerceptVLM.from_pretrained: {folder}/config.json is not a PerceptVLM's."
            )
        model = cls(**config)
        state = load_file(folder / "model.safetensors")
        missing, unexpected = model.model.load_state_dict(state, strict=False)
        if unexpected or set(missing) - {"lm_head.weight"}:
            raise ValueError(
                f"PerceptVLM.from_pretrained: weights do not match the config (missing "
                f"{sorted(missing)[:3]}, unexpected {sorted(unexpected)[:3]})."
            )
        return model
