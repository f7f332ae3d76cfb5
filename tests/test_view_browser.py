"""Thread pages in a real browser: headless Chromium opens ``debategraph view``'s page of a
finished thread of every pattern and checks what a reader would get.

One SQLite database holds a thread of each registered pattern, run through the CLI against
the stub server (built once for the module): a solver debate whose solvers call the
calculator, a fork of it with a human interjection, a debate whose first debater's turn
carries a planted ``<script>`` and ``<img onerror>``, a discussion, a meeting, a group
chat, and a thread of a pattern registered from outside (``tests/poll_pattern.py``,
interjected into with ``debategraph interject``). For each: the page shows one ``.turn``
per transcript record, made no request beyond its own file, ran no script, and a
screenshot of it is written under the test's temporary folder.
"""

from __future__ import annotations

import importlib.util
import json
import struct
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from debategraph import registry
from tests.browser import Browser, PageVisit
from tests.conftest import DEBATE_ARGUMENT, cli, debate_reply, solver_of, stub_args
from tests.groups import one_worker
from tests.openai_stub import StubOpenAIServer, default_responder
from tests.poll_pattern import ENTRY as POLL
from tests.test_cli_chat import chat_reply
from tests.test_cli_discuss import PAPER
from tests.test_cli_meeting import DECISION, meeting_reply
from tests.test_new_pattern import panel_reply
from tests.test_solver_agents import calculator_responder

# Starts a browser and a stub server, runs CLI commands: make test-fast leaves it out.
pytestmark = [pytest.mark.slow, one_worker(__name__)]

#: A debater's turn: what a model might write to take over the page, if it were markup.
PLANTED = (
    "<script>document.title='pwned'</script> Tea wins, "
    "<img src=x onerror=\"document.title='pwned'\"> says the evidence."
)
NOTE = "Check May again: half of 48."
PANEL_NOTE = "Think of the sea."
QUESTION = "Natalia sold 48 clips in April and half as many in May. How many in total?"

REPO_ROOT = Path(__file__).resolve().parents[1]
#: The browser window's width, CSS pixels: a laptop's half screen.
WINDOW = 960

#: The threads the module's database holds: id -> the pattern it runs.
THREADS = {
    "solve": "solver_debate",
    "fork": "solver_debate",
    "debate": "debate",
    "discuss": "discussion",
    "meeting": "meeting",
    "chat": "group_chat",
    "poll": POLL.name,
}


def planted_debate(request: dict[str, Any]) -> Any:
    """The debate's replies, with Alice's turns replaced by :data:`PLANTED`."""
    reply = debate_reply(request)
    return PLANTED if reply == DEBATE_ARGUMENT and solver_of(request) == "Alice" else reply


#: What a reader must see on each thread's page besides its turns: its result, its origin.
SHOWN = {
    "solve": ["Votes after each round", "Flips"],
    "fork": ["Forked from thread solve", "Votes after each round"],
    "debate": ["Winner\nAlice", "Rationale: Alice answered every point."],
    "discuss": ["Convergence", "Report"],
    "meeting": [f"Decision: {DECISION['decision']}", "Next steps: Draft a rota"],
    "chat": ["regex '\\bAPPROVED\\b' matched a message of Reviewer"],
    "poll": ["panellist_1\tBlue, because the sky is."],
}


def run_threads(server: StubOpenAIServer, db: Path, folder: Path) -> None:
    """Run every thread of :data:`THREADS` into ``db``, each on its own responder."""

    def start(responder: Any, *args: str) -> None:
        server.responder = responder
        cli(*args, *stub_args(server, db))

    start(calculator_responder, "solve", QUESTION, "--agents", "3", "--rounds", "2",
          "--tools", "calculator", "--thread", "solve")  # fmt: skip
    history = json.loads(cli("history", "solve", "--db", str(db), "--json"))
    [after_round_1] = [e for e in history if list(e["next"]) == ["open_round"] and e["round"] == 1]
    cli("fork", "solve", "--at", after_round_1["checkpoint_id"], "--thread", "fork",
        "--interject", NOTE, "--db", str(db))  # fmt: skip
    start(planted_debate, "debate", "Tea is better than coffee", "--debater", "Alice:for",
          "--debater", "Bob:against", "--rounds", "2", "--judge", "--thread", "debate")  # fmt: skip
    paper = folder / "paper.md"
    paper.write_text(PAPER)
    start(default_responder, "discuss", str(paper), "--rounds", "1",
          "--report", str(folder / "report.md"), "--thread", "discuss")  # fmt: skip
    start(meeting_reply, "meeting", "Should we move the team to a four-day week?",
          "--thread", "meeting")  # fmt: skip
    start(chat_reply, "chat", "Write a haiku about rain", "--agent", "Writer: writes haiku",
          "--agent", "Reviewer: reviews", "--until", r"regex:\bAPPROVED\b@Reviewer",
          "--rounds", "8", "--thread", "chat")  # fmt: skip
    start(panel_reply, "poll", "Favourite colour?", "--rounds", "2", "--pause-after-round",
          "--thread", "poll")  # fmt: skip
    cli("interject", "poll", PANEL_NOTE, "--db", str(db))
    cli("resume", "poll", "--db", str(db))


