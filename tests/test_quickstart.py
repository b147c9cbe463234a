"""``remem quickstart`` (``make run``) in a subprocess: it serves, runs the scripted demo
through the HTTP client, prints a curl line that works against the running service, and
stops on SIGINT."""

from __future__ import annotations

import http.client
import os
import queue
import shlex
import signal
import subprocess
import sys
import threading
import time
from typing import IO

import pytest

from http_server import free_port

pytest.importorskip("uvicorn")


def _lines_until(out: IO[str], marker: str, deadline: float) -> list[str]:
    """Lines of ``out`` up to and including the first starting with ``marker`` (read by a
    thread, so the wait is bounded)."""
    lines: queue.Queue[str] = queue.Queue()
    threading.Thread(target=lambda: [lines.put(line) for line in out], daemon=True).start()
    got: list[str] = []
    while time.monotonic() < deadline:
        try:
            line = lines.get(timeout=1)
        except queue.Empty:
            continue
        got.append(line.rstrip("\n"))
        if line.strip().startswith(marker):
            return got
    raise AssertionError(f"no line starting with {marker!r}: {got[-20:]}")


def test_quickstart_serves_runs_the_demo_over_http_and_stops_on_sigint() -> None:
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "remem.cli", "quickstart", "--port", str(port)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env={**os.environ, "REMEM_EMBEDDINGS": "0", "PYTHONUNBUFFERED": "1"},
    )
    try:
        assert proc.stdout is not None
        lines = _lines_until(proc.stdout, "curl ", time.monotonic() + 120)
        text = "\n".join(lines)
        assert f"remem serve on http://127.0.0.1:{port}" in text
        assert "through the HTTP client" in text and "== " in text
        # The printed curl line, sent as it says, lists the demo's notes.
        args = shlex.split(lines[-1])
        headers = dict(args[i + 1].split(": ", 1) for i, a in enumerate(args) if a == "-H")
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        conn.request("GET", args[-1].split(str(port), 1)[1], headers=headers)
        response = conn.getresponse()
        body = response.read().decode()
        conn.close()
        assert response.status == 200, body
        assert "sales_db warehouse" in body  # the demo's notes, served
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=30) == 0
        with pytest.raises(OSError):
            http.client.HTTPConnection("127.0.0.1", port, timeout=2).request("GET", "/healthz")
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
