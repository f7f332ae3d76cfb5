"""A thread's page (``debategraph view``): every turn shown once, model text escaped, votes drawn.

Unit tests render values built from :class:`~debategraph.state.records.Turn` records or
from a graph run on scripted models; CLI tests write the pages of threads run against
the stub server (one database per module: a finished thread with a pause it went
through, an interjection and a fork; a thread left waiting).
"""

from __future__ import annotations

import contextlib
import io
import json
import sqlite3
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from debategraph import build_solver_debate, registry
from debategraph.checkpoints import inbox
from debategraph.checkpoints.forking import ForkPoint, Lineage, lineage
from debategraph.checkpoints.pages import PAGES
from debategraph.checkpoints.savers import open_checkpointer
from debategraph.cli import main, view
from debategraph.described import Described
from debategraph.errors import UsageError
from debategraph.state.records import TOOL_STAGE, Turn
from debategraph.views import thread_file
from debategraph.views.thread_page import page_name, render_page
from tests.conftest import one_error_line, run_cli, solver_of, stub_args
from tests.groups import one_worker
from tests.openai_stub import StubOpenAIServer
from tests.test_archive import SOLVER, debate_values, make_pattern
from tests.test_discussion import Script
from tests.test_discussion import run as run_discussion
from tests.test_solver_agents import calculator_then_answer, own_model, run
from tests.test_write_whole import disk_full

pytestmark = one_worker(__name__)

SCRIPT = "<script>document.title='ran'</script>"
IMG = "<img src=x onerror=\"document.title='ran'\">"
QUESTION = "Natalia sold 48 clips in April and half as many in May. How many in total?"


# --------------------------------------------------------------------------
# Reading a page back
# --------------------------------------------------------------------------


@dataclass
class Element:
    """One start tag of a page, with the start tags it is inside."""

    tag: str
    attrs: dict[str, str]
    inside: list[Element] = field(default_factory=list)

    @property
    def classes(self) -> set[str]:
        return set(self.attrs.get("class", "").split())


class Page(HTMLParser):
    """The elements of a page, each knowing its ancestors; the text it shows."""

    VOID = frozenset({"meta", "br", "img", "input", "link", "hr"})

    def __init__(self, html: str) -> None:
        super().__init__()
        self.elements: list[Element] = []
        self._open: list[Element] = []
        self.text = ""
        self.feed(html)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        element = Element(tag, {k: v or "" for k, v in attrs}, list(self._open))
        self.elements.append(element)
        if tag not in self.VOID:
            self._open.append(element)

    def handle_endtag(self, tag: str) -> None:
        while self._open:
            if self._open.pop().tag == tag:
                break

    def handle_data(self, data: str) -> None:
        self.text += data

    def turns(self) -> list[Element]:
        return [e for e in self.elements if "turn" in e.classes]

    def turn(self, turn_id: str) -> Element:
        (found,) = [e for e in self.turns() if e.attrs.get("data-turn-id") == turn_id]
        return found


def turn_ids(page: Page) -> list[str]:
    return [e.attrs["data-turn-id"] for e in page.turns()]


# --------------------------------------------------------------------------
# Unit: values built from records
# --------------------------------------------------------------------------


def planted_values() -> dict[str, Any]:
    """A solver thread whose every model-written field holds a script or an image tag."""
    values = debate_values()
    alice = values["transcript"][0]
    tool = Turn(
        id="tool-1",
        agent=alice.agent,
        role="tool",
        content=IMG,
        stage=TOOL_STAGE,
        round=1,
        tool="calculator",
        arguments=json.dumps({"expression": SCRIPT}),
    )
    planted = alice.model_copy(update={"content": SCRIPT, "answer": IMG})
    values["transcript"] = [tool, planted, *values["transcript"][1:]]
    values["notes"] = [SCRIPT]
    return values


