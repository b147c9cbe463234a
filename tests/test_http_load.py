"""A bounded load and fault test on loopback: two ``remem serve`` processes on one data
directory, 32 client threads doing mixed actions (remember, recall, correct, forget,
list) for ``REMEM_LOAD_SECONDS`` (60 by default), one process killed with SIGKILL a
third of the way in and restarted on its port. A write counts as acknowledged only when
its client got a 2xx; afterwards a fresh ``Memory.open`` on the directory must hold every
acknowledged remember (unless its client forgot it later) with its last acknowledged
text, no note twice for one request, and ``remem doctor`` must exit 0.

Clients of the killed process fail over to the other one and go back home every few
seconds (so the restarted process serves again). Run with ``-s`` to see the figures."""

from __future__ import annotations

import json
import os
import random
import re
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from http_server import free_port
from remem import Memory, RunContext
from remem.cli import serving
from remem.errors import RememError, StoreError

pytestmark = pytest.mark.slow

AGENT = "loadtest"
CLIENTS = 32
SECONDS = float(os.environ.get("REMEM_LOAD_SECONDS", "60"))
CLI = [sys.executable, "-m", "remem.cli"]
RESTARTED = threading.Event()  # set once the killed process answers again
KEY = re.compile(r"\bc(\d+)n(\d+)\b")


def start(data: Path, port: int, log: Path) -> subprocess.Popen[bytes]:
    env = {**os.environ, "REMEM_EMBEDDINGS": "0"}
    with log.open("ab") as err:
        return subprocess.Popen(
            [*CLI, "serve", "--data", str(data), "--port", str(port)],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=err,
        )


def wait_healthy(url: str, proc: subprocess.Popen[bytes], log: Path) -> None:
    if not serving.wait_healthy(url, proc, timeout=90):
        raise RuntimeError(f"remem serve did not start: {log.read_text()[-2000:]}")


def stop(proc: subprocess.Popen[bytes]) -> None:
    serving.stop(proc, timeout=30)


@dataclass
class Tracked:
    """One acknowledged remember: its last acknowledged text, and whether a later change
    went unacknowledged (then its text, or whether it is forgotten, is unknown)."""

    text: str
    uncertain: bool = False
    forgotten: bool = False


@dataclass
class Client:
    """One client thread: a ``Memory`` client per server, starting at ``home``."""

    index: int
    mems: list[Any]
    home: int
    at: int = 0
    notes: dict[str, Tracked] = field(default_factory=dict)
    requests: int = 0
    acked_writes: int = 0
    served: Counter[int] = field(default_factory=Counter)
    after_restart: Counter[int] = field(default_factory=Counter)
    errors: Counter[str] = field(default_factory=Counter)

    def __post_init__(self) -> None:
        self.at = self.home
        self.ctx = RunContext.dm(AGENT, f"dm:c{self.index}", f"user:c{self.index}")
        self.rng = random.Random(self.index)
        self.left_home = 0.0

    def live(self) -> list[str]:
        return [i for i, t in self.notes.items() if not t.forgotten and not t.uncertain]

    def step(self, n: int) -> None:
        """One action; a failed write marks its note uncertain, a failed remember is
        simply not tracked (it may or may not have been applied)."""
        roll, live = self.rng.random(), self.live()
        action = "remember" if not live or roll < 0.45 else "recall" if roll < 0.65 else ""
        if not action:
            action = "correct" if roll < 0.8 else "forget" if roll < 0.9 else "list"
        target = self.rng.choice(live) if live and action in ("correct", "forget") else ""
        text = f"client c{self.index}n{n} says the {action} went fine"
        mem = self.mems[self.at]
        self.requests += 1
        try:
            if action == "remember":
                note = mem.remember(self.ctx, text)
                self.notes[note.id] = Tracked(text)
            elif action == "correct":
                text = f"client c{self.index}n{n} corrected note {target}"
                mem.correct(self.ctx, target, text)
                self.notes[target].text = text
            elif action == "forget":
                mem.forget(self.ctx, target)
                self.notes[target].forgotten = True
            elif action == "recall":
                mem.recall(self.ctx, "went fine")
            else:
                mem.list(self.ctx)
        except Exception as exc:
            self.failed(exc, target)
            return
        self.served[self.at] += 1
        if RESTARTED.is_set():
            self.after_restart[self.at] += 1
        self.acked_writes += action in ("remember", "correct", "forget")

    def failed(self, exc: Exception, target: str) -> None:
        if target:
            self.notes[target].uncertain = True
        unreachable = isinstance(exc, StoreError) and "cannot reach" in str(exc)
        kind = "unreachable" if unreachable else type(exc).__name__
        if not isinstance(exc, RememError):
            kind = f"unexpected {kind}: {exc}"[:120]
        self.errors[kind] += 1
        if unreachable:
            self.at = 1 - self.at  # fail over to the other process
            self.left_home = time.monotonic()
            time.sleep(0.05)

    def run(self, stop_at: threading.Event) -> None:
        n = 0
        while not stop_at.is_set():
            if self.at != self.home and time.monotonic() - self.left_home > 3:
                self.at = self.home  # try home again: it may have been restarted
            self.step(n)
            n += 1
        for mem in self.mems:
            mem.close()


