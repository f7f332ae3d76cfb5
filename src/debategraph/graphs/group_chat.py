"""Group chat: agents share one conversation; a strategy picks each speaker; conditions end it.

The agent group chat of the well-known agent SDKs (a writer and a reviewer until the
reviewer approves), built on the shared core: a selection strategy
(:mod:`debategraph.strategies.selection`) picks who speaks next, termination conditions
(:mod:`debategraph.strategies.termination`, combined with ``|`` and ``&``) decide when it
ends and say why, and every chat has a hard cap. A finished chat goes on after an
invocation with ``reset`` (or a new ``message``); ``speaker`` runs one turn of a named
agent. A human interjects at the review point (``pause_after_round``: after every turn)
or, while it runs, through the thread's inbox (``debategraph interject``).

Every agent may have a model, tools or an agent of its own (a
:class:`~debategraph.Participant`'s ``model``, ``tools`` and ``agent``); so may the
LLM selector and the LLM termination judge (``officials=``). An agent's tool calls are
transcript records before its message; no other agent reads them.

Graph: ``START -> begin -> open_round -> select -> <the chosen agent> -> close_turn``,
then ``open_round`` again (through ``human`` when pausing) or ``END``. One node per agent,
so Studio shows who spoke when, and each agent's tokens stream as they come.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal

from debategraph.graphs.skeleton import (
    ModelLike,
    PatternGraph,
    renamed_settings,
    settings_of,
    skeleton,
)
from debategraph.nodes import group_chat as nodes
from debategraph.nodes.agent import OfficialLike
from debategraph.nodes.dual import loop_node
from debategraph.nodes.group_chat.setup import (
    DEFAULT_AGENTS,
    DEFAULT_KEEP_LAST,
    DEFAULT_SELECTION,
    AgentLike,
    group_chat_setup,
)
from debategraph.nodes.messages import RESPOND_NODE
from debategraph.nodes.review import add_review
from debategraph.nodes.rounds import OPEN_ROUND_NODE
from debategraph.state.group_chat import SCHEMAS, GroupChatInput, GroupChatOutput

if TYPE_CHECKING:
    from debategraph.strategies.selection import Selector
    from debategraph.strategies.termination import Condition

GRAPH_NAME = "group_chat"


@renamed_settings(GRAPH_NAME)
def build_group_chat(
    model: ModelLike = None,
    *,
    agents: Sequence[AgentLike] = DEFAULT_AGENTS,
    selection: Literal["sequential", "llm"] | Selector = DEFAULT_SELECTION,
    first_speaker: str | None = None,
    until: Sequence[str | Condition] = (),
    termination: Condition | None = None,
    max_rounds: int | None = None,
    max_in_a_row: int | None = None,
    keep_last: int = DEFAULT_KEEP_LAST,
    pause_after_round: bool = False,
    time_limit_s: float | None = None,
    officials: Sequence[OfficialLike] = (),
    state_schema: type[Any] | None = None,
) -> PatternGraph[GroupChatInput, GroupChatOutput]:
    """Build the group chat graph (uncompiled).

    Example:
        ```python
        from langchain_openai import ChatOpenAI
        from langgraph.checkpoint.memory import InMemorySaver

        from debategraph import Participant, build_group_chat

        writer = Participant(name="Writer", instructions="drafts and revises the haiku")
        reviewer = Participant(name="Reviewer", instructions="says APPROVED when it is good")
        graph = build_group_chat(
            ChatOpenAI(model="gpt-4o-mini", timeout=60),
            agents=[writer, reviewer],
            until=["regex:APPROVED@Reviewer"],
            max_rounds=4,
        ).compile(checkpointer=InMemorySaver(), name="group_chat")
        result = graph.invoke(
            {"task": "Write a haiku about rain"}, {"configurable": {"thread_id": "haiku"}}
        )
        print(result["termination_reason"], [s.agent for s in result["selections"]])
        ```

    Args:
        model: Chat model, binding or spec every agent (and the selector and judges)
            calls unless it has one of its own; ``None`` reads it from the run's
            :class:`~debategraph.models.context.Context`.
        agents: Two or more agents: :class:`~debategraph.Participant` objects,
            dicts (``name``, ``instructions``) or ``"Name: instructions"`` strings, with
            unique names (they name the agents' nodes). Default: a Writer and a Reviewer
            (:data:`~debategraph.nodes.group_chat.setup.DEFAULT_AGENTS`), who end the
            chat when the Reviewer says APPROVED unless ``until`` or ``termination``
            says otherwise (:data:`~debategraph.nodes.group_chat.setup.DEFAULT_UNTIL`,
            as the CLI runs it and Studio serves it). A record or
            dict may give the agent its own ``model`` (a spec such as
            ``"gpt-4o-mini@http://host/v1"``, a mapping, a ``ModelSpec`` or a chat
            model), ``tools`` (LangChain tools or built-in names such as
            ``"calculator"``; its tool calls are recorded before its message) or
            ``agent`` (a Runnable or compiled graph, messages in and out: its last
            message is the agent's; one that fails or returns no message loses that
            turn, with the reason, and the chat goes on).
        selection: ``sequential`` (round-robin), ``llm`` (a model picks from the names,
            reading a reduced history; unknown answers are retried once, then the next
            agent in sequence speaks, recorded), or any
            :class:`~debategraph.strategies.selection.Selector` (``Rules``...).
        first_speaker: The first speaker (for ``sequential`` and ``llm``); the old
            name ``first`` still works, with a ``DeprecationWarning``.
        until: Termination conditions, as objects or the CLI's strings
            (``regex:PATTERN@Agent``, ``llm:QUESTION@Agent``, ``timeout:90s``); any one
            ends the chat. A time limit (``timeout``) bounds each invocation's wall time,
            as ``time_limit_s`` does.
        termination: A condition built with the strategies' vocabulary (``regex(...) |
            max_turns(20)``...); it must hold a hard cap unless ``max_rounds`` is given.
        max_rounds: The hard cap in turns (a round of a chat is one turn; default 10
            when no ``until`` or ``termination`` is given); it is added to the other
            conditions with ``|``. Formerly ``max_turns`` (still accepted, deprecated).
        max_in_a_row: No agent speaks more turns than this in a row (``None``: no guard).
        keep_last: Messages a speaker reads (0: the whole conversation).
        pause_after_round: ``interrupt()`` after every turn that does not end the chat;
            resume with ``Command(resume={"approve": True})`` or ``{"interject": text}``.
        time_limit_s: Seconds each invocation may take (``None``: no limit): the same
            condition as ``until=["timeout:..."]``. At the deadline the call in flight is
            cancelled, none starts after it, and the chat ends ``time_limit``.
        officials: Records (:class:`~debategraph.state.records.AgentSpec` or dicts)
            giving the ``selector`` (the model that picks with ``selection="llm"``)
            or the ``judge`` (the model that checks the ``llm:`` conditions) a
            ``model``, ``tools`` or ``agent`` of its own, e.g. ``[{"name": "selector",
            "model": "gpt-4o-mini@https://api.openai.com/v1"}]``; the others use
            ``model``. Each official given must be on (``selection`` not
            ``sequential``; an ``llm:`` condition for the judge).
        state_schema: State schema; may extend
            :class:`~debategraph.state.group_chat.GroupChatState` (the default).

    Returns:
        The uncompiled graph; ``compile(checkpointer=..., name=...)`` it.

    Raises:
        ValueError: On any bad setting (fewer than two agents, duplicate names, an
            unknown first speaker or selection, a regex that does not compile, a
            termination without a hard cap, a time limit that is not a positive number
            of seconds, an agent's bad model, tools or agent, an unknown official...),
            naming the value and what is allowed.
    """
    setup = group_chat_setup(**settings_of(locals()))
    builder, binding = skeleton(model, SCHEMAS, state_schema, setup, pattern=GRAPH_NAME)
    builder.add_node(nodes.BEGIN_NODE, nodes.make_begin(setup))
    builder.start_at(nodes.BEGIN_NODE)
    builder.add_conditional_edges(
        nodes.BEGIN_NODE, loop_node(nodes.after_begin), [OPEN_ROUND_NODE, RESPOND_NODE]
    )
    builder.add_node(OPEN_ROUND_NODE, nodes.make_open_round(setup))
    close = nodes.CLOSE_TURN_NODE
    select = nodes.SELECT_NODE
    builder.add_conditional_edges(OPEN_ROUND_NODE, loop_node(nodes.after_open), [select, close])
    builder.add_node(select, nodes.make_select(setup, binding))
    builder.add_conditional_edges(select, loop_node(nodes.route_speaker), list(setup.names))
    for name in setup.names:
        builder.add_node(name, nodes.make_speaker(name, setup, binding))
        builder.add_edge(name, close)
    builder.add_node(close, nodes.make_close_round(setup, binding))
    route, targets = nodes.after_turn(setup)
    builder.add_conditional_edges(close, loop_node(route), targets)
    if setup.pause_after_round:
        add_review(builder, nodes.round_review(setup), finish=close)
    return builder
