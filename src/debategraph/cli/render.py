"""What the CLI prints: a run's progress, transcript lines and results, asked of the pattern.

Nothing here knows a pattern's nodes or state keys: rounds are announced when the
pattern's round-opening node writes ``round``, transcript records are printed as they
land, and the pattern adds its own lines
(:attr:`~debategraph.cli.patterns.declaration.Pattern.progress`,
:attr:`~debategraph.cli.patterns.declaration.Pattern.headline`).
"""

from __future__ import annotations

import contextlib
import json
import sys
import threading
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.markup import escape

from debategraph.cli.patterns.declaration import Pattern
from debategraph.cli.patterns.shared import short
from debategraph.datafiles import write_whole
from debategraph.described import Described
from debategraph.errors import UsageError
from debategraph.models.money import spend_words
from debategraph.models.spec import LOCAL, ModelSpec
from debategraph.words import plural

if TYPE_CHECKING:
    from debategraph.state.records import Turn
    from debategraph.strategies.answers import AnswerKind

err = Console(stderr=True, highlight=False, soft_wrap=True)
out = Console(highlight=False, soft_wrap=True)


def boundary_nodes(pattern: Described) -> frozenset[str]:
    """Nodes a thread of ``pattern`` waits at between rounds.

    Args:
        pattern: What the pattern is.

    Returns:
        Its own, or the shared round loop's.
    """
    from debategraph.nodes.rounds import BOUNDARY_NODES

    return pattern.boundary_nodes or BOUNDARY_NODES


def fail(message: str, code: int) -> None:
    """Print one error line and exit.

    Args:
        message: The error (flattened to one line).
        code: The exit status.
    """
    err.print(f"debategraph: error: {escape(' '.join(message.split()))}")
    sys.exit(code)


def emit_json(value: Any) -> None:
    """Write one JSON document on one line to stdout (machine-readable output).

    Args:
        value: The document.
    """
    sys.stdout.write(json.dumps(value) + "\n")
    sys.stdout.flush()


def write_output(path: Path, text: str, option: str = "--output") -> None:
    """Write a command's output file whole, a failure one line naming the file and why.

    Written beside it and moved into place: a browser reloading a followed page, or an
    interrupted write, never finds half a file.

    Args:
        path: The file (``export --output``, ``view --output``).
        text: Its text.
        option: The option that named it, for the message.

    Raises:
        UsageError: If the file cannot be written.
    """
    try:
        write_whole(path, text)
    except OSError as exc:
        raise UsageError(f"{option} {path}: cannot write: {exc.strerror or exc}") from exc


def model_label(spec: ModelSpec) -> str:
    """The model as the run's first line names it.

    Args:
        spec: The model spec.

    Returns:
        E.g. ``SmolLM2-135M (embedded)`` or ``gpt-4o @ https://...``.
    """
    if spec.model == LOCAL:
        return "SmolLM2-135M (embedded)"
    if spec.is_local:
        return f"{Path(spec.model.partition(':')[2]).name} (embedded)"
    return f"{spec.model} @ {spec.base_url or 'api.openai.com'}"


def models_label(spec: ModelSpec, settings: Mapping[str, Any]) -> str:
    """Every model a run calls, as its first line names them.

    Args:
        spec: The run's model.
        settings: The run's settings (agents with models of their own).

    Returns:
        ``model X``, or ``models X; alice: Y; bob, judge: own agent`` when agents call
        elsewhere; where a key is withheld from an endpoint, which and the option that
        sends it (:meth:`ModelSpec.withheld
        <debategraph.models.spec.ModelSpec.withheld>`), in brackets.
    """
    from debategraph.runs.agents import models_of_agents

    others: dict[str, list[str]] = {}
    owned = models_of_agents(settings, spec)
    for name, own in owned:
        label = "own agent" if own is None else model_label(own)
        others.setdefault(label, []).append(name)
    notes = [n for n in (spec.withheld(), *(o.withheld() for _, o in owned if o)) if n]
    said = f" ({'; '.join(dict.fromkeys(notes))})" if notes else ""
    if not others:
        return f"model {model_label(spec)}{said}"
    parts = [f"{', '.join(names)}: {label}" for label, names in others.items()]
    return f"models {model_label(spec)}; {'; '.join(parts)}{said}"


