"""Test doubles for memory-graph: an offline chat model that supports structured output.

LangChain's fake chat models raise ``NotImplementedError`` from ``bind_tools``, so
``with_structured_output`` fails on them. :class:`FakeToolCallingChatModel` returns itself
from ``bind_tools`` and replays scripted :class:`~langchain_core.messages.AIMessage` items,
so a scripted tool call becomes the structured output:

>>> from memory_graph.extraction import ExtractedMemories
>>> model = FakeToolCallingChatModel.from_tool_calls(
...     [("ExtractedMemories", {"candidates": []})]
... )
>>> model.with_structured_output(ExtractedMemories).invoke("hi")
ExtractedMemories(candidates=[])

Use :func:`tool_call_message` to build one scripted reply, or :func:`extraction_reply` for
the extractor's schema specifically.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any, ClassVar

from langchain_core.language_models import LanguageModelInput
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage
from langchain_core.outputs import ChatGenerationChunk
from langchain_core.runnables import Runnable
from langchain_core.tools import BaseTool

__all__ = ["FakeToolCallingChatModel", "extraction_reply", "tool_call_message"]

_ids = itertools.count(1)


def tool_call_message(name: str, args: Mapping[str, Any], *, content: str = "") -> AIMessage:
    """Build an ``AIMessage`` carrying one tool call.

    Args:
        name: the tool (or structured-output schema) name.
        args: the call's arguments.
        content: optional text content.

    Returns:
        The message, with a unique tool-call id.
    """
    return AIMessage(
        content=content,
        tool_calls=[{"name": name, "args": dict(args), "id": f"call_{next(_ids)}"}],
    )


def extraction_reply(candidates: Sequence[Mapping[str, Any]]) -> AIMessage:
    """Build the tool call an extraction model would return for ``candidates``.

    Args:
        candidates: candidate dicts (``kind``, ``key``, ``value``, ``quote``,
            ``message_index`` ...), valid or deliberately not.

    Returns:
        An ``AIMessage`` calling ``ExtractedMemories``.
    """
    return tool_call_message("ExtractedMemories", {"candidates": [dict(c) for c in candidates]})


class FakeToolCallingChatModel(GenericFakeChatModel):
    """A scripted chat model whose ``bind_tools`` works, for offline tests and demos.

    ``messages`` is an iterator of ``AIMessage`` (or ``str``) replies, consumed one per
    call; it raises ``StopIteration`` when exhausted, like ``GenericFakeChatModel``.
    Tools bound with ``bind_tools`` are ignored: the scripted tool calls are returned as
    they are, and structured output parses them. Every prompt received is appended to
    ``received`` so a test can assert on what the model saw.

    As the model of an agent it extracts with the offline patterns, so a script holds only
    the agent's replies (``extracts_with_patterns``); a subclass that sets it to ``False``
    stands for a real model, which extracts with itself (its script then holds the
    extraction replies too).
    """

    extracts_with_patterns: ClassVar[bool] = True
    """Agents built on this model extract with the offline patterns by default."""

    received: list[list[BaseMessage]] = []

    @classmethod
    def from_tool_calls(
        cls, calls: Iterable[tuple[str, Mapping[str, Any]] | AIMessage | str]
    ) -> FakeToolCallingChatModel:
        """Script the model with ``(name, args)`` tool calls, messages or plain strings.

        Args:
            calls: one item per expected model call.

        Returns:
            A new model that replays them in order.
        """
        replies: list[AIMessage | str] = []
        for call in calls:
            if isinstance(call, (AIMessage, str)):
                replies.append(call)
            else:
                replies.append(tool_call_message(call[0], call[1]))
        return cls(messages=iter(replies), received=[])

    def bind_tools(
        self,
        tools: Sequence[dict[str, Any] | type | Callable[..., Any] | BaseTool],
        *,
        tool_choice: str | None = None,
        **kwargs: Any,
    ) -> Runnable[LanguageModelInput, AIMessage]:
        """Accept any tools and return the model itself (replies are scripted)."""
        return self

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> Any:
        self.received.append(list(messages))
        return super()._generate(messages, *args, **kwargs)

    def _stream(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kwargs: Any
    ) -> Iterator[ChatGenerationChunk]:
        """Stream a scripted reply; a tool call streams as one chunk, as a provider's would."""
        message = self._generate(messages, stop=stop, **kwargs).generations[0].message
        if not getattr(message, "tool_calls", None):
            replay = GenericFakeChatModel(messages=iter([message]))
            yield from replay._stream(messages, stop=stop, run_manager=run_manager)
            return
        chunk = ChatGenerationChunk(
            message=AIMessageChunk(
                content=message.content,
                id=message.id,
                tool_call_chunks=[
                    {
                        "name": call["name"],
                        "args": json.dumps(call["args"]),
                        "id": call["id"],
                        "index": index,
                        "type": "tool_call_chunk",
                    }
                    for index, call in enumerate(message.tool_calls)
                ],
                chunk_position="last",
            )
        )
        if run_manager:
            run_manager.on_llm_new_token("", chunk=chunk)
        yield chunk
