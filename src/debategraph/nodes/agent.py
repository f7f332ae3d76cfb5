"""The one agent-node helper: which model an agent calls, the call itself, its usage.

Every pattern's agent nodes call the model through an :class:`Agent`, made from the
agent's record (:func:`agent_of`: its own model, tools or agent, checked when the graph
is built): it finds the model (:mod:`debategraph.models.choice`: the agent's own, else the
one the graph was built with, else the run's :class:`~debategraph.models.context.Context`, as in
LangGraph Studio, whose ``agent_models`` may name one per agent), runs the agent's tool
loop or its own agent first (:mod:`debategraph.models.loops`), makes the structured or
text call through :mod:`debategraph.models` (validation, repair, retry, fallback, usage), blocking
(:meth:`Agent.ask`), awaited (:meth:`Agent.aask`) or as steps a node body yields from
(:meth:`Agent.ask_steps`, see :mod:`debategraph.nodes.dual`). Nodes turn the result into
a transcript record, and :func:`recorded` puts the agent's tool calls before it and
stamps it with the model that answered; :func:`~debategraph.state.base.turn_update`
writes them and charges the usage (per agent and per model).

The model stack (``openai``, ``langchain-openai``) is imported on the first call, not when
a graph module is imported: declaring or validating a graph stays quick.
"""

from __future__ import annotations

import contextvars
import dataclasses
import functools
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar, cast

from pydantic import BaseModel

from debategraph.errors import ModelUnavailableError
from debategraph.models import tracing
from debategraph.models.choice import own_model, without_tool_calls
from debategraph.models.steps import quiet, tagged
from debategraph.nodes.messages import AGENT_NAME_KEY
from debategraph.nodes.tools import import_ref, resolve_tools
from debategraph.prompts import EXTRACT_FIELDS
from debategraph.state.records import DEFAULT_MAX_TOOL_CALLS, AgentSpec, Turn

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel
    from langchain_core.messages import BaseMessage
    from langchain_core.runnables import Runnable
    from langchain_core.tools import BaseTool
    from langgraph.runtime import Runtime

    from debategraph.models import CallResult, ModelBinding, Steps, TextResult
    from debategraph.models.context import Context
    from debategraph.models.loops import Work
    from debategraph.models.spec import ModelSpec

S = TypeVar("S", bound=BaseModel)
F = TypeVar("F", bound=Callable[..., Any])

#: An official as given to a factory's ``officials=``: a record, or its data
#: (``{"name": "judge", "model": ...}``); see :func:`officials_of`.
OfficialLike = AgentSpec | Mapping[str, Any]


def bind(model: BaseChatModel | ModelBinding | ModelSpec | None) -> ModelBinding | None:
    """What a graph factory keeps of its ``model`` argument.

    Args:
        model: A chat model, binding or spec; ``None`` reads the model from each run's
            context.

    Returns:
        The binding, or ``None``.
    """
    if model is None:
        return None
    from debategraph.models import bind_model

    return bind_model(model)


def _named(steps_of: F) -> F:
    """Make every model call of an agent's steps carry its name (``lc_agent_name``).

    ``stream_mode="messages"`` then tells whose tokens each chunk holds.

    Args:
        steps_of: An :class:`Agent` method returning a call's steps.

    Returns:
        The method, its steps wrapped by :func:`~debategraph.models.steps.tagged`.
    """

    @functools.wraps(steps_of)
    def method(agent: Agent, *args: Any, **kwargs: Any) -> Any:
        metadata = {AGENT_NAME_KEY: agent.name}
        if tracing.TRACER is not None:  # an invoke_agent span around the turn
            return tracing.turn(steps_of(agent, *args, **kwargs), agent.name, metadata)
        return tagged(steps_of(agent, *args, **kwargs), metadata)

    return cast(F, method)


