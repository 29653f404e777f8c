"""QABenchmark (spec §5): a local JSONL of {video, audio, question, options, answer}; every
malformed line is refused with an error naming the file and the line."""

import json
import re

import pytest

from icml26.omnifit import QABenchmark, QABenchmarkError, QAItem

GOOD = [
    {"video": "a.mp4", "audio": None, "question": "Q1?", "options": ["x", "y", "z"], "answer": "B"},
    {"video": None, "audio": "b.wav", "question": "Q2?", "options": ["p", "q"], "answer": 0,
     "id": 7, "meta": {"task": "count"}},
    # an option whose text is itself a letter: the text wins over the position
    {"video": "a.mp4", "audio": "b.wav", "question": "Q3?", "options": ["B", "A"], "answer": "A"},
    {"video": "a.mp4", "audio": None, "question": "Q4?", "options": ["red", "blue"],
     "answer": "blue"},
]  # fmt: skip


def write(folder, records, name="bench.jsonl", blank=True):
    lines = [r if isinstance(r, str) else json.dumps(r) for r in records]
    if blank:
        lines.insert(1, "   ")
    path = folder / name
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.fixture
def media(tmp_path):
    (tmp_path / "a.mp4").write_bytes(b"\0")
    (tmp_path / "b.wav").write_bytes(b"\0")
    return tmp_path


def test_reads_fields_answers_and_paths(media):
    bench = QABenchmark.from_jsonl(write(media, GOOD))
    assert len(bench) == 4 and bench.name == "bench"
    assert [item.answer for item in bench] == [1, 0, 1, 1]
    assert [item.answer_text for item in bench] == ["y", "p", "A", "blue"]
    # ids default to the file's line number (the blank line 2 counts as a line)
    assert [item.id for item in bench] == ["1", "7", "4", "5"]
    assert bench[0].video == media / "a.mp4" and bench[0].audio is None
    assert bench[1].video is None and bench[1].audio == media / "b.wav"
    assert bench[1].meta == {"task": "count"} and bench[0].meta == {}
    assert bench.accuracy([1, 0, 0, 1]) == 0.75


def test_media_root_and_unchecked_files(tmp_path):
    path = write(tmp_path, GOOD)
    with pytest.raises(QABenchmarkError, match=r"line 1: 'video' file .* does not exist"):
        QABenchmark.from_jsonl(path, media_root=tmp_path / "media")
    bench = QABenchmark.from_jsonl(path, media_root=tmp_path / "media", check_files=False)
    assert bench[0].video == tmp_path / "media" / "a.mp4"


def test_conversation_is_qwen_omni_message(media):
    item = QABenchmark.from_jsonl(write(media, GOOD))[2]
    (message,) = item.conversation()
    assert message["role"] == "user"
    kinds = [part["type"] for part in message["content"]]
    assert kinds == ["video", "audio", "text"]
    assert message["content"][0]["video"] == str(media / "a.mp4")
    assert message["content"][2]["text"] == "Q3?\nA. B\nB. A\nAnswer with the option's letter."
    system, _ = item.conversation(system="You are Qwen.")
    assert system == {"role": "system", "content": [{"type": "text", "text": "You are Qwen."}]}


BAD = [
    ('{"video": "a.mp4", "question": "Q", ', "not valid JSON"),
    ('["a list"]', "a line must be a JSON object"),
    ({"video": "a.mp4", "audio": None, "options": ["x", "y"], "answer": 0},
     "missing field.*'question'"),
    ({**GOOD[0], "qustion": "typo"}, "unknown field.*'qustion'"),
    ({**GOOD[0], "question": "  "}, "'question' must be a non-empty string"),
    ({**GOOD[0], "options": ["only"]}, "'options' must be a list of 2"),
    ({**GOOD[0], "options": ["x", 3]}, "'options' must be a list of 2"),
    ({**GOOD[0], "options": ["x", "x"]}, "'options' must be distinct"),
    ({**GOOD[0], "answer": "D"}, "'answer' 'D' is neither one of the options nor a letter A-C"),
    ({**GOOD[0], "answer": 3}, "'answer' index 3 is outside the 3 options"),
    ({**GOOD[0], "answer": True}, "'answer' must be an option"),
    ({**GOOD[0], "answer": 1.0}, "'answer' must be a string or an integer"),
    ({**GOOD[0], "video": None}, "at least one of 'video' and 'audio'"),
    ({**GOOD[0], "video": "https://host/clip.mp4"}, "'video' is a URL"),
    ({**GOOD[0], "video": 5}, "'video' must be a path string or null"),
    ({**GOOD[0], "audio": "missing.wav"}, "'audio' file .* does not exist"),
    ({**GOOD[0], "id": [1]}, "'id' must be a string or an integer"),
    ({**GOOD[0], "meta": "x"}, "'meta' must be a JSON object"),
    ({**GOOD[0], "id": "7"}, "'id' '7' repeats line 3"),
]  # fmt: skip


@pytest.mark.parametrize(("line", "message"), BAD)
def test_malformed_line_names_file_and_line(media, line, message):
    # two good lines (1 and 3, blank line 2), then the bad one on line 4
    path = write(media, [GOOD[0], GOOD[1], line])
    with pytest.raises(QABenchmarkError, match=re.escape(str(path)) + ", line 4: " + message):
        QABenchmark.from_jsonl(path)


def test_file_level_errors(tmp_path):
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n\n")
    with pytest.raises(QABenchmarkError, match="holds no items"):
        QABenchmark.from_jsonl(empty)
    with pytest.raises(OSError):
        QABenchmark.from_jsonl(tmp_path / "absent.jsonl")
    with pytest.raises(ValueError, match="path must be a local file"):
        QABenchmark.from_jsonl("https://example.org/bench.jsonl")
    with pytest.raises(TypeError, match="path must be a str or Path"):
        QABenchmark.from_jsonl(3)
    assert issubclass(QABenchmarkError, ValueError)


def test_item_and_accuracy_validation(media):
    bench = QABenchmark.from_jsonl(write(media, GOOD))
    with pytest.raises(ValueError, match="predictions must hold one index per item"):
        bench.accuracy([0])
    with pytest.raises(TypeError, match="predictions must be integers"):
        bench.accuracy([0.0, 1, 1, 1])
    with pytest.raises(ValueError, match="answer must be in"):
        QAItem("1", "Q", ("x", "y"), 2)
    with pytest.raises(TypeError, match="options must be a tuple"):
        QAItem("1", "Q", ["x", "y"], 0)
    with pytest.raises(TypeError, match="items must all be QAItem"):
        QABenchmark([object()])
