"""`debategraph chat` end to end against the stub server, the thread tools, and bad input."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from debategraph import recursion_limit
from debategraph.cli.patterns.group_chat import PATTERN
from debategraph.nodes.group_chat.setup import DEFAULT_AGENTS, DEFAULT_UNTIL
from debategraph.nodes.review import review_request
from debategraph.registry import entry
from tests.conftest import one_error_line, run_cli, stub_args
from tests.fake_model import ScriptedChatModel, text_reply
from tests.openai_stub import StubOpenAIServer

TASK = "Write a haiku about rain"


def chat_reply(request: dict[str, Any]) -> Any:
    """Writer drafts; the reviewer approves its second draft; a selector answers prose."""
    system = str(request["messages"][0]["content"])
    if system.startswith("You choose who speaks next"):
        return "I think the Reviewer should go next."
    name = re.search(r"You are (\w+),", system)
    who = name.group(1) if name else "?"
    drafts = sum(1 for m in request["messages"] if "Writer" in str(m.get("content", "")))
    if who == "Reviewer":
        return "APPROVED, it scans." if drafts >= 3 else "Too long: cut a syllable."
    return f"Rain on tin roofs, draft {drafts}"


@pytest.fixture
def server() -> Any:
    with StubOpenAIServer(chat_reply) as stub:
        yield stub


def test_chat_json_result_and_thread_tools(
    server: StubOpenAIServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "c.sqlite"
    args = ["chat", TASK, "--agent", "Writer: writes haiku", "--agent", "Reviewer: reviews"]
    args += ["--until", r"regex:\bAPPROVED\b@Reviewer", "--rounds", "8", "--json"]
    code, out, err = run_cli([*args, "--thread", "c", *stub_args(server, db)], capsys)
    assert code == 0, err
    result = json.loads(out)
    assert result["termination_reason"] == "matched"
    assert result["is_complete"] is True
    agents = [m["agent"] for m in result["transcript"]]
    assert agents[0] == "user" and agents[1:] == ["Writer", "Reviewer", "Writer", "Reviewer"]
    assert result["transcript"][-1]["content"] == "APPROVED, it scans."
    assert result["usage"]["calls"] == 4
    assert "Reviewer" in result["termination_detail"]

    code, out, _ = run_cli(["threads", "--db", str(db), "--json"], capsys)
    assert [(r["pattern"], r["status"]) for r in json.loads(out)] == [("group_chat", "finished")]
    code, out, _ = run_cli(["show", "c", "--db", str(db)], capsys)
    assert code == 0 and "APPROVED" in out
    code, out, _ = run_cli(["export", "c", "--db", str(db)], capsys)
    assert code == 0 and "Rain on tin roofs" in out


def test_chat_llm_selection_reads_prose_and_agents_file(
    server: StubOpenAIServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    agents = tmp_path / "agents.yaml"
    agents.write_text(
        "agents:\n  - name: Writer\n    instructions: writes haiku\n  - Reviewer: reviews\n"
    )
    db = tmp_path / "c.sqlite"
    args = ["chat", TASK, "--agents-file", str(agents), "--select", "llm", "--first", "writer"]
    args += ["--until", "regex:APPROVED@Reviewer", "--rounds", "3", "--json"]
    code, out, err = run_cli([*args, *stub_args(server, db)], capsys)
    assert code == 0, err
    result = json.loads(out)
    methods = [s["method"] for s in result["selections"]]
    assert methods[0] == "initial" and set(methods[1:]) == {"llm"}
    assert result["termination_reason"] == "max_turns"  # the reviewer spoke only after draft 1


def test_default_chat_is_a_writer_and_a_reviewer(
    server: StubOpenAIServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run_cli(["chat", TASK, *stub_args(server, tmp_path / "c.sqlite")], capsys)
    assert code == 0, err
    assert "Writer, Reviewer, sequential selection until regex" in err
    assert "matched" in out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["chat", "  "], "task is empty"),
        (["chat", TASK, "--agent", "Solo: alone"], "a group chat needs at least 2 agents, got 1"),
        (["chat", TASK, "--agent", "A: x", "--agent", "a: y"], "duplicate agent name 'a'"),
        (["chat", TASK, "--first", "Nobody"], "initial agent 'Nobody' is not an agent"),
        (["chat", TASK, "--until", "regex:(@Reviewer"], "does not compile"),
        (["chat", TASK, "--until", "regex:x@Nobody"], "'Nobody' is not an agent"),
        (["chat", TASK, "--until", "nope"], "must be regex:PATTERN"),
        (["chat", TASK, "--rounds", "0"], "--rounds must be at least 1"),
        (["chat", TASK, "--max-turns", "0"], "--rounds must be at least 1"),
        (
            ["chat", TASK, "--rounds", "2", "--max-turns", "3"],
            "--max-turns is the old name of --rounds: give only --rounds",
        ),
        (["chat", TASK, "--time-limit", "0"], "--time-limit"),
        (["chat", TASK, "--max-in-a-row", "0"], "max in a row must be at least 1"),
        (["chat", TASK, "--select", "random"], "random"),
    ],
)
def test_bad_input_is_one_line_exit_2_and_writes_nothing(
    args: list[str],
    message: str,
    server: StubOpenAIServer,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    db = tmp_path / "c.sqlite"
    code, _, err = run_cli([*args, *stub_args(server, db)], capsys)
    assert code == 2
    assert message in one_error_line(err)
    assert server.requests == []


@pytest.mark.parametrize(
    ("text", "suffix", "message"),
    [
        ("- 'Writer: w'\n- Reviewer: says: no\n", ".yaml", "not valid YAML at line 2"),
        ('[{"name": "A"},\n {"name": }]', ".json", "not valid JSON at line 2"),
        ("just a string", ".yaml", "expected a list of agents"),
        ("- {instructions: x}\n- B: y\n", ".yaml", "line 1: field 'name' is missing"),
    ],
)
def test_bad_agents_file(
    text: str,
    suffix: str,
    message: str,
    server: StubOpenAIServer,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    path = tmp_path / f"agents{suffix}"
    path.write_text(text)
    code, _, err = run_cli(
        ["chat", TASK, "--agents-file", str(path), *stub_args(server, tmp_path / "c.sqlite")],
        capsys,
    )
    assert code == 2
    assert message in one_error_line(err)


def test_missing_agents_file(
    server: StubOpenAIServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run_cli(
        ["chat", TASK, "--agents-file", "nope.yaml", *stub_args(server, tmp_path / "c.sqlite")],
        capsys,
    )
    assert code == 2 and "--agents-file nope.yaml: no such file" in one_error_line(err)


def test_chat_pause_resume_interject_and_fork(
    server: StubOpenAIServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = str(tmp_path / "c.sqlite")
    args = ["chat", TASK, "--rounds", "6", "--pause-after-round", "--thread", "p", "--json"]
    code, out, err = run_cli([*args, *stub_args(server, db)], capsys)
    assert code == 0, err
    waiting = json.loads(out)
    assert waiting["status"] == "waiting"
    assert review_request(waiting["interrupt"])["args"]["speaker"] == "Writer"
    code, out, err = run_cli(
        ["resume", "p", "--db", db, "--interject", "Use the word petrichor.", "--json"], capsys
    )
    assert code == 0, err
    assert json.loads(out)["status"] == "waiting"
    reviewer = json.dumps(server.requests[-1]["messages"])
    assert "Use the word petrichor." in reviewer
    while json.loads(out).get("status") == "waiting":
        code, out, err = run_cli(["resume", "p", "--db", db, "--approve", "--json"], capsys)
        assert code == 0, err
    assert json.loads(out)["termination_reason"] == "matched"

    code, out, _ = run_cli(["history", "p", "--db", db, "--json"], capsys)
    turn_two = [e for e in json.loads(out) if list(e["next"]) == ["open_round"] and e["round"] == 1]
    assert turn_two, out
    code, out, err = run_cli(
        ["fork", "p", "--at", turn_two[0]["checkpoint_id"], "--thread", "f", "--db", db, "--json"],
        capsys,
    )
    assert code == 0, err
    forked = json.loads(out)
    assert forked["thread_id"] == "f"
    code, out, _ = run_cli(["threads", "--db", db, "--json"], capsys)
    statuses = {r["thread_id"]: r["status"] for r in json.loads(out)}
    assert statuses["p"] == "finished" and statuses["f"] in {"finished", "waiting"}


def test_command_launches_with_the_factorys_settings() -> None:
    launch = PATTERN.command(
        TASK, agent=["Ann: writes", "Bob: reviews"], rounds=3, time_limit="90s", max_in_a_row=1
    )
    assert launch.input == {"task": TASK}
    assert (launch.settings["max_rounds"], launch.settings["time_limit_s"]) == (3, 90.0)
    assert launch.settings["until"] == [] and launch.notes == ()
    assert PATTERN.described.describe(launch.settings) == (
        "Ann, Bob, sequential selection, at most 1 in a row until timeout:90s, at most 3 turns"
    )
    defaults = PATTERN.command(TASK)
    assert defaults.settings["agents"] == list(DEFAULT_AGENTS)
    assert defaults.settings["until"] == list(DEFAULT_UNTIL)
    assert defaults.settings["max_rounds"] == 10 and "time_limit_s" not in defaults.settings
    # The settings (plus the CLI's pause_after_round) are build_group_chat's keyword arguments.
    model = ScriptedChatModel(respond=lambda messages: text_reply("more"))
    builder = entry("group_chat").build()(model, **launch.settings, pause_after_round=False)
    out = builder.compile().invoke(launch.input, {"recursion_limit": recursion_limit(builder)})
    assert (out["termination_reason"], len(out["selections"])) == ("max_turns", 3)
    assert PATTERN.described.agents_per_round(launch.settings) == 1


def test_max_turns_is_a_hidden_deprecated_alias_of_rounds(
    server: StubOpenAIServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    launch = PATTERN.command(TASK, max_turns=2)
    assert launch.settings["max_rounds"] == 2
    assert launch.notes == ("--max-turns is deprecated: use --rounds",)
    args = ["chat", TASK, "--until", "regex:NEVER@Reviewer", "--max-turns", "2", "--json"]
    code, out, err = run_cli([*args, *stub_args(server, tmp_path / "c.sqlite")], capsys)
    assert code == 0, err
    assert "note: --max-turns is deprecated: use --rounds" in err
    result = json.loads(out)
    assert (result["termination_reason"], result["turns"]) == ("max_turns", 2)
    code, out, _ = run_cli(["chat", "--help"], capsys)
    assert code == 0 and "--rounds" in out and "--time-limit" in out
    assert "--max-turns" not in out