def test_model_text_is_shown_escaped_never_as_tags() -> None:
    html = render_page(
        "t<1>", planted_values(), pattern=SOLVER, status="finished", pauses=[{"ask": IMG}]
    )
    page = Page(html)
    assert not [e for e in page.elements if e.tag in ("script", "img")]
    assert "<script" not in html and "<img" not in html
    assert "onerror" not in " ".join(v for e in page.elements for v in e.attrs)
    # ... and the text reads as the model wrote it
    assert SCRIPT in page.text and IMG in page.text
    assert '{"expression": "' + SCRIPT + '"}' in page.text  # a tool call's arguments
    assert "&lt;script&gt;" in html and "t&lt;1&gt;" in html


def test_one_turn_element_per_transcript_turn_tool_calls_folded_under_their_turn() -> None:
    tooled = calculator_then_answer("Ada")
    agents: list[Any] = [{"name": "Ada", "model": tooled, "tools": ["calculator"]}, "Bo"]
    values = run(build_solver_debate(own_model("Bo"), agents=agents, max_rounds=2))
    transcript = values["transcript"]
    assert sum(t.role == "tool" for t in transcript) == 2
    page = Page(render_page("t", values, pattern=SOLVER, status="finished"))
    assert sorted(turn_ids(page)) == sorted(t.id for t in transcript)
    for call in (t for t in transcript if t.role == "tool"):
        element = page.turn(call.id)
        assert "tool-call" in element.classes
        folded = [e for e in element.inside if e.tag == "details"]
        owner = [e for e in element.inside if "turn" in e.classes]
        assert folded and [o.attrs["data-agent"] for o in owner] == ["Ada"]
        answered = next(t for t in transcript if t.id == owner[0].attrs["data-turn-id"])
        assert (answered.role, answered.round) == ("agent", call.round)
    assert 'calculator({"expression": "48 + 48 / 2"}) -> 72' in page.text
    # the header names each agent with its models
    assert "agents: Ada (ScriptedChatModel); Bo (ScriptedChatModel)" in page.text


def test_interjection_marked_where_it_landed_and_replies_linked() -> None:
    values = debate_values()
    page = Page(render_page("t1", values, pattern=SOLVER))
    assert turn_ids(page) == [t.id for t in values["transcript"]]  # in transcript order
    user = page.turn("user-1")
    assert {"turn", "interjection"} <= user.classes
    assert "user · interjection · read from round 2 on · interject" in page.text
    assert [e.attrs["id"] for e in user.inside if "round" in e.classes] == ["round-1"]
    assert not [e for e in page.turns() if "interjection" in e.classes and e is not user]
    links = [
        e
        for e in page.elements
        if e.tag == "a" and any(i.attrs.get("data-turn-id") == "alice-r2" for i in e.inside)
    ]
    assert [a.attrs["href"] for a in links] == ["#turn-alice-r1"]
    assert page.turn("alice-r1").attrs["id"] == "turn-alice-r1"


def flipping_values() -> dict[str, Any]:
    """``debate_values`` with bob flipping from 72 to 96 in round 2."""
    values = debate_values()
    values["transcript"] = [
        t.model_copy(update={"answer": "96"}) if t.id == "bob-r2" else t
        for t in values["transcript"]
    ]
    return values


def test_the_vote_after_each_round_is_drawn_and_flips_listed() -> None:
    page = Page(render_page("t1", flipping_values(), pattern=SOLVER))
    bars = [e for e in page.elements if e.tag == "rect" and "vote" in e.classes]
    drawn = {(b.attrs["data-answer"], b.attrs["data-count"]) for b in bars}
    # round 1: 72 x2, one abstention; round 2: 72, 96 x2
    assert drawn == {("72", "2"), ("", "1"), ("72", "1"), ("96", "2")}
    assert all(any(i.tag == "svg" for i in b.inside) for b in bars)
    flips = page.text.split("Flips")[1].split("Transcript")[0].strip().splitlines()
    assert flips == ["bob, round 2: 72 → 96", "carol, round 2: no answer → 96"]


