"""Tests for the staged meeting graph: stages, the round controller, interjections, the
final decision, stops, fallbacks, checkpoints, validation, Studio and the declaration."""

from __future__ import annotations

import asyncio
import re
import typing
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.errors import GraphRecursionError
from langgraph.types import Command

from debategraph import build_meeting, recursion_limit
from debategraph.checkpoints import open_checkpointer
from debategraph.checkpoints.savers import serializer
from debategraph.cli.patterns.declaration import Launch
from debategraph.cli.patterns.meeting import PATTERN
from debategraph.errors import UsageError
from debategraph.graphs.meeting import GRAPH_NAME
from debategraph.nodes.conversation import agent_history
from debategraph.nodes.meeting.setup import DEFAULT_STAGES, meeting_setup
from debategraph.nodes.review import review_request
from debategraph.registry import entry, record_types
from debategraph.state.meeting import FinalDecision, RoundDecision, Stage
from debategraph.state.records import Participant, Turn, Usage
from tests.fake_model import ScriptedChatModel, text_reply, tool_reply

SNAPSHOT = Path(__file__).parent / "snapshots" / "meeting.mmd"
TOPIC = "Should we move the team to a four-day week?"
NOTE = "Remember the support rota."
SPEAKER_RE = re.compile(r"You are (.+?), a participant in a meeting")
DECISION = {
    "decision": "Pilot a four-day week for one quarter.",
    "rationale": "The advocate's gains outweigh the skeptic's risks if support is covered.",
    "dissent": ["The skeptic doubts the support rota holds."],
    "next_steps": ["Draft the rota", "Review after the quarter"],
}
OUTPUT_KEYS = {
    "topic",
    "transcript",
    "messages",
    "decision",
    "controller_decisions",
    "stage",
    "stage_round",
    "termination_reason",
    "usage",
    "usage_by_agent",
    "usage_by_model",
    "notes",
}
TWO_STAGES = [
    {"name": "pitch", "participants": ["Ann: pitches the idea"], "max_rounds": 1},
    {"name": "debate", "participants": ["Bob: argues for", "Cy: argues against"]},
]


def said(name: str, n: int) -> str:
    """The scripted n-th message of a participant."""
    return f"<{name}-{n}> I have a point to make."


class Script:
    """A scripted model for a whole meeting, dispatching on each prompt's system message.

    ``controls`` are the controller's replies in order (a dict is a RoundDecision's
    arguments, an AIMessage is sent as is); ``decision`` the chair's.
    """

    def __init__(
        self,
        controls: list[dict[str, Any] | AIMessage] | None = None,
        *,
        decision: AIMessage | None = None,
        speak: Callable[[str, int], AIMessage] | None = None,
    ) -> None:
        self.controls = list(controls or [])
        self.decision = decision
        self.speak = speak
        self.order: list[str] = []
        self.prompts: dict[str, list[list[BaseMessage]]] = {}
        self.controller: list[list[BaseMessage]] = []
        self.chair: list[list[BaseMessage]] = []
        self.model = ScriptedChatModel(respond=self.respond)

    def respond(self, messages: list[BaseMessage]) -> AIMessage:
        system = str(messages[0].content)
        found = SPEAKER_RE.match(system)
        if found:
            name = found.group(1)
            self.order.append(name)
            self.prompts.setdefault(name, []).append(messages)
            n = len(self.prompts[name])
            return self.speak(name, n) if self.speak else text_reply(said(name, n))
        if system.startswith("You run the agenda"):
            self.controller.append(messages)
            reply = self.controls.pop(0)
            return reply if isinstance(reply, AIMessage) else tool_reply("RoundDecision", reply)
        if system.startswith("You chair"):
            self.chair.append(messages)
            return self.decision or tool_reply("FinalDecision", DECISION)
        raise AssertionError(f"unexpected prompt: {system!r}")


def go_on(reason: str = "New points keep coming.") -> dict[str, Any]:
    return {"action": "continue", "reason": reason}


def move_on(reason: str = "The goal is reached.") -> dict[str, Any]:
    return {"action": "next_stage", "reason": reason}


