"""The benchmark debate in plain LangGraph, on LangGraph's own ``SqliteSaver``.

Written as a LangGraph user would write it without debategraph: one node per solver
(``with_structured_output`` on ``ChatOpenAI``), a node that closes the round, a loop,
a majority vote; ``invoke`` with LangGraph's sync ``SqliteSaver`` on a file, one thread
per debate when several run at once. Same solvers, ring, rounds and prompts' content
as debategraph's solver debate.
"""

from __future__ import annotations

import operator
import sqlite3
import time
import uuid
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Annotated, Any, TypedDict

from pydantic import BaseModel, Field


class Reply(BaseModel):
    """A solver's answer."""

    reasoning: str = Field(description="Brief step-by-step reasoning.")
    answer: str = Field(description="Only the final number.")
    confidence: float = Field(default=0.5, description="0 to 1.")


class State(TypedDict):
    question: str
    round: int
    answers: Annotated[list[dict[str, Any]], operator.add]
    final: str


def langgraph_runner(
    url: str, db: str, agents: int, rounds: int, question: str
) -> Callable[[int], tuple[list[float], list[Any]]]:
    """Build the graph on a SQLite file; returns the runner of N debates at once."""
    from langchain_core.messages import HumanMessage, SystemMessage
    from langchain_openai import ChatOpenAI
    from langgraph.checkpoint.sqlite import SqliteSaver
    from langgraph.graph import END, START, StateGraph

    llm = ChatOpenAI(model="stub", base_url=url, api_key="x", timeout=60, max_retries=0)
    structured = llm.with_structured_output(Reply, method="function_calling")
    names = [f"solver_{i + 1}" for i in range(agents)]
    hears = {n: [names[(i - 1) % agents], names[(i + 1) % agents]] for i, n in enumerate(names)}

    def make_solver(name: str) -> Callable[[State], dict[str, Any]]:
        def solve(state: State) -> dict[str, Any]:
            latest = {a["solver"]: a for a in state["answers"]}
            system = SystemMessage(
                f"You are {name}, one of {agents} agents solving a math word problem. "
                "Reason briefly, step by step; the answer is a single number."
            )
            if name not in latest:
                task = f"Question: {state['question']}\n\nSolve it."
            else:
                peers = "\n\n".join(
                    f"{p}: {latest[p]['reasoning']}\nAnswer: {latest[p]['answer']}"
                    for p in hears[name]
                    if p in latest
                )
                own = latest[name]
                task = (
                    f"Question: {state['question']}\n\nYour previous solution:\n"
                    f"{name}: {own['reasoning']}\nAnswer: {own['answer']}\n\n"
                    f"Solutions of the agents you hear:\n{peers}\n\n"
                    "Use their reasoning as advice: check yours and theirs step by step, "
                    "then answer again."
                )
            reply = structured.invoke([system, HumanMessage(task)])
            assert isinstance(reply, Reply)
            return {"answers": [{"solver": name, **reply.model_dump()}]}

        return solve

    def close_round(state: State) -> dict[str, Any]:
        return {"round": state.get("round", 0) + 1}

    def route(state: State) -> list[str] | str:
        return "vote" if state["round"] >= rounds else names

    def vote(state: State) -> dict[str, Any]:
        latest = {a["solver"]: a["answer"] for a in state["answers"]}
        return {"final": Counter(latest.values()).most_common(1)[0][0]}

    builder = StateGraph(State)
    for name in names:
        builder.add_node(name, make_solver(name))
        builder.add_edge(START, name)
    builder.add_node("close_round", close_round)
    builder.add_node("vote", vote)
    builder.add_edge(names, "close_round")
    builder.add_conditional_edges("close_round", route, [*names, "vote"])
    builder.add_edge("vote", END)
    saver = SqliteSaver(sqlite3.connect(db, check_same_thread=False))
    saver.setup()
    graph = builder.compile(checkpointer=saver)

    def one(_: int) -> tuple[float, Any]:
        config = {"configurable": {"thread_id": uuid.uuid4().hex}, "recursion_limit": 50}
        started = time.perf_counter()
        out = graph.invoke({"question": question, "round": 0, "answers": []}, config)
        return time.perf_counter() - started, out["final"]

    def run(n: int) -> tuple[list[float], list[Any]]:
        with ThreadPoolExecutor(n) as pool:
            done = list(pool.map(one, range(n)))
        return [w for w, _ in done], [a for _, a in done]

    return run
