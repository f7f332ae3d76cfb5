"""The base run state every pattern extends, with its reducers and termination vocabulary.

Every pattern's state is this base plus its own fields: the transcript of
:class:`~debategraph.state.records.Turn` records, the round counter, token usage in total
and per agent (reducers that add, so agents of one round may write in the same step),
``termination_reason`` from one vocabulary, and free-form notes.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Annotated, Any, Generic, Literal, NotRequired, TypeVar, get_args

from langchain_core.messages import AnyMessage
from typing_extensions import TypedDict  # pydantic needs it on Python < 3.12 (Studio schemas)

from debategraph.compat import StateLike
from debategraph.state.records import Turn, Usage, stored_once
from debategraph.state.reducers import append_only, messages_channel, transcript_channel

InputT = TypeVar("InputT", bound=StateLike)
OutputT = TypeVar("OutputT", bound=StateLike)

#: Why a run ended, one vocabulary for every pattern:
#:
#: - ``rounds_completed``: the round (or iteration) cap was reached;
#: - ``budget``: the token budget was spent;
#: - ``time_limit``: the wall-time limit passed;
#: - ``unanimous``: every agent gave the same answer;
#: - ``converged``: the agents' positions converged past the threshold;
#: - ``stalled``: a round changed nothing;
#: - ``settled``: a moderator or selector decided the matter was settled;
#: - ``stopped``: an external stop was requested;
#: - ``error``: the model stopped answering;
#: - ``max_turns``: a chat's turn cap (its hard cap) was reached;
#: - ``matched``: a chat message matched a termination pattern (``regex``);
#: - ``judged``: a model judged the chat done (``llm`` termination, e.g. approval);
#: - ``completed``: a staged meeting went through all its stages.
TerminationReason = Literal[
    "rounds_completed",
    "budget",
    "time_limit",
    "unanimous",
    "converged",
    "stalled",
    "settled",
    "stopped",
    "error",
    "max_turns",
    "matched",
    "judged",
    "completed",
]

TERMINATION_REASONS: frozenset[str] = frozenset(get_args(TerminationReason))

#: Words older versions wrote, read as today's.
LEGACY_REASONS: Mapping[str, TerminationReason] = {"max_iterations": "rounds_completed"}


def termination_word(value: Any) -> TerminationReason | None:
    """Today's word for a stored ``termination_reason`` (older threads used others).

    Args:
        value: The stored value (``None`` while the run goes on).

    Returns:
        The reason in today's vocabulary, or ``None``.

    Raises:
        ValueError: If the value is no termination reason of any version.
    """
    if value is None:
        return None
    if value in LEGACY_REASONS:
        return LEGACY_REASONS[value]
    if value not in TERMINATION_REASONS:
        allowed = ", ".join(sorted(TERMINATION_REASONS))
        raise ValueError(f"unknown termination reason {value!r}: expected one of {allowed}")
    return value  # type: ignore[no-any-return]


def add_usage(current: Usage | Mapping[str, Any] | None, update: Any) -> Usage:
    """Reducer of ``usage``: add each write (a :class:`Usage` or its dict form).

    Args:
        current: The usage so far.
        update: The usage of the calls one node made.

    Returns:
        The sum.
    """
    return Usage.coerce(current) + Usage.coerce(update)


def add_usage_by_agent(
    current: Mapping[str, Any] | None, update: Mapping[str, Any] | None
) -> dict[str, Usage]:
    """Reducer of ``usage_by_agent``: add each agent's usage to its total so far.

    Args:
        current: Agent -> usage so far.
        update: Agent -> usage of the calls one node made.

    Returns:
        The merged totals.
    """
    out = {k: Usage.coerce(v) for k, v in (current or {}).items()}
    for agent, usage in (update or {}).items():
        out[agent] = out.get(agent, Usage()) + Usage.coerce(usage)
    return out


def add_models(
    current: Mapping[str, Sequence[str]] | None, update: Mapping[str, Sequence[str]] | None
) -> dict[str, list[str]]:
    """Reducer of ``official_models``: each agent's models so far, then the new ones.

    Args:
        current: Agent -> the models that answered it so far, in order of first use.
        update: Agent -> the models of the calls one node made.

    Returns:
        The merged lists, each model once.
    """
    out = {agent: list(models) for agent, models in (current or {}).items()}
    for agent, models in (update or {}).items():
        known = out.setdefault(agent, [])
        known += [m for m in models if m not in known]
    return out


#: The ``messages`` key of every graph's input and output: chat messages; a checkpoint holds
#: an input only until the run reads it, and the reply never
#: (:func:`~debategraph.state.reducers.messages_channel`).
Messages = Annotated[list[AnyMessage], messages_channel()]


class MessagesInput(TypedDict):
    """The input every pattern takes besides its own fields: a conversation.

    Its last human message fills the pattern's own field (its :attr:`Schemas.text`), so
    the graph is a node of any ``MessagesState`` graph and an agent of a supervisor or a
    swarm; one string is one human message (as LangGraph's server sends ``messages``
    over MCP).

    Attributes:
        messages: A conversation (chat messages, their dict or tuple forms, or one
            string: a human message): its last human message is the question, topic,
            document or task when that field is not given.
    """

    messages: NotRequired[Messages]


class RunOutput(TypedDict):
    """The output fields every pattern returns.

    ``messages`` are ``AIMessage(name=...)`` s, a tool call as its agent's message and an
    interjection as a human one (:mod:`debategraph.nodes.messages`); the outcome's is
    named after the compiled graph. They are made when the run ends and never
    checkpointed.

    Attributes:
        transcript: Every record of the run (:class:`~debategraph.state.records.Turn`:
            the agents' turns, their tool calls, a human's interjections), oldest first.
        messages: The transcript as chat messages named after their agents, ending in
            one message named after the graph that states the outcome; never
            checkpointed (read the transcript of a paused or saved thread).
        termination_reason: Why the run ended (:data:`TerminationReason`).
        usage: Tokens and calls of the whole run.
        usage_by_agent: The same per agent.
        usage_by_model: The same per model (:attr:`Turn.model
            <debategraph.state.records.Turn.model>`, never a key).
        notes: What the graph normalised or noticed along the way.
    """

    transcript: Annotated[list[Turn], transcript_channel()]
    messages: Messages
    termination_reason: TerminationReason
    usage: Annotated[Usage, add_usage]
    usage_by_agent: Annotated[dict[str, Usage], add_usage_by_agent]
    usage_by_model: Annotated[dict[str, Usage], add_usage_by_agent]
    notes: Annotated[list[str], append_only()]


class RunState(RunOutput):
    """The base state: the output fields plus the round counter and the clock.

    ``started_at`` is the Unix time the first round opened (for time limits);
    ``deadline`` is the Unix time the run must end by (``started_at`` plus the pattern's
    time limit; ``None``: no limit). Every model call of every node is bounded by it
    (:func:`~debategraph.nodes.dual.agent_node`): one in flight when it passes is
    cancelled, none is made after it, and the round's close ends the run with
    ``time_limit``.

    ``transcript`` (an output field) is an append-only delta channel: a checkpoint stores
    only what a step added (DESIGN.md principle 5).

    ``official_models`` names the models that answered an agent whose calls leave no
    transcript record (a chat's LLM selector and judge, charged by
    :func:`usage_update`): every other agent's model is on its turns
    (:attr:`Turn.model <debategraph.state.records.Turn.model>`).
    """

    round: int
    started_at: float
    deadline: float | None
    official_models: Annotated[dict[str, list[str]], add_models]


def charge_update(turns: Iterable[Turn]) -> dict[str, Any]:
    """The state update that charges the usage of ``turns`` to their agents, in one write.

    For agents that answer in parallel: each writes only its :class:`Turn` (which holds
    its usage), and the node that closes their step charges them all at once. Every
    write is a row of its own in the checkpoint store, so two writes fewer per agent
    turn is about a quarter of a parallel round's storage.

    Args:
        turns: The transcript records to charge (each charged once, by its caller).

    Returns:
        ``usage`` and ``usage_by_agent`` writes.
    """
    by_agent: dict[str, Usage] = {}
    by_model: dict[str, Usage] = {}
    for turn in turns:
        by_agent[turn.agent] = by_agent.get(turn.agent, Usage()) + turn.usage
        if turn.model is not None:
            by_model[turn.model] = by_model.get(turn.model, Usage()) + turn.usage
    update: dict[str, Any] = {"usage": Usage.total(by_agent.values()), "usage_by_agent": by_agent}
    if by_model:
        update["usage_by_model"] = by_model
    return update


def usage_update(agent: str, usage: Usage, model: str | None) -> dict[str, Any]:
    """The state update that charges ``usage`` to ``agent`` and ``model`` (no record).

    For calls whose result is not a transcript record (a selector's pick).

    Args:
        agent: Who made the calls.
        usage: Their usage.
        model: The model that answered (``None``: not known).

    Returns:
        ``usage``, ``usage_by_agent`` and (with a model) ``usage_by_model`` and
        ``official_models`` writes.
    """
    update: dict[str, Any] = {"usage": usage, "usage_by_agent": {agent: usage}}
    if model is not None:
        update["usage_by_model"] = {model: usage}
        update["official_models"] = {agent: [model]}
    return update


def turn_update(*turns: Turn, so_far: Sequence[Turn] | None = None) -> dict[str, Any]:
    """The state update that records ``turns`` and charges their usage to their agents.

    Args:
        turns: Transcript records (an agent's tool calls and turn, see
            :func:`debategraph.nodes.agent.recorded`).
        so_far: The transcript in the node's state: a model label it holds already is
            stored once (:func:`~debategraph.state.records.stored_once`).

    Returns:
        ``transcript``, ``usage``, ``usage_by_agent`` and ``usage_by_model`` writes.
    """
    return {"transcript": stored_once(turns, so_far or ()), **charge_update(turns)}


@dataclass(frozen=True)
class Schemas(Generic[InputT, OutputT]):
    """A pattern's three schemas, declared once in its state module as ``SCHEMAS``.

    Attributes:
        state: The full state (a user may pass an extension of it as ``state_schema``).
        input: What an invocation takes (its own fields and :class:`MessagesInput`'s).
        output: What it returns (to a caller or a parent graph).
        text: The input field a ``messages`` input fills from its last human message
            (``question``, ``topic``, ``document``, ``task``).
        later_text: The field a later invocation's ``messages`` fill instead, once the
            thread has a transcript (a group chat's next ``message``); empty: none.
    """

    state: type[Any]
    input: type[InputT]
    output: type[OutputT]
    text: str = ""
    later_text: str = ""
