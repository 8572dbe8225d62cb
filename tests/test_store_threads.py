"""Thread owners (issue 8 §2, issue 25 §4): the principal that started a thread is the only one
to use it; claims live per checkpointer space; listings show the principal's visible identities."""

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
    # Only the principal's visible identities list it: not another user, workspace or agent,
    # nor the user level (which sees user-level threads only).
    assert store.list_threads(other) == []


@pytest.mark.parametrize("bad", ["", "   ", "a\x00b", "\ud800", 123, None, "x" * 600])
def test_hostile_thread_ids_are_validation_errors(store, bad) -> None:
    with pytest.raises(ValidationError):
        store.claim_thread(ALICE, bad)
    assert store.list_threads(ALICE) == []


def test_list_threads_shows_only_the_visible_identities(store) -> None:
    # Hostile: the same user in another workspace or agent must not learn the thread ids
    # (often titles or ticket numbers) the others started.
    user, w2, a2 = Owner("alice"), Owner("alice", workspace="w2"), Owner("alice", agent="a2")
    store.claim_thread(user, "t-user")
    store.claim_thread(ALICE, "t-w1-a1")
    store.claim_thread(w2, "t-w2")
    store.claim_thread(a2, "t-a2")
    store.claim_thread(Owner("alice", workspace="w1"), "t-w1")
    store.claim_thread(Owner("bob"), "t-bob")
    assert store.list_threads(user) == ["t-user"]
    assert store.list_threads(ALICE) == ["t-user", "t-w1", "t-w1-a1"]  # same clock: by id
    assert store.list_threads(w2) == ["t-user", "t-w2"]
    assert store.list_threads(a2) == ["t-a2", "t-user"]
    assert store.list_threads(Owner("ALICE ", workspace="W2")) == ["t-user", "t-w2"]
    assert store.list_threads(Owner("bob")) == ["t-bob"]
    assert store.list_threads(Owner("bob", workspace="w2")) == ["t-bob"]


def test_a_claim_lives_in_its_checkpointer_space(store) -> None:
    # Two applications with their own in-memory savers on one memory database: thread "1"
    # in each is a different thread. Within one space a thread id has one owner.
    bob = Owner("bob")
    assert store.claim_thread(ALICE, "1", space="mem:app-a") is True
    assert store.claim_thread(bob, "1", space="mem:app-b") is True
    assert store.claim_thread(bob, "1") is True  # the database space
    for space in ("mem:app-a", ""):
        with pytest.raises(ThreadOwnerError):
            store.claim_thread(ALICE if space == "" else bob, "1", space=space)
    assert store.check_thread(ALICE, "1", space="mem:app-a") is True
    assert store.check_thread(ALICE, "1", space="mem:app-c") is False
    assert store.list_threads(ALICE) == ["1"] and store.list_threads(bob) == ["1"]


@pytest.mark.parametrize("bad", ["a\x00b", "\ud800", 7, None, b"mem", "x" * 300, " "])
def test_hostile_spaces_are_validation_errors(store, bad) -> None:
    with pytest.raises(ValidationError):
        store.claim_thread(ALICE, "t-1", space=bad)
    assert store.list_threads(ALICE) == []
