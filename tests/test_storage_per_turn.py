"""A turn's model label is stored once per model, and every reader gets it back whole.

Each agent turn records the model that answered (``Turn.model``, e.g.
``stub@http://127.0.0.1:PORT/v1``). Stored in every turn, the label cost about 30 bytes of
each checkpoint write (issue 36, item 4: storage per agent turn beyond its text past
2,048 B). A transcript write now stores a label the transcript already holds as a
reference to the first record holding it (``@INDEX``), and the transcript
channel reads it back whole: the graph's state, ``show``, both exports and a fork see
every turn's model, on SQLite and PostgreSQL. A thread saved before the change
(``tests/data/model_labels_v1.sqlite``, every label whole) reads as it did.

The byte figure itself (``benchmarks/checkpoint_bytes.py``) is not asserted here: a file's
size moves by a page with the random ids and timestamps of a run; what the tests check
instead is deterministic, what is stored: how many records hold a label whole.
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from debategraph.checkpoints import open_checkpointer, thread_config
from debategraph.checkpoints.serde import serializer
from debategraph.state.records import MODEL_AT, Turn, stored_once
from debategraph.state.reducers import extend_turns
from tests.conftest import run_cli, stub_args
from tests.openai_stub import StubOpenAIServer

QUESTION = "Natalia sold 48 clips in April and half as many in May. How many in all?"
SAVED = Path(__file__).parent / "data" / "model_labels_v1.sqlite"
#: The saved thread's agents and the label each one's turns hold (the stub's port then).
SAVED_LABELS = {
    "Ada": "ada@http://127.0.0.1:39079/v1",
    "Bo": "bo@http://127.0.0.1:39079/v1",
    "Cy": "stub@http://127.0.0.1:39079/v1",
}
TURN_LINE = re.compile(r"^r(\d+) (\S+) \(solve\) .* · (\S+)$")


def _turn(agent: str, model: str | None, rnd: int = 1, role: Any = "agent") -> Turn:
    return Turn(agent=agent, content=f"{agent} {rnd}", stage="solve", round=rnd, model=model,
                role=role)  # fmt: skip


def _reply(request: dict[str, Any]) -> dict[str, Any]:
    return {"reasoning": f"{request.get('model')}: 48/2 = 24, 48 + 24 = 72.", "answer": "72"}


def stored_records(db: str, thread_id: str) -> list[Turn]:
    """Every transcript record of a thread as stored: each write decoded, no reducer."""
    records: list[Turn] = []
    with open_checkpointer(db) as saver:
        for tup in saver.list(thread_config(thread_id)):
            for _task, channel, value in tup.pending_writes or ():
                if channel == "transcript":
                    records.extend(value)
    return records


def exported(db: str, thread_id: str, capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    code, out, err = run_cli(["export", thread_id, "--db", db, "--format", "json"], capsys)
    assert code == 0, err
    data: dict[str, Any] = json.loads(out)
    return data


def shown_models(db: str, thread_id: str, capsys: pytest.CaptureFixture[str]) -> list[tuple]:
    """``(round, agent, label)`` of each agent turn line ``show`` prints."""
    code, out, err = run_cli(["show", thread_id, "--db", db], capsys)
    assert code == 0, err
    found = [TURN_LINE.match(line) for line in out.splitlines()]
    return [(int(m[1]), m[2], m[3]) for m in found if m]


def markdown(db: str, thread_id: str, capsys: pytest.CaptureFixture[str]) -> str:
    code, out, err = run_cli(["export", thread_id, "--db", db, "--format", "md"], capsys)
    assert code == 0, err
    return out


# --------------------------------------------------------------------------
# The stored form, on its own
# --------------------------------------------------------------------------


def test_a_label_the_transcript_holds_is_stored_as_a_reference_and_read_back_whole() -> None:
    so_far = [_turn("Ada", "m@u"), _turn("Bo", "n@u"), _turn("user", None, role="user")]
    write = stored_once(
        [_turn("Ada", "m@u", 2), _turn("Ada", None, 2, "tool"), _turn("Cy", "z@u", 2),
         _turn("Bo", "n@u", 2)],
        so_far,
    )  # fmt: skip
    # In memory the write is plain records: state, streams and a parent graph see labels.
    assert [t.model for t in write] == ["m@u", None, "z@u", "n@u"]
    serde = serializer()
    stored = serde.loads_typed(serde.dumps_typed(write))
    assert [t.model for t in stored] == [f"{MODEL_AT}0", None, "z@u", f"{MODEL_AT}1"]
    # The transcript channel reads the stored write back with every label whole, and the
    # same whether it folds one step at a time or the whole history at once (a replay).
    read = extend_turns(extend_turns([], [so_far]), [stored])
    assert [t.model for t in read] == ["m@u", "n@u", None, "m@u", None, "z@u", "n@u"]
    assert read == extend_turns([], [so_far, stored])
    # A label never held before is stored whole; so is every label of a write with no
    # transcript before it.
    assert [t.model for t in serde.loads_typed(serde.dumps_typed(stored_once(write, [])))] == [
        "m@u", None, "z@u", "n@u"
    ]  # fmt: skip


# --------------------------------------------------------------------------
# A run now: once per model in storage, whole in every reader
# --------------------------------------------------------------------------


@pytest.fixture
def solved(
    checkpoint_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> Iterator[tuple[str, dict[str, str], StubOpenAIServer]]:
    """A 3-round solve of Ada (model ``ada``), Bo (``bo``) and Cy (the run's ``stub``)."""
    with StubOpenAIServer(_reply, models=("stub", "ada", "bo")) as server:
        agents = tmp_path / "solvers.yaml"
        agents.write_text(
            f"- name: Ada\n  model: ada@{server.url}\n- name: Bo\n  model: bo@{server.url}\n"
            "- name: Cy\n",
            encoding="utf-8",
        )
        args = ["solve", QUESTION, "--agents-file", str(agents), "--rounds", "3"]
        args += [*stub_args(server, checkpoint_url), "--thread", "t-now"]
        args += ["--archive", str(tmp_path / "archive.sqlite")]
        code, _, err = run_cli(args, capsys)
        assert code == 0, err
        labels = {"Ada": f"ada@{server.url}", "Bo": f"bo@{server.url}", "Cy": f"stub@{server.url}"}
        yield checkpoint_url, labels, server


def test_each_label_is_stored_once_per_agent_and_model(
    solved: tuple[str, dict[str, str], StubOpenAIServer],
) -> None:
    db, labels, _ = solved
    stored = [t for t in stored_records(db, "t-now") if t.role == "agent"]
    assert len(stored) == 9  # 3 solvers x 3 rounds
    whole = sorted(t.model for t in stored if t.model and not t.model.startswith(MODEL_AT))
    assert whole == sorted(labels.values())  # round 1's turns, one per agent and model
    assert all(t.model and t.model.startswith(MODEL_AT) for t in stored if t.round > 1)


def test_state_show_and_exports_read_each_turns_model(
    solved: tuple[str, dict[str, str], StubOpenAIServer], capsys: pytest.CaptureFixture[str]
) -> None:
    db, labels, _ = solved
    turns = [t for t in exported(db, "t-now", capsys)["transcript"] if t["role"] == "agent"]
    assert [(t["agent"], t["model"]) for t in turns] == [
        (t["agent"], labels[t["agent"]]) for t in turns
    ]
    assert len(turns) == 9
    shown = shown_models(db, "t-now", capsys)
    assert sorted(shown) == sorted((r, a, labels[a]) for r in (1, 2, 3) for a in labels)
    md = markdown(db, "t-now", capsys)
    for label in labels.values():  # the usage table names each model (from the turns)
        assert f"| {label} |" in md


def test_a_fork_reads_each_turns_model(
    solved: tuple[str, dict[str, str], StubOpenAIServer],
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(tmp_path)  # the default archive of a Postgres --db lands here
    db, labels, _ = solved
    from debategraph import build_solver_debate
    from debategraph.graphs.solver_debate import GRAPH_NAME

    with open_checkpointer(db) as saver:
        graph = build_solver_debate(None, agents=3, max_rounds=3).compile(
            checkpointer=saver, name=GRAPH_NAME
        )
        after_two = next(
            s.config["configurable"]["checkpoint_id"]
            for s in graph.get_state_history(thread_config("t-now"))
            if s.next and sum(t.role == "agent" for t in s.values.get("transcript", [])) == 6
        )
    code, _, err = run_cli(["fork", "t-now", "--at", after_two, "--thread", "t-fork",
                            "--db", db], capsys)  # fmt: skip
    assert code == 0, err
    turns = [t for t in exported(db, "t-fork", capsys)["transcript"] if t["role"] == "agent"]
    assert len(turns) == 9
    assert all(t["model"] == labels[t["agent"]] for t in turns)


# --------------------------------------------------------------------------
# A thread saved before the change
# --------------------------------------------------------------------------


@pytest.fixture
def saved(tmp_path: Path) -> str:
    copy = tmp_path / "saved.sqlite"
    shutil.copyfile(SAVED, copy)
    return str(copy)


def test_the_saved_thread_holds_every_label_whole(saved: str) -> None:
    stored = [t for t in stored_records(saved, "t-models") if t.role == "agent"]
    assert sorted((t.round, t.agent, t.model) for t in stored) == sorted(
        (r, a, label) for r in (1, 2) for a, label in SAVED_LABELS.items()
    )


def test_a_thread_saved_before_reads_each_turns_model(
    saved: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with open_checkpointer(saved) as saver:
        from debategraph import build_solver_debate
        from debategraph.graphs.solver_debate import GRAPH_NAME

        graph = build_solver_debate(None, agents=3, max_rounds=2).compile(
            checkpointer=saver, name=GRAPH_NAME
        )
        transcript = graph.get_state(thread_config("t-models")).values["transcript"]
    assert [(t.agent, t.model) for t in transcript] == [
        (t.agent, SAVED_LABELS[t.agent]) for t in transcript
    ]
    assert len(transcript) == 6
    turns = exported(saved, "t-models", capsys)["transcript"]
    assert [t["model"] for t in turns] == [SAVED_LABELS[t["agent"]] for t in turns]
    shown = shown_models(saved, "t-models", capsys)
    assert sorted(shown) == sorted(
        (r, a, label) for r in (1, 2) for a, label in SAVED_LABELS.items()
    )
    md = markdown(saved, "t-models", capsys)
    for label in SAVED_LABELS.values():
        assert f"| {label} |" in md
