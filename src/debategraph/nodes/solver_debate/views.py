"""What a solver reads in a round, and its prompt."""

from __future__ import annotations

from collections.abc import Sequence

from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage

from debategraph.nodes.rounds import interjection_prompt, interjections
from debategraph.nodes.solver_debate.prompts import (
    CHOICE_LINE,
    CHOICE_QUESTION,
    NO_ANSWER,
    SOLUTION_VIEW,
    SOLVER_FIRST_ROUND,
    SOLVER_INSTRUCTIONS,
    SOLVER_REFINE,
    SOLVER_SYSTEMS,
)
from debategraph.nodes.solver_debate.setup import SOLVE_STAGE
from debategraph.state.records import Turn
from debategraph.state.solver_debate import SolverDebateState, SolverView
from debategraph.strategies.answers import answer_form, choice_letter
from debategraph.strategies.topology import Topology


def question_text(question: str, choices: Sequence[str]) -> str:
    """The question as the solvers read it: with its lettered choices, if it has any.

    Args:
        question: The question.
        choices: Its choices, in letter order (empty: a numeric question).

    Returns:
        The text.
    """
    if not choices:
        return question
    lines = "\n".join(
        CHOICE_LINE.format(letter=choice_letter(i), text=text) for i, text in enumerate(choices)
    )
    return CHOICE_QUESTION.format(question=question, choices=lines)


def latest_turns(transcript: Sequence[Turn], stage: str = SOLVE_STAGE) -> dict[str, Turn]:
    """Each agent's latest record of ``stage``.

    A tool call's record (stage ``tool``) is never a solver's answer: it is not read.

    Args:
        transcript: The transcript.
        stage: Which stage's records to look at.

    Returns:
        Agent -> its latest record.
    """
    out: dict[str, Turn] = {}
    for turn in transcript:
        if turn.stage == stage:
            out[turn.agent] = turn
    return out


def solver_view(state: SolverDebateState, solver: str, topology: Topology) -> SolverView:
    """What one solver may read this round.

    Its own latest answer, its neighbours' latest answers, and what a human interjected
    since the last round (every solver sees those).

    Args:
        state: The debate state.
        solver: The solver.
        topology: Who hears whom.

    Returns:
        The view.
    """
    transcript = state.get("transcript", [])
    latest = latest_turns(transcript)
    rnd = state["round"]
    return SolverView(
        question=state["question"],
        choices=list(state.get("choices") or []),
        answer_kind=state.get("answer_kind") or "number",
        solver=solver,
        round=rnd,
        own=latest.get(solver),
        peers=[latest[p] for p in topology.neighbours[solver] if p in latest],
        interjections=interjections(transcript, after_round=rnd - 1),
    )


def solver_prompt(
    task: SolverView, n_solvers: int, view_chars: int | None, instructions: str = ""
) -> list[BaseMessage]:
    """The messages a solver sees: the question, and after round 1 the answers so far.

    After round 1 a solver reads its own previous answer and, of each neighbour, the
    answer and the gist of its reasoning (see :func:`gist`): a prompt's size stays the
    same however long the replies grow.

    Args:
        task: The solver's view.
        n_solvers: How many solvers debate.
        view_chars: How much of each neighbour's reasoning to show (``None``: all).
        instructions: The solver's own instructions (its record's), after the system
            prompt; ``""``: none.

    Returns:
        The prompt.
    """
    template = SOLVER_SYSTEMS[answer_form(task["choices"], task["answer_kind"])]
    text = template.format(solver=task["solver"], n_solvers=n_solvers)
    if instructions.strip():
        text = SOLVER_INSTRUCTIONS.format(system=text, instructions=instructions.strip())
    system = SystemMessage(text)
    human = interjection_prompt(task["interjections"])
    question = question_text(task["question"], task["choices"])
    own = task["own"]
    if own is None:
        text = SOLVER_FIRST_ROUND.format(question=question, human=human)
        return [system, HumanMessage(text)]
    peers = "\n\n".join(solution_view(t, view_chars) for t in task["peers"]) or NO_ANSWER
    own_answer = own.answer or NO_ANSWER
    text = SOLVER_REFINE.format(question=question, own=own_answer, peers=peers, human=human)
    return [system, HumanMessage(text)]


def solution_view(turn: Turn, view_chars: int | None) -> str:
    """A solver's answer as a peer (or the judge) reads it: its name, gist and answer.

    Args:
        turn: The solver's turn.
        view_chars: How much of its reasoning to show (``None``: all).

    Returns:
        The text.
    """
    return SOLUTION_VIEW.format(
        agent=turn.agent, content=gist(turn.content, view_chars), answer=turn.answer or NO_ANSWER
    )


def gist(text: str, limit: int | None) -> str:
    """``text`` on one line; past ``limit`` characters, its start and its end around "…".

    A solution's first steps and its conclusion are what a peer checks; the middle is cut.

    Args:
        text: A solver's reasoning.
        limit: Most characters to keep (``None``: all).

    Returns:
        The gist.
    """
    flat = " ".join(text.split())
    if limit is None or len(flat) <= limit:
        return flat
    half = max(1, (limit - 3) // 2)
    head = flat[: half + 1].rsplit(" ", 1)[0] or flat[:half]  # whole words
    tail = flat[-half - 1 :].split(" ", 1)[-1] or flat[-half:]
    return f"{head} … {tail}"
