"""Running an eval: every question of every mode a checkpointed thread, resumable.

A question's thread id is derived from what decides its answer (the mode's settings, the
model, the question and its gold answer), so rerunning the same command finds the same
threads: a finished one is read back without a model call, an interrupted one resumes
from its last saved step, and only questions never started are started.

Each finished thread gives one outcome per decision protocol
(:mod:`debategraph.strategies.decisions`), all applied to its solvers' final answers: a
protocol added later costs no re-run. Only the judge calls a model; its verdict, its
turn and its usage are stored in the thread, so a rerun reads them back.

After the listed modes, each debate mode gets a vote of independent samples at its token
budget (``vote@K``, see :func:`~debategraph.eval.budget.matched_k`), run on the same
questions and resumable like any mode.
"""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import json
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from debategraph import registry
from debategraph.checkpoints.threads import RunInfo, thread_config, wall_time, writer_elsewhere
from debategraph.errors import ModelUnavailableError, UsageError
from debategraph.eval.budget import MIN_VOTERS, adjusted_k, matched_k, within_budget
from debategraph.eval.modes import SINGLE, RosterMode, is_debate, mode_settings, vote_mode
from debategraph.eval.records import Item, Matched, Outcome
from debategraph.state.records import AgentSpec, RoundRecord, Turn, Usage
from debategraph.strategies.decisions import JUDGE, PLURALITY, Protocol, decide, judge_needed

if TYPE_CHECKING:
    from langchain_core.runnables import RunnableConfig
    from langgraph.checkpoint.base import BaseCheckpointSaver
    from langgraph.graph.state import CompiledStateGraph

    from debategraph.models import ModelBinding
    from debategraph.nodes.agent import Agent
    from debategraph.state.solver_debate import Decision

    Graph = CompiledStateGraph[Any, Any, Any, Any]

