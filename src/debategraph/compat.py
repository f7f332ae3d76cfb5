"""Every private name of another library this package uses, in one place.

No other module of ``src/`` reaches a private name of LangGraph, LangChain, the openai
SDK or Aegra: ``tests/test_private_names.py`` lists the private names used outside this
module (none), and ``tests/test_compat.py`` checks that each one here is still where it
is taken from and still does what is relied on, so an upgrade that breaks one fails
there with a message naming it. Each says why there is no public way.

**LangGraph.** Its public API has no operation for what
:mod:`debategraph.checkpoints.maintenance` does to stored checkpoints (copy a thread
with its writes, store a full snapshot of a delta channel), so it needs four names that
LangGraph keeps private. The other thing LangGraph does not promise is the layout of its
savers' tables: the SQL this package runs on them lives in
:mod:`debategraph.checkpoints.tables` (and the lean SQLite saver's table definitions in
:mod:`debategraph.checkpoints.backends`), each listing the tables and columns it names;
``tests/test_compat.py`` checks those lists against the schema LangGraph's own savers
create. Checked against langgraph 1.2.22 to 1.2.24 and langgraph-checkpoint 4.3.2 (the
bounds in ``pyproject.toml`` stop at their next major versions).

**langchain-openai and langchain-core** (the lean client,
:mod:`debategraph.models.client`). ``ChatOpenAI`` has no public way to build a request
body without sending it, to turn a reply's JSON into a ``ChatResult`` without the SDK's
typed models, or to say which of its errors a raw SDK error becomes; langchain-core has
no public way to generate with the model's cache and rate limiter but without run
managers. :data:`LEAN_CLIENT` says whether every one of these names exists with the
signature the lean client calls it with (checked once, on first use); where one does
not, :func:`debategraph.models.binding.get_chat_model` builds stock ``ChatOpenAI`` and
logs one debug line naming what changed. ``pyproject.toml`` bounds langchain-openai,
langchain-core and openai below the next minor version CI has tested.

**Aegra** (``aegra-api``, :mod:`debategraph.serve`): it has no public way to say which
config file it loaded, to open a session on its database outside a request, or to give
its routes and runs another checkpointer and store than its own (the server wraps them
to check who owns what they touch, :mod:`debategraph.serve.owned_storage`), to be told
when a run's execution ends (to count a user's runs in flight,
:mod:`debategraph.serve.limits`), or to sign a request in outside its middleware (the
server knows who asks before Aegra acts, :mod:`debategraph.serve.app`). Aegra documents
a server to run (``uvicorn aegra_api.main:app``) and its config files, not a library:
every other module of it this package imports (its tables, request models, config
readers, active runs, graph service) is imported here only, each by a function named
for what it gives (``aegra_*``), imported on first use since Aegra is the optional
``serve`` extra. The one name of Aegra outside this module is that documented entry
point, the ``"aegra_api.main:app"`` :mod:`debategraph.serve.server` hands uvicorn
(``tests/test_private_names.py`` checks that no other module imports ``aegra_api``).

Attributes:
    NULL_TASK_ID: The task id LangGraph gives writes made outside any task (a
        ``Command``'s ``resume``, ``update`` and ``goto`` input). ``fork`` keeps only
        these writes at the fork point: the tasks of the next step run again.
        From ``langgraph._internal._constants``.
    MISSING: The "no stored value" sentinel. ``DeltaChannel.from_checkpoint(MISSING)``
        starts an empty channel (``None`` would be taken as a stored value); ``prune``
        passes it when ``get_delta_channel_history`` finds no seed; the ``messages``
        channel (:class:`~debategraph.state.reducers.MessagesChannel`) returns it for
        "nothing to save".
        From ``langgraph._internal._typing``.
    DeltaSnapshot: The blob type of a delta channel's full value in ``channel_values``;
        ``prune`` stores one in the oldest checkpoint it keeps, so that the ancestor
        walk stops there. The checkpoint serializer encodes it as its own msgpack
        extension type. ``langgraph.checkpoint.serde.types._DeltaSnapshot``.
    task_path_str: Formats a task's ``path`` tuple as the ``task_path`` string the
        SQLite and Postgres savers store with each write (a replay sorts a step's
        writes by it). ``fork`` uses it when it cannot read stored paths with SQL.
        From ``langgraph.pregel._algo``.
    StateLike: What LangGraph accepts as a state, input or output schema (a TypedDict,
        dataclass or pydantic model): the bound of ``StateGraph``'s type parameters,
        which :class:`~debategraph.graphs.skeleton.PatternGraph` passes on. Typing only.
        From ``langgraph._internal._typing``.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Awaitable, Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from langgraph._internal._constants import NULL_TASK_ID
from langgraph._internal._typing import MISSING, StateLike
from langgraph.checkpoint.serde.types import _DeltaSnapshot as DeltaSnapshot
from langgraph.pregel._algo import task_path_str

if TYPE_CHECKING:
    import asyncio

    import openai
    from langchain_core.messages import BaseMessage
    from langchain_core.outputs import ChatResult
    from langchain_openai import ChatOpenAI

__all__ = [
    "LEAN_CLIENT_NAMES",
    "MISSING",
    "NULL_TASK_ID",
    "DeltaSnapshot",
    "StateLike",
    "aegra_active_run",
    "aegra_assistant_table",
    "aegra_authenticate_handler",
    "aegra_checkpointer",
    "aegra_config_path",
    "aegra_create_models",
    "aegra_http_config",
    "aegra_load_config",
    "aegra_read_settings",
    "aegra_resolve_assistant_id",
    "aegra_run_table",
    "aegra_served_graph",
    "aegra_session_maker",
    "aegra_storage",
    "aegra_thread_table",
    "agenerate_with_cache",
    "allow_msgpack_types",
    "chat_result",
    "ensure_sync_client",
    "generate_with_cache",
    "hold_aegra_runs",
    "infer_as_node",
    "lean_client_problems",
    "raise_as_chat_openai",
    "request_payload",
    "set_aegra_storage",
    "task_path_str",
    "uses_responses_api",
]

#: The private names the lean client calls, as ``(module, attribute path)``, with the
#: parameters it passes (by name; ``*`` where it passes ``**kwargs`` through).
LEAN_CLIENT_NAMES: dict[tuple[str, str], tuple[str, ...]] = {
    ("langchain_openai", "ChatOpenAI._get_request_payload"): ("self", "input_", "stop", "*"),
    ("langchain_openai", "ChatOpenAI._create_chat_result"): ("self", "response"),
    ("langchain_openai", "ChatOpenAI._use_responses_api"): ("self", "payload"),
    ("langchain_openai", "ChatOpenAI._ensure_sync_client_available"): ("self",),
    ("langchain_openai", "ChatOpenAI._generate_with_cache"): ("self", "messages", "stop", "*"),
    ("langchain_openai", "ChatOpenAI._agenerate_with_cache"): ("self", "messages", "stop", "*"),
    ("langchain_openai.chat_models.base", "_handle_openai_bad_request"): ("e",),
    ("langchain_openai.chat_models.base", "_handle_openai_api_error"): ("e",),
}


def _lookup(module: str, path: str) -> Any:
    """``module``'s attribute ``path`` (dotted), imported."""
    import importlib

    value: Any = importlib.import_module(module)
    for part in path.split("."):
        value = getattr(value, part)
    return value


