"""Thread pages in a real browser: headless Chromium opens ``debategraph view``'s page of a
thread of every pattern and checks what a reader would get, on a laptop (1280 CSS pixels)
and on a phone (390).

One SQLite database holds a thread of each registered pattern, run through the CLI against
the stub server (built once for the module): a solver debate whose solvers call the
calculator, a fork of it with a human interjection, a debate whose first debater's turn
carries a planted ``<script>`` and ``<img onerror>``, a discussion, a meeting (its round
controller calls a model), a group chat whose speakers an LLM selector picks, a thread of
a pattern registered from outside (``tests/poll_pattern.py``, interjected into with
``debategraph interject``) and a solver debate left waiting at its round review. For each:
the page shows one ``.turn`` per transcript record, made no request beyond its own file,
ran no script, fits both widths (no sideways scrolling), its usage tables are ``show
--json``'s, and a screenshot of it is written under the test's temporary folder. Besides,
in the same browser: a long thread (8 solvers x 6 rounds, an interjection, long replies),
a hostile one (a right-to-left override and a 200 KB token in every kind of text) and the
eval's ``report.html``.
"""

from __future__ import annotations

import importlib.util
import json
import struct
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from debategraph import registry
from debategraph.state.records import Turn
from debategraph.views.eval_page import render_report_page
from debategraph.views.thread_page import render_page
from tests.browser import Browser, PageVisit
from tests.conftest import DEBATE_ARGUMENT, cli, debate_reply, solver_of, stub_args
from tests.groups import one_worker
from tests.openai_stub import StubOpenAIServer, default_responder
from tests.poll_pattern import ENTRY as POLL
from tests.test_archive import SOLVER, debate_values, solver_turn
from tests.test_cli_chat import chat_reply
from tests.test_cli_discuss import PAPER
from tests.test_cli_meeting import DECISION, meeting_reply
from tests.test_eval_page import PNGS, sampled_links
from tests.test_eval_report import META, OUTCOMES, REPORT
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
#: The browser window's widths, CSS pixels: a laptop's screen and a phone's.
LAPTOP, PHONE = 1280, 390
#: A right-to-left override in a file name: shown as written, it reads ``invoiceexe.jpg``.
REVERSED = "invoice\u202egpj.exe"
#: One word of 200 KB (no space in it to break at).
HUGE = "A" * 200_000

#: The threads the module's database holds: id -> the pattern it runs.
THREADS = {
    "solve": "solver_debate",
    "fork": "solver_debate",
    "debate": "debate",
    "discuss": "discussion",
    "meeting": "meeting",
    "chat": "group_chat",
    "poll": POLL.name,
    "wait": "solver_debate",
}
#: The threads' statuses: every one finished, but ``wait``.
STATUS = {thread: "waiting" if thread == "wait" else "finished" for thread in THREADS}


def planted_debate(request: dict[str, Any]) -> Any:
    """The debate's replies, with Alice's turns replaced by :data:`PLANTED`."""
    reply = debate_reply(request)
    return PLANTED if reply == DEBATE_ARGUMENT and solver_of(request) == "Alice" else reply


