"""Running an eval: every question of every mode a checkpointed thread, resumable.

A question's thread id is derived from what decides its answer (the mode's settings, the
model, the question and its gold answer), so rerunning the same command finds the same
threads: a finished one is read back without a model call, an interrupted one resumes
from its last saved step, and only questions never started are started.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from debategraph import registry
from debategraph.checkpoints.threads import RunInfo, thread_config, writer_elsewhere
from debategraph.errors import ModelUnavailableError, UsageError
from debategraph.eval.modes import mode_settings
from debategraph.eval.records import Item, Outcome
from debategraph.state.records import Usage

if TYPE_CHECKING:
    from langchain_core.runnables import RunnableConfig
    from langgraph.checkpoint.base import BaseCheckpointSaver
    from langgraph.graph.state import CompiledStateGraph

    from debategraph.models import ModelBinding

    Graph = CompiledStateGraph[Any, Any, Any, Any]

#: Prefix of every eval thread's id (``debategraph threads`` lists them beside the rest).
THREAD_PREFIX = "eval"


def _hashed(settings: Mapping[str, Any]) -> dict[str, Any]:
    """``settings`` as thread ids hash them: under the names they had when first saved.

    A solver-debate setting renamed since (the registry line's ``renamed``) is hashed under
    its old spelling, so a rerun after the rename finds the threads it started.
    """
    old = {new: was for was, new in registry.renamed("solver_debate").items()}
    return {old.get(key, key): value for key, value in settings.items()}


@dataclass(frozen=True)
class EvalPlan:
    """What an eval runs: its modes and the settings they share.

    Attributes:
        modes: The modes, in the order they are reported.
        agents: Solvers of the vote and debate modes.
        rounds: Rounds of the debate modes.
        neighbours: Solvers each one hears on the ring.
        parallel: Questions in flight at once.
        model: The model spec's fields (no API key), stored with every thread.
        model_key: What of the model decides its answers (name, endpoint, sampling; for
            the embedded model the GGUF file it serves): part of every thread's id, so
            another model never reads back this one's answers.
    """

    modes: tuple[str, ...]
    agents: int
    rounds: int
    neighbours: int
    parallel: int
    model: Mapping[str, Any]
    model_key: Mapping[str, Any]

    def settings(self, mode: str) -> dict[str, Any]:
        """The solver debate's settings for ``mode``.

        Args:
            mode: The mode.

        Returns:
            The graph factory's keyword arguments.
        """
        return mode_settings(
            mode, agents=self.agents, rounds=self.rounds, neighbours=self.neighbours
        )

    def thread_id(self, mode: str, item: Item) -> str:
        """The thread of ``item`` in ``mode``: the same for the same command and data.

        Args:
            mode: The mode.
            item: The question.

        Returns:
            ``eval-<mode>-<line>-<digest of settings, model, question, choices, gold>``.
        """
        key = {
            "settings": _hashed(self.settings(mode)),
            "model": dict(self.model_key),
            "question": item.question,
            "choices": list(item.choices),
            "gold": item.gold,
        }
        digest = hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:10]
        return f"{THREAD_PREFIX}-{mode}-{item.line}-{digest}"


STARTED = "started"
RESUMED = "resumed"
FINISHED = "finished"

#: Called with each finished outcome (the progress display).
OnOutcome = Callable[[Outcome], None]


class Evaluation:
    """Runs every question of every mode on the solver debate graph, ``parallel`` at once.

    Args:
        saver: The checkpointer every thread is saved to.
        binding: The model.
        plan: Modes and settings.
        on_outcome: Called as each (question, mode) finishes, fresh or read back.
    """

    def __init__(
        self,
        saver: BaseCheckpointSaver[Any],
        binding: ModelBinding,
        plan: EvalPlan,
        on_outcome: OnOutcome | None = None,
    ) -> None:
        from debategraph.graphs.solver_debate import GRAPH_NAME, build_solver_debate

        self.plan = plan
        self.on_outcome = on_outcome
        self.graphs: dict[str, Graph] = {
            mode: build_solver_debate(binding, **plan.settings(mode)).compile(
                checkpointer=saver, name=GRAPH_NAME
            )
            for mode in plan.modes
        }
        #: How each (question, mode) was found: ``started``, ``resumed`` or ``finished``
        #: (read back from its checkpoint without a model call).
        self.counts = {STARTED: 0, RESUMED: 0, FINISHED: 0}

    async def run(self, items: Sequence[Item]) -> list[Outcome]:
        """Answer every question in every mode; questions run ``parallel`` at once.

        A question's modes run one after another, so ``parallel`` bounds the questions
        in flight and each mode's graph bounds its own calls (its solvers of a round).

        Args:
            items: The questions.

        Returns:
            The outcomes, question by question, in mode order.

        Raises:
            ModelUnavailableError: If the endpoint fails (every thread stays resumable).
        """
        gate = asyncio.Semaphore(self.plan.parallel)

        async def question(item: Item) -> list[Outcome]:
            async with gate:
                return [await self.answer(mode, item) for mode in self.plan.modes]

        tasks = [asyncio.ensure_future(question(item)) for item in items]
        try:
            done = await asyncio.gather(*tasks)
        finally:  # one failure stops the rest (each keeps its saved steps)
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
        return [outcome for outcomes in done for outcome in outcomes]

    async def answer(self, mode: str, item: Item) -> Outcome:
        """One question in one mode: read back if finished, resumed or started if not.

        Args:
            mode: The mode.
            item: The question.

        Returns:
            Its outcome.

        Raises:
            UsageError: If another live process is running the same thread.
            ModelUnavailableError: If the endpoint fails, naming the question and mode.
        """
        try:
            return await self._answer(mode, item)
        except ModelUnavailableError as exc:
            raise ModelUnavailableError(f"line {item.line} in mode {mode}: {exc}") from exc

    async def _answer(self, mode: str, item: Item) -> Outcome:
        from debategraph.graphs.skeleton import recursion_limit
        from debategraph.graphs.solver_debate import GRAPH_NAME

        graph = self.graphs[mode]
        settings = self.plan.settings(mode)
        thread_id = self.plan.thread_id(mode, item)
        config: RunnableConfig = {
            **thread_config(thread_id),
            "recursion_limit": recursion_limit(graph),
            "max_concurrency": settings["agents"],
            "metadata": RunInfo(GRAPH_NAME, settings, dict(self.plan.model)).to_metadata(),
        }
        snap = await graph.aget_state(config)
        if not snap.values:
            self.counts[STARTED] += 1
            started = time.perf_counter()
            values = await graph.ainvoke(_graph_input(item), config, durability="sync")
            wall_s = time.perf_counter() - started
        else:
            # Not ``snap.next``: a run stopped after a step's tasks all saved their
            # writes has tasks left to apply, and no ``next``.
            if snap.tasks:
                pid = writer_elsewhere(snap.metadata)
                if pid is not None:
                    raise UsageError(
                        f"thread {thread_id} is being run by process {pid} (the same eval "
                        "running twice?): wait for it, or stop it, then rerun"
                    )
                self.counts[RESUMED] += 1
                await graph.ainvoke(None, config, durability="sync")
                snap = await graph.aget_state(config)
            else:
                self.counts[FINISHED] += 1
            values = snap.values
            wall_s = await _checkpointed_seconds(graph, config, snap.created_at)
        outcome = _outcome(mode, item, thread_id, values, wall_s)
        if self.on_outcome is not None:
            self.on_outcome(outcome)
        return outcome


def _graph_input(item: Item) -> dict[str, Any]:
    graph_input: dict[str, Any] = {"question": item.question}
    if item.choices:
        graph_input["choices"] = list(item.choices)
    return graph_input


async def _checkpointed_seconds(graph: Graph, config: RunnableConfig, last: str | None) -> float:
    """A thread's wall time from its checkpoints: the first one's time to ``last``.

    For a thread this process did not run from its start (read back, or resumed: then
    the time it lay interrupted counts too). It walks the thread's history, so a fresh
    run is timed by the clock instead.
    """
    first = last
    async for past in graph.aget_state_history(config):
        first = past.created_at or first
    if not first or not last:
        return 0.0
    return max(0.0, (datetime.fromisoformat(last) - datetime.fromisoformat(first)).total_seconds())


def _outcome(
    mode: str, item: Item, thread_id: str, values: Mapping[str, Any], wall_s: float
) -> Outcome:
    usage = Usage.coerce(values.get("usage"))
    answer = values.get("answer")
    answer = str(answer) if answer is not None else None
    return Outcome(
        mode=mode,
        line=item.line,
        gold=item.gold,
        answer=answer,
        correct=answer == item.gold,
        prompt_tokens=usage.prompt_tokens,
        completion_tokens=usage.completion_tokens,
        calls=usage.calls,
        wall_s=round(wall_s, 3),
        thread_id=thread_id,
        usage_by_agent=_usage_json(values.get("usage_by_agent")),
        usage_by_model=_usage_json(values.get("usage_by_model")),
    )


def _usage_json(raw: Any) -> str:
    """``{name: [prompt tokens, completion tokens, calls, model seconds]}`` as JSON text."""
    table = raw if isinstance(raw, Mapping) else {}
    rows: dict[str, list[float]] = {}
    for name, value in table.items():
        u = Usage.coerce(value)
        rows[str(name)] = [u.prompt_tokens, u.completion_tokens, u.calls, round(u.latency_s, 3)]
    return json.dumps(rows, separators=(",", ":"))
