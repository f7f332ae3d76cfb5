"""Archive finished threads into plain SQLite tables, and export them as JSON.

Checkpoints hold pickled/msgpacked channel values that only LangGraph can read. The archive
writes the same thread into three ordinary tables (``debates``, ``messages``, ``usage``) with
``sqlite-utils`` so that a thread can be queried with SQL or browsed with Datasette. The
archive may be the checkpoint file itself: only these three tables are ever touched.

The ``debates`` columns are those every pattern shares (title, status, termination, rounds,
usage, times); the pattern's own result is its
:attr:`~debategraph.described.Described.summary`, as JSON in ``result``.
Nothing here names a pattern's nodes or state keys: the title and the result are asked
of the pattern.
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import sqlite_utils

from debategraph.checkpoints.savers import BUSY_TIMEOUT_MS, check_sqlite_file, sqlite_path
from debategraph.checkpoints.thread_values import (
    json_text,
    jsonable,
    rounds_reached,
    termination,
    total_usage,
    turns,
    usage_by,
)
from debategraph.errors import UsageError
from debategraph.state.records import Turn, Usage

if TYPE_CHECKING:
    from debategraph.described import Described


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
    "rounds": int,
    "prompt_tokens": int,
    "completion_tokens": int,
    "calls": int,
    "latency_s": float,
    "wall_s": float,
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
    "model": str,
    "tool": str,
    "arguments": str,
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


def export_json(
    thread_id: str,
    values: Mapping[str, Any],
    *,
    status: str | None = None,
    wall_s: float | None = None,
) -> dict[str, Any]:
    """A thread's state as one JSON-able document.

    Args:
        thread_id: The thread.
        values: The thread's state values.
        status: The thread's status (``finished``...), if known.
        wall_s: The thread's wall time (:func:`~debategraph.checkpoints.threads.
            thread_wall_time`), if known.

    Returns:
        ``thread_id``, ``status``, ``wall_s`` (when given) and every state value, models
        dumped in JSON mode (the transcript becomes a list of dicts).
    """
    out: dict[str, Any] = {"thread_id": thread_id, "status": status}
    if wall_s is not None:
        out["wall_s"] = round(wall_s, 3)
    out.update(jsonable(values))
    return out


def archive_debate(
    path: str | os.PathLike[str],
    *,
    thread_id: str,
    pattern: Described,
    values: Mapping[str, Any],
    status: str,
    wall_s: float | None = None,
) -> ArchiveSummary:
    """Write a thread into the ``debates``, ``messages`` and ``usage`` tables of a SQLite file.

    Archiving a thread again replaces its rows, in one transaction: readers never see a
    partial archive and a failure leaves the previous rows as they were. Other tables in
    the file (LangGraph's ``checkpoints`` and ``writes``) are left alone, and several
    processes may archive into one file at once. A file written by an older version
    gains the columns it lacks; columns this version no longer writes (an older
    ``answer``...) stay, NULL in the rows it writes.

    Args:
        path: The archive file (``sqlite:///`` prefix allowed); created if missing.
        thread_id: The thread to archive.
        pattern: The pattern that ran it: its name, title and summary are stored.
        values: The thread's state values.
        status: The thread's status (``finished``, ``failed``...).
        wall_s: The thread's wall time (:func:`~debategraph.checkpoints.threads.
            thread_wall_time`), stored in ``debates.wall_s``; ``latency_s`` there is the
            model time (the sum of its calls' latencies).

    Returns:
        What was written.

    Raises:
        UsageError: If the file or its folder is missing, read-only or not SQLite, or the
            file holds a table of the same name with another primary key.
    """
    file = sqlite_path(path)
    check_sqlite_file(file, label="archive file")
    transcript = turns(values)
    debate = _debate_row(thread_id, pattern, values, status, transcript, wall_s)
    messages = [_message_row(thread_id, seq, turn) for seq, turn in enumerate(transcript)]
    usage = _usage_rows(thread_id, values, transcript)
    conn = _connect(file)
    try:
        db = sqlite_utils.Database(conn)
        conn.execute("BEGIN IMMEDIATE")  # take the write lock now: no upgrade deadlock
        try:
            _ensure_schema(db, file)
            for table in (MESSAGES, USAGE):
                conn.execute(f"DELETE FROM [{table}] WHERE thread_id = ?", (thread_id,))
            db.table(DEBATES).insert(debate, pk=_DEBATES_PK, replace=True)  # whole row
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


def _iso(timestamp: float) -> str:
    return datetime.fromtimestamp(timestamp, tz=UTC).isoformat()


def _debate_row(
    thread_id: str,
    pattern: Described,
    values: Mapping[str, Any],
    status: str,
    transcript: Sequence[Turn],
    wall_s: float | None,
) -> dict[str, Any]:
    usage = total_usage(values, transcript)
    stamps = [t.timestamp for t in transcript]
    return {
        "thread_id": thread_id,
        "pattern": pattern.name,
        "title": pattern.title(values) or None,
        "status": status,
        "termination_reason": termination(values),
        "rounds": rounds_reached(values, transcript),
        **_usage_columns(usage),
        "wall_s": None if wall_s is None else round(wall_s, 3),
        "started_at": _iso(min(stamps)) if stamps else None,
        "finished_at": _iso(max(stamps)) if stamps else None,
        "archived_at": datetime.now(UTC).isoformat(),
        "result": json_text(pattern.summary(values)),
    }


def _usage_columns(usage: Usage) -> dict[str, Any]:
    return {
        "prompt_tokens": usage.prompt_tokens,
        "completion_tokens": usage.completion_tokens,
        "calls": usage.calls,
        "latency_s": usage.latency_s,
    }


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
        "model": turn.model,
        "tool": turn.tool,
        "arguments": turn.arguments,
        "reply_to": json.dumps(list(turn.reply_to)),
        "recipients": json.dumps(list(turn.recipients)),
        "timestamp": _iso(turn.timestamp),
        **_usage_columns(turn.usage),
    }


def _usage_row(thread_id: str, scope: str, key: str, usage: Usage) -> dict[str, Any]:
    return {"thread_id": thread_id, "scope": scope, "key": key, **_usage_columns(usage)}


def _usage_rows(
    thread_id: str, values: Mapping[str, Any], transcript: Sequence[Turn]
) -> list[dict[str, Any]]:
    rows = [_usage_row(thread_id, "total", "", total_usage(values, transcript))]
    for scope in ("agent", "model", "round"):
        by_scope = usage_by(transcript, scope).items()
        rows += [_usage_row(thread_id, scope, k, u) for k, u in by_scope if scope != "model" or k]
    return rows
