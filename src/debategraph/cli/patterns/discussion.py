"""The ``discuss`` command: its options, and how a discussion's progress and result read."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer

from debategraph.checkpoints.thread_values import jsonable, turns
from debategraph.cli.agents_file import OPTION as AGENTS_FILE_OPTION
from debategraph.cli.agents_file import AgentsFile, read_agents_file
from debategraph.cli.patterns.declaration import Launch, Pattern, Report, Values
from debategraph.cli.patterns.shared import (
    TimeLimit,
    fallback_note,
    pausing,
    renamed_option,
    time_limit_option,
)
from debategraph.documents import load_document
from debategraph.errors import UsageError
from debategraph.nodes.discussion.markdown import (
    convergence_text,
    ending_text,
    render_report_markdown,
)
from debategraph.nodes.discussion.setup import (
    CHECK_NODE,
    DEFAULT_MAX_ROUNDS,
    DEFAULT_PERSONAS,
    DEFAULT_THRESHOLD,
    DEFAULT_TIME_LIMIT_S,
    INITIAL_STAGE,
    OFFICIALS,
    OPEN_ITERATION_NODE,
    PREPARE_NODE,
    QUESTION_STAGE,
    QUESTIONS_DONE_NODE,
    RESPONSE_STAGE,
    RESPONSES_DONE_NODE,
)
from debategraph.nodes.rounds import REVIEW_NODE
from debategraph.state.discussion import Persona
from debategraph.words import plural

#: ``--time-limit`` when not given: the factory's default, as the option reads it (``30m``).
DEFAULT_TIME_LIMIT = f"{DEFAULT_TIME_LIMIT_S / 60:g}m"
#: What a report built without its consensus call holds instead of a synthesis.
UNSYNTHESISED = (
    "the report is built from state: its contributions are the agents' own insights, "
    "unsynthesised; no consensus point, divergent view, overview or assessment was written"
)


def discuss_command(
    paper: Annotated[Path, typer.Argument(help="The document: Markdown or plain text.")],
    rounds: Annotated[
        int | None,
        typer.Option(
            "--rounds",
            help="Iterations of questions, answers and revisions at most "
            f"\\[default: {DEFAULT_MAX_ROUNDS}].",
        ),
    ] = None,
    threshold: Annotated[
        float, typer.Option("--threshold", help="Convergence (0-1) that ends the discussion.")
    ] = DEFAULT_THRESHOLD,
    time_limit: TimeLimit = DEFAULT_TIME_LIMIT,
    persona: Annotated[
        Path | None,
        typer.Option(
            "--persona",
            help="JSON file: a list of {name, focus, description} personas (or "
            f"{AGENTS_FILE_OPTION}).",
        ),
    ] = None,
    agents_file: AgentsFile = None,
    max_iterations: Annotated[
        int | None, typer.Option("--max-iterations", hidden=True, help="Deprecated: --rounds.")
    ] = None,
) -> Launch:
    """Four personas analyse a paper, question each other and write a consensus report.

    ``--agents-file`` lists personas (``name``, ``focus``, ``description``) with a model,
    tools or agent of their own; an entry named ``consensus`` gives the report's writer
    its own model. Its entries are stored with the thread as given (specs, never keys),
    so a resumed or forked discussion calls the same models.
    """
    if persona is not None and agents_file is not None:
        raise UsageError(
            f"--persona and {AGENTS_FILE_OPTION} both list the personas: give only one "
            f"({AGENTS_FILE_OPTION} takes the same entries, and models and tools)"
        )
    try:
        document = load_document(paper)
        text = paper.read_text(encoding="utf-8")
    except (ValueError, OSError, UnicodeDecodeError) as exc:
        raise UsageError(str(exc)) from exc
    max_rounds, notes = renamed_option(
        "--max-iterations", "--rounds", max_iterations, rounds, DEFAULT_MAX_ROUNDS
    )
    seconds = time_limit_option(time_limit)
    personas: list[dict[str, Any]] | None = None
    officials: list[dict[str, Any]] = []
    if persona is not None:
        personas = read_personas(persona)
    elif agents_file is not None:
        roster = read_agents_file(agents_file, Persona, officials=OFFICIALS)
        personas, officials = roster.agents or None, roster.officials
    settings: dict[str, Any] = {
        "personas": personas,
        "max_rounds": max_rounds,
        "threshold": threshold,
        "time_limit_s": DEFAULT_TIME_LIMIT_S if seconds is None else seconds,
    }
    if officials:
        settings["officials"] = officials
    return Launch(settings, {"document": text}, notes=(*notes, *document.notes))


def read_personas(path: Path) -> list[dict[str, Any]]:
    """``--persona``: a JSON file holding a list of ``{name, focus, description}`` objects.

    Args:
        path: The file.

    Returns:
        The personas as dicts (checked by the graph factory).

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


