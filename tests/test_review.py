"""The round review as chat UIs render it: langchain's ``HITLRequest``, its replies, refusals.

Every pattern paused after a round interrupts with the ``HITLRequest`` of langchain's
human-in-the-loop middleware (checked with the middleware's own types, and with
agent-chat-ui's detector, reproduced below) and a ``response_schema``. An ``edit``
decision interjects what the next round reads; a ``reject`` stops the run, its message the
human's turn. The replies taken before still work; any other value is refused in one
line, the thread stays paused and a good value resumes it. Each pattern runs in memory on
an in-process fake model, under strict msgpack, its serializer reporting nothing.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from langchain.agents.middleware.human_in_the_loop import HITLRequest, HITLResponse
from langchain_core.messages import HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.types import Command
from pydantic import TypeAdapter

from debategraph import (
    ResumeRefused,
    build_debate,
    build_discussion,
    build_group_chat,
    build_meeting,
    build_solver_debate,
    registry,
)
from debategraph.nodes.review import (
    RESPONSE_SCHEMA,
    Reply,
    hitl_response,
    read_reply,
    review_payload,
    review_request,
)
from debategraph.views.thread_page import render_page
from tests.backends import serde_events, strict_msgpack
from tests.fake_model import ScriptedChatModel, ToolCallingChatModel, tool_reply
from tests.test_discussion import PAPER, TWO, Script

__all__ = ["serde_events", "strict_msgpack"]  # fixtures, used by name

NOTE = "Mind the counter-argument."
STOP = "We have heard enough."
SOLVER = {"reasoning": "3 and 5 make 8", "answer": "8", "confidence": 0.9}


def is_agent_inbox_interrupt_schema(value: Any) -> bool:
    """agent-chat-ui's ``isAgentInboxInterruptSchema``, line for line in Python.

    From ``src/lib/agent-inbox-interrupt.ts`` of github.com/langchain-ai/agent-chat-ui
    (the version typing it ``Interrupt<HITLRequest>``, read through the reference index):
    where it holds, the UI renders the interrupt as an inbox item with its approve / edit /
    reject buttons (``ThreadView``), elsewhere as raw JSON (``GenericInterruptView``). The
    UI itself was not run here (CI has no Node). ``value`` is what ``useStream`` hands it:
    an interrupt (``{"value": ..., "id": ...}``) or a list of them. JavaScript's
    ``typeof x === "object"`` holds for objects and arrays, never for ``null``.
    """
    first = value[0] if isinstance(value, list) and value else value
    if not isinstance(first, dict):
        return False
    hitl = first.get("value")
    if not isinstance(hitl, dict | list):
        return False
    requests = hitl.get("action_requests") if isinstance(hitl, dict) else None
    configs = hitl.get("review_configs") if isinstance(hitl, dict) else None
    if not isinstance(requests, list) or not requests:
        return False
    if not isinstance(configs, list) or not configs:
        return False
    valid_requests = all(
        isinstance(r, dict)
        and isinstance(r.get("name"), str)
        and isinstance(r.get("args"), dict | list)
        for r in requests
    )
    valid_configs = all(
        isinstance(c, dict)
        and isinstance(c.get("action_name"), str)
        and isinstance(c.get("allowed_decisions"), list)
        for c in configs
    )
    return valid_requests and valid_configs


def test_the_detector_tells_a_review_from_the_old_payload() -> None:
    new = review_payload(1, 3, "solver", answers={"solver_1": "8"})
    old = {"kind": "round_review", "round": 1, "rounds": 3, "expects": {"approve": True}}
    assert is_agent_inbox_interrupt_schema([{"value": new, "id": "i"}])
    assert not is_agent_inbox_interrupt_schema([{"value": old, "id": "i"}])
    assert not is_agent_inbox_interrupt_schema([{"value": {**new, "review_configs": []}}])


def tool_model() -> ToolCallingChatModel:
    return ToolCallingChatModel(reply="I think it is fine.")


#: Each pattern paused after every round, its model, and its input.
PATTERNS: dict[str, tuple[Callable[[], Any], Callable[[Any], Any], dict[str, Any]]] = {
    "solver_debate": (
        lambda: ScriptedChatModel(respond=lambda prompt: tool_reply("SolverReply", SOLVER)),
        lambda m: build_solver_debate(m, agents=2, max_rounds=3, pause_after_round=True),
        {"question": "What is 3 + 5?"},
    ),
    "debate": (
        tool_model,
        lambda m: build_debate(
            m, debaters=["Ann:for", "Ben:against"], max_rounds=3, judge=True, pause_after_round=True
        ),
        {"topic": "Remote work is better"},
    ),
    "discussion": (
        lambda: Script().model,  # revises every iteration: no iteration ends it
        lambda m: build_discussion(m, personas=TWO, max_rounds=3, pause_after_round=True),
        {"document": PAPER},
    ),
    "group_chat": (
        tool_model,
        lambda m: build_group_chat(
            m,
            agents=["Writer: writes.", "Reviewer: reviews."],
            max_rounds=3,
            pause_after_round=True,
        ),
        {"task": "Write a haiku"},
    ),
    "meeting": (
        tool_model,
        lambda m: build_meeting(m, max_rounds=3, pause_after_round=True),
        {"topic": "Should we move to a four-day week?"},
    ),
}


def read_by_round(model: Any, text: str) -> int:
    """How many of the model's prompts carry ``text``."""
    return sum(text in "\n".join(str(m.content) for m in prompt) for prompt in model.prompts)


