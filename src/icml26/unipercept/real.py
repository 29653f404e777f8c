"""The real-scale path: the released UniPercept model and UniPercept-Bench (spec §5 "real scale").

Cao et al., UniPercept (arXiv:2512.21675). The released model (``Thunderbolt215215/UniPercept``,
an InternVL3-8B chat model) is loaded with ``transformers`` (it needs the repository's own code:
``trust_remote_code=True`` is the caller's explicit choice, with a pinned ``revision``); its
rating is the Token-As-Score expectation over the logits of the 101 score tokens at the next
position, one forward pass; a VQA choice is the most likely option letter at the next position
(the first letter of the greedy reply). Nothing downloads unless a hub id is given and no local
folder of that name exists; the tests use a tiny local causal LM whose tokenizer holds the 101
score tokens.

Deviations: InternVL's vision tower is not exercised offline; its input follows InternVL's
published convention (448 x 448, ImageNet mean/std, ``<img><IMG_CONTEXT>*N</img>`` in the
prompt, ``image_flags``), untested here. The VR prompts follow the paper's wording; the exact
phrasing of the released model's prompt may differ.
"""

from __future__ import annotations

import json
import re
import string
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from icml26.core.imports import require
from icml26.core.validation import check_device
from icml26.unipercept.tokens import SCORE_TOKENS

__all__ = [
    "VR_PROMPTS",
    "BenchItem",
    "UniPerceptScorer",
    "load_bench",
    "load_unipercept",
    "load_vr_folder",
]

_ASPECT = {"IAA": "aesthetics", "IQA": "quality", "ISTA": "structure and texture richness"}
VR_PROMPTS = {
    domain: (
        f"Please rate the {aspect} of this image and provide a score between 0 and 100, where "
        "each score is written as its score token. Output the score token only, integer only."
    )
    for domain, aspect in _ASPECT.items()
}
_HUB_ID = re.compile(r"[A-Za-z0-9][\w.-]*/[A-Za-z0-9][\w.-]*")
_IMAGENET_MEAN = np.array([0.485, 0.456, 0.406], dtype=np.float32)
_IMAGENET_STD = np.array([0.229, 0.224, 0.225], dtype=np.float32)


def _single_token_ids(tokenizer: Any, tokens: Sequence[str]) -> list[int]:
    ids = []
    for tok in tokens:
        encoded = tokenizer.encode(tok, add_special_tokens=False)
        if len(encoded) != 1:
            raise ValueError(
                f"load_unipercept: model_id_or_path's tokenizer must hold {tok!r} as one token; "
                f"it encodes to {len(encoded)} tokens."
            )
        if tokenizer.decode(encoded).strip() != tok:  # an unknown token maps to <unk>
            raise ValueError(
                f"load_unipercept: model_id_or_path's tokenizer must hold {tok!r} as one token; "
                f"it reads back as {tokenizer.decode(encoded)!r}."
            )
        ids.append(int(encoded[0]))
    return ids


