"""Tests for the SQL archive, the Markdown transcript and the JSON export of a thread."""

from __future__ import annotations

import json
import os
import sqlite3
import threading
from collections.abc import Callable, Iterator, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from langgraph.graph import END, START, StateGraph
from typing_extensions import TypedDict

from debategraph import registry
from debategraph.checkpoints import archive as archive_module
from debategraph.checkpoints import open_checkpointer, thread_config
from debategraph.checkpoints.archive import ArchiveSummary, archive_debate, export_json
from debategraph.checkpoints.thread_values import jsonable
from debategraph.described import Described
from debategraph.errors import UsageError
from debategraph.nodes.solver_debate.described import votes_markdown
from debategraph.registry import Values
from debategraph.state.records import RoundRecord, Turn, Usage
from debategraph.views.markdown import render_markdown, summary_markdown
from tests.unprivileged import without_privileges

QUESTION = "Natalia sold 48 clips in April and half as many in May. How many in total?"
T0 = 1_700_000_000.0
OUR_TABLES = {"debates", "messages", "usage"}
SOLVER = registry.described("solver_debate")
#: The solver pattern with its vote result section.
VOTING = SOLVER
#: The schema of every table and index that is not the archive's own.
OTHER_SCHEMA = (
    "SELECT type, name, sql FROM sqlite_master"
    " WHERE tbl_name NOT IN ('debates', 'messages', 'usage') ORDER BY name"
)


# --------------------------------------------------------------------------
# Helpers
# --------------------------------------------------------------------------


def solver_turn(
    agent: str, rnd: int, i: int, answer: str | None, reason: str | None = None
) -> Turn:
    return Turn(
        id=f"{agent}-r{rnd}",
        agent=agent,
        content=f"{agent} thinks in round {rnd}.\n48 / 2 = 24, 48 + 24 = 72?",
        stage="solve",
        round=rnd,
        reply_to=() if rnd == 1 else (f"{agent}-r{rnd - 1}",),
        recipients=("alice", "bob", "carol"),
        timestamp=T0 + 10 * i,
        usage=Usage(
            prompt_tokens=100 + i, completion_tokens=20 + 2 * i, calls=1, latency_s=0.5 + i / 10
        ),
        answer=answer,
        confidence=None if answer is None else 0.8,
        reason=reason,
    )


def debate_values(question: str = QUESTION) -> dict[str, Any]:
    """A finished 3-solver, 2-round debate with an abstention and a user interjection."""
    r1 = [
        solver_turn("alice", 1, 0, "72"),
        solver_turn("bob", 1, 1, "72"),
        solver_turn("carol", 1, 2, None, reason="no parseable answer"),
    ]
    user = Turn(
        id="user-1",
        agent="user",
        role="user",
        content="Remember: May is half of April.",
        stage="interject",
        round=1,
        timestamp=T0 + 25,
    )
    r2 = [
        solver_turn("alice", 2, 3, "72"),
        solver_turn("bob", 2, 4, "72"),
        solver_turn("carol", 2, 5, "96"),
    ]
    transcript = [*r1, user, *r2]
    solvers = ("alice", "bob", "carol")
    return {
        "question": question,
        "transcript": transcript,
        "round": 2,
        "rounds": [
            RoundRecord(
                round=1,
                answers={t.agent: t.answer for t in r1},
                usage=Usage.total(t.usage for t in r1),
            ),
            RoundRecord(
                round=2,
                answers={t.agent: t.answer for t in r2},
                usage=Usage.total(t.usage for t in r2),
            ),
        ],
        "answer": "72",
        "votes": {"72": 2, "96": 1},
        "agreement": 0.6667,
        "tie_break": None,
        "termination_reason": "rounds_completed",
        "usage": Usage.total(t.usage for t in transcript),
        "usage_by_solver": {
            s: Usage.total(t.usage for t in transcript if t.agent == s) for s in solvers
        },
    }


