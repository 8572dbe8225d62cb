"""Thread owners: the principal that started a LangGraph thread (issue 8 §2).

The first turn of a thread claims it for its principal (user scope, workspace, agent) in one
statement; every later invoke, stream, resume or review read checks the claim first. A thread
id of another principal raises :class:`~memory_graph.errors.ThreadOwnerError`, which never says
who owns it. The same rows let a user's threads be found (and erased with their checkpoints).
"""

from __future__ import annotations

from datetime import datetime

from ...errors import ThreadOwnerError
from ...identity import Owner
from ...validate import text
from ..driver import Op, Query

__all__ = ["THREAD_ID_BYTES", "claim_thread_op", "list_threads_op", "thread_id"]

THREAD_ID_BYTES = 512


def thread_id(value: object) -> str:
    """Validate a thread id: a non-blank ``str`` of at most 512 UTF-8 bytes, no NUL/surrogate."""
    return text("thread_id", value, max_bytes=THREAD_ID_BYTES)


def claim_thread_op(owner: Owner, thread: str, *, claim: bool, now: datetime) -> Op[bool]:
    """Check (and with ``claim``, record) that ``owner`` is the principal of ``thread``.

    Returns:
        ``True`` when the thread is (now) owned by ``owner``; ``False`` when it has no owner
        yet and ``claim`` is false.

    Raises:
        ThreadOwnerError: another principal started the thread.
    """
    tid = thread_id(thread)
    mine = (owner.scope_id, owner.agent_key, owner.workspace_key)
    if claim:
        row = yield Query(
            "WITH ins AS (INSERT INTO mg_threads "
            "(scope_id, thread_id, agent_key, workspace_key, created_at) "
            "VALUES (%s, %s, %s, %s, %s) ON CONFLICT DO NOTHING "
            "RETURNING scope_id, agent_key, workspace_key) "
            "SELECT scope_id, agent_key, workspace_key FROM ins UNION ALL "
            "SELECT scope_id, agent_key, workspace_key FROM mg_threads WHERE thread_id = %s "
            "LIMIT 1",
            (*mine[:1], tid, *mine[1:], now, tid),
            fetch="one",
        )
    else:
        row = yield Query(
            "SELECT scope_id, agent_key, workspace_key FROM mg_threads WHERE thread_id = %s",
            (tid,),
            fetch="one",
        )
    if row is None:
        if claim:  # lost a race to a concurrent claim that has not committed yet: re-read
            row = yield Query(
                "SELECT scope_id, agent_key, workspace_key FROM mg_threads WHERE thread_id = %s",
                (tid,),
                fetch="one",
            )
        if row is None:
            return False
    if (row["scope_id"], row["agent_key"], row["workspace_key"]) != mine:
        raise ThreadOwnerError(
            "this thread was started by another user, workspace or agent: use a new thread id"
        )
    return True


def list_threads_op(owner: Owner) -> Op[list[str]]:
    """Every thread id started by ``owner``'s user, in any workspace or agent (oldest first)."""
    rows = yield Query(
        "SELECT thread_id FROM mg_threads WHERE scope_id = %s ORDER BY created_at, thread_id",
        (owner.scope_id,),
    )
    return [r["thread_id"] for r in rows]
