"""``langgraph dev`` serves the memory agent as shipped, driven through ``langgraph-sdk``.

The real CLI (in-memory runtime) starts from the repository root on a free loopback port,
without ``--allow-blocking``; ``langgraph.json`` names the graph factory, the governed store
and the checkpointer. One thread proposes, the review interrupt is resumed with decisions,
and a new thread recalls the approved memory. After the server is stopped (Ctrl-C, i.e.
SIGINT to its process group) nothing it started is left running, the embedded server
included.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psutil
import pytest

ROOT = Path(__file__).resolve().parents[1]
CLI = Path(sys.executable).with_name("langgraph")


def _free_port() -> int:
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


@pytest.fixture(params=["dsn", "embedded"])
def server(request: pytest.FixtureRequest, pg_dsn: str) -> Iterator[dict[str, Any]]:
    """A running ``langgraph dev`` (its url), stopped like a terminal's Ctrl-C afterwards."""
    work = Path(tempfile.mkdtemp(prefix="mg-lgdev-"))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "LANGSMITH"))}
    env.update(
        {
            "MEMORY_GRAPH_DSN": pg_dsn if request.param == "dsn" else "",
            "MEMORY_GRAPH_DATA_DIR": str(work / "data"),
            "LANGGRAPH_CLI_NO_ANALYTICS": "1",
            "LANGSMITH_TRACING": "false",
            "NO_COLOR": "1",
        }
    )
    port = _free_port()
    log = work / "server.log"
    state_dir = ROOT / ".langgraph_api"  # the in-memory runtime's state, in the cwd
    had_state = state_dir.exists()
    with open(log, "wb") as out:
        proc = subprocess.Popen(
            [str(CLI), "dev", "--host", "127.0.0.1", "--port", str(port), "--no-browser"]
            + ["--no-reload"],
            cwd=ROOT,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    url = f"http://127.0.0.1:{port}"
    try:
        _wait_ok(url, proc, log)
        yield {"url": url, "proc": proc, "log": log, "data": work / "data", "mode": request.param}
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
        if not had_state:  # leave a developer's own dev-server state alone
            subprocess.run(["rm", "-rf", str(state_dir)], check=False)
        assert not leftover, f"left running after langgraph dev stopped: {leftover}"
        assert "BlockingError" not in text, text[-4000:]
        assert "Traceback" not in text, text[-4000:]


def test_langgraph_json_names_module_paths() -> None:
    spec = json.loads((ROOT / "langgraph.json").read_text())
    assert spec["graphs"]["memory_agent"] == "nodes._server:make_graph"
    assert spec["store"]["path"] == "nodes._server.governed_store"
    assert spec["checkpointer"]["path"] == "nodes._server.checkpointer"


def test_thread_interrupt_resume_and_recall_over_the_sdk(server: dict[str, Any]) -> None:
    from langgraph_sdk import get_sync_client

    client = get_sync_client(url=server["url"])
    ctx = {"user_id": "alice"}
    thread = client.threads.create()
    tid = thread["thread_id"]
    client.runs.wait(
        tid,
        "memory_agent",
        input={"messages": [{"role": "user", "content": "Call me Ada. I prefer short replies."}]},
        context=ctx,
    )
    state = client.threads.get_state(tid)
    interrupts = [i for task in state["tasks"] for i in task.get("interrupts") or []]
    assert len(interrupts) == 1, state
    request = interrupts[0]["value"]
    assert request["action_requests"], request
    decisions = [
        {"type": "approve", "proposal_id": a["proposal_id"]} for a in request["action_requests"]
    ]
    out = client.runs.wait(
        tid,
        "memory_agent",
        command={"resume": {interrupts[0]["id"]: {"decisions": decisions}}},
        context=ctx,
    )
    assert {r["status"] for r in out["commit_results"]} == {"approved"}, out
    fresh = client.threads.create()
    second = client.runs.wait(
        fresh["thread_id"],
        "memory_agent",
        input={"messages": [{"role": "user", "content": "hello"}]},
        context=ctx,
    )
    assert "Ada" in second["user_context"]
    assert "Ada" in second["messages"][-1]["content"]
    # Another user's thread sees nothing of Alice's.
    bob = client.runs.wait(
        client.threads.create()["thread_id"],
        "memory_agent",
        input={"messages": [{"role": "user", "content": "hello"}]},
        context={"user_id": "bob"},
    )
    assert "Ada" not in json.dumps(bob)