@pytest.fixture(scope="module")
def threads(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The checkpoint database holding every thread of :data:`THREADS`, finished."""
    folder = tmp_path_factory.mktemp("threads")
    db = folder / "threads.sqlite"
    registry.register(POLL)  # a pattern from outside, as a plugin would add it
    try:
        with StubOpenAIServer() as server:
            run_threads(server, db, folder)
        yield db
    finally:
        registry.unregister(POLL.name)


def transcript(db: Path, thread: str) -> list[dict[str, Any]]:
    """The thread's transcript, as ``debategraph export --format json`` writes it."""
    records: list[dict[str, Any]] = json.loads(
        cli("export", thread, "--format", "json", "--db", str(db))
    )["transcript"]
    return records


def view(browser: Browser, db: Path, thread: str, folder: Path) -> PageVisit:
    """Write the thread's page with ``debategraph view``, then open it in the browser."""
    page = folder / f"{thread}.html"
    cli("view", thread, "-o", str(page), "--db", str(db))
    shot = folder / f"{thread}.png"
    return browser.open(page, shot, [".turn", ".turn.interjection"], width=WINDOW)


def png_size(path: Path) -> tuple[int, int]:
    """A PNG's width and height in pixels (its IHDR chunk); fails on anything else."""
    head = path.read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n" and head[12:16] == b"IHDR", f"{path} is no PNG"
    width, height = struct.unpack(">II", head[16:24])
    return width, height


def test_the_threads_are_every_pattern_with_tools_an_interjection_and_a_fork(
    threads: Path,
) -> None:
    rows = json.loads(cli("threads", "--db", str(threads), "--json"))
    assert {r["thread_id"]: (r["pattern"], r["status"]) for r in rows} == {
        thread: (pattern, "finished") for thread, pattern in THREADS.items()
    }
    assert {e.name for e in registry.BUILTIN} <= set(THREADS.values())
    roles = {thread: [t["role"] for t in transcript(threads, thread)] for thread in THREADS}
    assert roles["solve"].count("tool") == 6  # 3 solvers x 2 rounds
    fork = transcript(threads, "fork")
    assert [t["content"] for t in fork if t["stage"] == "interject"] == [NOTE]
    assert fork[:6] == transcript(threads, "solve")[:6]  # round 1 is the original's
    alice = [t["content"] for t in transcript(threads, "debate") if t["agent"] == "Alice"]
    assert alice == [PLANTED, PLANTED]


@pytest.mark.parametrize("thread", THREADS)
def test_the_page_shows_every_turn_and_fetches_nothing(
    thread: str, threads: Path, browser: Browser, tmp_path: Path
) -> None:
    records = transcript(threads, thread)
    visit = view(browser, threads, thread, tmp_path)
    assert visit.counts[".turn"] == len(records), visit.text
    interjections = [t for t in records if t["role"] == "user" and t["stage"] == "interject"]
    assert visit.counts[".turn.interjection"] == len(interjections)
    assert visit.requests[:1] == [visit.url]
    assert visit.foreign_requests() == []
    assert visit.title != "pwned"
    assert visit.overflow == 0  # nothing wider than the window: no sideways scrolling
    lines = visit.text.splitlines()
    assert f"pattern {THREADS[thread]}" in lines and "status finished" in lines, visit.text
    for shown in SHOWN[thread]:
        assert shown in visit.text, visit.text
    assert visit.screenshot == tmp_path / f"{thread}.png"
    width, height = png_size(visit.screenshot)
    assert width == WINDOW and height >= 320, (width, height)
    assert visit.screenshot.stat().st_size > 10_000  # drawn, not a blank page


def test_a_planted_script_is_shown_as_text_and_never_runs(
    threads: Path, browser: Browser, tmp_path: Path
) -> None:
    visit = view(browser, threads, "debate", tmp_path)
    assert visit.title != "pwned"
    assert visit.text.count("<script>document.title='pwned'</script>") == 2
    assert visit.text.count("<img src=x onerror=\"document.title='pwned'\">") == 2
    assert visit.foreign_requests() == []  # no <img src=x> was parsed, so none was fetched


#: A page that is not self-contained and runs a script: what the checks above must catch.
UNSAFE = """<!DOCTYPE html><title>ok</title><p class="turn">a turn</p>
<img src="elsewhere.png" onerror="document.title='pwned'">"""


def test_the_harness_sees_what_a_page_requests_and_runs(browser: Browser, tmp_path: Path) -> None:
    page = tmp_path / "unsafe.html"
    page.write_text(UNSAFE)
    visit = browser.open(page, tmp_path / "unsafe.png", [".turn", ".none"])
    assert visit.counts == {".turn": 1, ".none": 0}
    assert visit.requests == [visit.url, (tmp_path / "elsewhere.png").as_uri()]
    assert visit.foreign_requests() == [(tmp_path / "elsewhere.png").as_uri()]
    assert visit.title == "pwned"
    assert visit.text == "a turn"
    assert png_size(visit.screenshot) > (0, 0)


def test_the_readme_picture_is_drawn_within_its_budget(browser: Browser, tmp_path: Path) -> None:
    """``make screenshot``'s script (``docs/screenshot.py``) still draws the README's picture."""
    spec = importlib.util.spec_from_file_location("screenshot", REPO_ROOT / "docs/screenshot.py")
    assert spec is not None and spec.loader is not None
    screenshot = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(screenshot)
    out = tmp_path / "images" / "view.png"
    visit = screenshot.draw(browser, out)
    assert visit.counts[".turn"] == 14  # 4 solvers x 3 rounds, a tool call, an interjection
    assert visit.foreign_requests() == []
    assert png_size(out)[0] == screenshot.WIDTH
    assert 10_000 < out.stat().st_size <= screenshot.MAX_BYTES