def make_pattern(
    name: str,
    title: Callable[[Values], str],
    summary: Callable[[Values], dict[str, Any]] = lambda values: {},
    result_markdown: Callable[[Values], list[str]] | None = None,
) -> Described:
    """A pattern of the test's own: only its name, title, summary and result matter here."""
    return Described(
        name=name,
        title=title,
        summary=summary,
        describe=lambda settings: "",
        agents_per_round=lambda settings: 1,
        result_markdown=result_markdown,
    )


def columns(path: Path, table: str) -> list[str]:
    return [r[1] for r in rows(path, f"PRAGMA table_info([{table}])")]


def rows(path: Path, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    conn = sqlite3.connect(path)
    try:
        return conn.execute(sql, params).fetchall()
    finally:
        conn.close()


def count(path: Path, table: str, thread_id: str | None = None) -> int:
    if thread_id is None:
        return int(rows(path, f"SELECT count(*) FROM [{table}]")[0][0])
    sql = f"SELECT count(*) FROM [{table}] WHERE thread_id = ?"
    return int(rows(path, sql, (thread_id,))[0][0])


def archive(path: Path, thread_id: str = "t1", **overrides: Any) -> ArchiveSummary:
    values = overrides.pop("values", None) or debate_values()
    kwargs: dict[str, Any] = {"pattern": SOLVER, "status": "finished", **overrides}
    return archive_debate(path, thread_id=thread_id, values=values, **kwargs)


def dump(path: Path) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of our tables, ordered, to compare before and after a failed archive."""
    return {t: rows(path, f"SELECT * FROM [{t}] ORDER BY 1, 2, 3") for t in sorted(OUR_TABLES)}


def assert_one_line_naming(exc: pytest.ExceptionInfo[UsageError], path: Path) -> None:
    message = str(exc.value)
    assert str(path) in message
    assert "\n" not in message


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "archive.sqlite"


# --------------------------------------------------------------------------
# Archive: contents
# --------------------------------------------------------------------------


def test_archive_writes_debate_row(db: Path) -> None:
    values = debate_values()
    summary = archive(db, values=values)

    assert summary == ArchiveSummary(path=db, thread_id="t1", messages=7)
    conn = sqlite3.connect(db)
    conn.row_factory = sqlite3.Row
    row = conn.execute("SELECT * FROM debates WHERE thread_id = 't1'").fetchone()
    conn.close()
    assert row["pattern"] == "solver_debate"
    assert row["title"] == QUESTION
    assert row["status"] == "finished"
    assert row["termination_reason"] == "rounds_completed"
    assert row["rounds"] == 2
    usage: Usage = values["usage"]
    assert (row["prompt_tokens"], row["completion_tokens"], row["calls"]) == (
        usage.prompt_tokens,
        usage.completion_tokens,
        usage.calls,
    )
    assert row["latency_s"] == pytest.approx(usage.latency_s)
    assert row["started_at"] == "2023-11-14T22:13:20+00:00"
    assert row["finished_at"] == "2023-11-14T22:14:10+00:00"
    assert row["archived_at"].endswith("+00:00")
    result = json.loads(row["result"])
    assert result == json.loads(json.dumps(jsonable(SOLVER.summary(values))))
    assert (result["answer"], result["votes"], result["tie_break"]) == (
        "72",
        {"72": 2, "96": 1},
        None,
    )
    assert result["agreement"] == pytest.approx(0.6667)
    assert [r["answers"] for r in result["rounds"]] == [
        {"alice": "72", "bob": "72", "carol": None},
        {"alice": "72", "bob": "72", "carol": "96"},
    ]
    assert not {"answer", "agreement", "votes", "tie_break"} & set(row.keys())


def test_archive_writes_messages_in_transcript_order(db: Path) -> None:
    values = debate_values()
    archive(db, values=values)

    got = rows(
        db,
        "SELECT id, seq, agent, role, stage, round, content, answer, confidence, reason,"
        " reply_to, recipients, timestamp, prompt_tokens, completion_tokens, latency_s"
        " FROM messages WHERE thread_id = 't1' ORDER BY seq",
    )
    transcript: list[Turn] = values["transcript"]
    assert [r[0] for r in got] == [t.id for t in transcript]
    assert [r[1] for r in got] == list(range(len(transcript)))
    for row, turn in zip(got, transcript, strict=True):
        assert row[2:10] == (
            turn.agent,
            turn.role,
            turn.stage,
            turn.round,
            turn.content,
            turn.answer,
            turn.confidence,
            turn.reason,
        )
        assert json.loads(row[10]) == list(turn.reply_to)
        assert json.loads(row[11]) == list(turn.recipients)
        assert row[12].endswith("+00:00")
        assert row[13:15] == (turn.usage.prompt_tokens, turn.usage.completion_tokens)
        assert row[15] == pytest.approx(turn.usage.latency_s)
    user = rows(db, "SELECT agent, role, stage, seq FROM messages WHERE role = 'user'")
    assert user == [("user", "user", "interject", 3)]
    abstained = rows(db, "SELECT agent, reason FROM messages WHERE answer IS NULL AND role='agent'")
    assert abstained == [("carol", "no parseable answer")]


def test_usage_rows_equal_sums_of_turns(db: Path) -> None:
    values = debate_values()
    archive(db, values=values)

    for scope, column in (("agent", "agent"), ("round", "CAST(round AS TEXT)")):
        from_turns = rows(
            db,
            f"SELECT {column}, sum(prompt_tokens), sum(completion_tokens), sum(calls),"
            f" round(sum(latency_s), 6) FROM messages WHERE thread_id = 't1'"
            f" GROUP BY 1 ORDER BY 1",
        )
        from_usage = rows(
            db,
            "SELECT key, prompt_tokens, completion_tokens, calls, round(latency_s, 6)"
            " FROM usage WHERE thread_id = 't1' AND scope = ? ORDER BY 1",
            (scope,),
        )
        assert from_usage == from_turns
    assert {r[0] for r in rows(db, "SELECT key FROM usage WHERE scope = 'round'")} == {"1", "2"}
    total = values["usage"]
    assert rows(
        db, "SELECT key, prompt_tokens, completion_tokens, calls FROM usage WHERE scope='total'"
    ) == [("", total.prompt_tokens, total.completion_tokens, total.calls)]
    by_solver = values["usage_by_solver"]
    agent_rows = rows(db, "SELECT key, prompt_tokens, calls FROM usage WHERE scope = 'agent'")
    for key, prompt, calls in agent_rows:
        if key != "user":
            assert (prompt, calls) == (by_solver[key].prompt_tokens, by_solver[key].calls)


def test_rearchiving_replaces_the_threads_rows(db: Path) -> None:
    archive(db, status="waiting")
    archive(db, status="waiting")
    assert (count(db, "debates"), count(db, "messages"), count(db, "usage")) == (1, 7, 7)

    shorter = debate_values()
    shorter["transcript"] = shorter["transcript"][:3]
    summary = archive(db, values=shorter, status="finished")

    assert summary.messages == 3
    assert count(db, "debates") == 1
    assert rows(db, "SELECT id FROM messages ORDER BY seq") == [
        ("alice-r1",),
        ("bob-r1",),
        ("carol-r1",),
    ]
    assert rows(db, "SELECT key FROM usage WHERE scope = 'round'") == [("1",)]
    assert rows(db, "SELECT status FROM debates") == [("finished",)]


def test_two_threads_coexist(db: Path) -> None:
    archive(db, "t1")
    archive(db, "t2", values=debate_values("What is 2 + 2?"))
    archive(db, "t1")

    assert rows(db, "SELECT thread_id, title FROM debates ORDER BY 1") == [
        ("t1", QUESTION),
        ("t2", "What is 2 + 2?"),
    ]
    assert (count(db, "messages", "t1"), count(db, "messages", "t2")) == (7, 7)
    assert (count(db, "usage", "t1"), count(db, "usage", "t2")) == (7, 7)
    # The same Turn ids in two threads are two rows, not one row moved between threads.
    assert count(db, "messages") == 14


def test_other_pattern_values_without_usage_or_rounds(db: Path) -> None:
    turns = debate_values()["transcript"]
    values = {
        "topic": "Should cities ban cars?",
        "transcript": [t.model_dump(mode="json") for t in turns],  # dicts, as JSON clients send
        "verdict": {"winner": "pro", "score": 7.5},
    }
    court = make_pattern(
        "court", lambda v: str(v["topic"]), lambda v: {"verdict": v.get("verdict")}
    )
    archive(db, values=values, pattern=court, status="finished")

    got = rows(db, "SELECT pattern, title, rounds, prompt_tokens, calls, result FROM debates")
    name, title, n_rounds, prompt, calls, result = got[0]
    assert (name, title, n_rounds) == ("court", "Should cities ban cars?", 2)
    assert prompt == sum(t.usage.prompt_tokens for t in turns)
    assert calls == 6
    assert json.loads(result) == {"verdict": {"winner": "pro", "score": 7.5}}
    total = rows(db, "SELECT prompt_tokens FROM usage WHERE scope = 'total'")
    assert total == [(prompt,)]


class Paper:
    def __init__(self, title: str) -> None:
        self.title = title


#: A discussion-like pattern: the title is a nested value, not a state key of its own.
DISCUSSION = make_pattern(
    "discussion_like",
    lambda v: v["paper"].title if v.get("paper") else "",
    lambda v: {"report": v.get("report"), "scores": v.get("scores", {})},
)


def test_title_and_result_come_from_the_pattern(db: Path) -> None:
    values = {
        "paper": Paper("Attention Is All You Need"),
        "topic": "not the title",
        "question": "not the title either",
        "report": "Consensus: accept.",
        "scores": {"novelty": 4, "clarity": 3},
        "round": 3,
    }
    archive(db, values=values, pattern=DISCUSSION)

    got = rows(db, "SELECT pattern, title, rounds, result FROM debates")
    assert got[0][:3] == ("discussion_like", "Attention Is All You Need", 3)  # rounds: round
    assert json.loads(got[0][3]) == {
        "report": "Consensus: accept.",
        "scores": {"clarity": 3, "novelty": 4},
    }


@pytest.mark.parametrize(
    ("stored", "shown"),
    [("max_iterations", "rounds_completed"), ("budget", "budget"), ("gave_up", "gave_up")],
)
def test_termination_in_todays_words(db: Path, stored: str, shown: str) -> None:
    values = {**debate_values(), "termination_reason": stored}
    archive(db, values=values)
    assert rows(db, "SELECT termination_reason FROM debates") == [(shown,)]
    text = render_markdown("t1", values, pattern=SOLVER)
    assert f"termination: {shown}" in text.splitlines()[2]
    assert f"Termination: {shown}" in text.split("## Result")[1]


def test_empty_values_archive_a_bare_row(db: Path) -> None:
    bare = make_pattern("x", lambda v: "")
    summary = archive_debate(db, thread_id="t0", pattern=bare, values={}, status="waiting")
    assert summary.messages == 0
    got = rows(db, "SELECT pattern, title, rounds, calls, started_at, result FROM debates")
    assert got == [("x", None, 0, 0, None, "{}")]
    assert rows(db, "SELECT scope, key, calls FROM usage") == [("total", "", 0)]


def test_schema(db: Path) -> None:
    archive(db)
    conn = sqlite3.connect(db)
    try:
        pks = {
            table: [r[1] for r in sorted(conn.execute(f"PRAGMA table_info([{table}])")) if r[5]]
            for table in OUR_TABLES
        }
        fks = {
            (t, r[3], r[2], r[4])
            for t in OUR_TABLES
            for r in conn.execute(f"PRAGMA foreign_key_list([{t}])")
        }
        indexes = {r[1] for r in conn.execute("PRAGMA index_list(messages)")}
        index_cols = {
            name: [r[2] for r in conn.execute(f"PRAGMA index_info([{name}])")] for name in indexes
        }
        assert conn.execute("PRAGMA journal_mode").fetchone() == ("wal",)
    finally:
        conn.close()
    assert pks == {
        "debates": ["thread_id"],
        "messages": ["thread_id", "id"],
        "usage": ["thread_id", "scope", "key"],
    }
    assert fks == {
        ("messages", "thread_id", "debates", "thread_id"),
        ("usage", "thread_id", "debates", "thread_id"),
    }
    assert ["thread_id", "seq"] in index_cols.values()


def test_older_archive_gains_new_columns(db: Path) -> None:
    conn = sqlite3.connect(db)
    conn.execute("CREATE TABLE debates (thread_id TEXT PRIMARY KEY, pattern TEXT, title TEXT)")
    conn.execute("INSERT INTO debates VALUES ('old', 'solver_debate', 'old question')")
    conn.commit()
    conn.close()

    archive(db)

    assert rows(db, "SELECT thread_id, title, rounds FROM debates ORDER BY 1") == [
        ("old", "old question", None),
        ("t1", QUESTION, 2),
    ]


#: The ``debates`` table as the previous version created it, solver columns included.
OLD_DEBATES = """
CREATE TABLE [debates] (
   [thread_id] TEXT PRIMARY KEY NOT NULL, [pattern] TEXT, [title] TEXT, [status] TEXT,
   [termination_reason] TEXT, [answer] TEXT, [agreement] FLOAT, [votes] TEXT,
   [tie_break] TEXT, [rounds] INTEGER, [prompt_tokens] INTEGER,
   [completion_tokens] INTEGER, [calls] INTEGER, [latency_s] FLOAT, [started_at] TEXT,
   [finished_at] TEXT, [archived_at] TEXT, [result] TEXT
)"""


def test_archive_of_the_previous_version_takes_new_rows(db: Path) -> None:
    conn = sqlite3.connect(db)
    conn.execute(OLD_DEBATES)
    conn.execute(
        "INSERT INTO debates (thread_id, pattern, title, status, termination_reason, answer,"
        " agreement, votes, tie_break, rounds, result) VALUES"
        " ('old', 'solver_debate', 'old q', 'finished', 'max_iterations', '7', 1.0,"
        " '{\"7\": 3}', NULL, 2, '{}'),"
        " ('t1', 'solver_debate', 'stale', 'waiting', NULL, '96', 0.5, '{}', 'x', 1, '{}')"
    )
    conn.commit()
    conn.close()
    before = columns(db, "debates")

    archive(db, "t1")  # archived again by this version
    archive(db, "t2", values=debate_values("What is 2 + 2?"), pattern=DISCUSSION)

    # nothing dropped; the columns added since (the thread's cost and cache hits, its wall
    # time) are appended
    assert columns(db, "debates") == [*before, "cost", "cache_hits", "wall_s"]
    got = rows(
        db,
        "SELECT thread_id, title, status, answer, agreement, votes, tie_break, rounds"
        " FROM debates ORDER BY 1",
    )
    assert got == [
        ("old", "old q", "finished", "7", 1.0, '{"7": 3}', None, 2),  # left as it was
        ("t1", QUESTION, "finished", None, None, None, None, 2),  # the old columns are NULL
        ("t2", None, "finished", None, None, None, None, 2),
    ]
    assert count(db, "messages") == 14


def test_concurrent_archivers_into_one_file(db: Path) -> None:
    archive(db, "warmup")  # create the schema once; the writers then race on rows only
    errors: list[BaseException] = []

    def work(n: int) -> None:
        try:
            for _ in range(3):
                archive(db, f"thread-{n}", values=debate_values(f"q{n}"))
        except Exception as exc:  # noqa: BLE001 - collected and asserted empty below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert errors == []
    assert count(db, "debates") == 5
    assert count(db, "messages") == 35


# --------------------------------------------------------------------------
# Archive: sharing the file with LangGraph checkpoints
# --------------------------------------------------------------------------


class Counter(TypedDict):
    n: int


def counter_graph() -> StateGraph[Counter, None, Counter, Counter]:
    graph: StateGraph[Counter, None, Counter, Counter] = StateGraph(Counter)
    graph.add_node("inc", lambda state: {"n": state["n"] + 1})
    graph.add_edge(START, "inc")
    graph.add_edge("inc", END)
    return graph


def test_archive_shares_the_checkpoint_file(tmp_path: Path) -> None:
    path = tmp_path / "debates.sqlite"
    with open_checkpointer(path) as saver:
        app = counter_graph().compile(checkpointer=saver)
        assert app.invoke({"n": 1}, thread_config("lg")) == {"n": 2}
        before = {t: count(path, t) for t in ("checkpoints", "writes")}
        schema_before = rows(path, OTHER_SCHEMA)

        archive(path, "t1")  # while the checkpointer's connection is open
        archive(path, "t1")

        assert {t: count(path, t) for t in ("checkpoints", "writes")} == before
        assert app.get_state(thread_config("lg")).values == {"n": 2}
        assert app.invoke({"n": 10}, thread_config("lg2")) == {"n": 11}

    with open_checkpointer(path) as saver:
        app = counter_graph().compile(checkpointer=saver)
        assert app.get_state(thread_config("lg")).values == {"n": 2}
        assert app.get_state(thread_config("lg2")).values == {"n": 11}
    tables = {r[0] for r in rows(path, "SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert {"checkpoints", "writes"} | OUR_TABLES <= tables
    assert rows(path, OTHER_SCHEMA) == schema_before
    assert count(path, "messages") == 7


# --------------------------------------------------------------------------
# Archive: bad input
# --------------------------------------------------------------------------


def test_missing_folder(tmp_path: Path) -> None:
    path = tmp_path / "nope" / "a.sqlite"
    with pytest.raises(UsageError) as exc:
        archive(path)
    assert_one_line_naming(exc, path)
    assert "does not exist" in str(exc.value)
    assert not path.parent.exists()


def test_directory_given(tmp_path: Path) -> None:
    with pytest.raises(UsageError) as exc:
        archive(tmp_path)
    assert_one_line_naming(exc, tmp_path)
    assert list(tmp_path.iterdir()) == []


def test_not_sqlite_file(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_text("my precious notes\n")
    with pytest.raises(UsageError) as exc:
        archive(path)
    assert_one_line_naming(exc, path)
    assert "not a SQLite database" in str(exc.value)
    assert path.read_text() == "my precious notes\n"


def test_empty_file_is_a_fresh_database(db: Path) -> None:
    db.touch()
    assert archive(db).messages == 7


def test_foreign_table_with_our_name_is_refused(db: Path) -> None:
    conn = sqlite3.connect(db)
    conn.execute("CREATE TABLE messages (sender TEXT, body TEXT)")
    conn.execute("INSERT INTO messages VALUES ('me', 'hello')")
    conn.commit()
    conn.close()

    with pytest.raises(UsageError) as exc:
        archive(db)
    assert_one_line_naming(exc, db)
    assert "'messages'" in str(exc.value)
    assert rows(db, "SELECT * FROM messages") == [("me", "hello")]
    tables = {r[0] for r in rows(db, "SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert tables == {"messages"}  # the debates table created first was rolled back


def read_only_connect(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make the archive's connections read-only, as a read-only file or mount does."""
    real: Callable[..., sqlite3.Connection] = sqlite3.connect

    def connect(path: Path, **kwargs: Any) -> sqlite3.Connection:
        return real(Path(path).resolve().as_uri() + "?mode=ro", uri=True, **kwargs)

    monkeypatch.setattr(sqlite3, "connect", connect)


def test_read_only_database_leaves_rows_unchanged(
    db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    archive(db)
    before = dump(db)
    changed = debate_values()
    changed["transcript"] = changed["transcript"][:2]

    with monkeypatch.context() as patch:
        read_only_connect(patch)
        with pytest.raises(UsageError) as exc:
            archive(db, values=changed, status="failed")

    assert_one_line_naming(exc, db)
    assert f"archive file {db} is read-only" in str(exc.value)
    assert dump(db) == before


def test_failure_mid_write_rolls_back(db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    archive(db)
    before = dump(db)
    real = archive_module._usage_rows

    def broken(*args: Any) -> list[dict[str, Any]]:
        return [{**row, "no_such_column": 1} for row in real(*args)]

    monkeypatch.setattr(archive_module, "_usage_rows", broken)
    changed = debate_values()
    changed["transcript"] = changed["transcript"][:2]
    with pytest.raises(UsageError) as exc:
        archive(db, values=changed, status="failed")

    assert_one_line_naming(exc, db)
    assert dump(db) == before  # the messages deleted and rewritten before the error are back


def deny(monkeypatch: pytest.MonkeyPatch, denied: Path, mode: int) -> None:
    """Make ``os.access`` deny ``mode`` on ``denied``, as it does for a non-root user."""
    real = os.access

    def access(path: Any, wanted: int, **kwargs: Any) -> bool:
        if Path(path) == denied and wanted & mode:
            return False
        return real(path, wanted, **kwargs)

    monkeypatch.setattr(os, "access", access)


def test_file_without_write_permission(db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    archive(db)
    before = dump(db)
    deny(monkeypatch, db, os.W_OK)
    with pytest.raises(UsageError) as exc:
        archive(db, status="failed")
    assert_one_line_naming(exc, db)
    assert f"archive file {db} is read-only" in str(exc.value)
    assert dump(db) == before


def test_folder_without_write_permission(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "a.sqlite"
    deny(monkeypatch, tmp_path, os.W_OK)
    with pytest.raises(UsageError) as exc:
        archive(path)
    assert_one_line_naming(exc, path)
    assert f"folder {tmp_path} is read-only" in str(exc.value)
    assert not path.exists()


def refusal(path: str, status: str) -> str:
    """The one-line error of archiving to ``path`` (run where file modes hold)."""
    try:
        archive(Path(path), status=status)
    except UsageError as exc:
        return str(exc)
    return "archived: no error"


def test_read_only_file(db: Path) -> None:
    archive(db)
    before = dump(db)
    db.chmod(0o444)
    try:
        message = without_privileges(refusal, str(db), "failed")  # as root too
    finally:
        db.chmod(0o644)
    assert str(db) in message and "\n" not in message
    assert "read-only" in message
    assert dump(db) == before


def test_read_only_folder(tmp_path: Path) -> None:
    folder = tmp_path / "ro"
    folder.mkdir()
    folder.chmod(0o555)
    path = folder / "a.sqlite"
    try:
        message = without_privileges(refusal, str(path), "finished")  # as root too
    finally:
        folder.chmod(0o755)
    assert str(path) in message and "\n" not in message
    assert "read-only" in message
    assert not path.exists()


# --------------------------------------------------------------------------
# Markdown and JSON
# --------------------------------------------------------------------------


@pytest.fixture
def markdown() -> Iterator[str]:
    yield render_markdown("t1", debate_values(), pattern=VOTING, status="finished")


def test_markdown_structure(markdown: str) -> None:
    lines = markdown.splitlines()
    assert lines[0] == f"# {QUESTION}"
    meta = lines[2]
    assert meta.startswith("thread `t1` · status: finished · termination: rounds_completed · ")
    assert meta.endswith(" calls, model time (sum of calls) 4.5 s")
    assert "72" not in meta  # the answer is the pattern's business, in its result section
    assert lines.index("## Round 1") < lines.index("## Round 2") < lines.index("## Result")
    for agent in ("alice", "bob", "carol"):
        assert f"**{agent}**" in markdown
    assert markdown.count("**alice**") == 2


def test_markdown_turns(markdown: str) -> None:
    round1 = markdown.split("## Round 1")[1].split("## Round 2")[0]
    assert "**user** (interjection): Remember: May is half of April." in round1
    assert round1.index("**carol**") < round1.index("**user** (interjection)")
    assert "**carol** _(solve)_ — abstained: no parseable answer" in round1
    assert "**alice** _(solve)_ — answer: **72** (confidence 0.80)" in round1
    assert "> alice thinks in round 1.\n> 48 / 2 = 24, 48 + 24 = 72?" in round1


def test_markdown_result(markdown: str) -> None:
    result = markdown.split("## Result\n\n")[1]
    assert result.startswith(
        "Answer: **72**\n\n| answer | votes |\n| --- | ---: |\n| 72 | 2 |\n| 96 | 1 |\n\n"
        "Agreement: 0.67\n\nTermination: rounds_completed\n\nUsage: "
    )
    assert "Tie-break" not in result
    assert "| carol |" in result
    assert "| user |" not in result  # no model calls, no usage row


def test_votes_markdown_tie_break_and_no_answer() -> None:
    values = {"answer": None, "votes": {"4": 1, "5": 1}, "agreement": 0.5, "tie_break": "a | b"}
    assert votes_markdown(values) == [
        "Answer: none",
        "",
        "| answer | votes |",
        "| --- | ---: |",
        "| 4 | 1 |",
        "| 5 | 1 |",
        "",
        "Agreement: 0.50",
        "",
        "Tie-break: a \\| b",
        "",
    ]
    assert votes_markdown({}) == []


def test_markdown_without_result_markdown_renders_the_summary() -> None:
    text = render_markdown("t1", debate_values(), pattern=replace(SOLVER, result_markdown=None))
    result = text.split("## Result\n\n")[1]
    assert result.startswith(
        "Answer: 72\n\nVotes:\n\n| key | value |\n| --- | --- |\n| 72 | 2 |\n| 96 | 1 |\n\n"
        "Agreement: 0.6667\n\nTie break: none\n\nRounds:\n\n- item 1:\n  - Round: 1\n"
    )
    assert "Termination: rounds_completed\n\nUsage: " in result


def test_summary_markdown() -> None:
    summary: Mapping[str, Any] = {
        "winner": "pro",
        "score": 7.5,
        "report": "First line.\n\nSecond | line.",
        "scores": {"a b": 1, "c": None},
        "nested": {"x": [1, 2]},
        "speakers": ["ann", "ben"],
        "empty": {},
        "usage": Usage(calls=2),
    }
    assert summary_markdown(summary) == [
        "Winner: pro",
        "",
        "Score: 7.5",
        "",
        "Report:",
        "",
        "> First line.",
        ">",
        "> Second | line.",
        "",
        "Scores:",
        "",
        "| key | value |",
        "| --- | --- |",
        "| a b | 1 |",
        "| c | none |",
        "",
        "Nested:",
        "",
        "- X: 1, 2",
        "",
        "Speakers: ann, ben",
        "",
        "Empty: none",
        "",
        "Usage:",
        "",
        "| key | value |",
        "| --- | --- |",
        "| prompt_tokens | 0 |",  # in the model's field order
        "| completion_tokens | 0 |",
        "| calls | 2 |",
        "| latency_s | 0.0 |",
        "| estimated | False |",
        "",
    ]


def test_markdown_of_unfinished_or_other_patterns() -> None:
    topic = make_pattern("court", lambda v: str(v.get("topic") or ""))
    text = render_markdown("t9", {"topic": "Cats | dogs", "transcript": []}, pattern=topic)
    assert text.startswith("# Cats \\| dogs\n")
    assert text.endswith(
        "## Result\n\nUsage: 0 tokens (0 prompt + 0 completion), 0 calls,"
        " model time (sum of calls) 0.0 s\n"
    )
    paper = render_markdown("t8", {"paper": Paper("On  Graphs")}, pattern=DISCUSSION)
    assert paper.startswith("# On Graphs\n\nthread `t8`\n")
    assert "Report: none\n\nScores: none\n" in paper
    early = render_markdown(
        "t9",
        {
            "transcript": [
                Turn(agent="user", role="user", content="Be brief.", stage="interject", round=0)
            ]
        },
        pattern=SOLVER,
    )
    assert early.startswith("# Thread t9\n")
    assert "## Before round 1" in early
    assert "**user** (interjection): Be brief." in early


def test_export_json_round_trips() -> None:
    values = debate_values()
    doc = export_json("t1", values, status="finished")
    again = json.loads(json.dumps(doc))
    assert again == doc
    assert (doc["thread_id"], doc["status"], doc["question"]) == ("t1", "finished", QUESTION)
    assert doc["transcript"][3] == values["transcript"][3].model_dump(mode="json")
    assert doc["usage"]["calls"] == 6
    assert doc["rounds"][0]["answers"]["carol"] is None
    assert [Turn.model_validate(t) for t in doc["transcript"]] == values["transcript"]


def test_jsonable() -> None:
    usage = Usage(prompt_tokens=1)
    assert jsonable({1: (usage, [usage]), "x": None}) == {
        "1": [usage.model_dump(mode="json"), [usage.model_dump(mode="json")]],
        "x": None,
    }
    assert jsonable("text") == "text"
