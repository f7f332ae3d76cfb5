"""Tests for checkpoint maintenance: history, fork and prune, on SQLite and Postgres."""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.pregel import Pregel

from debategraph import build_solver_debate, recursion_limit
from debategraph.checkpoints import open_checkpointer, thread_config
from debategraph.checkpoints.forking import fork
from debategraph.checkpoints.maintenance import HistoryEntry, history
from debategraph.checkpoints.pruning import prune
from debategraph.checkpoints.savers import serializer
from debategraph.errors import UsageError
from tests.backends import checkpoint_url  # noqa: F401  (fixture)
from tests.fake_model import ScriptedChatModel, tool_reply

QUESTION = "Natalia sold 48 clips in April and half as many in May. How many in total?"
ROUNDS = 3
SOLVERS = ("solver_1", "solver_2", "solver_3")
SOLVER_RE = re.compile(r"You are (\S+), one of")
#: Steps of a finished 3-round debate, newest first: input, then 3 per round, then
#: aggregate and respond.
STEPS = list(range(3 * ROUNDS + 2, -2, -1))

Graph = Pregel[Any, Any, Any, Any]
Saver = BaseCheckpointSaver[Any]


class ModelDownError(RuntimeError):
    """The scripted model's endpoint is 'down'."""


class Model:
    """A scripted model: each solver answers 18, with reasoning naming solver and round."""

    def __init__(self, padding: int = 0) -> None:
        self.padding = padding
        self.fail_rounds: set[int] = set()
        self.chat = ScriptedChatModel(respond=self.respond)

    @staticmethod
    def who(messages: list[BaseMessage]) -> tuple[str, int]:
        found = SOLVER_RE.search(str(messages[0].content))
        assert found
        rest = "\n".join(str(m.content) for m in messages[1:])
        seen = re.findall(r"reasoning-of-\S+-round-(\d+)\b", rest)  # the neighbours'
        return found.group(1), max(map(int, seen)) + 1 if seen else 1

    def respond(self, messages: list[BaseMessage]) -> AIMessage:
        solver, rnd = self.who(messages)
        if rnd in self.fail_rounds:
            raise ModelDownError(f"model down for round {rnd}")
        reasoning = f"reasoning-of-{solver}-round-{rnd} " + "x" * self.padding
        args = {"reasoning": reasoning, "answer": "18", "confidence": 0.9}
        return tool_reply("SolverReply", args)

    @property
    def calls(self) -> int:
        return len(self.chat.prompts)


def limit(rounds: int) -> int:
    """The recursion limit of the three-solver debate these tests run."""
    return recursion_limit(build_solver_debate(agents=3, max_rounds=rounds))


def run_config(thread_id: str) -> RunnableConfig:
    return {"configurable": {"thread_id": thread_id}, "recursion_limit": limit(ROUNDS)}


def at(thread_id: str, checkpoint_id: str) -> RunnableConfig:
    return {"configurable": {"thread_id": thread_id, "checkpoint_id": checkpoint_id}}


def turns(values: dict[str, Any]) -> list[tuple[str, int, str]]:
    return [(t.agent, t.round, t.content) for t in values.get("transcript", [])]


def run(graph: Graph, thread_id: str, question: str | None = QUESTION) -> dict[str, Any]:
    """Start (or with ``question=None`` resume) a debate on a thread.

    ``durability="sync"``: with LangGraph's default ``"async"`` a checkpoint is serialized
    in the background while the next step runs, and ``NamedBarrierValue.checkpoint()``
    returns its live set (langgraph#8748), so a fast step can leak the next round's
    ``close_round`` barrier into the previous checkpoint; history and forks then show
    ``close_round`` due alongside the solvers.
    """
    inputs = None if question is None else {"question": question}
    out: dict[str, Any] = graph.invoke(inputs, run_config(thread_id), durability="sync")
    return out


def debate(thread_id: str, graph: Graph) -> dict[str, Any]:
    return run(graph, thread_id)


def key(entry: HistoryEntry) -> tuple[Any, ...]:
    """An entry without its task progress (which a fork point does not carry)."""
    return (entry.checkpoint_id, entry.parent_id, entry.step, entry.source, entry.round)


@pytest.fixture
def model() -> Model:
    return Model()


@pytest.fixture
def saver(checkpoint_url: str) -> Iterator[Saver]:  # noqa: F811
    with open_checkpointer(checkpoint_url) as opened:
        yield opened


@pytest.fixture
def graph(model: Model, saver: Saver) -> Graph:
    return build_solver_debate(model.chat, agents=3, max_rounds=ROUNDS).compile(checkpointer=saver)


def stop_in_round_2(thread_id: str, graph: Graph, model: Model) -> None:
    """Start a debate that fails in round 2 (the thread stays resumable)."""
    model.fail_rounds = {2}
    with pytest.raises(ModelDownError):
        debate(thread_id, graph)
    model.fail_rounds = set()


