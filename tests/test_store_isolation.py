"""Isolation: a randomised population of users, workspaces and agents; nothing leaks through
any API (reads, search, projections, export, audit, inbox, and every by-id call)."""

from __future__ import annotations

import json
import random

import pytest

from memory_graph import NotFoundError, Owner

USERS = ["u1", "u2", "u3"]
WORKSPACES = [None, "/w1", "w2"]
AGENTS = [None, "a1", "a2"]


def marker(user, ws, agent, kind):
    tag = lambda x: "x" if x is None else x.strip("/")  # noqa: E731
    return f"{kind}_{user}_{tag(ws)}_{tag(agent)}"


def visible_to(viewer: Owner, user, ws, agent) -> bool:
    return (
        viewer.user_id == user
        and (ws is None or ws == viewer.workspace)
        and (agent is None or agent == viewer.agent)
    )


def owner_keys(owner: Owner, level: str):
    ws = owner.workspace if level.endswith("workspace") else None
    agent = owner.agent if level.startswith("agent") else None
    return owner.user_id, ws, agent


@pytest.mark.parametrize("seed", [7])
def test_nothing_leaks(store, seed):
    rng = random.Random(seed)
    owners = [Owner(u, workspace=w, agent=a) for u in USERS for w in WORKSPACES for a in AGENTS]
    writers = rng.sample(owners, 12)
    written = {}  # identity tuple -> dict(record_id, proposal_id, markers)
    for o in writers:
        for ident in o.identities():
            key = owner_keys(o, ident.level)
            if key in written:
                continue
            rec_m, pref_m, prop_m = (marker(*key, k) for k in ("rec", "pref", "prop"))
            r = store.add(
                o,
                "fact",
                f"{rec_m} likes tea",
                level=ident.level,
                knowledge={"claim": {"key": "drink", "value": rec_m}},
            )
            store.set_preference(o, "drink", pref_m, level=ident.level)
            p = store.propose(o, "add", {"kind": "fact", "content": prop_m}, level=ident.level)
            written[key] = {
                "record": r.record_id,
                "proposal": p.id,
                "markers": {rec_m, pref_m, prop_m},
            }
    for u in USERS:
        store.patch_profile(Owner(u), {"name": f"name_{u}"})

    all_markers = set().union(*(w["markers"] for w in written.values()))
    for viewer in owners:
        vis = {k for k in written if visible_to(viewer, *k)}
        allowed = set().union(*(written[k]["markers"] for k in vis)) if vis else set()
        forbidden = all_markers - allowed

        def check_text(what, text, viewer=viewer, forbidden=forbidden):
            leaked = [m for m in forbidden if m in text]
            assert not leaked, f"{what} leaks {leaked} to {viewer}"

        recs = store.list_records(viewer, include_inactive=True)
        assert {r.id for r in recs if r.kind == "fact"} == {written[k]["record"] for k in vis}
        check_text("list_records", json.dumps([r.content for r in recs]))
        prefs = store.get_preferences(viewer)
        assert {p.value for p in prefs} == {marker(*k, "pref") for k in vis}
        check_text("search", json.dumps([h.record.content for h in store.search(viewer, "")]))
        check_text(
            "search tea", json.dumps([h.record.content for h in store.search(viewer, "tea drink")])
        )
        check_text("export", json.dumps(store.export(viewer)))
        check_text("audit_log", json.dumps(store.audit_log(viewer, limit=10_000), default=str))
        pending = store.list_pending(viewer)
        assert {p.id for p in pending} == {written[k]["proposal"] for k in vis}
        check_text("context_block", store.context_block(viewer))
        check_text("memory_md", store.memory_md(viewer))
        check_text("snapshot", store.snapshot(viewer, latest_input="tea drink"))
        prof = store.get_profile(viewer)
        assert prof.fields == {"name": f"name_{viewer.user_id}"}
        for k, w in written.items():
            if k in vis:
                continue
            check_text(
                "search marker",
                json.dumps([h.record.content for h in store.search(viewer, marker(*k, "rec"))]),
            )
            rid, pid = w["record"], w["proposal"]
            with pytest.raises(NotFoundError):
                store.get_record(viewer, rid)
            with pytest.raises(NotFoundError):
                store.replace(viewer, rid, "hijack", base_version=1)
            with pytest.raises(NotFoundError):
                store.remove(viewer, rid, base_version=1)
            with pytest.raises(NotFoundError):
                store.reinforce(viewer, rid)
            with pytest.raises(NotFoundError):
                store.propose(viewer, "remove", {}, target_id=rid)
            with pytest.raises(NotFoundError):
                store.get_proposal(viewer, pid)
            with pytest.raises(NotFoundError):
                store.decide(viewer, pid, "approve")
    # nothing was changed by the refused calls
    owner0 = writers[0]
    assert all(r.version == 1 for r in store.list_records(owner0, include_inactive=True))
    assert all(p.status == "pending" for p in store.list_pending(owner0))