class UniPerceptScorer:
    """Token-As-Score ratings and letter choices from a causal (vision-)language model.

    Parameters
    ----------
    model, tokenizer
        A ``transformers`` causal LM (or InternVL chat model) and its tokenizer.
    device
        Where the model runs.
    image_size
        Side of the square image input of the vision tower (InternVL: 448).
    """

    def __init__(
        self, model: Any, tokenizer: Any, device: str = "cpu", image_size: int = 448
    ) -> None:
        if not callable(model) or not callable(getattr(tokenizer, "encode", None)):
            raise TypeError(
                "UniPerceptScorer: model must be a callable HF model and tokenizer a tokenizer."
            )
        self.model = model
        self.tokenizer = tokenizer
        self.device = device
        self.image_size = image_size
        self.score_token_ids = _single_token_ids(tokenizer, SCORE_TOKENS)
        self.letter_ids = _single_token_ids(tokenizer, tuple(string.ascii_uppercase[:4]))

    # --- text path (exercised offline) --------------------------------------------------------

    def next_token_logits(self, prompts: Sequence[str], pixel_values: Any = None) -> Any:
        """(N, vocab) logits of the token after each prompt (left padding, one forward pass)."""
        import torch

        if isinstance(prompts, str) or not prompts or not all(isinstance(p, str) for p in prompts):
            raise TypeError("UniPerceptScorer: prompts must be a non-empty list of strings.")
        rows = [self.tokenizer.encode(p, add_special_tokens=False) for p in prompts]
        width = max(len(r) for r in rows)
        pad = self.tokenizer.pad_token_id if self.tokenizer.pad_token_id is not None else 0
        input_ids = torch.tensor([[pad] * (width - len(r)) + r for r in rows], device=self.device)
        mask = torch.tensor(
            [[0] * (width - len(r)) + [1] * len(r) for r in rows], device=self.device
        )
        kwargs: dict[str, Any] = {"input_ids": input_ids, "attention_mask": mask}
        if pixel_values is not None:
            kwargs["pixel_values"] = pixel_values
            kwargs["image_flags"] = torch.ones(
                len(prompts), 1, dtype=torch.long, device=self.device
            )
        with torch.no_grad():
            out = self.model(**kwargs)
        return out.logits[:, -1, :].float()  # (N, vocab)

    def score_distribution(self, prompts: Sequence[str], pixel_values: Any = None) -> np.ndarray:
        """(N, 101) softmax over the 101 score tokens (the distribution, not only its mean)."""
        import torch

        logits = self.next_token_logits(prompts, pixel_values)[:, self.score_token_ids]
        return torch.softmax(logits, dim=-1).cpu().numpy().astype(float)

    def rate_prompts(self, prompts: Sequence[str], pixel_values: Any = None) -> np.ndarray:
        """Token-As-Score expectation sum_s s p(s) of each prompt's next token."""
        return self.score_distribution(prompts, pixel_values) @ np.arange(101, dtype=float)

    def choose_prompts(
        self, prompts: Sequence[str], n_options: Sequence[int], pixel_values: Any = None
    ) -> list[str]:
        """The most likely of the first ``n_options[i]`` letters after each prompt."""
        logits = self.next_token_logits(prompts, pixel_values)[:, self.letter_ids].cpu().numpy()
        out = []
        for row, k in zip(logits, n_options, strict=True):
            out.append(string.ascii_uppercase[int(np.argmax(row[:k]))])
        return out

    # --- vision path (InternVL convention; not exercised offline) ----------------------------

    def _pixel_values(self, images: np.ndarray) -> Any:
        import torch
        from PIL import Image

        batch = []
        for image in images:
            pil = Image.fromarray(np.round(np.clip(image, 0, 1) * 255).astype(np.uint8))
            pil = pil.resize((self.image_size, self.image_size), Image.Resampling.BICUBIC)
            x = (np.asarray(pil, dtype=np.float32) / 255.0 - _IMAGENET_MEAN) / _IMAGENET_STD
            batch.append(x.transpose(2, 0, 1))
        dtype = next(self.model.parameters()).dtype
        return torch.tensor(np.stack(batch), device=self.device, dtype=dtype)

    def _image_prompt(self, text: str) -> str:
        n = int(getattr(self.model, "num_image_token", 256))
        return f"<img>{'<IMG_CONTEXT>' * n}</img>\n{text}"

    def rate(self, images: np.ndarray, domain: str) -> np.ndarray:
        """Token-As-Score ratings (0–100) of (N, H, W, 3) float images in one domain."""
        if domain not in VR_PROMPTS:
            raise ValueError(
                f"UniPerceptScorer.rate: domain must be one of {tuple(VR_PROMPTS)}; got {domain!r}."
            )
        if not hasattr(self.model, "vision_model"):
            raise TypeError(
                "UniPerceptScorer.rate: model has no vision tower; use rate_prompts for text."
            )
        prompts = [self._image_prompt(VR_PROMPTS[domain])] * len(images)
        return self.rate_prompts(prompts, self._pixel_values(images))

    def choose(self, items: Sequence[Any]) -> list[str]:
        """The most likely option letter of each VQA item (``image`` array or ``image_path``)."""
        if not hasattr(self.model, "vision_model"):
            raise TypeError("UniPerceptScorer.choose: model has no vision tower.")
        letters = []
        for item in items:
            image = item.image if hasattr(item, "image") else _read_image(item.image_path)
            options = "\n".join(
                f"{string.ascii_uppercase[i]}. {o}" for i, o in enumerate(item.options)
            )
            text = (f"{item.question}\n{options}\nChoose the best answer and reply with the letter "
                    "of the option only.")  # fmt: skip
            letters += self.choose_prompts([self._image_prompt(text)], [len(item.options)],
                                           self._pixel_values(image[None]))  # fmt: skip
        return letters


