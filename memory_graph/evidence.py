"""Tool evidence: re-readable references to tool results (issue 13). Pure.

Long runs trim old messages from what the model sees. A tool result that was trimmed stays in
the thread's checkpointed history; an *evidence entry* indexes it without copying it: the
thread, the message id and the step whose checkpoint holds it, the tool name and call id,
SHA-256 digests of the arguments and of the result, its size, and for file reads the canonical
path and the file's identity (size, modification time, content digest) at read time.

This module holds the pure pieces: digests, the entry type, one page of a result, and the
``<tool_evidence>`` manifest (rendered with :func:`memory_graph.safetext.prompt_value`, the
rule used for recalled memory). The store keeps entries (``mg_evidence``), the LangGraph layer
indexes results and serves the ``read_evidence`` tool.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .errors import ValidationError
from .safetext import prompt_value, truncate
from .validate import bounded_int, guarded, text

__all__ = [
    "PAGE_CHARS",
    "QUERY_CHARS",
    "REF_PATTERN",
    "EvidenceEntry",
    "EvidencePage",
    "FileIdentity",
    "arg_names",
    "arg_summary",
    "digest_args",
    "digest_text",
    "new_reference",
    "page",
    "render_manifest",
    "result_text",
    "valid_entry",
    "valid_reference",
]

PAGE_CHARS = 4096
"""Characters in one page of ``read_evidence``."""
QUERY_CHARS = 256
"""Longest ``query`` that ``read_evidence`` accepts."""
REF_PATTERN = re.compile(r"^ev-[0-9a-f]{32}$")
"""An evidence reference: ``ev-`` and 32 lower-case hex digits (opaque, random)."""
_DIGEST = re.compile(r"^[0-9a-f]{64}$")
_MAX_BIG = 2**63 - 1  # PostgreSQL bigint


@dataclass(frozen=True)
class FileIdentity:
    """A file as it was when a tool read it."""

    path: str
    size: int
    mtime_ns: int
    digest: str | None
    """SHA-256 of the file's bytes (``None`` when it was larger than the cap)."""


@dataclass(frozen=True)
class EvidenceEntry:
    """One indexed tool result. Holds no copy of the result."""

    ref: str
    thread_id: str
    message_id: str
    position: int
    step: int | None
    tool_name: str
    call_id: str
    args_digest: str
    result_digest: str
    size: int
    arg_summary: str
    file: FileIdentity | None = None

    def to_json(self) -> dict[str, Any]:
        """Plain JSON (for graph state)."""
        out: dict[str, Any] = {
            "ref": self.ref,
            "message_id": self.message_id,
            "tool_name": self.tool_name,
            "size": self.size,
            "arg_summary": self.arg_summary,
        }
        return out


@dataclass(frozen=True)
class EvidencePage:
    """One page of an evidence result."""

    text: str
    offset: int
    total: int
    next_offset: int | None


def new_reference() -> str:
    """A fresh random reference (``ev-`` + 128 random bits in hex)."""
    import secrets

    return "ev-" + secrets.token_hex(16)


def valid_reference(value: Any) -> str:
    """Check a reference's shape (never echoing more than a few characters of bad input).

    Raises:
        ValidationError: not ``ev-`` followed by 32 lower-case hex digits.
    """
    if not isinstance(value, str) or not REF_PATTERN.match(value):
        shown = truncate(repr(value), 24) if isinstance(value, str) else type(value).__name__
        raise ValidationError(f"invalid evidence reference {shown}: use a ref from the manifest")
    return value