def config_for(thread: str, limit: int = 100) -> RunnableConfig:
    return {"configurable": {"thread_id": thread}, "recursion_limit": limit}


def text_of(messages: list[BaseMessage]) -> str:
    return "\n".join(str(m.content) for m in messages)


# --------------------------------------------------------------------------
# Stages, the controller, the records
# --------------------------------------------------------------------------


def test_default_meeting_runs_every_stage(saver: BaseCheckpointSaver[Any]) -> None:
    """Presentation (cap 1), discussion (cap 2: continue, then forced), summary (cap 1)."""
    script = Script([go_on()])
    graph = build_meeting(script.model).compile(checkpointer=saver)
    config = config_for("default")
    out = graph.invoke({"topic": TOPIC}, config)

    assert set(out) == OUTPUT_KEYS
    assert out["termination_reason"] == "completed"
    assert script.order == ["Presenter", "Advocate", "Skeptic", "Advocate", "Skeptic", "Summarizer"]
    assert len(script.controller) == 1  # only discussion round 1 is below its cap
    assert (out["stage"], out["stage_round"]) == ("summary", 1)
    assert out["decision"] == FinalDecision(**DECISION)
    decisions = out["controller_decisions"]
    assert all(isinstance(d, RoundDecision) for d in decisions)
    assert [
        (d.stage, d.stage_round, d.max_rounds, d.round, d.action, d.forced) for d in decisions
    ] == [
        ("presentation", 1, 1, 1, "next_stage", True),
        ("discussion", 1, 2, 2, "continue", False),
        ("discussion", 2, 2, 3, "next_stage", True),
        ("summary", 1, 1, 4, "next_stage", True),
    ]
    assert decisions[0].reason == "stage presentation reached its round cap (1)"
    assert decisions[1].reason == "New points keep coming."
    # 6 speeches + 1 controller call + the chair
    assert out["usage"].calls == 8
    assert set(out["usage_by_agent"]) == {
        "Presenter",
        "Advocate",
        "Skeptic",
        "Summarizer",
        "controller",
        "chair",
    }


def test_each_message_is_a_full_record(saver: BaseCheckpointSaver[Any]) -> None:
    script = Script([go_on()])
    graph = build_meeting(script.model).compile(checkpointer=saver)
    config = config_for("records")
    graph.invoke({"topic": TOPIC}, config)
    transcript: list[Turn] = graph.get_state(config).values["transcript"]
    speeches = [t for t in transcript if t.role == "agent" and t.stage != "decision"]
    assert [(t.agent, t.agent_id, t.stage, t.round) for t in speeches] == [
        ("Presenter", "presenter", "presentation", 1),
        ("Advocate", "advocate", "discussion", 2),
        ("Skeptic", "skeptic", "discussion", 2),
        ("Advocate", "advocate", "discussion", 3),
        ("Skeptic", "skeptic", "discussion", 3),
        ("Summarizer", "summarizer", "summary", 4),
    ]
    assert [t.content for t in speeches[:2]] == [said("Presenter", 1), said("Advocate", 1)]
    assert len({t.id for t in transcript}) == len(transcript)
    assert all(t.timestamp > 0 and t.usage.calls == 1 for t in speeches)
    # Each message replies to what its speaker read (all of it here), the previous one last.
    for index, turn in enumerate(speeches):
        assert turn.reply_to == tuple(t.id for t in speeches[:index])
    # The controller's call is a system record, outside the conversation.
    (control,) = [t for t in transcript if t.agent == "controller"]
    assert (control.role, control.stage, control.round, control.answer) == (
        "system",
        "discussion",
        2,
        "continue",
    )
    chair = transcript[-1]
    assert (chair.agent, chair.stage, chair.content) == ("chair", "decision", DECISION["decision"])
    assert chair.reply_to == tuple(t.id for t in speeches)
    # What an agent has seen and written is read back from reply_to.
    values = graph.get_state(config).values
    assert [t.agent for t in agent_history(values, "Skeptic")] == [
        "Presenter",
        "Advocate",
        "Skeptic",
        "Advocate",
        "Skeptic",
    ]


