"""Spec §7.6: the OpenAI client against a local fake server: payload, retries, fallback parser."""

import json
import logging

import httpx
import openai
import pytest

from icml26.copyright_bench import (
    FakeOpenAIServer,
    GreedyAgent,
    LawfulAgent,
    OpenAIChatAgent,
    copyright_task,
    evaluate,
    factor_grid,
    parse_tool_calls_from_text,
    sanitize_tools,
    tool_specs_for,
)
from icml26.copyright_bench.client import _retryable

SECRET = "sk-test-0123456789abcdef"


@pytest.fixture(scope="module")
def small_task():
    return copyright_task(
        n_per_family=1, grid=factor_grid(["neutral", "explicit_request"], ["high"])
    )


@pytest.fixture(scope="module")
def server():
    with FakeOpenAIServer() as s:
        yield s


def test_payload_has_tools_auto_choice_and_no_strict(server):
    server.requests.clear()
    agent = OpenAIChatAgent("lawful", base_url=server.base_url, api_key=SECRET, temperature=0.0)
    evaluate(copyright_task(n_per_family=1, grid="neutral", families=["website"]), agent)
    body = server.requests[0]
    assert body["model"] == "lawful" and body["tool_choice"] == "auto"
    assert body["temperature"] == 0.0 and body["max_tokens"] == 1024
    assert [m["role"] for m in body["messages"]] == ["system", "user"]
    assert "strict" not in json.dumps(server.requests)
    names = {t["function"]["name"] for t in body["tools"]}
    assert {"search_assets", "place_asset", "submit"} <= names
    later = server.requests[1]["messages"]
    tool_messages = [m for m in later if m["role"] == "tool"]
    assistant = next(m for m in later if m["role"] == "assistant")
    assert [m["tool_call_id"] for m in tool_messages] == [c["id"] for c in assistant["tool_calls"]]
    assert all("name" not in m for m in tool_messages)


def test_strict_is_removed_from_any_tool_schema():
    tools = [
        {
            "type": "function",
            "strict": True,
            "function": {"name": "f", "strict": True, "parameters": {"type": "object"}},
        }
    ]
    assert "strict" not in json.dumps(sanitize_tools(tools))
    assert "strict" in json.dumps(tools)  # the caller's list is not modified


def test_scores_through_the_server_equal_the_scripted_agents(server, small_task):
    cols = [
        "violation",
        "n_violating_assets",
        "completed",
        "license_check_rate",
        "steps",
        "format_errors",
    ]
    for script, reference in (("lawful", LawfulAgent()), ("greedy", GreedyAgent())):
        served = evaluate(small_task, OpenAIChatAgent(script, base_url=server.base_url)).episodes
        direct = evaluate(small_task, reference).episodes
        assert served[cols].equals(direct[cols])
    assert served["violation"].all()


def test_malformed_calls_are_counted_and_recovered(server, small_task):
    served = evaluate(small_task, OpenAIChatAgent("malformed", base_url=server.base_url))
    lawful = evaluate(small_task, LawfulAgent())
    e = served.episodes
    # one broken-JSON call and one unknown tool per episode; the text-written turn is recovered
    assert (e["format_errors"] == 2).all()
    assert e["violation"].sum() == 0 and e["completed"].all()
    assert e["violation"].equals(lawful.episodes["violation"])
    text_turn = [m for m in served.transcripts[0].messages if m["role"] == "assistant"][1]
    assert text_turn["content"].startswith("<tool_call>") and text_turn["tool_calls"]


def test_retries_on_server_errors_then_succeeds(server, small_task):
    waits = []
    agent = OpenAIChatAgent(
        "lawful", base_url=server.base_url, max_retries=3, backoff=0.5, sleep=waits.append
    )
    server.fail_next(2, 503)
    server.requests.clear()
    sample = small_task.dataset[0]
    turn = agent.act(
        [
            {"role": "system", "content": sample.input[0]},
            {"role": "user", "content": sample.input[1]},
        ],
        tool_specs_for(sample.task.family),
    )
    assert turn.tool_calls and agent.retries == 2 and waits == [0.5, 1.0]
    assert len(server.requests) == 3


def test_retries_are_bounded_and_client_errors_are_not_retried(server, caplog):
    msgs = [{"role": "system", "content": "s"}, {"role": "user", "content": "u"}]
    agent = OpenAIChatAgent(
        "lawful", base_url=server.base_url, api_key=SECRET, max_retries=2, sleep=lambda s: None
    )
    server.fail_next(3, 500)  # exactly the 1 + 2 attempts the agent makes
    with caplog.at_level(logging.WARNING), pytest.raises(openai.InternalServerError):
        agent.act(msgs, [])
    assert agent.requests == 3 and agent.retries == 2
    assert SECRET not in caplog.text and "retry 2" in caplog.text
    server.fail_next(1, 400)
    before = agent.requests
    with pytest.raises(openai.BadRequestError):
        agent.act(msgs, [])
    assert agent.requests == before + 1


def test_timeouts_and_connection_errors_are_retryable():
    request = httpx.Request("POST", "http://127.0.0.1/v1/chat/completions")
    assert _retryable(openai.APITimeoutError(request=request), openai)
    assert _retryable(openai.APIConnectionError(request=request), openai)
    assert not _retryable(ValueError("x"), openai)


