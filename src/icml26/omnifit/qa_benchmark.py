"""A generic audio-visual multiple-choice QA benchmark read from a local JSONL file (spec §5).

The paper evaluates on ten audio-visual QA suites whose list was not recovered; the suites used by
OmniZip / OmniSIFT (WorldSense, DailyOmni, AVUT, Video-MME with audio, ...) can all be written as
one JSON object per line::

    {"video": "clips/0001.mp4", "audio": null, "question": "What plays when the door opens?",
     "options": ["a bell", "a dog", "a phone", "music"], "answer": "B", "id": "0001"}

Fields:

- ``video``, ``audio``: a path (relative paths are resolved against the JSONL file's folder, or
  ``media_root``) or ``null``; at least one is given. Local files only: URLs are refused.
- ``question``: a non-empty string.
- ``options``: a list of at least two distinct non-empty strings.
- ``answer``: the correct option, as the option's text, a letter ``"A"``, ``"B"``, ... naming it
  by position, or a 0-based integer index. A string equal to an option's text is that option; a
  letter is read as a position only when it is not itself an option's text.
- optional ``id`` (string or integer, unique in the file, default: the line number) and ``meta``
  (an object, carried along untouched). Any other key is an error (a misspelt field would
  otherwise be lost silently).

Blank lines are skipped. Every error names the file and the line.
:meth:`QAItem.conversation` builds the Qwen2.5-Omni chat message that
``qwen_omni_utils.process_mm_info(conversation, use_audio_in_video=True)`` and the
``Qwen2_5OmniProcessor`` take; :meth:`QABenchmark.accuracy` scores predicted option indices.

Deviations: the schema (field names, answer forms, path resolution) is ours; the spec names only
``{video, audio, question, options, answer}``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, final

__all__ = ["QABenchmark", "QABenchmarkError", "QAItem"]

FIELDS = ("video", "audio", "question", "options", "answer")
OPTIONAL = ("id", "meta")
LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")
MAX_LINE_CHARS = 10**6  # a longer line is not a QA item (bounds the memory a bad file can take)
MAX_ITEMS = 10**7


class QABenchmarkError(ValueError):
    """A malformed benchmark file; the message names the file and the line."""


@final
@dataclass(frozen=True)
class QAItem:
    """One multiple-choice question about a clip.

    Attributes
    ----------
    id
        The item's identifier (its line number when the file gives none).
    question
        The question text.
    options
        The answer options, in order.
    answer
        0-based index of the correct option.
    video, audio
        Resolved local paths, or ``None``.
    meta
        The line's ``meta`` object (empty when absent).
    """

    id: str
    question: str
    options: tuple[str, ...]
    answer: int
    video: Path | None = None
    audio: Path | None = None
    meta: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        owner = "QAItem"
        for name in ("id", "question"):
            if not isinstance(getattr(self, name), str):
                raise TypeError(f"{owner}: {name} must be a str.")
        if not isinstance(self.options, tuple) or not all(isinstance(o, str) for o in self.options):
            raise TypeError(f"{owner}: options must be a tuple of str.")
        if not 2 <= len(self.options) <= len(LETTERS):
            raise ValueError(f"{owner}: options must hold 2 to {len(LETTERS)} entries.")
        if isinstance(self.answer, bool) or not isinstance(self.answer, int):
            raise TypeError(f"{owner}: answer must be an int option index.")
        if not 0 <= self.answer < len(self.options):
            raise ValueError(f"{owner}: answer must be in [0, {len(self.options)}).")
        for name in ("video", "audio"):
            if getattr(self, name) is not None and not isinstance(getattr(self, name), Path):
                raise TypeError(f"{owner}: {name} must be a Path or None.")
        if not isinstance(self.meta, Mapping):
            raise TypeError(f"{owner}: meta must be a mapping.")

    @property
    def answer_text(self) -> str:
        """The correct option's text."""
        return self.options[self.answer]

    def prompt(self) -> str:
        """The question followed by lettered options and an instruction to answer with a letter.

        Examples
        --------
        >>> QAItem("0", "Which?", ("x", "y"), 1, video=Path("a.mp4")).prompt().splitlines()
        ['Which?', 'A. x', 'B. y', "Answer with the option's letter."]
        """
        lines = [self.question]
        lines += [f"{LETTERS[i]}. {option}" for i, option in enumerate(self.options)]
        lines.append("Answer with the option's letter.")
        return "\n".join(lines)

    def conversation(self, system: str | None = None) -> list[dict[str, Any]]:
        """The Qwen2.5-Omni chat messages of this item (media first, then the prompt).

        Parameters
        ----------
        system
            An optional system message (Qwen2.5-Omni's model card gives the one its audio
            output expects; the thinker alone does not need it).

        Returns
        -------
        list of dict
            ``[{"role": "user", "content": [{"type": "video", "video": path}, ...,
            {"type": "text", "text": prompt}]}]``, preceded by the system message if given.
        """
        if system is not None and not isinstance(system, str):
            raise TypeError(f"QAItem: system must be a str or None; got {type(system).__name__}.")
        content: list[dict[str, Any]] = []
        if self.video is not None:
            content.append({"type": "video", "video": str(self.video)})
        if self.audio is not None:
            content.append({"type": "audio", "audio": str(self.audio)})
        content.append({"type": "text", "text": self.prompt()})
        messages = [{"role": "user", "content": content}]
        if system is not None:
            messages.insert(0, {"role": "system", "content": [{"type": "text", "text": system}]})
        return messages


