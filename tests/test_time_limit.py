"""A time limit bounds a run's wall time (issue 20, item 2).

Every model call of every node goes through one driver (``models/steps.py``) that takes
the run's deadline (a state key written when the run starts): a call in flight when it
passes is cancelled, none starts after it, each is recorded as its call's fallback with
the reason, and the round's close ends the run ``time_limit``. Here every reply of the
stub server takes a minute, so a run that waited for its calls would take minutes; with
``--time-limit 3s`` it ends within seconds, finished, with the reason recorded.

On the code before the fix these runs wait out each call (the limit was only checked
between rounds): ``@pytest.mark.timeout`` fails them instead of letting them run on.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Generator
from pathlib import Path
from typing import Any

import pytest
from langchain_core.runnables import RunnableLambda

from tests.conftest import one_error_line, run_cli, stub_args
from tests.openai_stub import StubOpenAIServer

#: Seconds each stub reply takes: far longer than the limit.
pytestmark = pytest.mark.slow  # runs into real time limits: make test-fast leaves it out

SLOW_S = 60.0
#: The per-request client timeout: longer than a reply, so only the time limit cuts it.
REQUEST_TIMEOUT = ["--timeout", "120"]
#: Generous: the limit is 3 s and the run ends a few seconds after it; the old code
#: needs at least one whole reply (60 s).
WALL_BOUND_S = 40.0

PAPER = """# Sparse Debate Helps

## Abstract
We show that sparse communication topologies improve multi-agent debate.

## Method
Agents on a ring read only their neighbours.
"""


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Reports a command writes by default (``discussion-<thread>.md``) go to tmp_path."""
    monkeypatch.chdir(tmp_path)