@pytest.mark.usefixtures("strict_msgpack")
@pytest.mark.parametrize("pattern", list(PATTERNS))
def test_every_pattern_asks_as_a_chat_ui_renders_and_takes_its_decisions(
    pattern: str, serde_events: list[dict[str, Any]]
) -> None:
    make_model, build, graph_input = PATTERNS[pattern]
    model = make_model()
    graph = build(model).compile(checkpointer=InMemorySaver())
    config: Any = {"configurable": {"thread_id": pattern}}
    out = graph.invoke(graph_input, config)

    (pause,) = out["__interrupt__"]
    # What useStream hands agent-chat-ui: buttons, not raw JSON.
    assert is_agent_inbox_interrupt_schema([{"value": pause.value, "id": pause.id}])
    assert TypeAdapter(HITLRequest).validate_python(pause.value) == pause.value
    assert pause.response_schema == RESPONSE_SCHEMA
    (action,) = pause.value["action_requests"]
    assert action["args"]["round"] == 1 and action["args"]["interjection"] == ""
    assert "Approve to go on, respond with a text every" in action["description"]
    assert pause.value["review_configs"][0]["allowed_decisions"] == [
        "approve",
        "edit",
        "respond",
        "reject",
    ]

    # An edit of the interjection (what agent-chat-ui's edit form sends): read next round.
    assert read_by_round(model, NOTE) == 0
    edited = {"name": action["name"], "args": {**action["args"], "interjection": NOTE}}
    edit = {"decisions": [{"type": "edit", "edited_action": edited}]}
    assert TypeAdapter(HITLResponse).validate_python(edit) == edit
    out = graph.invoke(Command(resume=edit), config)
    assert read_by_round(model, NOTE) > 0
    (pause,) = out["__interrupt__"]
    assert review_request(pause.value)["args"]["round"] == 2

    # A reject stops the run at its finish: no round 3, the reason the human's turn.
    out = graph.invoke(Command(resume=hitl_response("reject", STOP)), config)
    assert "__interrupt__" not in out
    assert out["termination_reason"] == "stopped"
    humans = [(t.content, t.round) for t in out["transcript"] if t.role == "user"]
    assert humans[-2:] == [(NOTE, 1), (STOP, 2)]
    assert graph.get_state(config).values["round"] == 2
    assert out["messages"][-1].content  # the pattern's outcome, as for any ending
    assert serde_events == []


#: Values no round review takes, and what the refusal says of each.
REFUSED: list[tuple[Any, str]] = [
    ({"decisions": [{"type": "reject", "reason": "x"}]}, "a reject decision has no field 'reason'"),
    ({"decisions": [{"type": "respond", "message": " "}]}, "needs a non-empty 'message'"),
    ({"decisions": [{"type": "accept"}]}, "decision type 'accept' is not one of"),
    ({"decisions": []}, "must be a list of one decision"),
    ({"decisions": [{"type": "approve"}], "extra": 1}, "holds 'decisions' only"),
    ([{"type": "response", "args": "old agent inbox"}], "not a reply a round review takes"),
    ({"approve": False}, "not a reply a round review takes"),
    ({"interject": 7}, "not a reply a round review takes"),
    (False, "not a reply a round review takes"),
    (42, "not a reply a round review takes"),
    (
        {"type": "edit", "edited_action": {"name": "round_review", "args": {"answers": "9"}}},
        "may change only args.interjection, not answers",
    ),
    (
        {"type": "edit", "edited_action": {"name": "round_review", "args": {"interjection": ""}}},
        "which is empty",
    ),
]


