"""Archive finished debates into plain SQLite tables, and render them as Markdown or JSON.

Checkpoints hold pickled/msgpacked channel values that only LangGraph can read. The archive
writes the same debate into three ordinary tables (``debates``, ``messages``, ``usage``) with
``sqlite-utils`` so that a debate can be queried with SQL or browsed with Datasette. The
archive may be the checkpoint file itself: only these three tables are ever touched.
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import sqlite_utils
from pydantic import BaseModel

from debategraph.checkpoints.savers import BUSY_TIMEOUT_MS, check_sqlite_file, sqlite_path
from debategraph.errors import UsageError
from debategraph.state.records import Turn, Usage

#: State keys that may hold a debate's title, in order of preference.
TITLE_KEYS: tuple[str, ...] = ("question", "topic", "title")
#: State keys that get their own column in ``debates`` (the rest lands in ``result``).
_COLUMN_KEYS = frozenset(
    {"transcript", "termination_reason", "answer", "agreement", "votes", "tie_break", "usage"}
)

DEBATES = "debates"
MESSAGES = "messages"
USAGE = "usage"

#: Column types of each archive table (also used to add columns to an older archive).
_DEBATES_COLUMNS: dict[str, type] = {
    "thread_id": str,
    "pattern": str,
    "title": str,
    "status": str,
    "termination_reason": str,
    "answer": str,
    "agreement": float,
    "votes": str,
    "tie_break": str,
    "rounds": int,
    "prompt_tokens": int,
    "completion_tokens": int,
    "calls": int,
    "latency_s": float,
    "started_at": str,
    "finished_at": str,
    "archived_at": str,
    "result": str,
}
_MESSAGES_COLUMNS: dict[str, type] = {
    "thread_id": str,
    "id": str,
    "seq": int,
    "agent": str,
    "role": str,
    "stage": str,
    "round": int,
    "content": str,
    "answer": str,
    "confidence": float,
    "reason": str,
    "reply_to": str,
    "recipients": str,
    "timestamp": str,
    "prompt_tokens": int,
    "completion_tokens": int,
    "calls": int,
    "latency_s": float,
}
_USAGE_COLUMNS: dict[str, type] = {
    "thread_id": str,
    "scope": str,
    "key": str,
    "prompt_tokens": int,
    "completion_tokens": int,
    "calls": int,
    "latency_s": float,
}
_DEBATES_PK = ("thread_id",)
_MESSAGES_PK = ("thread_id", "id")
_USAGE_PK = ("thread_id", "scope", "key")


@dataclass(frozen=True)
class ArchiveSummary:
    """What :func:`archive_debate` wrote.

    Attributes:
        path: The archive file.
        thread_id: The archived thread.
        messages: How many transcript records were written.
    """

    path: Path
    thread_id: str
    messages: int


def jsonable(value: Any) -> Any:
    """Convert a state value to plain JSON-able data.

    Args:
        value: A state value: pydantic models, mappings, lists and tuples are converted
            recursively; anything else is returned as is.

    Returns:
        ``model_dump(mode="json")`` for models, a ``dict`` with ``str`` keys for mappings,
        a ``list`` for lists and tuples.
    """
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if isinstance(value, Mapping):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [jsonable(v) for v in value]
    return value


def export_json(
    thread_id: str, values: Mapping[str, Any], *, status: str | None = None
) -> dict[str, Any]:
    """A thread's state as one JSON-able document.

    Args:
        thread_id: The thread.
        values: The thread's state values.
        status: The thread's status (``finished``...), if known.

    Returns:
        ``thread_id``, ``status`` and every state value, models dumped in JSON mode (the
        transcript becomes a list of dicts).
    """
    out: dict[str, Any] = {"thread_id": thread_id, "status": status}
    out.update(jsonable(values))
    return out


def archive_debate(
    path: str | os.PathLike[str],
    *,
    thread_id: str,
    pattern: str,
    values: Mapping[str, Any],
    status: str,
) -> ArchiveSummary:
    """Write a debate into the ``debates``, ``messages`` and ``usage`` tables of a SQLite file.

    Archiving a thread again replaces its rows, in one transaction: readers never see a
    partial archive and a failure leaves the previous rows as they were. Other tables in
    the file (LangGraph's ``checkpoints`` and ``writes``) are left alone, and several
    processes may archive into one file at once.

    Args:
        path: The archive file (``sqlite:///`` prefix allowed); created if missing.
        thread_id: The thread to archive.
        pattern: Which graph produced it (``solver_debate``...).
        values: The thread's state values.
        status: The thread's status (``finished``, ``failed``...).

    Returns:
        What was written.

    Raises:
        UsageError: If the file or its folder is missing, read-only or not SQLite, or the
            file holds a table of the same name with another primary key.
    """
    file = sqlite_path(path)
    check_sqlite_file(file, label="archive file")
    turns = _turns(values)
    debate = _debate_row(thread_id, pattern, values, status, turns)
    messages = [_message_row(thread_id, seq, turn) for seq, turn in enumerate(turns)]
    usage = _usage_rows(thread_id, values, turns)
    conn = _connect(file)
    try:
        db = sqlite_utils.Database(conn)
        conn.execute("BEGIN IMMEDIATE")  # take the write lock now: no upgrade deadlock
        try:
            _ensure_schema(db, file)
            for table in (MESSAGES, USAGE):
                conn.execute(f"DELETE FROM [{table}] WHERE thread_id = ?", (thread_id,))
            db.table(DEBATES).upsert(debate, pk=_DEBATES_PK)
            db.table(MESSAGES).insert_all(messages, pk=_MESSAGES_PK, replace=True)
            db.table(USAGE).insert_all(usage, pk=_USAGE_PK, replace=True)
        except BaseException:
            conn.rollback()
            raise
        conn.commit()
    except sqlite3.OperationalError as exc:
        raise _write_error(file, exc) from exc
    except sqlite3.DatabaseError as exc:
        raise UsageError(f"archive file {file} cannot be written as SQLite: {_line(exc)}") from exc
    finally:
        conn.close()
    return ArchiveSummary(path=file, thread_id=thread_id, messages=len(messages))


def render_markdown(thread_id: str, values: Mapping[str, Any], *, status: str | None = None) -> str:
    """A readable Markdown transcript of a thread.

    Args:
        thread_id: The thread.
        values: The thread's state values (any graph's: only the common fields are used).
        status: The thread's status, if known.

    Returns:
        The document: title, a metadata line, one section per round and the result.
    """
    turns = _turns(values)
    title = _title(values)[1] or f"Debate {thread_id}"
    lines = [f"# {_inline(title)}", "", _metadata_line(thread_id, values, status, turns), ""]
    by_round: dict[int, list[Turn]] = defaultdict(list)
    for turn in turns:
        by_round[turn.round].append(turn)
    for rnd in sorted(by_round):
        lines += [f"## Round {rnd}" if rnd else "## Before round 1", ""]
        for turn in by_round[rnd]:
            lines += [*_turn_markdown(turn), ""]
    lines += _result_markdown(values, turns)
    return "\n".join(lines).rstrip() + "\n"


# -- archive: checks and connection -----------------------------------------------------


def _connect(path: Path) -> sqlite3.Connection:
    """Open the archive with a busy timeout and WAL, like the checkpoint savers do."""
    try:
        conn = sqlite3.connect(path, timeout=BUSY_TIMEOUT_MS / 1000)
    except sqlite3.Error as exc:
        raise UsageError(f"archive file {path} cannot be opened: {_line(exc)}") from exc
    try:
        conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
        conn.execute("PRAGMA journal_mode=WAL")
    except sqlite3.OperationalError as exc:
        conn.close()
        raise _write_error(path, exc) from exc
    except sqlite3.DatabaseError as exc:
        conn.close()
        raise UsageError(f"archive file {path} cannot be opened as SQLite: {_line(exc)}") from exc
    return conn


def _write_error(path: Path, exc: sqlite3.OperationalError) -> UsageError:
    """The one-line error for a failed write."""
    text = _line(exc)
    if "readonly" in text or "read-only" in text:
        return UsageError(f"archive file {path} is read-only: {text}")
    return UsageError(f"archive file {path} could not be written: {text}")


def _line(exc: BaseException) -> str:
    return " ".join(str(exc).split())


def _ensure_schema(db: sqlite_utils.Database, path: Path) -> None:
    """Create the archive tables, or add the columns an older archive lacks."""
    specs = (
        (DEBATES, _DEBATES_COLUMNS, _DEBATES_PK, None),
        (MESSAGES, _MESSAGES_COLUMNS, _MESSAGES_PK, [("thread_id", DEBATES, "thread_id")]),
        (USAGE, _USAGE_COLUMNS, _USAGE_PK, [("thread_id", DEBATES, "thread_id")]),
    )
    for name, columns, pk, fks in specs:
        table = db.table(name)
        if not table.exists():
            table.create(columns, pk=pk, not_null=pk, foreign_keys=fks)
            continue
        if tuple(table.pks) != pk:
            raise UsageError(
                f"archive file {path} has a table {name!r} that is not a debategraph archive "
                f"table (primary key {', '.join(table.pks)}, expected {', '.join(pk)})"
            )
        have = {c.name for c in table.columns}
        for column, kind in columns.items():
            if column not in have:
                table.add_column(column, kind)
    db.table(MESSAGES).create_index(["thread_id", "seq"], unique=True, if_not_exists=True)
    db.table(USAGE).create_index(["thread_id", "scope"], if_not_exists=True)


# -- archive: rows --------------------------------------------------------------------


def _turns(values: Mapping[str, Any]) -> list[Turn]:
    """The transcript as :class:`Turn` objects (dicts, as JSON clients write them, accepted)."""
    raw: Iterable[Any] = values.get("transcript") or ()
    return [t if isinstance(t, Turn) else Turn.model_validate(t) for t in raw]


def _total_usage(values: Mapping[str, Any], turns: Sequence[Turn]) -> Usage:
    """The state's ``usage`` if it has one, else the sum over the transcript."""
    raw = values.get("usage")
    if isinstance(raw, Usage):
        return raw
    if isinstance(raw, Mapping):
        return Usage.model_validate(raw)
    return Usage.total(t.usage for t in turns)


def _title(values: Mapping[str, Any]) -> tuple[str | None, str | None]:
    """The key and value of the first title-like state value present."""
    for key in TITLE_KEYS:
        if values.get(key) is not None:
            return key, str(values[key])
    return None, None


def _iso(timestamp: float) -> str:
    return datetime.fromtimestamp(timestamp, tz=UTC).isoformat()


def _json_text(value: Any) -> str:
    return json.dumps(jsonable(value), sort_keys=True, default=str)


def _debate_row(
    thread_id: str,
    pattern: str,
    values: Mapping[str, Any],
    status: str,
    turns: Sequence[Turn],
) -> dict[str, Any]:
    title_key, title = _title(values)
    usage = _total_usage(values, turns)
    rounds = values.get("rounds")
    if isinstance(rounds, Sequence):
        n_rounds = len(rounds)
    else:
        n_rounds = max((t.round for t in turns), default=0)
    answer = values.get("answer")
    agreement = values.get("agreement")
    votes = values.get("votes")
    stamps = [t.timestamp for t in turns]
    rest = {k: v for k, v in values.items() if k not in _COLUMN_KEYS and k != title_key}
    return {
        "thread_id": thread_id,
        "pattern": pattern,
        "title": title,
        "status": status,
        "termination_reason": _opt_str(values.get("termination_reason")),
        "answer": _opt_str(answer),
        "agreement": float(agreement) if isinstance(agreement, int | float) else None,
        "votes": None if votes is None else _json_text(votes),
        "tie_break": _opt_str(values.get("tie_break")),
        "rounds": n_rounds,
        "prompt_tokens": usage.prompt_tokens,
        "completion_tokens": usage.completion_tokens,
        "calls": usage.calls,
        "latency_s": usage.latency_s,
        "started_at": _iso(min(stamps)) if stamps else None,
        "finished_at": _iso(max(stamps)) if stamps else None,
        "archived_at": datetime.now(UTC).isoformat(),
        "result": _json_text(rest),
    }


def _opt_str(value: Any) -> str | None:
    return None if value is None else str(value)


def _message_row(thread_id: str, seq: int, turn: Turn) -> dict[str, Any]:
    return {
        "thread_id": thread_id,
        "id": turn.id,
        "seq": seq,
        "agent": turn.agent,
        "role": turn.role,
        "stage": turn.stage,
        "round": turn.round,
        "content": turn.content,
        "answer": turn.answer,
        "confidence": turn.confidence,
        "reason": turn.reason,
        "reply_to": json.dumps(list(turn.reply_to)),
        "recipients": json.dumps(list(turn.recipients)),
        "timestamp": _iso(turn.timestamp),
        "prompt_tokens": turn.usage.prompt_tokens,
        "completion_tokens": turn.usage.completion_tokens,
        "calls": turn.usage.calls,
        "latency_s": turn.usage.latency_s,
    }


def _usage_row(thread_id: str, scope: str, key: str, usage: Usage) -> dict[str, Any]:
    return {
        "thread_id": thread_id,
        "scope": scope,
        "key": key,
        "prompt_tokens": usage.prompt_tokens,
        "completion_tokens": usage.completion_tokens,
        "calls": usage.calls,
        "latency_s": usage.latency_s,
    }


def _group_usage(turns: Iterable[Turn], key: str) -> dict[str, Usage]:
    """Sum turn usage by agent (``key="agent"``) or by round (``key="round"``), in order."""
    out: dict[str, Usage] = {}
    for turn in turns:
        name = turn.agent if key == "agent" else str(turn.round)
        out[name] = out.get(name, Usage()) + turn.usage
    return out


def _usage_rows(
    thread_id: str, values: Mapping[str, Any], turns: Sequence[Turn]
) -> list[dict[str, Any]]:
    rows = [_usage_row(thread_id, "total", "", _total_usage(values, turns))]
    for scope in ("agent", "round"):
        rows += [_usage_row(thread_id, scope, k, u) for k, u in _group_usage(turns, scope).items()]
    return rows


# -- Markdown ---------------------------------------------------------------------------


def _inline(text: str) -> str:
    """Flatten text to one line for a heading or a table cell."""
    return " ".join(text.split()).replace("|", "\\|")


def _tokens(usage: Usage) -> str:
    return (
        f"{usage.total_tokens:,} tokens ({usage.prompt_tokens:,} prompt + "
        f"{usage.completion_tokens:,} completion), {usage.calls} calls, {usage.latency_s:.1f} s"
    )


def _metadata_line(
    thread_id: str, values: Mapping[str, Any], status: str | None, turns: Sequence[Turn]
) -> str:
    parts = [f"thread `{thread_id}`"]
    if status:
        parts.append(f"status: {status}")
    if values.get("termination_reason"):
        parts.append(f"termination: {values['termination_reason']}")
    if values.get("answer") is not None:
        parts.append(f"answer: **{_inline(str(values['answer']))}**")
    votes = values.get("votes")
    if isinstance(votes, Mapping) and votes:
        parts.append("votes: " + ", ".join(f"{_inline(str(a))} {n}" for a, n in _ranked(votes)))
    agreement = values.get("agreement")
    if isinstance(agreement, int | float) and values.get("termination_reason"):
        parts.append(f"agreement: {agreement:.2f}")
    if turns or values.get("usage") is not None:
        parts.append(_tokens(_total_usage(values, turns)))
    return " · ".join(parts)


def _ranked(votes: Mapping[Any, Any]) -> list[tuple[Any, Any]]:
    """Vote counts, most votes first (ties in answer order)."""
    return sorted(votes.items(), key=lambda kv: (-_count(kv[1]), str(kv[0])))


def _count(value: Any) -> float:
    return float(value) if isinstance(value, int | float) else 0.0


def _quote(text: str) -> list[str]:
    return [f"> {line}".rstrip() for line in text.strip().splitlines()] or [">"]


def _turn_markdown(turn: Turn) -> list[str]:
    if turn.role == "user":
        body = "  \n".join(line.strip() for line in turn.content.strip().splitlines())
        return [f"**{turn.agent}** (interjection): {body}"]
    head = f"**{turn.agent}** _({turn.stage})_"
    if turn.answer is not None:
        head += f" — answer: **{_inline(turn.answer)}**"
        if turn.confidence is not None:
            head += f" (confidence {turn.confidence:.2f})"
    elif turn.reason:
        head += f" — abstained: {_inline(turn.reason)}"
    return [head, "", *_quote(turn.content)] if turn.content.strip() else [head]


def _result_markdown(values: Mapping[str, Any], turns: Sequence[Turn]) -> list[str]:
    lines = ["## Result", ""]
    if "answer" in values:
        answer = values.get("answer")
        shown = f"**{_inline(str(answer))}**" if answer is not None else "none"
        lines += [f"Answer: {shown}", ""]
    if values.get("termination_reason"):
        lines += [f"Termination: {values['termination_reason']}", ""]
    votes = values.get("votes")
    if isinstance(votes, Mapping) and votes:
        lines += ["| answer | votes |", "| --- | ---: |"]
        lines += [f"| {_inline(str(a))} | {n} |" for a, n in _ranked(votes)]
        lines.append("")
    agreement = values.get("agreement")
    if isinstance(agreement, int | float) and "votes" in values:
        lines += [f"Agreement: {agreement:.2f}", ""]
    if values.get("tie_break"):
        lines += [f"Tie-break: {_inline(str(values['tie_break']))}", ""]
    lines += [f"Usage: {_tokens(_total_usage(values, turns))}", ""]
    by_agent = {a: u for a, u in _group_usage(turns, "agent").items() if u.calls}
    if by_agent:
        lines += [
            "| agent | prompt | completion | calls | latency (s) |",
            "| --- | ---: | ---: | ---: | ---: |",
        ]
        lines += [
            f"| {_inline(a)} | {u.prompt_tokens:,} | {u.completion_tokens:,} | {u.calls} | "
            f"{u.latency_s:.1f} |"
            for a, u in by_agent.items()
        ]
        lines.append("")
    return lines