@dataclass(frozen=True)
class Agent:
    """One agent of a graph: its name, the model it calls, its tools or its own agent.

    Made with :func:`agent_of` from the agent's record; ``Agent(name, model)`` is an
    agent with nothing of its own.

    Attributes:
        name: The agent's name (as recorded on its turns and usage).
        model: The model the graph was built with; ``None`` reads the run's context.
        own: Its own model (a spec or a chat model), before the graph's.
        tools: Its tools: each turn first runs a tool loop of at most ``max_tool_calls``.
        runnable: Its own agent (messages in, messages out), which makes its turns.
        max_tool_calls: The tool loop's cap per turn.
    """

    name: str
    model: ModelBinding | None = None
    own: ModelSpec | BaseChatModel | None = None
    tools: tuple[BaseTool, ...] = ()
    runnable: Runnable[Any, Any] | None = None
    max_tool_calls: int = DEFAULT_MAX_TOOL_CALLS

    def binding(self, runtime: Runtime[Context] | None) -> ModelBinding:
        """The model this agent calls in this run (see :mod:`debategraph.models.choice`).

        Args:
            runtime: The node's runtime (its context names the model).

        Returns:
            The bound model.
        """
        from debategraph.models.choice import agent_binding

        context = runtime.context if runtime is not None else None
        return agent_binding(self.name, self.own, self.model, context)

    @_named
    def ask_steps(
        self,
        runtime: Runtime[Context] | None,
        schema: type[S],
        messages: Sequence[BaseMessage],
        **kwargs: Any,
    ) -> Steps[CallResult[S]]:
        """The steps of a structured reply, for a node body (``yield from`` them).

        An agent with tools runs its tool loop first; an agent of its own answers in
        prose, from which the fields are read (as JSON if it wrote JSON, else with one
        structured call on this agent's model). No call streams its tokens
        (:func:`~debategraph.models.steps.quiet`): the turn the node makes of the
        result is what ``stream_mode="messages"`` shows. See
        :func:`~debategraph.models.structured_call` and
        :func:`~debategraph.nodes.dual.agent_node`.

        Args:
            runtime: The node's runtime (its context names the model).
            schema: The pydantic model the reply must fit.
            messages: The prompt.
            **kwargs: Passed on (``max_attempts``).

        Returns:
            The steps; they return the validated value (or ``None`` with a reason), its
            usage, the model and the tool calls made.

        Raises:
            ModelUnavailableError: If the agent's endpoint fails (the line names the agent).
        """
        from debategraph.models import structured_steps
        from debategraph.models.calls import CallResult, parse_reply

        try:
            work = yield from quiet(self._work_steps(runtime, messages))
            if work is None:
                binding = self.binding(runtime)
                result = yield from quiet(structured_steps(binding, schema, messages, **kwargs))
                return dataclasses.replace(result, model=binding.name)
            records = tuple(work.records)
            if self.runnable is not None:
                label = self.label()
                if not work.text:
                    return CallResult(None, work.usage, 0, work.reason, label, records)
                from langchain_core.messages import AIMessage, HumanMessage, SystemMessage

                parsed, _ = parse_reply(schema, AIMessage(work.text), "json_schema")
                if parsed is not None:
                    return CallResult(parsed, work.usage, 0, None, label, records)
                prompt = [SystemMessage(EXTRACT_FIELDS), HumanMessage(work.text)]
            else:
                prompt = work.messages
            binding = self.binding(runtime)
            result = yield from quiet(structured_steps(binding, schema, prompt, **kwargs))
            return dataclasses.replace(
                result,
                usage=work.usage + result.usage,
                model=binding.name if self.runnable is None else self.label(),
                records=records,
                reason=work.reason or result.reason,
            )
        except ModelUnavailableError as exc:
            raise ModelUnavailableError(f"agent {self.name}: {exc}") from exc

    @_named
    def say_steps(
        self,
        runtime: Runtime[Context] | None,
        messages: Sequence[BaseMessage],
        *,
        streams: bool = True,
        **kwargs: Any,
    ) -> Steps[TextResult]:
        """The steps of a prose reply, for a node body; its tokens stream.

        See :func:`~debategraph.models.text_call`; taken as :meth:`ask_steps` are. An
        agent with tools answers with the reply that asks for no tool; an agent of its
        own, with its last message. Only the reply's own call streams: the tool loop's
        and an own agent's do not (:func:`~debategraph.models.steps.quiet`), and the
        result's :attr:`~debategraph.models.TextResult.message_id` is the id its tokens
        streamed under.

        Args:
            runtime: The node's runtime.
            messages: The prompt.
            streams: Whether the reply's tokens stream (``False``: a reply that is no
                turn, a speaker pick).
            **kwargs: Passed on (``max_attempts``).

        Returns:
            The steps; they return the text (or ``""`` with a reason), its usage, the
            model and the tool calls made.

        Raises:
            ModelUnavailableError: If the agent's endpoint fails (the line names the agent).
        """
        from debategraph.models import text_steps
        from debategraph.models.calls import TextResult

        try:
            work = yield from quiet(self._work_steps(runtime, messages))
            if work is not None and (work.text or self.runnable is not None):
                label = self.label(runtime)
                records = tuple(work.records)
                return TextResult(work.text, work.usage, 0, work.reason, label, records)
            binding = self.binding(runtime)
            prompt = messages if work is None else work.messages
            reply = text_steps(binding, prompt, **kwargs)
            result = yield from (reply if streams else quiet(reply))
            if work is None:
                return dataclasses.replace(result, model=binding.name)
            return dataclasses.replace(
                result,
                usage=work.usage + result.usage,
                model=binding.name,
                records=tuple(work.records),
                reason=work.reason or result.reason,
            )
        except ModelUnavailableError as exc:
            raise ModelUnavailableError(f"agent {self.name}: {exc}") from exc

    def _work_steps(
        self, runtime: Runtime[Context] | None, messages: Sequence[BaseMessage]
    ) -> Steps[Work | None]:
        """The agent's own agent or its tool loop, if it has one (``None``: neither)."""
        from debategraph.models.loops import agent_steps, tool_steps

        if self.runnable is not None:
            return (yield from agent_steps(self.runnable, messages))
        if self.tools:
            binding = self.binding(runtime)
            return (
                yield from tool_steps(binding, messages, self.tools, self.max_tool_calls, self.name)
            )
        return None

    def label(self, runtime: Runtime[Context] | None = None) -> str:
        """What this agent's turns record as their model.

        Its model's label, or ``agent:NAME`` for an agent of its own.

        Args:
            runtime: The node's runtime (its context may name the model).

        Returns:
            The label (never a key).
        """
        if self.runnable is None:
            return self.binding(runtime).name
        inner = getattr(self.runnable, "bound", self.runnable)  # a graph made stateless
        name = getattr(inner, "name", None) or type(inner).__name__
        return f"agent:{name}"

    def ask(
        self,
        runtime: Runtime[Context] | None,
        schema: type[S],
        messages: Sequence[BaseMessage],
        **kwargs: Any,
    ) -> CallResult[S]:
        """A structured reply, with blocking calls (:meth:`ask_steps`, run).

        Takes what :meth:`ask_steps` takes; returns what its steps return.
        """
        from debategraph.models import run_steps

        return run_steps(self.ask_steps(runtime, schema, messages, **kwargs))

    def say(
        self, runtime: Runtime[Context] | None, messages: Sequence[BaseMessage], **kwargs: Any
    ) -> TextResult:
        """A prose reply, with blocking calls (:meth:`say_steps`, run).

        Takes what :meth:`say_steps` takes; returns what its steps return.
        """
        from debategraph.models import run_steps

        return run_steps(self.say_steps(runtime, messages, **kwargs))

    async def aask(
        self,
        runtime: Runtime[Context] | None,
        schema: type[S],
        messages: Sequence[BaseMessage],
        **kwargs: Any,
    ) -> CallResult[S]:
        """:meth:`ask` for async code: it awaits the model, on no thread."""
        from debategraph.models import arun_steps

        return await arun_steps(self.ask_steps(runtime, schema, messages, **kwargs))

    async def asay(
        self, runtime: Runtime[Context] | None, messages: Sequence[BaseMessage], **kwargs: Any
    ) -> TextResult:
        """:meth:`say` for async code: it awaits the model, on no thread."""
        from debategraph.models import arun_steps

        return await arun_steps(self.say_steps(runtime, messages, **kwargs))


