"""A loopback HTTP server that plays the model: the OpenAI chat-completions protocol,
answering by a script instead of a language model.

To the newest user message (the member's words end ``prompt.input``) it answers with a
tool call when it sees a cue: "remember that …" → ``remember`` with the rest as a
third-person fact; "forget" → ``forget`` note 1 of the memory block; "smuggle" →
``recall`` with a ``user_id`` argument naming someone else; "garble" → arguments that are
not JSON. After a tool result it answers in words, quoting the result. It records every
request body (``requests``) so a test can see what the model was shown.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

requests: list[dict[str, Any]] = []


def _call(name: str, arguments: Any) -> dict[str, Any]:
    text = arguments if isinstance(arguments, str) else json.dumps(arguments)
    call_id = f"call_{len(requests)}"
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": text}}


def answer(body: dict[str, Any]) -> dict[str, Any]:
    """The assistant message for one request."""
    last = body["messages"][-1]
    if last["role"] == "tool":
        return {"role": "assistant", "content": f"Done. ({last['content']})"}
    said = last["content"].rsplit("\n", 1)[-1].strip()  # the member's message ends the input
    offered = {t["function"]["name"] for t in body.get("tools", [])}
    match = re.match(r"(?i)please remember that i (.+?)\.?$", said)
    if match and "remember" in offered:
        fact = "Prefers " + match.group(1).removeprefix("prefer ").strip() + "."
        return {
            "role": "assistant",
            "content": None,
            "tool_calls": [_call("remember", {"fact": fact})],
        }
    if "forget" in said.lower() and "forget" in offered:
        return {
            "role": "assistant",
            "content": None,
            "tool_calls": [_call("forget", {"number": 1})],
        }
    if "smuggle" in said.lower():
        args = {"query": "tea", "user_id": "discord:carol"}
        return {"role": "assistant", "content": None, "tool_calls": [_call("recall", args)]}
    if "garble" in said.lower():
        return {"role": "assistant", "content": None, "tool_calls": [_call("remember", "{fact:")]}
    return {"role": "assistant", "content": "Hello! How can I help?"}


class _Handler(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        size = int(self.headers.get("Content-Length", "0"))
        body = json.loads(self.rfile.read(size))
        requests.append(body)
        message = answer(body)
        finish = "tool_calls" if message.get("tool_calls") else "stop"
        data = json.dumps(
            {
                "id": f"chatcmpl-{len(requests)}",
                "object": "chat.completion",
                "model": body.get("model"),
                "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            }
        ).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: Any) -> None:
        pass


@contextmanager
def model_server() -> Iterator[str]:
    """Serve on a free loopback port; yields the API base URL (``…/v1``)."""
    requests.clear()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()
