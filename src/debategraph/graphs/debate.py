"""Debate: two or more named debaters with stances take turns on a motion.

Each debater reads what was addressed to it (the other debaters' arguments, never a
message addressed only to someone else) and its own earlier arguments, and answers the
latest opposing one; the first speaker of round 1 makes its case instead. An optional
moderator may end the debate after any round (adaptive early stop) and an optional judge
gives a typed verdict at the end.

Graph: ``START -> open_round -> <debater 1> -> ... -> <debater n> -> close_round``, then
``[moderator] -> [summarizer] -> [human] -> open_round`` while the debate goes on, or on
to ``[judge] -> END``. One node per debater, chained in speaking order: turns are
sequential, so each is its own step, and Studio shows who speaks after whom and which
debater a streamed token or a checkpoint belongs to (a single ``speak`` node would hide
the order inside routing code).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from debategraph.graphs.skeleton import ModelLike, PatternGraph, settings_of, skeleton
from debategraph.nodes import debate as nodes
from debategraph.nodes.agent import OfficialLike
from debategraph.nodes.debate.setup import (
    DEFAULT_DEBATERS,
    DEFAULT_HISTORY,
    DEFAULT_KEEP_LAST,
    DEFAULT_MAX_ROUNDS,
    DEFAULT_WORDS,
    DebaterLike,
    debate_setup,
)
from debategraph.nodes.dual import loop_node
from debategraph.nodes.messages import RESPOND_NODE
from debategraph.nodes.review import add_review
from debategraph.nodes.rounds import OPEN_ROUND_NODE
from debategraph.state.debate import SCHEMAS, DebateInput, DebateOutput, HistoryMode

GRAPH_NAME = "debate"


def build_debate(
    model: ModelLike = None,
    *,
    debaters: Sequence[DebaterLike] = DEFAULT_DEBATERS,
    max_rounds: int = DEFAULT_MAX_ROUNDS,
    first_speaker: str | None = None,
    words: int = DEFAULT_WORDS,
    moderator: bool = False,
    judge: bool = False,
    history: HistoryMode = DEFAULT_HISTORY,
    keep_last: int = DEFAULT_KEEP_LAST,
    pause_after_round: bool = False,
    time_limit_s: float | None = None,
    officials: Sequence[OfficialLike] = (),
    state_schema: type[Any] | None = None,
) -> PatternGraph[DebateInput, DebateOutput]:
    """Build the debate graph (uncompiled).

    Example:
        ```python
        from langchain_openai import ChatOpenAI

        from debategraph import build_debate

        model = ChatOpenAI(model="gpt-4o-mini", timeout=60)
        graph = build_debate(
            model, debaters=["Ann:for the motion", "Ben:against it"], max_rounds=2, judge=True
        ).compile(name="debate")
        result = graph.invoke({"topic": "Cities should ban cars downtown"})
        print(result["verdict"].winner, result["rounds_completed"], result["usage"].calls)
        ```

    Args:
        model: Chat model, binding or spec every agent calls. ``None`` reads the model
            from the run's :class:`~debategraph.models.context.Context` (embedded model by default).
        debaters: Two or more debaters: :class:`~debategraph.Debater` objects,
            dicts (``name``, ``side``, optional ``persona``) or ``"Name:side"`` strings.
            Names are unique (case-insensitively) and name the debaters' graph nodes.
            A record or dict may also give the debater its own ``model`` (a spec string
            such as ``NAME@BASE_URL``, a mapping, a ``ModelSpec`` or a chat model),
            ``tools`` (LangChain tools or built-in names such as ``calculator``: a
            bounded tool loop before each argument, every call a ``role="tool"``
            transcript record before the argument) or ``agent`` (a Runnable or compiled
            graph, messages in and out, whose last message is the argument; one that
            fails or returns nothing loses that turn, recorded with the reason, and the
            debate goes on). Default :data:`DEFAULT_DEBATERS`.
        max_rounds: Round cap (>= 1); in a round every debater speaks once.
        first_speaker: Who opens each round (default the first debater); the others
            follow in list order, wrapping around.
        words: Soft word limit of each argument (>= 10), asked for in the prompt; actual
            lengths are recorded in ``word_counts``.
        moderator: After each round but the last, a moderator decides whether the debate
            is settled (ends it with ``termination_reason="settled"``) and who leads.
        judge: At the end, a judge gives a :class:`~debategraph.state.debate.Verdict`.
        history: ``full``: debaters read every argument addressed to them. ``window``:
            they read at most ``keep_last`` of them verbatim plus a running ``summary``
            of older ones (a summarizer call after a round once arguments leave the
            window), so prompts stay bounded however many rounds run; the moderator and
            the judge then read the summary and the arguments not yet summarised.
        keep_last: With ``window``: arguments read verbatim (>= 1; at least one per
            other debater is shown when ``keep_last`` is smaller than that).
        pause_after_round: After each round that does not end the debate,
            ``interrupt()`` with the round's arguments; resume with
            ``Command(resume={"approve": True})`` or ``Command(resume={"interject":
            "text"})`` (the text is shown to every debater next round). Needs a
            checkpointer.
        time_limit_s: Seconds the debate may take (``None``: no limit). At the
            deadline the call in flight is cancelled (recorded with the reason), none
            starts after it, and the debate ends ``time_limit``.
        officials: Records (:class:`~debategraph.state.records.AgentSpec` or dicts) giving the
            ``moderator``, the ``summarizer`` or the ``judge`` (by name) a ``model``,
            ``tools`` or ``agent`` of its own, e.g. ``[{"name": "judge", "model":
            "gpt-4o@https://api.openai.com/v1"}]``; the others use ``model``. Each
            official given must be on (``moderator=True``, ``history="window"``,
            ``judge=True``).
        state_schema: State schema; may extend :class:`~debategraph.state.debate.DebateState`
            (the default).

    Returns:
        The uncompiled graph; ``compile(checkpointer=..., name=...)`` it.

    Raises:
        ValueError: On any bad setting, naming the value and what is allowed.
    """
    setup = debate_setup(**settings_of(locals()))
    builder, binding = skeleton(model, SCHEMAS, state_schema, setup, nodes.outcome, GRAPH_NAME)
    builder.add_node(OPEN_ROUND_NODE, nodes.make_open_round(setup))
    previous = OPEN_ROUND_NODE
    for name in setup.names:
        builder.add_node(name, nodes.make_debater(name, setup, binding))
        builder.add_edge(previous, name)
        previous = name
    builder.add_node(nodes.CLOSE_ROUND_NODE, nodes.make_close_round(setup, binding))
    builder.add_edge(previous, nodes.CLOSE_ROUND_NODE)
    builder.start_at(OPEN_ROUND_NODE)
    route, targets = nodes.router(setup, nodes.CLOSE_ROUND_NODE)
    builder.add_conditional_edges(nodes.CLOSE_ROUND_NODE, loop_node(route), targets)
    if setup.moderator:
        builder.add_node(nodes.MODERATOR_NODE, nodes.make_moderator(setup, binding))
        route, targets = nodes.router(setup, nodes.MODERATOR_NODE)
        builder.add_conditional_edges(nodes.MODERATOR_NODE, loop_node(route), targets)
    if setup.history == "window":
        builder.add_node(nodes.SUMMARIZER_NODE, nodes.make_summarizer(setup, binding))
        builder.add_edge(nodes.SUMMARIZER_NODE, setup.next_step(nodes.SUMMARIZER_NODE))
    if setup.pause_after_round:
        add_review(builder, nodes.round_review(setup), finish=setup.finish)
    if setup.judge:
        builder.add_node(nodes.JUDGE_NODE, nodes.make_judge(setup, binding))
        builder.add_edge(nodes.JUDGE_NODE, RESPOND_NODE)
    return builder
