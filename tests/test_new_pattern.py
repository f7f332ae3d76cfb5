"""A sixth pattern, from the test suite, runs through the CLI untouched.

It runs, pauses after a round, takes an interjection (from ``interject`` and from
``resume --interject``), resumes, and is listed, shown and exported, without any change to
``cli/``, ``checkpoints/`` or another pattern's modules: its registry line is all it takes,
registered in-process, named in ``DEBATEGRAPH_PATTERNS`` as a plugin, or added to the
built-in list (then ``import debategraph`` exports its factory, Studio serves it, the
checkpoint allowlist holds its records, and ``langgraph.json`` must list it).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from debategraph import registry
from tests.conftest import one_error_line, run_cli, stub_args
from tests.openai_stub import StubOpenAIServer
from tests.poll_pattern import ENTRY, Tally


def panel_reply(request: dict[str, Any]) -> str:
    return "Blue, because the sky is."


@pytest.fixture(params=["registered", "plugin", "built-in"])
def poll(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The poll pattern, joined in each of the three ways a pattern joins."""
    if request.param == "registered":
        registry.register(ENTRY)
        yield
        registry.unregister(ENTRY.name)
    elif request.param == "plugin":
        monkeypatch.setenv(registry.PLUGINS_ENV, "tests.poll_pattern:ENTRY")
        yield
    else:
        monkeypatch.setattr(registry, "BUILTIN", (*registry.BUILTIN, ENTRY))
        yield


def user_prompts(server: StubOpenAIServer) -> list[str]:
    return [
        str(m.get("content"))
        for request in server.requests
        for m in request.get("messages", [])
        if m.get("role") == "user"
    ]