# --------------------------------------------------------------------------
# history
# --------------------------------------------------------------------------


def test_history_lists_every_checkpoint(graph: Graph) -> None:
    debate("t", graph)
    entries = history(graph, "t")

    assert [e.step for e in entries] == STEPS
    assert [e.source for e in entries] == ["loop"] * (len(STEPS) - 1) + ["input"]
    assert [e.round for e in entries] == [3, 3, 3, 3, 3, 2, 2, 2, 1, 1, 1, None, None]
    one_round = [("close_round",), SOLVERS, ("open_round",)]
    assert [e.next for e in entries] == [
        (),
        ("respond",),
        ("aggregate",),
        *one_round * ROUNDS,
        ("__start__",),
    ]
    # A finished thread: every step's tasks have saved results.
    assert all(e.done == e.next and e.pending == () for e in entries)
    assert all(e.interrupts == 0 for e in entries)
    assert [e.parent_id for e in entries] == [e.checkpoint_id for e in entries[1:]] + [None]
    assert (
        entries[0].checkpoint_id
        == graph.get_state(thread_config("t")).config["configurable"]["checkpoint_id"]
    )
    created = [e.created_at for e in entries]
    assert all(created) and created == sorted(created, reverse=True)  # type: ignore[type-var]


def test_history_of_a_stopped_thread_shows_what_is_left(graph: Graph, model: Model) -> None:
    stop_in_round_2("t", graph, model)
    latest = history(graph, "t")[0]
    assert latest.round == 2
    assert latest.next == SOLVERS
    assert latest.pending  # at least the failed calls
    assert sorted(latest.pending + latest.done) == sorted(SOLVERS)


def test_history_of_an_unknown_thread(graph: Graph) -> None:
    with pytest.raises(UsageError, match="no thread 'nope'"):
        history(graph, "nope")


# --------------------------------------------------------------------------
# fork
# --------------------------------------------------------------------------


def test_fork_mid_debate(graph: Graph, saver: Saver, model: Model) -> None:
    finished = debate("orig", graph)
    original = history(graph, "orig")
    original_state = graph.get_state(thread_config("orig")).values
    # After round 1, before round 2 opens.
    point = next(e for e in original if e.round == 1 and e.next == ("open_round",))
    at_point = graph.get_state(at("orig", point.checkpoint_id))

    fork(graph, saver, "orig", point.checkpoint_id, "copy")

    forked = graph.get_state(thread_config("copy"))
    assert forked.values == at_point.values
    assert forked.next == ("open_round",)
    assert [t[:2] for t in turns(forked.values)] == [(s, 1) for s in SOLVERS]
    copied = history(graph, "copy")
    assert [key(e) for e in copied] == [key(e) for e in original[original.index(point) :]]
    assert copied[0].pending == ("open_round",) and copied[0].done == ()
    assert all(e.next == e.done for e in copied[1:])

    calls = model.calls
    out = run(graph, "copy", None)
    assert model.calls == calls + 3 * (ROUNDS - 1)  # rounds 2 and 3 asked again
    assert out["termination_reason"] == "rounds_completed"
    assert out["answer"] == "18"
    assert [r.round for r in out["rounds"]] == [1, 2, 3]
    assert out["usage"].calls == 3 * ROUNDS
    assert out["rounds"][0] == finished["rounds"][0]  # copied, not asked again
    assert [r.answers for r in out["rounds"]] == [r.answers for r in finished["rounds"]]
    continued = graph.get_state(thread_config("copy"))
    assert not continued.tasks
    assert turns(continued.values) == turns(original_state)
    assert [(s, r) for s, r, _ in turns(continued.values)] == [
        (s, r) for r in range(1, ROUNDS + 1) for s in SOLVERS
    ]

    # The original thread is untouched.
    assert history(graph, "orig") == original
    assert graph.get_state(thread_config("orig")).values == original_state


def test_fork_from_the_input_checkpoint(graph: Graph, saver: Saver) -> None:
    debate("orig", graph)
    first = history(graph, "orig")[-1]
    fork(graph, saver, "orig", first.checkpoint_id, "again")
    assert [key(e) for e in history(graph, "again")] == [key(first)]
    out = run(graph, "again", None)
    assert out["termination_reason"] == "rounds_completed"
    assert len(graph.get_state(thread_config("again")).values["transcript"]) == 3 * ROUNDS


