"""Tests for the debate graph: turn order, routing, moderator, judge, history window,
human review, validation, Studio graph and composition under a parent's checkpointer."""

from __future__ import annotations

import itertools
import re
import typing
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.utils.function_calling import convert_to_openai_tool
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.errors import GraphRecursionError
from langgraph.graph import END, START, StateGraph
from langgraph.types import Command
from typing_extensions import TypedDict

from debategraph import build_debate, recursion_limit
from debategraph.checkpoints import open_checkpointer
from debategraph.cli.patterns.debate import PATTERN
from debategraph.cli.patterns.declaration import Launch
from debategraph.graphs.debate import GRAPH_NAME
from debategraph.nodes.debate import ARGUE_STAGE, termination_conditions
from debategraph.nodes.debate.setup import DEFAULT_DEBATERS, debate_setup
from debategraph.nodes.review import RESPONSE_SCHEMA, review_request
from debategraph.registry import entry
from debategraph.state.debate import (
    TIE,
    Debater,
    ModeratorDecision,
    Verdict,
    WordCount,
)
from debategraph.state.records import Turn, Usage
from debategraph.strategies.names import match_name, read_name
from debategraph.strategies.termination import RoundOutcome, Silence, first_fired
from tests.fake_model import ScriptedChatModel, text_reply, tool_reply

SNAPSHOT = Path(__file__).parent / "snapshots" / "debate.mmd"
TOPIC = "This house would ban homework."
PAIR = ["Alice:for the motion", "Bob:against the motion"]
PAIR_SHORT = ["Alice:for", "Bob:against"]
TRIO = ["Alice:for the motion", "Bob:against the motion", "Carol:for a compromise"]
NOTE = "Please both address the cost to families."
DEBATER_RE = re.compile(r"You are (\S+), a debater arguing")
OUTPUT_KEYS = {
    "topic",
    "stances",
    "transcript",
    "messages",
    "verdict",
    "termination_reason",
    "rounds_completed",
    "word_counts",
    "moderator_decisions",
    "summary",
    "usage",
    "usage_by_agent",
    "usage_by_model",
    "notes",
}
FILLER = "because the evidence on learning outcomes points this way"


# --------------------------------------------------------------------------
# A scripted debate model
# --------------------------------------------------------------------------


def argument(name: str, n: int, words: int = 20) -> str:
    """The scripted n-th argument of a debater: a unique marker, then filler words."""
    marker = f"<arg-{name}-{n}>"
    filler = (FILLER.split() * words)[: words - 1]
    return " ".join([marker, *filler])


def verdict_args(winner: str = "Alice", **extra: Any) -> dict[str, Any]:
    args: dict[str, Any] = {
        "winner": winner,
        "scores": [
            {"debater": "Alice", "criterion": "logic", "score": 8},
            {"debater": "Bob", "criterion": "logic", "score": 6},
        ],
        "rationale": "Alice rebutted every point.",
        "strongest": [
            {"debater": "Alice", "argument": "Homework widens gaps."},
            {"debater": "Bob", "argument": "Practice builds habits."},
        ],
    }
    args.update(extra)
    return args


class Script:
    """A scripted model for a whole debate, dispatching on each prompt's system message.

    Records every debater prompt (``prompts[name]``: the human text of each call, in
    order) and the order debaters were called in; each debater's n-th argument is
    :func:`argument` ``(name, n)`` unless ``argue`` says otherwise.
    """

    def __init__(
        self,
        *,
        argue: Callable[[str, int], AIMessage] | None = None,
        moderate: Callable[[int], AIMessage] | None = None,
        judge: Callable[[], AIMessage] | None = None,
        summarize: Callable[[int], AIMessage] | None = None,
    ) -> None:
        self.argue = argue
        self.moderate = moderate
        self.judge = judge
        self.summarize = summarize
        self.prompts: dict[str, list[str]] = {}
        self.order: list[str] = []
        self.officials: dict[str, list[str]] = {"moderator": [], "judge": [], "summarizer": []}
        self.model = ScriptedChatModel(respond=self.respond)

    def respond(self, messages: list[BaseMessage]) -> AIMessage:
        system = str(messages[0].content)
        text = "\n".join(str(m.content) for m in messages[1:])
        found = DEBATER_RE.match(system)
        if found:
            name = found.group(1)
            self.prompts.setdefault(name, []).append(text)
            self.order.append(name)
            n = len(self.prompts[name])
            return self.argue(name, n) if self.argue else text_reply(argument(name, n))
        if system.startswith("You moderate"):
            self.officials["moderator"].append(text)
            n = len(self.officials["moderator"])
            if self.moderate:
                return self.moderate(n)
            args = {"settled": False, "leading": "tie", "reason": "Both hold up."}
            return tool_reply("ModeratorDecision", args)
        if system.startswith("You judge"):
            self.officials["judge"].append(text)
            return self.judge() if self.judge else tool_reply("Verdict", verdict_args())
        if system.startswith("You summarise"):
            self.officials["summarizer"].append(text)
            n = len(self.officials["summarizer"])
            if self.summarize:
                return self.summarize(n)
            return text_reply(f"<summary-{n}> " + " ".join(FILLER.split() * 3))
        raise AssertionError(f"unexpected prompt: {system!r}")


def worst_case_limit(rounds: int, debaters: int) -> int:
    """The recursion limit of the largest debate graph with these rounds and debaters."""
    graph = build_debate(
        debaters=[f"D{i}:side {i}" for i in range(debaters)],
        max_rounds=rounds,
        moderator=True,
        judge=True,
        history="window",
        pause_after_round=True,
    )
    return recursion_limit(graph)


def config_for(thread: str, rounds: int, debaters: int = 2) -> RunnableConfig:
    return {
        "configurable": {"thread_id": thread},
        "recursion_limit": worst_case_limit(rounds, debaters),
    }


