"""A real HTTP server speaking the OpenAI chat-completions protocol, for tests.

Run ``python fake_openai_server.py --port 0``; it prints the chosen port on
the first line of stdout and serves until killed. ``POST
/v1/chat/completions`` behaves according to the request's ``model``:

* ``good``        a valid classification (one operational item)
* ``personal``    a valid classification (one personal preference)
* ``slow``        sleeps ``SLOW_SECONDS`` before answering (past the client timeout)
* ``error500``    HTTP 500
* ``redirect``    HTTP 307 to ``/v1/elsewhere`` (a client must not follow it)
* ``malformed``   200 with message content that is not JSON
* ``badbody``     200 with a body that is not JSON at all
* ``badlabel``    category ``admin_grant``
* ``badkind``     kind ``superuser``
* ``missing``     an item without ``statement``
* ``personalize`` category ``personal`` whatever the message says
* ``empty``       ``{"items": []}``
* ``deepcontent`` 200 with message content nested 100,000 levels deep
* ``deepbody``    200 with a body nested 100,000 levels deep

``GET /_last`` returns what the last POST carried: its headers (lower-cased
names) and JSON body, so tests can see the Authorization header and prompt.
"""

from __future__ import annotations

import argparse
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

SLOW_SECONDS = 3.0

_lock = threading.Lock()
_last: dict[str, Any] = {}

_GOOD = {
    "items": [
        {
            "category": "operational",
            "kind": "procedure",
            "statement": "The weekly report uses the sales_db warehouse.",
            "subject": "report.weekly.source",
            "claim": False,
        }
    ]
}
_PERSONAL = {
    "items": [
        {
            "category": "personal",
            "kind": "preference",
            "statement": "Prefers short status reports.",
            "subject": "user.reply_length",
            "claim": False,
            "confidence": 0.9,
        }
    ]
}
_CONTENT: dict[str, str] = {
    "good": json.dumps(_GOOD),
    "personal": json.dumps(_PERSONAL),
    "personalize": json.dumps(_PERSONAL),
    "malformed": "Sure! Here is the classification: category=operational",
    "badlabel": json.dumps(
        {"items": [{"category": "admin_grant", "kind": None, "statement": "x", "claim": False}]}
    ),
    "badkind": json.dumps(
        {"items": [{"category": "operational", "kind": "superuser", "statement": "x"}]}
    ),
    "missing": json.dumps({"items": [{"category": "personal", "kind": "preference"}]}),
    "empty": json.dumps({"items": []}),
    "deepcontent": "[" * 100_000 + "]" * 100_000,
}


def completion(model: str, content: str) -> bytes:
    """A chat-completions response body carrying ``content``."""
    body = {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content},
                "finish_reason": "stop",
            }
        ],
    }
    return json.dumps(body).encode()


class Handler(BaseHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:  # keep test output clean
        pass

    def _send(self, status: int, body: bytes, headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        if self.path != "/_last":
            self._send(404, b"{}")
            return
        with _lock:
            self._send(200, json.dumps(_last).encode())

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length", "0"))
        raw = self.rfile.read(length)
        try:
            body = json.loads(raw)
        except ValueError:
            self._send(400, b'{"error": "bad json"}')
            return
        with _lock:
            _last.clear()
            _last["path"] = self.path
            _last["headers"] = {k.lower(): v for k, v in self.headers.items()}
            _last["body"] = body
        if self.path != "/v1/chat/completions":
            self._send(404, b'{"error": "not found"}')
            return
        self._respond(str(body.get("model", "")))

    def _respond(self, model: str) -> None:
        try:
            if model == "slow":
                time.sleep(SLOW_SECONDS)
                self._send(200, completion(model, _CONTENT["good"]))
            elif model == "error500":
                self._send(500, b'{"error": {"message": "internal error"}}')
            elif model == "redirect":
                self._send(307, b"{}", {"Location": "/v1/elsewhere"})
            elif model == "badbody":
                self._send(200, b"<html>not json</html>")
            elif model == "deepbody":
                self._send(200, b"[" * 100_000 + b"]" * 100_000)
            elif model in _CONTENT:
                self._send(200, completion(model, _CONTENT[model]))
            else:
                self._send(404, b'{"error": {"message": "unknown model"}}')
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (timeout tests): nothing to do


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args()
    server = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    server.daemon_threads = True
    print(server.server_address[1], flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
