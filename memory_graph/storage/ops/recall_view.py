"""The views of an owner's recall pool: its entries (record and ranking document) and, per
set of sensitivities, the index, kind and trust lists, expiries and thread places
(:class:`_View`), built from the entries or derived from the previous pool's view after a
write (see :mod:`.recall_cache`). No I/O.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right, insort
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace
from datetime import datetime
from sys import intern
from typing import Any, NamedTuple

from ...recall.candidates import PoolIndex
from ...recall.model import Document
from ...recall.tokenize import index_tokens
from ...types import Record

__all__: list[str] = []  # package-private: ops/recall_cache.py is its one reader


class _Entry(NamedTuple):
    record: Record
    doc: Document


def _document(record: Record) -> Document:
    """The ranking document of a record (its key, content and knowledge are indexed).

    Its tokens are interned: an owner's records share most of their words, so a pool holds
    each distinct token once (the prepared documents and postings key on the same objects).
    """
    scope = record.identity.scope_id
    return Document(
        id=record.id,
        tokens=tuple(map(intern, index_tokens(record.content, record.knowledge, record.key))),
        text=record.content,
        trust=record.trust,
        confidence=record.confidence,
        precedence=record.identity.precedence,
        dedup_key=f"{record.content_hash}|{record.knowledge!r}",
        sensitive=record.sensitivity == "sensitive",
        cache_key=f"{scope}|{record.id}|{record.version}|{record.content_hash}|{record.key}",
        time=(record.provenance.observed_at or record.created_at).timestamp(),
    )


class _View:
    """The active records of some sensitivities: their index, entries and thread places.

    Built from the chosen entries (in id order), or derived from the previous pool's view
    by applying the changed records (:meth:`derived`): the cost of a write's next recall
    then follows the changed records, not the pool.
    """

    __slots__ = ("_trust_n", "by_kind", "entries", "expiry", "index", "kinds", "threads", "trusts")

    def __init__(self, chosen: Sequence[_Entry], previous: _View | None = None) -> None:
        # Thread neighbours: a thread's records in order of observation (then creation, id).
        threads: dict[str, list[int]] = {}
        for pos, e in enumerate(chosen):
            if e.record.provenance.thread_id:
                threads.setdefault(e.record.provenance.thread_id, []).append(pos)
        entries = list(chosen)
        self.threads: dict[str, tuple[str, ...]] = {}
        for thread, members in threads.items():
            members.sort(key=lambda pos: _order(entries[pos].record))
            for seq, pos in enumerate(members):
                e = entries[pos]
                entries[pos] = _Entry(e.record, replace(e.doc, thread=thread, seq=seq))
            self.threads[thread] = tuple(entries[pos].record.id for pos in members)
        # After a write the previous view's index is updated, not rebuilt: records that
        # stay keep their positions and prepared documents (see PoolIndex.updated).
        docs = [e.doc for e in entries]
        index = PoolIndex(docs) if previous is None else previous.index.updated(docs)
        # Entries by index position; a removed record's position keeps a stale entry that
        # no posting, thread place, kind list or expiry list refers to.
        size = len(index.prepared)
        by_pos = list(previous.entries[:size]) if previous is not None else []
        if entries and len(by_pos) < size:
            by_pos.extend([entries[0]] * (size - len(by_pos)))
        where = [index.position(e.doc.id) for e in entries]
        for pos, e in zip(where, entries, strict=True):
            by_pos[pos] = e
        self.index: PoolIndex = index
        self.entries: list[_Entry] = by_pos
        self.by_kind: dict[str, list[int]] = {}
        for pos, e in sorted(zip(where, entries, strict=True), key=lambda pe: pe[0]):
            self.by_kind.setdefault(e.record.kind, []).append(pos)
        self.kinds = frozenset(self.by_kind)
        self._trust_n: dict[str, int] = {}
        for e in entries:
            self._trust_n[e.record.trust] = self._trust_n.get(e.record.trust, 0) + 1
        self.trusts = frozenset(self._trust_n)
        # Records with an expiry, soonest first: a recall finds the expired ones by bisection.
        self.expiry: list[tuple[datetime, int]] = sorted(
            (e.record.expires_at, pos)
            for pos, e in zip(where, entries, strict=True)
            if e.record.expires_at is not None
        )

    @classmethod
    def derived(
        cls,
        prev: _View,
        pool: Mapping[str, _Entry],
        sensitivities: Sequence[str],
        changed: Iterable[str],
    ) -> _View | None:
        """``prev`` after the records ``changed`` (ids added, rewritten or gone) took their
        state in ``pool``: the same view a build over the pool gives (same rankings, kinds,
        trusts, expiries and thread places), at the cost of the changed records and their
        threads; ``None`` when the index must be built afresh (see PoolIndex.changed).
        """
        old_index = prev.index
        old: dict[str, _Entry] = {}
        new: dict[str, _Entry] = {}
        for rid in changed:
            pos = old_index.find(rid)
            if pos is not None:
                old[rid] = prev.entries[pos]
            e = pool.get(rid)
            if e is not None and e.record.sensitivity in sensitivities:
                new[rid] = e
        # Threads the change touches are ordered again; their other members may move.
        touched = {
            t for e in (*old.values(), *new.values()) if (t := e.record.provenance.thread_id)
        }
        threads = dict(prev.threads)
        put: dict[str, _Entry] = dict(new)
        for thread in touched:
            members = [
                prev.entries[old_index.position(rid)]
                for rid in prev.threads.get(thread, ())
                if rid not in old and rid not in new
            ]
            members += [e for e in new.values() if e.record.provenance.thread_id == thread]
            members.sort(key=lambda e: _order(e.record))
            if members:
                threads[thread] = tuple(e.record.id for e in members)
            else:
                threads.pop(thread, None)
            for seq, e in enumerate(members):
                if e.doc.thread != thread or e.doc.seq != seq:
                    put[e.record.id] = _Entry(e.record, replace(e.doc, thread=thread, seq=seq))
        gone = [rid for rid in old if rid not in new]
        index = old_index.changed([e.doc for e in put.values()], gone)
        if index is None:
            return None
        view = cls.__new__(cls)
        view.index = index
        view.threads = threads
        entries = list(prev.entries)
        by_kind = dict(prev.by_kind)
        trust_n = dict(prev._trust_n)
        expiry = list(prev.expiry)
        copied: set[str] = set()

        def kind_list(kind: str) -> list[int]:
            if kind not in copied:
                copied.add(kind)
                by_kind[kind] = list(by_kind.get(kind, ()))
            return by_kind[kind]

        for rid, e in old.items():  # the old state of every changed record leaves
            pos = old_index.position(rid)
            r = e.record
            positions = kind_list(r.kind)
            del positions[bisect_left(positions, pos)]
            trust_n[r.trust] -= 1
            if r.expires_at is not None:
                del expiry[bisect_left(expiry, (r.expires_at, pos))]
        for rid, e in put.items():
            pos = index.position(rid)
            if pos >= len(entries):
                entries.extend([e] * (pos + 1 - len(entries)))
            entries[pos] = e
            if rid not in new:
                continue  # a thread member that only moved
            r = e.record
            insort(kind_list(r.kind), pos)
            trust_n[r.trust] = trust_n.get(r.trust, 0) + 1
            if r.expires_at is not None:
                insort(expiry, (r.expires_at, pos))
        view.entries = entries
        view.by_kind = {k: v for k, v in by_kind.items() if v}
        view.kinds = frozenset(view.by_kind)
        view._trust_n = {t: n for t, n in trust_n.items() if n}
        view.trusts = frozenset(view._trust_n)
        view.expiry = expiry
        return view

    def allow(
        self, kinds: frozenset[str], trusts: frozenset[str], at: datetime
    ) -> Callable[[int], bool] | None:
        """Which positions a recall may return: of these kinds and trusts, unexpired at
        ``at``; ``None`` when that is every position (the common case: no per-document test).
        """
        expiry = self.expiry
        dead = frozenset(pos for _at, pos in expiry[: bisect_right(expiry, (at, _NO_POS))])
        if self.kinds <= kinds and self.trusts <= trusts:
            return None if not dead else (lambda pos: pos not in dead)
        entries = self.entries

        def allow(pos: int) -> bool:
            r = entries[pos].record
            return r.kind in kinds and r.trust in trusts and pos not in dead

        return allow


_NO_POS = 1 << 62
"""Above every position: ``(at, _NO_POS)`` sorts after every expiry at ``at``."""


def _order(record: Record) -> tuple[Any, ...]:
    return (record.provenance.observed_at or record.created_at, record.created_at, record.id)
