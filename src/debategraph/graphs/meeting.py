"""Meeting: a staged group chat with a round controller and a final decision.

The meeting runs its stages in order (by default a presenter, a discussion between an
advocate of the opportunities and a skeptic of the risks, and a summarizer). In a round of
a stage each of its participants speaks once, in order, reading the conversation so far
(a human's interjections included), the topic, the stage's goal and its own instructions.
After each round a typed round controller decides whether the stage gets another round or
the meeting moves on; at the stage's round cap it moves on without a call. At the end the
chair gives a typed final decision (decision, rationale, dissent, next steps).

Graph: ``START -> open_round -> <the stage's first speaker> -> ... -> controller``, then
``[human] -> open_round`` while stages remain, or on to ``decide -> END`` once every stage
ran (``completed``), a stop was requested (``stopped``) or a whole round came back empty
(``error``). One node per participant (named by the slug of its name), routed by stage.

Each participant, the controller and the chair may have a model, tools or an agent of its
own (``agents=``, ``officials=``); an agent's tool calls are ``role="tool"`` records in the
transcript before its turn, which no other agent reads as part of the conversation.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from debategraph.graphs.skeleton import ModelLike, PatternGraph, settings_of, skeleton
from debategraph.nodes import meeting as nodes
from debategraph.nodes.agent import OfficialLike
from debategraph.nodes.dual import loop_node
from debategraph.nodes.meeting.setup import (
    DEFAULT_KEEP_LAST,
    DEFAULT_MAX_ROUNDS,
    DEFAULT_STAGES,
    AgentLike,
    StageLike,
    meeting_setup,
)
from debategraph.nodes.messages import RESPOND_NODE
from debategraph.nodes.review import add_review
from debategraph.nodes.rounds import OPEN_ROUND_NODE, round_router
from debategraph.state.meeting import SCHEMAS, MeetingInput, MeetingOutput

GRAPH_NAME = "meeting"


def build_meeting(
    model: ModelLike = None,
    *,
    stages: Sequence[StageLike] = DEFAULT_STAGES,
    max_rounds: int = DEFAULT_MAX_ROUNDS,
    keep_last: int = DEFAULT_KEEP_LAST,
    pause_after_round: bool = False,
    time_limit_s: float | None = None,
    agents: Sequence[AgentLike] = (),
    officials: Sequence[OfficialLike] = (),
    state_schema: type[Any] | None = None,
) -> PatternGraph[MeetingInput, MeetingOutput]:
    """Build the meeting graph (uncompiled).

    Example:
        ```python
        from langchain_openai import ChatOpenAI

        from debategraph import build_meeting

        stages = [
            {"name": "Pitch", "participants": ["Presenter: lays out the proposal"]},
            {
                "name": "Debate",
                "participants": ["Advocate: argues for it", "Skeptic: argues against it"],
                "max_rounds": 2,
            },
        ]
        model = ChatOpenAI(model="gpt-4o-mini", timeout=60, max_retries=1)
        graph = build_meeting(
            model,
            stages=stages,
            max_rounds=1,
            # the skeptic on a model of its own (any NAME@BASE_URL), the chair on a
            # stronger one; the others on the meeting's model
            agents=[{"name": "Skeptic", "model": {"model": "gpt-4o-mini", "temperature": 0}}],
            officials=[{"name": "chair", "model": "gpt-4o"}],
        ).compile(name="meeting")
        result = graph.invoke({"topic": "Should our team move to a four-day week?"})
        print(result["termination_reason"], result["decision"])
        ```

    Args:
        model: Chat model, binding or spec every agent calls. ``None`` reads the model
            from the run's :class:`~debategraph.models.context.Context` (embedded model by default).
        stages: One or more stages, in order: :class:`~debategraph.state.meeting.Stage`
            records or dicts ``{name, participants, max_rounds?, goal?}`` whose
            participants are ``"Name: instructions"`` strings, dicts or
            :class:`~debategraph.state.records.Participant` records. Stage names are
            unique (case-insensitively), and so are participant names within a stage; a
            name in several stages is one agent. A participant may have its own
            ``model`` (a spec string such as ``NAME@BASE_URL``, a mapping, a
            ``ModelSpec`` or a LangChain chat model), ``tools`` (LangChain tools or
            built-in names such as ``calculator``: a bounded tool loop before each
            turn, every call a ``role="tool"`` record in the transcript) or ``agent``
            (a Runnable or compiled graph, messages in, messages out), given in one of
            its stages or in ``agents``. Default
            :data:`~debategraph.nodes.meeting.setup.DEFAULT_STAGES`.
        max_rounds: Round cap (>= 1) of a stage that sets none.
        keep_last: Latest messages a speaker and the controller read (0: all); the chair
            reads the whole conversation.
        pause_after_round: After each round that does not end the meeting,
            ``interrupt()`` with the round's messages and the controller's decision;
            resume with ``Command(resume={"approve": True})`` or
            ``Command(resume={"interject": "text"})`` (the next speakers read it). Needs
            a checkpointer.
        time_limit_s: Seconds the meeting may take (``None``: no limit). At the
            deadline the call in flight is cancelled (recorded with the reason), none
            starts after it, and the meeting ends ``time_limit`` (the chair's decision
            then falls back without a call).
        agents: Per-name records (:class:`~debategraph.state.records.Participant` or
            dicts ``{name, model?, tools?, agent?, max_tool_calls?, instructions?}``)
            that give the stages' participants of that name (case-insensitively; each
            must be a participant of some stage) their model, tools or agent, so that
            a participant of several stages is described once. Instructions given here
            replace the participant's in every stage it speaks in. What a stage's
            participant sets itself must agree with its record here.
        officials: The round controller (``controller``) and the chair (``chair``)
            with a model, tools or agent of their own (``AgentSpec`` records or dicts
            ``{name, model?, tools?, agent?, max_tool_calls?}``); default: the
            meeting's model.
        state_schema: State schema; may extend
            :class:`~debategraph.state.meeting.MeetingState` (the default).

    Returns:
        The uncompiled graph; ``compile(checkpointer=..., name=...)`` it.

    Raises:
        ValueError: On any bad setting (an unknown participant in ``agents``, an unknown
            official, a model, tool or agent that is not one), in one line naming the
            value and what is allowed.
    """
    setup = meeting_setup(**settings_of(locals()))
    builder, binding = skeleton(model, SCHEMAS, state_schema, setup, nodes.outcome, GRAPH_NAME)
    builder.add_node(OPEN_ROUND_NODE, nodes.make_open_round(setup))
    builder.start_at(OPEN_ROUND_NODE)
    route, targets = nodes.open_router(setup)
    builder.add_conditional_edges(OPEN_ROUND_NODE, loop_node(route), targets)
    for node in setup.nodes:
        builder.add_node(node, nodes.make_speaker(node, setup, binding))
        route, targets = nodes.speaker_router(node, setup)
        if len(targets) == 1:
            builder.add_edge(node, targets[0])
        else:
            builder.add_conditional_edges(node, loop_node(route), targets)
    builder.add_node(nodes.CONTROLLER_NODE, nodes.make_close_round(setup, binding))
    route, targets = round_router(nodes.DECIDE_NODE, pause_after_round=setup.pause_after_round)
    builder.add_conditional_edges(nodes.CONTROLLER_NODE, loop_node(route), targets)
    if setup.pause_after_round:
        add_review(builder, nodes.round_review(setup), finish=nodes.DECIDE_NODE)
    builder.add_node(nodes.DECIDE_NODE, nodes.make_decide(setup, binding))
    builder.add_edge(nodes.DECIDE_NODE, RESPOND_NODE)
    return builder