def _takes(func: Callable[..., Any], names: tuple[str, ...]) -> bool:
    """Whether ``func`` takes each of ``names`` by name (``*``: any keyword arguments)."""
    params = inspect.signature(func).parameters
    for name in names:
        if name == "*":
            if not any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()):
                return False
        elif name not in params or params[name].kind is inspect.Parameter.POSITIONAL_ONLY:
            return False
    return True


@functools.cache
def lean_client_problems() -> tuple[str, ...]:
    """What the lean client needs and the installed libraries lack (empty: nothing).

    Checked once per process: each name of :data:`LEAN_CLIENT_NAMES` exists and takes
    the parameters the lean client passes.

    Returns:
        One line per missing or changed name.
    """
    problems = []
    for (module, path), names in LEAN_CLIENT_NAMES.items():
        try:
            func = _lookup(module, path)
        except (ImportError, AttributeError):
            problems.append(f"{module}.{path} is gone")
            continue
        if not callable(func) or not _takes(func, names):
            problems.append(f"{module}.{path} no longer takes ({', '.join(names)})")
    return tuple(problems)


def request_payload(
    chat: ChatOpenAI, messages: list[BaseMessage], stop: list[str] | None, **kwargs: Any
) -> dict[str, Any]:
    """The request body ``ChatOpenAI`` would send for ``messages``, not sent.

    ``ChatOpenAI._get_request_payload``: no public method builds it.
    """
    payload: dict[str, Any] = chat._get_request_payload(messages, stop=stop, **kwargs)
    return payload


