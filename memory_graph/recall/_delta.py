"""Stage 9 (the index's delta path): an index's parts and changed documents -> new parts.

The delta path of :meth:`~.candidates.PoolIndex.changed`: an index's parts after some
documents were put and some removed, at the cost of those documents and their terms'
postings (no walk over the pool). Pure.

Tie keys (a position's place in the id order of the documents) are :data:`_GAP` apart in a
build, so a new document takes a key between its neighbours' without renumbering the
others; when no key is free between them the caller builds afresh.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from typing import NamedTuple

from .documents import Prepared, prepare
from .model import Document, RankParams

_GAP = 1 << 20
"""Tie keys of a build are this far apart."""

_Raw = dict[str, tuple[list[int], list[int]]]


class Base(NamedTuple):
    """The parts of an index a delta starts from (never modified)."""

    params: RankParams
    prepared: Sequence[Prepared]
    key: Sequence[int]
    where: Mapping[str, int]
    ids: Sequence[str]
    raw: Mapping[str, tuple[list[int], list[int]]]
    df: Mapping[str, int]
    place: Mapping[tuple[str, int], int]
    total: int
    counted: int
    removed: int


class Parts(NamedTuple):
    """An index's parts after a delta (new objects; the base is left as it was)."""

    prepared: list[Prepared]
    key: list[int]
    where: dict[str, int]
    ids: list[str]
    raw: _Raw
    df: dict[str, int]
    place: dict[tuple[str, int], int]
    total: int
    counted: int
    removed: int


class Tally:
    """The statistics of a pool whose documents change: document frequencies, total length
    and document count, and which positions each term lost (``gone``) and gained (``came``,
    with the term's count there), so that only those terms' postings are rebuilt."""

    def __init__(self, df: Mapping[str, int], total: int, counted: int) -> None:
        self.df = dict(df)
        self.total = total
        self.counted = counted
        self.gone: dict[str, list[int]] = {}
        self.came: dict[str, list[tuple[int, int]]] = {}

    def drop(self, pos: int, p: Prepared) -> None:
        """The document ``p`` at ``pos`` leaves the pool."""
        df = self.df
        self.total, self.counted = self.total - p.dl, self.counted - 1
        for term in p.counts:
            left = df[term] - 1
            if left:
                df[term] = left
            else:
                del df[term]
            self.gone.setdefault(term, []).append(pos)

    def add(self, pos: int, p: Prepared) -> None:
        """The document ``p`` joins the pool at ``pos``."""
        df = self.df
        self.total, self.counted = self.total + p.dl, self.counted + 1
        for term, tf in p.counts.items():
            df[term] = df.get(term, 0) + 1
            self.came.setdefault(term, []).append((pos, tf))

    def terms(self) -> set[str]:
        """The terms whose postings changed."""
        return self.gone.keys() | self.came.keys()


def apply_delta(base: Base, put: Sequence[Document], removed: Iterable[str]) -> Parts | None:
    """``base`` after ``put`` (new documents, or new versions by id) and ``removed`` (ids);
    ``None`` when many positions would be dead or no tie key is free for a new document."""
    params = base.params
    ids = list(base.ids)
    where = dict(base.where)
    prepared = list(base.prepared)
    key = list(base.key)
    place = dict(base.place)
    removed_n = base.removed
    tally = Tally(base.df, base.total, base.counted)
    add = tally.add

    def drop(pos: int, p: Prepared) -> None:
        tally.drop(pos, p)
        if p.doc.thread and place.get((p.doc.thread, p.doc.seq)) == pos:
            del place[(p.doc.thread, p.doc.seq)]

    for rid in removed:
        pos = where.pop(rid, None)
        if pos is not None:
            drop(pos, prepared[pos])
            del ids[bisect_left(ids, rid)]
            removed_n += 1
    moved: list[int] = []  # positions whose thread place may have changed
    for doc in put:
        pos = where.get(doc.id)
        if pos is None:
            i = bisect_left(ids, doc.id)
            lo = key[where[ids[i - 1]]] if i > 0 else None
            hi = key[where[ids[i]]] if i < len(ids) else None
            lo = lo if lo is not None else (hi - 2 * _GAP if hi is not None else 0)
            hi = hi if hi is not None else lo + 2 * _GAP
            label = (lo + hi) // 2
            if not lo < label < hi:
                return None
            pos = len(prepared)
            prepared.append(prepare(doc, params))
            key.append(label)
            ids.insert(i, doc.id)
            where[doc.id] = pos
            add(pos, prepared[pos])
        else:
            old = prepared[pos]
            if old.doc is doc:
                continue
            if doc.cache_key is not None and doc.cache_key == old.doc.cache_key:
                if old.doc.thread and place.get((old.doc.thread, old.doc.seq)) == pos:
                    del place[(old.doc.thread, old.doc.seq)]
                prepared[pos] = old if old.doc == doc else replace(old, doc=doc)
            else:
                drop(pos, old)
                prepared[pos] = prepare(doc, params)
                add(pos, prepared[pos])
        moved.append(pos)
    for pos in moved:
        doc = prepared[pos].doc
        if doc.thread:
            place[(doc.thread, doc.seq)] = pos
    if removed_n > max(64, len(where) // 4):
        return None  # many dead positions: the caller builds afresh
    raw = dict(base.raw)
    by_key = key.__getitem__
    for term in tally.terms():
        plist, flist = raw.get(term, ([], []))
        plist, flist = list(plist), list(flist)
        for pos in tally.gone.get(term, ()):
            i = bisect_left(plist, key[pos], key=by_key)
            del plist[i], flist[i]
        for pos, tf in tally.came.get(term, ()):
            i = bisect_left(plist, key[pos], key=by_key)
            plist.insert(i, pos)
            flist.insert(i, tf)
        if plist:
            raw[term] = (plist, flist)
        else:
            raw.pop(term, None)
    return Parts(
        prepared, key, where, ids, raw, tally.df, place, tally.total, tally.counted, removed_n
    )
