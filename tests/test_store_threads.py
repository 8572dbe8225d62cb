"""Thread owners (issue 8 §2): the principal that started a thread is the only one to use it."""

from __future__ import annotations

import pytest

from memory_graph import Owner, ThreadOwnerError, ValidationError

ALICE = Owner("alice", workspace="w1", agent="a1")


def test_first_claim_records_the_owner_and_repeats_are_idempotent(store) -> None:
    assert store.check_thread(ALICE, "t-1") is False
    assert store.claim_thread(ALICE, "t-1") is True
    assert store.claim_thread(ALICE, "t-1") is False
    assert store.check_thread(ALICE, "t-1") is True
    assert store.list_threads(ALICE) == ["t-1"]


@pytest.mark.parametrize(
    "other",
    [
        Owner("bob", workspace="w1", agent="a1"),
        Owner("alice", workspace="w2", agent="a1"),
        Owner("alice", workspace="w1", agent="a2"),
        Owner("alice"),
    ],
)
def test_another_principal_is_refused_without_learning_the_owner(store, other) -> None:
    store.claim_thread(ALICE, "t-1")
    for call in (store.claim_thread, store.check_thread):
        with pytest.raises(ThreadOwnerError) as info:
            call(other, "t-1")
        assert "alice" not in str(info.value) and "w1" not in str(info.value)
    assert store.list_threads(other) == ([] if other.user_id != "alice" else ["t-1"])


@pytest.mark.parametrize("bad", ["", "   ", "a\x00b", "\ud800", 123, None, "x" * 600])
def test_hostile_thread_ids_are_validation_errors(store, bad) -> None:
    with pytest.raises(ValidationError):
        store.claim_thread(ALICE, bad)
    assert store.list_threads(ALICE) == []


def test_list_threads_spans_workspaces_and_agents_of_one_user(store) -> None:
    store.claim_thread(ALICE, "t-1")
    store.claim_thread(Owner("alice", workspace="w2"), "t-2")
    store.claim_thread(Owner("bob"), "t-3")
    assert store.list_threads(Owner("alice")) == ["t-1", "t-2"]
    assert store.list_threads(Owner("bob")) == ["t-3"]
