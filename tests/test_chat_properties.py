"""Property: whatever the strategies and whatever a selector answers, a chat ends in its cap."""

from __future__ import annotations

import itertools
import random
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langchain_core.messages import AIMessage, BaseMessage

from debategraph import build_group_chat, recursion_limit
from debategraph.state.base import TERMINATION_REASONS
from debategraph.strategies.selection import LLMSelector, Rules, Sequential
from debategraph.strategies.termination import (
    Condition,
    all_of,
    any_of,
    hard_cap,
    llm,
    max_turns,
    regex,
    stall,
    timeout,
    token_budget,
)
from tests.fake_model import ScriptedChatModel, text_reply, tool_reply

AGENTS = ["Ann: writes", "Bob: reviews", "Cy: edits"]
NAMES = ["Ann", "Bob", "Cy"]
GARBAGE = ["", "???", "nobody", "Ann and Bob", "b", "CY!", "Dave", "the reviewer", "{json"]

conditions = st.sampled_from(
    [
        regex("DONE"),
        regex("DONE", "Bob"),
        llm("Is it done?"),
        llm("Is it done?", "Cy"),
        stall(2),
        token_budget(200),
        timeout(60),
    ]
)


@st.composite
def terminations(draw: Any) -> Condition:
    """A random combination of conditions, always with a hard cap somewhere."""
    parts = draw(st.lists(conditions, min_size=0, max_size=3))
    cap = max_turns(draw(st.integers(1, 12)))
    if parts and draw(st.booleans()):
        inner = all_of(*parts) if draw(st.booleans()) else any_of(*parts)
        return inner | cap
    return any_of(*parts, cap) if parts else cap


selectors = st.sampled_from(["sequential", "llm", "rules", "llm-first"])


def selector_of(kind: str) -> Any:
    if kind == "rules":
        return Rules(lambda ctx: random.choice([*NAMES, "nobody", None]))
    if kind == "llm-first":
        return LLMSelector(initial="Cy")
    return Sequential() if kind == "sequential" else kind


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    termination=terminations(),
    selection=selectors,
    guard=st.one_of(st.none(), st.integers(1, 3)),
    seed=st.integers(0, 10_000),
)
@pytest.mark.slow  # make test-fast leaves it out: a few seconds of real time
def test_every_chat_ends_within_its_cap_with_a_reason(
    termination: Condition, selection: str, guard: int | None, seed: int
) -> None:
    rng = random.Random(seed)

    def respond(messages: list[BaseMessage]) -> AIMessage:
        system = str(messages[0].content)
        if system.startswith("You choose who speaks next"):
            return text_reply(rng.choice([*GARBAGE, *NAMES]))
        if system.startswith("You watch a conversation"):
            if rng.random() < 0.3:
                return text_reply("not json at all")
            return tool_reply("Judgement", {"done": rng.random() < 0.2, "reason": "r"})
        return text_reply(rng.choice(["DONE", "more", "more", "", "same"]))

    random.seed(seed)
    builder = build_group_chat(
        ScriptedChatModel(respond=respond),
        agents=AGENTS,
        selection=selector_of(selection),
        termination=termination,
        max_in_a_row=guard,
    )
    cap = hard_cap(termination)
    assert cap is not None
    assert builder.round_cap == cap
    graph = builder.compile()
    out = graph.invoke(
        {"task": "t"},
        {"configurable": {"thread_id": "p"}, "recursion_limit": recursion_limit(graph)},
    )
    turns = sum(1 for s in out["selections"])
    assert 1 <= turns <= cap
    assert out["is_complete"] is True
    assert out["termination_reason"] in TERMINATION_REASONS
    assert out["termination_detail"]
    assert all(record.agent in NAMES for record in out["selections"])
    if guard is not None:
        run = 1
        agents = [s.agent for s in out["selections"]]
        for before, after in itertools.pairwise(agents):
            run = run + 1 if before == after else 1
            assert run <= guard
