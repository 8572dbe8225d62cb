"""Issue 8 §1: a seeded random workload over 3 users x 2 workspaces x 2 agents, then every read
path as every principal: 0 leaks.

Every stored text carries a marker naming the identity it was written to
(``mk-<user>-<workspace>-<agent>-<n>``, ``x`` for none). A principal may only ever read markers
of identities it owns (its own user, and no or its own workspace and agent). The checker is
itself tested: it must flag a planted foreign marker.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Iterable, Iterator
from dataclasses import asdict
from datetime import timedelta
from typing import Any

import pytest
from _stores import FakeClock, db_state
from langgraph.prebuilt.tool_node import ToolRuntime

from memory_graph import MemoryStore, NotFoundError, Owner
from nodes import create_memory_tools

USERS = ["u1", "u2", "u3"]
WORKSPACES = [None, "w1", "w2"]
AGENTS = [None, "a1", "a2"]
PRINCIPALS = [Owner(u, workspace=w, agent=a) for u in USERS for w in WORKSPACES for a in AGENTS]
MARK = re.compile(r"mk-(u\d)-(x|w\d)-(x|a\d)-\d+")


def _tag(v: str | None) -> str:
    return "x" if v is None else v


def ident_of(owner: Owner, level: str) -> tuple[str, str, str]:
    ws = _tag(owner.workspace) if level.endswith("workspace") else "x"
    ag = _tag(owner.agent) if level.startswith("agent") else "x"
    return owner.user_id, ws, ag


def may_see(viewer: Owner, ident: tuple[str, str, str]) -> bool:
    user, ws, ag = ident
    return (
        viewer.user_id == user
        and ws in ("x", _tag(viewer.workspace))
        and ag in ("x", _tag(viewer.agent))
    )


def leaks(viewer: Owner, text: str) -> list[str]:
    """Markers in ``text`` of identities ``viewer`` does not own."""
    return [m.group(0) for m in MARK.finditer(text) if not may_see(viewer, m.groups())]


def test_the_leak_checker_detects_a_leak() -> None:
    viewer = Owner("u1", workspace="w1", agent="a1")
    assert leaks(viewer, "mk-u1-w1-a1-3 mk-u1-x-x-4 mk-u1-w1-x-5 mk-u1-x-a1-6") == []
    for foreign in ["mk-u2-x-x-1", "mk-u1-w2-x-1", "mk-u1-x-a2-1", "mk-u1-w2-a1-9"]:
        assert leaks(viewer, f"ok mk-u1-x-x-1 {foreign}") == [foreign]


class Workload:
    """Random operations; remembers every id it created, whoever may see it."""

    def __init__(self, store: Any, rng: random.Random) -> None:
        self.store = store
        self.rng = rng
        self.n = 0
        self.records: list[tuple[str, tuple[str, str, str]]] = []
        self.proposals: list[tuple[str, tuple[str, str, str]]] = []
        self.grants: list[tuple[str, Owner]] = []

    def mark(self, ident: tuple[str, str, str]) -> str:
        self.n += 1
        return f"mk-{ident[0]}-{ident[1]}-{ident[2]}-{self.n}"

    def visible_records(self, owner: Owner) -> list[tuple[str, tuple[str, str, str]]]:
        return [(rid, i) for rid, i in self.records if may_see(owner, i)]

    def step(self) -> None:
        rng, store = self.rng, self.store
        store.clock.advance(seconds=1)
        owner = rng.choice(PRINCIPALS)
        level = rng.choice([i.level for i in owner.identities()])
        ident = ident_of(owner, level)
        action = rng.choice(
            [
                "add",
                "add",
                "pref",
                "propose_add",
                "propose_change",
                "propose_change",
                "decide",
                "decide",
                "grant",
                "use_grant",
                "replace",
                "remove",
                "profile",
                "foreign",
            ]
        )
        m = self.mark(ident)
        if action == "add":
            claim = {"key": f"drink.{rng.randint(0, 2)}", "value": m}
            res = store.add(
                owner,
                "fact",
                f"{m} likes tea",
                level=level,
                knowledge={"claim": claim} if rng.random() < 0.5 else None,
            )
            if res.record_id:
                self.records.append((res.record_id, ident))
        elif action == "pref":
            store.set_preference(owner, f"drink.{rng.randint(0, 2)}", m, level=level)
        elif action == "propose_add":
            p = store.propose(
                owner,
                "add",
                {"kind": "fact", "content": f"{m} proposed"},
                level=level,
                evidence={"quote": m},
            )
            self.proposals.append((p.id, ident))
        elif action == "propose_change":
            seen = self.visible_records(owner)
            if not seen:
                return
            rid, rident = rng.choice(seen)
            try:
                rec = store.get_record(owner, rid)
            except NotFoundError:
                return
            if rec.status != "active":
                return
            if rng.random() < 0.5:
                p = store.propose(
                    owner, "replace", {"content": f"{self.mark(rident)} new"}, target_id=rid
                )
            else:
                p = store.propose(owner, "remove", {}, target_id=rid)
            self.proposals.append((p.id, rident))
        elif action == "decide":
            if not self.proposals:
                return
            pid, pident = rng.choice(self.proposals)
            decision = rng.choice(["approve", "reject", "edit"])
            args = None
            if decision == "edit":
                p = store.get_proposal(owner, pid) if may_see(owner, pident) else None
                if p is None or p.operation not in ("add", "replace"):
                    decision = "approve"
                else:
                    args = {**p.args, "content": f"{self.mark(pident)} edited"}
            try:
                res = store.decide(owner, pid, decision, args=args)
            except NotFoundError:
                assert not may_see(owner, pident)
                return
            assert may_see(owner, pident), "an invisible proposal was decided"
            if res.record_id and res.operation == "add":
                self.records.append((res.record_id, pident))
        elif action == "grant":
            g = store.create_grant(
                owner,
                expires_at=store.clock() + timedelta(days=1),
                kinds=["fact", "preference"],
                operations=["add", "replace", "remove", "set_preference"],
                max_mutations=50,
                max_bytes=100_000,
            )
            self.grants.append((g.id, owner))
        elif action == "use_grant":
            if not self.grants or not self.proposals:
                return
            gid, gowner = rng.choice(self.grants)
            pid, pident = rng.choice(self.proposals)
            try:
                res = store.decide_with_grant(gowner, pid, gid)
            except NotFoundError:
                assert not may_see(gowner, pident)
                return
            assert may_see(gowner, pident)
            if res is not None and res.status == "approved":
                # the grant scope rule: never a write broader than the grant's principal
                if gowner.workspace:
                    assert pident[1] == gowner.workspace
                if gowner.agent:
                    assert pident[2] == gowner.agent
                if res.record_id and res.operation == "add":
                    self.records.append((res.record_id, pident))
        elif action in ("replace", "remove"):
            seen = self.visible_records(owner)
            if not seen:
                return
            rid, rident = rng.choice(seen)
            try:
                rec = store.get_record(owner, rid)
                if action == "replace":
                    store.replace(
                        owner, rid, f"{self.mark(rident)} replaced", base_version=rec.version
                    )
                else:
                    store.remove(owner, rid, base_version=rec.version)
            except NotFoundError:
                return
        elif action == "profile":
            store.patch_profile(
                Owner(owner.user_id), {"notes": self.mark((owner.user_id, "x", "x"))}
            )
        else:  # a foreign principal tries every write on ids it must not see
            for rid, rident in self.records[-5:]:
                if may_see(owner, rident):
                    continue
                for call in (
                    lambda rid=rid: store.get_record(owner, rid),
                    lambda rid=rid: store.propose(owner, "remove", {}, target_id=rid),
                    lambda rid=rid: store.replace(owner, rid, "hijack", base_version=1),
                    lambda rid=rid: store.reinforce(owner, rid),
                ):
                    with pytest.raises(NotFoundError):
                        call()
            for pid, pident in self.proposals[-5:]:
                if may_see(owner, pident):
                    continue
                for call in (
                    lambda pid=pid: store.get_proposal(owner, pid),
                    lambda pid=pid: store.decide(owner, pid, "reject"),
                ):
                    with pytest.raises(NotFoundError):
                        call()


def _runtime(owner: Owner) -> ToolRuntime:
    ctx = {"user_id": owner.user_id, "workspace": owner.workspace, "agent": owner.agent}
    return ToolRuntime(
        state={},
        context={k: v for k, v in ctx.items() if v is not None},
        config={"configurable": {"thread_id": "leak"}},
        stream_writer=lambda _: None,
        tool_call_id="call-leak-1",
        store=None,
    )


def _texts(values: Iterable[Any]) -> str:
    return json.dumps(
        [asdict(v) if hasattr(v, "__dataclass_fields__") else v for v in values],
        default=str,
        ensure_ascii=False,
    )


@pytest.fixture
def sync_store(pg_dsn: str) -> Iterator[MemoryStore]:
    # One twin is enough: both run the same ops (tests/test_twins.py pins that).
    with MemoryStore.from_dsn(pg_dsn, clock=FakeClock()) as s:
        s.setup()
        yield s


@pytest.mark.parametrize("seed", [8, 2026])
def test_random_workload_leaks_nothing(sync_store: MemoryStore, pg_dsn: str, seed: int) -> None:
    store = sync_store
    rng = random.Random(seed)
    w = Workload(store, rng)
    for _ in range(300):
        w.step()
    assert len(w.records) > 20 and len(w.proposals) > 20 and len(w.grants) > 3
    tools = {t.name: t for t in create_memory_tools(store)}
    before = db_state(pg_dsn)
    for viewer in PRINCIPALS:
        out: dict[str, str] = {}
        out["list_records"] = _texts(store.list_records(viewer, include_inactive=True))
        out["preferences"] = _texts(store.get_preferences(viewer))
        out["profile"] = _texts([store.get_profile(viewer)])
        out["search"] = _texts(store.search(viewer, ""))
        out["search marker"] = _texts(store.search(viewer, "mk tea drink"))
        out["search confirmed"] = _texts(store.search_confirmed(viewer, "tea"))
        out["snapshot"] = store.snapshot(viewer, latest_input="tea drink mk")
        out["context_block"] = store.context_block(viewer)
        out["memory_md"] = store.memory_md(viewer)
        out["export"] = json.dumps(store.export(viewer), default=str, ensure_ascii=False)
        out["audit_log"] = json.dumps(store.audit_log(viewer, limit=10_000), default=str)
        out["inbox"] = _texts(store.list_pending(viewer))
        out["inbox thread"] = _texts(store.list_pending(viewer, thread_id="leak"))
        by_id = []
        for rid, rident in w.records:
            try:
                by_id.append(store.get_record(viewer, rid))
            except NotFoundError:
                assert not may_see(viewer, rident)
            else:
                assert may_see(viewer, rident)
        out["get_record"] = _texts(by_id)
        props = []
        for pid, pident in w.proposals:
            try:
                props.append(store.get_proposal(viewer, pid))
            except NotFoundError:
                assert not may_see(viewer, pident), f"{viewer} cannot see its own {pid}"
            else:
                assert may_see(viewer, pident), f"{viewer} sees proposal {pid} of {pident}"
        out["get_proposal"] = _texts(props)
        for gid, gowner in w.grants:
            try:
                store.get_grant(viewer, gid)
            except NotFoundError:
                assert gowner != viewer
            else:
                assert gowner == viewer, f"{viewer} reads the grant of {gowner}"
        # disagreement groups only name visible records
        ids = {rid for rid, i in w.records if may_see(viewer, i)}
        for hit in store.search(viewer, "tea"):
            if hit.disagreement is not None:
                assert set(hit.disagreement.ids) <= ids
        rt = _runtime(viewer)
        out["tool search"] = tools["memory_search"].func(rt, query="tea mk")  # type: ignore[misc]
        out["tool confirmed"] = tools["memory_search_confirmed"].func(  # type: ignore[misc]
            rt, query="tea"
        )
        for rid, rident in w.records[:40]:
            if may_see(viewer, rident):
                continue
            text = tools["memory_manage"].func(  # type: ignore[misc]
                rt, action="remove", record_id=rid, content=None, kind=None
            )
            out[f"tool manage {rid}"] = text
            assert "not found" in text
        for what, text in out.items():
            assert not leaks(viewer, text), f"{what} leaks {leaks(viewer, text)} to {viewer}"
    # the reads and the refused tool calls changed nothing
    assert db_state(pg_dsn) == before
    # the check has teeth: another principal's reads, shown to this one, are flagged
    viewer = Owner("u1", workspace="w1", agent="a1")
    flagged = [
        o
        for o in PRINCIPALS
        if o != viewer
        and leaks(
            viewer, json.dumps([store.export(o), store.audit_log(o, limit=10_000)], default=str)
        )
    ]
    assert len(flagged) >= 10