def test_speakers_read_topic_goal_instructions_and_conversation() -> None:
    script = Script([go_on()])
    build_meeting(script.model).compile().invoke({"topic": TOPIC}, config_for("x"))
    opening = script.prompts["Presenter"][0]
    assert len(opening) == 2  # nobody spoke before: system + task
    system = str(opening[0].content)
    assert system.startswith(f"You are Presenter, a participant in a meeting on: {TOPIC}")
    assert "Your role: presents the topic clearly and neutrally" in system
    assert "Stage presentation, round 1 of at most 1." in str(opening[1].content)
    assert "Goal of this stage: Lay out the topic" in str(opening[1].content)
    assert "Nobody has spoken yet" in str(opening[1].content)

    skeptic = script.prompts["Skeptic"][1]  # discussion round 2
    assert "participants of this stage are: Advocate, Skeptic" in str(skeptic[0].content)
    lines = [str(m.content) for m in skeptic[1:-1]]
    assert lines == [
        f"Presenter: {said('Presenter', 1)}",
        f"Advocate: {said('Advocate', 1)}",
        said("Skeptic", 1),  # its own message, as its reply
        f"Advocate: {said('Advocate', 2)}",
    ]
    assert isinstance(skeptic[3], AIMessage)
    assert "Stage discussion, round 2 of at most 2." in str(skeptic[-1].content)
    assert "It is your turn, Skeptic" in str(skeptic[-1].content)


def test_controller_moves_on_early_and_reads_the_round() -> None:
    script = Script([move_on("They agree already.")])
    graph = build_meeting(script.model, max_rounds=3).compile()
    out = graph.invoke({"topic": TOPIC}, config_for("x"))
    assert script.order == ["Presenter", "Advocate", "Skeptic", "Summarizer"]
    assert out["termination_reason"] == "completed"
    (asked,) = script.controller
    task = str(asked[-1].content)
    assert "Round 1 of at most 3 of stage discussion is over." in task
    assert "Next comes stage summary." in task
    assert f"Skeptic: {said('Skeptic', 1)}" in text_of(asked)
    assert script.model.bound_tools  # a structured call
    discussion = out["controller_decisions"][1]
    assert (discussion.action, discussion.reason, discussion.forced) == (
        "next_stage",
        "They agree already.",
        False,
    )


def test_invalid_controller_output_moves_on_with_the_reason() -> None:
    # Three unusable replies (the call helper's attempts), then the meeting moves on.
    script = Script([text_reply("maybe?"), text_reply("dunno"), text_reply("hmm")])
    out = build_meeting(script.model, max_rounds=3).compile().invoke({"topic": TOPIC})
    assert script.order == ["Presenter", "Advocate", "Skeptic", "Summarizer"]
    decision = out["controller_decisions"][1]
    assert (decision.stage, decision.action, decision.forced) == ("discussion", "next_stage", False)
    assert decision.reason == "the controller gave no usable decision: the meeting moves on"
    assert decision.fallback
    assert len(script.controller) == 3 and script.controls == []
    assert out["termination_reason"] == "completed"


def test_a_stage_given_its_own_cap_and_a_shared_participant() -> None:
    stages = [
        Stage(name="pitch", participants=(Participant(name="Ann", instructions="pitches"),)),
        {"name": "review", "participants": [{"name": "Bob"}, "Ann: answers"], "max_rounds": 3},
    ]
    script = Script([go_on(), move_on()])
    builder = build_meeting(script.model, stages=stages, max_rounds=1)
    assert {"ann", "bob"} <= set(builder.nodes)
    out = builder.compile().invoke({"topic": TOPIC}, config_for("x"))
    assert script.order == ["Ann", "Bob", "Ann", "Bob", "Ann"]
    assert "Your role: answers" in str(script.prompts["Ann"][1][0].content)
    assert "Your role: take part constructively." in str(script.prompts["Bob"][0][0].content)
    assert [(d.stage, d.stage_round, d.action) for d in out["controller_decisions"]] == [
        ("pitch", 1, "next_stage"),
        ("review", 1, "continue"),
        ("review", 2, "next_stage"),
    ]


