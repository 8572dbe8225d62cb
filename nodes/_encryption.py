"""Checkpoint encryption at rest, with LangGraph's own ``EncryptedSerializer`` (AES).

A LangGraph checkpoint holds the conversation as sent: every human message, the framed
context and recall blocks, interrupt payloads. With a key configured, :func:`seal_checkpointer`
(called by ``open_checkpointer`` / ``open_async_checkpointer``) makes the Postgres saver
encrypt all of it:

- every blob and pending write goes through LangGraph's ``EncryptedSerializer`` (msgpack, then
  AES with a random nonce and an authentication tag). It writes AES-256-GCM through the
  ``cryptography`` package (cipher name ``aesgcm``); LangGraph's own
  ``from_pycryptodome_aes`` cipher (AES-EAX, cipher name ``aes``, what ``LANGGRAPH_AES_KEY``
  deployments write) is read too, and written with ``cipher="aes-eax"``. Measured here:
  pycryptodome spends about 0.7 ms per value (its per-call setup), about 18 ms per turn of
  the prebuilt agent, against well under 1 ms per turn for ``cryptography``'s AES-GCM;
- ``PostgresSaver`` keeps plain ``str``/``int``/``float``/``bool`` channel values *inline* in the
  ``checkpoints.checkpoint`` jsonb column, outside the serializer. ``user_context`` and
  ``recalled`` are such strings, so the sealed savers move ``str`` channel values to the
  (encrypted) blobs table; numbers and booleans stay inline (they carry no text).

The key: ``MEMORY_GRAPH_CHECKPOINT_KEY`` (or the ``encryption_key`` argument), 16, 24 or 32
bytes, given as base64 or hex (e.g. ``python -c "import os,base64;print(base64.b64encode(
os.urandom(32)).decode())"``). Limits: one key at a time. Checkpoints written before a key
was set stay readable (they are not re-encrypted until the thread writes again); a thread
written under another key cannot be read (``ConfigurationError``): to rotate, finish or
delete the open threads (``store.sweep(thread_idle=...)``) before changing the key, or keep
the old key until they expire. Checkpoint metadata (step, source, parents, and any extra
``configurable`` keys you pass) is not encrypted: put no personal data in ``configurable``.
"""

from __future__ import annotations

import base64
import binascii
import os
import re
from typing import Any

from cryptography.exceptions import InvalidTag
from langgraph.checkpoint.base import Checkpoint
from langgraph.checkpoint.postgres import PostgresSaver
from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
from langgraph.checkpoint.serde.base import CipherProtocol, SerializerProtocol
from langgraph.checkpoint.serde.encrypted import EncryptedSerializer
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

from ._core import ConfigurationError

__all__ = [
    "CHECKPOINT_KEY_ENV",
    "SealedAsyncPostgresSaver",
    "SealedPostgresSaver",
    "checkpoint_key",
    "checkpoint_serde",
    "seal_checkpointer",
]

CHECKPOINT_KEY_ENV = "MEMORY_GRAPH_CHECKPOINT_KEY"
_HEX = re.compile(r"^(?:[0-9a-fA-F]{32}|[0-9a-fA-F]{48}|[0-9a-fA-F]{64})$")


def checkpoint_key(key: str | bytes | None = None) -> bytes | None:
    """The AES key: ``key``, else ``$MEMORY_GRAPH_CHECKPOINT_KEY``, else ``None`` (no encryption).

    Args:
        key: raw bytes (16, 24 or 32), or text: hex (32, 48 or 64 digits) or base64.

    Raises:
        ConfigurationError: the key is not 16, 24 or 32 bytes, or not hex/base64.
    """
    raw: str | bytes | None = key if key is not None else os.environ.get(CHECKPOINT_KEY_ENV)
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        return None
    if isinstance(raw, bytes):
        data = raw
    elif isinstance(raw, str):
        text = raw.strip()
        try:
            hexa = _HEX.match(text)
            data = bytes.fromhex(text) if hexa else base64.b64decode(text, validate=True)
        except (binascii.Error, ValueError) as exc:
            raise ConfigurationError(
                f"{CHECKPOINT_KEY_ENV} must be base64 or hex of 16, 24 or 32 random bytes"
            ) from exc
    else:
        raise ConfigurationError("the checkpoint key must be bytes or a base64/hex string")
    if len(data) not in (16, 24, 32):
        raise ConfigurationError(
            f"the checkpoint key is {len(data)} bytes: AES needs 16, 24 or 32 (32 recommended)"
        )
    return data


class _Text:
    """A ``str`` channel value boxed so that the saver stores it as an (encrypted) blob."""

    __slots__ = ("value",)

    def __init__(self, value: str) -> None:
        self.value = value