def result_text(content: Any) -> str:
    """The text of a tool message's content (a string, or content blocks as canonical JSON)."""
    if isinstance(content, str):
        return content
    return json.dumps(content, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def digest_text(text: str) -> str:
    """SHA-256 hex of UTF-8 text (lone surrogates are escaped, never an error)."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def digest_args(args: Mapping[str, Any] | None) -> str:
    """SHA-256 hex of tool arguments as canonical JSON."""
    blob = json.dumps(
        dict(args or {}), ensure_ascii=False, sort_keys=True, separators=(",", ":"), default=str
    )
    return digest_text(blob)


_BARE_ARG = re.compile(r'[^\s,="\\]+(?: [^\s,="\\]+)*')


def _arg_atom(text: str, room: int) -> str:
    """``text`` as is when it is plain (no ``, = " \\``, no edge or repeated spaces), else
    JSON-quoted; at most ``room`` characters, a cut marked ``…`` inside the quotes, which
    always close, so the text can never add a ``k=v`` pair after itself."""
    if len(text) <= room and _BARE_ARG.fullmatch(text):
        return text
    pieces = [json.dumps(ch, ensure_ascii=False)[1:-1] for ch in text]
    if sum(map(len, pieces)) + 2 <= room:
        return '"' + "".join(pieces) + '"'
    body, used = [], 3  # the quotes and the cut mark
    for piece in pieces:
        if used + len(piece) > room:
            break
        body.append(piece)
        used += len(piece)
    return '"' + "".join(body) + '…"'


def arg_names(args: Mapping[str, Any] | None) -> str:
    """The argument names of a tool call, sorted (``offset, path``): what the store keeps.

    The values stay in the thread's state (the checkpoint, encrypted when a key is set) and
    never reach the evidence table, so a tool's arguments are never plaintext at rest.

    >>> arg_names({"path": "/home/ada/notes.txt", "offset": 3})
    'offset, path'
    """
    return truncate(", ".join(sorted(str(k) for k in (args or {}))), 200)


def _masked(value: str) -> str:
    """``value``, or ``[redacted: <category>]`` when the sensitive-data guard blocks it."""
    from .guard import check

    verdict = check(value)
    return value if verdict.allowed else f"[redacted: {verdict.category}]"


def arg_summary(args: Mapping[str, Any] | None, limit: int = 80) -> str:
    """A short one-line summary of tool arguments (``k=v, ...``), at most ``limit`` chars.

    A value the sensitive-data guard blocks shows as ``[redacted: <category>]``. A key or
    value that is not plain text (a comma, ``=``, a quote, a backslash, ...) is
    JSON-quoted (:func:`_arg_atom`) and every quote closes, so an argument such as
    ``"x, admin=true"`` shows as ``q="x, admin=true"`` and cannot forge a pair; pairs that
    do not fit are dropped whole and marked ``…``. The manifest then applies the rendering
    rule (:func:`~memory_graph.safetext.prompt_value`) to the whole summary.

    Examples:
        >>> arg_summary({"path": "a.txt", "offset": 3})
        'offset=3, path=a.txt'
        >>> print(arg_summary({"q": "x, admin=true"}))
        q="x, admin=true"
    """
    parts = []
    for key in sorted(args or {}):
        value = (args or {})[key]
        shown = value if isinstance(value, str) else json.dumps(value, default=str)
        shown = _masked(shown)  # a value the guard blocks is never shown nor stored
        parts.append(f"{_arg_atom(str(key), 30)}={_arg_atom(shown, 40)}")
    out = ""
    for index, part in enumerate(parts):
        joined = part if not out else f"{out}, {part}"
        # leave room for ", …" unless this is the last pair
        if len(joined) > (limit if index == len(parts) - 1 else limit - 3):
            return f"{out}, …" if out else "…"
        out = joined
    return out


def page(
    text: str, *, offset: int | None = None, query: str | None = None, size: int = PAGE_CHARS
) -> EvidencePage:
    """One page of ``text``: from ``offset``, or from the first match of ``query``.

    Offsets count characters (code points), so a page never splits a character.

    Raises:
        ValidationError: both ``offset`` and ``query``, a negative or too large offset, a
            query that is empty or longer than 256 characters, or no match.

    Examples:
        >>> p = page("αβγδε", offset=1, size=2)
        >>> (p.text, p.total, p.next_offset)
        ('βγ', 5, 3)
        >>> page("line1\\nneedle here", query="needle").offset
        6
    """
    if offset is not None and query is not None:
        raise ValidationError("pass either offset or query, not both")
    total = len(text)
    start = 0
    if query is not None:
        if not isinstance(query, str) or not query or len(query) > QUERY_CHARS:
            raise ValidationError(f"query must be 1..{QUERY_CHARS} characters of text")
        found = text.find(query)
        if found < 0:
            raise ValidationError("query not found in this evidence")
        start = found
    elif offset is not None:
        if isinstance(offset, bool) or not isinstance(offset, int) or offset < 0:
            raise ValidationError("offset must be a non-negative integer")
        if offset > total:
            raise ValidationError(f"offset {offset} is past the end ({total} characters)")
        start = offset
    end = min(total, start + size)
    return EvidencePage(text[start:end], start, total, end if end < total else None)


def render_manifest(
    entries: Sequence[Mapping[str, Any]], *, max_items: int = 20, max_bytes: int = 2048
) -> str:
    """The ``<tool_evidence>`` block listing trimmed results (newest first), or ``""``.

    Each line is ``- ref=… | tool=… | args=… | chars=N``, every value through
    :func:`~memory_graph.safetext.prompt_value`; lines that would pass ``max_bytes`` (UTF-8,
    frame included) or ``max_items`` are left out and counted in a closing note.

    Examples:
        >>> print(render_manifest([{"ref": "ev-" + "0" * 32, "tool_name": "read_file",
        ...     "arg_summary": "path=a.txt", "size": 10}]))
        <tool_evidence>
        Tool results trimmed from this conversation. Re-read one with read_evidence(reference).
        - ref=ev-00000000000000000000000000000000 | tool=read_file | args=path=a.txt | chars=10
        </tool_evidence>
    """
    if not entries:
        return ""
    head = (
        "<tool_evidence>\nTool results trimmed from this conversation. "
        "Re-read one with read_evidence(reference).\n"
    )
    tail = "</tool_evidence>"
    used = len((head + tail).encode("utf-8"))
    lines: list[str] = []
    left = 0
    for entry in reversed(list(entries)):
        line = (
            f"- ref={prompt_value(entry.get('ref', ''))} | "
            f"tool={prompt_value(entry.get('tool_name', ''))} | "
            f"args={prompt_value(entry.get('arg_summary', ''))} | "
            f"chars={int(entry.get('size', 0))}\n"
        )
        cost = len(line.encode("utf-8"))
        if len(lines) >= max_items or used + cost + 40 > max_bytes:
            left += 1
            continue
        lines.append(line)
        used += cost
    if not lines:
        return ""
    note = f"({left} older not listed)\n" if left else ""
    return head + "".join(lines) + note + tail


def _id_text(field: str, value: Any) -> str:
    checked = text(field, value, max_bytes=512)
    if any(not ch.isprintable() for ch in checked):
        raise ValidationError(f"{field} contains control or format characters: remove them")
    return checked


def valid_entry(entry: Any) -> EvidenceEntry:
    """Check every field of an entry before it is stored (the store's input validation).

    The reference and digests have their exact shapes; ids are printable text; counts are
    integers in range; the texts that are stored (tool name, argument summary, file path)
    pass the sensitive-data guard.

    Raises:
        ValidationError: a field of the wrong type, shape or size, or a blocked text.
    """
    if not isinstance(entry, EvidenceEntry):
        raise ValidationError(
            f"an evidence entry must be an EvidenceEntry, got {type(entry).__name__}"
        )
    valid_reference(entry.ref)
    _id_text("evidence message_id", entry.message_id)
    _id_text("evidence call_id", entry.call_id)
    bounded_int("evidence position", entry.position)
    if entry.step is not None:
        bounded_int("evidence step", entry.step, lo=-1)
    bounded_int("evidence size", entry.size, hi=_MAX_BIG)
    for name in ("args_digest", "result_digest"):
        value = getattr(entry, name)
        if not isinstance(value, str) or not _DIGEST.match(value):
            raise ValidationError(f"evidence {name} must be 64 lower-case hex digits (SHA-256)")
    tool = _id_text("evidence tool_name", entry.tool_name)
    summary = text("evidence arg_summary", entry.arg_summary, max_bytes=1024, min_bytes=0)
    path = None
    f = entry.file
    if f is not None:
        if not isinstance(f, FileIdentity):
            raise ValidationError("evidence file must be a FileIdentity or None")
        path = _id_text("evidence file path", f.path)
        bounded_int("evidence file size", f.size, hi=_MAX_BIG)
        bounded_int("evidence file mtime_ns", f.mtime_ns, lo=-_MAX_BIG - 1, hi=_MAX_BIG)
        digest = f.digest
        if digest is not None and (not isinstance(digest, str) or not _DIGEST.match(digest)):
            raise ValidationError("evidence file digest must be 64 lower-case hex digits or None")
    guarded("evidence", tool, summary, path)
    return entry
