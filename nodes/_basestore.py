"""The governed memory store as a LangGraph ``BaseStore``.

:class:`GovernedStore` lets code written against LangGraph's store interface
(``compile(store=...)``, ``runtime.store``, ``get_store()``, LangMem's memory tools) use
the governed memory. It is an adapter over a ``MemoryStore`` or ``AsyncMemoryStore``:

- **Namespaces name owners and levels.** A namespace is the base template (default
  ``("memories", "{user_id}")``) followed by a level suffix::

      ("memories", "<user_id>")                                          user (global)
      ("memories", "<user_id>", "workspace", "<workspace>")              user / workspace
      ("memories", "<user_id>", "agent", "<agent>")                      agent (global)
      ("memories", "<user_id>", "agent", "<agent>", "workspace", "<ws>") agent / workspace

  Inside a graph run whose owner is known (``context=`` or ``configurable``), a namespace
  naming another user, workspace or agent is refused with ``ScopeError``.
- **Items are memory records.** ``value`` is ``{"content": str, "kind": "fact" |
  "instruction" | "experience"}`` (``kind`` defaults to ``fact``); the item key is the
  record's ``key`` (its id when it has none).
- **Reads are governed.** ``get``/``search``/``list_namespaces`` see only active, unexpired
  records of that owner and level; ``search`` leaves out sensitive records, and with
  ``query=`` it is the store's recall ranking (``score`` is the recall score).
- **Writes are proposals.** ``put`` proposes ``add`` (new key) or ``replace``; ``delete``
  proposes ``remove``. Content passes the store's validation and guard. A proposal made
  inside a graph run carries the run's ``thread_id``, so the prebuilt agent's review node
  puts it to the user in its interrupt; otherwise it waits in the inbox. Only under an
  :class:`~memory_graph.ApprovalPolicy` with a grant does a write commit at once (as
  ``agent-observed``), within the grant's bounds.

Differences from a plain key-value store, and why: a ``put`` is not visible to ``get``
until it is approved (human approval is the point); values are text memories, not
arbitrary JSON (they are guarded, tokenized and rendered into prompts); a search must name
one user (there is no cross-user listing); the same content under a second key is a
duplicate of the stored memory (it raises that memory's confidence, and the second key finds
nothing); keys and namespace labels refuse control and format characters; ``index=`` is
ignored (every record is indexed for recall); ``ttl`` (minutes) becomes the record's
``expires_at`` and reads never refresh it; a batch is not one transaction (each write is its
own proposal).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from langgraph.prebuilt.tool_node import ToolInvocationError
from langgraph.store.base import (
    BaseStore,
    GetOp,
    Item,
    ListNamespacesOp,
    MatchCondition,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
)

from memory_graph import ApprovalPolicy, ConfigurationError, Record, ScopeError

from ._context import resolve_owner
from ._core import AnyStore, IdentityMissingError, NotFoundError, Owner, ValidationError
from ._drive import Call, drive_async, drive_sync, is_async_store
from ._drive import Op as Body
from ._store_input import (
    KINDS,
    check_key,
    check_label,
    check_value,
    check_window,
    is_uuid,
    op_list,
    shown,
    ttl_expiry,
    within,
)
from ._store_match import check_filter, library_errors, matches_all, matches_filter

__all__ = ["DEFAULT_NAMESPACE", "GovernedStore", "RefusedWriteError", "governed_from_runtime"]

log = logging.getLogger(__name__)

DEFAULT_NAMESPACE: tuple[str, ...] = ("memories", "{user_id}")
"""The default base template: the user's global memories."""



def _run_config() -> Mapping[str, Any] | None:
    from langgraph.config import get_config

    try:
        return get_config()
    except RuntimeError:  # called outside a runnable context
        return None


def _run_owner(config: Mapping[str, Any] | None) -> Owner | None:
    if config is None:
        return None
    runtime = (config.get("configurable") or {}).get("__pregel_runtime")
    try:
        return resolve_owner(getattr(runtime, "context", None), config)
    except IdentityMissingError:
        return None


class RefusedWriteError(ValidationError, ToolInvocationError):
    """A ``put``/``delete`` the memory store refused (its validation or the guard).

    A ``ValidationError`` to application code. To a LangGraph ``ToolNode`` (a plain one too,
    and the one ``create_agent`` builds) it is a refused tool argument: a tool that writes
    through this store, such as LangMem's ``manage_memory``, gives the model a
    ``ToolMessage`` with ``status="error"`` carrying :attr:`message` instead of failing
    the turn. The message names the refusal, never the refused text.
    """

    def __init__(self, refused: ValidationError) -> None:
        ValidationError.__init__(self, str(refused))
        self.message = (
            f"Error: {type(refused).__name__}: {refused}. Nothing was saved; do not retry "
            "the same content."
        )
        self.source = refused  # type: ignore[assignment]  # LangGraph types it as pydantic's
        self.tool_name = ""
        self.tool_kwargs: dict[str, Any] = {}
        self.filtered_errors = None


