"""What the patterns print is true (issue 20, items 7 and 8), through the CLI on the stub.

A fallback (a judge's unknown winner, a selector's unusable answer, a controller or a chair
that gave nothing usable) says so beside the result it made, on the run's screen and in
``show``; ``--help`` shows no ``<bool>`` beside a flag; ``eval --rounds 1`` says its debate
modes are plain votes; a debate turn longer than ``--words`` shows its length.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import run_cli, stub_args
from tests.eval_data import write_gsm8k
from tests.openai_stub import StubOpenAIServer, schema_of

TOPIC = "Tea is better than coffee"
#: A debater's turn of 60 words.
LONG_TURN = " ".join(["steep"] * 60)


def system_of(request: dict[str, Any]) -> str:
    """The request's system message."""
    return str(request["messages"][0].get("content", ""))


def run_and_show(
    args: list[str], server: StubOpenAIServer, db: Path, capsys: pytest.CaptureFixture[str]
) -> tuple[str, str, str]:
    """Run a pattern command on the stub, then ``show`` its thread: (stdout, stderr, show)."""
    code, out, err = run_cli([*args, "--thread", "t", *stub_args(server, db)], capsys)
    assert code == 0, err
    code, shown, show_err = run_cli(["show", "t", "--db", str(db)], capsys)
    assert code == 0, show_err
    return out, err, shown


def flat(text: str) -> str:
    """Rich's output with every run of whitespace (wrapping included) as one space."""
    return " ".join(text.split())


# -- 7. every fallback is visible where its result is --------------------------------------


def judge_names(winner: str) -> Any:
    """Debaters argue briefly; the moderator and the judge both name ``winner``."""

    def reply(request: dict[str, Any]) -> Any:
        name = schema_of(request)
        if name == "ModeratorDecision":
            return {"settled": False, "leading": winner, "reason": "Close so far."}
        if name == "Verdict":
            return {
                "winner": winner,
                "scores": [],
                "rationale": "Zed argued best.",
                "strongest": [],
            }
        return "Tea calms the mind."

    return reply


def test_a_judge_naming_nobody_is_a_visible_fallback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["debate", TOPIC, "--rounds", "2", "--moderator", "--judge"]
    with StubOpenAIServer(judge_names("Zed")) as server:
        out, err, shown = run_and_show(args, server, tmp_path / "d.sqlite", capsys)
    why = "winner tie (fallback: the judge named 'Zed', not a debater)"
    assert why in flat(out)  # the result line
    assert f"judge: {why}" in flat(err)  # the progress line
    assert "leading tie (fallback: the moderator named 'Zed', not a debater)" in flat(err)
    assert why in flat(shown)  # show prints the same headline


def test_a_judge_that_names_a_debater_or_a_tie_is_no_fallback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for winner, shown_as in (("Negative", "winner Negative"), ("tie", "winner tie")):
        db = tmp_path / f"{winner}.sqlite"
        with StubOpenAIServer(judge_names(winner)) as server:
            args = ["debate", TOPIC, "--rounds", "1", "--judge"]
            code, out, err = run_cli([*args, *stub_args(server, db)], capsys)
        assert code == 0, err
        assert shown_as in flat(out)
        assert "fallback" not in out + err


def test_a_judge_without_usable_output_is_a_visible_fallback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    def reply(request: dict[str, Any]) -> Any:
        return "Alice wins, obviously." if schema_of(request) else "Tea calms the mind."

    args = ["debate", TOPIC, "--rounds", "1", "--judge"]
    with StubOpenAIServer(reply) as server:
        out, err, shown = run_and_show(args, server, tmp_path / "d.sqlite", capsys)
    for screen in (out, shown):
        assert re.search(r"winner tie \(fallback: invalid output after \d attempt", flat(screen))
    assert "judge: winner tie (fallback: invalid output" in flat(err)


def chat_reply(request: dict[str, Any]) -> Any:
    """The selector names nobody in the chat; the agents talk."""
    if system_of(request).startswith("You choose who speaks next"):
        return "Zed"
    return "Rain on tin roofs."


def test_selector_fallbacks_are_shown_with_the_speaker_they_picked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["chat", "Write a haiku", "--select", "llm", "--rounds", "3"]
    with StubOpenAIServer(chat_reply) as server:
        out, err, shown = run_and_show(args, server, tmp_path / "c.sqlite", capsys)
    picked = "Writer (fallback: selector answered 'Zed', not an agent: Writer (next in sequence))"
    assert f"select: {picked}" in flat(err)
    for screen in (out, shown):
        assert f"speaker of turn 1: {picked}" in flat(screen)
        assert "speaker of turn 2: Reviewer (fallback: selector answered 'Zed'" in flat(screen)


