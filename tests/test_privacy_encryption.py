"""Checkpoints encrypted at rest (issue 12 §2): a whole-database scan finds no plaintext
message in LangGraph's tables once a key is configured; without a key it does (the control)."""

from __future__ import annotations

import asyncio
import base64
import sys
from typing import Any

import pytest
from _graph_helpers import cfg, turn
from _scan import scan

from memory_graph import AsyncMemoryStore, ConfigurationError, MemoryStore, Owner
from nodes import create_memory_agent, decide_all, open_async_checkpointer, open_checkpointer
from nodes._encryption import CHECKPOINT_KEY_ENV, checkpoint_key

KEY = base64.b64encode(bytes(range(32))).decode()
OTHER_KEY = bytes(range(1, 33)).hex()
ALICE = Owner("alice")
SAID = "Call me Zorbulon. Remember that my cat is named Vexmirth. Kazoolia weather is grim."
WORDS = ["Zorbulon", "Vexmirth", "Kazoolia"]


def _checkpoint_hits(dsn: str) -> dict[str, list[str]]:
    hits = scan(dsn, WORDS)
    return {w: [h for h in locs if ".checkpoint" in h] for w, locs in hits.items()}


def _two_turns(dsn: str, key: str | None) -> None:
    with MemoryStore.from_dsn(dsn) as store:
        store.setup()
        with open_checkpointer(store, encryption_key=key) as saver:
            agent = create_memory_agent(_model(), store, checkpointer=saver)
            ctx = {"user_id": "alice"}
            agent.invoke(turn(SAID), cfg("t1"), context=ctx)
            from nodes import pending_review, resume_review

            _, request = pending_review(agent, "t1", owner=ALICE)
            resume_review(agent, owner=ALICE, thread_id="t1", decisions=decide_all(request))
            # Second turn: user_context and recalled (plain str channels) now hold the name.
            out = agent.invoke(turn("Hello, how is Vexmirth?"), cfg("t1"), context=ctx)
            assert "Zorbulon" in out["user_context"]
            state = agent.get_state(cfg("t1")).values
            assert SAID in [m.content for m in state["messages"]]


def _model() -> Any:
    from nodes import OfflineChatModel

    return OfflineChatModel()


def test_without_a_key_the_scan_finds_the_message(pg_dsn: str, monkeypatch: Any) -> None:
    monkeypatch.delenv(CHECKPOINT_KEY_ENV, raising=False)
    _two_turns(pg_dsn, None)
    hits = _checkpoint_hits(pg_dsn)
    assert all(hits[w] for w in WORDS), hits  # the control: the scan does see plaintext
    assert any("checkpoints.checkpoint" in h for h in hits["Zorbulon"])  # inline str channel


def test_with_a_key_no_plaintext_at_rest(pg_dsn: str, monkeypatch: Any) -> None:
    monkeypatch.delenv(CHECKPOINT_KEY_ENV, raising=False)
    _two_turns(pg_dsn, KEY)
    assert _checkpoint_hits(pg_dsn) == {w: [] for w in WORDS}
    # What was approved is in the memory tables by design; what was only said is nowhere.
    assert scan(pg_dsn, ["Kazoolia"]) == {"Kazoolia": []}


def test_env_key_async_and_wrong_key(pg_dsn: str, monkeypatch: Any) -> None:
    monkeypatch.setenv(CHECKPOINT_KEY_ENV, OTHER_KEY)

    async def run() -> None:
        store = await AsyncMemoryStore.open(pg_dsn)
        try:
            await store.setup()
            async with open_async_checkpointer(store) as saver:
                agent = create_memory_agent(_model(), store, checkpointer=saver)
                await agent.ainvoke(turn(SAID), cfg("t2"), context={"user_id": "alice"})
                values = (await agent.aget_state(cfg("t2"))).values
                assert values["messages"][0].content == SAID
            # Another key cannot read the thread: a clear configuration error, not garbage.
            async with open_async_checkpointer(store, encryption_key=KEY) as saver:
                agent = create_memory_agent(_model(), store, checkpointer=saver)
                with pytest.raises(ConfigurationError, match="another key"):
                    await agent.aget_state(cfg("t2"))
        finally:
            await store.close()

    asyncio.run(run())
    assert _checkpoint_hits(pg_dsn) == {w: [] for w in WORDS}