def transcript_of(graph: Any, config: RunnableConfig) -> list[Turn]:
    turns: list[Turn] = graph.get_state(config).values["transcript"]
    return turns


def arguments_of(turns: list[Turn]) -> list[Turn]:
    return [t for t in turns if t.stage == ARGUE_STAGE]


# --------------------------------------------------------------------------
# Turn order, routing, prompts
# --------------------------------------------------------------------------


def test_two_debaters_alternate_from_the_first(saver: BaseCheckpointSaver[Any]) -> None:
    script = Script()
    graph = build_debate(script.model, debaters=PAIR, max_rounds=3).compile(checkpointer=saver)
    config = config_for("pair", 3)
    out = graph.invoke({"topic": TOPIC}, config)

    assert script.order == ["Alice", "Bob"] * 3
    assert out["termination_reason"] == "rounds_completed"
    assert out["rounds_completed"] == 3
    assert out["topic"] == TOPIC
    assert out["verdict"] is None  # no judge
    assert out["moderator_decisions"] == []

    turns = transcript_of(graph, config)
    assert [(t.agent, t.round) for t in turns] == [
        (name, rnd) for rnd in (1, 2, 3) for name in ("Alice", "Bob")
    ]
    assert all(isinstance(t, Turn) and t.stage == ARGUE_STAGE for t in turns)
    assert [t.content for t in turns[:2]] == [argument("Alice", 1), argument("Bob", 1)]
    # Each argument is addressed to the other debater and answers the latest one it got.
    assert [t.recipients for t in turns] == [("Bob",), ("Alice",)] * 3
    assert turns[0].reply_to == ()
    for before, turn in itertools.pairwise(turns):
        assert turn.reply_to == (before.id,)


def test_first_speaker_opens_every_round() -> None:
    script = Script()
    graph = build_debate(script.model, debaters=TRIO, max_rounds=2, first_speaker="bob").compile()
    graph.invoke({"topic": TOPIC}, config_for("x", 2, 3))
    assert script.order == ["Bob", "Carol", "Alice"] * 2


def test_first_speaker_opening_prompt_has_no_rebuttal() -> None:
    script = Script()
    graph = build_debate(
        script.model, debaters=PAIR, max_rounds=2, first_speaker="Bob", words=60
    ).compile()
    graph.invoke({"topic": TOPIC}, config_for("x", 2))

    opening = script.prompts["Bob"][0]
    assert TOPIC in opening
    assert "No opposing argument has been made to you yet" in opening
    assert "in at most 60 words" in opening
    assert "<arg-" not in opening
    assert "respond" not in opening.lower()
    assert "rebut" not in opening.lower()
    assert "Latest opposing argument" not in opening

    # The second speaker of round 1 rebuts the opening.
    reply = script.prompts["Alice"][0]
    assert "Latest opposing argument, from Bob (against the motion):" in reply
    assert argument("Bob", 1) in reply
    assert "Respond to this latest opposing argument in at most 60 words" in reply
    # From round 2 on the first speaker rebuts too.
    assert "Respond to this latest opposing argument" in script.prompts["Bob"][1]
    assert argument("Alice", 1) in script.prompts["Bob"][1]


def test_system_prompt_names_side_persona_and_roster() -> None:
    script = Script()
    debaters = [
        Debater(name="Alice", side="for the motion", persona="A retired teacher."),
        {"name": "Bob", "side": "against the motion"},
    ]
    graph = build_debate(script.model, debaters=debaters, max_rounds=1).compile()
    graph.invoke({"topic": TOPIC})
    systems = [str(p[0].content) for p in script.model.prompts]
    assert systems[0].startswith("You are Alice, a debater arguing for the motion.")
    assert "Persona: A retired teacher." in systems[0]
    assert "Persona" not in systems[1]
    assert "Alice (for the motion), Bob (against the motion)" in systems[1]


def test_each_debater_reads_only_what_was_addressed_to_it(
    saver: BaseCheckpointSaver[Any],
) -> None:
    """Three debaters; a message from Carol to Bob alone is hidden from Alice."""
    script = Script()
    graph = build_debate(script.model, debaters=TRIO, max_rounds=2, pause_after_round=True).compile(
        checkpointer=saver
    )
    config = config_for("routing", 2, 3)
    graph.invoke({"topic": TOPIC}, config)  # round 1, then the pause
    secret = Turn(
        agent="Carol",
        content="<secret-carol-to-bob> just between us",
        stage=ARGUE_STAGE,
        round=1,
        recipients=("Bob",),
    )
    graph.update_state(config, {"transcript": [secret]}, as_node="human")
    out = graph.invoke(None, config)
    assert out["termination_reason"] == "rounds_completed"
    assert script.order == ["Alice", "Bob", "Carol"] * 2

    alice = script.prompts["Alice"][1]
    # Alice answers Carol's round-1 argument (the latest addressed to her) and reads her
    # own and Bob's earlier ones, but not what Carol said to Bob alone.
    assert f"Latest opposing argument, from Carol (for a compromise):\n{argument('Carol', 1)}" in (
        alice
    )
    assert f"[round 1] Alice (you): {argument('Alice', 1)}" in alice
    assert f"[round 1] Bob (against the motion): {argument('Bob', 1)}" in alice
    assert "secret" not in alice

    bob = script.prompts["Bob"][1]
    assert "<secret-carol-to-bob>" in bob
    assert f"Latest opposing argument, from Alice (for the motion):\n{argument('Alice', 2)}" in bob
    assert f"[round 1] Bob (you): {argument('Bob', 1)}" in bob

    turns = arguments_of(transcript_of(graph, config))
    by = {(t.agent, t.round): t for t in turns if "secret" not in t.content}
    assert by[("Alice", 2)].reply_to == (by[("Carol", 1)].id,)
    assert by[("Bob", 2)].reply_to == (by[("Alice", 2)].id,)
    assert by[("Alice", 2)].recipients == ("Bob", "Carol")


