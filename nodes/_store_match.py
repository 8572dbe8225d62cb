"""Pure matching for ``GovernedStore``: search filters and namespace match conditions; and
LangGraph's own namespace checks re-raised as library errors (:class:`NamespaceError`).

Filters follow LangGraph's store: ``{field: value}`` (equality) or ``{field: {"$op": value}}``
with ``$eq $ne $gt $gte $lt $lte``. Unlike ``PostgresStore`` (which compares numbers as
text), values compare as Python values, and unlike types never match.
"""

from __future__ import annotations

import inspect
from collections.abc import Iterable, Mapping
from typing import Any

from langgraph.store.base import InvalidNamespaceError, MatchCondition

from ._core import ValidationError

__all__ = ["NamespaceError", "check_filter", "library_errors", "matches_all", "matches_filter"]

_FILTER_OPS = ("$eq", "$ne", "$gt", "$gte", "$lt", "$lte")


def check_filter(flt: Any) -> None:
    """Validate a search filter: ``{field: value}`` or ``{field: {"$op": value}}``."""
    if flt is None:
        return
    if not isinstance(flt, Mapping):
        raise ValidationError("a search filter is an object {field: value}")
    for name, cond in flt.items():
        if not isinstance(name, str):
            raise ValidationError("filter fields are strings")
        if isinstance(cond, Mapping):
            bad = sorted(str(k) for k in cond if k not in _FILTER_OPS)
            if bad:
                raise ValidationError(
                    f"unknown filter operators {bad}: allowed are {', '.join(_FILTER_OPS)}"
                )


def _compare(actual: Any, op: str, expected: Any) -> bool:
    if op == "$eq":
        return bool(actual == expected)
    if op == "$ne":
        return bool(actual != expected)
    if actual is None:
        return False
    try:
        if op == "$gt":
            return bool(actual > expected)
        if op == "$gte":
            return bool(actual >= expected)
        if op == "$lt":
            return bool(actual < expected)
        return bool(actual <= expected)
    except TypeError:  # unlike types (a number against a string) never match
        return False


def matches_filter(value: Mapping[str, Any], flt: Mapping[str, Any] | None) -> bool:
    """Whether an item value satisfies a (validated) filter.

    >>> matches_filter({"kind": "fact"}, {"kind": {"$ne": "instruction"}})
    True
    """
    for name, cond in (flt or {}).items():
        actual = value.get(name)
        if isinstance(cond, Mapping):
            if not all(_compare(actual, op, want) for op, want in cond.items()):
                return False
        elif actual != cond:
            return False
    return True


def _match(namespace: tuple[str, ...], condition: MatchCondition) -> bool:
    path = tuple(condition.path)
    if len(path) > len(namespace):
        return False
    part = namespace[: len(path)] if condition.match_type == "prefix" else namespace[-len(path) :]
    if not path:
        return True
    return all(p == "*" or p == n for p, n in zip(path, part, strict=True))


def matches_all(namespace: tuple[str, ...], conditions: Iterable[MatchCondition]) -> bool:
    return all(_match(namespace, c) for c in conditions)


class NamespaceError(ValidationError, InvalidNamespaceError):
    """LangGraph's namespace check failed (empty, ``.`` or NUL in a label, a non-string): a
    :class:`~memory_graph.ValidationError` that is also LangGraph's ``InvalidNamespaceError``."""


def _namespaces(name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    """The namespace arguments of a convenience method are tuples of strings."""
    if name.removeprefix("a") == "list_namespaces":
        given = [kwargs.get("prefix"), kwargs.get("suffix")]
    else:
        given = [args[0] if args else kwargs.get("namespace", kwargs.get("namespace_prefix"))]
    for ns in given:
        if ns is not None or name.removeprefix("a") != "list_namespaces":
            if not isinstance(ns, (tuple, list)) or not all(isinstance(p, str) for p in ns):
                raise NamespaceError("a namespace is a tuple of strings")


def library_errors(cls: type, name: str) -> Any:
    """``cls``'s method ``name`` (a ``BaseStore`` convenience method), with LangGraph's
    namespace errors raised as :class:`NamespaceError`."""
    base = getattr(cls, name)

    if inspect.iscoroutinefunction(base):

        async def amethod(self: Any, *args: Any, **kwargs: Any) -> Any:
            _namespaces(name, args, kwargs)
            try:
                return await base(self, *args, **kwargs)
            except InvalidNamespaceError as exc:
                if isinstance(exc, ValidationError):
                    raise
                raise NamespaceError(str(exc)[:200]) from exc

        method: Any = amethod
    else:

        def smethod(self: Any, *args: Any, **kwargs: Any) -> Any:
            _namespaces(name, args, kwargs)
            try:
                return base(self, *args, **kwargs)
            except InvalidNamespaceError as exc:
                if isinstance(exc, ValidationError):
                    raise
                raise NamespaceError(str(exc)[:200]) from exc

        method = smethod
    method.__name__ = method.__qualname__ = name
    method.__doc__ = base.__doc__
    return method