def test_usage_names_models_only_where_a_model_answered() -> None:
    values = debate_values()  # no turn names its model
    html = render_page("t1", values, pattern=SOLVER)
    assert '<table class="usage-agent">' in html and "<th>models</th>" not in html
    assert '<table class="usage-model">' not in html
    named = [t.model_copy(update={"model": "m1"}) for t in values["transcript"]]
    html = render_page("t1", {**values, "transcript": named}, pattern=SOLVER)
    assert "<th>models</th>" in html and '<table class="usage-model">' in html


def test_a_thread_without_votes_draws_none() -> None:
    values = debate_values()
    values["transcript"] = [t for t in values["transcript"] if t.agent in ("alice", "user")]
    html = render_page("t1", values, pattern=SOLVER)
    assert "<svg" not in html and 'id="votes"' not in html


def test_a_discussions_turns_show_each_stance_and_revision() -> None:
    values = run_discussion(Script(), max_rounds=1)  # each persona asks and revises once
    html = render_page("d", values, pattern=registry.described("discussion"))
    page = Page(html)
    transcript = values["transcript"]
    assert turn_ids(page) == [t.id for t in transcript]
    by_stage = {(t.agent, t.stage): t for t in transcript}
    response, question = by_stage["Bob", "response"], by_stage["Alice", "question"]
    links = [
        e.attrs["href"]
        for e in page.elements
        if e.tag == "a" and page.turn(response.id) in e.inside
    ]
    assert links == [f"#turn-{question.id}"]  # the stance's question, where it was asked
    bob = html.split(f'data-turn-id="{response.id}"')[1].split("</article>")[0]
    # the stance, the revision
    assert "<td><bdi>revise</bdi></td><td><bdi>Bob revised in 1</bdi></td>" in bob
    initial = html.split(f'data-turn-id="{by_stage["Bob", "initial"].id}"')[1]
    insights = initial.split("</article>")[0]
    # id, version, revised in iteration, text: each of Bob's insights as it stands now
    assert "<td><bdi>bob-1</bdi></td><td>2</td><td>1</td><td><bdi>Bob revised in 1</bdi></td>" in (
        insights
    )
    assert insights.count("<tr>") == 1 + len(values["insights"]["Bob"])


@dataclass(frozen=True)
class PluginPattern(Described):
    """A pattern this package does not know, as the page sees one (``Described``)."""

    name: str = "court"
    title: Callable[[Mapping[str, Any]], str] = lambda values: str(values.get("case", ""))
    summary: Callable[[Mapping[str, Any]], dict[str, Any]] = lambda values: {
        "ruling": {"guilty": False, "reasons": [SCRIPT, "no motive"]},
        "jurors": {"ann": "acquit", "ben": "acquit"},
        "opinion": "First line.\nSecond line.",
        "sessions": [{"day": 1, "heard": "prosecution"}, {"day": 2, "heard": "defence"}],
        "transcript": [t.model_dump() for t in values.get("transcript", [])],  # shown once
    }
    describe: Callable[[Mapping[str, Any]], str] = lambda settings: ""
    agents_per_round: Callable[[Mapping[str, Any]], int] = lambda settings: 1
    result_markdown: Callable[[Mapping[str, Any]], list[str]] | None = None


def test_a_plugin_patterns_thread_gets_the_generic_page() -> None:
    transcript = [
        Turn(id=f"c{i}", agent=agent, content=f"{agent} speaks", stage="plead", round=i)
        for i, agent in enumerate(["prosecution", "defence", "prosecution"], 1)
    ]
    values = {"case": "The <b>stolen</b> tarts", "transcript": transcript, "custom": object()}
    page = Page(render_page("c1", values, pattern=PluginPattern(), status="finished"))
    assert turn_ids(page) == ["c1", "c2", "c3"]
    assert "The <b>stolen</b> tarts" in page.text and "court" in page.text
    assert "Ruling" in page.text and "no motive" in page.text and SCRIPT in page.text
    assert "First line.\nSecond line." in page.text
    folded = [e for e in page.elements if e.tag == "details" and "round" not in e.classes]
    assert len(folded) == 1  # the sessions, a record per day: ruling and jurors stay open
    assert "2 entries" in page.text
    assert not [e for e in page.elements if e.tag == "svg"]
    assert page.text.count("prosecution speaks") == 2  # the timeline's, not the summary's too
    # no values at all (a thread that never ran a step), and a bare pattern
    empty = Page(render_page("c2", {}, pattern=make_pattern("poll", lambda v: "")))
    assert turn_ids(empty) == [] and "Thread c2" in empty.text