@dataclass
class Pair:
    """Two ``remem serve`` processes on one data directory."""

    data: Path
    ports: list[int]
    logs: list[Path]
    procs: list[subprocess.Popen[bytes]] = field(default_factory=list)

    @property
    def urls(self) -> list[str]:
        return [f"http://127.0.0.1:{p}" for p in self.ports]

    def start(self) -> None:
        self.procs = [
            start(self.data, p, log) for p, log in zip(self.ports, self.logs, strict=True)
        ]
        for url, proc, log in zip(self.urls, self.procs, self.logs, strict=True):
            wait_healthy(url, proc, log)

    def kill_and_restart(self, which: int) -> float:
        """SIGKILL process ``which``, start it again on its port; seconds until healthy."""
        self.procs[which].send_signal(signal.SIGKILL)
        self.procs[which].wait(timeout=30)
        began = time.monotonic()
        self.procs[which] = start(self.data, self.ports[which], self.logs[which])
        wait_healthy(self.urls[which], self.procs[which], self.logs[which])
        return time.monotonic() - began


def run_load(pair: Pair, token: str) -> tuple[list[Client], dict[str, float]]:
    """The clients for ``SECONDS``; process 0 is killed and restarted at a third."""
    clients = [
        Client(i, [Memory.open(u, token=token) for u in pair.urls], home=i % 2)
        for i in range(CLIENTS)
    ]
    done = threading.Event()
    threads = [threading.Thread(target=c.run, args=(done,), daemon=True) for c in clients]
    began = time.monotonic()
    for t in threads:
        t.start()
    time.sleep(SECONDS / 3)
    killed_at = time.monotonic() - began
    restart = pair.kill_and_restart(0)
    RESTARTED.set()
    time.sleep(max(0.0, SECONDS - (time.monotonic() - began)))
    done.set()
    for t in threads:
        t.join(timeout=120)
    assert not any(t.is_alive() for t in threads), "a client thread did not stop"
    times = {"killed_at_s": killed_at, "restart_s": restart}
    times["elapsed_s"] = time.monotonic() - began
    return clients, times


def figures(clients: list[Client], times: dict[str, float]) -> dict[str, Any]:
    errors: Counter[str] = Counter()
    served: Counter[int] = Counter()
    after: Counter[int] = Counter()
    for c in clients:
        errors.update(c.errors)
        served.update(c.served)
        after.update(c.after_restart)
    return {
        "clients": len(clients),
        "requests": sum(c.requests for c in clients),
        "ok": sum(served.values()),
        "acknowledged_writes": sum(c.acked_writes for c in clients),
        "served_by_process": [served[0], served[1]],
        "served_after_restart": [after[0], after[1]],
        "errors": dict(errors),
        **{k: round(v, 2) for k, v in times.items()},
    }


def check_store(data: Path, clients: list[Client]) -> int:
    """Every acknowledged write in a fresh open, no request's note twice; notes checked."""
    with Memory.open(data, embedder=None) as mem:
        notes = {n.id: n for n in mem.list(RunContext.owner(AGENT), status=None)}
    keys = Counter(m.group(0) for n in notes.values() for m in [KEY.search(n.text)] if m)
    assert [k for k, count in keys.items() if count > 1] == [], "a note written twice"
    checked = 0
    for c in clients:
        for note_id, t in c.notes.items():
            if t.uncertain:
                continue
            note = notes.get(note_id)
            if t.forgotten:
                assert note is None or note.status.value != "active", note_id
                continue
            assert note is not None, f"acknowledged note {note_id} of client {c.index} lost"
            assert note.text == t.text, f"{note_id}: {note.text!r} != {t.text!r}"
            checked += 1
    return checked


def test_load_with_a_killed_server(tmp_path: Path) -> None:
    RESTARTED.clear()
    data = tmp_path / "data"
    data.mkdir()
    out = subprocess.run(
        [*CLI, "--data", str(data), "tokens", "create", "--name", "load", "--owner", "--json"],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    token = json.loads(out.stdout)["token"]
    ports = [free_port()]
    while len(ports) < 2:
        ports += [p for p in [free_port()] if p not in ports]
    pair = Pair(data, ports, [tmp_path / "a.log", tmp_path / "b.log"])
    try:
        pair.start()
        clients, times = run_load(pair, token)
    finally:
        for proc in pair.procs:
            stop(proc)
    result = figures(clients, times)
    result["notes_checked"] = check_store(data, clients)
    doctor = subprocess.run(
        [*CLI, "--data", str(data), "doctor"],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "REMEM_EMBEDDINGS": "0"},
    )
    print("load and fault test:", json.dumps(result))
    assert doctor.returncode == 0, doctor.stdout[-3000:] + doctor.stderr[-3000:]
    unexpected = {k: v for k, v in result["errors"].items() if k.startswith("unexpected")}
    assert unexpected == {}, result
    assert result["ok"] > 1000 and result["served_after_restart"][0] > 0, result
