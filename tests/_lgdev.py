"""Start and stop the real ``langgraph dev`` on the repository's ``langgraph.json``.

Shared by ``test_langgraph_dev`` and ``test_server_auth``. The CLI (in-memory runtime) runs
from a private working directory on a free loopback port, without ``--allow-blocking``, in
its own process group; it is stopped like a terminal's Ctrl-C (SIGINT to the group), and
nothing it started may be left running, the embedded PostgreSQL included.
"""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import psutil

ROOT = Path(__file__).resolve().parents[1]
CLI = Path(sys.executable).with_name("langgraph")

DEV_TOKENS = {"dev-token-alice-0001": "alice", "dev-token-bob-00002": "bob"}
"""The development tokens the servers under test accept (``MEMORY_GRAPH_DEV_TOKENS``)."""


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait_ok(url: str, proc: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"langgraph dev exited early:\n{log.read_text()[-4000:]}")
        try:
            with urllib.request.urlopen(url + "/ok", timeout=2) as r:
                if r.status == 200:
                    return
        except OSError:
            time.sleep(0.3)
    raise AssertionError(f"langgraph dev did not answer:\n{log.read_text()[-4000:]}")


def _tree(pid: int) -> list[psutil.Process]:
    try:
        root = psutil.Process(pid)
        return [root, *root.children(recursive=True)]
    except psutil.NoSuchProcess:
        return []


def _alive(procs: list[psutil.Process]) -> list[psutil.Process]:
    out = []
    for p in procs:
        try:
            if p.is_running() and p.status() != psutil.STATUS_ZOMBIE:
                out.append(p)
        except psutil.NoSuchProcess:
            pass
    return out


def _postmasters(data_dir: Path) -> list[psutil.Process]:
    found = []
    for p in psutil.process_iter(["cmdline"]):
        cmd = " ".join(p.info.get("cmdline") or [])
        if "postgres" in cmd and str(data_dir) in cmd:
            found.append(p)
    return _alive(found)


_REFUSAL = re.compile(
    r"starlette\.exceptions\.HTTPException: 40[134]\b"
    r"|memory_graph\.errors\.(AuthIdentityError|ThreadOwnerError): "
)
"""langgraph-api logs a refused stream join (404) and a run the graph refused with their
tracebacks: expected refusals, not failures."""


def _logged_exceptions(log: str) -> list[str]:
    """The final line (``Class: message``) of every traceback in the server's log."""
    found = []
    for block in log.split("Traceback (most recent call last):")[1:]:
        lines = [ln for ln in block.splitlines()[1:] if ln.strip()]
        found.append(next((ln for ln in lines if not ln.startswith(" ")), "?"))
    return found


@contextmanager
def langgraph_dev(dsn: str, extra_env: Mapping[str, str] | None = None) -> Iterator[dict[str, Any]]:
    """A running ``langgraph dev`` (``url``, ``proc``, ``log``, ``data``).

    Args:
        dsn: ``MEMORY_GRAPH_DSN`` for the server ("" for the embedded server).
        extra_env: more environment (the dev tokens by default).
    """
    work = Path(tempfile.mkdtemp(prefix="mg-lgdev-"))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "LANGSMITH"))}
    env.pop("MEMORY_GRAPH_AUTH_VERIFIER", None)
    env.update(
        {
            "MEMORY_GRAPH_DSN": dsn,
            "MEMORY_GRAPH_DATA_DIR": str(work / "data"),
            "MEMORY_GRAPH_DEV_TOKENS": json.dumps(DEV_TOKENS),
            "LANGGRAPH_CLI_NO_ANALYTICS": "1",
            "LANGSMITH_TRACING": "false",
            "NO_COLOR": "1",
        }
    )
    env.update(extra_env or {})
    port = free_port()
    log = work / "server.log"
    # The in-memory runtime keeps its state in ``.langgraph_api`` of its working directory:
    # each server runs in its own directory (two servers of parallel test workers sharing
    # the repository root removed each other's state while running).
    with open(log, "wb") as out:
        proc = subprocess.Popen(
            [str(CLI), "dev", "--host", "127.0.0.1", "--port", str(port), "--no-browser"]
            + ["--no-reload", "--config", str(ROOT / "langgraph.json")],
            cwd=work,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    url = f"http://127.0.0.1:{port}"
    try:
        _wait_ok(url, proc, log)
        yield {"url": url, "proc": proc, "log": log, "data": work / "data"}
    finally:
        spawned = _tree(proc.pid) or []
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGINT)  # what Ctrl-C in a terminal sends
            try:
                proc.wait(timeout=60)
            except subprocess.TimeoutExpired as exc:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
                tail = log.read_text()[-4000:]
                raise AssertionError(f"langgraph dev ignored Ctrl-C:\n{tail}") from exc
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and (_alive(spawned) or _postmasters(work / "data")):
            time.sleep(0.2)
        leftover = _alive(spawned) + _postmasters(work / "data")
        for p in leftover:
            p.kill()
        text = log.read_text(errors="replace")
        subprocess.run(["rm", "-rf", str(work)], check=False)
        assert not leftover, f"left running after langgraph dev stopped: {leftover}"
        assert "BlockingError" not in text, text[-4000:]
        unexpected = [e for e in _logged_exceptions(text) if not _REFUSAL.match(e)]
        assert not unexpected, text[-4000:]


def headers(token: str | None) -> dict[str, str]:
    """The SDK client headers for a development token (none: anonymous)."""
    return {"Authorization": f"Bearer {token}"} if token else {}


def token_of(user: str) -> str:
    return next(t for t, u in DEV_TOKENS.items() if u == user)