def _resolve_folder(model_id_or_path: str, revision: str | None) -> str:
    """A local folder, or the hub cache's snapshot of a hub id (never a download)."""
    if Path(model_id_or_path).is_dir():
        return model_id_or_path
    if not _HUB_ID.fullmatch(model_id_or_path):
        raise FileNotFoundError(
            f"load_unipercept: model_id_or_path {model_id_or_path!r} is neither a local folder "
            "nor a hub id of the form owner/name"
        )
    from huggingface_hub import snapshot_download

    try:
        return snapshot_download(model_id_or_path, revision=revision, local_files_only=True)
    except Exception as err:  # not in the local hub cache
        raise FileNotFoundError(
            f"load_unipercept: {model_id_or_path!r} is not in the local hub cache; download it "
            f"first (huggingface_hub.snapshot_download({model_id_or_path!r})) or pass a folder"
        ) from err


def load_unipercept(
    model_id_or_path: str = "Thunderbolt215215/UniPercept",
    device: str = "cpu",
    *,
    trust_remote_code: bool = False,
    revision: str | None = None,
) -> UniPerceptScorer:
    """Load the released UniPercept model (or any compatible causal LM) with ``from_pretrained``.

    Parameters
    ----------
    model_id_or_path
        A local folder, or a hub id already in the local hub cache (nothing is downloaded here:
        run ``huggingface_hub.snapshot_download(model_id)`` first).
    device
        A torch device available here, e.g. ``"cpu"`` or ``"cuda"`` (bfloat16 on CUDA,
        float32 elsewhere).
    trust_remote_code
        Run the Python code shipped with the checkpoint (the released InternVL3 model needs it).
        Off by default: only turn it on for code you have read, at a pinned ``revision``.
    revision
        The hub snapshot to use (a commit hash); required with ``trust_remote_code`` for a hub
        id, so the code that runs cannot change under you.

    Raises
    ------
    FileNotFoundError
        Neither a local folder nor a cached hub snapshot.
    ValueError
        The tokenizer does not hold the 101 score tokens (or the letters A–D) as single tokens,
        or ``trust_remote_code`` for a hub id without a ``revision``.

    Examples
    --------
    >>> scorer = load_unipercept(  # doctest: +SKIP
    ...     "Thunderbolt215215/UniPercept", "cuda", trust_remote_code=True, revision="<commit>"
    ... )
    """
    if not isinstance(model_id_or_path, str) or not model_id_or_path:
        raise TypeError("load_unipercept: model_id_or_path must be a non-empty string.")
    check_device("device", device, owner="load_unipercept")
    if not isinstance(trust_remote_code, bool):
        raise TypeError(
            f"load_unipercept: trust_remote_code must be a bool; got {trust_remote_code!r}."
        )
    if revision is not None and (not isinstance(revision, str) or not revision):
        raise TypeError(f"load_unipercept: revision must be a non-empty string; got {revision!r}.")
    if trust_remote_code and revision is None and not Path(model_id_or_path).is_dir():
        raise ValueError(
            "load_unipercept: trust_remote_code=True runs code from the hub repository; pin it "
            "with revision='<commit hash>'."
        )
    folder = _resolve_folder(model_id_or_path, revision)
    require("transformers", "unipercept")
    import torch
    import transformers

    dtype = torch.bfloat16 if device.startswith("cuda") else torch.float32
    trust = {"trust_remote_code": trust_remote_code}
    tokenizer = transformers.AutoTokenizer.from_pretrained(folder, **trust)
    config = transformers.AutoConfig.from_pretrained(folder, **trust)
    loader = transformers.AutoModelForCausalLM
    if "internvl" in str(getattr(config, "model_type", "")).lower():
        loader = transformers.AutoModel  # InternVL chat models register under AutoModel
    model = loader.from_pretrained(folder, dtype=dtype, **trust)
    model = model.to(device).eval()
    return UniPerceptScorer(model, tokenizer, device=device)


def _read_image(path: str | Path) -> np.ndarray:
    from PIL import Image

    with Image.open(path) as im:
        return np.asarray(im.convert("RGB"), dtype=np.float32) / 255.0


@dataclass(frozen=True)
class BenchItem:
    """One UniPercept-Bench VQA row (the image stays a path until it is read)."""

    image_path: str
    question: str
    options: tuple[str, ...]
    answer: str
    domain: str
    category: str
    criterion: str
    template: str

    @property
    def image(self) -> np.ndarray:
        """The image as (H, W, 3) float32 in [0, 1]."""
        return _read_image(self.image_path)


_REQUIRED = ("image", "question", "answer", "domain", "category", "criterion", "template")