def _answer_index(answer: Any, options: tuple[str, ...], where: str) -> int:
    """Option index of ``answer`` (option text, letter, or 0-based int)."""
    if isinstance(answer, bool):
        raise QABenchmarkError(f"{where}: 'answer' must be an option, a letter or an index.")
    if isinstance(answer, int):
        if not 0 <= answer < len(options):
            raise QABenchmarkError(
                f"{where}: 'answer' index {answer} is outside the {len(options)} options."
            )
        return answer
    if isinstance(answer, str):
        if answer in options:
            return options.index(answer)
        letter = answer.strip().rstrip(".)").upper()
        if len(letter) == 1 and letter in LETTERS[: len(options)]:
            return LETTERS.index(letter)
        raise QABenchmarkError(
            f"{where}: 'answer' {answer[:80]!r} is neither one of the options nor a letter "
            f"A-{LETTERS[len(options) - 1]}."
        )
    raise QABenchmarkError(
        f"{where}: 'answer' must be a string or an integer; got {type(answer).__name__}."
    )


def _media(value: Any, name: str, root: Path, check_files: bool, where: str) -> Path | None:
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        raise QABenchmarkError(f"{where}: {name!r} must be a path string or null.")
    if URL.match(value):
        raise QABenchmarkError(
            f"{where}: {name!r} is a URL ({value[:80]!r}); QABenchmark reads local files only."
        )
    path = Path(value).expanduser()
    path = path if path.is_absolute() else root / path
    if check_files and not path.is_file():
        raise QABenchmarkError(f"{where}: {name!r} file {str(path)[:200]!r} does not exist.")
    return path


def _parse_line(record: Any, line_no: int, root: Path, check_files: bool, where: str) -> QAItem:
    if not isinstance(record, dict):
        raise QABenchmarkError(
            f"{where}: a line must be a JSON object; got {type(record).__name__}."
        )
    missing = [key for key in FIELDS if key not in record]
    if missing:
        raise QABenchmarkError(f"{where}: missing field(s) {', '.join(map(repr, missing))}.")
    unknown = sorted(set(record) - set(FIELDS) - set(OPTIONAL))
    if unknown:
        raise QABenchmarkError(
            f"{where}: unknown field(s) {', '.join(map(repr, unknown[:5]))}; allowed: "
            f"{', '.join(FIELDS + OPTIONAL)} (put anything else under 'meta')."
        )
    question = record["question"]
    if not isinstance(question, str) or not question.strip():
        raise QABenchmarkError(f"{where}: 'question' must be a non-empty string.")
    options = record["options"]
    if (
        not isinstance(options, list)
        or len(options) < 2
        or len(options) > len(LETTERS)
        or not all(isinstance(o, str) and o.strip() for o in options)
    ):
        raise QABenchmarkError(
            f"{where}: 'options' must be a list of 2 to {len(LETTERS)} non-empty strings."
        )
    if len(set(options)) != len(options):
        raise QABenchmarkError(f"{where}: 'options' must be distinct.")
    options = tuple(options)
    answer = _answer_index(record["answer"], options, where)
    video = _media(record["video"], "video", root, check_files, where)
    audio = _media(record["audio"], "audio", root, check_files, where)
    if video is None and audio is None:
        raise QABenchmarkError(f"{where}: at least one of 'video' and 'audio' must be given.")
    item_id = record.get("id", str(line_no))
    if isinstance(item_id, bool) or not isinstance(item_id, (str, int)):
        raise QABenchmarkError(f"{where}: 'id' must be a string or an integer.")
    meta = record.get("meta", {})
    if not isinstance(meta, dict):
        raise QABenchmarkError(f"{where}: 'meta' must be a JSON object.")
    return QAItem(str(item_id), question, options, answer, video, audio, meta)


