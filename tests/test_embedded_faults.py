"""Faults of the embedded server, each on a server the test starts and kills itself.

Every test uses its own temporary data directory and child processes; none touches the
machine's PostgreSQL service. Each asserts that no server is left running at the end.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import psutil
import psycopg
import pytest

from memory_graph import MemoryStore, StorageUnavailableError
from memory_graph.storage.server.embedded import start_embedded, stop_embedded

ROOT = Path(__file__).resolve().parent.parent


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    env.pop("MEMORY_GRAPH_DSN", None)
    return env


def _python(code: str, *, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        env=_env(),
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def _spawn(code: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(code)],
        env=_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )


def _postmaster_pid(data_dir: Path) -> int:
    return int((data_dir / "pgdata" / "postmaster.pid").read_text().split()[0])


def _wait(cond: object, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not cond():  # type: ignore[operator]
        assert time.monotonic() < deadline, "condition not reached in time"
        time.sleep(0.05)


def server_running(data_dir: Path) -> bool:
    """Whether a live (non-zombie) postmaster serves ``data_dir`` (read independently)."""
    try:
        pid = _postmaster_pid(data_dir)
    except (OSError, ValueError, IndexError):
        return False
    return pid > 0 and not _gone_or_zombie(pid)


def _gone_or_zombie(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


@pytest.fixture
def data_dir(tmp_path: Path) -> object:
    yield tmp_path
    # Never leave a server behind, whatever the test did.
    if server_running(tmp_path):
        os.kill(_postmaster_pid(tmp_path), signal.SIGQUIT)


def test_restart_while_the_killed_postmaster_is_a_zombie(data_dir: Path) -> None:
    # The parent makes itself a child subreaper, so the postmaster (orphaned by pg_ctl) is
    # its child: killed and not reaped, it stays a zombie that "looks alive" to psutil.
    out = _python(
        f"""
        import ctypes, os, signal, subprocess, sys, time
        import psutil
        ctypes.CDLL(None).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
        from memory_graph.storage.server.embedded import start_embedded
        d = {str(data_dir)!r}
        start_embedded(d)
        pid = int(open(d + "/pgdata/postmaster.pid").read().split()[0])
        assert psutil.Process(pid).ppid() == os.getpid()
        os.kill(pid, signal.SIGKILL)
        while psutil.Process(pid).status() != psutil.STATUS_ZOMBIE:
            time.sleep(0.02)
        assert psutil.Process(pid).is_running()  # the trap: a zombie counts as running
        child = subprocess.run([sys.executable, "-c",
            "import psycopg; from memory_graph.storage.server.embedded import start_embedded; "
            f"print(psycopg.connect(start_embedded({{d!r}})).execute('select 42').fetchone()[0])"],
            capture_output=True, text=True)
        assert psutil.Process(pid).status() == psutil.STATUS_ZOMBIE  # still unreaped
        print(child.stdout.strip(), child.stderr.strip()[-300:])
        """
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.split()[0] == "42", out.stdout
    assert not server_running(data_dir)


def test_a_kill_during_the_first_start_recovers(data_dir: Path) -> None:
    proc = _spawn(
        f"""
        from memory_graph.storage.server.embedded import start_embedded
        start_embedded({str(data_dir)!r})
        """
    )
    # Kill the whole process group (the launcher and initdb) while initdb is writing.
    _wait(lambda: any((p / "base").exists() for p in data_dir.glob("pgdata*")))
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    assert not (data_dir / "pgdata" / "global" / "pg_control").exists()
    uri = start_embedded(data_dir)
    with psycopg.connect(uri) as conn:
        assert conn.execute("select 7").fetchone() == (7,)
    assert not list(data_dir.glob("pgdata.init-*"))
    assert stop_embedded(data_dir)
    assert not server_running(data_dir)


def test_a_legacy_half_initialised_data_dir_is_reinitialised(data_dir: Path) -> None:
    # What a SIGKILL during the wheel's own initdb left: a negative (bootstrap) pid in
    # postmaster.pid and no global/pg_control.
    pgdata = data_dir / "pgdata"
    (pgdata / "global").mkdir(parents=True)
    (pgdata / "base").mkdir()
    (pgdata / "PG_VERSION").write_text("18\n")
    (pgdata / "postmaster.pid").write_text(f"-{os.getpid()}\n{pgdata}\n")
    uri = start_embedded(data_dir)
    with psycopg.connect(uri) as conn:
        assert conn.execute("select 1").fetchone() == (1,)
    assert stop_embedded(data_dir)


def test_a_directory_that_is_not_a_cluster_is_never_deleted(data_dir: Path) -> None:
    pgdata = data_dir / "pgdata"
    pgdata.mkdir()
    (pgdata / "PG_VERSION").write_text("18\n")
    (pgdata / "my-notes.txt").write_text("precious")
    with pytest.raises(StorageUnavailableError, match="move it away"):
        start_embedded(data_dir)
    assert (pgdata / "my-notes.txt").read_text() == "precious"


def test_a_process_whose_server_died_opens_a_new_store(data_dir: Path) -> None:
    out = _python(
        f"""
        import os, signal, time, psutil
        from memory_graph import MemoryStore, Owner
        d = {str(data_dir)!r}
        with MemoryStore.from_dsn(data_dir=d) as store:
            store.setup()
            store.add(Owner("u"), "fact", "kept across the crash")
        pid = int(open(d + "/pgdata/postmaster.pid").read().split()[0])
        os.kill(pid, signal.SIGKILL)
        while psutil.pid_exists(pid) and psutil.Process(pid).status() != "zombie":
            time.sleep(0.02)
        with MemoryStore.from_dsn(data_dir=d) as store:
            print([r.content for r in store.list_records(Owner("u"))])
        print(int(open(d + "/pgdata/postmaster.pid").read().split()[0]) != pid)
        """
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.split("\n")[:2] == ["['kept across the crash']", "True"], out.stdout
    # The replacement server stopped when its only user exited.
    assert not server_running(data_dir)


def test_the_server_stops_when_the_last_user_exits_after_another_was_killed(
    data_dir: Path,
) -> None:
    hold = f"""
        import time
        from memory_graph.storage.server.embedded import start_embedded
        start_embedded({str(data_dir)!r})
        print("ready", flush=True)
        time.sleep(600)
        """
    first, second = _spawn(hold), _spawn(hold)
    for proc in (first, second):
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
    os.kill(first.pid, signal.SIGKILL)  # one user dies without any cleanup
    first.wait()
    assert server_running(data_dir)  # the other user still needs it
    second.send_signal(signal.SIGTERM)  # the last user exits (SIGTERM runs the exit path)
    second.wait(timeout=60)
    assert not server_running(data_dir)


def test_a_dead_server_is_restarted_for_a_new_store_in_the_same_process(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("MEMORY_GRAPH_DSN", raising=False)
    uri = start_embedded(data_dir)
    pid = _postmaster_pid(data_dir)
    os.kill(pid, signal.SIGKILL)
    _wait(lambda: _gone_or_zombie(pid))
    with MemoryStore.from_dsn(data_dir=data_dir) as store:
        store.setup()
        assert store.dsn == start_embedded(data_dir)
    assert _postmaster_pid(data_dir) != pid
    assert uri  # the old URI named the same socket; the server behind it is new
    assert stop_embedded(data_dir)
    assert not server_running(data_dir)


def test_the_server_stops_when_its_last_user_is_killed(data_dir: Path) -> None:
    # SIGKILL runs no exit code at all: the data dir's watchdog stops the server.
    proc = _spawn(
        f"""
        import time
        from memory_graph.storage.server.embedded import start_embedded
        start_embedded({str(data_dir)!r})
        print("ready", flush=True)
        time.sleep(600)
        """
    )
    assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
    assert server_running(data_dir)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    _wait(lambda: not server_running(data_dir), timeout=60)