def test_forks_and_a_pause_are_shown() -> None:
    values = debate_values()
    html = render_page(
        "child/1",
        values,
        pattern=SOLVER,
        status="waiting",
        where="round 1; next human",
        forked_from=ForkPoint("parent", "cp-1"),
        forks=[ForkPoint("grand child", "cp-9")],
        pauses=[{"round": 1, "question": "approve or interject"}],
        refresh_s=3,
    )
    page = Page(html)
    hrefs = [e.attrs["href"] for e in page.elements if e.tag == "a" and "#" not in e.attrs["href"]]
    assert hrefs == ["parent.html", "grand_child.html"]
    assert page_name("child/1") == "child_1.html"
    assert (page_name("../x"), page_name("..")) == ("_x.html", "thread.html")
    assert "Forked from thread parent at checkpoint cp-1." in page.text
    assert "This thread is waiting: round 1; next human." in page.text
    assert "approve or interject" in page.text
    assert '<meta http-equiv="refresh" content="3">' in html
    finished = render_page("t", values, pattern=SOLVER, status="finished")
    assert 'id="pause"' not in finished and 'id="forks"' not in finished


def test_follow_rewrites_until_the_thread_stops_moving() -> None:
    statuses = iter(["running", "running", "waiting"])
    waits: list[int] = []
    written = view.follow(lambda: next(statuses), lambda: waits.append(1))
    assert (written, len(waits)) == (3, 2)
    assert view.follow(lambda: "finished", lambda: waits.append(1)) == 1 and len(waits) == 2


