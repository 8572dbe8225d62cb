"""``memory-graph forget``, ``sweep`` and ``stats`` in a subprocess on a real database."""

from __future__ import annotations

from datetime import timedelta

from test_cli import as_json, run

from memory_graph import MemoryStore, Owner

ADA = Owner("ada")


def _seed(dsn: str) -> None:
    with MemoryStore.from_dsn(dsn) as store:
        store.setup()
        store.patch_profile(ADA, {"call_them": "Zorbulon"})
        store.add(ADA, "fact", "Vexmirth is my cat")
        p = store.propose(
            ADA, "set_preference", {"key": "reply.length", "value": "short"}, level="user"
        )
        store.decide(ADA, p.id, "reject")
        store.note_blocked(ADA, {"health": 2, "credential": 1})
        store.add(Owner("bob"), "fact", "Bob keeps bees")


def test_forget_asks_first_and_erases_with_yes(pg_dsn: str) -> None:
    _seed(pg_dsn)
    declined = run(pg_dsn, "forget", "--user", "ada", stdin="n\n")
    assert declined.returncode == 1 and "Nothing was erased" in declined.stdout
    with MemoryStore.from_dsn(pg_dsn) as store:
        assert store.get_profile(ADA).fields == {"call_them": "Zorbulon"}
    confirmed = run(pg_dsn, "forget", "--user", "ada", stdin="y\n")
    assert confirmed.returncode == 0, confirmed.stderr
    assert "Erased user scope " + ADA.scope_id in confirmed.stdout
    again = as_json(run(pg_dsn, "forget", "--user", "ada", "--yes", "--json"))
    assert again["total"] == 0 and again["scope_id"] == ADA.scope_id
    with MemoryStore.from_dsn(pg_dsn) as store:
        assert store.get_profile(ADA).fields == {}
        assert store.list_records(ADA) == []
        assert [r.content for r in store.list_records(Owner("bob"))] == ["Bob keeps bees"]


def test_stats_counts_writes_rejections_and_blocks(pg_dsn: str) -> None:
    _seed(pg_dsn)
    rows = as_json(run(pg_dsn, "stats", "--user", "ada", "--json"))
    by_action = {(r["target_kind"], r["action"]): r["n"] for r in rows}
    assert by_action[("guard", "block:health")] == 2
    assert by_action[("guard", "block:credential")] == 1
    assert by_action[("proposal", "rejected")] == 1
    assert sum(n for (kind, _), n in by_action.items() if kind == "record") >= 1
    assert "Zorbulon" not in str(rows) and "Vexmirth" not in str(rows)
    text = run(pg_dsn, "stats", "--user", "ada", "--by", "week")
    assert text.returncode == 0 and "block:health" in text.stdout
    assert run(pg_dsn, "stats", "--user", "nobody").stdout.strip().startswith("No audit")


def test_sweep_reports_json(pg_dsn: str) -> None:
    _seed(pg_dsn)
    with MemoryStore.from_dsn(pg_dsn) as store:
        store.propose(
            ADA, "add", {"kind": "fact", "content": "x"}, level="user", ttl=timedelta(seconds=1)
        )
    import time

    time.sleep(1.1)  # let the one-second proposal expire (real clock in the subprocess)
    report = as_json(run(pg_dsn, "sweep", "--json", "--thread-idle-days", "30", "--yes"))
    assert report["expired_proposals"] == 1 and report["batches"] >= 5


def test_bad_input_is_one_error_line(pg_dsn: str) -> None:
    for args in (
        ("forget", "--yes"),
        ("forget", "--user", "  ", "--yes"),
        ("sweep", "--record-days", "-1", "--yes"),
        ("sweep", "--batch-size", "0", "--yes"),
        ("sweep", "--thread-idle-days", "0", "--yes"),
        ("sweep", "--proposal-days", "0", "--yes"),
        ("sweep", "--record-days", "0", "--yes"),
        ("sweep", "--audit-days", "0", "--yes"),
        ("sweep", "--proposal-days", str(10**12), "--yes"),
        ("sweep", "--thread-idle-days", "36601", "--yes"),
        ("stats", "--user", "ada", "--by", "year"),
        ("stats", "--user", "ada", "--days", "0"),
    ):
        done = run(pg_dsn, *args)
        assert done.returncode == 2, (args, done.stdout, done.stderr)
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("error:"), (args, done.stderr)


def test_sweep_asks_first_and_deletes_nothing_when_declined(pg_dsn: str) -> None:
    _seed(pg_dsn)
    with MemoryStore.from_dsn(pg_dsn) as store:
        store.propose(
            ADA, "add", {"kind": "fact", "content": "x"}, level="user", ttl=timedelta(seconds=1)
        )
    import time

    time.sleep(1.1)
    declined = run(pg_dsn, "sweep", "--thread-idle-days", "1", stdin="n\n")
    assert declined.returncode == 1 and "Nothing was deleted" in declined.stdout
    assert "every user" in declined.stderr
    no_input = run(pg_dsn, "sweep")  # not a terminal, no answer: refused, not assumed
    assert no_input.returncode != 0
    # Neither run expired the proposal: the confirmed sweep still finds it.
    report = as_json(run(pg_dsn, "sweep", "--json", stdin="y\n"))
    assert report["expired_proposals"] == 1
