"""Running an eval: every question of every mode a checkpointed thread, resumable.

A question's thread id (:meth:`~debategraph.eval.plan.EvalPlan.thread_id`) is derived
from what decides its answer, so rerunning the same command finds the same threads: a
finished one is read back without a model call, an interrupted one resumes from its last
saved step, and only questions never started are started. Each finished thread is
decided under every protocol of its mode (:mod:`~debategraph.eval.verdicts`).

After the listed modes, each debate mode gets a vote of independent samples at its token
budget (``vote@K``, see :func:`~debategraph.eval.budget.matched_k`), run on the same
questions and resumable like any mode. :func:`execute` runs a plan from synchronous
code (the CLI), printing nothing.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from debategraph.checkpoints.threads import RunInfo
from debategraph.errors import DebategraphError, ModelUnavailableError, UsageError
from debategraph.eval.budget import MIN_VOTERS, adjusted_k, matched_k, within_budget
from debategraph.eval.modes import vote_mode
from debategraph.eval.options import DEFAULT_MAX_ERRORS
from debategraph.eval.plan import EvalPlan
from debategraph.eval.records import Item, Matched, Outcome
from debategraph.eval.threads import Thread, ThreadCost, checkpointed_seconds
from debategraph.eval.verdicts import Verdicts
from debategraph.models.money import Budget, spending
from debategraph.runs.thread import Run, run_on_loop
from debategraph.words import plural

if TYPE_CHECKING:
    from langgraph.checkpoint.base import BaseCheckpointSaver

    from debategraph.models.spec import ModelSpec

STARTED = "started"
RESUMED = "resumed"
FINISHED = "finished"

#: Called with each thread's plurality outcome as the thread is done (the progress
#: display); a matched vote's threads come after the listed modes'.
OnOutcome = Callable[[Outcome], None]


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
        spec: The model: each run's context (bound at its first call, so a thread read
            back starts no model, nor the embedded server).
        plan: Modes and settings.
        on_outcome: Called as each (question, mode) finishes, fresh or read back, with
            its plurality outcome.
        savers: A question's own checkpointer, by its line, where shards kept their
            own databases (``eval report``); the others use ``saver``.
        max_errors: The share of a mode's questions that may error (their calls keep
            failing after the retries and the patience) before the eval stops; each is
            recorded ``errored`` and the eval goes on until then.
    """

    def __init__(
        self,
        saver: BaseCheckpointSaver[Any],
        spec: ModelSpec,
        plan: EvalPlan,
        on_outcome: OnOutcome | None = None,
        savers: Mapping[int, BaseCheckpointSaver[Any]] | None = None,
        max_errors: float = DEFAULT_MAX_ERRORS,
    ) -> None:
        self.saver = saver
        self.max_errors = max_errors
        #: Each mode's errored questions, and how many a mode may have before it stops.
        self.errored: dict[str, int] = {}
        self._error_budget = 0
        self.savers = dict(savers or {})
        self.spec = spec
        self.plan = plan
        self.on_outcome = on_outcome
        self._runs: dict[tuple[str, int], Run] = {}
        #: Each thread's outcome rows, and the judge calls made.
        self.verdicts = Verdicts(plan, spec)
        #: How each (question, mode) was found: ``started``, ``resumed`` or ``finished``
        #: (read back from its checkpoint without a model call).
        self.counts = {STARTED: 0, RESUMED: 0, FINISHED: 0}
        #: Each mode's threads' costs, by question line and epoch.
        self.costs: dict[str, dict[tuple[int, int], ThreadCost]] = {}

    def run_of(self, mode: str, item: Item | None = None) -> Run:
        """The run of ``mode`` on a question's checkpointer (its graph compiled once).

        Args:
            mode: The mode.
            item: The question (its own checkpointer where ``savers`` names one).

        Returns:
            The run.
        """
        saver = self.saver if item is None else self.savers.get(item.line, self.saver)
        key = (mode, id(saver))
        if key not in self._runs:
            from debategraph.graphs.solver_debate import GRAPH_NAME

            settings = self.plan.settings(mode)
            info = RunInfo(GRAPH_NAME, settings, dict(self.plan.model))
            self._runs[key] = Run(
                saver, info, model=self.spec, max_concurrency=_solver_count(settings)
            )
        return self._runs[key]

    async def evaluate(self, items: Sequence[Item]) -> EvalRun:
        """Every mode of the plan on ``items``, then each debate's matched-budget vote.

        With ``--epochs N`` each question is asked N times, each asking a thread of its
        own (:meth:`~debategraph.eval.plan.EvalPlan.repeated`).

        Args:
            items: The questions.

        Returns:
            The outcomes, the thread counts and the matched votes.

        Raises:
            ModelUnavailableError: If an endpoint fails (every thread stays resumable).
        """
        items = self.plan.repeated(items)
        self._error_budget = math.floor(self.max_errors * len(items) + 1e-9)
        outcomes = await self.run(items)
        matched, votes = await self.match_budgets(items)
        return EvalRun(outcomes + votes, dict(self.counts), matched, self.verdicts.calls)

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
            ModelUnavailableError: If an endpoint fails (a solver's or the judge's)
                on more questions than ``max_errors`` allows, naming the question and
                mode. Below that, the question is returned ``errored`` (its thread
                stays resumable: the next run tries it again).
        """
        try:
            return await self._answer(mode, item)
        except ModelUnavailableError as exc:
            where = f"line {item.line} in mode {mode}: {exc}"
            errored = self.errored[mode] = self.errored.get(mode, 0) + 1
            if errored > self._error_budget:
                raise ModelUnavailableError(
                    f"{where} ({plural(errored, 'question')} errored in {mode}, more than "
                    f"--max-errors {self.max_errors:g} allows)"
                ) from exc
            rows = [
                Outcome(
                    mode, item.line, item.gold, None, False, 0, 0, 0, 0.0,
                    self.plan.thread_id(mode, item), decision=protocol.spec, error=str(exc),
                    subject=item.subject, epoch=item.epoch,
                )
                for protocol in self.plan.protocols(mode)
            ]  # fmt: skip
            if self.on_outcome is not None:
                self.on_outcome(rows[0])
            return rows

    async def _answer(self, mode: str, item: Item) -> list[Outcome]:
        run = self.run_of(mode, item)
        thread_id = self.plan.thread_id(mode, item)
        config = run.config(thread_id)
        done = await run.complete(thread_id, _graph_input(item))
        self.counts[done.found] += 1
        values = done.values
        wall_s = done.wall_s
        if wall_s is None:
            wall_s = await checkpointed_seconds(run.graph, config)
        graph = run.graph
        thread = Thread(mode, item, thread_id, values, wall_s)
        rows = await self.verdicts.rows(thread, graph, config)
        self.costs.setdefault(mode, {})[(item.line, item.epoch)] = thread.cost()
        if self.on_outcome is not None:
            self.on_outcome(rows[0])
        return rows

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


def _solver_count(settings: Mapping[str, Any]) -> int:
    agents = settings["agents"]
    return agents if isinstance(agents, int) else len(agents)


def _graph_input(item: Item) -> dict[str, Any]:
    graph_input: dict[str, Any] = {"question": item.question}
    if item.choices:
        graph_input["choices"] = list(item.choices)
    if item.answer_kind != "number":
        graph_input["answer_kind"] = item.answer_kind
    return graph_input


def report_labels(plan: EvalPlan, run: EvalRun) -> list[str]:
    """The row labels in report order: the plan's modes, then the matched votes.

    Args:
        plan: The plan.
        run: What the run found.

    Returns:
        The labels (a mode brings its protocol rows along).
    """
    return [*plan.modes, *dict.fromkeys(m.vote_mode for m in run.matched)]


def run_spec(plan: EvalPlan, spec: ModelSpec) -> ModelSpec:
    """The model as the run calls it: the embedded model's slots fitted to the run.

    The embedded model gets a slot for each call the plan makes at once (its questions
    in flight times its largest mode's solvers), at most its memory's limit and at most
    the cores it decodes on: on 2 cores, 12 slots made each call six times slower, until
    one ran past its timeout. Any other model is returned as it is.

    Args:
        plan: The plan.
        spec: The run's model.

    Returns:
        The spec, its slots set where it is the embedded model.
    """
    if not spec.is_local:
        return spec
    from debategraph.local import check_gguf, resolve_gguf, slot_limit, usable_cores

    solvers = [plan.agents, *(len(r.solvers) for r in plan.rosters.values())]
    wanted = plan.parallel * max(solvers)
    limit = min(slot_limit(check_gguf(resolve_gguf(spec.model))), usable_cores())
    return replace(spec, slots=max(1, min(wanted, limit)))


@contextlib.contextmanager
def calls_at_once(spec: ModelSpec) -> Iterator[None]:
    """Cap the process's model calls in flight at the embedded model's slots, for a run.

    A call queued inside the server would wait out its own timeout; queued here, it
    waits before its clock starts (:func:`~debategraph.models.limits.set_call_limit`).
    Any other model leaves the cap as it is.

    Args:
        spec: The run's model (:func:`run_spec`'s).

    Yields:
        Nothing: the cap holds inside the ``with`` block.
    """
    from debategraph.models.limits import call_limit, set_call_limit

    if not spec.is_local:
        yield
        return
    before = call_limit()
    set_call_limit(spec.slots)
    try:
        yield
    finally:
        set_call_limit(before)


def resume_hint(db: str) -> str:
    """How to resume an eval that stopped midway, naming its database (no password).

    Args:
        db: The checkpoint database.

    Returns:
        The hint, to end a one-line error.
    """
    from debategraph.checkpoints.savers import redact_url

    return f"rerun the same command to resume (answers so far are saved in {redact_url(db)})"


def execute(
    plan: EvalPlan,
    spec: ModelSpec,
    items: Sequence[Item],
    db: str,
    on_outcome: OnOutcome | None = None,
    *,
    dbs: Mapping[int, str] | None = None,
    max_errors: float = DEFAULT_MAX_ERRORS,
    max_cost: float | None = None,
) -> EvalRun:
    """Run or read back every thread of the plan on ``items``, then the matched votes.

    Prints nothing: ``on_outcome`` sees each thread's plurality outcome as it is done.

    Args:
        plan: The plan.
        spec: The model (the embedded model's slots set).
        items: The questions.
        db: The checkpoint database (SQLite path or Postgres URL).
        on_outcome: Called with each thread's plurality outcome (progress).
        dbs: A question's own database, by its line (shards that kept their own);
            the others use ``db``.
        max_errors: The share of (question, mode) pairs that may error before it stops
            (see :class:`Evaluation`).
        max_cost: The most it may spend on priced calls (``--max-cost``): it stops
            before a call that could pass it (:mod:`debategraph.models.money`).

    Returns:
        The outcomes (one per question, mode and protocol), the thread counts, the
        matched votes and the judge calls made.

    Raises:
        UsageError: If another live process runs one of the threads.
        DebategraphError: If an endpoint, the embedded server or the database fails,
            one line naming the question and how to resume (every answer so far saved).
        KeyboardInterrupt: On Ctrl-C (every answer so far saved).
    """
    from debategraph.checkpoints.savers import open_checkpointer

    resume = resume_hint(db)
    with contextlib.ExitStack() as stack:
        opened: dict[str, BaseCheckpointSaver[Any]] = {}

        def saver(path: str) -> BaseCheckpointSaver[Any]:
            if path not in opened:
                opened[path] = stack.enter_context(open_checkpointer(path))
            return opened[path]

        own = {line: saver(path) for line, path in (dbs or {}).items()}
        evaluation = Evaluation(
            saver(db), spec, plan, on_outcome, savers=own, max_errors=max_errors
        )
        budget = None if max_cost is None else Budget(max_cost)
        try:
            with spending(budget):
                return run_on_loop(evaluation.evaluate(items))
        except UsageError:
            raise
        except DebategraphError as exc:  # an endpoint or the embedded server failed
            raise type(exc)(f"{exc}; {resume}") from exc
        except _run_failures() as exc:  # the database, or a model reply nothing could read
            text = " ".join(str(exc).split())[:300]
            raise DebategraphError(f"{type(exc).__name__}: {text}; {resume}") from exc


def _run_failures() -> tuple[type[Exception], ...]:
    """What else may stop a long eval midway (each question's saved steps stay)."""
    import sqlite3

    import openai
    from langgraph.errors import GraphRecursionError

    kinds: list[type[Exception]] = [sqlite3.Error, GraphRecursionError, openai.OpenAIError]
    try:
        import psycopg
    except ImportError:  # the postgres extra is not installed
        return tuple(kinds)
    return (*kinds, psycopg.Error)
