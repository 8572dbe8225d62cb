"""Concurrency: N threads / tasks / 2 OS processes decide one proposal -> exactly one commit;
concurrent compare-and-set replaces -> one winner, the rest conflicted; no lost updates."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import psycopg
import pytest

from memory_graph import AsyncMemoryStore, MemoryStore, Owner

ALICE = Owner("alice")
N = 8


@pytest.fixture
def sync_store(pg_dsn: str) -> Iterator[MemoryStore]:
    with MemoryStore.from_dsn(pg_dsn, max_size=N + 2) as s:
        s.setup()
        yield s


def run_threads(fn: Callable[[int], Any], n: int = N) -> list[Any]:
    barrier = threading.Barrier(n)
    out: list[Any] = [None] * n

    def worker(i: int) -> None:
        barrier.wait()
        try:
            out[i] = fn(i)
        except Exception as exc:  # collected and asserted on by the caller
            out[i] = exc

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    return out


def commits(dsn: str, pid: str) -> tuple[int, int]:
    """(approval audit rows, record-create audit rows) of one proposal."""
    with psycopg.connect(dsn) as c:
        [(approved,)] = c.execute(
            "SELECT count(*) FROM mg_audit WHERE target_kind = 'proposal' AND target_id = %s "
            "AND action = 'approved'",
            (pid,),
        )
        [(created,)] = c.execute(
            "SELECT count(*) FROM mg_audit WHERE proposal_id = %s AND action = 'create'", (pid,)
        )
    return approved, created


def test_threads_decide_once(sync_store: MemoryStore, pg_dsn: str) -> None:
    p = sync_store.propose(ALICE, "add", {"kind": "fact", "content": "Uses Postgres"}, level="user")
    results = run_threads(lambda i: sync_store.decide(ALICE, p.id, "approve"))
    assert all(not isinstance(r, Exception) for r in results), results
    assert all(r == results[0] for r in results) and results[0].status == "approved"
    assert commits(pg_dsn, p.id) == (1, 1)
    assert len(sync_store.list_records(ALICE)) == 1


def test_tasks_decide_once(pg_dsn: str) -> None:
    async def main() -> None:
        async with AsyncMemoryStore.from_dsn(pg_dsn, max_size=N + 2) as s:
            await s.setup()
            p = await s.propose(
                ALICE, "set_preference", {"key": "tone", "value": "brief"}, level="user"
            )
            results = await asyncio.gather(*(s.decide(ALICE, p.id, "approve") for _ in range(N)))
            assert all(r == results[0] for r in results) and results[0].status == "approved"
            assert commits(pg_dsn, p.id)[0] == 1
            assert [x.revision for x in await s.get_preferences(ALICE)] == [1]

    asyncio.run(main())


CHILD = textwrap.dedent(
    """
    import sys, time
    from memory_graph import MemoryStore, Owner
    dsn, pid, start = sys.argv[1], sys.argv[2], float(sys.argv[3])
    with MemoryStore.from_dsn(dsn) as s:
        while time.time() < start:
            time.sleep(0.0005)
        r = s.decide(Owner("alice"), pid, "approve")
        print(r.status, r.record_id, flush=True)
    """
)


@pytest.mark.slow
def test_two_processes_decide_once(sync_store: MemoryStore, pg_dsn: str) -> None:
    p = sync_store.propose(ALICE, "add", {"kind": "fact", "content": "Two processes"}, level="user")
    start = time.time() + 4
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", CHILD, pg_dsn, p.id, str(start)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    outs = [proc.communicate(timeout=90) for proc in procs]
    assert all(proc.returncode == 0 for proc in procs), outs
    lines = {o[0].strip() for o in outs}
    assert len(lines) == 1 and next(iter(lines)).startswith("approved ")
    assert commits(pg_dsn, p.id) == (1, 1)
    assert len(sync_store.list_records(ALICE)) == 1


def test_concurrent_replace_proposals_one_winner(sync_store: MemoryStore, pg_dsn: str) -> None:
    r = sync_store.add(ALICE, "fact", "version one")
    props = [
        sync_store.propose(
            ALICE, "replace", {"content": f"edit {i}"}, target_id=r.record_id, base_version=1
        )
        for i in range(N)
    ]
    results = run_threads(lambda i: sync_store.decide(ALICE, props[i].id, "approve"))
    statuses = sorted(x.status for x in results)
    assert statuses == ["approved"] + ["conflicted"] * (N - 1)
    winner = next(i for i, x in enumerate(results) if x.status == "approved")
    rec = sync_store.get_record(ALICE, r.record_id)
    assert rec.content == f"edit {winner}" and rec.version == 2


def test_concurrent_trusted_replaces(sync_store: MemoryStore) -> None:
    r = sync_store.add(ALICE, "fact", "v1")
    results = run_threads(
        lambda i: sync_store.replace(ALICE, r.record_id, f"t{i}", base_version=1), n=4
    )
    assert sorted(x.status for x in results) == [
        "approved",
        "conflicted",
        "conflicted",
        "conflicted",
    ]
    assert sync_store.get_record(ALICE, r.record_id).version == 2


def test_no_lost_updates(sync_store: MemoryStore) -> None:
    results = run_threads(lambda i: sync_store.add(ALICE, "fact", f"fact number {i}"))
    assert all(x.write_status == "CREATED" for x in results), results
    assert len(sync_store.list_records(ALICE)) == N
    fields = ["name", "call_them", "pronouns", "timezone", "language", "occupation", "notes"]
    results = run_threads(
        lambda i: sync_store.patch_profile(ALICE, {fields[i]: f"v{i}"}), n=len(fields)
    )
    assert all(not isinstance(x, Exception) for x in results), results
    prof = sync_store.get_profile(ALICE)
    assert len(prof.fields) == len(fields) and prof.revision == len(fields)
    results = run_threads(lambda i: sync_store.set_preference(ALICE, f"key{i}", "v"))
    assert all(x.status == "CREATED" for x in results), results
    assert len(sync_store.get_preferences(ALICE)) == N


def test_concurrent_duplicate_adds_make_one_row(sync_store: MemoryStore) -> None:
    results = run_threads(lambda i: sync_store.add(ALICE, "fact", "said many times"))
    assert sorted(x.write_status for x in results) == ["CREATED"] + ["UNCHANGED"] * (N - 1)
    [rec] = sync_store.list_records(ALICE)
    assert rec.confidence == 1.0