#: Prefix of every eval thread's id (``debategraph threads`` lists them beside the rest).
THREAD_PREFIX = "eval"
#: The protocol every mode is reported under (its own row, labelled by the mode alone).
PLURALITY_PROTOCOL = Protocol(PLURALITY)
#: The judge's verdict: one call per thread and judge, which every protocol that falls
#: back to the judge reads too.
JUDGE_PROTOCOL = Protocol(JUDGE)


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
        modes: The modes, in the order they are reported (a roster mode by its name).
        agents: Solvers of the vote and debate modes.
        rounds: Rounds of the debate modes.
        neighbours: Solvers each one hears on the ring.
        parallel: Questions in flight at once.
        model: The model spec's fields (no API key), stored with every thread.
        model_key: What of the model decides its answers (name, endpoint, sampling; for
            the embedded model the GGUF file it serves): part of every thread's id, so
            another model never reads back this one's answers.
        decisions: The decision protocols each thread's final answers are decided by
            (one outcome each); plurality, the mode's own row, is always among them.
        rosters: The roster modes (``NAME=AGENTS_FILE``), by name.
        judge_model: ``--judge-model``: the judge's model (a spec string, as an agent's
            ``model``, called with the run's timeout and retries); ``None``: the run's
            model. A roster's ``judge`` entry wins for its mode.
        matched: Whether each debate mode gets its matched-budget vote.
    """

    modes: tuple[str, ...]
    agents: int
    rounds: int
    neighbours: int
    parallel: int
    model: Mapping[str, Any]
    model_key: Mapping[str, Any]
    decisions: tuple[Protocol, ...] = (PLURALITY_PROTOCOL,)
    rosters: Mapping[str, RosterMode] = field(default_factory=dict)
    judge_model: str | None = None
    matched: bool = True

    def settings(self, mode: str) -> dict[str, Any]:
        """The solver debate's settings for ``mode``.

        Args:
            mode: The mode.

        Returns:
            The graph factory's keyword arguments.
        """
        return mode_settings(
            mode,
            agents=self.agents,
            rounds=self.rounds,
            neighbours=self.neighbours,
            roster=self.rosters.get(mode),
        )

    def thread_id(self, mode: str, item: Item) -> str:
        """The thread of ``item`` in ``mode``: the same for the same command and data.

        Decision protocols are no part of it: they are applied to the finished thread.

        Args:
            mode: The mode.
            item: The question.

        Returns:
            ``eval-<mode>-<line>-<digest of settings, model, question, choices, gold>``
            (a roster mode's settings hold its solvers' records: another file's content
            is another thread).
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

    def protocols(self, mode: str) -> tuple[Protocol, ...]:
        """The protocols ``mode`` is reported under: plurality first.

        Args:
            mode: The mode.

        Returns:
            The protocols; ``single`` has only plurality (one answer: nothing to decide).
        """
        if mode == SINGLE:
            return (PLURALITY_PROTOCOL,)
        return (PLURALITY_PROTOCOL, *(p for p in self.decisions if p != PLURALITY_PROTOCOL))

    def judge_record(self, mode: str) -> AgentSpec | str:
        """The judge of ``mode``: its roster's ``judge`` entry, else ``--judge-model``.

        Args:
            mode: The mode.

        Returns:
            The judge's record, or its name alone (the run's model).
        """
        roster = self.rosters.get(mode)
        if roster is not None and roster.judge is not None:
            return AgentSpec.model_validate({**roster.judge, "name": JUDGE})
        if self.judge_model is not None:
            return AgentSpec(name=JUDGE, model=self._judge_spec(self.judge_model))
        return JUDGE

    def _judge_spec(self, text: str) -> Any:
        """``--judge-model``'s spec, with the run's client settings (timeout, retries)."""
        from debategraph.models.spec import ModelSpec, parse_model

        spec = parse_model(text, "--judge-model")
        if not isinstance(spec, ModelSpec):
            return spec
        return dataclasses.replace(
            spec,
            timeout_s=spec.timeout_s or self.model.get("timeout_s"),
            max_retries=self.model.get("max_retries", spec.max_retries),
        )

    def needs_judge(self, mode: str) -> bool:
        """Whether a protocol of ``mode`` may consult the judge.

        Args:
            mode: The mode.

        Returns:
            True if one is ``judge`` or falls back to it.
        """
        return any(p.may_judge for p in self.protocols(mode))

    def debate_modes(self) -> list[str]:
        """The modes that get a matched-budget vote: the debates (with two rounds or more).

        Returns:
            The modes, in plan order; none when ``matched`` is off.
        """
        if not self.matched or self.rounds < 2:
            return []
        return [m for m in self.modes if is_debate(m, self.rosters)]


def check_judges(plan: EvalPlan) -> None:
    """Make each mode's judge once, so a bad judge fails before any question runs.

    Args:
        plan: The plan.

    Raises:
        UsageError: One line naming the mode and what is wrong with its judge (its
            model's key variable unset, tools on a model without tool calls...).
    """
    from debategraph.nodes.agent import agent_of

    for mode in plan.modes:
        if plan.needs_judge(mode):
            try:
                agent_of(plan.judge_record(mode), None, JUDGE)
            except ValueError as exc:
                raise UsageError(f"the judge of mode {mode}: {exc}") from None


STARTED = "started"
RESUMED = "resumed"
FINISHED = "finished"

#: Called with each thread's plurality outcome as the thread is done (the progress
#: display); a matched vote's threads come after the listed modes'.
OnOutcome = Callable[[Outcome], None]


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


@dataclass(frozen=True)
class EvalRun:
    """What an eval found: every outcome, how each thread was found, the matched votes.

    Attributes:
        outcomes: One per question, mode and decision protocol: the listed modes'
            question by question, then the matched votes'.
        counts: Threads ``started``, ``resumed`` and ``finished`` (read back).
        matched: Each debate mode's matched-budget vote.
        judge_calls: Judge calls this run made (a verdict read back makes none).
    """

    outcomes: list[Outcome]
    counts: dict[str, int]
    matched: list[Matched]
    judge_calls: int = 0


