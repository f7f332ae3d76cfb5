"""The group chat: turns, selection, termination, single turns, reset, history, review."""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.errors import GraphRecursionError
from langgraph.types import Command

from debategraph import build_group_chat, recursion_limit
from debategraph.checkpoints.savers import open_checkpointer
from debategraph.checkpoints.serde import serializer
from debategraph.nodes.conversation import agent_history
from debategraph.nodes.group_chat.setup import DEFAULT_UNTIL
from debategraph.nodes.review import review_request
from debategraph.registry import entry
from debategraph.state.records import Turn
from debategraph.strategies.selection import Rules
from debategraph.strategies.termination import llm, max_turns, regex, stall, token_budget
from tests.fake_model import ScriptedChatModel, text_reply, tool_reply

SNAPSHOT = Path(__file__).parent / "snapshots" / "group_chat.mmd"
PAIR = [
    "Writer: writes the poem and revises it.",
    "Reviewer: reviews the draft; says APPROVED when it is good.",
]
TRIO = [*PAIR, "Editor: fixes spelling."]
APPROVAL = r"regex:\bAPPROVED\b@Reviewer"
SPEAKER_RE = re.compile(r"You are (\w+), one of the participants")


class Chat:
    """A scripted chat model: each agent's n-th message, a selector's and a judge's answers."""

    def __init__(
        self,
        approve_at: int = 2,
        selector: Callable[[int], str] | None = None,
        judge: Callable[[int], bool] | None = None,
    ) -> None:
        self.approve_at = approve_at
        self.selector = selector or (lambda n: "")
        self.judge = judge or (lambda n: False)
        self.order: list[str] = []
        self.prompts: dict[str, list[str]] = {}
        self.selector_calls = 0
        self.judge_calls = 0
        self.model = ScriptedChatModel(respond=self.respond)

    def respond(self, messages: list[BaseMessage]) -> AIMessage:
        system = str(messages[0].content)
        if system.startswith("You choose who speaks next"):
            self.selector_calls += 1
            return text_reply(self.selector(self.selector_calls))
        if system.startswith("You watch a conversation"):
            self.judge_calls += 1
            done = self.judge(self.judge_calls)
            return tool_reply("Judgement", {"done": done, "reason": "the reviewer is happy"})
        match = SPEAKER_RE.search(system)
        assert match, system
        name = match.group(1)
        self.order.append(name)
        self.prompts.setdefault(name, []).append("\n".join(str(m.content) for m in messages))
        n = self.order.count(name)
        if name == "Reviewer" and n >= self.approve_at:
            return text_reply("APPROVED: it scans.")
        return text_reply(f"{name} message {n}")


def worst_case_limit(turns: int) -> int:
    """The recursion limit of the largest chat graph these tests build with this cap."""
    return recursion_limit(build_group_chat(agents=TRIO, max_rounds=turns, pause_after_round=True))


def config(thread: str = "t", turns: int = 10) -> Any:
    return {"configurable": {"thread_id": thread}, "recursion_limit": worst_case_limit(turns)}


def messages_of(graph: Any, cfg: Any) -> list[Turn]:
    return [t for t in graph.get_state(cfg).values["transcript"] if t.role == "agent"]


def test_writer_and_reviewer_until_approval(saver: BaseCheckpointSaver[Any]) -> None:
    chat = Chat(approve_at=2)
    graph = build_group_chat(chat.model, agents=PAIR, until=[APPROVAL], max_rounds=10).compile(
        checkpointer=saver, name="group_chat"
    )
    out = graph.invoke({"task": "Write a haiku about rain"}, config())
    assert chat.order == ["Writer", "Reviewer", "Writer", "Reviewer"]
    assert out["termination_reason"] == "matched"
    assert out["is_complete"] is True
    assert "regex" in out["termination_detail"] and "Reviewer" in out["termination_detail"]
    assert [s.method for s in out["selections"]] == ["sequential"] * 4
    turns = graph.get_state(config()).values["transcript"]
    assert (turns[0].role, turns[0].content) == ("user", "Write a haiku about rain")
    assert [t.round for t in turns] == [0, 1, 2, 3, 4]
    assert {t.agent_id for t in turns[1:]} == {"writer", "reviewer"}
    assert out["usage"].calls == 4
    assert set(out["usage_by_agent"]) == {"Writer", "Reviewer"}


