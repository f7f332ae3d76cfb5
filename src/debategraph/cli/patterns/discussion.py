"""The ``discuss`` command: its options, and how a discussion's progress and result read.

What a discussion is (its title, result fields, report, page fields, rounds) is
:mod:`debategraph.nodes.discussion.described`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer

from debategraph.cli.options import AgentsFile
from debategraph.cli.patterns.declaration import Pattern, Values
from debategraph.cli.patterns.shared import (
    TimeLimit,
    fallback_note,
    renamed_option,
    time_limit_option,
)
from debategraph.documents import load_document
from debategraph.errors import UsageError
from debategraph.nodes.discussion.described import DESCRIBED
from debategraph.nodes.discussion.markdown import convergence_text, ending_text
from debategraph.nodes.discussion.setup import (
    CHECK_NODE,
    DEFAULT_MAX_ROUNDS,
    DEFAULT_THRESHOLD,
    DEFAULT_TIME_LIMIT_S,
    OFFICIALS,
    OPEN_ITERATION_NODE,
    PREPARE_NODE,
    QUESTIONS_DONE_NODE,
    RESPONSES_DONE_NODE,
)
from debategraph.runs.agents_file import OPTION as AGENTS_FILE_OPTION
from debategraph.runs.agents_file import read_agents_file
from debategraph.runs.start import Launch
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


PATTERN = Pattern(
    described=DESCRIBED,
    command=discuss_command,
    headline=_headline,
    progress=_progress,
)