# --------------------------------------------------------------------------
# Word counts and usage
# --------------------------------------------------------------------------


def test_word_counts_are_reported_per_turn(saver: BaseCheckpointSaver[Any]) -> None:
    lengths = {"Alice": 12, "Bob": 95}
    script = Script(argue=lambda name, n: text_reply(argument(name, n, lengths[name])))
    graph = build_debate(script.model, debaters=PAIR, max_rounds=2, words=80).compile(
        checkpointer=saver
    )
    config = config_for("words", 2)
    out = graph.invoke({"topic": TOPIC}, config)

    counts = out["word_counts"]
    assert all(isinstance(c, WordCount) for c in counts)
    assert [(c.debater, c.round, c.words, c.limit) for c in counts] == [
        ("Alice", 1, 12, 80),
        ("Bob", 1, 95, 80),
        ("Alice", 2, 12, 80),
        ("Bob", 2, 95, 80),
    ]
    assert [c.over_limit for c in counts] == [False, True, False, True]
    turns = transcript_of(graph, config)
    assert [c.turn_id for c in counts] == [t.id for t in turns]
    assert "in at most 80 words" in script.prompts["Alice"][0]


def test_usage_totals_by_agent() -> None:
    script = Script()
    graph = build_debate(script.model, debaters=PAIR, max_rounds=2, moderator=True, judge=True)
    out = graph.compile().invoke({"topic": TOPIC}, config_for("x", 2))
    usage = out["usage"]
    assert isinstance(usage, Usage)
    # 4 arguments + 1 moderator call (none after the last round) + 1 judge call.
    assert (usage.calls, usage.prompt_tokens, usage.completion_tokens) == (6, 60, 30)
    by_agent = out["usage_by_agent"]
    assert {name: u.calls for name, u in by_agent.items()} == {
        "Alice": 2,
        "Bob": 2,
        "moderator": 1,
        "judge": 1,
    }


def test_a_round_of_empty_arguments_ends_with_error() -> None:
    script = Script(argue=lambda name, n: text_reply("   "))
    graph = build_debate(script.model, debaters=PAIR, max_rounds=5, judge=True).compile()
    out = graph.invoke({"topic": TOPIC}, config_for("x", 5))
    assert out["termination_reason"] == "error"
    assert out["rounds_completed"] == 1
    assert len(script.model.prompts) == 2 * 2 + 1  # two attempts per debater, then the judge
    assert [c.words for c in out["word_counts"]] == [0, 0]


def test_usage_is_the_sum_of_the_turns_across_a_resume(saver: BaseCheckpointSaver[Any]) -> None:
    """Nodes write only their own calls' usage; the reducers add it up, once per call."""
    script = Script()
    graph = build_debate(
        script.model,
        debaters=PAIR,
        max_rounds=2,
        moderator=True,
        judge=True,
        history="window",
        keep_last=1,
        pause_after_round=True,
    ).compile(checkpointer=saver)
    config = config_for("usage", 2)
    graph.invoke({"topic": TOPIC}, config)
    out = graph.invoke(Command(resume={"approve": True}), config)
    turns = transcript_of(graph, config)
    assert out["usage"] == Usage.total(t.usage for t in turns)
    assert out["usage"].calls == len(script.model.prompts) == 4 + 1 + 1 + 1
    for agent, usage in out["usage_by_agent"].items():
        assert usage == Usage.total(t.usage for t in turns if t.agent == agent), agent
    assert set(out["usage_by_agent"]) == {"Alice", "Bob", "moderator", "summarizer", "judge"}


def test_close_round_conditions() -> None:
    silence = Silence()
    assert silence.reason == "error"
    assert silence.fired(RoundOutcome(round=1, answers=[None, None]))
    assert not silence.fired(RoundOutcome(round=1, answers=[None, "x"]))
    assert not silence.fired(RoundOutcome(round=1))  # no arguments is no evidence
    setup = debate_setup(
        debaters=PAIR, max_rounds=2, first_speaker=None, words=80, moderator=False, judge=False,
        history="full", keep_last=4, pause_after_round=False, time_limit_s=None,
    )  # fmt: skip
    conditions = termination_conditions(setup)
    assert first_fired(conditions, RoundOutcome(round=1, answers=["a", "b"])) is None
    assert first_fired(conditions, RoundOutcome(round=2, answers=["a", "b"])) == "rounds_completed"
    # An empty round is an error even at the round cap.
    assert first_fired(conditions, RoundOutcome(round=2, answers=[None, None])) == "error"


# --------------------------------------------------------------------------
# Moderator
# --------------------------------------------------------------------------


def test_moderator_settles_the_debate_early(saver: BaseCheckpointSaver[Any]) -> None:
    def moderate(n: int) -> AIMessage:
        args = {"settled": n == 2, "leading": "Alice", "reason": f"decision {n}"}
        return tool_reply("ModeratorDecision", args)

    script = Script(moderate=moderate)
    graph = build_debate(
        script.model, debaters=PAIR, max_rounds=5, moderator=True, judge=True
    ).compile(checkpointer=saver)
    config = config_for("settled", 5)
    out = graph.invoke({"topic": TOPIC}, config)

    assert out["termination_reason"] == "settled"
    assert out["rounds_completed"] == 2
    assert script.order == ["Alice", "Bob"] * 2
    decisions = out["moderator_decisions"]
    assert all(isinstance(d, ModeratorDecision) for d in decisions)
    assert [(d.round, d.settled, d.leading, d.reason) for d in decisions] == [
        (1, False, "Alice", "decision 1"),
        (2, True, "Alice", "decision 2"),
    ]
    assert len(script.officials["judge"]) == 1
    assert isinstance(out["verdict"], Verdict)
    # The moderator reads the round's arguments and is asked for a debater or a tie.
    assert argument("Bob", 1) in script.officials["moderator"][0]
    assert "one of Alice, Bob, or 'tie'" in script.officials["moderator"][0]
    moderator_turns = [t for t in transcript_of(graph, config) if t.agent == "moderator"]
    assert [(t.round, t.answer, t.content) for t in moderator_turns] == [
        (1, "Alice", "decision 1"),
        (2, "Alice", "decision 2"),
    ]


