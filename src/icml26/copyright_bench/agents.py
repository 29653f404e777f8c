"""What an agent is: ``act(messages, tools) -> AssistantTurn`` (spec §2.5), and a replay agent.

Messages and tools use the OpenAI chat format: ``{"role": "system"|"user"|"assistant"|"tool",
...}``, assistant tool calls as ``{"id", "type": "function", "function": {"name", "arguments"}}``
with ``arguments`` the JSON text the model wrote (possibly malformed), and tool messages with the
``tool_call_id`` they answer.

An agent that draws random numbers also subclasses :class:`EpisodeSeeded`: the loop hands it one
seed per episode (derived from the benchmark seed, the task, the cell and the sample), so every
episode can be recomputed alone.
"""

from __future__ import annotations

import abc
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, final, runtime_checkable

from icml26.core import check_fields

__all__ = ["Agent", "AssistantTurn", "EpisodeSeeded", "ReplayAgent", "ToolCall"]


def _shown(value: Any) -> str:
    shown = repr(value)
    return shown if len(shown) <= 60 else shown[:57] + "..."


@dataclass(frozen=True)
class ToolCall:
    """One tool call of an assistant turn; ``arguments`` is the raw JSON text."""

    id: str
    name: str
    arguments: str

    def __post_init__(self) -> None:
        # direct checks: a benchmark builds one per tool call, and the generic checker was a
        # tenth of its run time
        for name in ("id", "name", "arguments"):
            value = getattr(self, name)
            if not isinstance(value, str):
                raise TypeError(f"ToolCall: {name} must be str; got {_shown(value)}.")

    def to_message(self) -> dict[str, Any]:
        """The OpenAI ``tool_calls`` entry."""
        return {
            "id": self.id,
            "type": "function",
            "function": {"name": self.name, "arguments": self.arguments},
        }

    @classmethod
    def make(cls, id: str, name: str, arguments: dict[str, Any]) -> ToolCall:
        """A call whose arguments are serialised from a dict."""
        return cls(id, name, json.dumps(arguments, ensure_ascii=False))


@dataclass(frozen=True)
class AssistantTurn:
    """What an agent returns for one turn.

    Parameters
    ----------
    content
        Text of the turn (``None`` when there is none).
    tool_calls
        Calls to execute in order; a turn with none ends the episode (implicit submit).
    usage
        Token usage if the model reported it.
    format_errors
        Tool calls the client saw but could not parse into a call at all.
    """

    content: str | None = None
    tool_calls: tuple[ToolCall, ...] = ()
    usage: dict[str, int] | None = None
    format_errors: int = 0
    meta: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        check_fields(self)
        if self.format_errors < 0:
            raise ValueError(
                f"AssistantTurn: format_errors must be >= 0; got {self.format_errors}."
            )

    def to_message(self) -> dict[str, Any]:
        """The assistant message appended to the conversation."""
        message: dict[str, Any] = {"role": "assistant", "content": self.content}
        if self.tool_calls:
            message["tool_calls"] = [c.to_message() for c in self.tool_calls]
        return message


@runtime_checkable
class Agent(Protocol):
    """Anything with ``act(messages, tools) -> AssistantTurn``."""

    def act(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> AssistantTurn:
        """Return the next turn given the conversation so far and the tool schemas."""
        ...


class EpisodeSeeded(abc.ABC):
    """Marker base of agents that take one seed per episode (checked with ``isinstance``)."""

    @abc.abstractmethod
    def begin_episode(self, episode_seed: int) -> None:
        """Reset per-episode state and seed this episode's random draws."""


def check_conversation(messages: Any, tools: Any, owner: str) -> None:
    """A chat (dicts with a ``role``, one user prompt) and OpenAI tool schemas."""
    if not isinstance(messages, list) or not all(
        isinstance(m, dict) and isinstance(m.get("role"), str) for m in messages
    ):
        raise TypeError(f"{owner}: messages must be a list of chat message dicts with a role.")
    if not any(m["role"] == "user" and isinstance(m.get("content"), str) for m in messages):
        raise ValueError(f"{owner}: messages must hold the user's prompt (a 'user' message).")
    if not isinstance(tools, list) or not all(
        isinstance(t, dict)
        and isinstance(t.get("function"), dict)
        and isinstance(t["function"].get("name"), str)
        for t in tools
    ):
        raise TypeError(f"{owner}: tools must be a list of OpenAI tool schemas (tool_specs_for).")


def turns_of(messages: Sequence[dict[str, Any]]) -> list[AssistantTurn]:
    """The assistant turns of a conversation, as :class:`AssistantTurn` objects."""
    turns = []
    for m in messages:
        if m.get("role") != "assistant":
            continue
        calls = tuple(
            ToolCall(c["id"], c["function"]["name"], c["function"]["arguments"])
            for c in m.get("tool_calls") or ()
        )
        turns.append(AssistantTurn(m.get("content"), calls))
    return turns


@final
class ReplayAgent:
    """Replays the assistant turns of a recorded transcript, in order.

    The ``k``-th call to :meth:`act` within an episode (``k`` = assistant messages so far) returns
    the transcript's ``k``-th turn, with the same per-turn format-error count; past the end it
    returns an empty text turn.

    Parameters
    ----------
    transcript
        A :class:`~icml26.copyright_bench.runner.Transcript`, or the list of its messages.

    Examples
    --------
    >>> agent = ReplayAgent([{"role": "assistant", "content": "done"}])
    >>> agent.act([{"role": "system", "content": ""}, {"role": "user", "content": ""}], []).content
    'done'
    """

    def __init__(self, transcript: Any) -> None:
        messages = getattr(transcript, "messages", transcript)
        if not isinstance(messages, list | tuple) or not all(isinstance(m, dict) for m in messages):
            raise TypeError("ReplayAgent: transcript must be a Transcript or a list of messages.")
        format_errors = list(getattr(transcript, "turn_format_errors", []) or [])
        self.turns = turns_of(messages)
        if format_errors:
            self.turns = [
                AssistantTurn(t.content, t.tool_calls, t.usage, fe)
                for t, fe in zip(self.turns, format_errors, strict=False)
            ] + self.turns[len(format_errors) :]

    def act(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> AssistantTurn:
        """The recorded turn for this point of the conversation."""
        check_conversation(messages, tools, "ReplayAgent.act")
        k = sum(1 for m in messages if m.get("role") == "assistant")
        return self.turns[k] if k < len(self.turns) else AssistantTurn(content="")
