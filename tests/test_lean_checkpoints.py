"""Lean checkpoints: short channel versions, compressed blobs, run settings stored once.

And what was written before still reads: a thread written with LangGraph's own SQLite
saver and serializer (as the previous version wrote it) resumes, shows and exports.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from langgraph.checkpoint.sqlite import SqliteSaver

from debategraph.checkpoints import backends, open_checkpointer, read_run, savers
from debategraph.checkpoints.serde import Deflate, serializer
from debategraph.checkpoints.threaded import ThreadedAsync
from debategraph.checkpoints.threads import RUN_METADATA_KEY
from debategraph.nodes.review import review_request
from debategraph.registry import record_types
from debategraph.state.records import Turn, Usage
from tests.conftest import one_error_line, run_cli, stub_args
from tests.openai_stub import StubOpenAIServer

QUESTION = "Natalia sold 48 clips in April and half as many in May. How many in total?"


def test_next_version_is_short_and_ordered() -> None:
    versions: list[Any] = [None]
    for _ in range(120):
        versions.append(backends.next_version(versions[-1]))
    assert versions[1:4] == ["a1", "a2", "a3"]
    assert versions[10] == "b10" and versions[100] == "c100"
    assert versions[1:] == sorted(versions[1:])  # string order is version order
    old = f"{41:032}.{0.123456789:016}"  # LangGraph's SqliteSaver form
    assert backends.next_version(old) == "b42" and backends.next_version(old) > old
    assert backends.next_version(7) == 8  # numbers (another saver's) stay numbers


def test_serializer_compresses_and_reads_plain_blobs() -> None:
    serde = serializer()
    turn = Turn(
        agent="solver_1", content="Forty-eight plus twenty-four. " * 4, stage="solve", round=2
    )
    kind, blob = serde.dumps_typed([turn])
    assert kind == "msgpack+z1"
    plain_kind, plain = JsonPlusSerializer().dumps_typed([turn])
    assert plain_kind == "msgpack" and len(blob) < len(plain) / 2
    assert serde.loads_typed((kind, blob)) == [turn]
    assert serde.loads_typed((plain_kind, plain)) == [turn]  # written before: no '+'
    assert serde.dumps_typed(3)[0] == "msgpack+z0"  # too short to compress
    assert serde.loads_typed(serde.dumps_typed(3)) == 3
    assert serde.loads_typed(serde.dumps_typed(Usage(calls=2))) == Usage(calls=2)


def test_unknown_compression_names_it() -> None:
    with pytest.raises(ValueError, match=r"'z9'.*reads z0 and z1"):
        Deflate().decrypt("z9", b"")


def test_cut_or_corrupt_blob_is_refused() -> None:
    name, packed = Deflate().encrypt(b"channel_values transcript usage " * 20)
    assert name == "z1"
    with pytest.raises(ValueError, match="cut short"):
        Deflate().decrypt("z1", packed[: len(packed) // 2])
    with pytest.raises(ValueError, match="corrupt"):
        Deflate().decrypt("z1", b"\xff" * 16)


def solved(stub: StubOpenAIServer, db: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Thread ``t``: a 3-solver, 2-round debate on ``db``."""
    args = ["solve", QUESTION, "--agents", "3", "--rounds", "2", "--thread", "t", "--json"]
    code, _, err = run_cli([*args, *stub_args(stub, db)], capsys)
    assert code == 0, err