def test_moderator_does_not_run_after_the_last_round() -> None:
    script = Script()
    graph = build_debate(script.model, debaters=PAIR, max_rounds=3, moderator=True).compile()
    out = graph.invoke({"topic": TOPIC}, config_for("x", 3))
    assert out["termination_reason"] == "rounds_completed"
    assert [d.round for d in out["moderator_decisions"]] == [1, 2]
    assert [d.leading for d in out["moderator_decisions"]] == [TIE, TIE]


def test_moderator_names_are_normalised_and_fallback_goes_on() -> None:
    replies = {
        1: tool_reply("ModeratorDecision", {"settled": False, "leading": "bobb", "reason": "a"}),
        2: tool_reply("ModeratorDecision", {"settled": False, "leading": "Zed", "reason": "b"}),
    }

    def moderate(n: int) -> AIMessage:
        return replies.get(n, text_reply("I refuse to use tools"))

    script = Script(moderate=moderate)
    graph = build_debate(script.model, debaters=PAIR, max_rounds=4, moderator=True).compile()
    out = graph.invoke({"topic": TOPIC}, config_for("x", 4))

    assert out["termination_reason"] == "rounds_completed"
    first, second, third = out["moderator_decisions"]
    assert (first.leading, first.notes) == ("Bob", ("leading 'bobb' read as 'Bob'",))
    assert (second.leading, second.notes) == (
        TIE,
        ("leading 'Zed' is not a debater: recorded as a tie",),
    )
    assert (third.settled, third.leading) == (False, TIE)
    assert third.fallback is not None
    assert third.fallback.startswith("invalid output after 3 attempts")
    assert len(script.officials["moderator"]) == 2 + 3


# --------------------------------------------------------------------------
# Judge
# --------------------------------------------------------------------------


def run_judge(reply: AIMessage | Callable[[], AIMessage]) -> tuple[dict[str, Any], Script]:
    script = Script(judge=reply if callable(reply) else (lambda: reply))
    graph = build_debate(script.model, debaters=PAIR, max_rounds=1, judge=True).compile()
    return graph.invoke({"topic": TOPIC}, config_for("x", 1)), script


def test_judge_verdict_is_typed() -> None:
    out, script = run_judge(tool_reply("Verdict", verdict_args()))
    verdict = out["verdict"]
    assert isinstance(verdict, Verdict)
    assert verdict.winner == "Alice"
    assert [(s.debater, s.criterion, s.score) for s in verdict.scores] == [
        ("Alice", "logic", 8),
        ("Bob", "logic", 6),
    ]
    assert verdict.rationale == "Alice rebutted every point."
    assert [a.debater for a in verdict.strongest] == ["Alice", "Bob"]
    assert verdict.notes == ()
    assert verdict.fallback is None
    judge_prompt = script.officials["judge"][0]
    assert argument("Alice", 1) in judge_prompt and argument("Bob", 1) in judge_prompt
    assert "logic, evidence, rebuttal" in judge_prompt
    # The bookkeeping fields are not part of what the model is asked to fill in.
    assert script.model.bound_tools == [convert_to_openai_tool(Verdict)]
    tool = script.model.bound_tools[0]["function"]
    assert set(tool["parameters"]["properties"]) == {"winner", "scores", "rationale", "strongest"}


def test_judge_names_fuzzy_matched_and_unknown_dropped() -> None:
    args = verdict_args(
        winner="alise",
        scores=[
            {"debater": "ALICE", "criterion": "logic", "score": 14},  # clamped to 10
            {"debater": "Bobby", "criterion": "logic", "score": 5},
            {"debater": "Mallory", "criterion": "logic", "score": 9},
        ],
        strongest=[{"debater": "Zed", "argument": "?"}, {"debater": "bob", "argument": "x"}],
    )
    out, _ = run_judge(tool_reply("Verdict", args))
    verdict = out["verdict"]
    assert verdict.winner == "Alice"
    assert [(s.debater, s.score) for s in verdict.scores] == [("Alice", 10), ("Bob", 5)]
    assert [(a.debater, a.argument) for a in verdict.strongest] == [("Bob", "x")]
    assert verdict.notes == (
        "winner 'alise' read as 'Alice'",
        "score for 'ALICE' read as 'Alice'",
        "score for 'Bobby' read as 'Bob'",
        "score for unknown debater 'Mallory' dropped",
        "strongest argument of unknown debater 'Zed' dropped",
        "strongest argument of 'bob' read as 'Bob'",
    )


@pytest.mark.parametrize(
    ("winner", "expected", "notes"),
    [
        ("tie", TIE, ()),
        ("Draw", TIE, ()),
        ("Mallory", TIE, ("winner 'Mallory' is not a debater: recorded as a tie",)),
        (
            "the negative side",
            TIE,
            ("winner 'the negative side' is not a debater: recorded as a tie",),
        ),
        ("Bob", "Bob", ()),
    ],
)
def test_judge_winner_unknown_is_a_tie(winner: str, expected: str, notes: tuple[str, ...]) -> None:
    out, _ = run_judge(tool_reply("Verdict", verdict_args(winner=winner)))
    assert out["verdict"].winner == expected
    assert out["verdict"].notes[: len(notes)] == notes


