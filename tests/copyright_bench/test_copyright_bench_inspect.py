"""The real inspect_ai path: as_inspect_task scored through inspect's eval with mockllm/model.

mockllm replays the scripted agents' own turns (with usage set, so inspect needs no tokenizer
download); inspect's scores must equal the package's own scores of the same episodes.
"""

import json

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.model import (
    ChatCompletionChoice,
    ChatMessageAssistant,
    ModelOutput,
    ModelUsage,
    get_model,
)
from inspect_ai.tool import ToolCall as InspectToolCall

from icml26.copyright_bench import (
    GreedyAgent,
    LawfulAgent,
    as_inspect_task,
    copyright_task,
    evaluate,
)

ONE = {"families": ["merchandise"], "n_per_family": 1, "grid": "neutral"}


def mock_outputs(transcript):
    """The transcript's assistant turns as mockllm outputs."""
    outputs = []
    for m in transcript.messages:
        if m["role"] != "assistant":
            continue
        calls = [
            InspectToolCall(
                id=c["id"],
                function=c["function"]["name"],
                arguments=json.loads(c["function"]["arguments"]),
            )
            for c in m.get("tool_calls") or []
        ]
        message = ChatMessageAssistant(
            content=m["content"] or "", tool_calls=calls or None, model="mockllm/model"
        )
        outputs.append(
            ModelOutput(
                model="mockllm/model",
                choices=[
                    ChatCompletionChoice(
                        message=message, stop_reason="tool_calls" if calls else "stop"
                    )
                ],
                usage=ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2),
            )
        )
    return outputs


@pytest.mark.parametrize("agent", [LawfulAgent, GreedyAgent])
def test_inspect_scores_equal_the_package_scores(agent, tmp_path):
    ours = evaluate(copyright_task(**ONE), agent())
    model = get_model("mockllm/model", custom_outputs=mock_outputs(ours.transcripts[0]))
    (log,) = inspect_eval(
        as_inspect_task(**ONE), model=model, display="none", log_dir=str(tmp_path)
    )
    assert log.status == "success", log.error
    (score,) = log.samples[0].scores.values()
    row = ours.episodes.iloc[0]
    assert score.value == {
        "violation": int(row["violation"]),
        "completed": int(row["completed"]),
        "lawful_completion": int(row["lawful_completion"]),
        "refused": int(row["refused"]),
    }
    assert score.metadata["steps"] == row["steps"] and score.metadata["format_errors"] == 0
    assert json.loads(score.answer) == {
        s["slot"]: s["asset_id"] for s in ours.transcripts[0].score["slots"]
    }


def test_text_only_answer_is_an_implicit_submit(tmp_path):
    text = ModelOutput.from_content("mockllm/model", "I would rather not.")
    text.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
    model = get_model("mockllm/model", custom_outputs=[text])
    (log,) = inspect_eval(
        as_inspect_task(**ONE), model=model, display="none", log_dir=str(tmp_path)
    )
    (score,) = log.samples[0].scores.values()
    assert score.value == {"violation": 0, "completed": 0, "lawful_completion": 0, "refused": 1}
    assert score.metadata["implicit_submit"]


def test_dataset_mirrors_copyright_task():
    task = as_inspect_task(n_per_family=1)
    ours = copyright_task(n_per_family=1)
    assert [s.id for s in task.dataset] == [s.id for s in ours.dataset]
    assert task.dataset[0].input[1].content == ours.dataset[0].input[1]
    with pytest.raises(ValueError, match="max_steps must be an integer >= 1"):
        as_inspect_task(max_steps=0)