@pytest.mark.parametrize(
    ("text", "calls", "failed"),
    [
        (
            '<tool_call>{"name": "a", "arguments": {"x": 1}}</tool_call>'
            '<tool_call>{"name": "b", "arguments": {}}</tool_call>',
            [("a", '{"x": 1}'), ("b", "{}")],
            0,
        ),
        ('```json\n{"name": "a", "parameters": {"q": "s"}}\n```', [("a", '{"q": "s"}')], 0),
        ('[{"name": "a", "arguments": "{\\"x\\": 2}"}]', [("a", '{"x": 2}')], 0),
        ('{"type": "function", "function": {"name": "a", "arguments": "{}"}}', [("a", "{}")], 0),
        ('<tool_call>{"name": "a", "arguments": {</tool_call>', [], 1),
        ('{"no_name": 1}', [], 1),
        ("I will now search for images.", [], 0),
        ("", [], 0),
    ],
)
def test_fallback_parser(text, calls, failed):
    assert parse_tool_calls_from_text(text) == (calls, failed)


def test_key_comes_from_the_environment_and_is_never_shown(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(
        ValueError, match=r"no API key for OpenAI's endpoint.*OPENAI_API_KEY"
    ) as err:
        OpenAIChatAgent("gpt-4o-mini")
    assert SECRET not in str(err.value)
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    agent = OpenAIChatAgent("gpt-4o-mini")
    assert SECRET not in repr(agent) and SECRET not in str(vars(agent).get("model"))
    assert all(v != SECRET for v in vars(agent).values())
    local = OpenAIChatAgent("qwen", base_url="http://127.0.0.1:8000/v1", api_key=None)
    assert repr(local) == "OpenAIChatAgent(model='qwen', base_url='http://127.0.0.1:8000/v1')"


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"model": ""}, "model must be a non-empty str"),
        ({"model": "m", "temperature": 3.0}, r"temperature must be in \[0, 2\]"),
        ({"model": "m", "max_tokens": 0}, "max_tokens must be an integer >= 1"),
        ({"model": "m", "max_retries": -1}, "max_retries must be an integer >= 0"),
        ({"model": "m", "timeout": 0}, r"timeout must be in \(0, 3600\]"),
    ],
)
def test_client_bad_input(kwargs, message):
    with pytest.raises(ValueError, match=message):
        OpenAIChatAgent(base_url="http://127.0.0.1:9/v1", **kwargs)


def test_unknown_model_on_the_fake_server_is_an_http_error(server):
    agent = OpenAIChatAgent("gpt-99", base_url=server.base_url, sleep=lambda s: None)
    with pytest.raises(openai.NotFoundError):
        agent.act([{"role": "user", "content": "hi"}], [])


def test_sleep_must_be_callable():
    with pytest.raises(TypeError, match="sleep must be callable; got float"):
        OpenAIChatAgent("lawful", base_url="http://127.0.0.1:9", api_key="k", sleep=2.5)


def test_openai_key_goes_only_to_openai_unless_named_for_the_server(server, monkeypatch):
    """Issue 40: OPENAI_API_KEY never reaches another base URL unless the user names it."""
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)  # must not redirect the default
    task = copyright_task(n_per_family=1, grid="neutral", families=["website"])
    server.authorizations.clear()
    evaluate(task, OpenAIChatAgent("lawful", base_url=server.base_url))
    assert server.authorizations and set(server.authorizations) == {"Bearer EMPTY"}
    monkeypatch.setenv("MY_SERVER_KEY", "sk-local-abc")
    server.authorizations.clear()
    evaluate(task, OpenAIChatAgent("lawful", base_url=server.base_url, api_key_env="MY_SERVER_KEY"))
    assert set(server.authorizations) == {"Bearer sk-local-abc"}
    default = OpenAIChatAgent("gpt-4o-mini")
    assert str(default._client.base_url).rstrip("/") == "https://api.openai.com/v1"
    monkeypatch.delenv("MY_SERVER_KEY")
    with pytest.raises(ValueError, match="MY_SERVER_KEY is not set"):
        OpenAIChatAgent("lawful", base_url=server.base_url, api_key_env="MY_SERVER_KEY")


def test_fake_server_lists_models_and_answers_a_plain_chat(server):
    """Issue 49: the local server answers /v1/models and a chat without the benchmark's tools."""
    client = openai.OpenAI(api_key="x", base_url=server.base_url)
    assert [m.id for m in client.models.list()] == ["lawful", "greedy", "malformed"]
    assert client.models.retrieve("greedy").id == "greedy"
    reply = client.chat.completions.create(
        model="lawful", messages=[{"role": "user", "content": "hello"}]
    )
    assert "only through the benchmark's tools" in reply.choices[0].message.content
    assert reply.choices[0].finish_reason == "stop"


@pytest.mark.parametrize("base_url", ["", "x", "127.0.0.1:8000/v1", "ftp://host/v1", "http://"])
def test_base_url_must_be_an_http_url(base_url):
    # An empty base_url once meant "another server" for the key and OpenAI's endpoint for the SDK.
    with pytest.raises(ValueError, match="base_url must be an http"):
        OpenAIChatAgent("m", base_url=base_url, api_key="k")


def test_act_refuses_an_empty_conversation():
    agent = OpenAIChatAgent("m", base_url="http://127.0.0.1:9/v1", sleep=lambda s: None)
    with pytest.raises(ValueError, match="messages must be a non-empty list"):
        agent.act([], [])
    assert agent.requests == 0