def test_judge_fallback_records_a_tie_with_the_reason(saver: BaseCheckpointSaver[Any]) -> None:
    script = Script(judge=lambda: text_reply("Alice wins, obviously."))
    graph = build_debate(script.model, debaters=PAIR, max_rounds=1, judge=True).compile(
        checkpointer=saver
    )
    config = config_for("fallback", 1)
    out = graph.invoke({"topic": TOPIC}, config)
    verdict = out["verdict"]
    assert isinstance(verdict, Verdict)
    assert (verdict.winner, verdict.scores, verdict.strongest) == (TIE, [], [])
    assert verdict.fallback is not None
    assert verdict.fallback.startswith("invalid output after 3 attempts")
    assert len(script.officials["judge"]) == 3
    assert out["termination_reason"] == "rounds_completed"
    assert out["usage_by_agent"]["judge"].calls == 3
    judge_turn = transcript_of(graph, config)[-1]
    assert (judge_turn.agent, judge_turn.answer, judge_turn.reason) == (
        "judge",
        TIE,
        verdict.fallback,
    )


def test_names_are_read_with_the_shared_matcher() -> None:
    names = ["Affirmative", "Negative"]
    assert match_name("affirmative", names) == "Affirmative"
    assert match_name(" Negativ ", names) == "Negative"
    assert match_name("The Affirmative", names) == "Affirmative"
    assert match_name("Moderator", names) is None
    assert match_name("", names) is None
    notes: list[str] = []
    assert read_name("Negative", names, "winner", notes) == "Negative"
    assert notes == []  # an exact name is not a normalisation
    assert read_name("negativ", names, "winner", notes) == "Negative"
    assert read_name("Zed", names, "winner", notes) is None
    assert notes == ["winner 'negativ' read as 'Negative'"]


# --------------------------------------------------------------------------
# History: full vs window
# --------------------------------------------------------------------------


def debater_prompt_sizes(script: Script) -> list[int]:
    """Characters of every debater prompt, in speaking order (system + human)."""
    sizes = []
    for messages in script.model.prompts:
        if DEBATER_RE.match(str(messages[0].content)):
            sizes.append(sum(len(str(m.content)) for m in messages))
    return sizes


@pytest.mark.parametrize("history", ["full", "window"])
def test_history_window_bounds_prompts(history: str) -> None:
    rounds = 12
    script = Script()
    graph = build_debate(
        script.model, debaters=PAIR, max_rounds=rounds, history=history, keep_last=4
    ).compile()
    out = graph.invoke({"topic": TOPIC}, config_for("x", rounds))
    assert out["rounds_completed"] == rounds
    sizes = debater_prompt_sizes(script)
    assert len(sizes) == 2 * rounds
    turn_5, last = sizes[4], sizes[-1]
    if history == "window":
        assert last <= 1.5 * turn_5, sizes
        assert out["summary"].startswith("<summary-")
        assert len(script.officials["summarizer"]) == rounds - 2  # none after the last round
    else:
        assert last > 3 * turn_5, sizes
        assert out["summary"] == ""
        assert script.officials["summarizer"] == []


def test_window_shows_summary_and_at_most_keep_last_arguments() -> None:
    script = Script()
    graph = build_debate(
        script.model, debaters=PAIR, max_rounds=5, history="window", keep_last=3
    ).compile()
    graph.invoke({"topic": TOPIC}, config_for("x", 5))
    for name in ("Alice", "Bob"):
        for prompt in script.prompts[name]:
            assert len(re.findall(r"<arg-", prompt)) <= 3, prompt
    # Round 4, Alice: the summary made after round 3 plus the 2 latest arguments
    # (keep_last - 1, leaving room for the one she adds before Bob speaks).
    alice_4 = script.prompts["Alice"][3]
    assert "Summary of the earlier debate:\n<summary-2>" in alice_4
    assert re.findall(r"<arg-\w+-\d+>", alice_4) == ["<arg-Alice-3>", "<arg-Bob-3>"]
    bob_4 = script.prompts["Bob"][3]
    assert re.findall(r"<arg-\w+-\d+>", bob_4) == ["<arg-Alice-3>", "<arg-Bob-3>", "<arg-Alice-4>"]
    # The summarizer folds exactly what left the window, oldest first, into the old summary.
    second = script.officials["summarizer"][1]
    assert "<summary-1>" in second
    assert re.findall(r"<arg-\w+-\d+>", second) == ["<arg-Alice-2>", "<arg-Bob-2>"]


def test_window_keeps_the_argument_to_answer_with_a_tiny_window() -> None:
    script = Script()
    graph = build_debate(
        script.model, debaters=TRIO, max_rounds=3, history="window", keep_last=1
    ).compile()
    graph.invoke({"topic": TOPIC}, config_for("x", 3, 3))
    alice_3 = script.prompts["Alice"][2]
    assert f"Latest opposing argument, from Carol (for a compromise):\n{argument('Carol', 2)}" in (
        alice_3
    )


# --------------------------------------------------------------------------
# Human review between rounds
# --------------------------------------------------------------------------


