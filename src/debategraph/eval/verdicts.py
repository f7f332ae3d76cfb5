"""Deciding a finished thread: its outcome under each protocol, the judge asked once.

Each finished thread gives one outcome per decision protocol
(:mod:`debategraph.strategies.decisions`), all applied to its solvers' final answers: a
protocol added later costs no re-run. Only the judge calls a model; its verdict, its
turn and its usage are stored in the thread, so a rerun reads them back.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from debategraph.eval.plan import JUDGE_PROTOCOL, EvalPlan
from debategraph.eval.records import Outcome
from debategraph.eval.threads import Thread
from debategraph.state.records import AgentSpec, Decided, Turn
from debategraph.strategies import JUDGE, DecisionProtocol, decide, judge_needed

if TYPE_CHECKING:
    from langchain_core.runnables import RunnableConfig
    from langgraph.graph.state import CompiledStateGraph

    from debategraph.models.spec import ModelSpec
    from debategraph.nodes.agent import Agent

    Graph = CompiledStateGraph[Any, Any, Any, Any]


class Verdicts:
    """Each thread's outcome rows, each mode's judge made once and asked once per thread.

    Args:
        plan: The plan (its modes' protocols and judges).
        spec: The run's model (a judge without a model of its own calls it), bound when
            a judge is first made.
    """

    def __init__(self, plan: EvalPlan, spec: ModelSpec) -> None:
        self.plan = plan
        self.spec = spec
        self._judges: dict[str, tuple[Agent, str, str]] = {}
        #: Judge calls made (a stored verdict is read, not asked again).
        self.calls = 0

    async def rows(self, thread: Thread, graph: Graph, config: RunnableConfig) -> list[Outcome]:
        """The thread's outcome under each protocol of its mode (the judge asked once).

        Args:
            thread: The finished thread.
            graph: Its mode's compiled graph (a new verdict is written into the thread).
            config: The thread's config.

        Returns:
            One outcome per protocol, plurality first.
        """
        answers, confidences = thread.answers(), thread.confidences()
        verdict: tuple[Decided, Turn | None] | None = None
        rows = []
        for protocol in self.plan.protocols(thread.mode):
            judge_turn = None
            if protocol.may_judge and judge_needed(protocol, answers):
                if verdict is None:
                    verdict = await self._verdict(thread, graph, config)
                judged, judge_turn = verdict
                decision = (
                    judged
                    if protocol == JUDGE_PROTOCOL
                    else _with_pick(protocol, answers, confidences, judged, judge_turn)
                )
            else:
                decision = decide(protocol, answers, confidences)
            rows.append(thread.outcome(protocol.spec, decision.answer, judge_turn))
        return rows

    def judge(self, mode: str) -> tuple[Agent, str, str]:
        """The judge of ``mode``, its model's label, and the key its verdicts are kept by.

        The key is the label, and for a judge with tools or an agent of its own a digest
        of its record too: a judge given other tools is another judge, asked again.

        Args:
            mode: The mode.

        Returns:
            The judge, its label and its key.
        """
        if mode not in self._judges:
            from debategraph.models import bind_model
            from debategraph.nodes.agent import agent_of

            record = self.plan.judge_record(mode)
            agent = agent_of(record, bind_model(self.spec), JUDGE)
            label = key = agent.label()
            if isinstance(record, AgentSpec) and (record.tools or record.agent is not None):
                dumped = record.model_dump(mode="json", exclude={"name"})
                text = json.dumps(dumped, sort_keys=True, default=str)
                key = f"{label}#{hashlib.sha256(text.encode()).hexdigest()[:10]}"
            self._judges[mode] = (agent, label, key)
        return self._judges[mode]

    async def _verdict(
        self, thread: Thread, graph: Graph, config: RunnableConfig
    ) -> tuple[Decided, Turn | None]:
        """The judge's pick of the thread's final answers: stored, or asked and stored.

        The verdict, the judge's turn and its usage are written into the finished
        thread (``decisions``, ``transcript``, ``usage``), so a rerun reads them back.
        """
        from debategraph.models.steps import arun_steps
        from debategraph.nodes.messages import RESPOND_NODE
        from debategraph.nodes.solver_debate import decide_steps
        from debategraph.state.base import turn_update

        agent, label, key = self.judge(thread.mode)
        stored = thread.stored_verdict(key)
        if stored is not None:
            return stored, _judge_turn(thread.transcript, label)
        self.calls += 1
        item = thread.item
        decision, records = await arun_steps(
            decide_steps(
                JUDGE_PROTOCOL,
                agent,
                None,
                item.question,
                item.choices,
                thread.finals,
                item.answer_kind,
            )
        )
        update: dict[str, Any] = {"decisions": {f"{JUDGE}@{key}": decision}}
        if records:
            update.update(turn_update(*records))
        # Written as the graph's last node: the thread stays finished (nothing next).
        await graph.aupdate_state(config, update, as_node=RESPOND_NODE)
        return decision, _judge_turn(records, decision.judge_model or label)


def _with_pick(
    protocol: DecisionProtocol,
    answers: Mapping[str, str | None],
    confidences: Mapping[str, float | None],
    verdict: Decided,
    turn: Turn | None,
) -> Any:
    """``protocol``'s decision, the judge's pick (of its verdict) where it falls back to it."""
    if turn is not None:
        judged, reason = turn.answer, turn.reason
    else:  # its turn not found: its verdict says what it picked, or why not
        judged = verdict.answer if verdict.reason is None else None
        reason = verdict.reason
    return decide(
        protocol,
        answers,
        confidences,
        judged=judged,
        judge_reason=reason,
        judge_model=verdict.judge_model,
    )


def _judge_turn(records: Sequence[Turn], label: str) -> Turn | None:
    """The latest judge's turn of model ``label`` among ``records`` (not its tool calls).

    The latest: a judge asked again (given other tools) adds its turn after the first's.
    """
    from debategraph.nodes.solver_debate import JUDGE_STAGE

    for turn in reversed(records):
        if turn.agent == JUDGE and turn.stage == JUDGE_STAGE and turn.model == label:
            return turn
    return None
