"""Hash partitioning of the schema: what ``setup(partitions=N)`` creates (no I/O).

The migrations (:mod:`.schema`) stay plain SQL. On a database set up with ``partitions=N``,
``setup()`` applies each one through :func:`partitioned_sql`, which turns every
``CREATE TABLE IF NOT EXISTS mg_x (...)`` into a table ``PARTITION BY HASH`` on its
distribution key plus ``N`` partitions ``mg_x_p0`` .. ``mg_x_p{N-1}``. The count is recorded
in ``mg_meta`` (``partitions``), so a later ``setup()`` creates the tables of new migrations
the same way (and :meth:`~memory_graph.MemoryStore.enable_embeddings` its vector table).

Distribution keys: ``scope_id`` for every per-user table (every key and unique index of those
includes it); ``thread_id`` for ``mg_threads``, the thread directory, whose unique key
``(space, thread_id)`` spans owners. ``mg_migrations`` and ``mg_meta`` have neither and stay
plain (global) tables.
"""

from __future__ import annotations

import os
import re

from ..errors import ConfigurationError

__all__ = [
    "MAX_PARTITIONS",
    "PARTITIONS_ENV",
    "distribution_key",
    "partitioned_sql",
    "partitions_option",
    "resolve_partitions",
]

PARTITIONS_ENV = "MEMORY_GRAPH_PARTITIONS"
"""The environment variable ``setup()`` reads when ``partitions`` is not given."""

MAX_PARTITIONS = 1024

# Tables distributed on another column than scope_id (see the module docstring).
_OTHER_KEYS = {"mg_threads": "thread_id"}
_CREATE = re.compile(r"CREATE TABLE IF NOT EXISTS (mg_\w+) \(")
_SCOPE_COLUMN = re.compile(r"(?:^|[(,])\s*scope_id\s", re.M)


def partitions_option(value: object = None) -> int | None:
    """Validate ``setup()``'s ``partitions`` (default ``$MEMORY_GRAPH_PARTITIONS``).

    Returns ``None`` (use what the database has: plain tables on a new one), ``0`` (plain
    tables) or a partition count in ``1..MAX_PARTITIONS``.

    Raises:
        ConfigurationError: not an integer in ``0..1024`` (or the variable is not one).
    """
    what = "partitions"
    if value is None:
        raw = os.environ.get(PARTITIONS_ENV, "").strip()
        if not raw:
            return None
        what = PARTITIONS_ENV
        try:
            value = int(raw)
        except ValueError:
            value = raw
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_PARTITIONS:
        raise ConfigurationError(
            f"{what} must be an integer from 0 (plain tables) to {MAX_PARTITIONS}, "
            f"not {str(value)[:40]!r}"
        )
    return value


def resolve_partitions(wanted: int | None, *, recorded: int | None, fresh: bool) -> int:
    """The partition count to apply migrations with.

    Args:
        wanted: the validated option (:func:`partitions_option`).
        recorded: ``mg_meta``'s ``partitions``, if any.
        fresh: no migration has been recorded yet (the database has no memory-graph tables).

    Raises:
        ConfigurationError: ``wanted`` differs from how the database was set up.
    """
    have = 0 if recorded is None else recorded
    if fresh:
        return wanted or 0
    if wanted is not None and wanted != have:
        how = f"with {have} partitions" if have else "without partitions"
        raise ConfigurationError(
            f"this database was set up {how}, so setup(partitions={wanted}) cannot apply: "
            f"call setup() without partitions (and unset {PARTITIONS_ENV}), or set up a new "
            "database (the partition count is chosen once, by the first setup())"
        )
    return have


def distribution_key(table: str, columns: str) -> str | None:
    """The column ``table`` is partitioned on, given its column list; ``None``: global."""
    if table in _OTHER_KEYS:
        return _OTHER_KEYS[table]
    return "scope_id" if _SCOPE_COLUMN.search(columns) else None


def _closing(sql: str, start: int) -> int:
    """Index of the parenthesis closing the one at ``start`` (quoted text skipped)."""
    depth = 0
    quoted = False
    for i in range(start, len(sql)):
        ch = sql[i]
        if ch == "'":
            quoted = not quoted
        elif quoted:
            continue
        elif ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth == 0:
                return i
    raise ValueError("unbalanced parentheses in a CREATE TABLE statement")


def partitioned_sql(sql: str, partitions: int) -> str:
    """``sql`` with each ``CREATE TABLE IF NOT EXISTS mg_x (...);`` of a distributed table
    hash-partitioned into ``partitions`` tables; unchanged when ``partitions`` is 0.

    >>> print(partitioned_sql("CREATE TABLE IF NOT EXISTS mg_t (scope_id text);", 2))
    CREATE TABLE IF NOT EXISTS mg_t (scope_id text) PARTITION BY HASH (scope_id);
    CREATE TABLE IF NOT EXISTS mg_t_p0 PARTITION OF mg_t FOR VALUES WITH (MODULUS 2, REMAINDER 0);
    CREATE TABLE IF NOT EXISTS mg_t_p1 PARTITION OF mg_t FOR VALUES WITH (MODULUS 2, REMAINDER 1);
    """
    if not partitions:
        return sql
    out: list[str] = []
    pos = 0
    for match in _CREATE.finditer(sql):
        table = match.group(1)
        end = _closing(sql, match.end() - 1)
        key = distribution_key(table, sql[match.end() : end])
        if key is None:
            continue
        semi = sql.index(";", end)
        if sql[end + 1 : semi].strip():
            raise ValueError(f"CREATE TABLE {table}: options after the column list")
        out.append(sql[pos : end + 1] + f" PARTITION BY HASH ({key});")
        out.extend(
            f"\nCREATE TABLE IF NOT EXISTS {table}_p{k} PARTITION OF {table} "
            f"FOR VALUES WITH (MODULUS {partitions}, REMAINDER {k});"
            for k in range(partitions)
        )
        pos = semi + 1
    out.append(sql[pos:])
    return "".join(out)