def test_blob_of_a_newer_version_is_one_line(
    stub: StubOpenAIServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "newer.sqlite"
    solved(stub, db, capsys)
    query = "SELECT checkpoint_id, type, checkpoint FROM checkpoints ORDER BY checkpoint_id"
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE checkpoints SET type = 'msgpack+z9' WHERE type = 'msgpack+z1'")
        before = conn.execute(query).fetchall()
    for command in (["show", "t"], ["threads"], ["export", "t"]):
        code, _, err = run_cli([*command, "--db", str(db)], capsys)
        assert code == 1
        assert "stored as 'z9'" in one_error_line(err) and "upgrade debategraph" in err
    with sqlite3.connect(db) as conn:
        assert conn.execute(query).fetchall() == before  # nothing rewritten


def test_run_settings_stored_once_and_read_back(
    stub: StubOpenAIServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "lean.sqlite"
    solved(stub, db, capsys)
    with sqlite3.connect(db) as conn:
        stored = conn.execute(f"SELECT value FROM {backends.METADATA_TABLE}").fetchall()
        metadata = [json.loads(m) for (m,) in conn.execute("SELECT metadata FROM checkpoints")]
        versions = conn.execute("SELECT type FROM writes").fetchall()
        sql = conn.execute("SELECT sql FROM sqlite_schema WHERE name = 'writes'").fetchone()[0]
    assert len(stored) == 1 and json.loads(stored[0][0])["settings"]["max_rounds"] == 2
    assert {m[RUN_METADATA_KEY][:1] for m in metadata} == {"@"}  # a reference each
    assert {t.split("+")[-1] for (t,) in versions if t} <= {"z0", "z1"}
    assert "WITHOUT ROWID" in sql
    with open_checkpointer(db) as saver:
        run = read_run(saver, "t")
        assert run is not None and run.pattern == "solver_debate"
        assert run.settings["max_rounds"] == 2
        newest = saver.get_tuple({"configurable": {"thread_id": "t", "checkpoint_ns": ""}})
        assert newest is not None
        assert json.loads(newest.metadata[RUN_METADATA_KEY])["pattern"] == "solver_debate"
        assert all(str(v)[:1] in "abc" for v in newest.checkpoint["channel_versions"].values())
    code, out, err = run_cli(["history", "t", "--db", str(db), "--json"], capsys)
    at = next(e["checkpoint_id"] for e in json.loads(out) if e["next"] == ["open_round"])
    fork = ["fork", "t", "--at", at, "--thread", "f", "--db", str(db), "--json"]
    code, out, err = run_cli(fork, capsys)
    assert code == 0, err
    assert json.loads(out)["termination_reason"] == "rounds_completed"
    with sqlite3.connect(db) as conn:  # the fork reuses the stored settings
        assert conn.execute(f"SELECT count(*) FROM {backends.METADATA_TABLE}").fetchone()[0] == 1


def test_thread_written_by_the_previous_format_resumes(
    stub: StubOpenAIServer,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """LangGraph's saver and serializer, as before: long versions, settings inline, rowid.

    (Its async methods are the package's: the CLI runs graphs async.)
    """
    db = tmp_path / "old.sqlite"
    old_saver = type("OldSaver", (ThreadedAsync, SqliteSaver), {})
    allowed = [(t.__module__, t.__name__) for t in record_types()]
    with monkeypatch.context() as old:
        old.setattr(savers, "sqlite_saver_class", lambda: old_saver)
        old.setattr(
            savers, "serializer", lambda: JsonPlusSerializer(allowed_msgpack_modules=allowed)
        )
        args = ["solve", QUESTION, "--agents", "3", "--rounds", "3", "--thread", "old"]
        code, out, err = run_cli(
            [*args, "--pause-after-round", "--json", *stub_args(stub, db)], capsys
        )
        assert code == 0, err
        assert review_request(json.loads(out)["interrupt"])["args"]["round"] == 1
    with sqlite3.connect(db) as conn:
        kinds = {t for (t,) in conn.execute("SELECT type FROM checkpoints")}
        assert kinds == {"msgpack"}  # the old format, uncompressed
        assert f"{backends.METADATA_TABLE}" not in str(
            conn.execute("SELECT name FROM sqlite_schema").fetchall()
        )

    code, out, err = run_cli(["resume", "old", "--db", str(db), "--approve", "--json"], capsys)
    assert code == 0, err
    assert review_request(json.loads(out)["interrupt"])["args"]["round"] == 2
    code, out, err = run_cli(["resume", "old", "--db", str(db), "--approve", "--json"], capsys)
    assert code == 0, err
    result = json.loads(out)
    assert result["termination_reason"] == "rounds_completed"
    assert stub.calls == 9  # no round run twice: new versions read as newer than old ones
    assert result["usage"]["calls"] == 9
    code, out, err = run_cli(["show", "old", "--db", str(db), "--json"], capsys)
    assert code == 0, err
    assert len([t for t in json.loads(out)["transcript"] if t["role"] == "agent"]) == 9
    code, out, err = run_cli(["threads", "--db", str(db), "--json"], capsys)
    assert code == 0 and json.loads(out)[0]["status"] == "finished", err
    code, out, err = run_cli(["export", "old", "--db", str(db), "--format", "json"], capsys)
    assert code == 0, err


def test_writes_table_matches_langgraphs(tmp_path: Path) -> None:
    """The ``writes`` table created ahead of LangGraph's setup has exactly its columns and key."""

    def shape(conn: sqlite3.Connection) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
        columns = conn.execute("PRAGMA table_info(writes)").fetchall()
        key = sorted((c[5], c[1]) for c in columns if c[5])
        return [c[:5] for c in columns], key

    theirs = sqlite3.connect(tmp_path / "theirs.sqlite", check_same_thread=False)
    SqliteSaver(theirs).setup()
    with open_checkpointer(tmp_path / "ours.sqlite"):
        pass
    ours = sqlite3.connect(tmp_path / "ours.sqlite")
    try:
        assert shape(ours) == shape(theirs)
    finally:
        theirs.close()
        ours.close()