@final
class QABenchmark:
    """An audio-visual multiple-choice QA benchmark: a sequence of :class:`QAItem`.

    Parameters
    ----------
    items
        The questions.
    name
        A label for reports.

    Examples
    --------
    >>> import json, tempfile
    >>> folder = Path(tempfile.mkdtemp())
    >>> line = {"video": "clip.mp4", "audio": None, "question": "Which?",
    ...         "options": ["x", "y"], "answer": "B"}
    >>> _ = (folder / "bench.jsonl").write_text(json.dumps(line) + "\\n")
    >>> bench = QABenchmark.from_jsonl(folder / "bench.jsonl", check_files=False)
    >>> len(bench), bench[0].answer, bench[0].video.name, bench.accuracy([1])
    (1, 1, 'clip.mp4', 1.0)
    """

    def __init__(self, items: Sequence[QAItem], name: str = "qa") -> None:
        if not isinstance(items, Sequence) or isinstance(items, str):
            raise TypeError(
                f"QABenchmark: items must be a sequence of QAItem; got {type(items).__name__}."
            )
        if not all(isinstance(item, QAItem) for item in items):
            raise TypeError("QABenchmark: items must all be QAItem instances.")
        if not items:
            raise ValueError("QABenchmark: items must hold at least one item (nothing to score).")
        if not isinstance(name, str):
            raise TypeError(f"QABenchmark: name must be a str; got {type(name).__name__}.")
        self.items = tuple(items)
        self.name = name

    @classmethod
    def from_jsonl(
        cls,
        path: str | Path,
        *,
        media_root: str | Path | None = None,
        check_files: bool = True,
        name: str | None = None,
    ) -> QABenchmark:
        """Read and validate a benchmark file (one JSON object per line; schema above).

        Parameters
        ----------
        path
            A local ``.jsonl`` file.
        media_root
            Folder that relative ``video`` / ``audio`` paths are resolved against (default: the
            file's folder).
        check_files
            Require every referenced media file to exist.
        name
            Label (default: the file's stem).

        Returns
        -------
        QABenchmark

        Raises
        ------
        QABenchmarkError
            (a ``ValueError``) on the first malformed line, naming the file and the line.
        OSError
            If ``path`` cannot be read.
        """
        owner = "QABenchmark.from_jsonl"
        if not isinstance(path, (str, Path)):
            raise TypeError(f"{owner}: path must be a str or Path; got {type(path).__name__}.")
        if isinstance(path, str) and URL.match(path):
            raise ValueError(f"{owner}: path must be a local file, not a URL; got {path[:80]!r}.")
        if not isinstance(check_files, bool):
            raise TypeError(f"{owner}: check_files must be a bool.")
        if name is not None and not isinstance(name, str):
            raise TypeError(f"{owner}: name must be a str or None; got {type(name).__name__}.")
        path = Path(path).expanduser()
        if media_root is None:
            root = path.parent
        elif isinstance(media_root, (str, Path)):
            root = Path(media_root).expanduser()
        else:
            raise TypeError(
                f"{owner}: media_root must be a str, Path or None; got {type(media_root).__name__}."
            )
        items: list[QAItem] = []
        seen: dict[str, int] = {}
        with path.open(encoding="utf-8") as lines:
            for line_no, line in enumerate(lines, start=1):
                where = f"{path}, line {line_no}"
                if len(line) > MAX_LINE_CHARS:
                    raise QABenchmarkError(f"{where}: longer than {MAX_LINE_CHARS} characters.")
                if not line.strip():
                    continue
                try:
                    record = json.loads(line)
                except json.JSONDecodeError as error:
                    raise QABenchmarkError(f"{where}: not valid JSON ({error.msg}).") from None
                item = _parse_line(record, line_no, root, check_files, where)
                if item.id in seen:
                    raise QABenchmarkError(
                        f"{where}: 'id' {item.id[:80]!r} repeats line {seen[item.id]}."
                    )
                seen[item.id] = line_no
                items.append(item)
                if len(items) > MAX_ITEMS:
                    raise QABenchmarkError(f"{where}: more than {MAX_ITEMS} items.")
        if not items:
            raise QABenchmarkError(f"{path}: the file holds no items.")
        return cls(items, name=path.stem if name is None else name)

    def __len__(self) -> int:
        return len(self.items)

    def __getitem__(self, index: int) -> QAItem:
        return self.items[index]

    def __iter__(self) -> Iterator[QAItem]:
        return iter(self.items)

    def accuracy(self, predictions: Sequence[int]) -> float:
        """Fraction of items whose predicted option index equals the answer.

        Parameters
        ----------
        predictions
            One 0-based option index per item, in order.
        """
        owner = "QABenchmark.accuracy"
        if not isinstance(predictions, Sequence) or isinstance(predictions, (str, bytes)):
            raise TypeError(f"{owner}: predictions must be a sequence of option indices.")
        if len(predictions) != len(self.items):
            raise ValueError(
                f"{owner}: predictions must hold one index per item ({len(self.items)}); "
                f"got {len(predictions)}."
            )
        if not all(isinstance(p, int) and not isinstance(p, bool) for p in predictions):
            raise TypeError(f"{owner}: predictions must be integers.")
        correct = sum(
            int(p == item.answer) for p, item in zip(predictions, self.items, strict=True)
        )
        return correct / len(self.items)