def test_keep_last_bounds_what_a_speaker_reads() -> None:
    script = Script([go_on()])
    build_meeting(script.model, keep_last=2).compile().invoke({"topic": TOPIC}, config_for("x"))
    summarizer = script.prompts["Summarizer"][0]
    assert [str(m.content) for m in summarizer[1:-1]] == [
        f"Advocate: {said('Advocate', 2)}",
        f"Skeptic: {said('Skeptic', 2)}",
    ]


# --------------------------------------------------------------------------
# The final decision, the end of the meeting
# --------------------------------------------------------------------------


def test_final_decision_reads_the_whole_conversation() -> None:
    script = Script([go_on()])
    out = build_meeting(script.model, keep_last=1).compile().invoke({"topic": TOPIC})
    (asked,) = script.chair
    assert str(asked[0].content).startswith(f"You chair a meeting on: {TOPIC}")
    assert "Presenter, Advocate, Skeptic, Summarizer" in str(asked[0].content)
    assert len(asked) == 2 + 6  # system, the six messages, the task
    assert out["decision"].next_steps == DECISION["next_steps"]


def test_invalid_final_decision_is_a_recorded_fallback() -> None:
    script = Script([go_on()], decision=text_reply("We should probably do it."))
    out = build_meeting(script.model).compile().invoke({"topic": TOPIC})
    assert out["decision"] is None
    assert out["termination_reason"] == "completed"
    (note,) = out["notes"]
    assert note.startswith("the chair gave no usable decision: ")


def test_a_round_of_empty_messages_ends_with_error() -> None:
    script = Script(speak=lambda name, n: text_reply("  "))
    out = build_meeting(script.model).compile().invoke({"topic": TOPIC})
    assert out["termination_reason"] == "error"
    assert script.order == ["Presenter", "Presenter"]  # one retry of the empty reply
    assert out["controller_decisions"] == []
    assert out["decision"] is None  # nobody spoke: no call
    assert script.chair == []
    assert out["notes"] == [
        "nobody said anything in round 1 of stage presentation: the meeting ends",
        "the chair gave no usable decision: nobody spoke",
    ]


def test_a_stop_skips_the_remaining_stages(saver: BaseCheckpointSaver[Any]) -> None:
    script = Script()
    graph = build_meeting(script.model, pause_after_round=True).compile(checkpointer=saver)
    config = config_for("stop")
    out = graph.invoke({"topic": TOPIC}, config)
    assert review_request(out["__interrupt__"][0].value)["args"]["stage"] == "presentation"
    # What the shared open_round writes when it drains a stop request from the inbox.
    graph.update_state(config, {"termination_reason": "stopped"}, as_node="human")
    out = graph.invoke(None, config)
    assert "__interrupt__" not in out
    assert out["termination_reason"] == "stopped"
    assert script.order == ["Presenter"]
    assert len(script.chair) == 1
    assert out["decision"] == FinalDecision(**DECISION)
    assert graph.get_state(config).next == ()


def test_the_thread_inbox_interjects_and_stops() -> None:
    """The shared open_round drains the inbox: an interjection, then a stop."""
    from langgraph.store.memory import InMemoryStore

    from debategraph.checkpoints import inbox

    script = Script([go_on()])
    store = InMemoryStore()
    graph = build_meeting(script.model, pause_after_round=True).compile(
        checkpointer=InMemorySaver(serde=serializer()), store=store
    )
    config = config_for("inbox")
    graph.invoke({"topic": TOPIC}, config)  # the presentation, then the pause
    inbox.post(store, "inbox", inbox.INTERJECT, NOTE)
    graph.invoke(Command(resume={"approve": True}), config)  # discussion round 1
    assert NOTE in text_of(script.prompts["Advocate"][0])
    inbox.post(store, "inbox", inbox.STOP)
    out = graph.invoke(Command(resume={"approve": True}), config)
    assert out["termination_reason"] == "stopped"
    assert script.order == ["Presenter", "Advocate", "Skeptic"]
    assert len(script.chair) == 1


