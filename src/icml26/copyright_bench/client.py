"""An agent backed by an OpenAI-compatible chat-completions server (spec §2.5, §5.3).

``OpenAIChatAgent`` talks to OpenAI or to any compatible server (vLLM with
``--enable-auto-tool-choice --tool-call-parser hermes``, Ollama) through the official ``openai``
SDK. Requests carry ``messages``, ``tools`` (with any ``strict`` key removed: vLLM rejects it,
inspect_ai #825) and ``tool_choice="auto"``. Server errors (5xx, 429), timeouts and dropped
connections are retried a bounded number of times with exponential backoff; other errors are
raised. When the model writes its tool calls as JSON in the message text instead of
``tool_calls`` (common with small open models, inspect_ai #80), a fallback parser recovers them
(``<tool_call>{...}</tool_call>`` blocks, fenced JSON, or a bare JSON object/list); text that
looks like a call but does not parse counts as a format error, never as an exception.

The API key comes from ``api_key=`` or an environment variable; it is handed to the SDK and never
stored on the agent, shown in its ``repr`` or logged. ``OPENAI_API_KEY`` is sent only to OpenAI's
own endpoint: a request to another ``base_url`` carries the key only when the user names it for
that server (``api_key=`` or ``api_key_env="MY_SERVER_KEY"``), otherwise the placeholder
``"EMPTY"`` (issue 40). ``OPENAI_BASE_URL`` does not redirect the default endpoint.
"""

from __future__ import annotations

import json
import logging
import os
import re
import time
import urllib.parse
from collections.abc import Callable
from typing import Any, final

from icml26.copyright_bench.agents import AssistantTurn, EpisodeSeeded, ToolCall
from icml26.core.imports import require
from icml26.core.validation import check_in_interval, check_positive_int, check_seed

__all__ = ["OpenAIChatAgent", "parse_tool_calls_from_text", "sanitize_tools"]

log = logging.getLogger(__name__)
_TAGGED = re.compile(r"<tool_call>\s*(.*?)\s*</tool_call>", re.S)
_FENCED = re.compile(r"```(?:json)?\s*(.*?)```", re.S)


