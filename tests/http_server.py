"""A real ``remem serve`` process on 127.0.0.1 for the HTTP tests: a free port, wait for
``/healthz``, stop it at the end."""

from __future__ import annotations

import http.client
import json
import os
import socket
import subprocess
import sys
import urllib.parse
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from remem.cli.serving import stop, wait_healthy

pytest.importorskip("fastapi")
pytest.importorskip("uvicorn")


@dataclass
class Server:
    url: str
    data: Path
    proc: subprocess.Popen[bytes]
    log: Path

    def token(self, *args: str) -> str:
        """A new token made by ``remem tokens create`` (the CLI) with ``args``."""
        out = subprocess.run(
            [
                sys.executable,
                "-m",
                "remem.cli",
                "--data",
                str(self.data),
                "tokens",
                "create",
                "--json",
                *args,
            ],
            capture_output=True,
            text=True,
            check=True,
            timeout=60,
        )
        return str(json.loads(out.stdout)["token"])


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def serve(data: Path, *extra: str) -> Iterator[Server]:
    port = free_port()
    env = {**os.environ, "REMEM_EMBEDDINGS": "0"}
    data.mkdir(parents=True, exist_ok=True)
    log = data.parent / f"serve-{port}.log"
    stderr = log.open("wb")
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "remem.cli",
            "serve",
            "--data",
            str(data),
            "--port",
            str(port),
            *extra,
        ],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=stderr,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        if not wait_healthy(url, proc):
            err = log.read_text(errors="replace")
            raise RuntimeError(f"remem serve did not start: {err[-2000:]}")
        yield Server(url, data, proc, log)
    finally:
        stop(proc)
        stderr.close()


def request(
    server: Server, method: str, path: str, body: Any = None, **headers: str
) -> tuple[int, dict[str, str], Any]:
    """One request on a new connection (``header_name=`` sends ``Header-Name``): the status,
    the headers by lower-case name, and the body (parsed when it is JSON)."""
    url = urllib.parse.urlsplit(server.url)
    conn = http.client.HTTPConnection(url.hostname, url.port, timeout=30)
    data = None if body is None else json.dumps(body).encode()
    conn.request(method, path, data, {k.replace("_", "-"): v for k, v in headers.items()})
    response = conn.getresponse()
    raw = response.read()
    conn.close()
    parsed = (
        json.loads(raw) if raw and response.getheader("content-type", "").endswith("json") else raw
    )
    return response.status, {k.lower(): v for k, v in response.getheaders()}, parsed
