"""Crash: a process SIGKILLed in the middle of a commit leaves no partial state."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap

import psycopg
import pytest

from memory_graph import MemoryStore, Owner

ALICE = Owner("alice")

# Drives the real decide op by hand on a raw connection: runs its statements up to and
# including the one that writes the record row (with its tokens, audit rows and proposal
# state, which share that statement), reports, then hangs inside the open transaction until
# it is killed.
CHILD = textwrap.dedent(
    """
    import sys, time
    import psycopg
    from psycopg.rows import dict_row
    from memory_graph import Limits, Owner
    from memory_graph.time import system_clock
    from memory_graph.storage.ops.proposals import decide_op

    dsn, pid = sys.argv[1], sys.argv[2]
    conn = psycopg.connect(dsn, autocommit=False)
    op = decide_op(Owner("alice"), pid, "approve", clock=system_clock, limits=Limits())
    q = next(op)
    while True:
        with conn.cursor(row_factory=dict_row) as cur:
            cur.execute(q.sql, q.params)
            rows = cur.fetchall() if q.fetch in ("one", "all") and cur.description else None
            if q.fetch == "none":
                result = None
            elif q.fetch == "rowcount":
                result = cur.rowcount
            elif q.fetch == "one":
                result = rows[0] if rows else None
            else:
                result = rows or []
        if "INSERT INTO mg_records" in q.sql:
            print("MID-COMMIT", flush=True)
            time.sleep(120)
        q = op.send(result)
    """
)


def state(dsn: str) -> tuple[int, int, list[str], str]:
    with psycopg.connect(dsn) as c:
        [(records,)] = c.execute("SELECT count(*) FROM mg_records")
        [(pool,)] = c.execute("SELECT coalesce(sum(n), 0) FROM mg_pool_stats")
        actions = [r[0] for r in c.execute("SELECT action FROM mg_audit ORDER BY seq")]
        [(status,)] = c.execute("SELECT status FROM mg_proposals")
    return records, pool, actions, status


@pytest.mark.slow
def test_sigkill_mid_commit_leaves_no_partial_state(pg_dsn: str) -> None:
    with MemoryStore.from_dsn(pg_dsn) as store:
        store.setup()
        p = store.propose(
            ALICE, "add", {"kind": "fact", "content": "Survives a crash"}, level="user"
        )
        before = state(pg_dsn)
        assert before == (0, 0, ["proposed"], "pending")
        child = subprocess.Popen(
            [sys.executable, "-c", CHILD, pg_dsn, p.id],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            line = child.stdout.readline() if child.stdout else ""
            assert line.strip() == "MID-COMMIT", child.stderr.read() if child.stderr else ""
            os.kill(child.pid, signal.SIGKILL)
            child.wait(30)
        finally:
            if child.poll() is None:
                child.kill()
        assert child.returncode == -signal.SIGKILL
        # The server rolls the dead session back; the proposal is still decidable once.
        r = store.decide(ALICE, p.id, "approve")
        assert r.status == "approved"
        records, tokens, actions, status = state(pg_dsn)
        assert (records, status) == (1, "approved")
        assert actions == ["proposed", "create", "approved"]
        assert tokens > 0
        assert store.get_record(ALICE, r.record_id).content == "Survives a crash"


@pytest.mark.slow
def test_sigkill_leaves_state_unchanged_before_retry(pg_dsn: str) -> None:
    with MemoryStore.from_dsn(pg_dsn) as store:
        store.setup()
        p = store.propose(
            ALICE, "add", {"kind": "fact", "content": "Never half written"}, level="user"
        )
        child = subprocess.Popen(
            [sys.executable, "-c", CHILD, pg_dsn, p.id],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            assert child.stdout is not None and child.stdout.readline().strip() == "MID-COMMIT"
            # while the commit hangs, nobody else can see its partial writes
            assert state(pg_dsn) == (0, 0, ["proposed"], "pending")
            os.kill(child.pid, signal.SIGKILL)
            child.wait(30)
        finally:
            if child.poll() is None:
                child.kill()
        # after the kill, still nothing: wait for the server to drop the dead session
        with psycopg.connect(pg_dsn) as c:
            c.execute("SELECT status FROM mg_proposals WHERE id = %s FOR UPDATE", (p.id,))
        assert state(pg_dsn) == (0, 0, ["proposed"], "pending")
