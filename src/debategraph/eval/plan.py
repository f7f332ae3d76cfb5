"""An eval's plan: its modes, the settings they share, its judges, its threads' ids.

A question's thread id is derived from what decides its answer (the mode's settings, the
model, the question and its gold answer), so rerunning the same command finds the same
threads. Decision protocols are no part of it: they are applied to the finished thread
(:mod:`~debategraph.eval.verdicts`). :mod:`~debategraph.eval.options` builds a plan from
the ``eval`` command's options.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from debategraph import registry
from debategraph.errors import UsageError
from debategraph.eval.modes import DEFAULT_AGREE, SINGLE, RosterMode, is_debate, mode_settings
from debategraph.eval.records import Item
from debategraph.state.records import AgentSpec
from debategraph.strategies import JUDGE, PLURALITY, DecisionProtocol

if TYPE_CHECKING:
    from debategraph.models.probe import ModelList
    from debategraph.models.spec import ModelSpec

#: Prefix of every eval thread's id (``debategraph threads`` lists them beside the rest).
THREAD_PREFIX = "eval"
#: The protocol every mode is reported under (its own row, labelled by the mode alone).
PLURALITY_PROTOCOL = DecisionProtocol(PLURALITY)
#: The judge's verdict: one call per thread and judge, which every protocol that falls
#: back to the judge reads too.
JUDGE_PROTOCOL = DecisionProtocol(JUDGE)


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
        agree: ``--agree``: the agreement ``vote-then-debate`` stops on (as written
            without a fallback).
        epochs: ``--epochs``: how many times each question is asked, each asking a
            thread of its own.
    """

    modes: tuple[str, ...]
    agents: int
    rounds: int
    neighbours: int
    parallel: int
    model: Mapping[str, Any]
    model_key: Mapping[str, Any]
    decisions: tuple[DecisionProtocol, ...] = (PLURALITY_PROTOCOL,)
    rosters: Mapping[str, RosterMode] = field(default_factory=dict)
    judge_model: str | None = None
    matched: bool = True
    agree: str = DEFAULT_AGREE
    epochs: int = 1

    def repeated(self, items: Sequence[Item]) -> list[Item]:
        """Each question once per epoch (question by question), its epoch set.

        Args:
            items: The questions.

        Returns:
            ``items`` as they are with one epoch; else each question's epochs 1 to N in turn.
        """
        if self.epochs == 1:
            return list(items)
        return [replace(i, epoch=e) for i in items for e in range(1, self.epochs + 1)]

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
            agree=self.agree,
        )

    def thread_id(self, mode: str, item: Item) -> str:
        """The thread of ``item`` in ``mode``: the same for the same command and data.

        Decision protocols are no part of it: they are applied to the finished thread.

        Args:
            mode: The mode.
            item: The question.

        Returns:
            ``eval-<mode>-<line>-<digest of settings, model, question, choices, gold>``
            (and of the answer kind where it is not a number)
            (a roster mode's settings hold its solvers' records: another file's content
            is another thread); an epoch after the first is ``<line>e<epoch>`` and in the
            digest, so epoch 1 is the thread a run without ``--epochs`` made.
        """
        key: dict[str, Any] = {
            "settings": _hashed(self.settings(mode)),
            "model": dict(self.model_key),
            "question": item.question,
            "choices": list(item.choices),
            "gold": item.gold,
        }
        if item.answer_kind != "number":  # a number's threads keep their ids
            key["answer_kind"] = item.answer_kind
        where = str(item.line)
        if item.epoch != 1:  # the first epoch's threads keep their ids
            key["epoch"] = item.epoch
            where += f"e{item.epoch}"
        digest = hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:10]
        return f"{THREAD_PREFIX}-{mode}-{where}-{digest}"

    def protocols(self, mode: str) -> tuple[DecisionProtocol, ...]:
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
        """``--judge-model``'s spec, with the run's client settings and temperature."""
        from debategraph.models.spec import ModelSpec, parse_model

        spec = parse_model(text, "--judge-model")
        if not isinstance(spec, ModelSpec):
            return spec
        return dataclasses.replace(
            spec,
            timeout_s=spec.timeout_s or self.model.get("timeout_s"),
            max_retries=self.model.get("max_retries", spec.max_retries),
            temperature=self.model.get("temperature", spec.temperature),
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


def judge_specs(plan: EvalPlan) -> list[tuple[str, ModelSpec]]:
    """``(mode, spec)`` of each mode's judge that has a model spec of its own.

    Args:
        plan: The plan.

    Returns:
        The judges the plan consults whose model is a spec (not the run's model, not a
        chat model object), in mode order.
    """
    from debategraph.models.spec import ModelSpec, parse_model

    found = []
    for mode in plan.modes:
        if not plan.needs_judge(mode):
            continue
        model = getattr(plan.judge_record(mode), "model", None)
        own = None if model is None else parse_model(model, f"agent {JUDGE!r}")
        if isinstance(own, ModelSpec):
            found.append((mode, own))
    return found


def check_judge_endpoints(
    plan: EvalPlan, run: ModelSpec, probe: Callable[[str, str | None], ModelList]
) -> None:
    """A judge on an endpoint of its own that does not answer: refused before any call.

    The run's own endpoint is not refused here when it does not answer (its first call
    says so, resumable); a judge elsewhere would otherwise fail only after every solver
    of a question ran.

    Args:
        plan: The plan.
        run: The run's model.
        probe: ``GET {base_url}/models`` with a key (the CLI asks each endpoint once
            per run).

    Raises:
        UsageError: One line naming the mode, its judge's model and what its endpoint said.
    """
    from debategraph.models.spec import same_endpoint

    for mode, own in judge_specs(plan):
        if own.is_local or own.base_url is None:
            continue
        if run.base_url is not None and same_endpoint(own.base_url, run.base_url):
            continue
        found = probe(own.base_url, own.key())
        if not found.ok:
            raise UsageError(
                f"the judge of mode {mode} ({own.label}): {found.detail}; start it, or "
                "give the judge another model"
            )