def turn_line(turn: Turn, *, with_round: bool = True) -> str:
    """One transcript record as a line of Rich markup (the live view of a run).

    Args:
        turn: The record.
        with_round: Prefix the round.

    Returns:
        The line.
    """
    head = f"[dim]r{turn.round}[/dim] " if with_round else ""
    if turn.role == "user":
        return f"{head}{_user_head(turn)}: {escape(short(turn.content, 200))}"
    if turn.role == "tool":
        from debategraph.state.records import tool_call_text  # pydantic: not for --help

        return f"{head}{turn.agent:<10} [dim]tool[/dim] {escape(short(tool_call_text(turn), 300))}"
    cost = _cost(turn)
    if turn.answer is not None:
        return f"{head}{turn.agent:<10} → [bold]{escape(turn.answer)}[/bold]  {cost}"
    if turn.reason and not turn.content:
        return f"{head}{turn.agent:<10} abstains: {escape(turn.reason)}  {cost}"
    return f"{head}{turn.agent:<10} ({turn.stage}): {escape(short(turn.content, 300))}  {cost}"


def turn_block(
    turn: Turn, choices: Sequence[str] | None = None, kind: AnswerKind = "number"
) -> list[str]:
    """One transcript record as ``show`` prints it: a head line, then its whole text once.

    A record with an answer labels both fields: ``answer 48.5`` is the typed answer the
    run counted, ``reasoning:`` the text the agent wrote. Where the reasoning states
    another answer (read with :func:`~debategraph.strategies.answers.extract_answer`),
    the head says so (``answer 48.5 (reasoning says 48)``); where the record notes how
    its answer came about (a repaired reply...), the head says that too.

    Args:
        turn: The record.
        choices: The thread's answer choices, if its question has them.
        kind: How its question is answered where it has no choices.

    Returns:
        Lines of Rich markup.
    """
    head = f"[dim]r{turn.round}[/dim] "
    if turn.role == "user":
        return [f"{head}{_user_head(turn)}", *_body(turn.content)]
    if turn.role == "tool":
        from debategraph.state.records import tool_call_text  # pydantic: not for --help

        return [f"{head}[bold]{escape(turn.agent)}[/bold] (tool) {escape(tool_call_text(turn))}"]
    head += f"[bold]{escape(turn.agent)}[/bold] ({escape(turn.stage)})"
    if turn.answer is None:
        if turn.reason:
            head += f" abstains: {escape(turn.reason)}"
        return [f"{head}  {_cost(turn)}", *_body(turn.content)]
    head += f" answer [bold]{escape(turn.answer)}[/bold]"
    stated = _stated_answer(turn, choices, kind)
    if stated is not None:
        head += f" (reasoning says {escape(stated)})"
    if turn.confidence is not None:
        head += f" · confidence {turn.confidence:.2f}"
    if turn.reason:
        head += f" · {escape(turn.reason)}"
    return [f"{head}  {_cost(turn)}", *_body(turn.content, label="reasoning: ")]


def _user_head(turn: Turn) -> str:
    from debategraph.state.records import INTERJECT_STAGE  # pydantic: not for --help

    what = "interjection" if turn.stage == INTERJECT_STAGE else turn.stage
    return f"[bold]user[/bold] ({what})"


def _cost(turn: Turn) -> str:
    model = f" · {escape(turn.model)}" if turn.model else ""
    return f"[dim]{turn.usage.latency_s:.1f}s {turn.usage.total_tokens} tok{model}[/dim]"


def _body(text: str, *, label: str = "") -> list[str]:
    """A record's whole text, indented (nothing for an empty text)."""
    lines = text.strip().splitlines()
    if not lines:
        return []
    return [f"    {label}{escape(lines[0])}", *(f"    {escape(line)}" for line in lines[1:])]


def _stated_answer(turn: Turn, choices: Sequence[str] | None, kind: AnswerKind) -> str | None:
    """The answer a record's reasoning states, where it is not the record's answer."""
    from debategraph.strategies.answers import extract_answer

    stated = extract_answer(turn.content, choices=choices or None, kind=kind)
    if stated is None or turn.answer is None:
        return None
    own = extract_answer(turn.answer, loose=True, choices=choices or None, kind=kind)
    own = own or turn.answer
    return None if stated == own else stated


#: Seconds between two looks at whether a run's calls wait on a rate limit.
WAIT_LOOK_S = 0.5