def test_fork_a_stopped_thread_reruns_its_step(graph: Graph, saver: Saver, model: Model) -> None:
    stop_in_round_2("stopped", graph, model)
    latest = history(graph, "stopped")[0]
    fork(graph, saver, "stopped", latest.checkpoint_id, "retry")
    retry = graph.get_state(thread_config("retry"))
    assert retry.values == graph.get_state(at("stopped", latest.checkpoint_id)).values
    assert sorted(retry.next) == sorted(SOLVERS)
    assert not any(t.error for t in retry.tasks)
    out = run(graph, "retry", None)
    assert out["termination_reason"] == "rounds_completed"
    # The stopped thread still resumes on its own.
    assert run(graph, "stopped", None)["answer"] == "18"


def test_fork_errors(graph: Graph, saver: Saver) -> None:
    debate("orig", graph)
    debate("other", graph)
    point = history(graph, "orig")[3].checkpoint_id
    cases = [
        (("nope", point, "new"), "no thread 'nope'"),
        (
            ("orig", "bogus", "new"),
            "thread 'orig' has no checkpoint 'bogus'.*debategraph history orig",
        ),
        (("orig", point, "other"), "thread 'other' already exists"),
        (("orig", point, "orig"), "thread 'orig' already exists"),
    ]
    for (thread, checkpoint, new), message in cases:
        with pytest.raises(UsageError, match=message) as info:
            fork(graph, saver, thread, checkpoint, new)
        assert "\n" not in str(info.value)
    assert saver.get_tuple(thread_config("new")) is None
    # A checkpoint of another thread is not one of this thread's.
    with pytest.raises(UsageError, match="has no checkpoint"):
        fork(graph, saver, "other", point, "new")


def test_fork_on_a_saver_without_sql(model: Model) -> None:
    """Any saver: task paths (the order of a step's writes) come from the graph."""
    saver = InMemorySaver(serde=serializer())
    graph = build_solver_debate(model.chat, agents=3, max_rounds=ROUNDS).compile(checkpointer=saver)
    debate("orig", graph)
    point = next(e for e in history(graph, "orig") if e.round == 2 and e.next == SOLVERS)
    fork(graph, saver, "orig", point.checkpoint_id, "copy")
    assert graph.get_state(thread_config("copy")).values == (
        graph.get_state(at("orig", point.checkpoint_id)).values
    )
    run(graph, "copy", None)
    assert turns(graph.get_state(thread_config("copy")).values) == turns(
        graph.get_state(thread_config("orig")).values
    )


# --------------------------------------------------------------------------
# prune
# --------------------------------------------------------------------------


def test_prune_keeps_the_state_of_finished_threads(
    graph: Graph, saver: Saver, model: Model
) -> None:
    for thread in ("a", "b", "c"):
        debate(thread, graph)
    stop_in_round_2("unfinished", graph, model)
    before = {t: graph.get_state(thread_config(t)) for t in ("a", "b", "c")}
    unfinished_history = history(graph, "unfinished")
    unfinished_state = graph.get_state(thread_config("unfinished")).values

    report = prune(lambda _: graph, saver, keep_last=1, finished_older_than_days=None)

    assert report.threads_pruned == 3
    assert report.checkpoints_deleted == 3 * (len(STEPS) - 1)
    assert report.bytes_before > 0 and report.bytes_after > 0
    for thread, snap in before.items():
        after = graph.get_state(thread_config(thread))
        assert after.values == snap.values
        assert len(after.values["transcript"]) == 3 * ROUNDS
        (only,) = history(graph, thread)
        assert only.checkpoint_id == snap.config["configurable"]["checkpoint_id"]
        assert only.parent_id is None and only.next == ()

    # The kept checkpoint still forks, and the thread still takes new input.
    fork(graph, saver, "a", history(graph, "a")[0].checkpoint_id, "a2")
    assert graph.get_state(thread_config("a2")).values == before["a"].values
    out = debate("b", graph)  # one more round on top of the snapshot
    assert len(out["rounds"]) == ROUNDS + 1
    assert len(graph.get_state(thread_config("b")).values["transcript"]) == 3 * (ROUNDS + 1)

    # The unfinished thread is untouched and still resumes.
    assert history(graph, "unfinished") == unfinished_history
    assert graph.get_state(thread_config("unfinished")).values == unfinished_state
    out = run(graph, "unfinished", None)
    assert out["termination_reason"] == "rounds_completed"
    assert len(graph.get_state(thread_config("unfinished")).values["transcript"]) == 3 * ROUNDS

    # Pruning again finds nothing more to delete in the pruned threads.
    again = prune(lambda t: graph if t in "ac" else None, saver, keep_last=1,
                  finished_older_than_days=None)  # fmt: skip
    assert (again.threads_pruned, again.checkpoints_deleted) == (0, 0)


