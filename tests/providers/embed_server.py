"""A tiny OpenAI-compatible ``/v1/embeddings`` server for the HTTP embedder tests.

Run as ``python embed_server.py``: binds 127.0.0.1 on a free port, prints the
port on stdout, serves until killed. Vectors are deterministic functions of
the text (dimension 8, deliberately not normalized). Behaviours:

* ``Authorization`` must be ``Bearer test-key`` when ``REQUIRE_KEY`` is set in
  the environment; otherwise 401.
* an input ``"__error__"`` answers 500; ``"__slow__"`` sleeps 5 s first;
  ``"__malformed__"`` answers 200 with a body that is not an embedding list.
* ``/redirect/v1/embeddings`` answers a redirect elsewhere.
* every request's Authorization header is appended to the file named by
  ``SEEN_AUTH`` (so the test can check what was sent).
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

DIM = 8


def vector(text: str) -> list[float]:
    digest = hashlib.sha256(text.encode()).digest()
    return [(b - 128) / 16.0 for b in digest[:DIM]]


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args: object) -> None:  # keep the test output clean
        pass

    def _send(self, status: int, payload: object) -> None:
        body = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self) -> None:
        if self.path == "/redirect/v1/embeddings":
            self.send_response(302)
            self.send_header("Location", "http://127.0.0.1:9/v1/embeddings")
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        if self.path != "/v1/embeddings":
            self._send(404, {"error": {"message": "not found"}})
            return
        auth = self.headers.get("Authorization", "")
        seen = os.environ.get("SEEN_AUTH")
        if seen:
            with open(seen, "a", encoding="utf-8") as fh:
                fh.write(auth + "\n")
        if os.environ.get("REQUIRE_KEY") and auth != "Bearer test-key":
            self._send(401, {"error": {"message": "bad key"}})
            return
        request = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        texts = request["input"]
        if isinstance(texts, str):
            texts = [texts]
        if "__error__" in texts:
            self._send(500, {"error": {"message": "boom"}})
            return
        if "__slow__" in texts:
            time.sleep(5)
        if "__malformed__" in texts:
            self._send(200, {"data": "nope"})
            return
        data = [
            {"object": "embedding", "index": i, "embedding": vector(t)} for i, t in enumerate(texts)
        ]
        data.reverse()  # clients must order by "index", not by position
        self._send(200, {"object": "list", "model": request.get("model"), "data": data})


def main() -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    print(server.server_address[1], flush=True)
    server.serve_forever()


if __name__ == "__main__":
    sys.exit(main())