def meeting_reply(request: dict[str, Any]) -> Any:
    """Speakers talk; the controller and the chair never give a usable decision."""
    if schema_of(request) in ("RoundDecision", "FinalDecision"):
        return "Let us decide later."
    return "I make a point."


def test_controller_and_chair_fallbacks_are_shown_with_their_result(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with StubOpenAIServer(meeting_reply) as server:
        out, err, shown = run_and_show(["meeting", TOPIC], server, tmp_path / "m.sqlite", capsys)
    decision = "decision none (fallback: the chair gave no usable decision: invalid output"
    controller = (
        "stage discussion, round 1/2: next_stage (fallback: the controller gave no usable "
        "decision: invalid output"
    )
    for screen in (out, shown):
        assert decision in flat(screen)
        assert controller in flat(screen)
    assert f"chair: {decision}" in flat(err)
    assert "controller → stage summary (fallback: invalid output" in flat(err)


def test_meeting_json_names_why_the_decision_is_none(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with StubOpenAIServer(meeting_reply) as server:
        db = tmp_path / "m.sqlite"
        code, out, err = run_cli(["meeting", TOPIC, "--json", *stub_args(server, db)], capsys)
    assert code == 0, err
    result = json.loads(out)
    assert result["decision"] is None
    assert result["decision_fallback"].startswith("the chair gave no usable decision: invalid")


# -- 8. --help, eval --rounds 1, --words ------------------------------------------------------


@pytest.mark.parametrize("command", [[], ["solve"], ["threads"], ["debate"], ["eval", "gsm8k"]])
def test_help_shows_no_type_beside_a_flag(
    command: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run_cli([*command, "--help"], capsys)
    assert code == 0, err
    assert "--help" in out
    assert "<bool>" not in out
    if command == ["threads"]:
        assert re.search(r"--json +Print one JSON object", out)
        assert re.search(r"--db +<str> +Checkpoint database", out)  # options with a value keep it


def eval_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], rounds: str
) -> tuple[str, dict[str, Any]]:
    """``eval gsm8k`` of 2 questions in every mode: (stderr, results.json)."""
    dataset = write_gsm8k(tmp_path / "gsm.jsonl", 2)
    out_dir = tmp_path / f"out-{rounds}"

    def reply(request: dict[str, Any]) -> Any:
        return {"reasoning": "It adds up.", "answer": "18", "confidence": 0.9}

    with StubOpenAIServer(reply) as server:
        args = ["eval", "gsm8k", "--dataset", str(dataset), "--out", str(out_dir)]
        args += ["--rounds", rounds, "--agents", "2", "--parallel", "2"]
        code, _, err = run_cli([*args, *stub_args(server, out_dir / "c.sqlite")], capsys)
    assert code == 0, err
    return err, json.loads((out_dir / "results.json").read_text(encoding="utf-8"))


def test_eval_with_one_round_says_its_debates_are_votes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    err, results = eval_run(tmp_path, capsys, "1")
    note = [line for line in err.splitlines() if line.startswith("note: --rounds 1")]
    assert len(note) == 1, err
    assert "debate-ring and debate-full are plain majority votes" in note[0]
    assert results["meta"]["plain_vote_modes"] == ["debate-ring", "debate-full"]
    assert results["meta"]["notes"] == [note[0].removeprefix("note: ")]

    err, results = eval_run(tmp_path, capsys, "2")
    assert "plain majority" not in err
    assert (results["meta"]["plain_vote_modes"], results["meta"]["notes"]) == ([], [])


def test_a_turn_longer_than_asked_shows_its_length(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    def reply(request: dict[str, Any]) -> Any:
        long = system_of(request).startswith("You are Affirmative")
        return LONG_TURN if long else "Coffee wakes you up and tastes better."

    args = ["debate", TOPIC, "--rounds", "1", "--words", "40"]
    with StubOpenAIServer(reply) as server:
        out, err, shown = run_and_show(args, server, tmp_path / "d.sqlite", capsys)
    assert "Affirmative (60 words; asked for 40)" in flat(err)  # beside the streamed turn
    assert "Negative (" not in err  # within its limit: nothing to say
    for screen in (out, shown):
        (line,) = [x for x in screen.splitlines() if "longer than asked" in x]
        assert flat(line) == "longer than asked: r1 Affirmative (60 words; asked for 40)"