def test_following_waits_for_a_new_checkpoint_or_the_writer_gone(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The wait polls the saver: it returns on a new checkpoint, or once its writer is gone."""
    latest = ["c1"]
    alive = [True]
    polls: list[str] = []

    class Saver:
        def get_tuple(self, config: Any) -> Any:
            return SimpleNamespace(
                config={"configurable": {"checkpoint_id": latest[0]}}, metadata={}
            )

    def sleep(seconds: float) -> None:
        polls.append(latest[0])
        assert len(polls) < 10, "the wait never returned"
        if len(polls) == 2:
            latest[0] = "c2"  # the running process saves its next checkpoint
        if len(polls) == 4:
            alive[0] = False  # ... and then dies without another

    monkeypatch.setattr(view.time, "sleep", sleep)
    monkeypatch.setattr(view, "writer_elsewhere", lambda metadata: 7 if alive[0] else None)
    wait = view._next_checkpoint(Saver(), "t")  # type: ignore[arg-type]
    assert polls == []  # it noted c1, the checkpoint the first page shows
    wait()
    assert polls == ["c1", "c1"]  # returned once c2 was there
    wait()
    assert polls == ["c1", "c1", "c2", "c2"]  # returned once the writer was gone


# --------------------------------------------------------------------------
# CLI: threads run against the stub
# --------------------------------------------------------------------------


def flipping_solvers() -> Callable[[dict[str, Any]], Any]:
    """Solvers answer 18, but solver_1 says 17 first; every reasoning plants a script."""
    calls: dict[str, int] = {}

    def respond(request: dict[str, Any]) -> Any:
        solver = solver_of(request)
        calls[solver] = calls.get(solver, 0) + 1
        value = "17" if solver == "solver_1" and calls[solver] == 1 else "18"
        return {"reasoning": f"{solver}: {SCRIPT} {IMG}", "answer": value, "confidence": 0.8}

    return respond


def cli(args: list[str]) -> str:
    """Run the CLI outside a test (a module's fixture): its stdout; it must succeed."""
    out, err = io.StringIO(), io.StringIO()
    with (
        contextlib.redirect_stdout(out),
        contextlib.redirect_stderr(err),
        pytest.raises(SystemExit) as exit_info,
    ):
        main(args)
    assert exit_info.value.code in (0, None), err.getvalue()
    return out.getvalue()


@dataclass(frozen=True)
class Threads:
    """The module's database and its threads' transcripts (``show --json``)."""

    db: str
    transcripts: dict[str, list[dict[str, Any]]]


@pytest.fixture(scope="module")
def threads(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Threads]:
    """Three threads of a solver debate in one database.

    ``s`` paused after round 1, was resumed with an interjection and finished (solver_1
    flips from 17 to 18); ``f`` was forked from ``s`` in round 2; ``w`` waits after its
    first round.
    """
    db = str(tmp_path_factory.mktemp("view") / "d.sqlite")
    with StubOpenAIServer(flipping_solvers()) as server:
        solve = ["solve", QUESTION, "--agents", "3", "--rounds", "2", "--pause-after-round"]
        for thread in ("s", "w"):
            cli([*solve, "--thread", thread, "--json", *stub_args(server, db)])
        cli(["resume", "s", "--db", db, "--interject", "Mind May.", "--json"])
        history = json.loads(cli(["history", "s", "--db", db, "--json"]))
        at = next(e["checkpoint_id"] for e in reversed(history) if e["round"] == 2)
        cli(["fork", "s", "--at", at, "--thread", "f", "--db", db, "--json"])
        shown = {t: json.loads(cli(["show", t, "--db", db, "--json"])) for t in ("s", "f", "w")}
    yield Threads(db, {t: doc["transcript"] for t, doc in shown.items()})


def test_view_writes_every_turn_of_a_finished_thread(
    threads: Threads, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "s.html"
    code, out, err = run_cli(["view", "s", "--db", threads.db, "-o", str(path)], capsys)
    assert code == 0, err
    assert out == "" and str(path) in err
    html = path.read_text()
    page = Page(html)
    transcript = threads.transcripts["s"]
    assert turn_ids(page) == [t["id"] for t in transcript]
    (user,) = [t for t in transcript if t["role"] == "user"]
    assert "interjection" in page.turn(user["id"]).classes
    assert "<script" not in html and "<img" not in html and SCRIPT in page.text
    assert "solver_1, round 2: 17 → 18" in page.text
    assert "status finished" in " ".join(page.text.split())
    assert "Threads forked from this one:" in page.text
    # the fork's page: f.html, or where another test of the module wrote it
    assert [e.attrs["href"] for e in page.elements if e.attrs.get("href", "").endswith("f.html")]
    # nothing it could fetch: no source, every link within the page or to a sibling page
    assert not [e for e in page.elements if "src" in e.attrs or e.tag == "link"]
    hrefs = [e.attrs["href"] for e in page.elements if "href" in e.attrs]
    assert all(h.startswith("#") or h.endswith("f.html") for h in hrefs), hrefs
    assert "default-src 'none'" in html


def test_view_of_a_fork_and_of_a_waiting_thread(
    threads: Threads,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(tmp_path)
    for thread in ("f", "w"):
        code, _, err = run_cli(["view", thread, "--db", threads.db], capsys)
        assert code == 0, err
    fork = Page((tmp_path / "f.html").read_text())
    assert turn_ids(fork) == [t["id"] for t in threads.transcripts["f"]]
    assert "Forked from thread s at checkpoint" in fork.text
    waiting = Page((tmp_path / "w.html").read_text())
    assert turn_ids(waiting) == [t["id"] for t in threads.transcripts["w"]]
    assert "This thread is waiting" in waiting.text


def test_pages_link_each_other_by_the_names_they_were_written_with(
    threads: Threads, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A fork's page written as ``pages/the-fork.html``: its origin's page links there."""
    db = tmp_path / "copy.sqlite"  # the module's threads, the pages other tests wrote forgotten
    with sqlite3.connect(threads.db) as source, sqlite3.connect(db) as copy:
        source.backup(copy)
    with inbox.open_store(str(db)) as store:
        for item in store.search(PAGES, limit=100):
            store.delete(item.namespace, item.key)
    fork, origin = tmp_path / "pages" / "the-fork.html", tmp_path / "s.html"
    fork.parent.mkdir()

    def hrefs(page: Path) -> list[str]:
        elements = Page(page.read_text()).elements
        return [e.attrs["href"] for e in elements if e.tag == "a" and "#" not in e.attrs["href"]]

    for thread, page in (("f", fork), ("s", origin), ("f", fork)):
        code, _, err = run_cli(["view", thread, "--db", str(db), "-o", str(page)], capsys)
        assert code == 0, err
        if page == fork and not origin.exists():  # the origin's page not written yet
            assert hrefs(fork) == ["s.html"]  # its default name
    assert hrefs(origin) == ["pages/the-fork.html"]
    assert hrefs(fork) == ["../s.html"]


def test_view_of_a_plugin_patterns_thread(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A pattern from another package (the suite's poll, as a plugin) gets the generic page."""
    monkeypatch.setenv(registry.PLUGINS_ENV, "tests.poll_pattern:ENTRY")
    db = tmp_path / "p.sqlite"
    with StubOpenAIServer(lambda request: f"Blue. {SCRIPT}") as server:
        args = ["poll", "Favourite colour?", "--rounds", "2", "--thread", "p", "--json"]
        code, _, err = run_cli([*args, *stub_args(server, db)], capsys)
        assert code == 0, err
    code, out, err = run_cli(["show", "p", "--db", str(db), "--json"], capsys)
    transcript = json.loads(out)["transcript"]
    path = tmp_path / "p.html"
    code, _, err = run_cli(["view", "p", "--db", str(db), "-o", str(path)], capsys)
    assert code == 0, err
    html = path.read_text()
    page = Page(html)
    assert len(transcript) == 4 and turn_ids(page) == [t["id"] for t in transcript]
    assert "pattern poll" in " ".join(page.text.split()) and "<script" not in html


def test_forks_are_read_on_each_backend(
    checkpoint_url: str,
    stub: StubOpenAIServer,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A fork's page names its origin and checkpoint; the origin's lists the fork."""
    monkeypatch.chdir(tmp_path)  # the default archive of a Postgres --db lands here
    solve = ["solve", QUESTION, "--agents", "2", "--rounds", "2", "--thread", "a", "--json"]
    code, _, err = run_cli([*solve, *stub_args(stub, checkpoint_url)], capsys)
    assert code == 0, err
    _, out, _ = run_cli(["history", "a", "--db", checkpoint_url, "--json"], capsys)
    at = next(e["checkpoint_id"] for e in reversed(json.loads(out)) if e["round"] == 2)
    for fork in ("b", "c"):
        args = ["fork", "a", "--at", at, "--thread", fork, "--db", checkpoint_url, "--json"]
        code, _, err = run_cli(args, capsys)
        assert code == 0, err
    with open_checkpointer(checkpoint_url) as saver:
        assert lineage(saver, "a") == Lineage(None, (ForkPoint("b", at), ForkPoint("c", at)))
        assert lineage(saver, "b") == Lineage(ForkPoint("a", at), ())


def test_follow_stops_once_the_thread_is_done(
    threads: Threads, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "page.html"
    code, _, err = run_cli(["view", "s", "--db", threads.db, "-o", str(path), "--follow"], capsys)
    assert code == 0, err
    assert "page written 1 time" in err
    assert 'http-equiv="refresh"' not in path.read_text()  # finished: no reload


def test_open_opens_the_written_page(
    threads: Threads,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    opened: list[str] = []
    monkeypatch.setattr(view.webbrowser, "open", opened.append)
    path = tmp_path / "s.html"
    code, _, err = run_cli(["view", "s", "--db", threads.db, "-o", str(path), "--open"], capsys)
    assert code == 0, err
    assert opened == [path.resolve().as_uri()] and path.exists()


def test_ctrl_c_stops_following_cleanly(
    threads: Threads,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A running thread is followed until Ctrl-C, which ends with one line and status 0."""

    def running(*args: Any, **kwargs: Any) -> tuple[str, str]:
        return "<p>so far</p>", "running"

    def interrupted(saver: Any, thread: str) -> Callable[[], None]:
        def wait() -> None:
            raise KeyboardInterrupt

        return wait

    monkeypatch.setattr(view, "thread_page", running)
    monkeypatch.setattr(view, "_next_checkpoint", interrupted)
    path = tmp_path / "page.html"
    code, out, err = run_cli(["view", "s", "--db", threads.db, "-o", str(path), "--follow"], capsys)
    assert (code, out) == (0, "")
    assert err.strip() == f"stopped following thread s; its page: {path}"
    assert path.read_text() == "<p>so far</p>"


def test_write_thread_page_for_the_eval_report(threads: Threads, tmp_path: Path) -> None:
    path = thread_file.write_thread_page(threads.db, "w", tmp_path / "w.html")
    assert turn_ids(Page(path.read_text())) == [t["id"] for t in threads.transcripts["w"]]
    with pytest.raises(UsageError, match="unknown thread id 'nope'"):
        thread_file.write_thread_page(threads.db, "nope", tmp_path / "n.html")


def test_unknown_thread_is_the_line_show_gives(
    threads: Threads, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["view", "nope", "--db", threads.db, "-o", str(tmp_path / "x")]
    code, out, err = run_cli(args, capsys)
    _, _, shown = run_cli(["show", "nope", "--db", threads.db], capsys)
    assert code == 2 and out == ""
    assert one_error_line(err) == one_error_line(shown)
    assert not (tmp_path / "x").exists()


@pytest.mark.parametrize("where", ["missing/dir/page.html", "."])
def test_unwritable_output_is_one_line_naming_it(
    where: str, threads: Threads, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / where
    code, out, err = run_cli(["view", "s", "--db", threads.db, "-o", str(target)], capsys)
    assert code == 2 and out == ""
    line = one_error_line(err)
    assert f"--output {target}: cannot write: " in line


def test_a_page_is_written_whole_or_not_at_all(
    threads: Threads, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: Any
) -> None:
    """``--follow`` rewrites the page a browser reloads: never half a page, never the old lost."""
    target = tmp_path / "s.html"
    target.write_text("the old page", encoding="utf-8")
    disk_full(monkeypatch)
    code, _, err = run_cli(["view", "s", "--db", threads.db, "-o", str(target)], capsys)
    assert code == 2
    assert f"--output {target}: cannot write: No space left on device" in one_error_line(err)
    assert target.read_text(encoding="utf-8") == "the old page"
    assert [p.name for p in tmp_path.iterdir()] == ["s.html"]  # no temporary file left
    monkeypatch.undo()
    code, _, err = run_cli(["view", "s", "--db", threads.db, "-o", str(target)], capsys)
    assert code == 0, err
    assert target.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")


def test_the_result_says_each_thing_once() -> None:
    """The decision beside the answer and votes it decided, and again under ``decisions``."""
    from debategraph.views.result import without_repeats

    decision = {"protocol": "plurality", "answer": "18", "votes": {"18": 2}, "reason": None}
    judged = {**decision, "protocol": "judge", "answer": "20"}
    summary = {
        "answer": "18",
        "votes": {"18": 2},
        "decision": decision,
        "decisions": {"plurality": decision, "judge@m": judged},
        "dynamics": {"final": "18", "oracle": None},
    }
    shown = without_repeats(summary)
    assert shown["decision"] == {"protocol": "plurality"}
    assert shown["decisions"] == {"judge@m": judged}  # another decision stays whole
    assert shown["dynamics"] == {"final": "18"}
    alone = without_repeats({**summary, "decisions": {"plurality": decision}})
    assert "decisions" not in alone and list(alone) == ["answer", "votes", "decision", "dynamics"]
