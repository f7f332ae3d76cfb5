"""The registry of patterns: the one list, one line per pattern, loaded on first use.

Each line (:class:`Entry`) declares a pattern once by naming where its parts live: the
graph factory (``graphs/<p>.py``), the state module (whose ``RECORD_TYPES`` checkpoints
may hold), the CLI declaration (a :class:`Pattern` in ``cli/patterns/<p>.py``), and the
graph LangGraph Studio serves (its settings and description). Everything that lists
patterns reads these lines: the CLI's commands, the thread tools, ``import debategraph``'s
factories, ``graphs/studio.py``, the checkpoint serializer's allowlist, and the test that
checks ``langgraph.json``. A new built-in pattern is its own modules plus one line in
:data:`BUILTIN`; a pattern from elsewhere joins with :func:`register` (in-process) or the
``DEBATEGRAPH_PATTERNS`` environment variable (``module:ENTRY`` items, comma-separated).

This module is the bottom layer: it names the other layers' modules as strings and
imports them only when asked, so it loads neither LangGraph, typer nor rich.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from debategraph.errors import UsageError

#: Environment variable naming extra patterns: ``pkg.module:ENTRY,other:THING``.
PLUGINS_ENV = "DEBATEGRAPH_PATTERNS"
#: The records every pattern's checkpoints hold (``debategraph.state.records``).
COMMON_RECORDS = "debategraph.state.records"

Values = Mapping[str, Any]


def load(target: str) -> Any:
    """The object a ``module:attribute`` string names.

    Args:
        target: E.g. ``debategraph.graphs.debate:build_debate``.

    Returns:
        The object.
    """
    module, _, attribute = target.partition(":")
    return getattr(importlib.import_module(module), attribute)


@dataclass(frozen=True)
class Entry:
    """A registry line: one pattern, and where each of its parts lives.

    Attributes:
        name: The pattern's name: its compiled graph's name, stored with each thread,
            and its Studio graph's name in ``langgraph.json``.
        command: Its CLI command.
        help: The command's one-line help.
        factory: ``module:attribute`` of its graph factory (``build_<p>``), which returns
            an uncompiled ``StateGraph``; the factory is exported by ``debategraph``.
        state: The module of its state schemas, whose ``RECORD_TYPES`` are the pydantic
            records its checkpoints may hold.
        cli: ``module:attribute`` of its :class:`Pattern` (the CLI declaration).
        studio: The factory's settings for the graph Studio serves.
        description: The Studio graph's description (``langgraph.json``).
        renamed: Settings renamed since threads were first saved, ``{old: new}``: the
            factory takes the old spelling with a ``DeprecationWarning``, and a saved
            thread's settings are read with the new one.
        input_check: ``module:attribute`` of the check of a run's first input beyond its
            fields' types (an empty question, say): ``check(values)`` raising
            ``ValueError`` with one line. The graph runs it itself when it starts; the
            CLI and the server run it before (see :func:`debategraph.graphs.inputs.check_input`).
            Empty: the fields' types are all there is to check.
    """

    name: str
    command: str
    help: str
    factory: str
    state: str
    cli: str
    studio: Mapping[str, Any] = field(default_factory=dict)
    description: str = ""
    renamed: Mapping[str, str] = field(default_factory=dict)
    input_check: str = ""

    def build(self) -> Callable[..., Any]:
        """The graph factory (imported now).

        Returns:
            ``build_<p>``.
        """
        factory: Callable[..., Any] = load(self.factory)
        return factory

    def schemas(self) -> Any:
        """The pattern's schemas (imported now).

        Returns:
            The state module's ``SCHEMAS`` (a :class:`debategraph.state.base.Schemas`).
        """
        return importlib.import_module(self.state).SCHEMAS

    def input_schema(self) -> type[Any]:
        """What an invocation of the pattern's graph takes (imported now).

        Returns:
            The state module's ``SCHEMAS.input`` (a ``TypedDict``).
        """
        schema: type[Any] = self.schemas().input
        return schema

    def record_types(self) -> tuple[type[Any], ...]:
        """The records this pattern's checkpoints hold besides the common ones.

        Returns:
            The state module's ``RECORD_TYPES`` (empty if it declares none).
        """
        return tuple(getattr(importlib.import_module(self.state), "RECORD_TYPES", ()))

    def declaration(self) -> Pattern:
        """The CLI declaration (imported now; it loads typer and rich).

        Returns:
            The pattern's :class:`Pattern`.
        """
        pattern: Pattern = load(self.cli)
        return pattern


BUILTIN: tuple[Entry, ...] = (
    Entry(
        "solver_debate",
        "solve",
        "Solvers debate a math question on a communication topology, then decide.",
        factory="debategraph.graphs.solver_debate:build_solver_debate",
        state="debategraph.state.solver_debate",
        cli="debategraph.cli.patterns.solver_debate:PATTERN",
        renamed={"rounds": "max_rounds"},
        input_check="debategraph.nodes.solver_debate.setup:check_input",
        description="Solvers on a sparse topology answer a math question, refine after "
        "reading their neighbours for R rounds, then decide (a vote, or another protocol).",
    ),
    Entry(
        "debate",
        "debate",
        "Named debaters argue a motion turn by turn; optional moderator and judge.",
        factory="debategraph.graphs.debate:build_debate",
        state="debategraph.state.debate",
        cli="debategraph.cli.patterns.debate:PATTERN",
        studio={"moderator": True, "judge": True},
        input_check="debategraph.nodes.debate.setup:check_input",
        description="Two debaters (Affirmative, Negative) argue a motion in turns, each "
        "answering the latest opposing argument; a moderator may end it early and a judge "
        "gives a typed verdict.",
    ),
    Entry(
        "discussion",
        "discuss",
        "Four personas analyse a paper, question each other and write a consensus report.",
        factory="debategraph.graphs.discussion:build_discussion",
        state="debategraph.state.discussion",
        cli="debategraph.cli.patterns.discussion:PATTERN",
        renamed={"max_iterations": "max_rounds"},
        input_check="debategraph.nodes.discussion.setup:check_input",
        description="Four personas (Critical Evaluator, Innovative Insighter, Practical "
        "Applicator, Theoretical Integrator) analyse a document, question each other, answer "
        "and revise until they converge, then write a consensus report. Input: {document: "
        "Markdown or plain text}.",
    ),
    Entry(
        "group_chat",
        "chat",
        "Agents share one conversation; a strategy picks each speaker until a condition ends it.",
        factory="debategraph.graphs.group_chat:build_group_chat",
        state="debategraph.state.group_chat",
        cli="debategraph.cli.patterns.group_chat:PATTERN",
        studio={"until": [r"regex:\bAPPROVED\b@Reviewer"], "max_rounds": 10, "max_in_a_row": 2},
        renamed={"max_turns": "max_rounds", "first": "first_speaker"},
        input_check="debategraph.nodes.group_chat.setup:check_input",
        description="A group chat: a Writer and a Reviewer share one conversation, taking "
        "turns until the Reviewer says APPROVED (at most 10 turns, no one twice in a row). "
        "Input: {task}; later invocations may pass {message}, {speaker} (one turn of that "
        "agent) or {reset: true} (go on after it finished).",
    ),
    Entry(
        "meeting",
        "meeting",
        "A staged meeting (presenter, discussion, summary) with a round controller and a decision.",
        factory="debategraph.graphs.meeting:build_meeting",
        state="debategraph.state.meeting",
        cli="debategraph.cli.patterns.meeting:PATTERN",
        input_check="debategraph.nodes.meeting.setup:check_input",
        description="A staged meeting: a Presenter lays out the topic, an Advocate and a "
        "Skeptic discuss it, a Summarizer sums up; after each round a typed controller decides "
        "whether the stage gets another round, and a chair gives a typed final decision "
        "(decision, rationale, dissent, next steps). Input: {topic}.",
    ),
)

_registered: dict[str, Entry] = {}


def register(entry: Entry) -> None:
    """Add a pattern at run time (a plugin, or a test's own pattern).

    Args:
        entry: Its registry line.

    Raises:
        ValueError: If its name or command is taken by another pattern.
    """
    for known in entries():
        if known.name == entry.name and known.name in _registered:
            continue  # registering the same pattern again replaces it
        if {entry.name, entry.command} & {known.name, known.command}:
            raise ValueError(
                f"pattern {entry.name!r} / command {entry.command!r} is taken by {known.name!r}"
            )
    _registered[entry.name] = entry


def unregister(name: str) -> None:
    """Remove a pattern added with :func:`register` (no-op if absent).

    Args:
        name: The pattern's name.
    """
    _registered.pop(name, None)


def _plugins() -> list[Entry]:
    out = []
    for target in filter(None, (t.strip() for t in os.environ.get(PLUGINS_ENV, "").split(","))):
        try:
            entry = load(target)
        except (ImportError, AttributeError, ValueError) as exc:
            raise UsageError(f"{PLUGINS_ENV} entry {target!r} cannot be loaded: {exc}") from exc
        if not isinstance(entry, Entry):
            raise UsageError(
                f"{PLUGINS_ENV} entry {target!r} is a {type(entry).__name__}, "
                "not a debategraph.registry.Entry"
            )
        out.append(entry)
    return out


def entries() -> list[Entry]:
    """Every pattern this process knows: built in, registered, then from the environment.

    Returns:
        The registry lines.
    """
    return [*BUILTIN, *_registered.values(), *_plugins()]


def names() -> list[str]:
    """The name of every known pattern.

    Returns:
        The names.
    """
    return [entry.name for entry in entries()]


def entry(name: str) -> Entry:
    """The registry line of the pattern called ``name``.

    Args:
        name: A pattern name, e.g. from a thread's metadata.

    Returns:
        Its line.

    Raises:
        UsageError: If this version does not know it.
    """
    for known in entries():
        if known.name == name:
            return known
    raise UsageError(f"unknown pattern {name!r}: this version runs {', '.join(names())}")


def record_types() -> tuple[type[Any], ...]:
    """Every record type some known pattern keeps in state: the checkpoint allowlist.

    A type missing here comes back from a checkpoint as a plain dict.

    Returns:
        The common records, then each pattern's own.
    """
    common = tuple(importlib.import_module(COMMON_RECORDS).RECORD_TYPES)
    return common + tuple(t for e in entries() for t in e.record_types() if t not in common)


def renamed(name: str) -> Mapping[str, str]:
    """The settings of pattern ``name`` renamed since threads were first saved.

    Reads the built-in and registered lines first, so a factory of this package works
    whatever ``DEBATEGRAPH_PATTERNS`` holds.

    Args:
        name: The pattern's name.

    Returns:
        ``{old: new}`` (empty for an unknown pattern).
    """
    for known in (*BUILTIN, *_registered.values()):
        if known.name == name:
            return known.renamed
    return next((e.renamed for e in _plugins() if e.name == name), {})


def current_settings(name: str, settings: Values) -> dict[str, Any]:
    """A saved thread's settings under today's names (see :attr:`Entry.renamed`).

    Args:
        name: The thread's pattern (an unknown one's settings come back as they are).
        settings: The settings as stored.

    Returns:
        The settings, renamed keys under their new names.
    """
    new = renamed(name)
    return {new.get(key, key): value for key, value in settings.items()}


def factories() -> dict[str, str]:
    """The built-in factories' names and where they live (``import debategraph``'s).

    Returns:
        ``{"build_debate": "debategraph.graphs.debate", ...}``.
    """
    out = {}
    for known in BUILTIN:
        module, _, attribute = known.factory.partition(":")
        out[attribute] = module
    return out


#: Where ``langgraph.json`` points LangGraph Studio and the server for each graph.
STUDIO_MODULE = "./src/debategraph/graphs/studio.py"


def langgraph_json() -> dict[str, Any]:
    """What ``langgraph.json`` must hold: every built-in pattern's Studio graph.

    ``make langgraph.json`` writes it; a test checks that the committed file is this.

    Returns:
        The configuration.
    """
    graphs = {
        e.name: {"path": f"{STUDIO_MODULE}:{e.name}", "description": e.description} for e in BUILTIN
    }
    return {
        "$schema": "https://langgra.ph/schema.json",
        "dependencies": ["."],
        "graphs": graphs,
        "env": {},
    }


#: The FastAPI app an Agent Protocol server (Aegra) mounts for debategraph's graphs.
SERVE_APP = "debategraph.serve.app:app"


def aegra_json(module_path: str = STUDIO_MODULE) -> dict[str, Any]:
    """What ``aegra.json`` must hold: the graphs of :func:`langgraph_json` for Aegra.

    Aegra (``aegra-api`` 0.6.0) reads a graph as a ``"path:variable"`` string only (it
    refuses ``langgraph.json``'s ``{"path", "description"}`` objects), and mounts
    :data:`SERVE_APP`, which checks the config and each run's input.
    ``make aegra.json`` writes it; a test checks that the committed file is this, and
    ``debategraph serve`` writes one with the installed module's path.

    Args:
        module_path: The file that compiles the graphs (``graphs/studio.py``).

    Returns:
        The configuration.
    """
    return {
        "graphs": {e.name: f"{module_path}:{e.name}" for e in BUILTIN},
        "http": {"app": SERVE_APP},
    }


# -- what a pattern declares for the CLI and the thread tools ------------------------------


@dataclass(frozen=True)
class Launch:
    """What a pattern's CLI command hands the runner.

    Attributes:
        settings: The graph factory's keyword arguments (stored with the thread).
        input: The graph's input.
        notes: Lines to show the user before the run (e.g. what a parser noticed).
    """

    settings: dict[str, Any]
    input: dict[str, Any]
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class Report:
    """A file a finished run writes beside its result (the CLI's ``--report``).

    Attributes:
        default_name: File name when ``--report`` is not given; ``{thread_id}`` is filled in.
        render: ``render(values, title)``: the file's text, or ``None`` if the run has
            nothing to report.
    """

    default_name: str
    render: Callable[[Values, str], str | None]


def _nothing(node: str, update: Values) -> list[str]:
    return []


def _max_rounds(settings: Values) -> int | None:
    value = settings.get("max_rounds")
    return value if isinstance(value, int) and not isinstance(value, bool) else None


@dataclass(frozen=True)
class Pattern:
    """One pattern as the CLI and the thread tools see it (its ``cli/patterns`` module).

    Everything ``threads``, ``show``, ``resume``, ``interject``, ``fork``, ``export`` and
    the archive need from a pattern is asked of this declaration; none of them names a
    pattern's nodes or state keys. The graph itself comes from the registry line.

    Attributes:
        name: The pattern's name (its registry line's).
        command: The CLI command's own options, as a typer-annotated function returning
            a :class:`Launch`; the shared options (model, ``--db``, ``--thread``,
            ``--pause-after-round``...) are added by the CLI.
        title: What names a thread (its question, topic, paper title), from its values.
        summary: The pattern's own result fields (``--json``), from a thread's values.
        describe: A one-line description of a run's settings.
        agents_per_round: How many agents one round (or phase) runs: the default
            maximum concurrency, and the embedded model's parallel slots.
        headline: The result as lines of Rich markup, from :attr:`summary`'s fields.
        progress: Lines of Rich markup to show for one node's update, besides the
            transcript records it wrote (which the CLI prints itself).
        streams: Whether a node's model tokens are prose worth streaming (``None``: no
            node's are).
        streamed_stage: Turns of this stage, written by a node that :attr:`streams`,
            were streamed token by token, so the CLI does not print them again
            (``None``: every agent turn such a node writes was streamed).
        report: The file a finished run writes, if any.
        result_markdown: The result section of ``export --format md`` (default: the
            summary's fields).
        boundary_nodes: Nodes a thread waits at between rounds (interjections go
            there); empty: the shared round loop's (``open_round``, ``human``).
        round_word: What the pattern calls a round (``turn``), in progress lines.
        last_round: The most rounds a run's settings allow (default: its
            ``max_rounds``; ``None``: no cap known): once that round has opened, no
            round reads an interjection.
    """

    name: str
    command: Callable[..., Launch]
    title: Callable[[Values], str]
    summary: Callable[[Values], dict[str, Any]]
    describe: Callable[[Values], str]
    agents_per_round: Callable[[Values], int]
    headline: Callable[[Values], list[str]]
    progress: Callable[[str, Values], list[str]] = _nothing
    streams: Callable[[str], bool] | None = None
    streamed_stage: str | None = None
    report: Report | None = None
    result_markdown: Callable[[Values], list[str]] | None = None
    boundary_nodes: frozenset[str] = field(default_factory=lambda: frozenset())
    round_word: str = "round"
    last_round: Callable[[Values], int | None] = _max_rounds
