"""What the sync and async stores share besides the ops: configuration and its properties."""

from __future__ import annotations

from typing import Any

from .._time import Clock, system_clock
from .._types import Limits
from ..errors import ConfigurationError

__all__ = ["StoreBase", "pool_kwargs"]


def pool_kwargs() -> dict[str, Any]:
    """Connection flags the store needs.

    Explicit transactions (the driver commits), and a UTC session so every timestamp read
    back is in UTC.
    """
    return {"autocommit": False, "options": "-c TimeZone=UTC"}


class StoreBase:
    """Limits, clock and DSN of a store; the twins add only execution."""

    def __init__(self, *, limits: Limits | None, clock: Clock | None, dsn: str | None) -> None:
        limits = Limits() if limits is None else limits
        if not isinstance(limits, Limits):
            raise ConfigurationError("limits must be a memory_graph.Limits instance")
        if clock is not None and not callable(clock):
            raise ConfigurationError("clock must be a zero-argument callable returning a datetime")
        self._limits = limits
        self._clock: Clock = clock or system_clock
        self._dsn = dsn

    @property
    def limits(self) -> Limits:
        """The configured limits."""
        return self._limits

    @property
    def clock(self) -> Clock:
        """The injectable clock (``clock()`` is now)."""
        return self._clock

    @property
    def dsn(self) -> str:
        """The resolved DSN (the LangGraph Postgres checkpointer can use the same database).

        Raises:
            ConfigurationError: the store was built from a pool without a ``dsn``.
        """
        if not self._dsn:
            raise ConfigurationError(
                "this store was built from a pool without dsn=: pass dsn= to the constructor"
            )
        return self._dsn