def test_pause_after_round_interject_then_approve(saver: BaseCheckpointSaver[Any]) -> None:
    script = Script()
    graph = build_debate(
        script.model, debaters=PAIR, max_rounds=3, moderator=True, pause_after_round=True
    ).compile(checkpointer=saver)
    config = config_for("pause", 3)

    out = graph.invoke({"topic": TOPIC}, config)
    (pause,) = out["__interrupt__"]
    # The HITLRequest shape of langchain's human-in-the-loop middleware: one action, its
    # args the round's view, its description what the human may answer.
    (config_,) = pause.value["review_configs"]
    assert config_["action_name"] == "round_review"
    assert config_["allowed_decisions"] == ["approve", "edit", "respond", "reject"]
    (action,) = pause.value["action_requests"]
    assert action["name"] == "round_review"
    assert list(action["args"])[:2] == ["round", "rounds"]
    assert action["args"]["interjection"] == ""
    payload = action["args"]
    assert (payload["round"], payload["rounds"]) == (1, 3)
    assert payload["arguments"] == {"Alice": argument("Alice", 1), "Bob": argument("Bob", 1)}
    assert payload["word_counts"] == {"Alice": 20, "Bob": 20}
    assert payload["moderator"]["leading"] == TIE
    assert payload["tokens_this_round"] == 45  # 2 arguments + the moderator, 15 each
    assert action["description"] == (
        "Round 1 of 3 is done. Approve to go on, respond with a text every debater reads next "
        "round, or reject to stop here."
    )
    assert pause.response_schema == RESPONSE_SCHEMA
    assert script.order == ["Alice", "Bob"]

    out = graph.invoke(Command(resume={"interject": NOTE}), config)
    assert review_request(out["__interrupt__"][0].value)["args"]["round"] == 2
    # Both debaters read the interjection in round 2.
    assert all(NOTE in script.prompts[name][1] for name in ("Alice", "Bob"))
    assert NOTE not in script.prompts["Alice"][0]

    out = graph.invoke(Command(resume={"approve": True}), config)
    assert "__interrupt__" not in out
    assert out["termination_reason"] == "rounds_completed"
    assert out["rounds_completed"] == 3
    assert script.order == ["Alice", "Bob"] * 3
    assert all(NOTE not in script.prompts[name][2] for name in ("Alice", "Bob"))  # round 3
    users = [t for t in transcript_of(graph, config) if t.role == "user"]
    assert [(u.agent, u.round, u.content) for u in users] == [("user", 1, NOTE)]


# --------------------------------------------------------------------------
# Checkpoints
# --------------------------------------------------------------------------


def test_records_survive_a_sqlite_checkpoint(tmp_path: Path) -> None:
    script = Script()
    with open_checkpointer(tmp_path / "d.sqlite") as sqlite_saver:
        graph = build_debate(
            script.model,
            debaters=PAIR,
            max_rounds=3,
            moderator=True,
            judge=True,
            history="window",
            keep_last=2,
        ).compile(checkpointer=sqlite_saver)
        config = config_for("records", 3)
        graph.invoke({"topic": TOPIC}, config)
        checkpoint = sqlite_saver.get_tuple(config)
        assert checkpoint is not None
        stored = checkpoint.checkpoint["channel_values"]
        for channel in ("transcript", "word_counts", "moderator_decisions"):
            assert channel not in stored  # delta channels: only the writes are stored
    with open_checkpointer(tmp_path / "d.sqlite") as sqlite_saver:
        graph = build_debate(script.model, debaters=PAIR).compile(checkpointer=sqlite_saver)
        values = graph.get_state(config).values
    assert isinstance(values["verdict"], Verdict)
    assert all(isinstance(c, WordCount) for c in values["word_counts"])
    assert all(isinstance(d, ModeratorDecision) for d in values["moderator_decisions"])
    assert isinstance(values["usage"], Usage)
    assert all(isinstance(t, Turn) for t in values["transcript"])
    assert values["summary"].startswith("<summary-")


# --------------------------------------------------------------------------
# Termination backstop and streaming
# --------------------------------------------------------------------------


def test_recursion_limit_is_enough_and_bounded() -> None:
    assert worst_case_limit(1, 2) < worst_case_limit(2, 2) < worst_case_limit(2, 3)
    with pytest.raises(ValueError, match="built by a debategraph factory"):
        recursion_limit(StateGraph(TypedDict("S", {"x": int})))
    script = Script()
    builder = build_debate(
        script.model,
        debaters=TRIO,
        max_rounds=3,
        moderator=True,
        judge=True,
        history="window",
        keep_last=2,
    )
    out = builder.compile().invoke({"topic": TOPIC}, {"recursion_limit": recursion_limit(builder)})
    assert out["rounds_completed"] == 3
    one_round = build_debate(debaters=TRIO, max_rounds=1, moderator=True, judge=True)
    with pytest.raises(GraphRecursionError):
        builder.compile().invoke({"topic": TOPIC}, {"recursion_limit": recursion_limit(one_round)})


def test_arguments_stream_as_messages() -> None:
    script = Script()
    graph = build_debate(script.model, debaters=PAIR, max_rounds=1).compile()
    nodes = []
    for message, metadata in graph.stream(
        {"topic": TOPIC}, stream_mode="messages", config=config_for("x", 1)
    ):
        if message.content:
            nodes.append((metadata["langgraph_node"], message.content))
    assert nodes == [("Alice", argument("Alice", 1)), ("Bob", argument("Bob", 1))]


