"""What a new user met, part B: wall times and what is printed (issue 36, item 6).

A thread's wall time counts the time it ran, not the gaps between runs (a resumed thread,
a fork, an eval question resumed); ``show`` of a failed thread says how long it ran and
that it failed; tables fit 80 columns; every result line is labelled; Markdown exports
render records as text; counts have proper singulars; ``doctor``'s ratio is checked for
sense. Driven as a user would: ``debategraph`` in-process against the stub endpoint.
"""

from __future__ import annotations

import contextlib
import csv
import itertools
import json
import re
import threading
import time
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

import debategraph.checkpoints.threads as threads_module
from tests.conftest import debate_reply, run_cli, stub_args
from tests.eval_data import write_gsm8k
from tests.openai_stub import StubOpenAIServer, default_responder

QUESTION = "Natalia sold clips to 48 of her friends in April, and half as many in May. Total?"
ANSWER = {"reasoning": "48 + 24 = 72", "answer": "72", "confidence": 0.9}
#: How far back the fake clock puts a first run: the gap before the next one.
GAP_S = 1_000_000.0
#: How far the fake clock of a first run moves on each reading: that run looks long.
STRETCH_S = 500.0
#: More than any run here takes by the real clock, less than one stretch.
RAN_AT_MOST_S = 120.0


@contextlib.contextmanager
def clock_behind(seconds: float, stretch_s: float = 0.0) -> Iterator[None]:
    """A fake clock, ``seconds`` behind and moving ``stretch_s`` more at each reading.

    LangGraph stamps each checkpoint (``ts``) and debategraph each run's start; both
    read this clock, so the run inside looks ``seconds`` older than the next one (a gap
    made without sleeping) and, stretched, as long as its readings make it.
    """
    import langgraph.pregel._checkpoint as pregel_checkpoint

    real_now = datetime.now
    readings = itertools.count()

    def behind() -> float:
        return seconds - stretch_s * next(readings)

    class Behind(datetime):
        @classmethod
        def now(cls, tz: Any = None) -> Any:
            return real_now(tz) - timedelta(seconds=behind())

    clock = SimpleNamespace(time=lambda: time.time() - behind())
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(pregel_checkpoint, "datetime", Behind)
        patch.setattr(threads_module, "time", clock, raising=False)
        yield


def _answer(request: dict[str, Any]) -> Any:
    if any("tools" in k for k in request) and "answer" in json.dumps(request.get("tools")):
        return ANSWER
    return default_responder(request)


def _solve(server: StubOpenAIServer, db: Path, thread: str, *extra: str) -> list[str]:
    args = ["solve", QUESTION, "--agents", "2", "--rounds", "2", "--thread", thread]
    return [*args, *stub_args(server, db), *extra]


# -- 1. a thread's wall time counts the time it ran ----------------------------------------


