"""Run ``remem serve`` as a child process: wait until it answers, stop it.

One piece for everything that starts a server of its own: ``remem quickstart``, the
tests against real server processes and ``benchmarks/http_service.py``.
"""

from __future__ import annotations

import signal
import subprocess
import time
import urllib.request

__all__ = ["answers", "stop", "wait_healthy"]


def answers(url: str) -> bool:
    """Whether ``url``'s ``/healthz`` answers 200 now."""
    try:
        with urllib.request.urlopen(url + "/healthz", timeout=2) as response:
            return bool(response.status == 200)
    except OSError:
        return False


def wait_healthy(url: str, proc: subprocess.Popen[bytes], timeout: float = 60) -> bool:
    """Wait until the server at ``url`` answers ``/healthz``: True, or False when ``proc``
    exited or ``timeout`` seconds passed first (the caller says why, and stops it)."""
    deadline = time.monotonic() + timeout
    while not answers(url):
        if proc.poll() is not None or time.monotonic() > deadline:
            return False
        time.sleep(0.1)
    return True


def stop(proc: subprocess.Popen[bytes], timeout: float = 20) -> None:
    """SIGTERM, then SIGKILL after ``timeout`` seconds; waits for the exit."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