class GovernedStore(BaseStore):
    """A LangGraph ``BaseStore`` whose reads are governed recall and writes are proposals.

    Args:
        store: an open ``MemoryStore`` or ``AsyncMemoryStore`` (after ``setup()``).
        policy: an ``ApprovalPolicy``. With a ``grant_id``, writes the grant covers commit
            at once; operations in ``auto_reject_operations`` are rejected at once.
            ``None``: every write waits for a human (the review node or the inbox).
        namespace: the base template; exactly one part is ``"{user_id}"``, the others are
            literal. The level suffixes (module docstring) follow it.

    Raises:
        ValidationError: a template without exactly one ``"{user_id}"`` part, or with
            other placeholders.

    Example:
        >>> from memory_graph import MemoryStore
        >>> with MemoryStore.open() as memory:  # doctest: +SKIP
        ...     store = GovernedStore(memory)
        ...     store.put(("memories", "alice"), "editor", {"content": "Uses Emacs"})
        ...     store.get(("memories", "alice"), "editor") is None  # pending approval
        True
    """

    supports_ttl = True
    """``ttl`` (minutes) on ``put`` becomes the record's ``expires_at``; reads never refresh it."""

    def __init__(
        self,
        store: AnyStore,
        *,
        policy: ApprovalPolicy | None = None,
        namespace: Sequence[str] = DEFAULT_NAMESPACE,
    ) -> None:
        base = tuple(namespace)
        if any(not isinstance(p, str) or not p for p in base):
            raise ValidationError("namespace template parts must be non-empty strings")
        holes = [p for p in base if "{" in p or "}" in p]
        if holes != ["{user_id}"]:
            raise ValidationError(
                "the namespace template needs exactly one '{user_id}' part and no other "
                f"placeholders, e.g. ('memories', '{{user_id}}'); got {base!r}"
            )
        self.memory_store: AnyStore = store
        """The wrapped ``MemoryStore`` / ``AsyncMemoryStore`` (node factories use it)."""
        self.policy = policy
        self.namespace_template = base
        self._user_at = base.index("{user_id}")
        self._is_async = is_async_store(store)
        self._loop: asyncio.AbstractEventLoop | None = None
        if self._is_async:
            try:
                self._loop = asyncio.get_running_loop()
            except RuntimeError:
                self._loop = None

    # --- driving: one body for both twins --------------------------------------------------

    def drive(self, body: Body[Any]) -> Any:
        """Run a node body on the wrapped store from synchronous code.

        An ``AsyncMemoryStore`` is driven on the event loop it was opened on, which must be
        running in another thread (as in a LangGraph server, where sync nodes run in
        worker threads).

        Raises:
            ConfigurationError: an async store whose loop is not usable from this thread.
        """
        if not self._is_async:
            return drive_sync(self.memory_store, body)
        loop = self._loop
        try:
            current: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
        except RuntimeError:
            current = None
        if loop is None or current is loop or not loop.is_running():
            body.close()
            raise ConfigurationError(
                "a GovernedStore over an AsyncMemoryStore is used synchronously: call its "
                "async methods (aget, asearch, aput ...) or wrap a MemoryStore instead"
            )
        return asyncio.run_coroutine_threadsafe(drive_async(self.memory_store, body), loop).result()

    async def adrive(self, body: Body[Any]) -> Any:
        """Run a node body on the wrapped store from async code."""
        if not self._is_async:
            return await asyncio.to_thread(drive_sync, self.memory_store, body)
        if self._loop is None:
            self._loop = asyncio.get_running_loop()
        return await drive_async(self.memory_store, body)

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """Execute ``ops`` in order (each write is its own proposal; see the module doc)."""
        return list(self.drive(self._batch(op_list(ops), _run_config())))

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        """Async :meth:`batch`."""
        return list(await self.adrive(self._batch(op_list(ops), _run_config())))

    # --- namespaces ------------------------------------------------------------------------

    def namespace_for(self, owner: Owner, level: str = "user") -> tuple[str, ...]:
        """The namespace of ``owner``'s identity at ``level``.

        >>> s = _template_only(("memories", "{user_id}"))
        >>> s.namespace_for(Owner("ada", agent="coder"), "agent")
        ('memories', 'ada', 'agent', 'coder')
        """
        base = tuple(owner.user_id if p == "{user_id}" else p for p in self.namespace_template)
        owner.identity(level)  # type: ignore[arg-type]  # ScopeError when the level is absent
        suffix: tuple[str, ...] = ()
        if level.startswith("agent"):
            suffix += ("agent", str(owner.agent))
        if level.endswith("workspace"):
            suffix += ("workspace", str(owner.workspace))
        return base + suffix

    def _level(self, namespace: Any, config: Mapping[str, Any] | None) -> tuple[Owner, str]:
        """Owner and level of an item's namespace (a whole one, not a prefix).

        Raises:
            ValidationError: the namespace is shorter than the template (names no level).
        """
        if not isinstance(namespace, (tuple, list)):
            raise ValidationError("a namespace is a tuple of strings")
        owner, level = self._parse(tuple(namespace), prefix=False, config=config)
        if level is None:
            shape = "(" + ", ".join(repr(p) for p in self.namespace_template) + ", ...)"
            raise ValidationError(
                f"namespace {shown(namespace)} is shorter than the template: an item lives "
                f"in a whole namespace like {shape}"
            )
        return owner, level

    def _parse(
        self, namespace: tuple[str, ...], *, prefix: bool, config: Mapping[str, Any] | None
    ) -> tuple[Owner, str | None]:
        """Owner and level named by ``namespace`` (level ``None``: a prefix over levels)."""
        base = self.namespace_template
        shape = "(" + ", ".join(repr(p) for p in base) + ", ...)"
        if not isinstance(namespace, tuple) or any(not isinstance(p, str) for p in namespace):
            raise ValidationError(f"a namespace is a tuple of strings like {shape}")
        for part in namespace:
            check_label("a namespace label", part)
        if len(namespace) <= self._user_at:
            raise ScopeError(
                f"a governed store reads one user at a time: the namespace {namespace!r} "
                f"must name the user, as in {shape}"
            )
        for i, part in enumerate(base):
            if i < len(namespace) and i != self._user_at and namespace[i] != part:
                raise ValidationError(f"namespace {namespace!r} does not match {shape}")
        rest = namespace[len(base) :]
        fields: dict[str, str] = {}
        while rest:
            if rest[0] not in ("agent", "workspace") or rest[0] in fields:
                raise ValidationError(
                    f"namespace {namespace!r}: after the user come only ('agent', <name>) "
                    "then ('workspace', <id>)"
                )
            if rest[0] == "agent" and "workspace" in fields:
                raise ValidationError(f"namespace {namespace!r}: 'agent' comes before 'workspace'")
            if len(rest) < 2:
                if prefix:
                    break
                raise ValidationError(f"namespace {namespace!r} ends without a {rest[0]} name")
            fields[rest[0]] = rest[1]
            rest = rest[2:]
        try:
            owner = Owner(
                namespace[self._user_at],
                workspace=fields.get("workspace"),
                agent=fields.get("agent"),
            )
        except ValidationError as exc:
            raise ValidationError(f"namespace {namespace!r}: {exc}") from exc
        for name, value in (("workspace", owner.workspace), ("agent", owner.agent)):
            if name in fields and value is None:  # a blank id names no identity
                raise ValidationError(f"namespace {namespace!r}: the {name} name is blank")
        if len(namespace) < len(base):
            level = None
        else:
            level = ("agent" if "agent" in fields else "user") + (
                "_workspace" if "workspace" in fields else ""
            )
        run_owner = _run_owner(config)
        if run_owner is not None and not within(owner, run_owner):
            raise ScopeError(
                "the namespace names another owner than the run's (context/configurable): "
                "a graph run reads and writes only its own user's memory"
            )
        return owner, None if prefix else level

    # --- items -----------------------------------------------------------------------------

    def _item_key(self, record: Record) -> str:
        return record.key if record.key is not None else record.id

    def _value(self, record: Record) -> dict[str, Any]:
        return {"content": record.content, "kind": record.kind}

    def _in_level(self, owner: Owner, level: str, records: Iterable[Record]) -> list[Record]:
        return [r for r in records if r.identity.level == level and r.kind in KINDS]

    def _find(self, owner: Owner, level: str, key: str) -> Body[Record | None]:
        records = yield Call("list_records", (owner,), {"kinds": list(KINDS), "key": key})
        if not records and is_uuid(key):  # an item keyed by its record id (it has no key)
            try:
                by_id: Record = yield Call("get_record", (owner, key))
            except NotFoundError:
                return None
            now = self.memory_store.clock()
            records = [by_id] if by_id.key is None and by_id.is_active(now) else []
        found = [r for r in self._in_level(owner, level, records) if self._item_key(r) == key]
        return found[-1] if found else None

    def _batch(self, ops: list[Op], config: Mapping[str, Any] | None) -> Body[list[Result]]:
        results: list[Result] = []
        for op in ops:
            if isinstance(op, GetOp):
                results.append((yield from self._get(op, config)))
            elif isinstance(op, SearchOp):
                results.append((yield from self._search(op, config)))
            elif isinstance(op, ListNamespacesOp):
                results.append((yield from self._list_namespaces(op, config)))
            elif isinstance(op, PutOp):
                try:
                    yield from self._put(op, config)
                except ValidationError as exc:  # a tool's refused argument (see the class)
                    raise RefusedWriteError(exc) from exc
                results.append(None)
            else:
                raise ValidationError(f"unknown store operation {type(op).__name__}")
        return results

    def _get(self, op: GetOp, config: Mapping[str, Any] | None) -> Body[Item | None]:
        owner, level = self._level(op.namespace, config)
        check_key(op.key)
        record = yield from self._find(owner, level, op.key)
        if record is None:
            return None
        return Item(
            value=self._value(record),
            key=self._item_key(record),
            namespace=self.namespace_for(owner, level),
            created_at=record.created_at,
            updated_at=record.updated_at,
        )

    def _search(self, op: SearchOp, config: Mapping[str, Any] | None) -> Body[list[SearchItem]]:
        if not isinstance(op.namespace_prefix, (tuple, list)):
            raise ValidationError("a namespace prefix is a tuple of strings")
        prefix = tuple(op.namespace_prefix)
        owner, _ = self._parse(prefix, prefix=True, config=config)
        check_filter(op.filter)
        check_window("search", op.limit, op.offset)
        if op.query is not None and not isinstance(op.query, str):
            raise ValidationError(f"a search query is text, got {type(op.query).__name__}")
        scored: list[tuple[Record, float | None]]
        if op.query and op.query.strip():
            top = self.memory_store.limits.max_search_limit
            exact = op.filter is None and all(
                self.namespace_for(owner, i.level)[: len(prefix)] == prefix
                for i in owner.identities()
            )  # every visible record is in the prefix: the store's top-K is the answer
            if exact:
                top = max(1, min(top, op.offset + op.limit))
            hits = yield Call("search", (owner, op.query), {"limit": top, "kinds": list(KINDS)})
            scored = [(h.record, h.score) for h in hits]
        elif op.filter is None and op.offset + op.limit <= 10_000:
            # A listing: one SQL page of the levels under the prefix, newest change first.
            levels = [
                i.level
                for i in owner.identities()
                if self.namespace_for(owner, i.level)[: len(prefix)] == prefix
            ]
            kwargs = {"limit": op.limit, "offset": op.offset, "kinds": list(KINDS)}
            records = yield Call("list_page", (owner,), {**kwargs, "levels": levels})
            return [
                SearchItem(
                    self.namespace_for(owner, r.identity.level),
                    self._item_key(r),
                    self._value(r),
                    r.created_at,
                    r.updated_at,
                    None,
                )
                for r in records
            ]
        else:
            records = yield Call("list_records", (owner,), {"kinds": list(KINDS)})
            live = [r for r in records if r.sensitivity != "sensitive"]
            live.sort(key=lambda r: (r.updated_at, r.id), reverse=True)
            scored = [(r, None) for r in live]
        out: list[SearchItem] = []
        for record, score in scored:
            namespace = self.namespace_for(owner, record.identity.level)
            if namespace[: len(prefix)] != prefix:
                continue
            value = self._value(record)
            if not matches_filter(value, op.filter):
                continue
            out.append(
                SearchItem(
                    namespace,
                    self._item_key(record),
                    value,
                    record.created_at,
                    record.updated_at,
                    score,
                )
            )
        return out[op.offset : op.offset + op.limit]

    def _list_namespaces(
        self, op: ListNamespacesOp, config: Mapping[str, Any] | None
    ) -> Body[list[tuple[str, ...]]]:
        check_window("list_namespaces", op.limit, op.offset)
        if op.max_depth is not None:
            check_window("list_namespaces max_depth", op.max_depth, 0)
        conditions = op.match_conditions or ()
        if not isinstance(conditions, (tuple, list)) or any(
            not isinstance(c, MatchCondition)
            or c.match_type not in ("prefix", "suffix")
            or not isinstance(c.path, (tuple, list))
            or any(not isinstance(p, str) for p in c.path)
            for c in conditions
        ):
            raise ValidationError(
                "match conditions are MatchCondition(match_type='prefix'|'suffix', path=(str, ...))"
            )
        prefixes = [c.path for c in conditions if c.match_type == "prefix"]
        run_owner = _run_owner(config)
        if prefixes and all("*" not in p for p in prefixes):
            owner, _ = self._parse(tuple(prefixes[0]), prefix=True, config=config)
        elif run_owner is not None:
            owner = run_owner
        else:
            raise ScopeError(
                "a governed store lists one user's namespaces: pass prefix="
                + repr(
                    tuple("<user_id>" if p == "{user_id}" else p for p in self.namespace_template)
                )
                + " or call it inside a graph run with an owner"
            )
        records = yield Call("list_records", (owner,), {"kinds": list(KINDS)})
        names = {self.namespace_for(owner, r.identity.level) for r in records}
        found = sorted(n for n in names if matches_all(n, op.match_conditions or ()))
        if op.max_depth is not None:
            found = sorted({n[: op.max_depth] for n in found})
        return found[op.offset : op.offset + op.limit]

    def _put(self, op: PutOp, config: Mapping[str, Any] | None) -> Body[None]:
        owner, level = self._level(op.namespace, config)
        check_key(op.key)
        thread_id = (config or {}).get("configurable", {}).get("thread_id")
        thread = None if thread_id is None else str(thread_id)
        evidence = {"source": "store", "thread_id": thread}
        record = yield from self._find(owner, level, op.key)
        if op.value is None:
            if record is None:
                return None  # deleting a missing item is a no-op, as in LangGraph
            proposal = yield Call(
                "propose",
                (owner, "remove", {}),
                {
                    "level": level,
                    "target_id": record.id,
                    "base_version": record.version,
                    "evidence": evidence,
                    "thread_id": thread,
                },
            )
        else:
            content, kind = check_value(op.value)
            args: dict[str, Any] = {"content": content}
            if op.ttl is not None:
                args["expires_at"] = ttl_expiry(op.ttl, self.memory_store.clock())
            if record is not None:
                if record.kind != kind:
                    raise ValidationError(
                        f"item {op.key!r} is a {record.kind}; its kind cannot change: "
                        "delete it, then put the new kind"
                    )
                if record.content == content and "expires_at" not in args:
                    return None  # the same value: nothing to propose
                proposal = yield Call(
                    "propose",
                    (owner, "replace", args),
                    {
                        "level": level,
                        "target_id": record.id,
                        "base_version": record.version,
                        "evidence": evidence,
                        "thread_id": thread,
                    },
                )
            else:
                args.update({"kind": kind, "key": op.key})
                proposal = yield Call(
                    "propose",
                    (owner, "add", args),
                    {"level": level, "evidence": evidence, "thread_id": thread},
                )
        if proposal.status != "pending" or self.policy is None:
            return None
        if self.policy.rejects(proposal.operation):
            yield Call(
                "decide",
                (owner, proposal.id, "reject"),
                {"message": "rejected by the approval policy", "actor": "policy"},
            )
        elif self.policy.grant_id is not None:
            try:
                yield Call("decide_with_grant", (owner, proposal.id, self.policy.grant_id))
            except NotFoundError:
                pass  # the grant belongs to another owner or level: a human decides
        return None


for _name in ("get", "search", "put", "delete", "list_namespaces"):
    for _each in (_name, "a" + _name):  # LangGraph's namespace checks raise library errors
        setattr(GovernedStore, _each, library_errors(BaseStore, _each))


def governed_from_runtime(runtime_store: Any) -> GovernedStore:
    """The run's ``GovernedStore`` (``runtime.store``) for nodes built without a store.

    Raises:
        ConfigurationError: the graph was compiled without ``store=GovernedStore(...)``.
    """
    if isinstance(runtime_store, GovernedStore):
        return runtime_store
    raise ConfigurationError(
        "this memory node was built without a store and the graph's runtime.store is "
        f"{type(runtime_store).__name__}: compile with store=GovernedStore(memory_store) "
        "(or set store.path in langgraph.json), or pass the store to the node factory"
    )


def _template_only(template: Sequence[str]) -> GovernedStore:
    """A store shell for namespace arithmetic only (doctests)."""
    shell = GovernedStore.__new__(GovernedStore)
    shell.namespace_template = tuple(template)
    shell._user_at = shell.namespace_template.index("{user_id}")
    return shell