class _Cipher(CipherProtocol):
    """AES-GCM (``cryptography``) for new values; reads LangGraph's pycryptodome AES-EAX too."""

    def __init__(self, key: bytes, *, write: str) -> None:
        from cryptography.hazmat.primitives.ciphers.aead import AESGCM

        self._gcm = AESGCM(key)
        self._key = key
        self._eax: CipherProtocol | None = None
        self._write = write

    def _eax_cipher(self) -> CipherProtocol:
        if self._eax is None:
            self._eax = EncryptedSerializer.from_pycryptodome_aes(key=self._key).cipher
        return self._eax

    def encrypt(self, plaintext: bytes) -> tuple[str, bytes]:
        if self._write == "aes-eax":
            return self._eax_cipher().encrypt(plaintext)
        nonce = os.urandom(12)
        return "aesgcm", nonce + self._gcm.encrypt(nonce, plaintext, None)

    def decrypt(self, ciphername: str, ciphertext: bytes) -> bytes:
        if ciphername == "aesgcm":
            return self._gcm.decrypt(ciphertext[:12], ciphertext[12:], None)
        if ciphername == "aes":
            return self._eax_cipher().decrypt(ciphername, ciphertext)
        raise ConfigurationError(f"unknown checkpoint cipher {ciphername!r}")


class _SealingSerde(SerializerProtocol):
    """``EncryptedSerializer`` that unboxes :class:`_Text` and names a wrong key clearly."""

    def __init__(self, inner: EncryptedSerializer) -> None:
        self.inner = inner

    def dumps_typed(self, obj: Any) -> tuple[str, bytes]:
        return self.inner.dumps_typed(obj.value if isinstance(obj, _Text) else obj)

    def loads_typed(self, data: tuple[str, bytes]) -> Any:
        try:
            return self.inner.loads_typed(data)
        except (ValueError, InvalidTag) as exc:  # a wrong key fails authentication
            raise ConfigurationError(
                "a checkpoint cannot be decrypted with the configured key (it was written "
                "under another key): use the old key, or delete the thread"
            ) from exc


def checkpoint_serde(
    key: str | bytes | None = None,
    *,
    serde: SerializerProtocol | None = None,
    cipher: str = "aes-gcm",
) -> SerializerProtocol | None:
    """The encrypting serializer for ``key`` (see :func:`checkpoint_key`), or ``None``.

    Args:
        key: the key, else ``$MEMORY_GRAPH_CHECKPOINT_KEY``.
        serde: the serializer to wrap (default: LangGraph's ``JsonPlusSerializer``).
        cipher: what new values are written with: ``aes-gcm`` (default, fast) or ``aes-eax``
            (LangGraph's ``from_pycryptodome_aes`` format). Both are always readable.

    Raises:
        ConfigurationError: a malformed key or an unknown cipher.
    """
    if cipher not in ("aes-gcm", "aes-eax"):
        raise ConfigurationError("cipher must be 'aes-gcm' or 'aes-eax'")
    data = checkpoint_key(key)
    if data is None:
        return None
    inner = EncryptedSerializer(_Cipher(data, write=cipher), serde or JsonPlusSerializer())
    return _SealingSerde(inner)


def _boxed(checkpoint: Checkpoint) -> Checkpoint:
    values = checkpoint["channel_values"]
    if not any(isinstance(v, str) for v in values.values()):
        return checkpoint
    copy = checkpoint.copy()
    copy["channel_values"] = {k: _Text(v) if isinstance(v, str) else v for k, v in values.items()}
    return copy


class SealedPostgresSaver(PostgresSaver):
    """``PostgresSaver`` that stores ``str`` channel values as blobs (so they are encrypted)."""

    def put(self, config: Any, checkpoint: Checkpoint, metadata: Any, new_versions: Any) -> Any:
        """Store a checkpoint, with ``str`` channel values moved to the blobs table."""
        return super().put(config, _boxed(checkpoint), metadata, new_versions)


class SealedAsyncPostgresSaver(AsyncPostgresSaver):
    """Async twin of :class:`SealedPostgresSaver`."""

    async def aput(
        self, config: Any, checkpoint: Checkpoint, metadata: Any, new_versions: Any
    ) -> Any:
        """Store a checkpoint, with ``str`` channel values moved to the blobs table."""
        return await super().aput(config, _boxed(checkpoint), metadata, new_versions)


def seal_checkpointer(saver: Any, key: str | bytes | None = None) -> Any:
    """Make ``saver`` encrypt what it stores, when a key is configured; else return it as is.

    Args:
        saver: a ``PostgresSaver`` or ``AsyncPostgresSaver`` (other savers only get the
            encrypting serializer).
        key: the key, else ``$MEMORY_GRAPH_CHECKPOINT_KEY``.

    Returns:
        The same saver object.

    Raises:
        ConfigurationError: a malformed key.
    """
    if isinstance(saver.serde, _SealingSerde):
        return saver  # already sealed
    serde = checkpoint_serde(key, serde=saver.serde)
    if serde is None:
        return saver
    saver.serde = serde
    cls = type(saver)
    if type(saver) is PostgresSaver:
        saver.__class__ = SealedPostgresSaver
    elif type(saver) is AsyncPostgresSaver:
        saver.__class__ = SealedAsyncPostgresSaver
    elif isinstance(saver, PostgresSaver):  # e.g. the pooled saver of ``open_checkpointer``
        saver.__class__ = type(f"Sealed{cls.__name__}", (SealedPostgresSaver, cls), {})
    elif isinstance(saver, AsyncPostgresSaver):
        saver.__class__ = type(f"Sealed{cls.__name__}", (SealedAsyncPostgresSaver, cls), {})
    return saver