#: Set while a graph is built only to read a thread (:func:`reading`).
_READING: contextvars.ContextVar[bool] = contextvars.ContextVar("reading", default=False)


@contextmanager
def reading() -> Iterator[None]:
    """Build graphs only to read a thread's state: its agents' own parts left alone.

    Reading a thread (listing, showing, exporting it) needs its graph's shape, never a
    call: inside this block :func:`agent_of` makes each agent by name alone, so no model
    is parsed, no key variable read, no tool (an MCP server's) listed and no agent
    imported. A thread whose agents name ``api_key_env: SOME_VAR`` reads in a shell
    without ``SOME_VAR``; running it still checks every part.

    Yields:
        Nothing: graphs built in the block are for reading.
    """
    token = _READING.set(True)
    try:
        yield
    finally:
        _READING.reset(token)


def agent_of(
    member: AgentSpec | str | None, model: ModelBinding | None, name: str | None = None
) -> Agent:
    """The :class:`Agent` an agent's record makes, checked now (when the graph is built).

    Its model is parsed (:func:`~debategraph.models.parse_model`; a key named by
    ``api_key_env`` must be set), its tools resolved
    (:func:`~debategraph.nodes.tools.resolve_tools`), its agent checked to be a
    ``Runnable``; an agent whose calls go to the embedded model (its own ``local``, or
    no model or a name without an endpoint on a graph built with it) cannot take tools.
    Inside :func:`reading` none of that is checked: the agent is its name alone.

    Args:
        member: The agent's record, or its name alone (nothing of its own).
        model: The graph's model (``None``: the run's context).
        name: The agent's name, if not the record's (an official's node name).

    Returns:
        The agent.

    Raises:
        ValueError: One line naming the agent and what is wrong.
    """
    if member is None or isinstance(member, str):
        return Agent(name or member or "", model)
    if _READING.get():  # a graph built to read a thread: nothing of its own is called
        return Agent(name or member.name, model)
    who = f"agent {(name or member.name)!r}"
    own = own_model(member.model, who)
    tools = resolve_tools(member.tools, who)
    local = without_tool_calls(own, model)
    if tools and local is not None:
        raise ValueError(
            f"{who} has tools, but its model {local} cannot call tools (the embedded "
            "SmolLM2's chat template has none): give it a model with tool calls"
        )
    runnable = member.agent
    if isinstance(runnable, str):
        runnable = import_ref(runnable, who, "agent")
    if runnable is not None:
        from langchain_core.runnables import Runnable

        if not isinstance(runnable, Runnable):
            raise ValueError(
                f"{who}: agent {runnable!r} is not a LangChain Runnable or compiled graph "
                "(messages in, messages out)"
            )
        if tools:
            raise ValueError(f"{who} has both tools and an agent: give its agent the tools")
        runnable = _stateless(runnable)
    return Agent(name or member.name, model, own, tools, runnable, member.max_tool_calls)