def _rows(path: Path) -> list[dict[str, Any]]:
    if path.is_dir():
        files = sorted([*path.rglob("*.json"), *path.rglob("*.jsonl")])
        if not files:
            raise FileNotFoundError(f"load_bench: no .json/.jsonl file under {path}")
        return [row for f in files for row in _rows(f)]
    text = path.read_text()
    if path.suffix == ".jsonl":
        return [json.loads(line) for line in text.splitlines() if line.strip()]
    data = json.loads(text)
    return data if isinstance(data, list) else list(data.get("data", []))


def load_bench(path: str | Path) -> list[BenchItem]:
    """Read UniPercept-Bench VQA rows from a local JSON / JSONL file or folder of them.

    Each row holds ``image`` (relative to the file's folder, or absolute), ``question``,
    ``answer`` (a letter), ``domain``, ``category``, ``criterion``, ``template`` and the options,
    either as ``options`` (a list or a ``{"A": ...}`` dict) or as ``A`` / ``B`` / ``C`` / ``D``
    columns. A hub id is not fetched here: download the dataset first
    (``huggingface_hub.snapshot_download(repo_id, repo_type="dataset")``) and pass the folder.
    """
    if not isinstance(path, str | Path):
        raise TypeError(f"load_bench: path must be a str or Path; got {type(path).__name__}.")
    root = Path(path)
    if not root.exists():
        raise FileNotFoundError(f"load_bench: {root} does not exist (download the benchmark first)")
    base = root if root.is_dir() else root.parent
    items = []
    for i, row in enumerate(_rows(root)):
        if not isinstance(row, dict):
            raise ValueError(f"load_bench: path row {i} must be a JSON object.")
        missing = [k for k in _REQUIRED if k not in row]
        if missing:
            raise ValueError(f"load_bench: path row {i} lacks the field(s) {missing}.")
        options = row.get("options")
        if isinstance(options, dict):
            options = [options[k] for k in sorted(options)]
        if options is None:
            options = [row[k] for k in "ABCD" if row.get(k) not in (None, "")]
        image = Path(str(row["image"]))
        items.append(BenchItem(
            image_path=str(image if image.is_absolute() else base / image),
            question=str(row["question"]),
            options=tuple(str(o) for o in options),
            answer=str(row["answer"]).strip().upper()[:1],
            domain=str(row["domain"]),
            category=str(row["category"]),
            criterion=str(row["criterion"]),
            template=str(row["template"]),
        ))  # fmt: skip
    return items


def load_vr_folder(
    folder: str | Path, labels: str = "labels.csv", image_column: str = "image",
    mos_column: str = "mos", mos_range: tuple[float, float] = (0.0, 100.0),
) -> list[tuple[str, float]]:  # fmt: skip
    """(image path, MOS on 0–100) pairs of a local VR dataset (KonIQ-10K, SPAQ, KADID, ...).

    ``labels`` is a CSV with an image-name column and a MOS column; ``mos_range`` is the
    dataset's own scale (e.g. (1, 5) for KonIQ-10K), mapped linearly to 0–100.
    """
    import csv

    for name, value in (("folder", folder), ("labels", labels)):
        if not isinstance(value, str | Path):
            raise TypeError(
                f"load_vr_folder: {name} must be a str or Path; got {type(value).__name__}."
            )
    if not isinstance(mos_range, list | tuple) or len(mos_range) != 2:
        raise TypeError("load_vr_folder: mos_range must be a (low, high) pair.")
    root = Path(folder)
    table = root / labels
    if not table.is_file():
        raise FileNotFoundError(f"load_vr_folder: no {labels} in {root}")
    try:
        lo, hi = (float(v) for v in mos_range)
    except (TypeError, ValueError):
        raise TypeError("load_vr_folder: mos_range must hold two numbers.") from None
    if not (np.isfinite(lo) and np.isfinite(hi) and hi > lo):
        raise ValueError(
            f"load_vr_folder: mos_range must be (low, high) with high > low; got {mos_range!r}."
        )
    out = []
    with table.open(newline="") as f:
        for row in csv.DictReader(f):
            if image_column not in row or mos_column not in row:
                raise ValueError(
                    f"load_vr_folder: labels lacks column {image_column!r} or {mos_column!r}."
                )
            mos = 100.0 * (float(row[mos_column]) - lo) / (hi - lo)
            out.append((str(root / row[image_column]), float(np.clip(mos, 0.0, 100.0))))
    return out