class Evaluation:
    """Runs every question of every mode on the solver debate graph, ``parallel`` at once.

    Args:
        saver: The checkpointer every thread is saved to.
        binding: The model.
        plan: Modes and settings.
        on_outcome: Called as each (question, mode) finishes, fresh or read back, with
            its plurality outcome.
        savers: A question's own checkpointer, by its line, where shards kept their
            own databases (``eval report``); the others use ``saver``.
    """

    def __init__(
        self,
        saver: BaseCheckpointSaver[Any],
        binding: ModelBinding,
        plan: EvalPlan,
        on_outcome: OnOutcome | None = None,
        savers: Mapping[int, BaseCheckpointSaver[Any]] | None = None,
    ) -> None:
        self.saver = saver
        self.savers = dict(savers or {})
        self.binding = binding
        self.plan = plan
        self.on_outcome = on_outcome
        self._graphs: dict[tuple[str, int], Graph] = {}
        self._judges: dict[str, tuple[Agent, str, str]] = {}
        #: How each (question, mode) was found: ``started``, ``resumed`` or ``finished``
        #: (read back from its checkpoint without a model call).
        self.counts = {STARTED: 0, RESUMED: 0, FINISHED: 0}
        #: Judge calls made (a stored verdict is read, not asked again).
        self.judge_calls = 0
        #: Each mode's threads' costs, by question line.
        self.costs: dict[str, dict[int, ThreadCost]] = {}

    def graph(self, mode: str, item: Item | None = None) -> Graph:
        """The compiled graph of ``mode`` on a question's checkpointer (built once each).

        Args:
            mode: The mode.
            item: The question (its own checkpointer where ``savers`` names one).

        Returns:
            The graph.
        """
        saver = self.saver if item is None else self.savers.get(item.line, self.saver)
        key = (mode, id(saver))
        if key not in self._graphs:
            from debategraph.graphs.solver_debate import GRAPH_NAME, build_solver_debate

            builder = build_solver_debate(self.binding, **self.plan.settings(mode))
            self._graphs[key] = builder.compile(checkpointer=saver, name=GRAPH_NAME)
        return self._graphs[key]

    async def evaluate(self, items: Sequence[Item]) -> EvalRun:
        """Every mode of the plan on ``items``, then each debate's matched-budget vote.

        Args:
            items: The questions.

        Returns:
            The outcomes, the thread counts and the matched votes.

        Raises:
            ModelUnavailableError: If an endpoint fails (every thread stays resumable).
        """
        outcomes = await self.run(items)
        matched, votes = await self.match_budgets(items)
        return EvalRun(outcomes + votes, dict(self.counts), matched, self.judge_calls)

    async def run(self, items: Sequence[Item], modes: Sequence[str] | None = None) -> list[Outcome]:
        """Answer every question in every mode; questions run ``parallel`` at once.

        A question's modes run one after another, so ``parallel`` bounds the questions
        in flight and each mode's graph bounds its own calls (its solvers of a round).

        Args:
            items: The questions.
            modes: The modes (default: the plan's).

        Returns:
            The outcomes, question by question, in mode order, each mode's protocols in
            order.

        Raises:
            ModelUnavailableError: If the endpoint fails (every thread stays resumable).
        """
        chosen = tuple(self.plan.modes if modes is None else modes)
        gate = asyncio.Semaphore(self.plan.parallel)

        async def question(item: Item) -> list[Outcome]:
            async with gate:
                return [row for mode in chosen for row in await self.answer(mode, item)]

        tasks = [asyncio.ensure_future(question(item)) for item in items]
        try:
            done = await asyncio.gather(*tasks)
        finally:  # one failure stops the rest (each keeps its saved steps)
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
        return [outcome for outcomes in done for outcome in outcomes]

    async def answer(self, mode: str, item: Item) -> list[Outcome]:
        """One question in one mode: read back if finished, resumed or started if not.

        Args:
            mode: The mode.
            item: The question.

        Returns:
            Its outcome under each of the mode's protocols, plurality first.

        Raises:
            UsageError: If another live process is running the same thread.
            ModelUnavailableError: If an endpoint fails (a solver's or the judge's),
                naming the question and mode.
        """
        try:
            return await self._answer(mode, item)
        except ModelUnavailableError as exc:
            raise ModelUnavailableError(f"line {item.line} in mode {mode}: {exc}") from exc

    async def _answer(self, mode: str, item: Item) -> list[Outcome]:
        from debategraph.graphs.solver_debate import GRAPH_NAME

        graph = self.graph(mode, item)
        settings = self.plan.settings(mode)
        thread_id = self.plan.thread_id(mode, item)
        config: RunnableConfig = {
            **thread_config(thread_id),
            "max_concurrency": _solver_count(settings),
            "metadata": RunInfo(GRAPH_NAME, settings, dict(self.plan.model)).to_metadata(),
        }
        snap = await graph.aget_state(config)
        if not snap.values:
            self.counts[STARTED] += 1
            started = time.perf_counter()
            await graph.ainvoke(_graph_input(item), config, durability="sync")
            wall_s = time.perf_counter() - started
            values = (await graph.aget_state(config)).values  # the state: its transcript too
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
            wall_s = await _checkpointed_seconds(graph, config)
        thread = _Thread(mode, item, thread_id, values, wall_s)
        rows = await self._rows(thread, graph, config)
        self.costs.setdefault(mode, {})[item.line] = thread.cost()
        if self.on_outcome is not None:
            self.on_outcome(rows[0])
        return rows

    async def _rows(self, thread: _Thread, graph: Graph, config: RunnableConfig) -> list[Outcome]:
        """The thread's outcome under each protocol of its mode (the judge asked once)."""
        answers, confidences = thread.answers(), thread.confidences()
        verdict: tuple[Decision, Turn | None] | None = None
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

    def _judge(self, mode: str) -> tuple[Agent, str, str]:
        """The judge of ``mode``, its model's label, and the key its verdicts are kept by.

        The key is the label, and for a judge with tools or an agent of its own a digest
        of its record too: a judge given other tools is another judge, asked again.
        """
        if mode not in self._judges:
            from debategraph.nodes.agent import agent_of

            record = self.plan.judge_record(mode)
            agent = agent_of(record, self.binding, JUDGE)
            label = key = agent.label()
            if isinstance(record, AgentSpec) and (record.tools or record.agent is not None):
                dumped = record.model_dump(mode="json", exclude={"name"})
                text = json.dumps(dumped, sort_keys=True, default=str)
                key = f"{label}#{hashlib.sha256(text.encode()).hexdigest()[:10]}"
            self._judges[mode] = (agent, label, key)
        return self._judges[mode]

    async def _verdict(
        self, thread: _Thread, graph: Graph, config: RunnableConfig
    ) -> tuple[Decision, Turn | None]:
        """The judge's pick of the thread's final answers: stored, or asked and stored.

        The verdict, the judge's turn and its usage are written into the finished
        thread (``decisions``, ``transcript``, ``usage``), so a rerun reads them back.
        """
        from debategraph.models.steps import arun_steps
        from debategraph.nodes.messages import RESPOND_NODE
        from debategraph.nodes.solver_debate import decide_steps
        from debategraph.state.base import turn_update

        agent, label, key = self._judge(thread.mode)
        stored = thread.stored_verdict(key)
        if stored is not None:
            return stored, _judge_turn(thread.transcript, label)
        self.judge_calls += 1
        item = thread.item
        decision, records = await arun_steps(
            decide_steps(JUDGE_PROTOCOL, agent, None, item.question, item.choices, thread.finals)
        )
        update: dict[str, Any] = {"decisions": {f"{JUDGE}@{key}": decision}}
        if records:
            update.update(turn_update(*records))
        # Written as the graph's last node: the thread stays finished (nothing next).
        await graph.aupdate_state(config, update, as_node=RESPOND_NODE)
        return decision, _judge_turn(records, decision.judge_model or label)

    async def match_budgets(self, items: Sequence[Item]) -> tuple[list[Matched], list[Outcome]]:
        """Each debate mode's vote of independent samples at its token budget.

        k is the debate's mean total tokens per question over the mean tokens of one
        independent answer (the debate's own round-1 calls), rounded, at least 2. If the
        vote's mean tokens end up outside 10% of the debate's, k is adjusted once by the
        measured ratio and that vote is run instead. Debate modes may share a vote.

        Args:
            items: The questions (the debates' threads are done).

        Returns:
            The matched votes, and their outcomes (each vote's once).

        Raises:
            ModelUnavailableError: If the endpoint fails (every thread stays resumable).
        """
        debates = self.plan.debate_modes()
        if not debates:
            return [], []
        ran: dict[str, list[Outcome]] = {}
        first = {mode: self._first_k(mode) for mode in debates}
        await self._run_votes([vote_mode(k) for k, _ in first.values()], items, ran)
        second: dict[str, int] = {}
        hows: dict[str, str] = {}
        for mode, (k, how) in first.items():
            spent, vote_spent = self._mean_tokens(mode), self._mean_tokens(vote_mode(k))
            how += f"; {vote_mode(k)} used {_tokens_share(vote_spent, spent)}"
            retry = adjusted_k(k, spent, vote_spent)
            if not within_budget(spent, vote_spent) and retry != k:
                second[mode] = retry
                how += (
                    f", outside 10%, so k was adjusted once to round({k} x {spent:.1f} / "
                    f"{vote_spent:.1f}) = {retry}"
                )
            elif not within_budget(spent, vote_spent):
                how += f", outside 10%, and round({k} x {spent:.1f} / {vote_spent:.1f}) is {k}"
            hows[mode] = how
        await self._run_votes([vote_mode(k) for k in second.values()], items, ran)
        matched: list[Matched] = []
        for mode in debates:
            k = second.get(mode, first[mode][0])
            how = hows[mode]
            if mode in second:
                used = _tokens_share(self._mean_tokens(vote_mode(k)), self._mean_tokens(mode))
                how += f": {vote_mode(k)} used {used}"
            matched.append(Matched(mode, vote_mode(k), k, how))
        used_votes = dict.fromkeys(m.vote_mode for m in matched)
        return matched, [row for vote in used_votes for row in ran[vote]]

    def _first_k(self, mode: str) -> tuple[int, str]:
        """A debate's first k, and how it was chosen (one line)."""
        costs = list(self.costs.get(mode, {}).values())
        spent = self._mean_tokens(mode)
        answers = sum(c.first_round_answers for c in costs)
        one = sum(c.first_round_tokens for c in costs) / answers if answers else 0.0
        k = matched_k(spent, one)
        if one:
            ratio = spent / one
            floor = f", at least {MIN_VOTERS}" if round(ratio) < k else ""
            rule = f"ratio {ratio:.2f}, k = {k}{floor}"
        else:
            rule = f"no round-1 tokens recorded, k = {k}"
        how = (
            f"{mode} used {spent:.1f} tokens per question, one independent answer {one:.1f} "
            f"(its round-1 calls, over {answers} answers): {rule}"
        )
        return k, how

    def _mean_tokens(self, mode: str) -> float:
        costs = list(self.costs.get(mode, {}).values())
        return sum(c.tokens for c in costs) / len(costs) if costs else 0.0

    async def _run_votes(
        self, votes: Iterable[str], items: Sequence[Item], ran: dict[str, list[Outcome]]
    ) -> None:
        """Run the votes not run yet (all on the questions at once), into ``ran``."""
        todo = [v for v in dict.fromkeys(votes) if v not in ran]
        if not todo:
            return
        outcomes = await self.run(items, todo)
        for vote in todo:
            ran[vote] = [o for o in outcomes if o.mode == vote]