# --------------------------------------------------------------------------
# Human review between rounds
# --------------------------------------------------------------------------


def test_interjection_reaches_the_next_speakers(saver: BaseCheckpointSaver[Any]) -> None:
    script = Script([go_on()])
    graph = build_meeting(script.model, pause_after_round=True).compile(checkpointer=saver)
    config = config_for("pause")

    out = graph.invoke({"topic": TOPIC}, config)
    (pause,) = out["__interrupt__"]
    request = review_request(pause.value)
    payload = request["args"]
    assert list(payload)[:2] == ["round", "rounds"]
    assert (request["name"], payload["round"], payload["rounds"]) == ("round_review", 1, 4)
    assert (payload["stage"], payload["stage_round"], payload["stage_rounds"]) == (
        "presentation",
        1,
        1,
    )
    assert payload["messages"] == {"Presenter": said("Presenter", 1)}
    assert payload["controller"]["forced"] is True
    assert (payload["next_stage"], payload["next_stage_round"]) == ("discussion", 1)
    assert payload["tokens_this_round"] == 15
    assert "respond with a text every participant reads next round" in request["description"]

    out = graph.invoke(Command(resume={"interject": NOTE}), config)
    assert review_request(out["__interrupt__"][0].value)["args"]["stage"] == "discussion"
    advocate = script.prompts["Advocate"][0]
    assert str(advocate[-2].content) == f"A human (take it into account): {NOTE}"
    assert NOTE in text_of(script.prompts["Skeptic"][0])
    transcript = graph.get_state(config).values["transcript"]
    (user,) = [t for t in transcript if t.role == "user"]
    assert (user.agent, user.round, user.content) == ("user", 1, NOTE)
    mine = next(t for t in transcript if t.agent == "Advocate")
    assert mine.reply_to[-1] == user.id  # the interjection is the message it answers

    while "__interrupt__" in out:
        out = graph.invoke(Command(resume={"approve": True}), config)
    assert out["termination_reason"] == "completed"
    assert script.order == ["Presenter", "Advocate", "Skeptic", "Advocate", "Skeptic", "Summarizer"]


def test_sqlite_resume_mid_meeting_in_a_new_process(tmp_path: Path) -> None:
    script = Script([go_on()])
    db = tmp_path / "resume.sqlite"
    config = config_for("resume")
    with open_checkpointer(db) as sqlite_saver:
        graph = build_meeting(script.model, pause_after_round=True).compile(
            checkpointer=sqlite_saver
        )
        graph.invoke({"topic": TOPIC}, config)  # presentation
        graph.invoke(Command(resume={"approve": True}), config)  # discussion round 1
    with open_checkpointer(db) as sqlite_saver:
        graph = build_meeting(script.model, pause_after_round=True).compile(
            checkpointer=sqlite_saver
        )
        state = graph.get_state(config)
        assert (state.values["stage"], state.values["stage_round"]) == ("discussion", 2)
        out = graph.invoke(Command(resume={"approve": True}), config)
        while "__interrupt__" in out:
            out = graph.invoke(Command(resume={"approve": True}), config)
        values = graph.get_state(config).values
    assert out["termination_reason"] == "completed"
    assert script.order == ["Presenter", "Advocate", "Skeptic", "Advocate", "Skeptic", "Summarizer"]
    assert isinstance(values["decision"], FinalDecision)
    assert all(isinstance(d, RoundDecision) for d in values["controller_decisions"])
    assert all(isinstance(t, Turn) for t in values["transcript"])
    assert isinstance(values["usage"], Usage)
    assert {RoundDecision, FinalDecision, Stage} <= set(record_types())


def test_ainvoke_runs_the_same_meeting() -> None:
    script = Script([go_on()])
    graph = build_meeting(script.model).compile()
    out = asyncio.run(graph.ainvoke({"topic": TOPIC}, config_for("async")))
    assert out["termination_reason"] == "completed"
    assert script.order == ["Presenter", "Advocate", "Skeptic", "Advocate", "Skeptic", "Summarizer"]
    assert out["decision"] == FinalDecision(**DECISION)


