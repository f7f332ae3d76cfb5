"""A tiny sixth pattern, written as a contributor would: its graph, nodes, state, declaration.

``poll``: each round every panellist answers the question in one line (reading what a
human interjected so far); after the round cap, the last answers are the result. It uses
only the shared core (skeleton, round loop, agent helper, base state, termination
conditions) and touches neither the CLI nor the checkpoint tools. Its registry line,
:data:`ENTRY`, is all it takes: passed to ``registry.register`` (in-process), named in
``DEBATEGRAPH_PATTERNS`` (a plugin), or added to ``registry.BUILTIN`` (a built-in).
A real pattern would put these parts in ``graphs/``, ``nodes/``, ``state/`` and
``cli/patterns/``; one module keeps the test's pattern in one place.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Annotated, Any

import typer
from langchain_core.messages import HumanMessage, SystemMessage
from langgraph.runtime import Runtime
from pydantic import BaseModel
from rich.markup import escape
from typing_extensions import TypedDict

from debategraph.cli.patterns.declaration import Launch, Pattern, Values
from debategraph.described import Described, pausing
from debategraph.errors import UsageError
from debategraph.graphs.skeleton import PatternGraph, skeleton
from debategraph.models.context import Context
from debategraph.nodes import review
from debategraph.nodes import rounds as loop
from debategraph.nodes.agent import Agent
from debategraph.nodes.messages import RESPOND_NODE
from debategraph.registry import Entry
from debategraph.state.base import RunOutput, RunState, Schemas, turn_update
from debategraph.state.records import Turn, Usage
from debategraph.state.reducers import append_only
from debategraph.strategies.termination import MaxRounds, RoundOutcome, first_fired

NAME = "poll"
ANSWER_STAGE = "answer"


class Tally(BaseModel):
    """The pattern's own record: how many panellists answered in a round.

    Listed in :data:`RECORD_TYPES` of the module :data:`ENTRY` names as its state, so
    checkpoints revive it.
    """

    round: int
    answered: int


class PollInput(TypedDict):
    question: str


class PollOutput(RunOutput):
    question: str
    tallies: Annotated[list[Tally], append_only()]


class PollState(PollOutput, RunState):
    pass


SCHEMAS = Schemas(PollState, PollInput, PollOutput)


@dataclass(frozen=True)
class PollSetup:
    """The poll's checked settings, as the skeleton reads them."""

    round_cap: int
    time_limit_s: float | None = None


def build_poll(
    model: Any = None, *, panellists: int = 2, rounds: int = 2, pause_after_round: bool = False
) -> PatternGraph[PollInput, PollOutput]:
    if panellists < 1:
        raise ValueError(f"panellists must be at least 1, got {panellists}")
    if rounds < 1:
        raise ValueError(f"rounds must be at least 1, got {rounds}")
    builder, binding = skeleton(model, SCHEMAS, None, PollSetup(round_cap=rounds), pattern="poll")
    names = [f"panellist_{i + 1}" for i in range(panellists)]
    builder.add_node(loop.OPEN_ROUND_NODE, loop.round_opener())
    for name in names:
        builder.add_node(name, _panellist(Agent(name, binding)))
        builder.add_edge(loop.OPEN_ROUND_NODE, name)
    builder.add_node("close_round", _close(rounds))
    builder.start_at(loop.OPEN_ROUND_NODE)
    builder.add_edge(names, "close_round")
    route, targets = loop.round_router(RESPOND_NODE, pause_after_round=pause_after_round)
    builder.add_conditional_edges("close_round", route, targets)
    if pause_after_round:
        review.add_review(
            builder,
            lambda state: review.review_payload(state["round"], rounds, "panellist"),
            finish=RESPOND_NODE,
        )
    return builder


def _panellist(agent: Agent) -> Any:
    def answer(state: PollState, *, runtime: Runtime[Context]) -> dict[str, Any]:
        human = loop.interjection_prompt(loop.interjections(state.get("transcript", [])))
        prompt = [
            SystemMessage(f"You are {agent.name}, on a panel."),
            HumanMessage(f"{human}Question: {state['question']}\nAnswer in one line."),
        ]
        result = agent.say(runtime, prompt)
        turn = Turn(
            agent=agent.name,
            content=result.text,
            stage=ANSWER_STAGE,
            round=state["round"],
            usage=result.usage,
            reason=result.reason,
        )
        return turn_update(turn)

    return answer


def _close(rounds: int) -> Any:
    def close_round(state: PollState) -> dict[str, Any]:
        rnd = state["round"]
        outcome = RoundOutcome(round=rnd, usage=Usage.coerce(state.get("usage")))
        reason = first_fired([MaxRounds(rounds)], outcome)
        answered = [t for t in state.get("transcript", []) if t.round == rnd and t.content]
        tally = Tally(round=rnd, answered=len(answered))
        return {"tallies": [tally], **({"termination_reason": reason} if reason else {})}

    return close_round


def poll_command(
    question: Annotated[str, typer.Argument(help="What the panel answers.")],
    panellists: Annotated[int, typer.Option("--panellists", help="Panel size.")] = 2,
    rounds: Annotated[int, typer.Option("--rounds", help="Rounds.")] = 2,
) -> Launch:
    """A panel answers a question in one line each, round after round."""
    if not question.strip():
        raise UsageError("question is empty")
    return Launch({"panellists": panellists, "rounds": rounds}, {"question": question})


def _answers(values: Values) -> dict[str, str]:
    last: dict[str, str] = {}
    for turn in values.get("transcript", []):
        if turn.stage == ANSWER_STAGE:
            last[turn.agent] = turn.content
    return last


def _headline(result: Mapping[str, Any]) -> list[str]:
    return [f"poll: {len(result['answers'])} answer(s) after {result['rounds']} round(s)"]


#: The records this pattern's checkpoints hold besides the shared ones.
RECORD_TYPES = (Tally,)

DESCRIBED = Described(
    name=NAME,
    title=lambda values: str(values.get("question") or ""),
    summary=lambda values: {
        "answers": _answers(values),
        "rounds": values.get("round", 0),
        "answered": [t.answered for t in values.get("tallies", [])],  # records, not dicts
    },
    describe=lambda s: f"{s['panellists']} panellists, {s['rounds']} rounds{pausing(s)}",
    agents_per_round=lambda s: int(s["panellists"]),
)

PATTERN = Pattern(
    described=DESCRIBED,
    command=poll_command,
    headline=_headline,
    progress=lambda node, update: (
        [escape(f"  {node} closed the round")] if node == "close_round" else []
    ),
)

#: The pattern's registry line.
ENTRY = Entry(
    NAME,
    "poll",
    "A panel answers a question.",
    factory="tests.poll_pattern:build_poll",
    state="tests.poll_pattern",
    described="tests.poll_pattern:DESCRIBED",
    cli="tests.poll_pattern:PATTERN",
    description="A panel answers a question in one line each, round after round.",
)