@pytest.mark.parametrize("inside", [False, True], ids=["graph", "in-a-parent"])
def test_a_refused_reply_leaves_the_thread_paused(inside: bool) -> None:
    model = ScriptedChatModel(respond=lambda prompt: tool_reply("SolverReply", SOLVER))
    panel = build_solver_debate(model, agents=2, max_rounds=2, pause_after_round=True)
    graph: Any = panel.compile(checkpointer=InMemorySaver())
    graph_input: Any = {"question": "What is 3 + 5?"}
    if inside:
        graph = (
            StateGraph(MessagesState)
            .add_node("panel", panel.compile(name="panel"))
            .add_edge(START, "panel")
            .add_edge("panel", END)
            .compile(checkpointer=InMemorySaver())
        )
        graph_input = {"messages": [HumanMessage("What is 3 + 5?")]}
    config: Any = {"configurable": {"thread_id": "t"}}
    graph.invoke(graph_input, config)
    for value, says in REFUSED:
        with pytest.raises(ResumeRefused) as refused:
            graph.invoke(Command(resume=value), config)
        line = str(refused.value)
        assert "\n" not in line and says in line, line
        assert line.startswith(f"resume value {str(value)[:40]}"), line
        assert "give {'decisions': [{'type': 'approve'}]}" in line  # what is allowed
        state = graph.get_state(config)
        assert state.next == (("panel",) if inside else ("human",)) and state.interrupts
    assert len(model.prompts) == 2  # nothing ran again
    out = graph.invoke(Command(resume=hitl_response("respond", NOTE)), config)
    assert read_by_round(model, NOTE) == 2  # both solvers, round 2
    assert "__interrupt__" not in out and out["messages"][-1].content.startswith("The answer is 8")


@pytest.mark.parametrize(
    ("value", "reply"),
    [
        (None, Reply()),
        (True, Reply()),
        ({"approve": True}, Reply()),
        ({"interject": "  go on  "}, Reply("go on")),
        ({"interject": ""}, Reply()),  # an empty text goes on, as it always did
        ("a plain text", Reply("a plain text")),
        ("", Reply()),
        ({"type": "approve"}, Reply()),  # one decision alone, as per_call mode answers
        (hitl_response("approve"), Reply()),
        (hitl_response("respond", "x"), Reply("x")),
        (hitl_response("reject"), Reply(stop=True)),
        (hitl_response("reject", " why "), Reply("why", stop=True)),
    ],
)
def test_the_replies_taken(value: Any, reply: Reply) -> None:
    assert read_reply(value) == reply


def test_an_edit_may_send_the_shown_args_back_as_text() -> None:
    """agent-chat-ui edits every arg as text: a number or a mapping shown comes back so."""
    shown = {"round": 1, "rounds": 3, "answers": {"solver_1": "8"}, "tally": {"8": 1}}
    args = {"round": "1", "rounds": 3, "answers": '{"solver_1":"8"}', "interjection": NOTE}
    edit = {"type": "edit", "edited_action": {"name": "round_review", "args": args}}
    assert read_reply({"decisions": [edit]}, shown) == Reply(NOTE)
    args["tally"] = '{"8": 2}'
    with pytest.raises(ResumeRefused, match="not tally"):
        read_reply({"decisions": [edit]}, shown)


def test_the_page_shows_what_the_review_asks() -> None:
    pause = review_payload(1, 3, "solver", answers={"solver_1": "8"})
    page = render_page(
        "t",
        {},
        pattern=registry.described("solver_debate"),
        status="waiting",
        where="round 1; next human",
        pauses=[pause],
    )
    assert "Round 1 of 3 is done. Approve to go on" in page
    assert "solver_1" in page and "action_requests" not in page
    assert json.dumps(pause)  # the interrupt's value is JSON, as a server sends it
