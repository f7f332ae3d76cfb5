"""Shared fixtures: the OpenAI-compatible stub server and a solver responder."""

from __future__ import annotations

import contextlib
import io
import os
import re
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from debategraph.cli import main
from tests.backends import checkpoint_url, missing_part, saver
from tests.browser import Browser, chromium_path, start_chromium
from tests.openai_stub import StubOpenAIServer, default_responder

os.environ.setdefault("LANGGRAPH_CLI_NO_ANALYTICS", "1")
if os.environ.get("PYTEST_XDIST_WORKER"):
    # Beside three other workers, an embedded server decoding on every core waits on the
    # one another process holds: a token took ten times as long (tests/groups.py).
    os.environ.setdefault("DEBATEGRAPH_LOCAL_THREADS", "1")

__all__ = ["checkpoint_url", "saver"]  # the backend fixtures, shared by every test module


def solver_of(request: dict[str, Any]) -> str:
    """The solver a chat request is for (named in its system message)."""
    for message in request.get("messages", []):
        if message.get("role") == "system":
            found = re.search(r"You are (\S+),", str(message.get("content", "")))
            if found:
                return found.group(1)
    return "?"


DEBATE_ARGUMENT = "Tea calms the mind and keeps you hydrated; coffee spikes anxiety and crashes."


def debate_reply(request: dict[str, Any]) -> Any:
    """Debaters argue; the moderator keeps it open; the judge misspells Alice."""
    tools = request.get("tools") or []
    name = tools[0]["function"]["name"] if tools else None
    if name == "ModeratorDecision":
        return {"settled": False, "leading": "alcie", "reason": "Close so far."}
    if name == "Verdict":
        return {
            "winner": "Alcie",  # misspelt: fuzzy-matched to Alice
            "scores": [{"debater": "Alice", "criterion": "evidence", "score": 8}],
            "rationale": "Alice answered every point.",
            "strongest": [{"debater": "Bob", "argument": "Coffee wakes you up."}],
        }
    return DEBATE_ARGUMENT


def answer_18(request: dict[str, Any]) -> dict[str, Any]:
    """Every solver answers 18."""
    return {
        "reasoning": f"{solver_of(request)}: 48/2 = 24, no, 18.",
        "answer": "18",
        "confidence": 0.9,
    }


def solvers_answer_18(request: dict[str, Any]) -> Any:
    """Solvers answer 18; every other call gets what its schema asks for."""
    if solver_of(request).startswith("solver_"):
        return answer_18(request)
    return default_responder(request)


@pytest.fixture(scope="session")
def browser() -> Iterator[Browser]:
    """One headless Chromium for the session (per xdist worker), shut down at its end.

    Skipped where Debian's ``chromium`` is not installed, failed where the real parts are
    required (:func:`tests.backends.missing_part`), as PostgreSQL is.
    """
    binary = chromium_path()
    if binary is None:
        missing_part("chromium is not installed", "apt-get install chromium; .ci/run does")
    with start_chromium(binary) as running:
        yield running


@pytest.fixture
def stub() -> Iterator[StubOpenAIServer]:
    """A running stub server whose solvers all answer 18."""
    with StubOpenAIServer(answer_18) as server:
        yield server


@pytest.fixture
def fresh_paces() -> Iterator[None]:
    """What endpoints told this process to wait, forgotten before and after the test.

    Fakes and stubs share endpoint names between tests; a resume in a new process
    knows nothing of what the last one was told either.
    """
    from debategraph.models.pacing import forget_paces

    forget_paces()
    yield
    forget_paces()