def _run_limited(
    argv: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> tuple[dict[str, Any], Path, float]:
    """Run a command against a stub whose replies take a minute; its result and db."""
    db = tmp_path / "t.sqlite"
    with StubOpenAIServer(latency_s=SLOW_S) as server:
        started = time.monotonic()
        code, out, err = run_cli(
            [*argv, "--json", *stub_args(server, db), *REQUEST_TIMEOUT], capsys
        )
        wall = time.monotonic() - started
    assert code == 0, err
    return json.loads(out), db, wall


def _show(thread: str, db: Path, capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    code, out, err = run_cli(["show", thread, "--db", str(db), "--json"], capsys)
    assert code == 0, err
    shown: dict[str, Any] = json.loads(out)
    return shown


def _reasons(shown: dict[str, Any]) -> list[str]:
    """The reasons recorded on the thread's turns."""
    return [str(t.get("reason")) for t in shown.get("transcript") or () if t.get("reason")]


def _check_finished_on_time_limit(
    result: dict[str, Any], db: Path, wall: float, capsys: pytest.CaptureFixture[str]
) -> dict[str, Any]:
    assert result["termination_reason"] == "time_limit", result
    assert wall < WALL_BOUND_S, f"the run took {wall:.1f} s"
    shown = _show(result["thread_id"], db, capsys)
    assert shown["status"] == "finished", shown["status"]
    reasons = _reasons(shown)
    assert any("time limit reached: call cancelled after" in r for r in reasons), reasons
    # resuming the finished thread says so (and changes nothing)
    code, _, err = run_cli(["resume", result["thread_id"], "--db", str(db)], capsys)
    assert code == 0, err
    assert "already finished" in err
    return shown


@pytest.mark.timeout(60)
def test_discuss_time_limit_cancels_calls_in_flight(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    paper = tmp_path / "paper.md"
    paper.write_text(PAPER)
    argv = ["discuss", str(paper), "--rounds", "1", "--time-limit", "3s"]
    argv += ["--report", str(tmp_path / "report.md")]
    result, db, wall = _run_limited(argv, tmp_path, capsys)
    shown = _check_finished_on_time_limit(result, db, wall, capsys)
    # the calls after the deadline were not made, and say so
    assert any("call not made" in r for r in _reasons(shown)), _reasons(shown)


@pytest.mark.timeout(60)
@pytest.mark.parametrize("limit", [["--time-limit", "3s"], ["--until", "timeout:3s"]])
def test_chat_time_limit_cancels_calls_in_flight(
    limit: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["chat", "Write a haiku about tea.", "--rounds", "4", *limit]
    result, db, wall = _run_limited(argv, tmp_path, capsys)
    _check_finished_on_time_limit(result, db, wall, capsys)


@pytest.mark.timeout(60)
def test_meeting_time_limit_cancels_calls_in_flight(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["meeting", "Adopt a four-day week?", "--time-limit", "3s"]
    result, db, wall = _run_limited(argv, tmp_path, capsys)
    _check_finished_on_time_limit(result, db, wall, capsys)
    assert result["decision"] is None  # the chair's call was not made either


@pytest.mark.timeout(60)
@pytest.mark.parametrize(
    "argv",
    [
        ["debate", "Tea beats coffee.", "--rounds", "2", "--judge"],
        ["solve", "What is 2 + 3?", "--agents", "2", "--rounds", "2"],
    ],
)
def test_debate_and_solve_time_limit(
    argv: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    result, db, wall = _run_limited([*argv, "--time-limit", "3s"], tmp_path, capsys)
    _check_finished_on_time_limit(result, db, wall, capsys)


@pytest.mark.parametrize("command", ["discuss", "chat", "meeting", "debate", "solve"])
@pytest.mark.parametrize("value", ["0", "-5", "abc", "inf"])
def test_bad_time_limit_is_one_line(
    command: str, value: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    paper = tmp_path / "paper.md"
    paper.write_text(PAPER)
    subject = {"discuss": str(paper), "solve": "2 + 3?"}.get(command, "a topic")
    with StubOpenAIServer() as server:  # never the embedded model, whatever the code does
        code, _, err = run_cli(
            [command, subject, f"--time-limit={value}", *stub_args(server, tmp_path / "t.db")],
            capsys,
        )
        assert server.calls == 0
    assert code == 2, err
    line = one_error_line(err)
    assert f"'{value}'" in line and "--time-limit" in line and "90s" in line, line


def test_bad_until_timeout_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with StubOpenAIServer() as server:
        code, _, err = run_cli(
            ["chat", "a task", "--until", "timeout:soon", *stub_args(server, tmp_path / "t.db")],
            capsys,
        )
    assert code == 2, err
    line = one_error_line(err)
    assert "timeout:soon" in line and "90s" in line, line


# -- the driver, sync and async ---------------------------------------------------------


def _one_call(seen: list[str]) -> Generator[Any, Any, str]:
    """Steps of one call: the reply, or what the driver threw into them."""
    from debategraph.models.steps import TimeLimitReached

    try:
        reply = yield RunnableLambda(_slow_sync, afunc=_slow_async), "prompt"
    except TimeLimitReached as exc:
        seen.append(str(exc))
        return "fallback"
    return str(reply)


def _slow_sync(prompt: str) -> str:
    return f"reply to {prompt}"


async def _slow_async(prompt: str) -> str:
    await asyncio.sleep(SLOW_S)
    return f"reply to {prompt}"


def test_sync_driver_makes_no_call_past_the_deadline() -> None:
    from debategraph.models.steps import run_steps

    seen: list[str] = []
    assert run_steps(_one_call(seen), deadline=time.time() - 1) == "fallback"
    assert seen == ["time limit reached: call not made (past the run's deadline)"]
    # before the deadline (or without one) the call is made as before
    assert run_steps(_one_call(seen), deadline=time.time() + 60) == "reply to prompt"
    assert run_steps(_one_call(seen)) == "reply to prompt"


@pytest.mark.timeout(30)
def test_async_driver_cancels_the_call_in_flight_at_the_deadline() -> None:
    from debategraph.models.steps import arun_steps

    seen: list[str] = []
    result = asyncio.run(arun_steps(_one_call(seen), deadline=time.time() + 0.5))
    assert result == "fallback"
    assert len(seen) == 1 and seen[0].startswith("time limit reached: call cancelled after")
    seen.clear()
    assert asyncio.run(arun_steps(_one_call(seen), deadline=time.time() - 1)) == "fallback"
    assert seen == ["time limit reached: call not made (past the run's deadline)"]


def test_calls_record_the_deadline_as_their_fallback() -> None:
    """``structured_steps``/``text_steps`` turn the deadline into a recorded fallback."""
    from pydantic import BaseModel

    from debategraph.models import bind_model, run_steps, structured_steps, text_steps
    from tests.fake_model import ScriptedChatModel, text_reply

    class Answer(BaseModel):
        answer: str

    model = bind_model(ScriptedChatModel(responses=[text_reply("never sent")]))
    past = time.time() - 1
    structured = run_steps(structured_steps(model, Answer, []), deadline=past)
    assert structured.value is None and structured.attempts == 0
    assert structured.reason is not None and "not made" in structured.reason
    text = run_steps(text_steps(model, []), deadline=past)
    assert text.text == "" and text.attempts == 0 and text.usage.calls == 0
    assert text.reason is not None and "not made" in text.reason


def test_a_round_closed_past_the_deadline_ends_time_limit() -> None:
    """The shared close (``ended``): past the deadline, ``time_limit`` wins over what fired."""
    from debategraph.nodes.rounds import ended, start_clock

    past = start_clock(1.0, started_at=time.time() - 5)
    assert ended(past, "converged") == "time_limit"
    assert ended(past, None) == "time_limit"
    assert ended({**past, "termination_reason": "stopped"}, None) == "stopped"
    assert ended(start_clock(60.0), "converged") == "converged"
    assert ended(start_clock(None), None) is None


def test_a_chat_deadline_comes_from_a_bounding_timeout() -> None:
    from debategraph.strategies.termination import max_turns, regex, time_limit, timeout

    assert time_limit(timeout(5)) == 5
    assert time_limit(regex("done") | timeout(9) | max_turns(3) | timeout(5)) == 5
    assert time_limit(regex("done") & timeout(5)) is None  # the regex may never match
    assert time_limit(max_turns(3)) is None
