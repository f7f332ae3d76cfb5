"""What a new user met (issue 36, item 6, part A): models, endpoints, refusals, progress.

Each test drives ``debategraph`` in-process as the user did, against the stub endpoint.
Where the user ran the embedded model, the embedded server is the stub in its place
(:func:`embedded_is`): what is checked is what the CLI sends where, and refuses before.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

import debategraph.local as embedded_local
from debategraph.models import clear_model_cache
from tests.conftest import answer_18, one_error_line, run_cli, stub_args
from tests.openai_stub import StubOpenAIServer

QUESTION = "Natalia sold 48 clips in April and half as many in May. How many in total?"


def embedded_is(server: StubOpenAIServer, monkeypatch: pytest.MonkeyPatch) -> None:
    """Make the embedded model's server the stub (no llama.cpp started).

    ``--model local`` then reaches ``server`` as the embedded server: the model name
    sent there is SmolLM2's, as the real server would be sent.
    """
    fake = SimpleNamespace(
        base_url=server.url, model=SimpleNamespace(name="SmolLM2"), failure=lambda _t: None
    )
    monkeypatch.setattr("debategraph.local.shared_server", lambda *_a, **_k: fake)
    clear_model_cache()


@pytest.fixture(autouse=True)
def _no_openai_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)


def roster(path: Path, *entries: str) -> str:
    """An agents file of ``entries`` (each a YAML mapping's lines, the first its name)."""
    path.write_text("".join(f"- {e}\n" for e in entries), encoding="utf-8")
    return str(path)


def solve_args(db: Path, *extra: str) -> list[str]:
    return ["solve", QUESTION, "--rounds", "1", "--db", str(db), *extra]


# -- 1. a model name the endpoint it goes to does not serve ---------------------------------


def test_an_agent_model_sent_to_the_embedded_server_is_refused_before_the_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """``model: gpt-4o-mini`` on the embedded model: exit 2, nothing asked (was: exit 0)."""
    with StubOpenAIServer(answer_18) as embedded:
        embedded_is(embedded, monkeypatch)
        team = roster(tmp_path / "team.yaml", "name: Ada\n  model: gpt-4o-mini", "name: Bo")
        code, _, err = run_cli(solve_args(tmp_path / "d.sqlite", "--agents-file", team), capsys)
        assert not embedded.requests
    assert code == 2, err
    line = one_error_line(err)
    assert "agent 'Ada': model 'gpt-4o-mini' goes to the run's endpoint, the embedded" in line
    assert "serves only 'local'" in line and "NAME@BASE_URL" in line
    assert not (tmp_path / "d.sqlite").exists()


def test_an_agent_model_its_endpoint_does_not_list_is_refused_once_asked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """``/models`` lists ``stub`` only: ``gpt-4o-mini`` there is refused; one probe per endpoint."""
    from debategraph.models import probe

    probes: list[str] = []
    real = probe.list_models

    def counted(base_url: str, key: str | None, timeout_s: float) -> Any:
        probes.append(base_url)
        return real(base_url, key, timeout_s)

    monkeypatch.setattr(probe, "list_models", counted)
    with StubOpenAIServer(answer_18) as server:
        url = server.url
        team = roster(
            tmp_path / "team.yaml",
            f"name: Ada\n  model: stub@{server.url}",
            "name: Bo\n  model: stub",  # the run's endpoint: the same one
            f"name: Cy\n  model: gpt-4o-mini@{server.url}",
        )
        args = [*solve_args(tmp_path / "d.sqlite", "--agents-file", team)]
        code, _, err = run_cli([*args, *stub_args(server, tmp_path / "d.sqlite")], capsys)
        assert not server.requests
    assert code == 2, err
    line = one_error_line(err)
    assert f"agent 'Cy': model 'gpt-4o-mini' is not served by {url}" in line, line
    assert "which lists stub" in line
    assert probes == [url]  # one request for the endpoint all four name


def test_a_model_an_endpoint_lists_runs_and_one_without_a_list_is_not_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Listed names run; an endpoint whose ``/models`` does not answer is not refused."""
    with (
        StubOpenAIServer(answer_18, models=("stub", "big")) as listed,
        StubOpenAIServer(answer_18) as quiet,
    ):
        quiet_url = quiet.url
        quiet.stop()  # nothing answers there now: the probe fails, the run is not refused
        team = roster(
            tmp_path / "team.yaml",
            f"name: Ada\n  model: big@{listed.url}",
            "name: Bo",
        )
        args = solve_args(tmp_path / "d.sqlite", "--agents-file", team, "--json")
        code, out, err = run_cli([*args, *stub_args(listed, tmp_path / "d.sqlite")], capsys)
        assert code == 0, err
        assert {body["model"] for body in listed.requests} == {"big", "stub"}
        assert json.loads(out)["termination_reason"] == "rounds_completed"
        gone = roster(tmp_path / "gone.yaml", f"name: Ada\n  model: any@{quiet_url}", "name: Bo")
        args = solve_args(tmp_path / "e.sqlite", "--agents-file", gone)
        code, _, err = run_cli([*args, *stub_args(listed, tmp_path / "e.sqlite")], capsys)
    assert code == 1, err  # its first call says it is unreachable: resumable, not refused
    assert "is unreachable" in one_error_line(err)


# -- 2. a malformed URL ---------------------------------------------------------------------


def test_an_agent_model_with_a_malformed_url_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``model: nope@notaurl``: one line naming it (was: accepted, abstaining every round)."""
    with StubOpenAIServer(answer_18) as server:
        team = roster(tmp_path / "team.yaml", "name: Ada\n  model: nope@notaurl", "name: Bo")
        args = solve_args(tmp_path / "d.sqlite", "--agents-file", team)
        code, _, err = run_cli([*args, *stub_args(server, tmp_path / "d.sqlite")], capsys)
        assert not server.requests
    assert code == 2, err
    line = one_error_line(err)
    assert "agent 'Ada'" in line and "base URL 'notaurl'" in line
    assert "is not an http(s) URL" in line


# -- 3. tools on an agent whose calls go to the embedded model ------------------------------


@pytest.mark.parametrize(
    ("entries", "extra", "who"),
    [
        (("name: Ada\n  model: gpt-4o-mini\n  tools: [calculator]", "name: Bo"), (), "'Ada'"),
        (
            ("name: Ada\n  model: gpt-4o-mini", "name: Bo\n  model: m"),
            ("--tools", "calculator"),
            "'Ada'",
        ),
    ],
)
def test_tools_on_an_agent_whose_calls_go_to_the_embedded_model_are_refused(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    entries: tuple[str, ...],
    extra: tuple[str, ...],
    who: str,
) -> None:
    """A name without an endpoint on the embedded model has no tool calls either."""
    with StubOpenAIServer(answer_18) as embedded:
        embedded_is(embedded, monkeypatch)
        team = roster(tmp_path / "team.yaml", *entries)
        args = solve_args(tmp_path / "d.sqlite", "--agents-file", team, *extra)
        code, _, err = run_cli(args, capsys)
        assert not embedded.requests
    assert code == 2, err
    line = one_error_line(err)
    assert f"agent {who} has tools, but its calls go to the embedded model" in line, line


# -- 4. an unused OPENAI_BASE_URL -----------------------------------------------------------


def test_a_run_whose_agents_all_have_models_ignores_an_unused_openai_base_url(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """OPENAI_BASE_URL in the shell, no option typed: the run goes (was: '--base-url ...')."""
    with StubOpenAIServer(answer_18) as server, StubOpenAIServer(answer_18) as embedded:
        embedded_is(embedded, monkeypatch)
        monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
        team = roster(
            tmp_path / "team.yaml",
            f"name: Ada\n  model: stub@{server.url}",
            f"name: Bo\n  model: stub@{server.url}",
        )
        args = solve_args(tmp_path / "d.sqlite", "--agents-file", team, "--json")
        code, out, err = run_cli(args, capsys)
        assert code == 0, err
        assert len(server.requests) == 2 and not embedded.requests
    assert json.loads(out)["termination_reason"] == "rounds_completed"
    assert "--base-url" not in err


def test_a_refusal_names_openai_base_url_not_an_option_never_typed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A bad OPENAI_BASE_URL, and a model it does not list: the variable is named."""
    monkeypatch.setenv("OPENAI_BASE_URL", "notaurl")
    code, _, err = run_cli([*solve_args(tmp_path / "d.sqlite"), "--model", "m"], capsys)
    assert code == 2
    line = one_error_line(err)
    assert "OPENAI_BASE_URL 'notaurl' is not an http(s) URL" in line, line
    assert "--base-url" not in line
    with StubOpenAIServer(answer_18) as server:
        url = server.url
        monkeypatch.setenv("OPENAI_BASE_URL", url)
        code, _, err = run_cli([*solve_args(tmp_path / "d.sqlite"), "--model", "m"], capsys)
        assert not server.requests
    assert code == 2
    line = one_error_line(err)
    assert f"--model: model 'm' is not served by {url} (OPENAI_BASE_URL)" in line, line


# -- 5. an interjection no round will read --------------------------------------------------


def _history(db: Path, thread: str, capsys: pytest.CaptureFixture[str]) -> list[dict[str, Any]]:
    code, out, err = run_cli(["history", thread, "--db", str(db), "--json"], capsys)
    assert code == 0, err
    entries: list[dict[str, Any]] = json.loads(out)
    return entries


def test_fork_with_an_interjection_after_the_last_round_opened_is_refused_at_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Refused before any call (was: the rest of the debate ran, then 'not read')."""
    db = tmp_path / "d.sqlite"
    with StubOpenAIServer(answer_18) as server:
        args = ["solve", QUESTION, "--agents", "2", "--rounds", "2", "--thread", "t"]
        code, _, err = run_cli([*args, *stub_args(server, db)], capsys)
        assert code == 0, err
        entries = _history(db, "t", capsys)
        last = next(e for e in entries if e["round"] == 2 and "solver_1" in e["next"])
        server.reset_stats()
        fork = ["fork", "t", "--at", last["checkpoint_id"], "--thread", "f", "--db", str(db)]
        code, _, err = run_cli([*fork, "--interject", "Check the units."], capsys)
        assert not server.requests
        assert code == 2, err
        line = one_error_line(err)
        assert "thread t: no round would read the interjection: its last round (2)" in line
        assert "fork t --at CHECKPOINT --interject TEXT" in line
        assert "forked thread" not in err
        code, out, _ = run_cli(["threads", "--db", str(db), "--json"], capsys)
        assert [r["thread_id"] for r in json.loads(out)] == ["t"]  # no fork left behind
        # One round earlier, the last round reads it.
        boundary = next(e for e in entries if e["round"] == 1 and e["next"] == ["open_round"])
        fork[3] = boundary["checkpoint_id"]
        code, out, err = run_cli([*fork, "--interject", "Check the units.", "--json"], capsys)
        assert code == 0, err
        assert "not read" not in err
        assert sum("Check the units." in json.dumps(b) for b in server.requests) == 2


def test_resume_with_an_interjection_on_a_finished_thread_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Exit 2, one line (was: the result printed and the text silently dropped)."""
    db = tmp_path / "d.sqlite"
    with StubOpenAIServer(answer_18) as server:
        args = ["solve", QUESTION, "--agents", "2", "--rounds", "1", "--thread", "t"]
        code, _, err = run_cli([*args, *stub_args(server, db)], capsys)
        assert code == 0, err
        calls = len(server.requests)
        code, out, err = run_cli(
            ["resume", "t", "--db", str(db), "--interject", "And in June?"], capsys
        )
        assert len(server.requests) == calls
    assert code == 2, err
    line = one_error_line(err)
    assert "thread t is finished: no round would read the interjection" in line
    assert "fork t --at CHECKPOINT --interject TEXT" in line
    assert not out


# -- 6. --topology FILE and --agents ---------------------------------------------------------


def test_a_topology_file_with_a_different_agents_count_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The file names 3 solvers, --agents 4: refused (was: --agents silently ignored)."""
    topology = tmp_path / "tri.json"
    topology.write_text(json.dumps({"a": ["b"], "b": ["c"], "c": ["a"]}), encoding="utf-8")
    with StubOpenAIServer(answer_18) as server:
        args = solve_args(tmp_path / "d.sqlite", "--topology", str(topology))
        code, _, err = run_cli([*args, "--agents", "4", *stub_args(server, tmp_path / "d")], capsys)
        assert not server.requests
        assert code == 2, err
        line = one_error_line(err)
        assert f"--agents 4 and --topology {topology} disagree: the file names 3 solvers" in line
        code, out, err = run_cli(
            [*args, "--agents", "3", "--json", *stub_args(server, tmp_path / "e")], capsys
        )
    assert code == 0, err
    assert len(json.loads(out)["rounds"][0]["answers"]) == 3


# -- 7. a long eval on the embedded model: fitted to the cores, never silent, slow != dead ----


def eval_args(out: Path, *extra: str) -> list[str]:
    """The user's ``eval arithmetic`` (fewer questions), checkpoints in ``out``."""
    args = ["eval", "arithmetic", "--count", "4", "--modes", "single,vote", "--agents", "3"]
    return [*args, "--rounds", "1", "--out", str(out), *extra]


def test_an_eval_on_the_embedded_model_makes_no_more_calls_at_once_than_cores(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """2 cores: 2 slots, 2 calls at once (was: 4 questions x 3 solvers = 12 of each)."""
    slots: list[int | None] = []
    with StubOpenAIServer(answer_18, latency_s=0.05) as embedded:
        embedded_is(embedded, monkeypatch)
        fake = embedded_local.shared_server

        def started(path: Path, wanted: int | None = None) -> Any:
            slots.append(wanted)
            return fake(path, wanted)

        monkeypatch.setattr(embedded_local, "shared_server", started)
        # A 2-core machine (raising=False: the check fails, not the patch, where it is missing)
        monkeypatch.setattr("debategraph.local.usable_cores", lambda: 2, raising=False)
        code, out, err = run_cli(eval_args(tmp_path / "out", "--json"), capsys)
        assert code == 0, err
        assert embedded.max_in_flight <= 2 and len(embedded.requests) == 4 * (1 + 3)
    assert set(slots) == {2}
    assert json.loads(out)["meta"]["questions"] == 4


def test_a_long_eval_says_how_far_it_is_while_a_call_is_in_flight(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A line on stderr (not a terminal) with questions done and calls in flight."""
    import threading

    from debategraph.cli import evaluate

    seen = threading.Event()
    lines: list[str] = []
    monkeypatch.setattr(evaluate, "PROGRESS_EVERY_S", 0.01, raising=False)

    def line(text: str) -> None:
        lines.append(text)
        if "1 model call(s) in flight" in text:
            seen.set()
        evaluate.err.print(text, markup=False, highlight=False, soft_wrap=True)

    monkeypatch.setattr(evaluate, "progress_line", line, raising=False)

    held_once: list[bool] = []

    def held(request: dict[str, Any]) -> Any:
        if not held_once:  # the first call stays in flight until a line has said so
            held_once.append(seen.wait(20))
        return answer_18(request)

    with StubOpenAIServer(held) as server:
        args = [*eval_args(tmp_path / "out", "--parallel", "1", "--modes", "single")]
        code, _, err = run_cli([*args, *stub_args(server, tmp_path / "out" / "c.sqlite")], capsys)
    assert code == 0, err
    assert seen.is_set(), lines[-3:]
    flying = next(text for text in lines if "1 model call(s) in flight" in text)
    assert flying.startswith("eval: 0/4 questions done · 1 model call(s) in flight · ")
    assert flying in err.replace("\n", "")


def test_a_slow_endpoint_that_still_answers_is_not_taken_for_a_dead_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Each call outlives --timeout, the endpoint answers: recorded, the eval ends (was: exit 1)."""
    with StubOpenAIServer(answer_18, latency_s=2.0) as server:
        args = [*eval_args(tmp_path / "out", "--parallel", "1", "--modes", "single", "--json")]
        args += [*stub_args(server, tmp_path / "out" / "c.sqlite"), "--timeout", "0.3"]
        code, out, err = run_cli([*args, "--count", "2"], capsys)
        assert code == 0, err
        assert "timed out" not in err
        result = json.loads(out)
    assert result["meta"]["threads"]["started"] == 2
    with (tmp_path / "out" / "results.csv").open(encoding="utf-8") as rows:
        thread = next(csv.DictReader(rows))["thread_id"]
    db = str(tmp_path / "out" / "c.sqlite")
    code, shown, err = run_cli(["export", thread, "--db", db], capsys)
    assert code == 0, err
    assert "so it is slow, not down" in shown