def run_cli(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exit_info:
        main(args)
    captured = capsys.readouterr()
    code = exit_info.value.code
    return (code if isinstance(code, int) else 0), captured.out, captured.err


def cli(*args: str) -> str:
    """Run ``debategraph ARGS`` in this process (no fixture needed); fail unless it exits 0.

    Returns:
        What it printed on stdout.
    """
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            main(list(args))
        except SystemExit as stop:
            code = stop.code
        else:
            code = 0
    assert code in (0, None), f"debategraph {' '.join(args)}: exit {code}\n{err.getvalue()}"
    return out.getvalue()


def stub_args(server: StubOpenAIServer, db: Path | str, *extra: str) -> list[str]:
    return [
        "--model",
        "stub",
        "--base-url",
        server.url,
        "--db",
        str(db),
        "--max-retries",
        "0",
        *extra,
    ]


def one_error_line(err: str) -> str:
    lines = [line for line in err.splitlines() if line.startswith("debategraph: error:")]
    assert len(lines) == 1, err
    assert "Traceback" not in err
    return lines[0]


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Refuse a test that would run on a worker of its own where it must share one.

    The suite runs with ``-n 4 --dist loadgroup``: the embedded model's tests, and a
    module's tests that share a module-scoped fixture of ours (a server started once per
    module), each need an ``xdist_group`` mark (:mod:`tests.groups`), set where the test is
    written: xdist reads marks into node ids before a hook could add one.
    """
    for item in items:
        grouped = item.get_closest_marker("xdist_group") is not None
        info = getattr(item, "_fixtureinfo", None)
        defs = info.name2fixturedefs.values() if info is not None else ()
        shared = [d for chain in defs for d in chain if d.scope in ("module", "session")]
        needs = item.get_closest_marker("embedded") is not None or any(
            d.func.__module__.startswith("tests.") for d in shared
        )
        if needs and not grouped:
            raise pytest.UsageError(
                f"{item.nodeid} needs an xdist_group mark (tests/groups.py): it runs the "
                "embedded model or shares a module-scoped fixture"
            )
    # The longest chains first (``--no-loadscope-reorder`` keeps this order): the embedded
    # model's tests, then the servers' modules; single tests fill the workers around them.
    items.sort(key=_start_order)


def _start_order(item: pytest.Item) -> int:
    group = item.get_closest_marker("xdist_group")
    if group is None:
        return len(FIRST)
    name = str(group.args[0])
    return FIRST.index(name) if name in FIRST else len(FIRST) - 1


#: Groups in the order they start (any other group after them, before single tests).
FIRST = [
    "embedded-a",
    "embedded-b",
    "tests.test_serve_safety",
    "tests.test_serve",
    "tests.test_studio",
    "*",
]


def pytest_configure(config: pytest.Config) -> None:
    """Rewrite the test modules' asserts once, in the controller, before the workers start.

    Each worker would otherwise rewrite every test module itself (about 5 s of CPU each,
    all four at once at the start): pytest caches a rewritten module beside it, but the
    workers start together, before any has written one, and where ``PYTHONDONTWRITEBYTECODE``
    is set none is ever written. The controller writes the cache here; pytest reads it in
    every worker (and in the pytest runs tests start) whether or not it may write. A folder
    it cannot write leaves each worker rewriting, as before.
    """
    if hasattr(config, "workerinput") or not config.getoption("numprocesses", None):
        return
    # pytest's own cache of rewritten modules (pytest is pinned below 9.2 in pyproject.toml).
    from _pytest.assertion import rewrite

    state = config.stash[rewrite.assertstate_key]
    for path in sorted(Path(__file__).parent.glob("test_*.py")):
        cache = rewrite.get_cache_dir(path)
        pyc = cache / (path.name[:-3] + rewrite.PYC_TAIL)
        if rewrite._read_pyc(path, pyc, state.trace) is not None:
            continue  # an earlier run's, still current
        if not rewrite.try_makedirs(cache):
            return
        source_stat, code = rewrite._rewrite_test(path, config)
        rewrite._write_pyc(state, code, source_stat, pyc)


@pytest.hookimpl(trylast=True)  # after xdist's worker has written the groups into node ids
def pytest_collection_finish(session: pytest.Session) -> None:
    """Refuse to run where xdist ignores the groups (see the pytest pin in pyproject.toml)."""
    config = session.config
    if not (hasattr(config, "workerinput") and config.getvalue("loadgroup")):
        return
    for item in session.items:
        if item.get_closest_marker("xdist_group") is not None and "@" not in item.nodeid:
            raise pytest.UsageError(
                f"pytest-xdist did not group {item.nodeid} (pytest {pytest.__version__}): "
                "install the versions pyproject.toml allows"
            )


#: How long a held stub reply waits for the test at most (under the client's 60 s timeout).
HOLD_S = 45.0


def held_after(
    reply: Callable[[dict[str, Any]], Any],
    requests: Callable[[], int],
    count: int,
    release: threading.Event,
) -> Callable[[dict[str, Any]], Any]:
    """``reply``, held from request ``count + 1`` on until ``release`` is set.

    A test that acts on a running CLI (interject, kill) waits for ``count`` answers,
    acts, then sets ``release``: the run cannot finish before the act arrives, however
    busy the machine. Events, not clocks.

    Args:
        reply: The stub's replies.
        requests: How many requests the stub has received (this one included).
        count: Requests answered at once.
        release: Set by the test when it has acted.

    Returns:
        The held replies.
    """

    def held(request: dict[str, Any]) -> Any:
        if requests() > count:
            release.wait(HOLD_S)
        return reply(request)

    return held


#: The files of the repository no test may add to (what git does not track or ignore).
_UNTRACKED = pytest.StashKey[frozenset[str]]()


def _untracked() -> frozenset[str]:
    """The repository's files git neither tracks nor ignores (none where git is missing)."""
    root = Path(__file__).resolve().parents[1]
    try:
        listed = subprocess.run(
            ["git", "ls-files", "--others", "--exclude-standard"],
            cwd=root,
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    except (OSError, subprocess.CalledProcessError):
        return frozenset()
    return frozenset(listed.splitlines())


def pytest_sessionstart(session: pytest.Session) -> None:
    """Note the repository's untracked files before any test runs (in the controller)."""
    if not hasattr(session.config, "workerinput"):
        session.config.stash[_UNTRACKED] = _untracked()


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Fail a run whose tests wrote into the repository: a test writes under its tmp_path.

    A file that was not there when the run started (a report written to the working
    folder, ``discussion-THREAD.md``) is named, and the run fails.
    """
    config = session.config
    if hasattr(config, "workerinput") or _UNTRACKED not in config.stash:
        return
    stray = sorted(_untracked() - config.stash[_UNTRACKED])
    if stray:
        sys.stderr.write(f"tests wrote into the repository (write under tmp_path): {stray}\n")
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