def _tokens_share(vote_tokens: float, debate_tokens: float) -> str:
    """``123.4 tokens per question (96% of the debate's)``."""
    share = f" ({vote_tokens / debate_tokens:.0%} of the debate's)" if debate_tokens else ""
    return f"{vote_tokens:.1f} tokens per question{share}"


def _with_pick(
    protocol: Protocol,
    answers: Mapping[str, str | None],
    confidences: Mapping[str, float | None],
    verdict: Decision,
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


def _solver_count(settings: Mapping[str, Any]) -> int:
    agents = settings["agents"]
    return agents if isinstance(agents, int) else len(agents)


def _graph_input(item: Item) -> dict[str, Any]:
    graph_input: dict[str, Any] = {"question": item.question}
    if item.choices:
        graph_input["choices"] = list(item.choices)
    return graph_input


async def _checkpointed_seconds(graph: Graph, config: RunnableConfig) -> float:
    """A thread's wall time from its checkpoints: the sum of its runs' spans.

    For a thread this process did not run from its start (read back, or resumed): the
    time it lay stopped between runs does not count, nor the judge's verdict the eval
    added (an update, timed by its call's latency instead). It walks the thread's
    history, so a fresh run is timed by the clock instead.
    """
    stamps = [
        (past.created_at, dict(past.metadata or {}))
        async for past in graph.aget_state_history(config)
    ]
    return wall_time(stamps, {})


class _Thread:
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

    def stored_verdict(self, key: str) -> Decision | None:
        """The verdict of the judge ``key`` (see ``Evaluation._judge``) stored in the thread."""
        from debategraph.state.solver_debate import Decision

        raw = (self.values.get("decisions") or {}).get(f"{JUDGE}@{key}")
        return None if raw is None else Decision.model_validate(raw)

    def _solvers_spend(self) -> _Spend:
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
        return _Spend(total, by_agent, by_model)

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
        return Outcome(
            mode=self.mode,
            line=self.item.line,
            gold=self.item.gold,
            answer=answer,
            correct=answer == self.item.gold,
            prompt_tokens=spend.usage.prompt_tokens,
            completion_tokens=spend.usage.completion_tokens,
            calls=spend.usage.calls,
            wall_s=round(wall_s, 3),
            thread_id=self.thread_id,
            usage_by_agent=_usage_json(spend.by_agent),
            usage_by_model=_usage_json(spend.by_model),
            decision=decision,
            rounds=json.dumps(rounds, separators=(",", ":")),
        )


@dataclass(frozen=True)
class _Spend:
    """Usage in total, per agent and per model."""

    usage: Usage
    by_agent: dict[str, Usage]
    by_model: dict[str, Usage]

    def plus(self, turn: Turn) -> _Spend:
        """This usage plus a turn's, charged to its agent and model."""
        by_agent = {
            **self.by_agent,
            turn.agent: self.by_agent.get(turn.agent, Usage()) + turn.usage,
        }
        by_model = dict(self.by_model)
        if turn.model is not None:
            by_model[turn.model] = by_model.get(turn.model, Usage()) + turn.usage
        return _Spend(self.usage + turn.usage, by_agent, by_model)


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
    )


def _usage_json(raw: Any) -> str:
    """``{name: [prompt tokens, completion tokens, calls, model seconds]}`` as JSON text."""
    rows: dict[str, list[float]] = {}
    for name, u in _usages(raw).items():
        rows[name] = [u.prompt_tokens, u.completion_tokens, u.calls, round(u.latency_s, 3)]
    return json.dumps(rows, separators=(",", ":"))
