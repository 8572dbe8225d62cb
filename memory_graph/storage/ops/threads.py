"""Thread owners: the principal that started a LangGraph thread (issue 8 §2, issue 25 §4).

The first turn of a thread claims it for its principal (user scope, workspace, agent) in one
statement; every later invoke, stream, resume or review read checks the claim first. A thread
id of another principal raises :class:`~memory_graph.errors.ThreadOwnerError`, which never says
who owns it. The same rows let a user's threads be found (and erased with their checkpoints).

A claim lives in a **space**: the checkpointer that holds the thread's checkpoints. The space
``""`` (:data:`DATABASE_SPACE`) is every persistent checkpointer memory-graph cannot tell
apart: the checkpoint tables of this database (``open_checkpointer``, the server's
checkpointer) and any other saver, so a thread id there is claimed database-wide and can
never be taken over. An ``InMemorySaver`` claims in a space of its own (``mem:`` and a token
per saver), so two applications on one memory database cannot collide on thread ``"1"``;
a saver may name its space with a ``memory_graph_space`` attribute. Within a space one
thread id has one owner (the unique key ``(space, thread_id)``).
"""

from __future__ import annotations

from datetime import datetime

from ...errors import ThreadOwnerError
from ...identity import Owner
from ...validate import text
from ..driver import Op, Query
from .rows import visible

__all__ = [
    "DATABASE_SPACE",
    "THREAD_ID_BYTES",
    "claim_space",
    "claim_thread_op",
    "list_threads_op",
    "owns_thread_op",
    "thread_claimed_op",
    "thread_id",
    "user_threads_op",
]

THREAD_ID_BYTES = 512
DATABASE_SPACE = ""
"""The claim space of persistent checkpointers (this database's checkpoint tables included)."""

_SPACE_BYTES = 200


def thread_id(value: object) -> str:
    """Validate a thread id: a non-blank ``str`` of at most 512 UTF-8 bytes, no NUL/surrogate."""
    return text("thread_id", value, max_bytes=THREAD_ID_BYTES)


def claim_space(value: object) -> str:
    """Validate a claim space: ``""`` or a string of at most 200 UTF-8 bytes."""
    if value == DATABASE_SPACE:
        return DATABASE_SPACE
    return text("space", value, max_bytes=_SPACE_BYTES)


_OWNER_OF = (
    "SELECT scope_id, agent_key, workspace_key FROM mg_threads WHERE space = %s AND thread_id = %s"
)


def claim_thread_op(
    owner: Owner, thread: str, *, claim: bool, now: datetime, space: str = DATABASE_SPACE
) -> Op[bool]:
    """Check (and with ``claim``, record) that ``owner`` is the principal of ``thread``.

    Returns:
        ``True`` when the thread is (now) owned by ``owner``; ``False`` when it has no owner
        yet and ``claim`` is false.

    Raises:
        ThreadOwnerError: another principal started the thread in this space.
    """
    tid = thread_id(thread)
    sp = claim_space(space)
    mine = (owner.scope_id, owner.agent_key, owner.workspace_key)
    if claim:
        row = yield Query(
            "WITH ins AS (INSERT INTO mg_threads "
            "(scope_id, space, thread_id, agent_key, workspace_key, created_at) "
            "VALUES (%s, %s, %s, %s, %s, %s) ON CONFLICT DO NOTHING "
            "RETURNING scope_id, agent_key, workspace_key) "
            "SELECT scope_id, agent_key, workspace_key FROM ins UNION ALL "
            f"{_OWNER_OF} LIMIT 1",
            (mine[0], sp, tid, *mine[1:], now, sp, tid),
            fetch="one",
        )
    else:
        row = yield Query(_OWNER_OF, (sp, tid), fetch="one")
    if row is None:
        if claim:  # lost a race to a concurrent claim that has not committed yet: re-read
            row = yield Query(_OWNER_OF, (sp, tid), fetch="one")
        if row is None:
            return False
    if (row["scope_id"], row["agent_key"], row["workspace_key"]) != mine:
        raise ThreadOwnerError(
            "this thread was started by another user, workspace or agent: use a new thread id"
        )
    return True


def thread_claimed_op(thread: str, *, space: str = DATABASE_SPACE) -> Op[bool]:
    """Whether anyone has claimed ``thread`` in ``space``."""
    row = yield Query(_OWNER_OF, (claim_space(space), thread_id(thread)), fetch="one")
    return row is not None


def owns_thread_op(owner: Owner, thread: str) -> Op[bool]:
    """Whether ``owner`` (exactly this principal) holds a claim on ``thread`` in any space."""
    row = yield Query(
        "SELECT 1 AS x FROM mg_threads WHERE scope_id = %s AND thread_id = %s "
        "AND agent_key = %s AND workspace_key = %s LIMIT 1",
        (owner.scope_id, thread_id(thread), owner.agent_key, owner.workspace_key),
        fetch="one",
    )
    return row is not None


def list_threads_op(owner: Owner) -> Op[list[str]]:
    """The thread ids started by ``owner``'s visible identities, oldest first.

    The visible identities are those of every other read (:func:`.rows.visible`): the user
    level, and the owner's workspace and agent when it has them; another workspace's or
    agent's threads are not listed. A thread id claimed in two spaces is listed once.
    """
    cond, params = visible(owner)
    rows = yield Query(
        f"SELECT thread_id FROM mg_threads WHERE {cond} "
        "GROUP BY thread_id ORDER BY min(created_at), thread_id",
        params,
    )
    return [r["thread_id"] for r in rows]


def user_threads_op(owner: Owner) -> Op[list[str]]:
    """Every thread id the owner's *user* claimed, in any workspace, agent or space."""
    rows = yield Query(
        "SELECT DISTINCT thread_id FROM mg_threads WHERE scope_id = %s ORDER BY thread_id",
        (owner.scope_id,),
    )
    return [r["thread_id"] for r in rows]
