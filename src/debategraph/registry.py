"""The registry of patterns: the one list, one line per pattern, loaded on first use.

Each line (:class:`Entry`) declares a pattern once by naming where its parts live: the
graph factory (``graphs/<p>.py``), the state module (whose ``RECORD_TYPES`` checkpoints
may hold), what the pattern is (its :class:`~debategraph.described.Described` record,
``DESCRIBED`` in ``nodes/<p>/described.py``: titles, result fields, rounds; read with
:func:`described`), the CLI declaration (a ``Pattern`` of
:mod:`debategraph.cli.patterns.declaration` in ``cli/patterns/<p>.py``: the command's
options and terminal rendering), each named as a ``module:attribute`` string, and the
graph LangGraph Studio serves (its settings and description). Everything that lists
patterns reads these lines: the CLI's commands, the thread tools, the runs and the eval,
``import debategraph``'s factories, ``graphs/studio.py``, the checkpoint serializer's
allowlist, and the test that checks ``langgraph.json``. A new built-in pattern is its
own modules plus one line in :data:`BUILTIN`; a pattern from elsewhere joins with
:func:`register` (in-process) or the ``DEBATEGRAPH_PATTERNS`` environment variable
(``module:ENTRY`` items, comma-separated).

This module is the bottom layer: it names the other layers' modules as strings and
imports them only when asked, so it loads neither LangGraph, typer nor rich.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from debategraph.described import Described
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


class Named(Mapping[str, Any]):
    """Settings a line names where they are written (a mapping), read on first use.

    A pattern's defaults are written once, in its setup module; a line that serves them
    (Studio's settings) names that mapping as a ``module:attribute`` string, as it names
    the factory, so declaring the pattern imports nothing.

    Args:
        target: ``module:attribute`` of the mapping.
        own: Settings of the line's own, over the named ones.
    """

    def __init__(self, target: str, **own: Any) -> None:
        self.target = target
        self.own = own
        self._values: dict[str, Any] | None = None

    def _read(self) -> dict[str, Any]:
        if self._values is None:
            self._values = {**load(self.target), **self.own}
        return self._values

    def __getitem__(self, key: str) -> Any:
        return self._read()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._read())

    def __len__(self) -> int:
        return len(self._read())

    def __repr__(self) -> str:
        own = "".join(f", {k}={v!r}" for k, v in self.own.items())
        return f"Named({self.target!r}{own})"


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
        described: ``module:attribute`` of what the pattern is (a
            :class:`~debategraph.described.Described`: ``nodes/<p>/described.py``'s
            ``DESCRIBED``), which every reader of its threads asks, below the CLI.
        cli: ``module:attribute`` of its CLI declaration (a
            :class:`debategraph.cli.patterns.declaration.Pattern`: the command's options
            and terminal rendering).
        studio: The factory's settings for the graph Studio serves (a mapping, or
            :class:`Named` where they are the pattern's defaults, written in its setup).
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
    described: str
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

    def load_described(self) -> Described:
        """What the pattern is (imported now; it loads no CLI).

        Returns:
            The pattern's :class:`~debategraph.described.Described`.

        Raises:
            UsageError: If what the line names is not one.
        """
        record = load(self.described)
        if not isinstance(record, Described):
            raise UsageError(
                f"pattern {self.name!r}: {self.described!r} is a {type(record).__name__}, "
                "not a debategraph.described.Described"
            )
        return record

    def declaration(self) -> Any:
        """The CLI declaration (imported now; it loads typer and rich).

        Returns:
            The pattern's :class:`debategraph.cli.patterns.declaration.Pattern` (typed
            there: :func:`debategraph.cli.patterns.get_pattern`; this layer imports no CLI).
        """
        return load(self.cli)


BUILTIN: tuple[Entry, ...] = (
    Entry(
        "solver_debate",
        "solve",
        "Solvers debate a math question on a communication topology, then decide.",
        factory="debategraph.graphs.solver_debate:build_solver_debate",
        state="debategraph.state.solver_debate",
        described="debategraph.nodes.solver_debate.described:DESCRIBED",
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
        described="debategraph.nodes.debate.described:DESCRIBED",
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
        described="debategraph.nodes.discussion.described:DESCRIBED",
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
        described="debategraph.nodes.group_chat.described:DESCRIBED",
        cli="debategraph.cli.patterns.group_chat:PATTERN",
        studio=Named("debategraph.nodes.group_chat.setup:DEFAULT_CHAT", max_in_a_row=2),
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
        described="debategraph.nodes.meeting.described:DESCRIBED",
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


def described(name: str) -> Described:
    """What the pattern called ``name`` is: its titles, result fields and rounds.

    Args:
        name: A pattern name, e.g. from a thread's metadata.

    Returns:
        Its :class:`~debategraph.described.Described` (imported on first use).

    Raises:
        UsageError: If this version does not know it.
    """
    return entry(name).load_described()


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
