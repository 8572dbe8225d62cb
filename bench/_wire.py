"""Round trips on the wire: a counting TCP proxy for the PostgreSQL protocol (benchmarks only).

Clients connect to the proxy (:func:`proxied`), which forwards to the real server and counts
**round trips**: a client-to-server burst that follows server-to-client traffic on the same
connection. Each round trip is labelled with the statements it carries (the text of its
``Parse``/``Query`` messages, or of the prepared statement a ``Bind`` names; a burst with none
is a bare ``Sync``/``COMMIT``/terminate). Pipelined statements sent together count once, as
they cost one wait. Connection start-up bursts are counted too, so measure warm pools.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import socket
import struct
import threading
from collections.abc import Iterator
from typing import Any

from psycopg.conninfo import conninfo_to_dict, make_conninfo


class RoundTrips:
    """Round trips by label, counted by every proxied connection."""

    def __init__(self) -> None:
        self.counts: collections.Counter[str] = collections.Counter()
        self._lock = threading.Lock()

    def add(self, label: str) -> None:
        with self._lock:
            self.counts[label] += 1

    def take(self) -> collections.Counter[str]:
        """The counts so far, and start again from zero."""
        with self._lock:
            out, self.counts = self.counts, collections.Counter()
        return out


def _short(sql: bytes) -> str:
    return " ".join(sql.decode(errors="replace").split())[:72]


class _Conn:
    """One client connection's parser state."""

    def __init__(self, trips: RoundTrips) -> None:
        self.trips = trips
        self.buf = b""
        self.started = False
        self.names: dict[bytes, str] = {}
        self.server_spoke = True  # the next client bytes start a round trip
        self.open = False
        self.current: list[str] = []

    def from_client(self, data: bytes) -> None:
        if self.server_spoke:
            self.flush()
            self.server_spoke = False
            self.open = True
        self.buf += data
        while True:
            if not self.started:  # startup / SSL request: length-prefixed, no type byte
                if len(self.buf) < 4 or len(self.buf) < struct.unpack("!I", self.buf[:4])[0]:
                    return
                self.buf = self.buf[struct.unpack("!I", self.buf[:4])[0] :]
                self.started = True
                continue
            if len(self.buf) < 5:
                return
            kind, size = self.buf[:1], struct.unpack("!I", self.buf[1:5])[0]
            if len(self.buf) < 1 + size:
                return
            body, self.buf = self.buf[5 : 1 + size], self.buf[1 + size :]
            if kind == b"Q":
                self.current.append(_short(body.split(b"\0")[0]))
            elif kind == b"P":
                name, rest = body.split(b"\0", 1)
                sql = _short(rest.split(b"\0", 1)[0])
                if name:
                    self.names[name] = sql
                self.current.append(sql)
            elif kind == b"B":
                stmt = body.split(b"\0", 2)[1]
                if stmt:
                    self.current.append(self.names.get(stmt, "?"))

    def from_server(self) -> None:
        self.server_spoke = True

    def flush(self) -> None:
        if self.open:
            label = " || ".join(dict.fromkeys(self.current)) or "(sync / commit / terminate)"
            self.trips.add(label)
        self.open = False
        self.current = []


def _target(dsn: str) -> tuple[str, int]:
    params = conninfo_to_dict(dsn)
    return str(params.get("host") or "127.0.0.1"), int(params.get("port") or 5432)


@contextlib.contextmanager
def proxied(dsn: str, trips: RoundTrips | None = None) -> Iterator[tuple[str, RoundTrips]]:
    """A DSN that reaches ``dsn``'s server through a counting proxy, and its counter.

    ``trips``: the counter to count into (a new one by default). The server must be
    reachable over TCP or a Unix socket directory (``host=/path``).
    """
    trips = RoundTrips() if trips is None else trips
    host, port = _target(dsn)
    loop = asyncio.new_event_loop()

    async def pipe(reader: Any, writer: Any, seen: Any) -> None:
        try:
            while data := await reader.read(65536):
                seen(data)
                writer.write(data)
                await writer.drain()
        finally:
            writer.close()

    async def handle(client_r: Any, client_w: Any) -> None:
        if host.startswith("/"):
            server_r, server_w = await asyncio.open_unix_connection(f"{host}/.s.PGSQL.{port}")
        else:
            server_r, server_w = await asyncio.open_connection(host, port)
        conn = _Conn(trips)
        with contextlib.suppress(asyncio.CancelledError):  # the proxy shuts down
            await asyncio.gather(
                pipe(client_r, server_w, conn.from_client),
                pipe(server_r, client_w, lambda _: conn.from_server()),
                return_exceptions=True,
            )
        conn.flush()

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    server = loop.run_until_complete(asyncio.start_server(handle, sock=sock))
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    params = conninfo_to_dict(dsn)
    params.update(host="127.0.0.1", port=str(sock.getsockname()[1]), sslmode="disable")
    params["gssencmode"] = "disable"
    try:
        yield make_conninfo(**params), trips  # type: ignore[arg-type]
    finally:

        async def shutdown() -> None:
            server.close()
            tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

        asyncio.run_coroutine_threadsafe(shutdown(), loop).result(timeout=5)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout=5)
        loop.close()