def test_the_hard_cap_ends_a_chat_that_never_agrees() -> None:
    chat = Chat(approve_at=99)
    graph = build_group_chat(chat.model, agents=PAIR, until=[APPROVAL], max_rounds=5).compile()
    out = graph.invoke({"task": "t"}, config(turns=5))
    assert (out["termination_reason"], len(chat.order)) == ("max_turns", 5)
    assert "5 turns done (the hard cap)" in out["termination_detail"]


def test_speakers_read_the_conversation_with_names_and_their_own_as_replies() -> None:
    chat = Chat(approve_at=2)
    graph = build_group_chat(chat.model, agents=PAIR, until=[APPROVAL], max_rounds=6).compile()
    graph.invoke({"task": "Write a haiku"}, config())
    second_writer = chat.prompts["Writer"][1]
    assert "Writer message 1" in second_writer and "Reviewer: Reviewer message 1" in second_writer
    assert "Writer: Writer message 1" not in second_writer  # its own is its reply
    assert "reviews the draft" not in second_writer and "writes the poem" in second_writer


def test_keep_last_bounds_what_a_speaker_reads() -> None:
    chat = Chat(approve_at=99)
    graph = build_group_chat(chat.model, agents=PAIR, max_rounds=8, keep_last=2).compile()
    graph.invoke({"task": "Write"}, config())
    last = chat.prompts["Writer"][-1]
    assert "Reviewer message 3" in last and "Writer message 3" in last
    assert "message 2" not in last
    assert "Write" in last  # the task stays in the system prompt


def test_single_turn_then_multi_turn_then_reset(saver: BaseCheckpointSaver[Any]) -> None:
    chat = Chat(approve_at=1)
    graph = build_group_chat(chat.model, agents=TRIO, until=[APPROVAL], max_rounds=6).compile(
        checkpointer=saver
    )
    cfg = config()
    out = graph.invoke({"task": "Write", "speaker": "editor"}, cfg)
    assert chat.order == ["Editor"] and out["is_complete"] is False
    assert out["selections"][-1].method == "named"
    out = graph.invoke({"speaker": "Writer"}, cfg)
    assert chat.order == ["Editor", "Writer"] and out["is_complete"] is False

    out = graph.invoke({}, cfg)  # multi-turn: the next in sequence until approval
    assert chat.order == ["Editor", "Writer", "Reviewer"]
    assert (out["is_complete"], out["termination_reason"]) == (True, "matched")

    out = graph.invoke({"speaker": "Writer"}, cfg)  # finished: nothing runs without reset
    assert chat.order == ["Editor", "Writer", "Reviewer"]
    assert "reset=True" in out["notes"][-1]

    out = graph.invoke({"reset": True, "message": "Now a second stanza."}, cfg)
    assert chat.order[3:] == ["Editor", "Writer", "Reviewer"]
    assert (out["is_complete"], out["termination_reason"]) == (True, "matched")
    humans = [t.content for t in graph.get_state(cfg).values["transcript"] if t.role == "user"]
    assert humans == ["Write", "Now a second stanza."]


def test_reset_counts_the_cap_afresh() -> None:
    chat = Chat(approve_at=99)
    graph = build_group_chat(chat.model, agents=PAIR, max_rounds=3).compile(
        checkpointer=InMemorySaver(serde=serializer())
    )
    cfg = config()
    assert graph.invoke({"task": "t"}, cfg)["termination_reason"] == "max_turns"
    out = graph.invoke({"reset": True}, cfg)
    assert out["termination_reason"] == "max_turns" and len(chat.order) == 6


def test_each_agents_history_is_what_it_saw_and_wrote() -> None:
    chat = Chat(approve_at=99)
    graph = build_group_chat(chat.model, agents=TRIO, max_rounds=6, keep_last=2).compile(
        checkpointer=InMemorySaver(serde=serializer())
    )
    cfg = config()
    graph.invoke({"task": "Write"}, cfg)
    values = graph.get_state(cfg).values
    editor = [(t.agent, t.content) for t in agent_history(values, "Editor")]
    # The editor spoke at turns 3 and 6, each time reading the last two messages.
    assert editor == [
        ("Writer", "Writer message 1"),
        ("Reviewer", "Reviewer message 1"),
        ("Editor", "Editor message 1"),
        ("Writer", "Writer message 2"),
        ("Reviewer", "Reviewer message 2"),
        ("Editor", "Editor message 2"),
    ]
    assert ("user", "Write") not in [(t.agent, t.content) for t in agent_history(values, "Editor")]
    assert ("user", "Write") in [(t.agent, t.content) for t in agent_history(values, "Writer")]


