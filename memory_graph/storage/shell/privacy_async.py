"""The async store's privacy methods: erasure, retention sweep and guard-block statistics.

Mixed into :class:`~memory_graph.AsyncMemoryStore` (generated into ``PrivacyMethods`` of the
sync store); the ops are in :mod:`..ops.privacy`, the shared steps in :mod:`.privacy`.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Any

from ...identity import Owner
from ...validate import owner as check_owner
from ..ops import privacy as PV
from ..ops.threads import user_threads_op
from .base_async import AsyncStoreShell
from .privacy import DAY, as_owner, saver_adelete, sweep_plan

__all__ = ["AsyncPrivacyMethods"]

_log = logging.getLogger("memory_graph.privacy")


class AsyncPrivacyMethods(AsyncStoreShell):
    """Erasure and retention."""

    async def forget_user(self, user: Owner | str, *, checkpointer: Any = None) -> PV.ForgetReport:
        """Erase a user everywhere (right to erasure): every workspace and agent of the user.

        Deletes, in one transaction, every row of the user's scope in every ``mg_*`` table
        (records, preferences, profile, persona overrides, proposals, grants, rejection memory,
        recall stamps and pool statistics, embeddings, audit content, thread owners) and
        the user's LangGraph threads (checkpoints, blobs, writes) found through the thread
        owners, when the checkpoint tables are in this database. The audit table keeps one
        content-free tombstone (scope digest, time, row counts). Other users are untouched.

        Idempotent and resumable: the thread-owner rows go last, in the same transaction, so
        an interrupted erasure is run again with the same call.

        Args:
            user: an :class:`~memory_graph.Owner` (its workspace and agent do not narrow the
                erasure) or a raw user id.
            checkpointer: a LangGraph saver whose storage is elsewhere (another database or
                schema); its ``delete_thread`` is called for each of the user's threads first
                (on the async store its ``adelete_thread``, when that is a coroutine function).

        Returns:
            A :class:`ForgetReport` with the counts.

        Raises:
            ValidationError: ``user`` is not an owner or a non-blank user id.
            ConfigurationError: ``checkpointer`` has no ``delete_thread``.
        """
        owner = as_owner(user)
        if checkpointer is not None:
            delete = saver_adelete(checkpointer)
            for tid in await self._run(user_threads_op(owner), autocommit=True):
                await delete(tid)
        report = await self._run(PV.forget_op(owner.scope_id, now=self._clock()))
        self._known_prefs.forget(owner.scope_id)
        _log.info(
            "forgot user scope %s: %d rows, %d threads",
            report.scope_id,
            report.total,
            report.threads,
        )
        return report

    async def sweep(
        self,
        *,
        proposal_retention: timedelta = 30 * DAY,
        record_retention: timedelta = 30 * DAY,
        audit_retention: timedelta | None = 365 * DAY,
        thread_idle: timedelta | None = None,
        batch_size: int = 1000,
    ) -> PV.SweepReport:
        """Apply retention, in bounded batches (safe next to traffic and from cron).

        In order: finalize pending proposals past their expiry as ``expired`` (with their
        audit rows); delete decided proposals older than ``proposal_retention``; delete records
        removed or expired more than ``record_retention`` ago (their statistics and vectors
        follow); clear the content of audit rows older than
        ``audit_retention``; delete checkpoint threads of this database idle longer than
        ``thread_idle`` and their thread-owner rows (a claim whose checkpoints are not in this
        database is never swept: nothing proves it idle). Each batch is one short
        transaction that skips rows locked by live transactions (``FOR UPDATE SKIP
        LOCKED``); they are handled by the next run.

        Args:
            proposal_retention: keep decided proposals this long after their decision.
            record_retention: keep removed/expired records this long.
            audit_retention: keep audit content this long (``None``: forever).
            thread_idle: delete threads idle this long (``None``: keep threads).
            batch_size: rows per transaction (1..100000).

        Returns:
            A :class:`SweepReport` with the counts.

        Raises:
            ValidationError: a period is not a non-negative ``timedelta``, or a bad batch size.
        """
        n, steps = sweep_plan(
            self._clock(),
            proposal_retention,
            record_retention,
            audit_retention,
            thread_idle,
            batch_size,
        )
        counts: dict[str, int] = {}
        batches = 0
        for name, make in steps:
            while True:
                done = await self._run(make(n))
                batches += 1
                counts[name] = counts.get(name, 0) + done
                if done < n:
                    break
        report = PV.SweepReport(**counts, batches=batches)
        _log.info("sweep: %s", report)
        return report

    async def note_blocked(
        self, owner: Owner, categories: Mapping[str, int], *, thread_id: str | None = None
    ) -> bool:
        """Record guard blocks by category as one content-free audit row (``guard``/``block``).

        The extraction node calls it for the candidates the guard refused, so
        :meth:`audit_summary` (and ``memory-graph stats``) can count blocks over time. Only
        category names and counts are stored, never the blocked text.

        Returns:
            ``True`` if a row was written (``False`` when every count is zero).

        Raises:
            ValidationError: a category name is not lowercase ASCII (at most 64 characters),
                a count is not an integer in 0..1000000, or ``thread_id`` is malformed.
        """
        check_owner(owner)
        return await self._run(
            PV.note_blocked_op(owner, categories, thread_id=thread_id, now=self._clock())
        )

    async def audit_summary(
        self, owner: Owner, *, since: datetime, by: str = "day"
    ) -> list[dict[str, Any]]:
        """The owner's audit trail since ``since``, counted per period, kind and action.

        Rows are ``{"period": date, "target_kind", "action", "n"}``, oldest first: writes
        (``record``/``preference``/``profile`` actions), decisions (``proposal`` with
        ``approved``, ``rejected``, ``expired``, ``conflicted``), guard blocks per category
        (``guard`` with ``block:<category>``) and erasures. No content is returned.

        Raises:
            ValidationError: ``by`` is not ``day``, ``week`` or ``month``, or ``since`` is
                not a timezone-aware datetime.
        """
        check_owner(owner)
        return await self._run(PV.audit_summary_op(owner, since=since, by=by), autocommit=True)