# --------------------------------------------------------------------------
# Validation
# --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"debaters": ["Alice:for"]}, "a debate needs at least 2 debaters, got 1"),
        ({"debaters": []}, "a debate needs at least 2 debaters, got 0"),
        ({"debaters": "Alice:for"}, "debaters must be a list of two or more debaters"),
        (
            {"debaters": ["Alice:for", "alice:against"]},
            "duplicate debater name 'alice': 'Alice' is the same name (both read as 'alice')",
        ),
        (
            {"first_speaker": "Carol"},
            "first speaker 'Carol' is not a debater: use one of Alice, Bob",
        ),
        ({"max_rounds": 0}, "max_rounds must be at least 1, got 0"),
        ({"words": 9}, "words must be at least 10, got 9"),
        ({"history": "sliding"}, "history must be 'full' or 'window', got 'sliding'"),
        ({"keep_last": 0}, "keep_last must be at least 1, got 0"),
        ({"debaters": ["Alice", "Bob:against"]}, "debater 'Alice' must be 'Name:side'"),
        ({"debaters": ["Alice:", "Bob:against"]}, "debater 'Alice:' must be 'Name:side'"),
        ({"debaters": [{"name": "Alice"}, "Bob:x"]}, "(bad or missing: side)"),
        ({"debaters": [{"name": "", "side": "x"}, "Bob:x"]}, "(bad or missing: name)"),
        ({"debaters": [42, "Bob:x"]}, "debater 42 must be a Debater, a dict or a 'Name:side'"),
        ({"debaters": ["judge:for", "Bob:x"]}, "debater name 'judge' is reserved"),
        ({"debaters": ["Open_Round:for", "Bob:x"]}, "debater name 'Open_Round' is reserved"),
        ({"debaters": ["moderator:for", "Bob:x"]}, "debater name 'moderator' is reserved"),
        ({"debaters": ["Summarizer:for", "Bob:x"]}, "is reserved"),
        ({"debaters": ["close_round:for", "Bob:x"]}, "is reserved"),
        ({"debaters": ["human:for", "Bob:x"]}, "is reserved"),
        ({"debaters": ["user:for", "Bob:x"]}, "is reserved"),
        ({"debaters": ["Tie:for", "Bob:x"]}, "debater name 'Tie' is reserved"),
        ({"debaters": ["__start__:for", "Bob:x"]}, "is reserved"),
        (
            {"debaters": [{"name": "A|B", "side": "x"}, "Bob:x"]},
            "debater name 'A|B' contains '|'",
        ),
        ({"debaters": [{"name": "A:B", "side": "x"}, "Bob:x"]}, "contains ':'"),
    ],
)
def test_bad_settings_fail_at_build_time(kwargs: dict[str, Any], message: str) -> None:
    model = ScriptedChatModel(responses=[])
    settings: dict[str, Any] = {"debaters": PAIR_SHORT, **kwargs}
    with pytest.raises(ValueError, match=re.escape(message)) as info:
        build_debate(model, **settings)
    assert "\n" not in str(info.value)
    assert model.prompts == []


@pytest.mark.parametrize("topic", ["", "  \n"])
def test_empty_topic_fails_when_invoked(topic: str) -> None:
    model = ScriptedChatModel(responses=[])
    graph = build_debate(model, debaters=PAIR).compile()
    with pytest.raises(ValueError, match="topic is empty"):
        graph.invoke({"topic": topic})
    assert model.prompts == []


def test_debaters_in_every_accepted_form() -> None:
    script = Script()
    debaters = [
        Debater(name="Alice", side="for"),
        {"name": " Bob ", "side": "against", "persona": "Blunt."},
        "Carol: undecided ",
    ]
    graph = build_debate(script.model, debaters=debaters, max_rounds=1).compile()
    graph.invoke({"topic": TOPIC}, config_for("x", 1, 3))
    assert script.order == ["Alice", "Bob", "Carol"]
    assert "You are Carol, a debater arguing undecided." in str(script.model.prompts[2][0].content)


# --------------------------------------------------------------------------
# The graph Studio serves (compiled by debategraph.graphs.studio)
# --------------------------------------------------------------------------


def studio_graph() -> Any:
    """The debate as ``langgraph.json`` serves it: the default debaters, moderator, judge."""
    builder = build_debate(debaters=DEFAULT_DEBATERS, moderator=True, judge=True)
    return builder.compile(name=GRAPH_NAME)


def test_mermaid_matches_snapshot() -> None:
    drawn = studio_graph().get_graph().draw_mermaid()
    assert drawn == SNAPSHOT.read_text(encoding="utf-8")


def test_graph_for_studio() -> None:
    graph = studio_graph()
    assert graph.checkpointer is None
    assert graph.name == GRAPH_NAME == "debate"
    builder = graph.builder
    assert set(typing.get_type_hints(builder.input_schema)) == {"topic", "messages"}
    output = set(typing.get_type_hints(builder.output_schema))
    assert output == OUTPUT_KEYS
    assert set(graph.output_channels) == output
    assert set(graph.get_input_jsonschema()["properties"]) == {"topic", "messages"}
    assert set(graph.get_output_jsonschema()["properties"]) == OUTPUT_KEYS
    assert {"Affirmative", "Negative", "moderator", "judge"} <= set(graph.nodes)


def test_default_debaters() -> None:
    graph = build_debate().compile()
    assert {"Affirmative", "Negative"} <= set(graph.nodes)
    assert not {"moderator", "judge", "summarizer", "human"} & set(graph.nodes)


# --------------------------------------------------------------------------
# The pattern's declaration (what the CLI and the thread tools ask of it)
# --------------------------------------------------------------------------


def test_command_launches_with_the_factorys_settings() -> None:
    launch = PATTERN.command(TOPIC, debater=["Alice:for", "Bob:against"], rounds=2, judge=True)
    assert isinstance(launch, Launch)
    assert launch.input == {"topic": TOPIC}
    assert launch.settings == {
        "debaters": ["Alice:for", "Bob:against"],
        "max_rounds": 2,
        "first_speaker": None,
        "words": 80,
        "moderator": False,
        "judge": True,
        "history": "full",
        "keep_last": 4,
    }
    defaults = PATTERN.command(TOPIC)
    assert defaults.settings["debaters"] == list(DEFAULT_DEBATERS)
    # The settings (plus the CLI's pause_after_round) are build_debate's keyword arguments.
    script = Script()
    builder = entry("debate").build()(script.model, **launch.settings, pause_after_round=False)
    out = builder.compile().invoke(launch.input, {"recursion_limit": recursion_limit(builder)})
    assert out["rounds_completed"] == 2
    assert PATTERN.described.agents_per_round(launch.settings) == 2