def test_a_resumed_thread_and_its_fork_count_only_the_time_they_ran(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "d.sqlite"
    with StubOpenAIServer(_answer) as server:
        # Round 1, then a pause; resumed GAP_S later. Its clock makes the first run long.
        with clock_behind(GAP_S, STRETCH_S):
            code, out, err = run_cli(
                _solve(server, db, "t", "--pause-after-round", "--json"), capsys
            )
        assert code == 0, err
        first = json.loads(out)
        assert first["status"] == "waiting"
        assert STRETCH_S <= first["wall_s"] < GAP_S / 2, first["wall_s"]
        code, out, err = run_cli(["resume", "t", "--approve", "--json", "--db", str(db)], capsys)
        assert code == 0, err
        resumed = json.loads(out)["wall_s"]
        # Both runs, not the gap between them (today: the gap counted, about GAP_S).
        assert first["wall_s"] < resumed < first["wall_s"] + RAN_AT_MOST_S, resumed

        code, out, _ = run_cli(["show", "t", "--json", "--db", str(db)], capsys)
        assert json.loads(out)["wall_s"] == resumed  # the same figure everywhere

        code, out, _ = run_cli(["history", "t", "--json", "--db", str(db)], capsys)
        entries = json.loads(out)
        at = next(e["checkpoint_id"] for e in entries if e["round"] == 1 and e["next"])
        code, out, err = run_cli(
            ["fork", "t", "--at", at, "--thread", "f", "--json", "--db", str(db)], capsys
        )
        assert code == 0, err
    forked = json.loads(out)["wall_s"]
    # Its own run only: not the original's first run (at least STRETCH_S), nor the time
    # since the original started (today: about GAP_S).
    assert 0 < forked < RAN_AT_MOST_S, forked


def test_prune_keeps_a_threads_wall_time(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "d.sqlite"
    with StubOpenAIServer(_answer) as server:
        with clock_behind(GAP_S, STRETCH_S):  # a long first run, then a pause
            code, _, err = run_cli(_solve(server, db, "p", "--pause-after-round"), capsys)
        assert code == 0, err
        code, out, err = run_cli(["resume", "p", "--approve", "--json", "--db", str(db)], capsys)
        assert code == 0, err
    before = json.loads(out)["wall_s"]
    code, out, _ = run_cli(["prune", "--keep-last", "1", "--json", "--db", str(db)], capsys)
    assert json.loads(out)["checkpoints_deleted"] > 0
    code, out, _ = run_cli(["show", "p", "--json", "--db", str(db)], capsys)
    assert json.loads(out)["wall_s"] == pytest.approx(before, abs=0.01)  # the first run too


def test_a_resumed_eval_question_costs_the_time_it_ran(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    dataset = write_gsm8k(tmp_path / "gsm.jsonl", 1)
    out = tmp_path / "out"
    calls = 0

    def fail_in_round_two(request: dict[str, Any]) -> Any:
        nonlocal calls
        calls += 1
        if calls == 3:  # round 1 took two calls: the rest of round 2 fails
            server.inject("5xx", 50)
        return _answer(request)

    with StubOpenAIServer(fail_in_round_two) as server:
        args = [
            "eval", "gsm8k", "--dataset", str(dataset), "--out", str(out),
            "--modes", "debate-ring", "--agents", "2", "--rounds", "2", "--json",
            *stub_args(server, out / "checkpoints.sqlite"),
        ]  # fmt: skip
        with clock_behind(GAP_S):
            code, _, err = run_cli(args, capsys)
        assert code == 1, err  # stopped in round 2: resumable
        server.clear_faults()
        code, stdout, err = run_cli(args, capsys)
        assert code == 0, err
    result = json.loads(stdout)
    assert result["meta"]["threads"]["resumed"] == 1
    assert result["modes"]
    for mode in result["modes"]:  # the s/q figures; today about 1000
        assert 0 < mode["wall_s"] < RAN_AT_MOST_S, mode
    rows = list(csv.DictReader((out / "results.csv").open(encoding="utf-8")))
    assert rows
    for row in rows:
        assert 0 < float(row["wall_s"]) < RAN_AT_MOST_S, row


# -- 6. show of a failed thread says how long it ran, and that it failed -------------------


def test_show_of_a_failed_thread_says_how_long_it_ran(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "d.sqlite"
    latency = 0.5
    with StubOpenAIServer(_answer, latency_s=latency) as server:
        server.inject("5xx", 50)  # every call fails, each after `latency`
        code, _, err = run_cli(_solve(server, db, "x"), capsys)
    assert code == 1, err
    code, out, _ = run_cli(["show", "x", "--db", str(db)], capsys)
    assert code == 0
    (line,) = [line for line in out.splitlines() if line.startswith("failed")]
    assert "0.0s" not in line, line  # today: "failed: ... · 0.0s wall so far"
    seconds = float(line.split("failed after running ")[1].split("s")[0])
    assert seconds >= latency, line
    code, out, _ = run_cli(["show", "x", "--json", "--db", str(db)], capsys)
    assert json.loads(out)["wall_s"] >= latency


# -- 3. every result line labelled ---------------------------------------------------------

#: What a result line may start with: the labels the patterns' results use.
RESULT_LABELS = ("winner ", "judge's rationale: ", "longer than asked: ", "ended: ")


def _debate(server: StubOpenAIServer, db: Path, thread: str, *extra: str) -> list[str]:
    args = ["debate", "Tea is better than coffee", "--debater", "Alice:for"]
    args += ["--debater", "Bob:against", "--rounds", "1", "--judge", "--thread", thread]
    return [*args, *extra, *stub_args(server, db)]


def test_the_judges_rationale_is_labelled(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "d.sqlite"
    with StubOpenAIServer(debate_reply) as server:
        code, out, err = run_cli(_debate(server, db, "d"), capsys)
    assert code == 0, err
    (winner,) = [line for line in out.splitlines() if line.startswith("winner ")]
    result = out.splitlines()[out.splitlines().index(winner) :]
    (rationale,) = [line for line in result if "Alice answered every point." in line]
    assert rationale.strip().startswith("judge's rationale: "), out  # today: bare
    for line in result:
        assert line.strip().startswith(RESULT_LABELS) or " · ended: " in line, line
    code, out, _ = run_cli(["show", "d", "--db", str(db)], capsys)
    assert "  judge's rationale: Alice answered every point." in out.splitlines()


# -- 5. proper singulars -------------------------------------------------------------------

#: "1 rounds", "1 votes each": a count of one with a plural word.
ONE_PLURAL = re.compile(r"(?<![\d.,])1 (rounds|votes|calls|solvers|turns|checks|questions)\b")


def test_a_count_of_one_reads_singular(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "d.sqlite"
    answers = iter(["18", "20"])

    def split_vote(request: dict[str, Any]) -> Any:  # two solvers, one vote each
        reply = _answer(request)
        return {**reply, "answer": next(answers)} if reply is ANSWER else reply

    with StubOpenAIServer(split_vote) as server:
        args = ["solve", QUESTION, "--agents", "2", "--rounds", "1", "--thread", "s"]
        code, out, err = run_cli([*args, *stub_args(server, db)], capsys)
        assert code == 0, err
        shown = out + err
        assert "(1 vote each)" in shown and ", 1 round" in shown, shown
        code, out, err = run_cli(_debate(server, db, "d"), capsys)
        assert code == 0, err
        shown += out + err
    assert "· 1 round" in shown, shown
    assert not ONE_PLURAL.search(shown), ONE_PLURAL.search(shown)


# -- 4. Markdown exports render records as text --------------------------------------------


def test_markdown_export_renders_the_verdict_and_the_moderator_as_text(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "d.sqlite"
    with StubOpenAIServer(debate_reply) as server:
        code, _, err = run_cli(_debate(server, db, "d", "--rounds", "2", "--moderator"), capsys)
    assert code == 0, err
    code, out, _ = run_cli(["export", "d", "--db", str(db), "--format", "md"], capsys)
    assert code == 0
    result = out.split("## Result\n")[1]
    assert '{"' not in result and '["' not in result and "`" not in result, result  # no JSON
    lines = [line.strip() for line in result.splitlines()]
    assert "- Rationale: Alice answered every point." in lines, result
    assert "- Debater: Bob · Argument: Coffee wakes you up." in lines, result
    (moderator,) = [line for line in lines if "Reason: Close so far." in line]
    assert "Leading: Alice" in moderator and "Round: 1" in moderator, moderator


# -- 2. the eval's tables fit 80 columns ---------------------------------------------------


def test_the_eval_tables_fit_80_columns_with_every_figure_whole(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from debategraph.cli.render import out as console

    monkeypatch.setattr(console, "width", 80)  # what a pipe gets
    dataset = write_gsm8k(tmp_path / "gsm.jsonl", 4)
    out = tmp_path / "out"
    with StubOpenAIServer(_answer) as server:
        args = [
            "eval", "gsm8k", "--dataset", str(dataset), "--out", str(out),
            "--modes", "single,vote", "--agents", "3", "--rounds", "1",
            *stub_args(server, out / "checkpoints.sqlite"),
        ]  # fmt: skip
        code, stdout, err = run_cli(args, capsys)
    assert code == 0, err
    lines = [line for line in stdout.splitlines() if not line.startswith("results: ")]
    assert max(len(line) for line in lines) <= 80, stdout
    assert "…" not in stdout, stdout  # today: `accu…`, `[0.0…`
    result = json.loads((out / "results.json").read_text(encoding="utf-8"))
    for mode in result["modes"]:
        low, high = mode["ci95"]
        assert f"{mode['accuracy']:.3f} [{low:.3f}, {high:.3f}]" in stdout, stdout
        assert f"{mode['wall_s']:.2f}" in stdout, stdout
    for header in ("accuracy (95% CI)", "Pareto", "s/q"):
        assert header.split()[0] in stdout, header


# -- 7. doctor's ratio is checked for sense ------------------------------------------------


def _doctor_measuring(
    monkeypatch: pytest.MonkeyPatch, alone: tuple[int, float], each_at_once: tuple[int, float]
) -> None:
    """``doctor``'s embedded checks on a fake server whose calls make these measurements.

    A call alone makes ``alone[0]`` tokens in ``alone[1]`` seconds; each call at once
    ``each_at_once[0]`` tokens and adds ``each_at_once[1]`` seconds (on a fake clock).
    """
    from debategraph.doctor import embedded as doctor_embedded
    from debategraph.doctor.common import Check
    from debategraph.state.records import Usage

    now = [0.0]
    lock = threading.Lock()

    class Server:
        def stop(self) -> None: ...

        def failure(self, wait_s: float) -> None:
            return None

    def text_call(binding: object, messages: object) -> Any:
        tokens, seconds = alone if binding == "alone" else each_at_once
        with lock:  # the calls at once run on threads
            now[0] += seconds
        return SimpleNamespace(usage=Usage(completion_tokens=tokens, calls=1))

    real_throughput = doctor_embedded._throughput

    def throughput(binding: Any, calls: int) -> Any:  # tells text_call which it makes
        return real_throughput("alone" if calls == 1 else "at once", calls)

    monkeypatch.setattr(doctor_embedded, "shared_server", lambda path, slots: Server())
    monkeypatch.setattr(
        doctor_embedded, "_timed_structured_call", lambda *a: Check("structured call", True, "ok")
    )
    monkeypatch.setattr(doctor_embedded, "get_chat_model", lambda spec: None)
    monkeypatch.setattr(doctor_embedded, "text_call", text_call)
    monkeypatch.setattr(doctor_embedded, "_throughput", throughput)
    monkeypatch.setattr(doctor_embedded, "time", SimpleNamespace(perf_counter=lambda: now[0]))


def _parallel_check(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    code, out, _ = run_cli(["doctor", "--json", "--db", str(tmp_path / "d.sqlite")], capsys)
    checks = {check["name"]: check for check in json.loads(out)}
    return {**checks["parallel slots"], "code": code}


def test_doctor_calls_an_impossible_ratio_unreliable(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # The call alone: 3 tokens in 2 s (a cold start); each of 4 at once: 64 in 0.5 s.
    _doctor_measuring(monkeypatch, alone=(3, 2.0), each_at_once=(64, 0.5))
    check = _parallel_check(tmp_path, capsys)
    assert not check["ok"], check  # today: passes, "4 concurrent: 85.33x the tokens/s of 1"
    assert check["detail"].startswith("measurement unreliable (2 trials): "), check
    assert "at most 4x" in check["detail"] and "3 tokens in 2.00 s" in check["detail"], check
    assert check["code"] == 1


def test_doctor_reports_a_possible_ratio(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # The call alone: 64 tokens in 1 s; each of 4 at once: 64 in 0.75 s (3 s in all).
    _doctor_measuring(monkeypatch, alone=(64, 1.0), each_at_once=(64, 0.75))
    check = _parallel_check(tmp_path, capsys)
    assert check["ok"], check
    assert check["detail"] == "4 concurrent: 1.33x the tokens/s of 1 call alone (64 -> 85 tok/s)"
