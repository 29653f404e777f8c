"""A local fake OpenAI-compatible server whose "models" are the scripted agents (spec §5.2).

``FakeOpenAIServer`` serves ``POST /v1/chat/completions``, ``GET /v1/models`` and
``GET /v1/models/<id>`` on 127.0.0.1 (stdlib ``http.server``, one thread per request), so an
OpenAI client (the SDK, inspect's ``openai-api`` provider) can list and use it. The request's
``model`` picks a script:

* ``"lawful"`` / ``"greedy"``: the :class:`LawfulAgent` / :class:`GreedyAgent` turn for the
  conversation it was sent, returned as ``tool_calls``;
* ``"malformed"``: the lawful turns, but turn 0 adds a call whose arguments are broken JSON, turn
  1 writes its calls as ``<tool_call>{...}</tool_call>`` text instead of ``tool_calls``, and turn
  2 adds a call to a tool that does not exist.

A chat without the benchmark's tools (``tools`` absent or empty) gets a plain text answer saying
the scripted model acts only through the benchmark's tools. Every request body is kept in
``requests`` (for payload checks) and its ``Authorization`` header in ``authorizations`` (for key
checks); ``fail_next(n, status)`` makes the next ``n`` requests fail with an HTTP error (for retry
checks). Used by the ``client_path``
experiment, the tests and the benchmark; nothing here is needed to evaluate a real model.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, final

from icml26.copyright_bench.agents import AssistantTurn, ToolCall
from icml26.copyright_bench.scripted import GreedyAgent, LawfulAgent
from icml26.core.validation import check_positive_int

__all__ = ["SCRIPTS", "FakeOpenAIServer"]

SCRIPTS = ("lawful", "greedy", "malformed")


def _malformed(turn: AssistantTurn, k: int) -> dict[str, Any]:
    calls = [c.to_message() for c in turn.tool_calls]
    if k == 0:
        broken = ToolCall(f"broken_{k}", "search_assets", '{"query": "logo')
        return {"content": turn.content, "tool_calls": [*calls, broken.to_message()]}
    if k == 1:
        text = "".join(
            "<tool_call>"
            + json.dumps({"name": c.name, "arguments": json.loads(c.arguments)})
            + "</tool_call>"
            for c in turn.tool_calls
        )
        return {"content": text, "tool_calls": None}
    if k == 2:
        ghost = ToolCall(f"ghost_{k}", "fetch_everything", "{}")
        return {"content": turn.content, "tool_calls": [*calls, ghost.to_message()]}
    return {"content": turn.content, "tool_calls": calls or None}


@final
class FakeOpenAIServer:
    """A context manager running the fake server on a free port of 127.0.0.1.

    Examples
    --------
    >>> with FakeOpenAIServer() as server:
    ...     server.base_url.startswith("http://127.0.0.1:")
    True
    """

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.authorizations: list[str | None] = []
        self._fail: list[int] = []
        self._agents = {"lawful": LawfulAgent(), "greedy": GreedyAgent()}
        self._lock = threading.Lock()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:<port>/v1``."""
        if self._httpd is None:
            raise RuntimeError("FakeOpenAIServer is not running; use it as a context manager.")
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def fail_next(self, n: int, status: int = 503) -> None:
        """Answer the next ``n`` requests with HTTP ``status`` (an error code, 400 to 599)."""
        n = check_positive_int("n", n, owner="FakeOpenAIServer.fail_next", minimum=0, maximum=10**6)
        status = check_positive_int(
            "status", status, owner="FakeOpenAIServer.fail_next", minimum=400, maximum=599
        )
        with self._lock:
            self._fail.extend([status] * n)

    def _answer(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        with self._lock:
            self.requests.append(body)
            if self._fail:
                status = self._fail.pop(0)
                return status, {"error": {"message": "injected failure", "code": status}}
        model = body.get("model")
        if model not in SCRIPTS:
            return 404, {"error": {"message": f"unknown model {model!r}; serve {SCRIPTS}"}}
        messages, tools = body.get("messages"), body.get("tools") or []
        if not isinstance(messages, list) or not all(isinstance(m, dict) for m in messages):
            return 400, {"error": {"message": "messages must be a list of objects"}}
        if not tools:  # a plain chat: the scripts act only through the benchmark's tools
            text = (
                f"I am the scripted model {model!r} of copyright_bench; I act only through the "
                "benchmark's tools (search_assets, place_asset, submit...)."
            )
            return 200, self._completion(model, {"content": text, "tool_calls": None}, messages)
        k = sum(1 for m in messages if m.get("role") == "assistant")
        agent = self._agents["greedy" if model == "greedy" else "lawful"]
        with self._lock:  # the scripted agents keep a per-conversation reader
            turn = agent.act(messages, tools)
        if model == "malformed":
            message = _malformed(turn, k)
        else:
            message = {
                "content": turn.content,
                "tool_calls": [c.to_message() for c in turn.tool_calls] or None,
            }
        return 200, self._completion(model, message, messages)

    def _completion(
        self, model: str, message: dict[str, Any], messages: list[dict[str, Any]]
    ) -> dict[str, Any]:
        prompt = sum(len(str(m.get("content") or "")) for m in messages) // 4
        return {
            "id": f"chatcmpl-{len(self.requests)}",
            "object": "chat.completion",
            "created": 0,
            "model": model,
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", **message},
                    "finish_reason": "tool_calls" if message["tool_calls"] else "stop",
                }
            ],
            "usage": {
                "prompt_tokens": prompt,
                "completion_tokens": 20,
                "total_tokens": prompt + 20,
            },
        }

    def __enter__(self) -> FakeOpenAIServer:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                path = self.path.split("?")[0].rstrip("/")
                models = {name: {"id": name, "object": "model", "created": 0,
                                 "owned_by": "copyright_bench"} for name in SCRIPTS}  # fmt: skip
                if path == "/v1/models":
                    self._send(200, {"object": "list", "data": list(models.values())})
                elif path.startswith("/v1/models/") and path[len("/v1/models/") :] in models:
                    self._send(200, models[path[len("/v1/models/") :]])
                else:
                    self._send(404, {"error": {"message": f"no route {self.path}"}})

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", 0))
                with server._lock:
                    server.authorizations.append(self.headers.get("Authorization"))
                try:
                    body = json.loads(self.rfile.read(length))
                except json.JSONDecodeError:
                    status, out = 400, {"error": {"message": "body is not JSON"}}
                else:
                    if self.path.rstrip("/") != "/v1/chat/completions":
                        status, out = 404, {"error": {"message": f"no route {self.path}"}}
                    elif not isinstance(body, dict):
                        status, out = 400, {"error": {"message": "body must be a JSON object"}}
                    else:
                        status, out = server._answer(body)
                self._send(status, out)

            def _send(self, status: int, out: dict[str, Any]) -> None:
                data = json.dumps(out).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                return None  # quiet: requests are kept in server.requests

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None