def test_plaintext_threads_stay_readable_after_enabling(pg_dsn: str, monkeypatch: Any) -> None:
    monkeypatch.delenv(CHECKPOINT_KEY_ENV, raising=False)
    with MemoryStore.from_dsn(pg_dsn) as store:
        store.setup()
        with open_checkpointer(store) as saver:
            create_memory_agent(_model(), store, checkpointer=saver).invoke(
                turn("Kazoolia is far"), cfg("old"), context={"user_id": "bob"}
            )
        with open_checkpointer(store, encryption_key=KEY) as saver:
            agent = create_memory_agent(_model(), store, checkpointer=saver)
            assert agent.get_state(cfg("old")).values["messages"][0].content == "Kazoolia is far"
            agent.invoke(turn("and cold"), cfg("old"), context={"user_id": "bob"})
            assert len(agent.get_state(cfg("old")).values["messages"]) == 4


@pytest.mark.parametrize(
    "bad",
    [
        "short",
        base64.b64encode(bytes(range(20))).decode(),  # 20 bytes: not an AES key size
        "z" * 31,  # not hex, not valid base64
        "a" * 40 + "==",  # base64 of 30 bytes
        b"0123456789",
        "é" * 32,
        12345,
    ],
)
def test_bad_keys_are_configuration_errors(bad: Any) -> None:
    with pytest.raises(ConfigurationError):
        checkpoint_key(bad)


def test_key_forms() -> None:
    raw = bytes(range(32))
    assert checkpoint_key(base64.b64encode(raw).decode()) == raw
    assert checkpoint_key(raw.hex()) == raw
    assert checkpoint_key(raw[:16]) == raw[:16]
    assert checkpoint_key("  ") is None


def test_the_aes_eax_format_without_pycryptodome_names_the_extra(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from langgraph.checkpoint.serde.encrypted import EncryptedSerializer

    from nodes._encryption import checkpoint_serde

    raw = bytes(range(32))
    old = EncryptedSerializer.from_pycryptodome_aes(key=raw).dumps_typed("Kazoolia")
    monkeypatch.setitem(sys.modules, "Crypto", None)  # pycryptodome not installed
    monkeypatch.setitem(sys.modules, "Crypto.Cipher", None)
    ours = checkpoint_serde(raw)
    assert ours is not None
    assert ours.loads_typed(ours.dumps_typed("Kazoolia")) == "Kazoolia"  # AES-GCM needs nothing
    with pytest.raises(ConfigurationError, match=r"\[aes-eax\]"):
        ours.loads_typed(old)
    eax = checkpoint_serde(raw, cipher="aes-eax")
    assert eax is not None
    with pytest.raises(ConfigurationError, match="pycryptodome"):
        eax.dumps_typed("Kazoolia")


def test_langgraph_pycryptodome_format_is_read_and_can_be_written() -> None:
    from langchain_core.messages import HumanMessage
    from langgraph.checkpoint.serde.encrypted import EncryptedSerializer

    from nodes._encryption import checkpoint_serde

    raw = bytes(range(32))
    value = [HumanMessage("Kazoolia", id="m1")]
    langgraph = EncryptedSerializer.from_pycryptodome_aes(key=raw)
    ours = checkpoint_serde(raw)
    eax = checkpoint_serde(raw, cipher="aes-eax")
    assert ours is not None and eax is not None
    typ, data = ours.dumps_typed(value)
    assert typ == "msgpack+aesgcm" and b"Kazoolia" not in data
    assert ours.loads_typed((typ, data)) == value
    assert ours.loads_typed(langgraph.dumps_typed(value)) == value  # LANGGRAPH_AES_KEY format
    typ, data = eax.dumps_typed(value)
    assert typ == "msgpack+aes" and langgraph.loads_typed((typ, data)) == value
    with pytest.raises(ConfigurationError, match="another key"):
        checkpoint_serde(bytes(32)).loads_typed(ours.dumps_typed(value))  # type: ignore[union-attr]
    with pytest.raises(ConfigurationError):
        ours.loads_typed(("msgpack+rot13", b"x"))
    with pytest.raises(ConfigurationError):
        checkpoint_serde(raw, cipher="des")