def test_help_lists_the_registered_pattern(poll: None, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(["--help"], capsys)
    assert code == 0
    assert "poll" in out and "A panel answers a question." in out
    code, out, _ = run_cli(["poll", "--help"], capsys)
    assert code == 0
    assert "--panellists" in out and "--pause-after-round" in out and "--db" in out


def test_run_pause_interject_resume_show_export(
    poll: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "p.sqlite"
    with StubOpenAIServer(panel_reply) as server:
        args = ["poll", "Favourite colour?", "--rounds", "3", "--pause-after-round"]
        code, out, err = run_cli(
            [*args, *stub_args(server, db, "--thread", "p1", "--json")], capsys
        )
        assert code == 0, err
        waiting = json.loads(out)
        assert waiting["status"] == "waiting"
        (action,) = waiting["interrupt"]["action_requests"]
        assert (action["name"], action["args"]["round"]) == ("round_review", 1)

        # A human interjects while it waits, then resumes: round 2 reads the text.
        code, _, err = run_cli(["interject", "p1", "Think of the sea.", "--db", str(db)], capsys)
        assert code == 0, err
        code, out, err = run_cli(["resume", "p1", "--db", str(db), "--json"], capsys)
        assert code == 0, err
        assert json.loads(out)["status"] == "waiting"  # after round 2
        assert sum("Think of the sea." in p for p in user_prompts(server)) == 2  # 2 panellists

        # resume --interject answers the pause with a second interjection.
        code, out, err = run_cli(
            ["resume", "p1", "--db", str(db), "--interject", "And of grass.", "--json"], capsys
        )
        assert code == 0, err
        result = json.loads(out)
        assert result["termination_reason"] == "rounds_completed"
        assert result["answers"] == {
            "panellist_1": "Blue, because the sky is.",
            "panellist_2": "Blue, because the sky is.",
        }
        assert result["rounds"] == 3
        assert result["answered"] == [2, 2, 2]  # its own record type, read back from SQLite
        assert result["usage"]["calls"] == 6
        last_round = user_prompts(server)[-2:]
        assert all("Think of the sea." in p and "And of grass." in p for p in last_round)

        # Finished: interject is refused like on any pattern.
        code, _, err = run_cli(["interject", "p1", "More?", "--db", str(db)], capsys)
        assert code == 2
        assert "is finished" in one_error_line(err)

    code, out, _ = run_cli(["threads", "--db", str(db), "--json"], capsys)
    [row] = json.loads(out)
    assert (row["pattern"], row["status"], row["question"]) == (
        "poll",
        "finished",
        "Favourite colour?",
    )

    code, out, _ = run_cli(["show", "p1", "--db", str(db)], capsys)
    assert "Favourite colour?" in out and "r1 user (interjection)\n    Think of the sea." in out
    assert "poll: 2 answer(s) after 3 round(s) · ended: rounds_completed" in out

    code, out, _ = run_cli(["export", "p1", "--db", str(db)], capsys)
    assert out.startswith("# Favourite colour?")
    assert "## Round 3" in out and "Blue, because the sky is." in out
    code, out, _ = run_cli(["export", "p1", "--db", str(db), "--format", "json"], capsys)
    assert json.loads(out)["question"] == "Favourite colour?"

    # prune rewrites the oldest kept checkpoint: the pattern's own records stay records.
    code, _, err = run_cli(["prune", "--keep-last", "1", "--db", str(db)], capsys)
    assert code == 0, err
    code, out, err = run_cli(["show", "p1", "--db", str(db)], capsys)  # its summary reads them
    assert code == 0, err
    assert "poll: 2 answer(s) after 3 round(s)" in out
    code, out, err = run_cli(["show", "p1", "--db", str(db), "--json"], capsys)
    assert [t["answered"] for t in json.loads(out)["tallies"]] == [2, 2, 2]

    archive = tmp_path / "p-archive.sqlite"
    import sqlite3

    with sqlite3.connect(archive) as conn:
        row = conn.execute("SELECT pattern, title, termination_reason FROM debates").fetchone()
    assert row == ("poll", "Favourite colour?", "rounds_completed")


def test_bad_setting_is_one_line(
    poll: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run_cli(
        ["poll", "Q?", "--rounds", "0", "--db", str(tmp_path / "x.sqlite")], capsys
    )
    assert code == 2
    assert one_error_line(err).endswith("rounds must be at least 1, got 0")
    assert not (tmp_path / "x.sqlite").exists()  # refused before the database is opened


def test_a_builtin_is_exported_served_and_allowlisted() -> None:
    """One registry line makes a built-in: exports, Studio, allowlist, langgraph.json."""
    import importlib

    import debategraph
    from debategraph.graphs import studio
    from debategraph.graphs.skeleton import recursion_limit

    builtin = registry.BUILTIN
    registry.BUILTIN = (*builtin, ENTRY)
    try:
        assert debategraph.build_poll is ENTRY.build()  # type: ignore[attr-defined]
        assert "build_poll" in dir(debategraph)
        assert Tally in registry.record_types()
        served = importlib.reload(studio).GRAPHS["poll"]
        assert served.name == "poll"
        # 4 nodes a round, 2 rounds, the slack, and the 2 nodes every graph runs once.
        assert recursion_limit(served) == 4 * 2 + 5 + 2
        assert registry.langgraph_json()["graphs"]["poll"] == {
            "path": "./src/debategraph/graphs/studio.py:poll",
            "description": ENTRY.description,
        }
    finally:
        registry.BUILTIN = builtin
        importlib.reload(studio)
    assert "poll" not in studio.GRAPHS


def test_plugin_that_is_not_an_entry_is_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv(registry.PLUGINS_ENV, "tests.poll_pattern:PATTERN")
    code, _, err = run_cli(["--help"], capsys)
    assert code == 2
    assert one_error_line(err).endswith(
        "DEBATEGRAPH_PATTERNS entry 'tests.poll_pattern:PATTERN' is a Pattern, "
        "not a debategraph.registry.Entry"
    )
    monkeypatch.setenv(registry.PLUGINS_ENV, "tests.nowhere:ENTRY")
    code, _, err = run_cli(["--help"], capsys)
    assert code == 2
    assert "DEBATEGRAPH_PATTERNS entry 'tests.nowhere:ENTRY' cannot be loaded: No module" in (
        one_error_line(err)
    )


def test_a_taken_name_is_refused() -> None:
    import dataclasses

    taken = dataclasses.replace(ENTRY, name="debate")
    with pytest.raises(ValueError, match="pattern 'debate' / command 'poll' is taken by 'debate'"):
        registry.register(taken)