#: What a reader must see on each thread's page besides its turns: its result, its origin.
SHOWN = {
    "solve": [
        "The answer is 72: 3 of 3 (100%) solvers gave it in the last round.",
        "Nobody changed their answer over 2 rounds.",
        "Votes after each round",
    ],
    "fork": ["Forked from thread solve", "Votes after each round"],
    "debate": [
        "The sides: Alice argued for; Bob argued against.",
        "The judge gave it to Alice: Alice answered every point.\n",
    ],
    "discuss": ["After 1 iteration the personas' convergence was 50% (stalled)."],
    "meeting": [
        "the controller gave the stage another round (its own call): More to say.\n",
        f"The chair decided: {DECISION['decision']}\n",
        "Next steps: Draft a rota.",
    ],
    "chat": [
        "It ended because regex '\\bAPPROVED\\b' matched a message of Reviewer.",
        "Speakers were chosen: 3 turns by the selector model, 2 turns by the guard",
    ],
    "poll": ["panellist_1\tBlue, because the sky is."],
    "wait": ["This thread is waiting: round 1", "To go on: debategraph resume wait --db "],
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
          "--select", "llm", "--max-in-a-row", "1", "--rounds", "8",
          "--thread", "chat")  # fmt: skip
    start(panel_reply, "poll", "Favourite colour?", "--rounds", "2", "--pause-after-round",
          "--thread", "poll")  # fmt: skip
    cli("interject", "poll", PANEL_NOTE, "--db", str(db))
    cli("resume", "poll", "--db", str(db))
    server.responder = default_responder
    waiting = cli("solve", QUESTION, "--agents", "2", "--rounds", "2", "--pause-after-round",
                  "--thread", "wait", "--json", *stub_args(server, db))  # fmt: skip
    (folder / "wait.json").write_text(waiting)  # what the CLI said of the waiting thread


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
    """Write the thread's page with ``debategraph view``, open it on a phone (no screenshot),
    then on a laptop, where it is photographed."""
    page = folder / f"{thread}.html"
    cli("view", thread, "-o", str(page), "--db", str(db))
    phone = browser.open(page, None, width=PHONE)
    assert (phone.overflow, phone.unisolated) == (0, 0), f"{thread} at {PHONE} px"
    shot = folder / f"{thread}.png"
    return browser.open(page, shot, [".turn", ".turn.interjection"], width=LAPTOP)


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
        thread: (pattern, STATUS[thread]) for thread, pattern in THREADS.items()
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
    shown = json.loads(cli("show", thread, "--db", str(threads), "--json"))
    records = shown["transcript"]
    visit = view(browser, threads, thread, tmp_path)
    assert_usage_is_shown(thread, (tmp_path / f"{thread}.html").read_text(), shown)
    assert visit.counts[".turn"] == len(records), visit.text
    interjections = [t for t in records if t["role"] == "user" and t["stage"] == "interject"]
    assert visit.counts[".turn.interjection"] == len(interjections)
    assert visit.requests[:1] == [visit.url]
    assert visit.foreign_requests() == []
    assert visit.title != "pwned"
    assert visit.overflow == 0  # nothing wider than the window: no sideways scrolling
    lines = visit.text.splitlines()
    status = f"status {STATUS[thread]}"
    assert f"pattern {THREADS[thread]}" in lines and status in lines, visit.text
    for shown in SHOWN[thread]:
        assert shown in visit.text, visit.text
    assert visit.screenshot == tmp_path / f"{thread}.png"
    width, height = png_size(visit.screenshot)
    assert width == LAPTOP and height >= 320, (width, height)
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
UNSAFE = """<!DOCTYPE html><meta charset="utf-8"><title>ok</title><p class="turn">a turn</p>
<img src="elsewhere.png" onerror="document.title='pwned'">
<p>sent \u202egpj.exe, <bdi>\u202eok</bdi></p>"""


def test_the_harness_sees_what_a_page_requests_and_runs(browser: Browser, tmp_path: Path) -> None:
    page = tmp_path / "unsafe.html"
    page.write_text(UNSAFE)
    visit = browser.open(page, tmp_path / "unsafe.png", [".turn", ".none"])
    assert visit.counts == {".turn": 1, ".none": 0}
    assert visit.requests == [visit.url, (tmp_path / "elsewhere.png").as_uri()]
    assert visit.foreign_requests() == [(tmp_path / "elsewhere.png").as_uri()]
    assert visit.title == "pwned"
    assert visit.text.startswith("a turn\n")
    assert visit.unisolated == 1  # the override in the paragraph; the one in <bdi> is isolated
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


class Tables(HTMLParser):
    """The rows of each table of a page with a class (``usage-agent``...), as cell texts."""

    def __init__(self, html: str) -> None:
        super().__init__()
        self.tables: dict[str, list[list[str]]] = {}
        self._table: list[list[str]] | None = None
        self._cell: list[str] | None = None
        self.feed(html)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs).get("class") or ""
        if tag == "table" and found:
            self._table = self.tables.setdefault(found, [])
        elif tag == "tr" and self._table is not None:
            self._table.append([])
        elif tag == "td" and self._table is not None:
            self._cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag == "td" and self._table is not None and self._cell is not None:
            self._table[-1].append("".join(self._cell))
            self._cell = None
        elif tag == "table":
            self._table = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)


def usage_of(usage: dict[str, Any]) -> list[str]:
    """A ``show --json`` usage entry as the page's cells show it: prompt, completion, calls."""
    return [f"{usage['prompt_tokens']:,}", f"{usage['completion_tokens']:,}", str(usage["calls"])]


#: The officials whose rows the usage tables must hold, with their models.
OFFICIALS = {"chat": "selector", "meeting": "controller", "debate": "judge"}


def assert_usage_is_shown(thread: str, html: str, shown: dict[str, Any]) -> None:
    """The page's usage tables are ``show --json``'s, every agent and official with its model."""
    tables = Tables(html).tables
    by_agent = {row[0]: row for row in tables["usage-agent"][1:]}
    assert list(by_agent) == list(shown["usage_by_agent"])
    models = {t["model"] for t in shown["transcript"] if t.get("model")}
    for agent, usage in shown["usage_by_agent"].items():
        row = by_agent[agent]
        assert (row[2:5] if models else row[1:4]) == usage_of(usage), (agent, row)
        assert not models or row[1] in models, (agent, row)  # every agent with its model
    if models:
        by_model = {row[0]: row[1:4] for row in tables["usage-model"][1:]}
        assert by_model == {m: usage_of(u) for m, u in shown["usage_by_model"].items()}
    if thread in OFFICIALS:
        assert by_agent[OFFICIALS[thread]][1] in models