def uses_responses_api(chat: ChatOpenAI, payload: dict[str, Any]) -> bool:
    """Whether ``ChatOpenAI`` would send ``payload`` to the Responses API.

    ``ChatOpenAI._use_responses_api``: the rule (settings, tools, payload fields) is not
    public, and the lean path serves chat completions only.
    """
    return bool(chat._use_responses_api(payload))


def ensure_sync_client(chat: ChatOpenAI) -> None:
    """Make ``chat``'s sync SDK client if it is built lazily, as ``ChatOpenAI._generate`` does.

    ``ChatOpenAI._ensure_sync_client_available``: not public.
    """
    chat._ensure_sync_client_available()


def chat_result(chat: ChatOpenAI, reply: Any) -> ChatResult:
    """A reply's JSON (a dict) as the ``ChatResult`` ``ChatOpenAI`` makes of it.

    ``ChatOpenAI._create_chat_result`` takes a dict as well as the SDK's typed reply; no
    public method converts one.
    """
    return chat._create_chat_result(reply)


def generate_with_cache(
    chat: ChatOpenAI, messages: list[BaseMessage], stop: list[str] | None, **kwargs: Any
) -> ChatResult:
    """Generate with the model's cache and rate limiter but no run managers.

    ``BaseChatModel._generate_with_cache``: the public ``invoke``/``generate`` always
    configure callbacks, the cost the lean path skips when nobody listens.
    """
    return chat._generate_with_cache(messages, stop=stop, **kwargs)


async def agenerate_with_cache(
    chat: ChatOpenAI, messages: list[BaseMessage], stop: list[str] | None, **kwargs: Any
) -> ChatResult:
    """:func:`generate_with_cache`, awaited (``BaseChatModel._agenerate_with_cache``)."""
    return await chat._agenerate_with_cache(messages, stop=stop, **kwargs)


def raise_as_chat_openai(exc: openai.APIError) -> None:
    """Raise what ``ChatOpenAI`` raises for the SDK's ``exc`` (context overflow...).

    langchain-openai's ``_handle_openai_bad_request`` and ``_handle_openai_api_error``:
    its mapping of SDK errors is not public. Returns when ``exc`` maps to nothing (the
    caller re-raises it).
    """
    import openai
    from langchain_openai.chat_models import base

    if isinstance(exc, openai.BadRequestError):
        base._handle_openai_bad_request(exc)
    else:
        base._handle_openai_api_error(exc)


@functools.cache
def chat_model_providers() -> dict[str, str]:
    """The providers LangChain's ``init_chat_model`` reads (``anthropic:claude-...``).

    Each with the module its chat model lives in (``langchain_anthropic``), from
    ``langchain.chat_models.base._BUILTIN_PROVIDERS``: read once; empty where the
    ``langchain`` package is not installed or the table has changed shape.

    Returns:
        Provider name -> module.
    """
    try:
        from langchain.chat_models import base
    except ImportError:
        return {}
    table = getattr(base, "_BUILTIN_PROVIDERS", None)
    if not isinstance(table, dict):
        return {}
    return {
        str(name): str(entry[0])
        for name, entry in table.items()
        if isinstance(entry, tuple) and entry and isinstance(entry[0], str)
    }