def test_speeches_stream_as_messages() -> None:
    script = Script([move_on()], decision=tool_reply("FinalDecision", DECISION))
    graph = build_meeting(script.model).compile()
    nodes = [
        metadata["langgraph_node"]
        for message, metadata in graph.stream(
            {"topic": TOPIC}, config_for("x"), stream_mode="messages"
        )
        if message.content
    ]
    # The speeches as they are spoken, then the chair's typed decision as its text.
    assert nodes == ["presenter", "advocate", "skeptic", "summarizer", "decide"]


def test_recursion_limit_is_enough_and_bounded() -> None:
    """The graph's own limit runs its longest meeting; a 1-round graph's limit does not."""
    assert recursion_limit(build_meeting(max_rounds=1)) < recursion_limit(build_meeting())
    # Every stage to its cap (1, 5, 1 rounds), pausing after each round.
    script = Script([go_on()] * 4)
    graph = build_meeting(script.model, max_rounds=5, pause_after_round=True).compile(
        checkpointer=InMemorySaver()
    )
    config = config_for("longest", recursion_limit(graph))
    out = graph.invoke({"topic": TOPIC}, config)
    while "__interrupt__" in out:
        out = graph.invoke(Command(resume={"approve": True}), config)
    assert out["termination_reason"] == "completed"
    assert [d.stage_round for d in out["controller_decisions"]] == [1, 1, 2, 3, 4, 5, 1]
    # The same meeting in one invocation, without the pauses.
    script = Script([go_on()] * 4)
    graph = build_meeting(script.model, max_rounds=5).compile()
    out = graph.invoke({"topic": TOPIC}, {"recursion_limit": recursion_limit(graph)})
    assert out["termination_reason"] == "completed" and len(out["controller_decisions"]) == 7
    one_round = build_meeting(max_rounds=1)
    with pytest.raises(GraphRecursionError):
        build_meeting(Script([go_on()] * 4).model, max_rounds=5).compile().invoke(
            {"topic": TOPIC}, {"recursion_limit": recursion_limit(one_round)}
        )


# --------------------------------------------------------------------------
# Validation
# --------------------------------------------------------------------------

ONE = [{"name": "s", "participants": ["Ann: x"]}]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"stages": []}, "stages is empty: give at least one stage"),
        ({"stages": "talk"}, "stages must be a list of stages, got 'talk'"),
        ({"stages": [{"name": "s", "participants": []}]}, "stage 's' has no participants"),
        ({"stages": [{"name": "s"}]}, "stage 's' has no participants"),
        (
            {"stages": [{"name": "s", "participants": ["Ann: x", "ann: y"]}]},
            "stage 's': duplicate participant name 'ann': 'Ann' is the same name",
        ),
        (
            {"stages": [{"name": "s", "participants": ["Ann Lee: x", "ann-lee"]}]},
            "duplicate participant name 'ann-lee'",
        ),
        ({"stages": [{"name": " ", "participants": ["A"]}]}, "stage 1 has no name"),
        ({"stages": [{"participants": ["A"]}]}, "stage 1 has no name"),
        ({"stages": [*ONE, {"name": "S", "participants": ["B"]}]}, "duplicate stage name 'S'"),
        ({"max_rounds": 0}, "max_rounds must be a whole number of at least 1, got 0"),
        (
            {"stages": [{**ONE[0], "max_rounds": 0}]},
            "stage 's': max_rounds must be a whole number of at least 1, got 0",
        ),
        ({"stages": [{**ONE[0], "max_rounds": "two"}]}, "got 'two'"),
        ({"stages": [{**ONE[0], "rounds": 2}]}, "stage 1 has unknown field 'rounds'"),
        ({"stages": ["talk"]}, "stage 1 must be a Stage or a mapping"),
        ({"stages": [{"name": "s", "participants": [": x"]}]}, "must be 'Name: instructions'"),
        ({"stages": [{"name": "s", "participants": ["controller"]}]}, "is reserved"),
        ({"stages": [{"name": "s", "participants": ["Decide: x"]}]}, "is reserved"),
        ({"stages": [{"name": "s", "participants": ["Topic"]}]}, "is reserved"),
        ({"stages": [{"name": "s", "participants": ["user"]}]}, "is reserved"),
        ({"stages": [{"name": "s", "participants": ["!!"]}]}, "needs at least one letter"),
        (
            {"stages": [*ONE, {"name": "t", "participants": ["ann"]}]},
            "participant 'ann' of stage 't' and 'Ann' of stage 's' read as the same name",
        ),
        ({"keep_last": -1}, "keep_last must be 0 (all) or more, got -1"),
    ],
)
def test_bad_settings_fail_at_build_time(kwargs: dict[str, Any], message: str) -> None:
    model = ScriptedChatModel(responses=[])
    with pytest.raises(ValueError, match=re.escape(message)) as info:
        build_meeting(model, **kwargs)
    assert "\n" not in str(info.value)
    assert model.prompts == []


