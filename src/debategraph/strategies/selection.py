"""Selection strategies: who speaks next in a shared conversation.

A strategy is a small object with :meth:`Selector.select_steps`: given a
:class:`SelectionContext` it returns (as steps a node body ``yield from`` s, so a model
call runs on either path) a :class:`Selection` that names the agent and how it was
chosen. Strategies compose: :class:`MaxInARow` guards any other.

- :class:`Sequential`: round-robin in roster order, from an optional initial agent.
- :class:`LLMSelector`: a model picks from the allowed names, reading a reduced
  history; its answer is read forgivingly (:func:`~debategraph.strategies.names.match_speaker`);
  an unknown or empty answer is asked again once, then the next agent in sequence speaks
  and the fallback is recorded.
- :class:`Rules`: a function of the history picks (``None``: the next in sequence).
- :class:`MaxInARow`: no agent speaks more than ``k`` turns in a row.
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol

from debategraph.state.records import Turn, Usage
from debategraph.strategies.names import match_speaker
from debategraph.words import plural

if TYPE_CHECKING:
    from langchain_core.messages import BaseMessage

    from debategraph.models.calls import TextResult

#: How a speaker was chosen (recorded with each selection).
Method = Literal["sequential", "initial", "llm", "rules", "fallback", "guard", "named"]

#: A text call for a selector: ``say(messages)`` -> steps of a
#: :class:`~debategraph.models.TextResult` (the chat's node supplies it).
Say = Callable[[list["BaseMessage"]], Generator[Any, Any, "TextResult"]]

#: Messages an LLM selector reads by default (a reduced history).
SELECTOR_KEEP_LAST = 6
#: Characters of each message an LLM selector reads.
SELECTOR_MESSAGE_CHARS = 300


@dataclass(frozen=True)
class SelectionContext:
    """What a strategy sees when it picks the next speaker.

    Attributes:
        names: The agents, in roster order.
        descriptions: Each agent's instructions (for a model that picks).
        turns: The conversation so far (agents' and a human's messages), oldest first.
            Tool-call records (``role="tool"``) are no messages: the chat leaves them
            out, and a strategy given them skips them (they are no speaker's turn).
        task: What the chat is about.
    """

    names: tuple[str, ...]
    turns: Sequence[Turn] = ()
    descriptions: tuple[str, ...] = ()
    task: str = ""

    @property
    def last_speaker(self) -> str | None:
        """The agent who spoke last (a human's interjections do not count)."""
        for turn in reversed(self.turns):
            if turn.role == "agent" and turn.agent in self.names:
                return turn.agent
        return None

    def after(self, name: str | None) -> str:
        """The agent after ``name`` in roster order (the first when ``name`` is ``None``).

        Args:
            name: An agent, or ``None``.

        Returns:
            The next agent.
        """
        if name is None or name not in self.names:
            return self.names[0]
        return self.names[(self.names.index(name) + 1) % len(self.names)]

    def in_a_row(self) -> int:
        """How many of the latest agent turns the last speaker made in a row."""
        last = self.last_speaker
        count = 0
        for turn in reversed(self.turns):
            if turn.role != "agent":
                continue
            if turn.agent != last:
                break
            count += 1
        return count


@dataclass(frozen=True)
class Selection:
    """Who speaks next and how that was decided.

    Attributes:
        agent: The next speaker.
        method: How it was chosen (:data:`Method`).
        answer: What a model answered, if one was asked (the last answer).
        note: Why a fallback or a guard stepped in, if one did.
        usage: Tokens of the model calls made to choose.
    """

    agent: str
    method: Method
    answer: str | None = None
    note: str | None = None
    usage: Usage = field(default_factory=Usage)


class Selector(Protocol):
    """A selection strategy."""

    def select_steps(
        self, context: SelectionContext, say: Say | None = None
    ) -> Generator[Any, Any, Selection]:
        """Pick the next speaker, as steps (a model call, if any, is yielded).

        Args:
            context: The conversation and the agents.
            say: Makes a text call (strategies that ask a model need it).

        Returns:
            The steps; they return the selection.
        """
        ...

    def describe(self) -> str:
        """The strategy in a few words."""
        ...


def _initial(context: SelectionContext, initial: str | None) -> Selection | None:
    """The initial agent's selection on the chat's first turn, if one is set."""
    if initial is None or context.last_speaker is not None:
        return None
    return Selection(initial, "initial")


def check_initial(initial: str | None, names: Sequence[str]) -> str | None:
    """The initial agent's name as the roster spells it.

    Args:
        initial: The name given (case-insensitive), or ``None``.
        names: The agents.

    Returns:
        The agent's name, or ``None``.

    Raises:
        ValueError: If no agent has that name.
    """
    if initial is None:
        return None
    lowered = {n.lower(): n for n in names}
    found = lowered.get(initial.strip().lower())
    if found is None:
        raise ValueError(
            f"initial agent {initial!r} is not an agent of this chat: use one of {', '.join(names)}"
        )
    return found


@dataclass(frozen=True)
class Sequential:
    """Round-robin in roster order, starting with ``initial`` (default: the first agent)."""

    initial: str | None = None

    def select_steps(  # noqa: D102
        self, context: SelectionContext, say: Say | None = None
    ) -> Generator[Any, Any, Selection]:
        return (yield from _done(self.pick(context)))

    def pick(self, context: SelectionContext) -> Selection:
        """The next agent in sequence (no call).

        Args:
            context: The conversation and the agents.

        Returns:
            The selection.
        """
        first = _initial(context, self.initial)
        return first or Selection(context.after(context.last_speaker), "sequential")

    def describe(self) -> str:  # noqa: D102
        return "sequential" + (f" from {self.initial}" if self.initial else "")


@dataclass(frozen=True)
class Rules:
    """A function of the conversation picks (``None`` or an unknown name: next in sequence).

    Attributes:
        rule: ``rule(context) -> name | None``.
        initial: The first turn's agent, if set.
    """

    rule: Callable[[SelectionContext], str | None]
    initial: str | None = None

    def select_steps(  # noqa: D102
        self, context: SelectionContext, say: Say | None = None
    ) -> Generator[Any, Any, Selection]:
        first = _initial(context, self.initial)
        if first is not None:
            return (yield from _done(first))
        picked = self.rule(context)
        if picked in context.names:
            return Selection(str(picked), "rules")
        fallback = context.after(context.last_speaker)
        note = f"rule picked {picked!r}, not an agent: {fallback} (next in sequence)"
        return (yield from _done(Selection(fallback, "fallback", note=note)))

    def describe(self) -> str:  # noqa: D102
        return f"rules ({getattr(self.rule, '__name__', 'a function')})"


@dataclass(frozen=True)
class LLMSelector:
    """A model picks the next speaker from the allowed names, reading a reduced history.

    Attributes:
        initial: The first turn's agent, if set (no call then).
        keep_last: Messages the model reads.
        retries: Times an unknown or empty answer is asked again before the fallback.
    """

    initial: str | None = None
    keep_last: int = SELECTOR_KEEP_LAST
    retries: int = 1

    def select_steps(  # noqa: D102
        self, context: SelectionContext, say: Say | None = None
    ) -> Generator[Any, Any, Selection]:
        first = _initial(context, self.initial)
        if first is not None or say is None:
            return (yield from _done(first or Sequential().pick(context)))
        messages = selector_prompt(context, self.keep_last)
        usage = Usage()
        answer = ""
        for _ in range(1 + max(0, self.retries)):
            result = yield from say(messages)
            usage = usage + result.usage
            answer = result.text.strip()
            found = match_speaker(answer, context.names)
            if found is not None:
                return Selection(found, "llm", answer=answer, usage=usage)
            messages = [*messages, *_correction(answer, context.names)]
        fallback = context.after(context.last_speaker)
        note = f"selector answered {_short(answer)!r}, not an agent: {fallback} (next in sequence)"
        return Selection(fallback, "fallback", answer=answer, note=note, usage=usage)

    def describe(self) -> str:  # noqa: D102
        return "llm" + (f" from {self.initial}" if self.initial else "")


@dataclass(frozen=True)
class MaxInARow:
    """Guards another strategy: no agent speaks more than ``k`` turns in a row.

    When the inner strategy picks the agent who already spoke the last ``k`` turns, the
    next agent in sequence speaks instead, and the guard is recorded.
    """

    inner: Selector
    k: int

    def __post_init__(self) -> None:
        if self.k < 1:
            raise ValueError(f"max in a row must be at least 1, got {self.k}")

    def select_steps(  # noqa: D102
        self, context: SelectionContext, say: Say | None = None
    ) -> Generator[Any, Any, Selection]:
        chosen = yield from self.inner.select_steps(context, say)
        if chosen.agent != context.last_speaker or context.in_a_row() < self.k:
            return chosen
        instead = context.after(chosen.agent)
        note = (
            f"{chosen.agent} spoke {plural(self.k, 'turn')} in a row: {instead} (next in sequence)"
        )
        return Selection(instead, "guard", chosen.answer, note, chosen.usage)

    def describe(self) -> str:  # noqa: D102
        return f"{self.inner.describe()}, at most {self.k} in a row"


SELECTION_NAMES: tuple[str, ...] = ("sequential", "llm")


def make_selector(
    selection: str | Selector, names: Sequence[str], initial: str | None, max_in_a_row: int | None
) -> Selector:
    """The strategy a chat runs: by name or given, guarded by ``max_in_a_row``.

    Args:
        selection: ``sequential``, ``llm`` or a :class:`Selector`.
        names: The agents.
        initial: The first speaker (for a strategy given by name).
        max_in_a_row: Most turns one agent speaks in a row (``None``: no guard).

    Returns:
        The strategy.

    Raises:
        ValueError: On an unknown name or initial agent, or ``max_in_a_row`` < 1.
    """
    first = check_initial(initial, names)
    if isinstance(selection, str):
        if selection not in SELECTION_NAMES:
            raise ValueError(
                f"selection {selection!r} is not known: use {' or '.join(SELECTION_NAMES)}"
            )
        selector: Selector = Sequential(first) if selection == "sequential" else LLMSelector(first)
    else:
        selector = selection
    return selector if max_in_a_row is None else MaxInARow(selector, max_in_a_row)


def selector_prompt(context: SelectionContext, keep_last: int) -> list[BaseMessage]:
    """What a model that picks the next speaker reads.

    Args:
        context: The conversation and the agents.
        keep_last: How many of the latest messages it reads.

    Returns:
        The prompt.
    """
    from langchain_core.messages import HumanMessage, SystemMessage

    from debategraph.prompts import SELECTOR_SYSTEM, SELECTOR_TASK

    roster = "\n".join(
        f"- {name}: {desc}" if desc else f"- {name}"
        for name, desc in zip(
            context.names, context.descriptions or ("",) * len(context.names), strict=False
        )
    )
    said = [t for t in context.turns if t.role != "tool"]
    recent = said[-keep_last:] if keep_last > 0 else said
    lines = "\n".join(f"{t.agent}: {_short(t.content, SELECTOR_MESSAGE_CHARS)}" for t in recent)
    return [
        SystemMessage(content=SELECTOR_SYSTEM.format(roster=roster)),
        HumanMessage(
            content=SELECTOR_TASK.format(
                task=context.task,
                conversation=lines or "(nobody has spoken yet)",
                names=", ".join(context.names),
            )
        ),
    ]


def _correction(answer: str, names: Sequence[str]) -> list[BaseMessage]:
    from langchain_core.messages import AIMessage, HumanMessage

    from debategraph.prompts import SELECTOR_RETRY

    return [
        AIMessage(content=answer or "(nothing)"),
        HumanMessage(content=SELECTOR_RETRY.format(names=", ".join(names))),
    ]


def _short(text: str, limit: int = 80) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _done(selection: Selection) -> Generator[Any, Any, Selection]:
    """Steps that make no call and return ``selection``."""
    return selection
    yield  # a generator without a call


# -- the selection vocabulary as users write it (``selection.llm()``...) -------------------


def sequential(initial: str | None = None) -> Sequential:
    """Round-robin in roster order, from ``initial`` (default: the first agent).

    Args:
        initial: The first speaker.

    Returns:
        The strategy.
    """
    return Sequential(initial)


def llm(
    initial: str | None = None, *, keep_last: int = SELECTOR_KEEP_LAST, retries: int = 1
) -> LLMSelector:
    """A model picks each speaker from the names, reading the latest ``keep_last`` messages.

    Args:
        initial: The first speaker (no call for the first turn).
        keep_last: Messages the model reads.
        retries: Times an unknown or empty answer is asked again before the fallback.

    Returns:
        The strategy.
    """
    return LLMSelector(initial, keep_last, retries)


def rules(rule: Callable[[SelectionContext], str | None], initial: str | None = None) -> Rules:
    """A function of the conversation picks each speaker.

    Args:
        rule: ``rule(context) -> name | None`` (``None``: the next in sequence).
        initial: The first speaker.

    Returns:
        The strategy.
    """
    return Rules(rule, initial)


def max_in_a_row(inner: Selector, k: int) -> MaxInARow:
    """Guard ``inner``: no agent speaks more than ``k`` turns in a row.

    Args:
        inner: The strategy guarded.
        k: Most turns in a row (>= 1).

    Returns:
        The guarded strategy.
    """
    return MaxInARow(inner, k)