def sanitize_tools(tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A copy of ``tools`` without any ``strict`` key (at any depth)."""

    def clean(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: clean(v) for k, v in value.items() if k != "strict"}
        if isinstance(value, list):
            return [clean(v) for v in value]
        return value

    return clean(tools)


def _as_calls(obj: Any) -> list[tuple[str, Any]] | None:
    items = obj if isinstance(obj, list) else [obj]
    calls = []
    for item in items:
        if isinstance(item, dict) and isinstance(item.get("function"), dict):
            item = item["function"]  # an OpenAI-style call written out as text
        if not isinstance(item, dict) or not isinstance(item.get("name"), str):
            return None
        args = item.get("arguments", item.get("parameters", {}))
        calls.append((item["name"], args))
    return calls


def parse_tool_calls_from_text(text: str) -> tuple[list[tuple[str, str]], int]:
    """Tool calls written as JSON in message text: ``([(name, arguments_json)], n_failed)``.

    Examples
    --------
    >>> parse_tool_calls_from_text('<tool_call>{"name": "submit", "arguments": {"summary": "x"}}'
    ...                            '</tool_call>')
    ([('submit', '{"summary": "x"}')], 0)
    >>> parse_tool_calls_from_text('<tool_call>{"name": "submit", "arguments": {</tool_call>')
    ([], 1)
    """
    if text is not None and not isinstance(text, str):
        kind = type(text).__name__
        raise TypeError(f"parse_tool_calls_from_text: text must be a str; got {kind}.")
    if not text:
        return [], 0
    blocks = _TAGGED.findall(text) or _FENCED.findall(text)
    if not blocks:
        stripped = text.strip()
        if not stripped.startswith(("{", "[")):
            return [], 0
        blocks = [stripped]
    out: list[tuple[str, str]] = []
    failed = 0
    for block in blocks:
        try:
            calls = _as_calls(json.loads(block))
        except json.JSONDecodeError:
            calls = None
        if calls is None:
            failed += 1
            continue
        for name, args in calls:
            out.append((name, args if isinstance(args, str) else json.dumps(args)))
    return out, failed


def _retryable(err: Exception, openai: Any) -> bool:
    if isinstance(err, openai.APITimeoutError | openai.APIConnectionError):
        return True
    status = getattr(err, "status_code", None)
    return isinstance(err, openai.APIStatusError) and (status == 429 or (status or 0) >= 500)


OPENAI_BASE_URL = "https://api.openai.com/v1"


def _endpoint_key(base_url: str | None, api_key: str | None, api_key_env: str | None) -> str:
    """The key for ``base_url``: ``OPENAI_API_KEY`` only for OpenAI's own endpoint."""
    owner = "OpenAIChatAgent"
    for name, value in (("api_key", api_key), ("api_key_env", api_key_env)):
        if value is not None and (not isinstance(value, str) or not value):
            raise TypeError(f"{owner}: {name} must be a non-empty str or None.")
    if api_key is not None:
        return api_key
    default = base_url is None or base_url.rstrip("/") == OPENAI_BASE_URL
    if api_key_env is None and not default:
        return "EMPTY"  # another server: never the OpenAI key unless named for it
    env = api_key_env or "OPENAI_API_KEY"
    key = os.environ.get(env)
    if not key:
        where = "OpenAI's endpoint" if default else base_url
        raise ValueError(
            f"{owner}: no API key for {where}: the environment variable {env} is not set. Set "
            "it or pass api_key=...; a local OpenAI-compatible server needs base_url=... (it "
            "gets the placeholder key 'EMPTY')."
        )
    return key


@final
class OpenAIChatAgent(EpisodeSeeded):
    """An agent whose turns come from an OpenAI-compatible ``/v1/chat/completions`` endpoint.

    Parameters
    ----------
    model
        Model name (``"gpt-4o-mini"``, ``"Qwen/Qwen2.5-7B-Instruct"``...).
    base_url
        Server URL (``"http://localhost:8000/v1"`` for vLLM); ``None`` means OpenAI
        (``https://api.openai.com/v1``).
    api_key
        Key for this endpoint. Default: for OpenAI's endpoint, the environment variable
        ``api_key_env`` (``OPENAI_API_KEY`` unless named); for any other ``base_url``, the
        variable ``api_key_env`` only if named, else the placeholder ``"EMPTY"`` —
        ``OPENAI_API_KEY`` is never sent to another server.
    api_key_env
        Name of the environment variable holding this endpoint's key (``None``: see
        ``api_key``).
    temperature, max_tokens, timeout
        Sampling temperature, completion limit, request timeout in seconds.
    max_retries
        Retries of a failed request (5xx, 429, timeout, connection) before giving up.
    backoff
        First wait in seconds; each retry waits twice as long (at most 30 s).

    Raises
    ------
    ValueError
        If OpenAI's endpoint has no key, ``api_key_env`` names an unset variable, or
        ``base_url`` is not an http(s) URL with a host.

    Examples
    --------
    >>> OpenAIChatAgent("gpt-4o-mini", base_url="http://127.0.0.1:9/v1")
    OpenAIChatAgent(model='gpt-4o-mini', base_url='http://127.0.0.1:9/v1')
    """

    def __init__(
        self,
        model: str,
        base_url: str | None = None,
        api_key: str | None = None,
        temperature: float = 0.0,
        max_tokens: int = 1024,
        timeout: float = 60,
        max_retries: int = 3,
        backoff: float = 0.5,
        sleep: Callable[[float], None] = time.sleep,
        *,
        api_key_env: str | None = None,
    ) -> None:
        if not isinstance(model, str) or not model:
            raise ValueError(f"OpenAIChatAgent: model must be a non-empty str; got {model!r}.")
        if base_url is not None and not isinstance(base_url, str):
            raise TypeError("OpenAIChatAgent: base_url must be a str or None.")
        if base_url is not None:
            parts = urllib.parse.urlsplit(base_url)
            if parts.scheme not in ("http", "https") or not parts.netloc:
                raise ValueError(
                    f"OpenAIChatAgent: base_url must be an http(s) URL such as "
                    f"'http://127.0.0.1:8000/v1', or None for OpenAI's; got {base_url!r}."
                )
        key = _endpoint_key(base_url, api_key, api_key_env)
        self.model = model
        self.base_url = base_url
        self.temperature = check_in_interval(
            "temperature", temperature, low=0.0, high=2.0, owner="OpenAIChatAgent"
        )
        self.max_tokens = check_positive_int("max_tokens", max_tokens, owner="OpenAIChatAgent")
        self.timeout = check_in_interval(
            "timeout", timeout, low=0.0, high=3600.0, closed="right", owner="OpenAIChatAgent"
        )
        self.max_retries = check_positive_int(
            "max_retries", max_retries, owner="OpenAIChatAgent", minimum=0
        )
        self.backoff = check_in_interval(
            "backoff", backoff, low=0.0, high=30.0, owner="OpenAIChatAgent"
        )
        if not callable(sleep):
            raise TypeError(f"OpenAIChatAgent: sleep must be callable; got {type(sleep).__name__}.")
        self._sleep = sleep
        self._seed: int | None = None
        openai = require("openai", "copyright_bench", owner="OpenAIChatAgent")
        # The key lives only inside the SDK client; retries are ours (bounded, logged).
        self._client = openai.OpenAI(
            api_key=key,
            base_url=OPENAI_BASE_URL if base_url is None else base_url,
            timeout=self.timeout,
            max_retries=0,
        )
        self.requests = 0
        self.retries = 0

    def __repr__(self) -> str:
        return f"OpenAIChatAgent(model={self.model!r}, base_url={self.base_url!r})"

    def begin_episode(self, episode_seed: int) -> None:
        """Send this episode's seed with each request (servers that honour ``seed`` repeat)."""
        self._seed = check_seed("episode_seed", episode_seed, owner="OpenAIChatAgent") % 2**31

    def _request(self, payload: dict[str, Any]) -> Any:
        openai = require("openai", "copyright_bench", owner="OpenAIChatAgent")
        for attempt in range(self.max_retries + 1):
            try:
                self.requests += 1
                return self._client.chat.completions.create(**payload)
            except Exception as err:
                if attempt == self.max_retries or not _retryable(err, openai):
                    raise
                wait = min(30.0, self.backoff * 2**attempt)
                self.retries += 1
                log.warning(
                    "chat request failed (%s); retry %d in %.1fs",
                    type(err).__name__,
                    attempt + 1,
                    wait,
                )
                self._sleep(wait)
        raise AssertionError("unreachable")  # the loop returns or raises

    def act(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> AssistantTurn:
        """One chat completion; tool calls from ``tool_calls`` or, failing that, the text."""
        if not isinstance(messages, list) or not messages:
            raise ValueError("OpenAIChatAgent.act: messages must be a non-empty list of messages.")
        clean = []
        for m in messages:
            m = {k: v for k, v in m.items() if not (m.get("role") == "tool" and k == "name")}
            clean.append(m)
        payload: dict[str, Any] = {
            "model": self.model,
            "messages": clean,
            "tools": sanitize_tools(tools),
            "tool_choice": "auto",
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
        }
        if self._seed is not None:
            payload["seed"] = self._seed
        response = self._request(payload)
        message = response.choices[0].message
        usage = None
        if getattr(response, "usage", None) is not None:
            usage = {
                "prompt_tokens": int(response.usage.prompt_tokens or 0),
                "completion_tokens": int(response.usage.completion_tokens or 0),
            }
        content = message.content
        if message.tool_calls:
            calls = tuple(
                ToolCall(c.id, c.function.name, c.function.arguments or "")
                for c in message.tool_calls
            )
            return AssistantTurn(content, calls, usage)
        parsed, failed = parse_tool_calls_from_text(content or "")
        turn = sum(1 for m in messages if m.get("role") == "assistant")
        calls = tuple(
            ToolCall(f"text_call_{turn}_{i}", name, args) for i, (name, args) in enumerate(parsed)
        )
        return AssistantTurn(
            content, calls, usage, format_errors=failed, meta={"parsed_from_text": len(calls)}
        )
