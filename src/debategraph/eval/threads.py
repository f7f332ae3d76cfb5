"""A finished thread of the eval: its solvers' answers, what they spent, its outcome rows.

A thread's usage is the solvers' alone: a judge's turn the eval stored in the thread
(:mod:`~debategraph.eval.verdicts`) is taken out of it, and charged only to the rows
of the protocols that consulted the judge.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from debategraph.checkpoints.threads import wall_time
from debategraph.eval.records import Item, Outcome
from debategraph.state.records import COST_DECIMALS, Decided, RoundRecord, Turn, Usage
from debategraph.strategies.decisions import JUDGE
from debategraph.strategies.math_answers import check_answer

if TYPE_CHECKING:
    from langchain_core.runnables import RunnableConfig
    from langgraph.graph.state import CompiledStateGraph

    Graph = CompiledStateGraph[Any, Any, Any, Any]


@dataclass(frozen=True)
class ThreadCost:
    """What one thread spent, for the matched budgets.

    Attributes:
        tokens: The solvers' total tokens (no judge's).
        first_round_tokens: The total tokens of its round-1 calls.
        first_round_answers: Its round-1 solvers.
    """

    tokens: int
    first_round_tokens: int
    first_round_answers: int


async def checkpointed_seconds(graph: Graph, config: RunnableConfig) -> float:
    """A thread's wall time from its checkpoints: the sum of its runs' spans.

    For a thread this process did not run from its start (read back, or resumed): the
    time it lay stopped between runs does not count, nor the judge's verdict the eval
    added (an update, timed by its call's latency instead). It walks the thread's
    history, so a fresh run is timed by the clock instead.

    Args:
        graph: The mode's compiled graph.
        config: The thread's config.

    Returns:
        Seconds.
    """
    stamps = [
        (past.created_at, dict(past.metadata or {}))
        async for past in graph.aget_state_history(config)
    ]
    return wall_time(stamps, {})


class Thread:
    """A finished thread of one question in one mode, and what its outcomes are made of.

    Args:
        mode: The mode.
        item: The question.
        thread_id: The thread.
        values: Its state's values.
        wall_s: Its wall time.
    """

    def __init__(
        self, mode: str, item: Item, thread_id: str, values: Mapping[str, Any], wall_s: float
    ) -> None:
        from debategraph.nodes.solver_debate import latest_turns

        self.mode, self.item, self.thread_id, self.wall_s = mode, item, thread_id, wall_s
        self.values = values
        self.transcript = [Turn.model_validate(t) for t in values.get("transcript") or []]
        #: Each solver's latest answer, in solver order.
        self.finals = latest_turns(self.transcript)
        self.rounds = [RoundRecord.model_validate(r) for r in values.get("rounds") or []]
        self.spend = self._solvers_spend()

    def answers(self) -> dict[str, str | None]:
        """Each solver's final answer."""
        return {solver: turn.answer for solver, turn in self.finals.items()}

    def confidences(self) -> dict[str, float | None]:
        """Each solver's confidence in its final answer."""
        return {solver: turn.confidence for solver, turn in self.finals.items()}

    def stored_verdict(self, key: str) -> Decided | None:
        """The verdict of the judge ``key`` stored in the thread.

        Args:
            key: The judge's key (:meth:`~debategraph.eval.verdicts.Verdicts.judge`).

        Returns:
            Its verdict, or ``None`` where it has none here.
        """
        raw = (self.values.get("decisions") or {}).get(f"{JUDGE}@{key}")
        return None if raw is None else Decided.model_validate(raw)

    def _solvers_spend(self) -> Spend:
        """The solvers' usage: the thread's, less any judge's the eval stored in it."""
        judge = [t for t in self.transcript if t.agent == JUDGE]
        by_model = _usages(self.values.get("usage_by_model"))
        for turn in judge:
            if turn.model is not None and turn.model in by_model:
                left = _less(by_model[turn.model], turn.usage)
                if left.calls:
                    by_model[turn.model] = left
                else:
                    del by_model[turn.model]
        by_agent = _usages(self.values.get("usage_by_agent"))
        by_agent.pop(JUDGE, None)
        total = _less(Usage.coerce(self.values.get("usage")), Usage.total(t.usage for t in judge))
        return Spend(total, by_agent, by_model)

    def cost(self) -> ThreadCost:
        """What the thread's solvers spent, in total and in round 1."""
        first = self.rounds[0] if self.rounds else None
        return ThreadCost(
            tokens=self.spend.usage.total_tokens,
            first_round_tokens=first.usage.total_tokens if first else 0,
            first_round_answers=len(first.answers) if first else 0,
        )

    def outcome(self, decision: str, answer: str | None, judge: Turn | None) -> Outcome:
        """The thread's row under one protocol; a judge's row includes its call's usage."""
        spend = self.spend if judge is None else self.spend.plus(judge)
        rounds = [dict(r.answers) for r in self.rounds]
        wall_s = self.wall_s + (judge.usage.latency_s if judge is not None else 0.0)
        checked = check_answer(answer, self.item.gold, self.item.checker)
        return Outcome(
            mode=self.mode,
            line=self.item.line,
            gold=self.item.gold,
            answer=answer,
            correct=checked.correct,
            prompt_tokens=spend.usage.prompt_tokens,
            completion_tokens=spend.usage.completion_tokens,
            calls=spend.usage.calls,
            wall_s=round(wall_s, 3),
            thread_id=self.thread_id,
            usage_by_agent=_usage_json(spend.by_agent),
            usage_by_model=_usage_json(spend.by_model),
            debated=len(self.rounds) > 1,
            first_round_tokens=self.cost().first_round_tokens,
            decision=decision,
            rounds=json.dumps(rounds, separators=(",", ":")),
            reason=checked.reason,
            cost=spend.usage.cost,
            cache_hits=spend.usage.cache_hits,
            subject=self.item.subject,
            epoch=self.item.epoch,
        )


@dataclass(frozen=True)
class Spend:
    """Usage in total, per agent and per model."""

    usage: Usage
    by_agent: dict[str, Usage]
    by_model: dict[str, Usage]

    def plus(self, turn: Turn) -> Spend:
        """This usage plus a turn's, charged to its agent and model."""
        by_agent = {
            **self.by_agent,
            turn.agent: self.by_agent.get(turn.agent, Usage()) + turn.usage,
        }
        by_model = dict(self.by_model)
        if turn.model is not None:
            by_model[turn.model] = by_model.get(turn.model, Usage()) + turn.usage
        return Spend(self.usage + turn.usage, by_agent, by_model)


def _usages(raw: Any) -> dict[str, Usage]:
    table = raw if isinstance(raw, Mapping) else {}
    return {str(name): Usage.coerce(value) for name, value in table.items()}


def _less(total: Usage, part: Usage) -> Usage:
    """``total`` without ``part`` (never below zero)."""
    return Usage(
        prompt_tokens=max(0, total.prompt_tokens - part.prompt_tokens),
        completion_tokens=max(0, total.completion_tokens - part.completion_tokens),
        calls=max(0, total.calls - part.calls),
        latency_s=round(max(0.0, total.latency_s - part.latency_s), 6),
        estimated=total.estimated,
        cost=None
        if total.cost is None
        else round(max(0.0, total.cost - (part.cost or 0.0)), COST_DECIMALS),
        cache_hits=max(0, total.cache_hits - part.cache_hits),
    )


def _usage_json(raw: Any) -> str:
    """``{name: [prompt tokens, completion tokens, calls, model seconds]}`` as JSON text."""
    rows: dict[str, list[float]] = {}
    for name, u in _usages(raw).items():
        rows[name] = [u.prompt_tokens, u.completion_tokens, u.calls, round(u.latency_s, 3)]
    return json.dumps(rows, separators=(",", ":"))