def test_llm_selection_with_fallback_recorded() -> None:
    answers = {1: "the reviewer", 2: "Writer", 3: "nonsense", 4: "???"}
    chat = Chat(approve_at=2, selector=lambda n: answers.get(n, "reviewer"))
    graph = build_group_chat(
        chat.model, agents=TRIO, selection="llm", until=[APPROVAL], max_rounds=6
    ).compile()
    out = graph.invoke({"task": "Write"}, config())
    methods = [(s.agent, s.method) for s in out["selections"]]
    assert methods[:3] == [("Reviewer", "llm"), ("Writer", "llm"), ("Reviewer", "fallback")]
    assert out["termination_reason"] == "matched"
    assert out["usage_by_agent"]["selector"].calls == 4
    assert any("selector answered '???'" in note for note in out["notes"])


def test_first_speaker_and_the_in_a_row_guard() -> None:
    chat = Chat(approve_at=99, selector=lambda n: "Writer")
    graph = build_group_chat(
        chat.model,
        agents=PAIR,
        selection="llm",
        first_speaker="Reviewer",
        max_rounds=5,
        max_in_a_row=2,
    ).compile()
    out = graph.invoke({"task": "Write"}, config())
    assert chat.order == ["Reviewer", "Writer", "Writer", "Reviewer", "Writer"]
    assert [s.method for s in out["selections"]] == ["initial", "llm", "llm", "guard", "llm"]


def test_rules_selector_from_the_api() -> None:
    chat = Chat(approve_at=1)

    def editor_after_writer(ctx: Any) -> str | None:
        return (
            "Editor"
            if ctx.last_speaker == "Writer"
            else "Reviewer"
            if ctx.last_speaker == "Editor"
            else "Writer"
        )

    graph = build_group_chat(
        chat.model,
        agents=TRIO,
        selection=Rules(editor_after_writer),
        until=[APPROVAL],
        max_rounds=9,
    ).compile()
    graph.invoke({"task": "Write"}, config())
    assert chat.order == ["Writer", "Editor", "Reviewer"]


def test_llm_judge_termination_after_the_reviewer_only() -> None:
    chat = Chat(approve_at=99, judge=lambda n: n == 2)
    graph = build_group_chat(
        chat.model,
        agents=PAIR,
        termination=llm("Has the reviewer approved?", "Reviewer") | max_turns(10),
    ).compile()
    out = graph.invoke({"task": "Write"}, config())
    assert chat.judge_calls == 2 and len(chat.order) == 4  # judged after turns 2 and 4 only
    assert out["termination_reason"] == "judged"
    assert "the reviewer is happy" in out["termination_detail"]
    assert out["usage_by_agent"]["judge"].calls == 2


def test_stall_and_token_budget_end_a_chat() -> None:
    model = ScriptedChatModel(respond=lambda m: text_reply("same again"))
    out = (
        build_group_chat(model, agents=PAIR, termination=stall(2) | max_turns(9))
        .compile()
        .invoke({"task": "t"}, config())
    )
    assert (out["termination_reason"], out["usage"].calls) == ("stalled", 3)
    out = (
        build_group_chat(model, agents=PAIR, termination=token_budget(30) | max_turns(9))
        .compile()
        .invoke({"task": "t"}, config())
    )
    assert (out["termination_reason"], out["usage"].calls) == ("budget", 2)  # 15 tokens a turn


def test_pause_after_each_turn_interject_reaches_the_next_speaker(
    saver: BaseCheckpointSaver[Any],
) -> None:
    chat = Chat(approve_at=2)
    graph = build_group_chat(
        chat.model, agents=PAIR, until=[APPROVAL], max_rounds=6, pause_after_round=True
    ).compile(checkpointer=saver)
    cfg = config()
    out = graph.invoke({"task": "Write"}, cfg)
    request = review_request(out["__interrupt__"][0].value)
    payload = request["args"]
    assert (payload["round"], payload["rounds"], payload["speaker"]) == (1, 6, "Writer")
    assert request["description"].startswith("Turn 1 of 6 is done.")
    assert payload["message"] == "Writer message 1"  # the turn's, no longer overwritten
    assert "Mind the syllables." not in "".join(chat.prompts.get("Reviewer", []))
    out = graph.invoke(Command(resume={"interject": "Mind the syllables."}), cfg)
    assert "A human (take it into account): Mind the syllables." in chat.prompts["Reviewer"][0]
    while "__interrupt__" in out:
        out = graph.invoke(Command(resume={"approve": True}), cfg)
    assert out["termination_reason"] == "matched"


