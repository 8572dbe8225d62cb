"""What a memory graph does before LangGraph saves a run's input: the owner check and masking.

LangGraph checkpoints a run's input before any node runs, so both happen in the compiled
graph's ``stream``/``astream`` (``invoke``, ``ainvoke``, ``astream_events`` and the Agent
Server go through them) and in ``bulk_update_state`` (``update_state`` goes through it).
:class:`CheckedRuns` is that behaviour once, mixed into the prebuilt agent's class
(``MemoryAgentGraph``) and into a ``create_agent`` graph that ``MemoryMiddleware.protect``
wraps; each says whether it masks (:meth:`CheckedRuns._masks_input`) and may adjust a run's
keyword arguments (:meth:`CheckedRuns._run_kwargs`).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any

from langgraph.graph.state import CompiledStateGraph

from ._owner import acheck_run, check_run, with_proof
from ._redact import redact_input, redact_supersteps

__all__ = ["CheckedRuns"]


class CheckedRuns(CompiledStateGraph[Any, Any, Any, Any]):
    """Check the thread's owner, then mask the input when asked, before LangGraph saves it."""

    def _masks_input(self) -> bool:
        """Whether runs mask the human messages of their input (``redact_blocked=True``)."""
        return False

    def _run_kwargs(self, kwargs: dict[str, Any]) -> dict[str, Any]:
        """A run's keyword arguments as passed to LangGraph."""
        return kwargs

    def _masked(self, value: Any) -> Any:
        return redact_input(value)[0] if self._masks_input() else value

    def bulk_update_state(self, config: Any, supersteps: Any) -> Any:
        """``update_state`` goes through here: its values are masked like a run's input."""
        if self._masks_input():
            supersteps = redact_supersteps(supersteps)
        return super().bulk_update_state(config, supersteps)

    async def abulk_update_state(self, config: Any, supersteps: Any) -> Any:
        """Async twin of :meth:`bulk_update_state`."""
        if self._masks_input():
            supersteps = redact_supersteps(supersteps)
        return await super().abulk_update_state(config, supersteps)

    def stream(self, input: Any, config: Any = None, **kwargs: Any) -> Iterator[Any]:  # type: ignore[override]  # noqa: A002
        proof = check_run(self, config, kwargs.get("context"))
        return super().stream(
            self._masked(input), with_proof(config, proof), **self._run_kwargs(kwargs)
        )

    async def astream(  # type: ignore[override]
        self,
        input: Any,  # noqa: A002
        config: Any = None,
        **kwargs: Any,
    ) -> AsyncIterator[Any]:
        proof = await acheck_run(self, config, kwargs.get("context"))
        async for chunk in super().astream(
            self._masked(input), with_proof(config, proof), **self._run_kwargs(kwargs)
        ):
            yield chunk
