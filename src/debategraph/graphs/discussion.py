"""Discussion: persona agents analyse a document, question each other, converge, report.

Phase 1: each persona sees the title, abstract and section list, chooses sections, reads
them and gives two or three insights. Then, per iteration: phase 2, each reviews the
others' latest insights and asks questions or skips; phase 3, each answers the questions
addressed to it (a ``revise`` stance rewrites its insight); phase 4, each scores the
convergence, which is combined with measured consistency, completeness, resolution and
stability. The loop ends converged, stalled, at the time limit or the iteration cap
(``rounds_completed``); phase 5 writes the consensus report.

Graph: ``START -> prepare -> analyse_<p>... -> open_iteration -> ask_<p>... ->
questions_done -> answer_<p>... -> responses_done -> assess_<p>... -> check_convergence``,
then back to ``open_iteration`` (through the review point ``human`` when pausing) or on
to ``consensus -> END``. The agent nodes of a phase start in the same step, so their
calls run concurrently (bounded by the run config's ``max_concurrency``).

A human's interjection (at the pause, or a ``user`` record added with ``update_state``
between iterations) reaches every later prompt of every persona and the consensus.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from debategraph.errors import UsageError
from debategraph.graphs.pattern import (
    Launch,
    Pattern,
    Report,
    Values,
    fallback_note,
    parse_time_limit,
    pausing,
)
from debategraph.nodes.discussion.markdown import (
    convergence_text,
    ending_text,
    render_report_markdown,
)

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel
    from langgraph.graph import StateGraph

    from debategraph.context import Context
    from debategraph.models import ModelBinding, ModelSpec
    from debategraph.nodes.discussion.setup import (
        DEFAULT_PERSONAS,
        PersonaLike,
        discussion_setup,
        parse_persona,
    )
    from debategraph.state.discussion import DiscussionInput, DiscussionOutput

GRAPH_NAME = "discussion"
#: Steps of an iteration: open_iteration, ask, questions_done, answer, responses_done,
#: assess, check_convergence.
STEPS_PER_ITERATION = 7

__all__ = [
    "DEFAULT_PERSONAS",
    "GRAPH_NAME",
    "PATTERN",
    "build_discussion",
    "discuss_command",
    "discussion_setup",
    "parse_persona",
    "recursion_limit",
    "render_report_markdown",
]

#: Names of the nodes package this module re-exports, imported on first use (they need
#: the state schemas, hence LangGraph).
_LAZY = frozenset({"DEFAULT_PERSONAS", "discussion_setup", "parse_persona"})


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        from debategraph.nodes.discussion import setup

        return getattr(setup, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def build_discussion(
    model: BaseChatModel | ModelBinding | ModelSpec | None = None,
    *,
    personas: Sequence[PersonaLike] | None = None,
    max_iterations: int = 5,
    threshold: float = 0.75,
    time_limit_s: float = 1800,
    max_sections: int = 3,
    pause_after_round: bool = False,
    state_schema: type[Any] | None = None,
) -> StateGraph[Any, Context, DiscussionInput, DiscussionOutput]:
    """Build the discussion graph (uncompiled).

    Args:
        model: Chat model, binding or spec every agent calls. ``None`` reads the model
            from the run's :class:`~debategraph.context.Context` (embedded model by default).
        personas: Two or more :class:`~debategraph.state.Persona` objects or dicts
            (``name``, ``focus``, optional ``description``); default
            :data:`DEFAULT_PERSONAS`. Names are unique ignoring case and punctuation.
        max_iterations: Cap on question/answer iterations (>= 1).
        threshold: Convergence score (0-1) that ends the discussion as ``converged``.
        time_limit_s: Seconds the run may take: at the deadline the calls in flight are
            cancelled (recorded as fallbacks with the reason), none starts after it, and
            the discussion ends ``time_limit`` with its report built without a call.
        max_sections: Sections each agent may choose to read (>= 1).
        pause_after_round: After each iteration that does not end the discussion,
            ``interrupt()`` with its convergence; resume with
            ``Command(resume={"approve": True})`` or ``Command(resume={"interject": "text"})``
            (the text reaches every later prompt of every persona). Needs a checkpointer.
        state_schema: State schema; may extend
            :class:`~debategraph.state.DiscussionState` (the default).

    Returns:
        The uncompiled graph; ``compile(checkpointer=..., name=...)`` it.

    Raises:
        ValueError: On any bad setting, naming the value and what is allowed.
    """
    from langgraph.graph import END, START, StateGraph

    from debategraph.context import Context
    from debategraph.nodes import rounds as loop
    from debategraph.nodes.agent import bind
    from debategraph.nodes.discussion import consensus, convergence, phases
    from debategraph.nodes.discussion import setup as names
    from debategraph.nodes.dual import loop_node
    from debategraph.state.discussion import DiscussionInput, DiscussionOutput, DiscussionState

    setup = names.discussion_setup(
        personas,
        max_iterations=max_iterations,
        threshold=threshold,
        time_limit_s=time_limit_s,
        max_sections=max_sections,
    )
    binding = bind(model)

    builder: StateGraph[Any, Context, DiscussionInput, DiscussionOutput] = StateGraph(
        state_schema or DiscussionState,
        context_schema=Context,
        input_schema=DiscussionInput,
        output_schema=DiscussionOutput,
    )
    builder.add_node(names.PREPARE_NODE, loop_node(phases.make_prepare(setup)))
    builder.add_node(names.OPEN_ITERATION_NODE, phases.open_iteration_node())
    builder.add_node(names.QUESTIONS_DONE_NODE, loop_node(phases.join))
    builder.add_node(names.RESPONSES_DONE_NODE, loop_node(phases.join))
    builder.add_node(names.CHECK_NODE, loop_node(convergence.make_check(setup)))
    builder.add_node(names.CONSENSUS_NODE, consensus.make_consensus(setup, binding))
    builder.add_edge(START, names.PREPARE_NODE)
    stops = [
        names.PREPARE_NODE,
        names.OPEN_ITERATION_NODE,
        names.QUESTIONS_DONE_NODE,
        names.RESPONSES_DONE_NODE,
        names.CHECK_NODE,
    ]
    for phase, before, after in zip(names.PHASES, stops[:-1], stops[1:], strict=True):
        factory = phases.PERSONA_NODES[phase]
        nodes = [names.node_name(phase, p.name) for p in setup.personas]
        for persona, node in zip(setup.personas, nodes, strict=True):
            builder.add_node(node, factory(persona.name, setup, binding))
            builder.add_edge(before, node)
        builder.add_edge(nodes, after)  # waits for every agent of the phase
    route, targets = loop.round_router(
        names.CONSENSUS_NODE,
        pause_after_round=pause_after_round,
        next_node=names.OPEN_ITERATION_NODE,
    )
    builder.add_conditional_edges(names.CHECK_NODE, loop_node(route), targets)
    if pause_after_round:
        loop.add_review(
            builder, convergence.round_review(setup), open_node=names.OPEN_ITERATION_NODE
        )
    builder.add_edge(names.CONSENSUS_NODE, END)
    return builder


def recursion_limit(iterations: int) -> int:
    """A recursion limit just above what ``iterations`` iterations need.

    The loop ends on its own iteration cap; this limit is a backstop, set deliberately
    instead of LangGraph's effectively unbounded default.

    Args:
        iterations: The discussion's iteration cap.

    Returns:
        Supersteps allowed.
    """
    # + 1 per iteration: the human review step, if any; + 5: prepare, analyse, consensus,
    # slack.
    return (STEPS_PER_ITERATION + 1) * iterations + 5


# -- the pattern's declaration: CLI input, title, summary, rendering ------------------------


def discuss_command(
    paper: Annotated[Path, typer.Argument(help="The document: Markdown or plain text.")],
    max_iterations: Annotated[
        int, typer.Option("--max-iterations", help="Question/answer iterations at most.")
    ] = 5,
    threshold: Annotated[
        float, typer.Option("--threshold", help="Convergence (0-1) that ends the discussion.")
    ] = 0.75,
    time_limit: Annotated[
        str, typer.Option("--time-limit", help="Stop after this long: 30m, 90s, 1h.")
    ] = "30m",
    persona: Annotated[
        Path | None,
        typer.Option("--persona", help="JSON file: a list of {name, focus, description} personas."),
    ] = None,
) -> Launch:
    """Four personas analyse a paper, question each other and write a consensus report."""
    from debategraph.documents import load_document

    try:
        document = load_document(paper)
        text = paper.read_text(encoding="utf-8")
    except (ValueError, OSError, UnicodeDecodeError) as exc:
        raise UsageError(str(exc)) from exc
    settings: dict[str, Any] = {
        "personas": read_personas(persona) if persona is not None else None,
        "max_iterations": max_iterations,
        "threshold": threshold,
        "time_limit_s": parse_time_limit(time_limit),
    }
    return Launch(settings, {"document": text}, notes=tuple(document.notes))


def read_personas(path: Path) -> list[dict[str, Any]]:
    """``--persona``: a JSON file holding a list of ``{name, focus, description}`` objects.

    Args:
        path: The file.

    Returns:
        The personas as dicts (validated by the graph factory).

    Raises:
        UsageError: If the file cannot be read or holds something else.
    """
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise UsageError(f"--persona {path}: cannot read: {exc.strerror}") from exc
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise UsageError(f"--persona {path}: not valid JSON ({exc})") from exc
    if not isinstance(data, list) or not all(isinstance(p, dict) for p in data):
        raise UsageError(
            f"--persona {path}: expected a JSON list of {{name, focus, description}} objects"
        )
    return data


#: What a report built without its consensus call holds instead of a synthesis.
UNSYNTHESISED = (
    "the report is built from state: its contributions are the agents' own insights, "
    "unsynthesised; no consensus point, divergent view, overview or assessment was written"
)


def _paper_title(values: Values) -> str:
    paper = values.get("paper")
    if isinstance(paper, dict):  # a strict checkpoint read hands records back as dicts
        return str(paper.get("title") or "")
    return str(getattr(paper, "title", "") or "")


def _summary(values: Values) -> dict[str, Any]:
    report = values.get("report")
    convergence = values.get("convergence") or []
    return {
        "title": _paper_title(values),
        "iterations_completed": values.get("iterations_completed", 0),
        "convergence": convergence[-1].model_dump(mode="json") if convergence else None,
        "report": report.model_dump(mode="json") if report is not None else None,
        "notes": list(values.get("notes") or []),
    }


def _personas(settings: Values) -> int:
    personas = settings.get("personas")
    if personas:
        return len(personas)
    from debategraph.nodes.discussion.setup import DEFAULT_PERSONAS

    return len(DEFAULT_PERSONAS)


def _describe(settings: Values) -> str:
    return (
        f"{_personas(settings)} personas, up to {settings['max_iterations']} iterations, "
        f"threshold {settings['threshold']}, time limit {settings['time_limit_s']:.0f}s"
        f"{pausing(settings)}"
    )


def _headline(result: Values) -> list[str]:
    """The result's lines: the consensus, the last convergence, and what they are not.

    A report the consensus call did not write says so (``consensus: not written
    (fallback: ...)``), never as a judgement; unmeasured components read ``n/a``; an
    ending the consensus overturned (scores said converged, no consensus point) says why.
    """
    report = result.get("report") or {}
    iterations = f"{result.get('iterations_completed', 0)} iteration(s)"
    if report.get("fallback"):
        lines = [
            f"consensus: not written{fallback_note(report['fallback'])} · {iterations}",
            f"  {UNSYNTHESISED}",
        ]
    else:
        lines = [
            f"consensus: {len(report.get('consensus_points', []))} point(s), "
            f"{len(report.get('divergent_views', []))} divergent view(s), confidence "
            f"{report.get('overall_confidence', 0):.2f} · {iterations}"
        ]
    record = result.get("convergence")
    if record:
        lines.append(f"  last convergence: {convergence_text(record)}")
    ending = ending_text(result.get("termination_reason"), [record] if record else [])
    if ending and ending != result.get("termination_reason"):
        lines.append(f"  ended {ending}")
    return lines


#: The heading shown when a phase starts, by the node that starts it.
_PHASE_STARTS = {
    "prepare": "phase 1: initial analysis",
    "open_iteration": "phase 2: questioning",
    "questions_done": "phase 3: responding",
    "responses_done": "phase 4: convergence",
}


def _progress(node: str, update: Values) -> list[str]:
    if node in _PHASE_STARTS:
        return [f"  [bold]{_PHASE_STARTS[node]}[/bold]"]
    records = update.get("convergence") if node == "check_convergence" else None
    if not records:
        return []
    record = records[-1]
    lines = [
        f"  iteration {record.iteration}: convergence {convergence_text(record)} · "
        f"{record.changed} insight(s) revised"
    ]
    if update.get("termination_reason"):
        lines.append("  [bold]phase 5: consensus[/bold]")
    return lines


def _render_report(values: Values, title: str) -> str | None:
    if values.get("report") is None:
        return None
    return render_report_markdown(
        values["report"],
        title=title,
        termination_reason=values.get("termination_reason"),
        convergence=values.get("convergence") or (),
        insights=values.get("insights"),
    )


PATTERN = Pattern(
    name=GRAPH_NAME,
    build=build_discussion,
    command=discuss_command,
    recursion_limit=lambda s: recursion_limit(int(s["max_iterations"])),
    title=_paper_title,
    summary=_summary,
    describe=_describe,
    agents_per_round=_personas,
    headline=_headline,
    progress=_progress,
    report=Report("discussion-{thread_id}.md", _render_report),
    boundary_nodes=frozenset({"open_iteration", "human"}),
    round_word="iteration",
)