@pytest.mark.parametrize("topic", ["", "  \n"])
def test_empty_topic_fails_when_invoked(topic: str) -> None:
    model = ScriptedChatModel(responses=[])
    with pytest.raises(ValueError, match="topic is empty"):
        build_meeting(model).compile().invoke({"topic": topic})
    assert model.prompts == []


def test_setup_fills_in_the_caps() -> None:
    setup = meeting_setup(
        stages=TWO_STAGES, max_rounds=4, keep_last=8, pause_after_round=False, time_limit_s=None
    )
    assert [(s.name, s.max_rounds) for s in setup.stages] == [("pitch", 1), ("debate", 4)]
    assert setup.nodes == ("ann", "bob", "cy")
    assert setup.total_rounds == 5


# --------------------------------------------------------------------------
# The graph Studio serves
# --------------------------------------------------------------------------


def test_mermaid_matches_snapshot() -> None:
    drawn = build_meeting().compile(name=GRAPH_NAME).get_graph().draw_mermaid()
    assert drawn == SNAPSHOT.read_text(encoding="utf-8")


def test_graph_for_studio() -> None:
    graph = build_meeting(pause_after_round=True).compile(name=GRAPH_NAME)
    assert graph.name == GRAPH_NAME == "meeting"
    assert set(typing.get_type_hints(graph.builder.input_schema)) == {"topic", "messages"}
    assert set(typing.get_type_hints(graph.builder.output_schema)) == OUTPUT_KEYS
    assert set(graph.get_output_jsonschema()["properties"]) == OUTPUT_KEYS
    assert {"presenter", "advocate", "skeptic", "summarizer", "controller", "decide", "human"} <= (
        set(graph.nodes)
    )


# --------------------------------------------------------------------------
# The pattern's declaration
# --------------------------------------------------------------------------


def test_command_launches_with_the_factorys_settings(tmp_path: Path) -> None:
    launch = PATTERN.command(TOPIC)
    assert isinstance(launch, Launch)
    assert launch.input == {"topic": TOPIC}
    assert launch.settings["max_rounds"] == 2 and launch.settings["keep_last"] == 8
    assert [s["name"] for s in launch.settings["stages"]] == [
        "presentation",
        "discussion",
        "summary",
    ]
    assert isinstance(launch.settings["stages"][0]["participants"], list)  # plain JSON data
    file = tmp_path / "stages.yaml"
    file.write_text(
        "stages:\n  - name: pitch\n    participants: ['Ann: pitches']\n", encoding="utf-8"
    )
    launch = PATTERN.command(TOPIC, stages=file, rounds=3, keep_last=0)
    assert launch.settings == {
        "stages": [{"name": "pitch", "participants": ["Ann: pitches"]}],
        "max_rounds": 3,
        "keep_last": 0,
    }
    assert launch.notes == ()
    script = Script([go_on(), go_on()])
    builder = entry("meeting").build()(script.model, **launch.settings, pause_after_round=False)
    out = builder.compile().invoke(launch.input, {"recursion_limit": recursion_limit(builder)})
    assert script.order == ["Ann"] * 3
    assert out["termination_reason"] == "completed"
    assert PATTERN.described.agents_per_round(PATTERN.command(TOPIC).settings) == 2