def _stateless(runnable: Runnable[Any, Any]) -> Runnable[Any, Any]:
    """A user's compiled graph that keeps no checkpoints of its own turns.

    Called inside a node, a graph compiled without a checkpointer would take the
    parent's, and write every step of every turn (with its whole prompt) into the
    debate's thread. Each turn gives it the whole prompt anyway, so it needs no memory.
    """
    from langgraph.pregel import Pregel

    if isinstance(runnable, Pregel) and runnable.checkpointer is None:
        # With no checkpointer it must not wait for checkpoint writes either: the node's
        # ``durability="sync"`` would otherwise reach it (and fail, langgraph 1.x), and
        # LangGraph's warning that durability does nothing there is not the user's to read.
        warnings.filterwarnings("ignore", message=_NO_EFFECT, category=UserWarning)
        return runnable.copy(update={"checkpointer": False}).bind(durability="exit")
    return runnable


#: LangGraph's warning for a graph given ``durability`` without a checkpointer.
_NO_EFFECT = "`durability` has no effect when no checkpointer is present"


def recorded(result: CallResult[Any] | TextResult, turn: Turn) -> list[Turn]:
    """The transcript records of one agent turn: its tool calls, then the turn itself.

    The tool calls get the turn's agent and round; the turn gets the model that
    answered (:attr:`Turn.model <debategraph.state.records.Turn.model>`) and, for a
    prose reply whose tokens streamed, the id they streamed under
    (:attr:`~debategraph.models.TextResult.message_id`): one id for the turn in
    ``stream_mode="messages"``, its tokens and its message.

    Args:
        result: The call's result.
        turn: The node's record of the turn.

    Returns:
        The records, in order, for ``transcript`` (or
        :func:`~debategraph.state.base.turn_update`).
    """
    calls = tool_calls_of([result], turn.agent, turn.round, turn.agent_id)
    update: dict[str, Any] = {"model": result.model}
    said = getattr(result, "message_id", None)  # a prose reply's (TextResult)
    if said:
        update["id"] = said
    return [*calls, turn.model_copy(update=update)]