def test_prune_keep_last_several(graph: Graph, saver: Saver) -> None:
    debate("t", graph)
    entries = history(graph, "t")
    kept = entries[:4]  # aggregate's, and back to the step that ran round 3's solvers
    states = {e.checkpoint_id: graph.get_state(at("t", e.checkpoint_id)).values for e in kept}
    latest = graph.get_state(thread_config("t")).values

    report = prune(lambda _: graph, saver, keep_last=4, finished_older_than_days=None)

    assert (report.threads_pruned, report.checkpoints_deleted) == (1, len(STEPS) - 4)
    after = history(graph, "t")
    assert [key(e) for e in after[:-1]] == [key(e) for e in kept[:-1]]
    assert after[-1].checkpoint_id == kept[-1].checkpoint_id and after[-1].parent_id is None
    assert all(e.next == k.next for e, k in zip(after, kept, strict=True))
    for cid, values in states.items():
        assert graph.get_state(at("t", cid)).values == values
    assert graph.get_state(thread_config("t")).values == latest
    # Forking from the oldest kept checkpoint replays round 3 on the snapshot.
    fork(graph, saver, "t", kept[-1].checkpoint_id, "t2")
    run(graph, "t2", None)
    assert turns(graph.get_state(thread_config("t2")).values) == turns(latest)


def test_prune_finished_older_than_respects_now(graph: Graph, saver: Saver, model: Model) -> None:
    debate("t", graph)
    stop_in_round_2("unfinished", graph, model)
    now = datetime.now(UTC)

    def run(days: float, when: datetime) -> int:
        report = prune(lambda _: graph, saver, keep_last=None, finished_older_than_days=days,
                       now=when)  # fmt: skip
        return report.checkpoints_deleted

    assert run(5, now) == 0
    assert run(5, now + timedelta(days=4.9)) == 0
    assert len(history(graph, "t")) == len(STEPS)
    assert run(5, (now + timedelta(days=5.1)).replace(tzinfo=None)) == len(STEPS) - 1  # naive: UTC
    assert len(history(graph, "t")) == 1
    assert len(history(graph, "unfinished")) > 1
    assert run(0, now + timedelta(days=365)) == 0


def test_prune_leaves_threads_without_a_graph(graph: Graph, saver: Saver) -> None:
    debate("mine", graph)
    debate("theirs", graph)
    report = prune(lambda t: graph if t == "mine" else None, saver, keep_last=2,
                   finished_older_than_days=None)  # fmt: skip
    assert (report.threads_pruned, report.checkpoints_deleted) == (1, len(STEPS) - 2)
    assert len(history(graph, "mine")) == 2
    assert len(history(graph, "theirs")) == len(STEPS)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"keep_last": 0, "finished_older_than_days": None}, "keep-last must be at least 1, got 0"),
        ({"keep_last": -2, "finished_older_than_days": 1}, "got -2"),
        ({"keep_last": None, "finished_older_than_days": -1.5}, "0 or more, got -1.5"),
        ({"keep_last": None, "finished_older_than_days": None}, "needs keep-last and/or"),
    ],
)
def test_prune_rejects_bad_values(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(UsageError, match=re.escape(message)):
        prune(lambda _: None, InMemorySaver(), **kwargs)


def test_prune_rejects_a_saver_without_sql() -> None:
    with pytest.raises(UsageError, match="SQLite and Postgres"):
        prune(lambda _: None, InMemorySaver(), keep_last=1, finished_older_than_days=None)


@pytest.mark.slow  # make test-fast leaves it out: a few seconds of real time
def test_prune_shrinks_the_sqlite_file(tmp_path: Path) -> None:
    """50 finished 5-round debates with 500-character reasoning, pruned to 1 checkpoint."""
    model = Model(padding=500)
    rounds = 5
    path = tmp_path / "big.sqlite"
    with open_checkpointer(path) as saver:
        graph = build_solver_debate(model.chat, agents=3, max_rounds=rounds).compile(
            checkpointer=saver
        )
        threads = [f"t{i:02d}" for i in range(50)]
        for thread in threads:
            graph.invoke(
                {"question": QUESTION},
                {"configurable": {"thread_id": thread}, "recursion_limit": limit(rounds)},
                durability="sync",
            )
        sample = {t: graph.get_state(thread_config(t)).values for t in threads[::10]}

        report = prune(lambda _: graph, saver, keep_last=1, finished_older_than_days=None)

        for thread, values in sample.items():
            assert graph.get_state(thread_config(thread)).values == values
            assert len(values["transcript"]) == 3 * rounds
    ratio = report.bytes_after / report.bytes_before
    print(
        f"\nprune keep_last=1, 50 threads x {rounds} rounds: {report.bytes_before:,} ->"
        f" {report.bytes_after:,} bytes ({1 - ratio:.0%} smaller)"
    )
    assert report.threads_pruned == 50
    assert report.checkpoints_deleted == 50 * (3 * rounds + 3)  # all but the last
    assert ratio <= 0.2
    wal = Path(f"{path}-wal")
    assert path.stat().st_size + (wal.stat().st_size if wal.exists() else 0) <= report.bytes_after