def test_command_takes_the_old_max_rounds_option_with_a_note() -> None:
    launch = PATTERN.command(TOPIC, max_rounds=3)
    assert launch.settings["max_rounds"] == 3
    assert launch.notes == ("--max-rounds is deprecated: use --rounds",)


@pytest.mark.parametrize("topic", ["", "  "])
def test_command_refuses_an_empty_topic(topic: str) -> None:
    """The CLI checks its launch's input with the check the graph and the server make."""
    from debategraph.graphs.inputs import check_input

    with pytest.raises(ValueError, match=r"^topic is empty: give what to decide") as info:
        check_input("meeting", PATTERN.command(topic).input)
    assert "\n" not in str(info.value)


def test_command_reports_a_bad_stages_file(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match=r"--stages .*nope.yaml: no such file"):
        PATTERN.command(TOPIC, stages=tmp_path / "nope.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_text("- name: a\n  participants: [x\n", encoding="utf-8")
    with pytest.raises(UsageError, match=r"not valid YAML at line \d+"):
        PATTERN.command(TOPIC, stages=bad)


def test_describe_summary_headline_progress() -> None:
    settings = {**PATTERN.command(TOPIC).settings, "pause_after_round": True}
    assert PATTERN.described.describe(settings) == (
        "presentation (Presenter; 1 round) → discussion (Advocate, Skeptic; 2 rounds) → "
        "summary (Summarizer; 1 round), pausing after each round"
    )
    assert PATTERN.described.title({"topic": TOPIC}) == TOPIC

    script = Script([go_on()])
    values = build_meeting(script.model).compile().invoke({"topic": TOPIC})
    summary = PATTERN.described.summary({**values, "round": 4, "transcript": []})
    assert set(summary) == {
        "topic",
        "decision",
        "decision_fallback",
        "controller",
        "stage",
        "rounds",
        "transcript",
    }
    assert summary["decision"] == DECISION
    assert [d["stage"] for d in summary["controller"]] == [
        "presentation",
        "discussion",
        "discussion",
        "summary",
    ]
    lines = PATTERN.headline(summary)
    assert lines[0] == f"decision [bold]{DECISION['decision']}[/bold] · 4 rounds over 3 stages"
    assert lines[1].startswith("  rationale: The advocate's gains")
    assert lines[2:] == [
        "  dissent: The skeptic doubts the support rota holds.",
        "  next: Draft the rota",
        "  next: Review after the quarter",
    ]
    assert PATTERN.headline({"decision": None, "controller": [], "rounds": 1})[0] == (
        "decision [bold]none[/bold] · 1 round over 0 stages"
    )

    forced, goes_on = values["controller_decisions"][:2]
    (line,) = PATTERN.progress("controller", {"controller_decisions": [forced], "stage": "[x]"})
    assert line == (
        "  [dim]stage presentation, round 1/1: forced → stage \\[x]: "
        "stage presentation reached its round cap (1)[/dim]"
    )
    (line,) = PATTERN.progress("controller", {"controller_decisions": [goes_on], "stage_round": 2})
    assert "stage discussion, round 1/2: controller → round 2: New points" in line
    (line,) = PATTERN.progress("decide", {"decision": values["decision"]})
    assert line == f"  chair: decision [bold]{DECISION['decision']}[/bold]"
    assert PATTERN.progress("open_round", {"round": 1, "decision": None}) == []
    assert PATTERN.progress("advocate", {"transcript": []}) == []


def test_default_stages_are_plain_data() -> None:
    assert [s["name"] for s in DEFAULT_STAGES] == ["presentation", "discussion", "summary"]
    setup = meeting_setup(
        stages=DEFAULT_STAGES, max_rounds=2, keep_last=8, pause_after_round=False, time_limit_s=None
    )
    assert [s.names for s in setup.stages] == [
        ("Presenter",),
        ("Advocate", "Skeptic"),
        ("Summarizer",),
    ]
