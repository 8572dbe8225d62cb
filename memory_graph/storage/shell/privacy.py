"""The privacy methods' shared steps: argument checks, saver calls and the sweep plan.

The methods themselves (``forget_user``, ``sweep``, ``note_blocked``, ``audit_summary``) are
in ``privacy_async.py`` (``AsyncPrivacyMethods``, mixed into the async store), generated
into ``privacy_sync.py`` (``PrivacyMethods``) by ``tools/unasync.py``; both drive the ops of
:mod:`~memory_graph.storage.ops.privacy`.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from datetime import datetime, timedelta
from typing import Any

from ...errors import ConfigurationError, ValidationError
from ...identity import Owner
from ..driver import Op
from ..ops import privacy as PV

__all__ = ["DAY", "as_owner", "saver_adelete", "saver_delete", "sweep_plan"]

DAY = timedelta(days=1)


def as_owner(user: object) -> Owner:
    """``user`` as an owner: an :class:`Owner` as is, a user id string as ``Owner(user)``."""
    if isinstance(user, Owner):
        return user
    if isinstance(user, str):
        return Owner(user)
    raise ValidationError("user must be a memory_graph.Owner or a user id string")


def saver_delete(checkpointer: Any) -> Callable[[str], Any]:
    """The saver's ``delete_thread``.

    Raises:
        ConfigurationError: ``checkpointer`` has no ``delete_thread``.
    """
    delete: Callable[[str], Any] | None = getattr(checkpointer, "delete_thread", None)
    if not callable(delete):
        raise ConfigurationError("checkpointer must be a LangGraph saver with delete_thread()")
    return delete


def saver_adelete(checkpointer: Any) -> Callable[[str], Awaitable[Any]]:
    """The saver's thread deletion for the async store: its ``adelete_thread`` when that is
    a coroutine function, else its ``delete_thread``, called directly.

    Raises:
        ConfigurationError: ``checkpointer`` has no ``delete_thread``.
    """
    delete = saver_delete(checkpointer)
    adelete = getattr(checkpointer, "adelete_thread", None)
    if inspect.iscoroutinefunction(adelete):
        return adelete  # type: ignore[no-any-return]

    async def run(thread_id: str) -> Any:
        return delete(thread_id)

    return run


def sweep_plan(
    now: datetime,
    proposal_retention: object,
    record_retention: object,
    audit_retention: object,
    thread_idle: object,
    batch_size: object,
) -> tuple[int, list[tuple[str, Callable[[int], Op[int]]]]]:
    """The validated batch size and the sweep's steps (report field, batch op factory)."""
    props = PV.retention("proposal_retention", proposal_retention)
    records = PV.retention("record_retention", record_retention)
    audit = PV.retention("audit_retention", audit_retention, optional=True)
    idle = PV.retention("thread_idle", thread_idle, optional=True)
    n = PV.sweep_batch_size(batch_size)
    assert props is not None and records is not None
    steps: list[tuple[str, Callable[[int], Op[int]]]] = [
        ("expired_proposals", lambda k: PV.expire_proposals_op(now=now, limit=k)),
        ("deleted_proposals", lambda k: PV.purge_proposals_op(before=now - props, limit=k)),
        ("deleted_records", lambda k: PV.purge_records_op(before=now - records, limit=k)),
    ]
    if audit is not None:
        steps.append(("trimmed_audit", lambda k: PV.trim_audit_op(before=now - audit, limit=k)))
    if idle is not None:
        steps.append(("deleted_threads", lambda k: PV.sweep_threads_op(before=now - idle, limit=k)))
    return n, steps