@pytest.mark.parametrize("topic", ["", "  "])
def test_command_refuses_an_empty_topic(topic: str) -> None:
    """The CLI checks its launch's input with the check the graph and the server make."""
    from debategraph.graphs.inputs import check_input

    with pytest.raises(ValueError, match=r"^topic is empty: give the motion") as info:
        check_input("debate", PATTERN.command(topic).input)
    assert "\n" not in str(info.value)


def test_describe_names_the_debaters_and_options() -> None:
    settings = PATTERN.command(TOPIC, debater=PAIR_SHORT, moderator=True).settings
    assert PATTERN.described.describe(settings) == (
        "Alice vs Bob + moderator, 3 rounds, 80 words per turn"
    )
    window = {
        **PATTERN.command(TOPIC, judge=True, history="window", keep_last=2).settings,
        "pause_after_round": True,
    }
    assert PATTERN.described.describe(window) == (
        "Affirmative vs Negative + judge, window of 2, 3 rounds, 80 words per turn, "
        "pausing after each round"
    )
    assert PATTERN.described.describe(
        {**settings, "debaters": [{"name": "Ann", "side": "x"}, "Bo:y"]}
    )
    assert PATTERN.described.title({"topic": TOPIC}) == TOPIC


def test_summary_and_headline() -> None:
    script = Script(judge=lambda: tool_reply("Verdict", verdict_args(rationale="Clear. " * 80)))
    graph = build_debate(script.model, debaters=PAIR, max_rounds=2, moderator=True, judge=True)
    values = graph.compile().invoke({"topic": TOPIC}, config_for("x", 2))
    summary = PATTERN.described.summary(values)
    assert set(summary) == {
        *("topic", "stances", "winner", "verdict", "rounds_completed", "moderator", "words")
    }
    assert summary["stances"] == {"Alice": "for the motion", "Bob": "against the motion"}
    assert (summary["topic"], summary["winner"], summary["rounds_completed"]) == (TOPIC, "Alice", 2)
    assert [d["round"] for d in summary["moderator"]] == [1]
    assert [w["debater"] for w in summary["words"]] == ["Alice", "Bob"] * 2
    first, rationale = PATTERN.headline(summary)
    assert first == "winner [bold]Alice[/bold] · 2 rounds"
    assert rationale.startswith("  judge's rationale: Clear. Clear.") and rationale.endswith("…")
    assert len(rationale) == len("  judge's rationale: ") + 300

    no_judge = {"winner": None, "verdict": None, "rounds_completed": 3}
    assert PATTERN.headline(no_judge) == ["winner [bold]no verdict (no judge)[/bold] · 3 rounds"]
    odd = {"winner": "[b]x", "verdict": {"rationale": ""}, "rounds_completed": 1}
    assert PATTERN.headline(odd) == ["winner [bold]\\[b]x[/bold] · 1 round"]


def test_progress_lines_and_streaming() -> None:
    decision = ModeratorDecision(settled=True, leading="Bob", reason="Bob [won] " * 40, round=2)
    (line,) = PATTERN.progress("moderator", {"moderator_decisions": [decision]})
    assert line.startswith("  [dim]moderator: settled, leading Bob: Bob \\[won]")
    assert line.endswith("…[/dim]")
    verdict = Verdict(winner="Alice", scores=[], rationale="r", strongest=[])
    assert PATTERN.progress("judge", {"verdict": verdict}) == ["  judge: winner [bold]Alice[/bold]"]
    assert PATTERN.progress("Alice", {"transcript": []}) == []
    assert PATTERN.progress("open_round", {"round": 1}) == []
    assert PATTERN.streams is not None
    assert PATTERN.streams("Alice") and PATTERN.streams("Negative")
    assert not any(PATTERN.streams(n) for n in ("moderator", "judge", "summarizer"))
    assert PATTERN.streamed_stage == ARGUE_STAGE


# --------------------------------------------------------------------------
# Composition: the compiled debate inside a parent graph, under its checkpointer
# --------------------------------------------------------------------------


class Court(TypedDict, total=False):
    motion: str
    winner: str | None
    rationale: str


def test_debate_as_a_node_paused_and_resumed_through_the_parent(tmp_path: Path) -> None:
    script = Script()
    debate = build_debate(
        script.model, debaters=PAIR, max_rounds=2, judge=True, pause_after_round=True
    ).compile(name="debate")  # no checkpointer: the parent's covers it
    assert debate.checkpointer is None

    def hold_debate(state: Court) -> Court:
        result = debate.invoke({"topic": state["motion"]})
        verdict = result["verdict"]
        return {"winner": verdict.winner, "rationale": verdict.rationale}

    parent = StateGraph(Court)
    parent.add_node("debate", hold_debate)
    parent.add_edge(START, "debate")
    parent.add_edge("debate", END)

    config: RunnableConfig = {
        "configurable": {"thread_id": "court"},
        "recursion_limit": worst_case_limit(2, 2) + 5,
    }
    with open_checkpointer(tmp_path / "court.sqlite") as sqlite_saver:
        app = parent.compile(checkpointer=sqlite_saver)
        out = app.invoke({"motion": TOPIC}, config)
        (pause,) = out["__interrupt__"]
        assert review_request(pause.value)["args"]["round"] == 1
        assert app.get_state(config).next == ("debate",)
        assert script.order == ["Alice", "Bob"]

    # A new process: reopen the file, resume the parent's thread.
    with open_checkpointer(tmp_path / "court.sqlite") as sqlite_saver:
        app = parent.compile(checkpointer=sqlite_saver)
        out = app.invoke(Command(resume={"interject": NOTE}), config)

    assert out == {"motion": TOPIC, "winner": "Alice", "rationale": "Alice rebutted every point."}
    assert script.order == ["Alice", "Bob"] * 2  # round 1 was not repeated
    assert all(NOTE in script.prompts[name][1] for name in ("Alice", "Bob"))
    assert len(script.officials["judge"]) == 1
