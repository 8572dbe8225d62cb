"""plan_writes: merging candidates with stored state, purely."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from memory_graph.extraction import Candidate, PlannedWrite, plan_writes
from memory_graph.extraction._merge import content_hash


def cand(
    kind: Any = "preference",
    key: str | None = None,
    value: str | None = None,
    content: str | None = None,
    *,
    action: Any = "set",
    event: str = "m1",
    quote: str = "the user's words",
) -> Candidate:
    return Candidate(
        kind=kind,
        action=action,
        key=key,
        value=value,
        content=content,
        quote=quote,
        message_index=0,
        source_event_id=event,
        thread_id="t1",
    )


def only(plan: list[PlannedWrite]) -> PlannedWrite:
    assert len(plan) == 1
    return plan[0]


def test_new_preference_is_set_preference() -> None:
    w = only(plan_writes([cand(key="reply.length", value="short")]))
    assert (w.operation, w.status, w.target_id) == ("set_preference", "planned", "reply.length")
    assert w.args == {"key": "reply.length", "value": "short"}
    assert w.evidence == {"quote": "the user's words", "source_event_id": "m1", "thread_id": "t1"}
    assert "(none)" in w.diff and "short" in w.diff


def test_same_key_same_value_is_unchanged() -> None:
    plan = plan_writes(
        [cand(key="reply.length", value="short")], preferences={"reply.length": "short"}
    )
    assert only(plan).status == "unchanged"
    assert plan.writes == [] and len(plan.unchanged) == 1


def test_changed_value_shows_the_old_value() -> None:
    w = only(
        plan_writes([cand(key="tools.editor", value="vim")], preferences={"tools.editor": "emacs"})
    )
    assert w.operation == "set_preference" and w.status == "planned"
    assert '"emacs" -> "vim"' in w.diff


def test_expiry_is_carried_as_utc_text() -> None:
    c = Candidate(
        "preference",
        "set",
        "reply.length",
        "short",
        None,
        "q",
        0,
        "m1",
        "t1",
        expires_at=datetime(2026, 5, 1, tzinfo=timezone.utc),
    )
    w = only(plan_writes([c], preferences={"reply.length": "short"}))
    assert w.status == "planned"  # a new expiry is a difference
    assert w.args["expires_at"] == "2026-05-01T00:00:00Z"


def test_preference_retraction() -> None:
    retract = cand(key="tools.editor", value="vim", action="retract")
    w = only(plan_writes([retract], preferences={"tools.editor": "vim"}))
    assert (w.operation, w.status, w.args) == (
        "delete_preference",
        "planned",
        {"key": "tools.editor"},
    )
    assert "(deleted)" in w.diff
    assert only(plan_writes([retract])).status == "unchanged"
    assert only(plan_writes([retract], preferences={"tools.editor": "emacs"})).status == "unchanged"


def test_profile_statements_patch_only_their_fields() -> None:
    plan = plan_writes(
        [
            cand("fact", "profile.call_them", "Sam", event="m1"),
            cand("fact", "profile.occupation", "nurse", event="m1"),
            cand("fact", "profile.timezone", "UTC+8", event="m2"),
        ],
        profile={"call_them": "Sammy", "timezone": "UTC+8", "name": "Samantha"},
    )
    ops = [(w.operation, w.status, w.args) for w in plan]
    assert ops == [
        ("patch_profile", "planned", {"patch": {"call_them": "Sam", "occupation": "nurse"}}),
        ("patch_profile", "unchanged", {"patch": {"timezone": "UTC+8"}}),
    ]
    assert '"Sammy" -> "Sam"' in plan[0].diff


def test_profile_retraction_deletes_the_field_only_when_it_matches() -> None:
    retract = cand("fact", "profile.call_them", "Sammy", action="retract")
    w = only(plan_writes([retract], profile={"call_them": "Sammy"}))
    assert w.args == {"patch": {"call_them": None}} and w.status == "planned"
    assert only(plan_writes([retract], profile={"call_them": "Sam"})).status == "unchanged"


def test_unknown_profile_field_is_ignored() -> None:
    assert plan_writes([cand("fact", "profile.shoe_size", "42")]) == []
    custom = plan_writes(
        [cand("fact", "profile.shoe_size", "42")], profile_fields=("name", "shoe_size")
    )
    assert only(custom).args == {"patch": {"shoe_size": "42"}}


def test_new_fact_is_add_and_repeat_is_reinforced() -> None:
    fact = cand("fact", content="I prefer tabs over spaces")
    w = only(plan_writes([fact]))
    assert (w.operation, w.args, w.target_id) == (
        "add",
        {"kind": "fact", "content": "I prefer tabs over spaces"},
        None,
    )
    stored = [("rec-1", 3, "I prefer tabs over spaces", content_hash("I prefer tabs over spaces"))]
    again = only(plan_writes([fact], records=stored))
    assert (again.status, again.target_id, again.base_version) == ("reinforced", "rec-1", 3)
    assert plan_writes([fact], records=stored).writes == []


def test_repeat_inside_one_batch_adds_once() -> None:
    plan = plan_writes([cand("fact", content="I like tea"), cand("fact", content="I like tea")])
    assert [w.status for w in plan] == ["planned", "unchanged"]


def test_fact_retraction_removes_with_base_version() -> None:
    stored = [("rec-7", 2, "I work remotely", content_hash("I work remotely"))]
    w = only(
        plan_writes([cand("fact", content="I work remotely", action="retract")], records=stored)
    )
    assert (w.operation, w.target_id, w.base_version, w.args) == ("remove", "rec-7", 2, {})
    assert '- "I work remotely"' in w.diff


def test_idempotency_key_is_deterministic_and_event_bound() -> None:
    a = only(plan_writes([cand(key="reply.length", value="short", event="m1")]))
    b = only(plan_writes([cand(key="reply.length", value="short", event="m1")]))
    c = only(plan_writes([cand(key="reply.length", value="short", event="m2")]))
    d = only(plan_writes([cand(key="reply.length", value="long", event="m1")]))
    assert a.idempotency_key == b.idempotency_key
    assert len({a.idempotency_key, c.idempotency_key, d.idempotency_key}) == 3


def test_later_candidates_see_earlier_ones() -> None:
    plan = plan_writes(
        [
            cand(key="tools.editor", value="vim", event="m1"),
            cand(key="tools.editor", value="vim", event="m2"),
            cand(key="tools.editor", value="vim", action="retract", event="m3"),
        ]
    )
    assert [(w.operation, w.status) for w in plan] == [
        ("set_preference", "planned"),
        ("set_preference", "unchanged"),
        ("delete_preference", "planned"),
    ]


def test_planned_writes_are_plain_json() -> None:
    import json

    plan = plan_writes(
        [cand(key="reply.length", value="short"), cand("fact", content="I like tea")]
    )
    text = json.dumps([w.to_json() for w in plan])
    assert "reply.length" in text


def test_accepts_store_objects() -> None:
    class Pref:
        def __init__(self, key: str, value: str) -> None:
            self.key, self.value, self.overridden = key, value, False

    class Prof:
        fields = {"call_them": "Sam"}

    plan = plan_writes(
        [cand(key="reply.length", value="short"), cand("fact", "profile.call_them", "Sam")],
        preferences=[Pref("reply.length", "short")],
        profile=Prof(),
    )
    assert [w.status for w in plan] == ["unchanged", "unchanged"]