class Progress:
    """Live view of a run on stderr: rounds, each record as it lands, the pattern's lines.

    For patterns whose agents write prose, their tokens as they are generated. Inside
    :meth:`watching_waits`, a line whenever the run's calls start waiting on an endpoint's
    rate limit, saying for how long (a run waiting streams nothing else).
    """

    def __init__(self, pattern: Pattern, *, stream_text: bool) -> None:
        self.pattern = pattern
        self.stream_text = stream_text and pattern.streams is not None
        self.speaking: str | None = None
        self.boundary = boundary_nodes(pattern.described)
        self.spoke: set[str] = set()  # nodes whose tokens were printed since their update

    @contextlib.contextmanager
    def watching_waits(self) -> Iterator[None]:
        """Say, once per hold, when the run's calls wait on a rate limit and how long.

        Yields:
            Nothing: a thread looks every :data:`WAIT_LOOK_S` seconds while inside.
        """
        from debategraph.models.pacing import waiting_note

        stopped = threading.Event()

        def look() -> None:
            said = ""
            while not stopped.wait(WAIT_LOOK_S):
                note = waiting_note()
                if note and not said and self.speaking is None:
                    err.print(f"  [dim]{escape(note)}[/dim]")
                said = note

        watcher = threading.Thread(target=look, name="rate-limit-note", daemon=True)
        watcher.start()
        try:
            yield
        finally:
            stopped.set()
            watcher.join()

    def show(self, mode: str, chunk: Any) -> None:
        """Print one streamed chunk.

        Args:
            mode: ``updates`` or ``messages``.
            chunk: What LangGraph streamed.
        """
        if mode == "messages":
            self._token(*chunk)
        elif isinstance(chunk, Mapping):
            for node, update in chunk.items():
                if isinstance(update, dict) or update is None:  # a node that wrote nothing
                    self._update(node, update or {})

    def _token(self, message: Any, metadata: Mapping[str, Any]) -> None:
        # A token of a graph inside a node (an agent of the user's) belongs to that node.
        namespace = str(metadata.get("langgraph_checkpoint_ns", ""))
        node = namespace.split("|")[0].split(":")[0] or str(metadata.get("langgraph_node", ""))
        text = getattr(message, "content", "")
        speaks = self.pattern.streams
        if not isinstance(text, str) or not text or speaks is None or not speaks(node):
            return  # structured calls print their result instead
        if self.speaking != node:
            self._end_speech()
            err.print(f"  [bold]{escape(node)}[/bold]: ", end="")
            self.speaking = node
            self.spoke.add(node)
        err.print(escape(text), end="")

    def _streamed(self, node: str, turn: Turn) -> bool:
        """Whether ``turn`` was printed token by token (else its update prints it)."""
        return self.stream_text and node in self.spoke and _streamed_turn(self.pattern, node, turn)

    def _end_speech(self) -> None:
        if self.speaking is not None:
            err.print()
            self.speaking = None

    def _update(self, node: str, update: Mapping[str, Any]) -> None:
        self._end_speech()
        if node in self.boundary and "round" in update:
            err.print(f"[bold]{self.pattern.described.round_word} {update['round']}[/bold]")
        lines = self.pattern.progress(node, update)
        for line in lines:
            err.print(line)
        if lines:
            return  # the pattern showed this update its own way
        for turn in update.get("transcript") or ():
            if self._streamed(node, turn):
                continue  # already streamed token by token
            err.print("  " + turn_line(turn, with_round=False))
        self.spoke.discard(node)


def _streamed_turn(pattern: Pattern, node: str, turn: Turn) -> bool:
    """Whether ``turn``, written by ``node``, was streamed token by token."""
    speaks = pattern.streams
    if speaks is None or turn.role != "agent" or not speaks(node):
        return False
    return pattern.streamed_stage is None or turn.stage == pattern.streamed_stage


def _from_cache(usage: Mapping[str, Any]) -> str:
    """`` (N from the cache)`` where the response cache answered any call, else ``""``."""
    hits = int(usage.get("cache_hits") or 0)
    return f" ({hits} from the cache)" if hits else ""


def print_result(
    pattern: Pattern, result: Mapping[str, Any], json_output: bool, *, db: str | None = None
) -> None:
    """Print a run's result: the pattern's headline with the common tail, or JSON.

    Args:
        pattern: The thread's pattern.
        result: What :func:`~debategraph.runs.results.result_of` made.
        json_output: Print one JSON object instead.
        db: The thread's ``--db``: given, a dim line on stderr after the result says how to
            read its transcript (``show``) and export it (not with ``json_output``).
    """
    if json_output:
        emit_json(result)
        return
    usage = result["usage"]
    spend = spend_words(usage, result.get("usage_by_model") or {})
    tail = (
        f"ended: {result['termination_reason']} · {plural(usage['calls'], 'call')}"
        f"{_from_cache(usage)}, "
        f"{usage['prompt_tokens'] + usage['completion_tokens']:,} tokens · "
        + (f"{escape(spend)} · " if spend else "")
        + f"{result['wall_s']:.1f}s wall · thread {result['thread_id']}"
    )
    lines = pattern.headline(result) or [""]
    out.print(f"{lines[0]} · {tail}" if lines[0] else tail)
    for line in lines[1:]:
        out.print(line)
    if result.get("report_file"):
        out.print(f"  report written to {escape(result['report_file'])}")
    if db is not None:
        thread = f"{result['thread_id']} --db {db}"
        err.print(
            f"[dim]transcript: debategraph show {escape(thread)} · "
            f"export: debategraph export {escape(thread)} --format md[/dim]"
        )