def aegra_config_path() -> Path | None:
    """The config file Aegra loaded (``aegra.json`` or ``langgraph.json``), if any.

    ``aegra_api.config._resolve_config_path``: Aegra has no public way to say which file
    ``load_config()`` read.
    """
    from aegra_api.config import _resolve_config_path  # type: ignore[import-untyped]

    path = _resolve_config_path()
    return None if path is None else Path(path)


def aegra_session_maker() -> Callable[[], Any]:
    """Aegra's async SQLAlchemy session factory, for a query outside a request.

    ``aegra_api.core.orm._get_session_maker``: Aegra opens sessions only through its
    request dependencies.
    """
    from aegra_api.core.orm import _get_session_maker  # type: ignore[import-untyped]

    maker: Callable[[], Any] = _get_session_maker()
    return maker


def aegra_storage() -> tuple[Any, Any]:
    """The checkpointer and store Aegra hands every route and run (once it has started).

    ``aegra_api.core.database.db_manager._checkpointer`` and ``._store``: Aegra reads
    them through ``get_checkpointer()`` / ``get_store()`` and has no way to set them.
    """
    from aegra_api.core.database import db_manager  # type: ignore[import-untyped]

    return db_manager._checkpointer, db_manager._store


def set_aegra_storage(saver: Any, store: Any) -> None:
    """Make ``saver`` and ``store`` what Aegra hands every route and run from now on.

    Sets the attributes :func:`aegra_storage` reads; ``get_checkpointer()`` and
    ``get_store()`` return them (checked by ``tests/test_compat.py``).
    """
    from aegra_api.core.database import db_manager

    db_manager._checkpointer = saver
    db_manager._store = store


def hold_aegra_runs(wrapper: Callable[..., Any]) -> None:
    """Run every run Aegra starts through ``wrapper(execute, *args, **kwargs)``.

    ``aegra_api.api.runs.execute_run_async``: each run route creates the run's task from
    this module-level function, so replacing it is the one way to act when a run's
    execution ends, whatever ends it. Idempotent.
    """
    from aegra_api.api import runs  # type: ignore[import-untyped]

    execute = runs.execute_run_async
    if getattr(execute, "__wrapped_by_debategraph__", False):
        return

    @functools.wraps(execute)
    async def held(*args: Any, **kwargs: Any) -> Any:
        return await wrapper(execute, *args, **kwargs)

    held.__wrapped_by_debategraph__ = True  # type: ignore[attr-defined]
    runs.execute_run_async = held


def aegra_authenticate_handler() -> Callable[[dict[str, str]], Awaitable[Any]] | None:
    """The ``@auth.authenticate`` handler of the auth Aegra serves with (``None``: none).

    ``langgraph_sdk.Auth._authenticate_handler`` (a slot), read as Aegra's own
    middleware reads it: ``Auth`` keeps its handler there and has no getter, and
    ``aegra_api.core.auth_middleware.get_auth_instance()`` is the instance Aegra loaded.
    """
    from aegra_api.core.auth_middleware import get_auth_instance  # type: ignore[import-untyped]

    handler: Callable[[dict[str, str]], Awaitable[Any]] | None = getattr(
        get_auth_instance(), "_authenticate_handler", None
    )
    return handler


def aegra_read_settings() -> None:
    """Have Aegra read its settings from the environment now (``DATABASE_URL``...).

    ``aegra_api.settings`` reads them once, when first imported; the server imports it
    before it drops the URL from its environment.
    """
    import importlib

    importlib.import_module("aegra_api.settings")


def aegra_load_config() -> Any:
    """The config Aegra serves (``aegra_api.config.load_config()``; ``None``: none)."""
    from aegra_api.config import load_config

    return load_config()


def aegra_http_config() -> dict[str, Any]:
    """The ``http`` section of Aegra's config (``aegra_api.config.load_http_config()``)."""
    from aegra_api.config import load_http_config

    return dict(load_http_config() or {})


