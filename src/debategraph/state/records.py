"""Typed records kept in graph state: the transcript and what is measured about it."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    field_validator,
    model_serializer,
)

Role = Literal["agent", "user", "system", "tool"]

#: How a question without choices is answered: one ``number``, or an ``expression`` (a
#: MATH answer: ``\sqrt{2}``, ``[1, 3)``). A question with choices is answered by a letter.
#: The answer strategies read each kind (:mod:`debategraph.strategies.answers`, which
#: gives these names to the faces); it is written here, below them, because the solver
#: debate's state and the eval's records hold it too.
AnswerKind = Literal["number", "expression"]
#: The kinds, in the order error messages list them.
ANSWER_KINDS: tuple[AnswerKind, ...] = ("number", "expression")

#: The stage of a tool call's record (:data:`Turn.tool`): an agent's turn is preceded by
#: one such record per tool call it made.
TOOL_STAGE = "tool"


#: Costs are summed to this many decimals (a millionth of a unit: a token's price).
COST_DECIMALS = 9


def add_costs(first: float | None, second: float | None) -> float | None:
    """Two costs summed; ``None`` (no price) only where both are.

    Args:
        first: A cost, or ``None``.
        second: Another.

    Returns:
        Their sum, rounded to :data:`COST_DECIMALS` places, or ``None``.
    """
    if first is None and second is None:
        return None
    return round((first or 0.0) + (second or 0.0), COST_DECIMALS)


class Usage(BaseModel):
    """Token usage and latency of one or more model calls.

    Attributes:
        prompt_tokens: Tokens sent.
        completion_tokens: Tokens generated.
        calls: Model calls made.
        latency_s: Summed wall time of the calls.
        estimated: Whether any of the token counts was estimated from text length
            because the endpoint reported no usage.
        cost: What the calls cost, in the currency of the operator's prices
            (:mod:`debategraph.models.money`); ``None`` where no call had a price. A sum
            of priced and unpriced calls is the priced calls' cost: the usage by model
            says which models had none.
        cache_hits: Calls answered from the response cache (their tokens are counted
            as the first call's were; their cost is 0).
    """

    model_config = ConfigDict(frozen=True)

    prompt_tokens: int = 0
    completion_tokens: int = 0
    calls: int = 0
    latency_s: float = 0.0
    estimated: bool = False
    cost: float | None = None
    cache_hits: int = 0

    @property
    def total_tokens(self) -> int:
        """Prompt plus completion tokens."""
        return self.prompt_tokens + self.completion_tokens

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            prompt_tokens=self.prompt_tokens + other.prompt_tokens,
            completion_tokens=self.completion_tokens + other.completion_tokens,
            calls=self.calls + other.calls,
            latency_s=round(self.latency_s + other.latency_s, 6),
            estimated=self.estimated or other.estimated,
            cost=add_costs(self.cost, other.cost),
            cache_hits=self.cache_hits + other.cache_hits,
        )

    @model_serializer(mode="wrap")
    def _without_unset_newer_fields(self, handler: SerializerFunctionWrapHandler) -> Any:
        """Leave out ``cost`` where it is ``None`` and ``cache_hits`` where it is 0.

        A usage is stored with every record of every checkpoint: fields most runs never
        fill are storage every run pays (DESIGN.md principle 5).
        """
        data = handler(self)
        if isinstance(data, dict):
            if data.get("cost", 0) is None:
                del data["cost"]
            if data.get("cache_hits") == 0:
                del data["cache_hits"]
        return data

    @classmethod
    def coerce(cls, value: Usage | Mapping[str, Any] | None) -> Usage:
        """A :class:`Usage` from one, from its dict form, or zero from ``None``.

        A checkpoint read outside the graph with a strict msgpack allowlist (LangGraph
        server's ``update_state``) can hand state back as plain dicts.

        Args:
            value: The stored value.

        Returns:
            The usage.
        """
        if value is None:
            return cls()
        return value if isinstance(value, Usage) else cls.model_validate(value)

    @classmethod
    def total(cls, items: Iterable[Usage]) -> Usage:
        """Sum usages.

        Args:
            items: The usages to add up.

        Returns:
            Their sum (all zeros when empty).
        """
        out = cls()
        for item in items:
            out = out + item
        return out


def _new_id() -> str:
    return uuid.uuid4().hex


class Turn(BaseModel):
    """One message of the transcript: the single record type every graph stores.

    Attributes:
        id: Unique id of the record.
        agent: Who produced it (a solver/debater name, or ``user`` for a human).
        agent_id: A stable id of the agent (its slug) where a pattern records one.
        role: ``agent`` for model output, ``user`` for a human interjection, ``tool``
            for a tool call an agent made (stage :data:`TOOL_STAGE`).
        content: The text the agent produced (its reasoning or argument).
        stage: The phase that produced it (``solve``, ``interject``...).
        round: The round (1-based) it belongs to.
        reply_to: Ids of the records this one answers.
        recipients: Agents it is addressed to (empty means everyone).
        timestamp: Unix time it was recorded.
        usage: Tokens and latency of the model calls that produced it.
        answer: The extracted final answer, if the stage asks for one.
        confidence: The agent's stated confidence in ``answer`` (0-1).
        reason: Why there is no answer (abstention or fallback), if so; for a tool
            call, the error it raised.
        model: The model that produced it (its spec, e.g. ``local`` or
            ``gpt-4o-mini@http://host/v1``; never a key), where an agent's call did.
            A checkpoint may store it as a reference to an earlier record with the same
            label (:func:`stored_once`); the transcript channel reads it back whole.
        tool: For a tool call: the tool's name (``content`` is its result).
        arguments: For a tool call: its arguments, as JSON text.
    """

    model_config = ConfigDict(frozen=True)

    id: str = Field(default_factory=_new_id)
    agent: str
    agent_id: str | None = None
    role: Role = "agent"
    content: str
    stage: str
    round: int = Field(ge=0)
    reply_to: tuple[str, ...] = ()
    recipients: tuple[str, ...] = ()
    timestamp: float = Field(default_factory=time.time)
    usage: Usage = Field(default_factory=Usage)
    answer: str | None = None
    confidence: float | None = None
    reason: str | None = None
    model: str | None = None
    tool: str | None = None
    arguments: str | None = None

    @model_serializer(mode="wrap")
    def _without_unset_newer_fields(self, handler: SerializerFunctionWrapHandler) -> Any:
        """Leave out ``model``, ``tool`` and ``arguments`` where they are ``None``.

        Every checkpoint write holds its records as dumped: a key of no value in every
        turn is storage every run pays (DESIGN.md principle 5).
        """
        data = handler(self)
        if isinstance(data, dict):
            for key in ("model", "tool", "arguments"):
                if data.get(key, "") is None:
                    del data[key]
        return data


#: How a stored record refers to the transcript record that holds its model's label
#: whole: this prefix and that record's index (``@12``). No label starts with it (a label
#: is ``local``, ``NAME``, ``NAME@URL`` or ``agent:NAME``, never an empty name).
MODEL_AT = "@"


class TurnsWrite(list[Turn]):
    """Records to append to the transcript, each knowing where its model's label is stored.

    Made by :func:`stored_once`; in memory (state, streams, a parent graph) they are plain
    records whose :attr:`Turn.model` is the label. Only the checkpoint serializer uses
    :attr:`model_at` (:func:`stored_form`), so a checkpoint stores a label once per model
    rather than once per turn (DESIGN.md principle 5).

    Attributes:
        model_at: Position in this write -> index of an earlier transcript record whose
            model is the same label.
    """

    __slots__ = ("model_at",)

    def __init__(self, turns: Iterable[Turn] = (), model_at: Mapping[int, int] | None = None):
        super().__init__(turns)
        self.model_at: dict[int, int] = dict(model_at or {})


def stored_once(turns: Iterable[Turn], so_far: Sequence[Turn]) -> TurnsWrite:
    """The transcript write of ``turns``, each model label to be stored once.

    A record whose model is the label of an earlier record of ``so_far`` will be stored
    referring to the first such record (``@INDEX``, a short index: the label's first
    turn) instead of holding the label again. ``so_far`` must be the transcript the write
    is appended to (the node's state), so that the index means the same record when the
    channel reads the write back.

    Args:
        turns: The records to write, in order.
        so_far: The transcript before this step.

    Returns:
        The records, as a write for the ``transcript`` channel.
    """
    out = TurnsWrite(turns)
    first: dict[str, int] = {}
    for position, turn in enumerate(out):
        if turn.model is None or turn.model.startswith(MODEL_AT):
            continue
        if turn.model not in first:
            found = next((i for i, t in enumerate(so_far) if t.model == turn.model), -1)
            first[turn.model] = found
        if first[turn.model] >= 0:
            out.model_at[position] = first[turn.model]
    return out


def stored_form(value: Any) -> Any:
    """What a checkpoint stores for a channel write: a :class:`TurnsWrite` with references.

    Args:
        value: A channel write (or any value the checkpoint serializer is given).

    Returns:
        For a :class:`TurnsWrite`, a plain list whose records with an earlier record of
        the same model refer to it (``model="@INDEX"``); anything else as it is.
    """
    if not isinstance(value, TurnsWrite) or not value.model_at:
        return value
    return [
        turn.model_copy(update={"model": f"{MODEL_AT}{value.model_at[i]}"})
        if i in value.model_at
        else turn
        for i, turn in enumerate(value)
    ]


def model_read_back(turn: Turn, so_far: Sequence[Turn]) -> Turn:
    """A record read from a checkpoint, with its model's label whole.

    Args:
        turn: The record as stored (its model the label, ``None`` or ``@INDEX``).
        so_far: The transcript it is appended to.

    Returns:
        The record; one whose model refers to ``so_far[INDEX]`` gets that record's model
        (``None`` if there is no such record).
    """
    model = turn.model
    if model is None or not model.startswith(MODEL_AT) or not model[1:].isdigit():
        return turn
    index = int(model[1:])
    label = so_far[index].model if index < len(so_far) else None
    return turn.model_copy(update={"model": label})


def tool_call_text(turn: Turn) -> str:
    """A tool call's record on one line: ``calculator({"expression": "6*7"}) -> 42``.

    Args:
        turn: A record with ``role="tool"``.

    Returns:
        The tool, its arguments and its result (or ``error: ...``).
    """
    outcome = f"error: {turn.reason}" if turn.reason else turn.content
    return f"{turn.tool}({turn.arguments or ''}) -> {outcome}"


INTERJECT_STAGE = "interject"
USER = "user"


def interjection(text: str, after_round: int, *, id: str | None = None) -> Turn:
    """A human's message to every agent, read in the round after ``after_round``.

    Args:
        text: What the human says.
        after_round: The last finished round (0 before the first round).
        id: The record's id (default: a new one); an inbox item keeps its key, so
            draining it twice records it once.

    Returns:
        The transcript record.

    Raises:
        ValueError: If ``text`` is empty.
    """
    if not text.strip():
        raise ValueError("interjection text is empty")
    return Turn(
        id=id or _new_id(),
        agent=USER,
        role="user",
        content=text.strip(),
        stage=INTERJECT_STAGE,
        round=after_round,
    )


#: The most tool calls an agent with tools makes in one turn, by default.
DEFAULT_MAX_TOOL_CALLS = 4
#: The most any agent may be allowed.
MAX_TOOL_CALLS = 32


class AgentSpec(BaseModel):
    """The one agent record: what every agent of every pattern may have.

    Each pattern's record (:class:`Participant`, ``Debater``, ``Persona``) adds its own
    fields to these; a pattern's officials (a judge, a moderator, a chair, a selector)
    are given as these alone, by their names. Unknown fields are refused.

    Attributes:
        name: The agent's name, unique within its roster.
        model: Its own model (default: the run's): a spec string (``local``,
            ``local:PATH.gguf``, ``NAME``, ``NAME@BASE_URL``, ``openai:NAME``), a
            mapping (``model``, ``base_url``, ``api_key_env``, ``temperature``,
            ``max_tokens``, ``timeout``), a :class:`~debategraph.models.ModelSpec` or
            any LangChain chat model. See :func:`debategraph.models.parse_model`.
        tools: LangChain tools, or built-in tool names (``calculator``): the agent runs
            a tool loop of at most ``max_tool_calls`` calls before each answer.
        agent: Bring your own agent: any LangChain ``Runnable`` or compiled LangGraph
            graph taking ``{"messages": [...]}`` and returning ``{"messages": [...]}``;
            its last message is its turn.
        max_tool_calls: The tool loop's cap per turn.
    """

    model_config = ConfigDict(
        frozen=True, str_strip_whitespace=True, extra="forbid", arbitrary_types_allowed=True
    )

    name: str = Field(min_length=1)
    model: Any = None
    tools: tuple[Any, ...] = ()
    agent: Any = None
    max_tool_calls: int = Field(default=DEFAULT_MAX_TOOL_CALLS, ge=1, le=MAX_TOOL_CALLS)

    @field_validator("tools", mode="before")
    @classmethod
    def _one_tool_or_many(cls, value: Any) -> Any:
        if value is None:
            return ()
        return tuple(value) if isinstance(value, list | tuple | set | frozenset) else (value,)


class Participant(AgentSpec):
    """A named agent of a chat or a meeting (or a solver), with its instructions.

    Attributes:
        name: Unique name within its chat (case-insensitively).
        instructions: What it does and how (its system prompt's core).
    """

    instructions: str = ""


class Decided(BaseModel):
    """What a decision protocol decided from the solvers' final answers.

    The result of :func:`debategraph.strategies.decisions.decide`, a record of no pattern;
    the solver debate keeps it as its ``Decision`` (:mod:`debategraph.state.solver_debate`).

    Attributes:
        protocol: The protocol's spec.
        answer: The decided answer; ``None`` when every solver abstained, or the
            protocol fell back to ``abstain``.
        votes: Answer -> number of solvers that gave it (most first).
        agreement: Solvers that gave ``answer`` divided by the number of solvers.
        abstentions: Solvers with no answer.
        tie_break: How a tie was broken, ``None`` when there was none.
        fallback: The fallback that decided, ``None`` when the protocol itself did.
        reason: One line on how the answer was reached when it is not the plain
            protocol's (a fallback, a judge that gave no answer), else ``None``.
        judge_model: The judge's model (its label, never a key), where a judge decided.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    protocol: str
    answer: str | None
    votes: dict[str, int]
    agreement: float
    abstentions: int
    tie_break: str | None = None
    fallback: str | None = None
    reason: str | None = None
    judge_model: str | None = None


class RoundRecord(BaseModel):
    """What a finished round of a solver debate produced."""

    model_config = ConfigDict(frozen=True)

    round: int
    answers: dict[str, str | None]
    usage: Usage


#: Record types every pattern's checkpoints may hold (``registry.record_types`` adds each
#: pattern's own to make the msgpack allowlist of our savers).
RECORD_TYPES: tuple[type[BaseModel], ...] = (Usage, Turn, RoundRecord, AgentSpec, Participant)
