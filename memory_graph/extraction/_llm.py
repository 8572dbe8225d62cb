"""The LLM extractor: a ``Runnable`` over a chat model with structured output."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, Literal

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)
from langchain_core.runnables import Runnable, RunnableLambda

from ..errors import ConfigurationError
from ._patterns import message_text
from ._schema import ExtractedMemories

__all__ = ["EXTRACTION_PROMPT", "StructuredOutputMethod", "create_extractor", "render_window"]

StructuredOutputMethod = Literal["function_calling", "json_schema", "json_mode"]
_METHODS: tuple[str, ...] = ("function_calling", "json_schema", "json_mode")

EXTRACTION_PROMPT = """\
You extract long-term memories about the USER from a conversation window.

Rules:
1. Keep only what the user EXPLICITLY states about THEMSELVES as a stable preference, fact,
   instruction or experience. Never infer personality, mood, state or intent.
2. Only messages marked `human` are sources. Ignore everything the assistant, tools or the
   system said, even if the user seems to agree. Ignore text the user pastes or quotes from
   others, hypotheticals ("if I were..."), jokes, questions and role-play.
3. Do not translate: write values and content in the user's own language and words.
4. Never extract sensitive data: health, finances (income, debts, card or account numbers),
   government ids, home addresses, religion or politics, or other people's personal data.
   Set every candidate's `sensitivity` to the category it discloses (health, finance,
   gov_id, address, political_religious, third_party), euphemisms and brand names
   included ("my shrink", "on something for my mood" are health), or "none".
5. `quote` must be the user's exact words copied verbatim from one human message, and
   `message_index` the [index] of that message. The quote must itself state the memory:
   every word of `content` (or `value`) that carries meaning must appear in the quote (you
   may add only "User"/"用户" and small words such as "is", "the", "的"). A bare "ok",
   "yes" or "好的" states nothing. Never paraphrase or summarise beyond the quote.
6. Profile statements use kind "fact" with key "profile.<field>" where field is one of:
   {fields}. Examples: "call me Sam" -> key "profile.call_them", value "Sam"; "reply in
   Chinese" -> key "profile.language". Other preferences use short dotted ascii keys such as
   "reply.length", "reply.style", "tools.editor".
7. When the user withdraws something ("don't call me X anymore"), emit action "retract"
   with the same key and the old value.
8. If nothing explicit was said, return an empty list of candidates.
"""

_JSON_HINT = """
Answer with one JSON object and nothing else, matching this JSON schema:
{schema}
"""


def render_window(messages: Sequence[BaseMessage]) -> str:
    """Render a window as numbered lines ``[i] role: text`` for the extraction prompt.

    Args:
        messages: the window.

    Returns:
        The transcript text; every message keeps its index in ``messages``.
    """
    lines: list[str] = []
    for index, message in enumerate(messages):
        if isinstance(message, HumanMessage):
            role = "human"
        elif isinstance(message, AIMessage):
            role = "assistant"
        elif isinstance(message, ToolMessage):
            role = "tool"
        elif isinstance(message, SystemMessage):
            role = "system"
        else:
            role = message.type
        lines.append(f"[{index}] {role}: {message_text(message)}")
    return "\n".join(lines)


def _raw_candidates(raw: Any) -> list[Any]:
    """Pull the candidate list out of a raw model message when strict parsing failed."""
    if not isinstance(raw, AIMessage):
        return []
    payload: Any = None
    if raw.tool_calls:
        payload = raw.tool_calls[0].get("args")
    elif isinstance(raw.content, str) and raw.content.strip():
        try:
            payload = json.loads(raw.content)
        except json.JSONDecodeError:
            return []
    if isinstance(payload, dict) and isinstance(payload.get("candidates"), list):
        return list(payload["candidates"])
    return []


def _collect(output: Any) -> list[Any]:
    if isinstance(output, ExtractedMemories):
        return list(output.candidates)
    if isinstance(output, dict):
        parsed = output.get("parsed")
        if isinstance(parsed, ExtractedMemories):
            return list(parsed.candidates)
        # one invalid candidate must not sink the others: validate them one by one later
        return _raw_candidates(output.get("raw"))
    return []


def create_extractor(
    model: BaseChatModel,
    *,
    method: StructuredOutputMethod = "function_calling",
    profile_fields: Sequence[str] = (
        "name",
        "call_them",
        "pronouns",
        "timezone",
        "language",
        "occupation",
    ),
    instructions: str | None = None,
) -> Runnable[Sequence[BaseMessage], list[Any]]:
    """Build the LLM extractor: window of messages in, raw candidates out.

    The model is called through ``model.with_structured_output(ExtractedMemories,
    method=method, include_raw=True)``. When strict parsing fails, the candidates are
    taken from the raw message so that the pipeline can validate (and drop) them one by
    one. Grounding, provenance and the guard are applied by
    :func:`~memory_graph.extraction.extract_candidates`, never trusted from the model.
    The runnable is tagged ``nostream``: inside a LangGraph graph its model call is not
    streamed with ``stream_mode="messages"``.

    Args:
        model: any LangChain chat model that supports structured output.
        method: ``"function_calling"`` (default; works with most OpenAI-compatible
            servers), ``"json_schema"`` (strict OpenAI) or ``"json_mode"``.
        profile_fields: the profile fields the model may fill.
        instructions: extra rules appended to the built-in prompt.

    Returns:
        A ``Runnable`` whose input is a sequence of messages and whose output is a list of
        candidate models or dicts.

    Raises:
        ConfigurationError: ``method`` is not one of the three supported methods.
    """
    if method not in _METHODS:
        raise ConfigurationError(
            f"unknown structured-output method {method!r}: use one of {', '.join(_METHODS)}"
        )
    system = EXTRACTION_PROMPT.format(fields=", ".join(profile_fields))
    if method == "json_mode":
        schema = json.dumps(ExtractedMemories.model_json_schema(), ensure_ascii=False)
        system += _JSON_HINT.format(schema=schema)
    if instructions:
        system += "\n" + instructions.strip() + "\n"

    def prompt(messages: Sequence[BaseMessage]) -> list[BaseMessage]:
        return [
            SystemMessage(system),
            HumanMessage("Conversation window:\n" + render_window(messages)),
        ]

    structured = model.with_structured_output(ExtractedMemories, method=method, include_raw=True)
    chain = RunnableLambda(prompt) | structured | RunnableLambda(_collect)
    # "nostream" is LangGraph's TAG_NOSTREAM: the structured output (which may hold what
    # the guard then blocks) never reaches a graph's stream_mode="messages" client.
    return chain.with_config(run_name="memory_extractor", tags=["nostream"])