def aegra_thread_table() -> Any:
    """Aegra's ORM class of its threads table (``aegra_api.core.orm.Thread``)."""
    from aegra_api.core.orm import Thread

    return Thread


def aegra_assistant_table() -> Any:
    """Aegra's ORM class of its assistants table (``aegra_api.core.orm.Assistant``)."""
    from aegra_api.core.orm import Assistant

    return Assistant


def aegra_run_table() -> Any:
    """Aegra's ORM class of its runs table (``aegra_api.core.orm.Run``)."""
    from aegra_api.core.orm import Run

    return Run


def aegra_create_models() -> tuple[Any, Any]:
    """Aegra's request models that create a thread and an assistant, in that order.

    ``aegra_api.models.ThreadCreate`` and ``AssistantCreate``: a body read with them
    names the id Aegra will insert (their aliases included).
    """
    from aegra_api.models import AssistantCreate, ThreadCreate  # type: ignore[import-untyped]

    return ThreadCreate, AssistantCreate


def aegra_checkpointer() -> Any:
    """The checkpointer Aegra hands its routes and runs (``db_manager.get_checkpointer()``)."""
    from aegra_api.core.database import db_manager

    return db_manager.get_checkpointer()


def aegra_active_run(run_id: str) -> asyncio.Task[Any] | None:
    """The task of a run this process executes (``aegra_api.api.runs.active_runs``)."""
    from aegra_api.api.runs import active_runs  # type: ignore[import-untyped]

    task: asyncio.Task[Any] | None = active_runs.get(run_id)
    return task


def aegra_resolve_assistant_id(assistant_id: str, graph_ids: Any) -> str:
    """The id Aegra gives a graph's default assistant, or ``assistant_id`` as it is.

    ``aegra_api.utils.assistants.resolve_assistant_id``.
    """
    from aegra_api.utils.assistants import resolve_assistant_id  # type: ignore[import-untyped]

    return str(resolve_assistant_id(assistant_id, graph_ids))


async def aegra_served_graph(graph_id: str) -> Any:
    """The compiled graph Aegra serves by ``graph_id``, without its checkpointer.

    ``aegra_api.services.langgraph_service``'s ``get_graph_for_validation``; raises
    ``ValueError`` for a graph it does not serve.
    """
    from aegra_api.services.langgraph_service import (  # type: ignore[import-untyped]
        get_langgraph_service,
    )

    return await get_langgraph_service().get_graph_for_validation(graph_id)


def infer_as_node(graph: Any, versions_seen: Any) -> Any:
    """The node LangGraph takes a state update without ``as_node`` to come from.

    ``Pregel._infer_as_node``, what ``update_state`` asks: ``None`` when it cannot tell
    (the last step ran several nodes at once), and then the update fails. No public way
    asks it beforehand. A LangGraph without it: the first node, as if it could tell.
    """
    infer = getattr(graph, "_infer_as_node", None)
    return next(iter(graph.nodes), "") if infer is None else infer(versions_seen)


def allow_msgpack_types(types: Iterable[type[Any]]) -> None:
    """Add ``types`` to LangGraph's safe msgpack types: any saver revives them, warning none.

    ``langgraph.checkpoint.serde._msgpack.SAFE_MSGPACK_TYPES``, which every
    ``JsonPlusSerializer`` reads when it revives a stored type. LangGraph's public
    allowlists are per serializer (its ``allowed_msgpack_modules``, a saver's
    ``with_allowlist``), so a saver a user builds (``InMemorySaver()``, ``SqliteSaver``,
    ``PostgresSaver``) warns at each type outside that set, and under
    ``LANGGRAPH_STRICT_MSGPACK=true`` a subgraph's records came back as dicts; no public
    way registers a type for every serializer.
    """
    from langgraph.checkpoint.serde import _msgpack

    keys = {(t.__module__, t.__name__) for t in types}
    if not keys <= _msgpack.SAFE_MSGPACK_TYPES:
        _msgpack.SAFE_MSGPACK_TYPES = _msgpack.SAFE_MSGPACK_TYPES | keys
