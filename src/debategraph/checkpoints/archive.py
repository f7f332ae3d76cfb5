"""Archive finished threads into plain SQLite tables, and export them as JSON.

Checkpoints hold pickled/msgpacked channel values that only LangGraph can read. The archive
writes the same thread into three ordinary tables (``debates``, ``messages``, ``usage``), as
``sqlite-utils`` would create them, so that a thread can be queried with SQL or browsed with
Datasette. They are written with the standard library's ``sqlite3``: ``sqlite-utils`` imports
pandas and numpy where they are installed, a third of a second more for every run that
finishes. The
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
    "cost": float,
    "cache_hits": int,
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
    "cost": float,
    "cache_hits": int,
}
_USAGE_COLUMNS: dict[str, type] = {
    "thread_id": str,
    "scope": str,
    "key": str,
    "prompt_tokens": int,
    "completion_tokens": int,
    "calls": int,
    "latency_s": float,
    "cost": float,
    "cache_hits": int,
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
        conn.execute("BEGIN IMMEDIATE")  # take the write lock now: no upgrade deadlock
        try:
            _ensure_schema(conn, file)
            for table in (MESSAGES, USAGE):
                conn.execute(f'DELETE FROM "{table}" WHERE thread_id = ?', (thread_id,))
            _insert(conn, DEBATES, [debate])  # the whole row, replaced
            _insert(conn, MESSAGES, messages)
            _insert(conn, USAGE, usage)
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


#: SQLite's column type for each Python type of a column (as ``sqlite-utils`` maps them).
_SQL_TYPES = {str: "TEXT", int: "INTEGER", float: "REAL"}


def _ensure_schema(conn: sqlite3.Connection, path: Path) -> None:
    """Create the archive tables, or add the columns an older archive lacks."""
    specs = (
        (DEBATES, _DEBATES_COLUMNS, _DEBATES_PK, False),
        (MESSAGES, _MESSAGES_COLUMNS, _MESSAGES_PK, True),
        (USAGE, _USAGE_COLUMNS, _USAGE_PK, True),
    )
    for name, columns, pk, of_a_debate in specs:
        have = {row[1]: row[5] for row in conn.execute(f'PRAGMA table_info("{name}")')}
        if not have:
            conn.execute(_create_table(name, columns, pk, of_a_debate))
            continue
        pks = tuple(c for c, at in sorted(have.items(), key=lambda kv: kv[1]) if at) or ("rowid",)
        if pks != pk:
            raise UsageError(
                f"archive file {path} has a table {name!r} that is not a debategraph archive "
                f"table (primary key {', '.join(pks)}, expected {', '.join(pk)})"
            )
        for column, kind in columns.items():
            if column not in have:
                conn.execute(f'ALTER TABLE "{name}" ADD COLUMN "{column}" {_SQL_TYPES[kind]}')
    conn.execute(
        'CREATE UNIQUE INDEX IF NOT EXISTS "idx_messages_thread_id_seq" '
        'ON "messages" ("thread_id", "seq")'
    )
    conn.execute(
        'CREATE INDEX IF NOT EXISTS "idx_usage_thread_id_scope" ON "usage" ("thread_id", "scope")'
    )


def _create_table(
    name: str, columns: Mapping[str, type], pk: tuple[str, ...], of_a_debate: bool
) -> str:
    """``CREATE TABLE`` for an archive table, the statement ``sqlite-utils`` would write.

    Primary-key columns are ``NOT NULL``; a table of a debate's rows references
    ``debates(thread_id)``.
    """
    lines = []
    for column, kind in columns.items():
        line = f'   "{column}" {_SQL_TYPES[kind]}'
        if pk == (column,):
            line += " PRIMARY KEY"
        if column in pk:
            line += " NOT NULL"
        if of_a_debate and column == "thread_id":
            line += f' REFERENCES "{DEBATES}"("thread_id")'
        lines.append(line)
    if len(pk) > 1:
        quoted = ", ".join(f'"{c}"' for c in pk)
        lines.append(f"   PRIMARY KEY ({quoted})")
    return f'CREATE TABLE "{name}" (\n' + ",\n".join(lines) + "\n)"


def _insert(conn: sqlite3.Connection, table: str, rows: Sequence[Mapping[str, Any]]) -> None:
    """Insert ``rows`` into ``table``, each replacing the row of the same primary key."""
    if not rows:
        return
    columns = list(rows[0])
    names = ", ".join(f'"{c}"' for c in columns)
    marks = ", ".join("?" for _ in columns)
    conn.executemany(
        f'INSERT OR REPLACE INTO "{table}" ({names}) VALUES ({marks})',
        [tuple(row[c] for c in columns) for row in rows],
    )


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
        "cost": usage.cost,
        "cache_hits": usage.cache_hits,
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
