"""The real-data path of spec §5: next-byte language modelling on a local text corpus.

Cooper, Diakonikolas, Ma & Sala, *Expressivity-Efficiency Tradeoffs for Hybrid Sequence Models*
(ICML 2026, arXiv:2603.08859), spec §5 "Real data path (optional)". The same models, ``train``
and ``evaluate`` as the synthetic tasks run on text: ``TextLM`` is an ``AbstractTask`` whose
samples are random windows of a byte corpus, with the target at position t the byte at t + 1
(aligned targets, every position scored).

Deviations: the spec names ``--task lm --dataset <HF dataset or local files>`` on the CLI; here
the path is a library task (``TextLM.from_files`` / ``from_dataset``) used with ``train`` and
``evaluate``, without a registered experiment or claim. Tokens are raw UTF-8 bytes (ids 4..259,
vocabulary 260), so no tokenizer has to be downloaded. ``from_dataset`` reads only local data:
a folder written by ``datasets.Dataset.save_to_disk``, or one of ``datasets``' packaged
builders (text, json, csv, parquet, arrow) over local ``data_files``; a hub name is refused,
so nothing downloads.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from os import PathLike
from pathlib import Path
from typing import final

import torch

from icml26.core import MissingExtraError, Seed, check_positive_int
from icml26.hybrid_seq.tasks import N_SPECIAL, AbstractTask, Batch, _task_generator

__all__ = ["TextLM"]

N_BYTES = 256
PACKAGED_BUILDERS = ("text", "json", "csv", "parquet", "arrow")


@final
@dataclass(frozen=True, eq=False)
class TextLM(AbstractTask):
    """Next-byte language modelling on a byte corpus: windows of L bytes, targets shifted by one.

    A sample starts at s uniform in ``[0, len(corpus) - L - 1]``; its inputs are the bytes
    ``corpus[s : s + L]`` and its targets ``corpus[s + 1 : s + L + 1]`` (the next byte at every
    position), all scored; byte b has token id ``4 + b``.

    Parameters
    ----------
    corpus
        1-D integer tensor of bytes (values in ``[0, 255]``), at least ``L + 1`` long.
    L
        Window length T.

    Examples
    --------
    >>> task = TextLM.from_text("abcabcabcabc", L=4)
    >>> b = task.sample(2, generator=0)
    >>> torch.equal(b.inputs[:, 1:], b.targets[:, :-1]), task.vocab_size
    (True, 260)
    """

    corpus: torch.Tensor
    L: int

    def __post_init__(self) -> None:
        owner = "TextLM"
        check_positive_int("L", self.L, owner=owner)
        c = self.corpus
        if not isinstance(c, torch.Tensor):
            raise TypeError(
                f"{owner}: corpus must be a torch.Tensor of bytes; got {type(c).__name__}."
            )
        if c.ndim != 1 or c.dtype.is_floating_point or c.dtype.is_complex or c.dtype == torch.bool:
            raise ValueError(
                f"{owner}: corpus must be a 1-D integer tensor; got {c.ndim}-D {c.dtype}."
            )
        if len(c) < self.L + 1:
            raise ValueError(
                f"{owner}: corpus must hold at least L + 1 = {self.L + 1} bytes; got {len(c)}."
            )
        if bool((c < 0).any()) or bool((c >= N_BYTES).any()):
            raise ValueError(f"{owner}: corpus values must be bytes in [0, 255].")

    @classmethod
    def from_text(cls, text: str, L: int) -> TextLM:
        """The corpus of ``text``'s UTF-8 bytes."""
        if not isinstance(text, str):
            raise TypeError(f"TextLM.from_text: text must be a str; got {type(text).__name__}.")
        data = text.encode("utf-8")
        return cls(torch.frombuffer(bytearray(data), dtype=torch.uint8).long(), L)

    @classmethod
    def from_files(cls, paths: Sequence[str | PathLike[str]], L: int) -> TextLM:
        """The bytes of the local files ``paths``, joined by one newline each.

        Raises
        ------
        OSError
            If a file cannot be read.
        """
        if isinstance(paths, (str, PathLike)):
            paths = [paths]
        if not isinstance(paths, Sequence) or not paths:
            raise ValueError("TextLM.from_files: paths must be a non-empty sequence of file paths.")
        for p in paths:
            if not isinstance(p, (str, PathLike)):
                raise TypeError(
                    "TextLM.from_files: paths must hold str or os.PathLike; got "
                    f"{type(p).__name__}."
                )
        data = b"\n".join(Path(p).read_bytes() for p in paths)
        return cls(torch.frombuffer(bytearray(data), dtype=torch.uint8).long(), L)

    @classmethod
    def from_dataset(
        cls,
        name_or_path: str | PathLike[str],
        L: int,
        *,
        split: str = "train",
        text_field: str = "text",
        data_files: str | Sequence[str] | None = None,
    ) -> TextLM:
        """A local ``datasets`` dataset's ``text_field`` rows, joined by newlines.

        Parameters
        ----------
        name_or_path
            A folder written by ``Dataset.save_to_disk`` / ``DatasetDict.save_to_disk``, or one
            of the packaged builders ``"text"``, ``"json"``, ``"csv"``, ``"parquet"``,
            ``"arrow"`` with local ``data_files``. Hub names are refused (nothing downloads).
        L
            Window length.
        split
            Split to read (of a ``DatasetDict`` or of the builder).
        text_field
            Column holding the text.
        data_files
            Local files for a packaged builder.

        Examples
        --------
        >>> import tempfile, pathlib
        >>> path = pathlib.Path(tempfile.mkdtemp()) / "a.txt"
        >>> _ = path.write_text("hello world\\nhybrid models\\n")
        >>> TextLM.from_dataset("text", L=8, data_files=[str(path)]).corpus.numel()
        25
        """
        owner = "TextLM.from_dataset"
        try:
            import datasets
        except ImportError as err:  # pragma: no cover - datasets ships with the extra
            raise MissingExtraError(owner, ["datasets"], "hybrid_seq") from err
        if not isinstance(name_or_path, (str, PathLike)):
            raise TypeError(
                f"{owner}: name_or_path must be a str or os.PathLike; got "
                f"{type(name_or_path).__name__}."
            )
        for arg, value in (("split", split), ("text_field", text_field)):
            if not isinstance(value, str):
                raise TypeError(f"{owner}: {arg} must be a str; got {type(value).__name__}.")
        local = Path(name_or_path)
        if local.is_dir():
            ds = datasets.load_from_disk(str(local))
            if isinstance(ds, datasets.DatasetDict):
                if split not in ds:
                    raise ValueError(f"{owner}: split must be one of {sorted(ds)}; got {split!r}.")
                ds = ds[split]
        elif str(name_or_path) in PACKAGED_BUILDERS:
            if data_files is None:
                raise ValueError(
                    f"{owner}: data_files (local files) are required with the packaged builder "
                    f"{str(name_or_path)!r}."
                )
            files = [data_files] if isinstance(data_files, str) else list(data_files)
            missing = [f for f in files if not Path(f).is_file()]
            if missing:
                raise ValueError(f"{owner}: data_files must be local files; not found: {missing}.")
            ds = datasets.load_dataset(str(name_or_path), data_files=files, split=split)
        else:
            raise ValueError(
                f"{owner}: name_or_path must be a local save_to_disk folder or one of "
                f"{list(PACKAGED_BUILDERS)} with data_files (nothing is downloaded); got "
                f"{str(name_or_path)!r}."
            )
        if text_field not in ds.column_names:
            raise ValueError(
                f"{owner}: text_field must be one of {ds.column_names}; got {text_field!r}."
            )
        rows = ds[text_field]
        if not all(isinstance(r, str) for r in rows):
            raise ValueError(f"{owner}: the {text_field!r} column must hold strings.")
        return cls.from_text("\n".join(rows), L)

    @property
    def vocab_size(self) -> int:
        """4 special ids + 256 byte ids."""
        return N_SPECIAL + N_BYTES

    @property
    def seq_len(self) -> int:
        """T = L."""
        return self.L

    def sample(self, batch_size: int, generator: Seed = None) -> Batch:
        """Draw ``batch_size`` windows; ``generator`` is a torch/numpy generator, int or None."""
        batch_size = check_positive_int("batch_size", batch_size, owner="TextLM.sample")
        gen = _task_generator(generator, "TextLM.sample")
        starts = torch.randint(len(self.corpus) - self.L, (batch_size,), generator=gen)
        idx = starts[:, None] + torch.arange(self.L + 1)  # (B, L + 1)
        window = self.corpus.long()[idx] + N_SPECIAL
        inputs, targets = window[:, :-1].contiguous(), window[:, 1:].contiguous()
        return Batch(inputs=inputs, targets=targets, mask=torch.ones_like(inputs, dtype=torch.bool))
