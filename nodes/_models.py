"""Chat models: ``ChatOpenAI`` from the environment, and a deterministic offline model.

Any LangChain chat model works with the nodes. ``chat_model_from_env`` covers OpenAI and
OpenAI-compatible servers; :class:`OfflineChatModel` powers the offline demo and tests.
"""

from __future__ import annotations

import html
import os
import re
from collections.abc import Callable, Sequence
from typing import Any, ClassVar

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import Runnable
from langchain_core.tools import BaseTool

__all__ = [
    "ENV_MODEL",
    "ENV_STRUCTURED_METHOD",
    "OfflineChatModel",
    "chat_model_from_env",
    "structured_method_from_env",
]

ENV_MODEL = "MEMORY_GRAPH_MODEL"
"""Environment variable naming the chat model (default ``gpt-4o-mini``)."""
ENV_STRUCTURED_METHOD = "MEMORY_GRAPH_STRUCTURED_METHOD"
"""``function_calling`` | ``json_schema`` | ``json_mode`` for the extractor's structured output."""

_METHODS = ("function_calling", "json_schema", "json_mode")


def structured_method_from_env(default: str = "function_calling") -> str:
    """The structured-output method for the extractor, from ``MEMORY_GRAPH_STRUCTURED_METHOD``.

    ``function_calling`` is the default because many OpenAI-compatible servers reject
    ``json_schema`` with ``strict: true``.

    Raises:
        ConfigurationError: the variable names an unknown method.
    """
    from memory_graph.errors import ConfigurationError

    method = os.environ.get(ENV_STRUCTURED_METHOD, "").strip() or default
    if method not in _METHODS:
        raise ConfigurationError(
            f"{ENV_STRUCTURED_METHOD}={method!r} is not supported: use one of {', '.join(_METHODS)}"
        )
    return method


def chat_model_from_env(**kwargs: Any) -> BaseChatModel | None:
    """Return a ``ChatOpenAI`` configured by the environment, or ``None`` without a key.

    Reads ``OPENAI_API_KEY`` (required), ``OPENAI_BASE_URL`` (optional, for compatible
    servers) and ``MEMORY_GRAPH_MODEL`` (default ``gpt-4o-mini``). Pass the extractor's
    method from :func:`structured_method_from_env` to
    ``memory_graph.extraction.create_extractor``.

    Args:
        **kwargs: extra ``ChatOpenAI`` arguments (temperature, timeout ...).
    """
    if not os.environ.get("OPENAI_API_KEY", "").strip():
        return None
    from langchain_openai import ChatOpenAI

    options: dict[str, Any] = {"model": os.environ.get(ENV_MODEL, "").strip() or "gpt-4o-mini"}
    base_url = os.environ.get("OPENAI_BASE_URL", "").strip()
    if base_url:
        options["base_url"] = base_url
    options.update(kwargs)
    return ChatOpenAI(**options)


_LINE = re.compile(r"^- ([a-z0-9_.:-]+): (.+?)(?: \(until [^)]*\))?$", re.MULTILINE)
_CHINESE = {"zh", "zh-cn", "zh-hans", "chinese", "中文", "简体中文", "汉语", "mandarin"}
_SHORT = {"short", "brief", "concise", "简短", "简洁", "terse"}


def _context_values(text: str) -> dict[str, str]:
    """``- key: value`` lines of the ``<user_context>`` block, unescaped."""
    start, end = text.find("<user_context>"), text.find("</user_context>")
    if start < 0 or end < 0:
        return {}
    # Keys compare with ``.``/``-`` folded to ``_``: ``reply.length`` is ``reply_length``.
    return {
        re.sub(r"[.-]", "_", m.group(1)): html.unescape(m.group(2)).strip()
        for m in _LINE.finditer(text[start:end])
    }


_RECALLED = re.compile(r"^- \[[^\]\n]*\] (.+)$", re.MULTILINE)
_SKIP_KEYS = {"name", "call_them"}
_FOLD = re.compile(r"[._\s]+")


def _remembered(text: str, limit: int = 3) -> list[str]:
    """What the prompt's memory blocks hold: recalled records, then context values."""
    items: list[str] = []
    start, end = text.find("<memory_source>"), text.find("</memory_source>")
    if 0 <= start < end:
        items += [html.unescape(m.group(1)).strip() for m in _RECALLED.finditer(text[start:end])]
    for key, value in _context_values(text).items():
        if key not in _SKIP_KEYS:
            items.append(f"{key.replace('_', ' ')}: {value}")
    out: list[str] = []
    seen: set[str] = set()
    for item in items:
        if len(out) == limit:
            break
        short = item if len(item) <= 80 else item[:79] + "…"
        folded = _FOLD.sub(" ", short.casefold())
        if short and folded not in seen:
            seen.add(folded)
            out.append(short)
    return out


class OfflineChatModel(BaseChatModel):
    """A deterministic chat model that reads the memory blocks of its system prompt.

    It greets the user by the remembered ``call_them`` or ``name`` profile field, answers in
    Chinese when a ``reply_language``/``language`` preference says so, and keeps it to one
    sentence when a ``reply_length``/``verbosity`` preference asks for short answers.
    Otherwise it says what it recalled (up to three items from the prompt's memory blocks),
    or that it knows nothing yet; it never claims a memory the prompt does not hold. It never
    calls tools; ``bind_tools`` returns the model itself, so it fits any tool-calling graph.
    It has no structured output, so the graphs built on it extract with the offline pattern
    extractor (``extracts_with_patterns``).

    >>> from langchain_core.messages import HumanMessage, SystemMessage
    >>> ctx = "<user_context>\\n## User profile\\n- name: Ada\\n</user_context>"
    >>> OfflineChatModel().invoke([SystemMessage(ctx), HumanMessage("hi")]).content[:9]
    'Hello, Ad'
    """

    extracts_with_patterns: ClassVar[bool] = True
    """Graphs built on this model extract with the offline patterns, not with the model."""

    @property
    def _llm_type(self) -> str:
        return "memory-graph-offline"

    def bind_tools(
        self,
        tools: Sequence[dict[str, Any] | type | Callable[..., Any] | BaseTool],
        *,
        tool_choice: str | None = None,
        **kwargs: Any,
    ) -> Runnable[LanguageModelInput, AIMessage]:
        """Accept tools and ignore them (the offline model answers in text)."""
        return self

    def reply(self, messages: Sequence[BaseMessage]) -> str:
        """The deterministic reply to ``messages``: it says only what memory holds."""
        system = "\n".join(str(m.content) for m in messages if m.type == "system")
        values = _context_values(system)
        name = values.get("call_them") or values.get("name")
        language = (values.get("reply_language") or values.get("language") or "").casefold()
        length = (values.get("reply_length") or values.get("verbosity") or "").casefold()
        chinese = language in _CHINESE or language.startswith("zh")
        short = length in _SHORT
        known = [] if short else _remembered(system)  # a short reply names no memory
        if chinese:
            text = f"你好，{name}！" if name else "你好！"
            if not short:
                text += f"我记得：{'；'.join(known)}。" if known else ""
                text += "" if known or name else "我还不了解你。"
        else:
            text = f"Hello, {name}!" if name else "Hello!"
            if not short:
                text += f" I remember: {'; '.join(known)}." if known else ""
                text += "" if known or name else " I don't know anything about you yet."
        return text

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        message = AIMessage(content=self.reply(messages))
        return ChatResult(generations=[ChatGeneration(message=message)])