def _turn_fields(values: Values) -> dict[str, dict[str, Any]]:
    """What a discussion's page shows under its turns: stances and revised insights.

    Under each response turn, its stances (the question's turn linked) and revisions;
    under each agent's first turn, its insights as they stand now (version, when revised).
    """
    by_key = {(t.agent, t.round, t.stage): t.id for t in turns(values)}
    asked = {
        q["id"]: by_key.get((q["asker"], q["iteration"], QUESTION_STAGE))
        for q in jsonable(values.get("questions") or [])
    }
    out: dict[str, dict[str, Any]] = {}
    for r in jsonable(values.get("responses") or []):
        turn_id = by_key.get((r["agent"], r["iteration"], RESPONSE_STAGE))
        if turn_id is not None:
            stances = out.setdefault(turn_id, {}).setdefault("stances", [])
            stances.append(
                {
                    "question": r["question_id"],
                    "asked in": asked.get(r["question_id"]),
                    "stance": r["stance"],
                    "revised insight": r.get("revised_insight"),
                    "confidence": r["confidence"],
                }
            )
    for agent, insights in jsonable(values.get("insights") or {}).items():
        turn_id = by_key.get((agent, 0, INITIAL_STAGE))
        if turn_id is not None and insights:
            out.setdefault(turn_id, {})["insights now"] = [
                {
                    "id": i["id"],
                    "version": i["version"],
                    "revised in iteration": i["revised_in"] or None,
                    "insight": i["content"],
                }
                for i in insights
            ]
    return out


def _personas(settings: Values) -> int:
    return len(settings.get("personas") or DEFAULT_PERSONAS)


def _describe(settings: Values) -> str:
    return (
        f"{plural(_personas(settings), 'persona')}, up to "
        f"{plural(settings['max_rounds'], 'iteration')}, "
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
    iterations = plural(result.get("iterations_completed", 0), "iteration")
    if report.get("fallback"):
        lines = [
            f"consensus: not written{fallback_note(report['fallback'])} · {iterations}",
            f"  note: {UNSYNTHESISED}",
        ]
    else:
        lines = [
            f"consensus: {plural(len(report.get('consensus_points', [])), 'point')}, "
            f"{plural(len(report.get('divergent_views', [])), 'divergent view')}, confidence "
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
    PREPARE_NODE: "phase 1: initial analysis",
    OPEN_ITERATION_NODE: "phase 2: questioning",
    QUESTIONS_DONE_NODE: "phase 3: responding",
    RESPONSES_DONE_NODE: "phase 4: convergence",
}


def _progress(node: str, update: Values) -> list[str]:
    if node in _PHASE_STARTS:
        return [f"  [bold]{_PHASE_STARTS[node]}[/bold]"]
    records = update.get("convergence") if node == CHECK_NODE else None
    if not records:
        return []
    record = records[-1]
    lines = [
        f"  iteration {record.iteration}: convergence {convergence_text(record)} · "
        f"{plural(record.changed, 'insight')} revised"
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
    name="discussion",
    command=discuss_command,
    title=_paper_title,
    summary=_summary,
    describe=_describe,
    agents_per_round=_personas,
    headline=_headline,
    progress=_progress,
    report=Report("discussion-{thread_id}.md", _render_report),
    turn_fields=_turn_fields,
    boundary_nodes=frozenset({OPEN_ITERATION_NODE, REVIEW_NODE}),
    round_word="iteration",
)