def tool_calls_of(
    results: Sequence[CallResult[Any] | TextResult],
    agent: str,
    rnd: int,
    agent_id: str | None = None,
) -> list[Turn]:
    """The tool-call records of an agent's calls, with its name and round.

    For a node whose record is not a :class:`~debategraph.state.records.Turn` (a
    selector's pick), or whose turn took several calls; :func:`recorded` is this for
    one call and its turn. Their usage is the calls' (charged with them, not again).

    Args:
        results: The calls' results, in the order they were made.
        agent: Who made them.
        rnd: The round.
        agent_id: The agent's stable id, where the pattern records one.

    Returns:
        The records, in order.
    """
    update = {"agent": agent, "agent_id": agent_id, "round": rnd}
    return [r.model_copy(update=update) for result in results for r in result.records]


def officials_of(
    officials: Sequence[Any], allowed: Mapping[str, str], group: str
) -> dict[str, AgentSpec]:
    """A pattern's officials, by name: who may have a model, tools or agent of its own.

    Args:
        officials: The records given (``AgentSpec`` s or dicts), each naming an official.
        allowed: The pattern's officials: name -> what it does (for errors).
        group: The pattern, for errors (``a debate``).

    Returns:
        Official name -> its record.

    Raises:
        ValueError: One line naming the bad value and the officials allowed.
    """
    from debategraph.nodes.roster import parse_member

    if isinstance(officials, str | Mapping) or not isinstance(officials, Sequence):
        raise ValueError(f"officials must be a list of agent records, got {officials!r}")
    out: dict[str, AgentSpec] = {}
    names = ", ".join(allowed)
    for value in officials:
        spec = parse_member(
            value, AgentSpec, "official", "a 'name' and 'model', 'tools' or 'agent'"
        )
        key = spec.name.lower()
        if key not in allowed:
            raise ValueError(f"{group} has no official {spec.name!r}: its officials are {names}")
        if key in out:
            raise ValueError(f"official {spec.name!r} is given twice: give each official once")
        agent_of(spec, None, key)  # checked now
        out[key] = spec
    return out