def test_the_waiting_page_shows_the_line_the_cli_printed(threads: Path) -> None:
    said = json.loads((threads.parent / "wait.json").read_text())
    assert said["status"] == "waiting"
    assert said["resume"].endswith(" --approve | --interject TEXT")
    page = threads.parent / "wait-page.html"
    cli("view", "wait", "-o", str(page), "--db", str(threads))
    assert f"<code>{said['resume']}</code>" in page.read_text()


def test_a_debate_shows_and_returns_its_stances(threads: Path) -> None:
    shown = json.loads(cli("show", "debate", "--db", str(threads), "--json"))
    assert shown["stances"] == {"Alice": "for", "Bob": "against"}


def long_values() -> dict[str, Any]:
    """8 solvers x 6 rounds, a human's interjection after round 3, one reply of 6,000 words."""
    values = debate_values()
    solvers = [f"solver_{i}" for i in range(1, 9)]
    transcript: list[Turn] = []
    for rnd in range(1, 7):
        for i, name in enumerate(solvers):
            answer = "72" if rnd > 2 or i % 2 else "96"
            turn = solver_turn(name, rnd, i, answer).model_copy(
                update={"id": f"{name}-r{rnd}", "reply_to": (), "recipients": ()}
            )
            transcript.append(turn)
        if rnd == 3:
            note = Turn(id="note", agent="user", role="user", content=PANEL_NOTE,
                        stage="interject", round=3)  # fmt: skip
            transcript.append(note)
    long = " ".join(["word"] * 6000)
    transcript[-1] = transcript[-1].model_copy(update={"content": long})  # the open round's
    values.update(transcript=transcript, round=6, rounds=[], votes={"72": 8})
    return values


def test_a_long_thread_folds_its_rounds_and_replies_and_marks_the_interjection(
    browser: Browser, tmp_path: Path
) -> None:
    page = tmp_path / "long.html"
    page.write_text(render_page("long", long_values(), pattern=SOLVER, status="finished"))
    selectors = [
        ".turn",
        "details.round",
        "details.round[open]",
        "details.long",
        "nav#contents a[href^='#round-']",
        ".vote-bars .interjection-mark[data-after-round='3']",
    ]
    for width in (PHONE, LAPTOP):
        visit = browser.open(page, None, selectors, width=width)
        assert visit.overflow == 0, width
        counts = list(visit.counts.values())
        assert counts == [49, 6, 1, 1, 6, 1], visit.counts  # only the last round open
        assert "word word" in visit.text and visit.text.count("word") < 100  # folded


def hostile_values() -> dict[str, Any]:
    """A solver thread whose every text holds a right-to-left override, a reply, the
    tie-break, a vote and a note a 200 KB word too."""
    values = debate_values()
    evil = f"{REVERSED} {HUGE}"
    transcript = [
        t.model_copy(
            update={"content": f"See {REVERSED} here.", "answer": REVERSED if t.answer else None}
        )
        for t in values["transcript"]
    ]
    transcript[0] = transcript[0].model_copy(update={"content": f"See {evil} here."})
    values.update(transcript=transcript, notes=[evil], tie_break=evil)
    values["votes"] = {REVERSED: 2, HUGE: 1}
    return values


def test_a_hostile_thread_reorders_nothing_and_fits(browser: Browser, tmp_path: Path) -> None:
    page = tmp_path / "hostile.html"
    evil = f"{REVERSED} {HUGE}"
    html = render_page(
        f"t{REVERSED}", hostile_values(), pattern=SOLVER, status="waiting", pauses=[{"ask": evil}]
    )
    page.write_text(html)
    for width in (PHONE, LAPTOP):
        visit = browser.open(page, None, [".turn"], width=width)
        assert visit.overflow == 0, width
        assert visit.unisolated == 0, width  # every override isolated
        assert visit.counts[".turn"] == 7
    assert "\u202e" not in html.split("<svg")[1].split("</svg>")[0]  # no label reversed


def test_the_eval_report_fits(browser: Browser, tmp_path: Path) -> None:
    meta = {**META, "kind": "gsm8k", "rounds": 2, "dataset": f"data/{HUGE[:2000]}.jsonl"}
    html = render_report_page(
        REPORT, meta, pngs=PNGS, thread_pages=sampled_links(OUTCOMES), lead=f"Use {HUGE}."
    )
    page = tmp_path / "report.html"
    page.write_text(html)
    for width in (PHONE, LAPTOP):
        assert browser.open(page, None, width=width).overflow == 0, width