def test_async_and_sync_give_the_same_chat() -> None:
    sync_chat, async_chat = Chat(approve_at=2), Chat(approve_at=2)
    sync_out = (
        build_group_chat(sync_chat.model, agents=PAIR, until=[APPROVAL], max_rounds=6)
        .compile()
        .invoke({"task": "t"}, config())
    )
    async_out = asyncio.run(
        build_group_chat(async_chat.model, agents=PAIR, until=[APPROVAL], max_rounds=6)
        .compile()
        .ainvoke({"task": "t"}, config())
    )
    assert sync_chat.order == async_chat.order
    assert sync_out["termination_reason"] == async_out["termination_reason"] == "matched"


def test_messages_stream_as_they_are_produced() -> None:
    chat = Chat(approve_at=1)
    graph = build_group_chat(chat.model, agents=PAIR, until=[APPROVAL], max_rounds=4).compile()
    streamed = [
        (meta["langgraph_node"], message.content)
        for message, meta in graph.stream({"task": "t"}, config(), stream_mode="messages")
        if message.content
    ]
    assert streamed == [("Writer", "Writer message 1"), ("Reviewer", "APPROVED: it scans.")]


def test_resume_after_a_crash_mid_chat(tmp_path: Path) -> None:
    calls = {"n": 0}
    chat = Chat(approve_at=2)

    def flaky(messages: list[BaseMessage]) -> AIMessage:
        calls["n"] += 1
        if calls["n"] == 3:
            raise RuntimeError("endpoint died")
        return chat.respond(messages)

    model = ScriptedChatModel(respond=flaky)
    with open_checkpointer(tmp_path / "c.sqlite") as saver:
        graph = build_group_chat(model, agents=PAIR, until=[APPROVAL], max_rounds=6).compile(
            checkpointer=saver
        )
        with pytest.raises(RuntimeError):
            graph.invoke({"task": "t"}, config())
        out = graph.invoke(None, config())
    assert out["termination_reason"] == "matched"
    assert chat.order == ["Writer", "Reviewer", "Writer", "Reviewer"]


def test_graph_drawing_snapshot() -> None:
    graph = build_group_chat(agents=PAIR, until=[APPROVAL], max_rounds=4, pause_after_round=True)
    drawn = graph.compile(name="group_chat").get_graph().draw_mermaid()
    if not SNAPSHOT.exists():
        SNAPSHOT.write_text(drawn, encoding="utf-8")
    assert drawn == SNAPSHOT.read_text(encoding="utf-8")


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"agents": []}, "a group chat needs at least 2 agents, got 0"),
        ({"agents": ["Solo: alone"]}, "a group chat needs at least 2 agents, got 1"),
        ({"agents": ["Ann: a", "ann: b"]}, "duplicate agent name 'ann'"),
        ({"agents": ["A|B: a", "C: c"]}, "contains '|'"),
        ({"agents": ["select: a", "C: c"]}, "agent name 'select' is reserved"),
        ({"first_speaker": "Nobody"}, "initial agent 'Nobody' is not an agent"),
        ({"until": ["regex:([@Reviewer"]}, "does not compile"),
        ({"termination": regex("x")}, "has no hard cap"),
        ({"termination": regex("x") & max_turns(3)}, "has no hard cap"),
        ({"selection": "random"}, "selection 'random' is not known"),
        ({"max_rounds": 0}, "max_rounds must be at least 1"),
        ({"max_in_a_row": 0}, "max in a row must be at least 1"),
        ({"keep_last": -1}, "keep_last must be 0"),
    ],
)
def test_bad_settings_fail_at_build_time(kwargs: dict[str, Any], message: str) -> None:
    args: dict[str, Any] = {"agents": PAIR, **kwargs}
    with pytest.raises(ValueError, match=re.escape(message)):
        build_group_chat(**args)


@pytest.mark.parametrize(
    ("graph_input", "message"),
    [({"task": "  "}, "task is empty"), ({"task": "t", "speaker": "Nobody"}, "speaker 'Nobody'")],
)
def test_bad_input_fails_when_invoked(graph_input: dict[str, Any], message: str) -> None:
    graph = build_group_chat(Chat().model, agents=PAIR, max_rounds=2).compile()
    with pytest.raises(ValueError, match=message):
        graph.invoke(graph_input, config())


def test_recursion_limit_is_enough_and_bounded() -> None:
    chat = Chat(approve_at=99)
    builder = build_group_chat(chat.model, agents=TRIO, max_rounds=7, max_in_a_row=1)
    out = builder.compile().invoke({"task": "t"}, {"recursion_limit": recursion_limit(builder)})
    assert (out["termination_reason"], len(chat.order)) == ("max_turns", 7)
    one_turn = build_group_chat(agents=TRIO, max_rounds=1, max_in_a_row=1)
    with pytest.raises(GraphRecursionError):
        builder.compile().invoke({"task": "t"}, {"recursion_limit": recursion_limit(one_turn)})


def test_max_turns_is_the_deprecated_name_of_max_rounds() -> None:
    chat = Chat(approve_at=99)
    with pytest.warns(
        DeprecationWarning, match=r"max_turns=\.\.\.\) is deprecated: use max_rounds"
    ):
        graph = build_group_chat(chat.model, agents=PAIR, max_turns=3).compile()
    out = graph.invoke({"task": "t"}, config(turns=3))
    assert (out["termination_reason"], len(chat.order)) == ("max_turns", 3)
    with pytest.raises(ValueError, match="give only max_rounds"):
        build_group_chat(agents=PAIR, max_turns=3, max_rounds=4)


def test_the_studio_graph_builds_with_its_registry_settings() -> None:
    line = entry("group_chat")
    assert tuple(line.studio["until"]) == DEFAULT_UNTIL  # the default chat the CLI runs
    graph = line.build()(**line.studio).compile(name=line.name)
    assert {"Writer", "Reviewer", "select", "close_turn"} <= set(graph.get_graph().nodes)
    assert recursion_limit(graph) == recursion_limit(build_group_chat(max_rounds=10))


class RunClock:
    """A stand-in for ``time.time`` that moves only when a test moves it."""

    def __init__(self) -> None:
        self.now = time.time()

    def __call__(self) -> float:
        return self.now


@pytest.mark.parametrize(
    "limit", [{"time_limit_s": 100}, {"until": ["timeout:100s"]}], ids=["time_limit_s", "until"]
)
def test_a_time_limit_ends_the_chat(limit: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    # Each reply takes 40 s of the run's clock (a stand-in, no real waiting): after the
    # third turn 120 s have passed, so the limit of 100 s ends the chat there, exactly.
    chat = Chat(approve_at=99)
    clock = RunClock()
    monkeypatch.setattr(time, "time", clock)

    def slow(messages: list[BaseMessage]) -> AIMessage:
        clock.now += 40
        return chat.respond(messages)

    model = ScriptedChatModel(respond=slow)
    graph = build_group_chat(model, agents=PAIR, max_rounds=40, **limit).compile()
    out = graph.invoke({"task": "t"}, config(turns=40))
    assert out["termination_reason"] == "time_limit"
    assert "100" in out["termination_detail"]
    assert len(chat.order) == 3


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (0, "time_limit_s must be a positive number of seconds, got 0"),
        (-5, "time_limit_s must be a positive number of seconds, got -5"),
        (float("inf"), "time_limit_s must be a positive number of seconds, got inf"),
        ("90s", "time_limit_s must be a number of seconds, got '90s'"),
    ],
)
def test_a_bad_time_limit_fails_at_build_time(value: Any, message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        build_group_chat(agents=PAIR, time_limit_s=value)


def test_the_factorys_default_chat_is_the_one_the_cli_runs_and_studio_serves() -> None:
    """The default chat's defaults are written once (``DEFAULT_CHAT``): the factory left
    at its default agents ends where the CLI's and Studio's chat ends."""
    from debategraph.nodes.group_chat.setup import DEFAULT_CHAT, group_chat_setup
    from debategraph.strategies.termination.conditions import describe_condition

    def ends(**given: Any) -> str:
        settings = {
            "agents": DEFAULT_CHAT["agents"],
            "selection": "sequential",
            "first_speaker": None,
            "until": (),
            "termination": None,
            "max_rounds": None,
            "max_in_a_row": None,
            "keep_last": 0,
            "pause_after_round": False,
            "time_limit_s": None,
        }
        return describe_condition(group_chat_setup(**{**settings, **given}).termination)

    served = {k: entry("group_chat").studio[k] for k in ("until", "max_rounds")}
    assert ends() == ends(**served) == ends(until=DEFAULT_UNTIL, max_rounds=10)
    assert "APPROVED" in ends() and "APPROVED" not in ends(until=["timeout:9s"], max_rounds=3)
