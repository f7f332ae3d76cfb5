"""Selection strategies and chat termination conditions, each alone and combined."""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

import pytest

from debategraph.models.calls import CallResult, TextResult
from debategraph.models.steps import run_steps
from debategraph.state.records import Turn, Usage
from debategraph.strategies.names import match_speaker
from debategraph.strategies.selection import (
    LLMSelector,
    MaxInARow,
    Rules,
    SelectionContext,
    Sequential,
    make_selector,
)
from debategraph.strategies.termination import (
    AllOf,
    AnyOf,
    Judgement,
    RoundOutcome,
    all_of,
    any_of,
    check_steps,
    describe_condition,
    external,
    hard_cap,
    has_hard_cap,
    llm,
    max_turns,
    parse_until,
    regex,
    stall,
    timeout,
    token_budget,
)

NAMES = ("Writer", "Reviewer", "Editor")


def said(*pairs: tuple[str, str]) -> list[Turn]:
    """Turns ``(agent, content)``, numbered from 1; ``user`` is a human."""
    return [
        Turn(agent=a, content=c, stage="chat", round=i, role="user" if a == "user" else "agent")
        for i, (a, c) in enumerate(pairs, start=1)
    ]


def context(*pairs: tuple[str, str]) -> SelectionContext:
    return SelectionContext(names=NAMES, turns=said(*pairs), task="Write a haiku")


class Answers:
    """A text call that answers from a list and records each prompt."""

    def __init__(self, *answers: str) -> None:
        self.answers = list(answers)
        self.prompts: list[Any] = []

    def __call__(self, messages: list[Any]) -> Generator[Any, Any, TextResult]:
        self.prompts.append(messages)
        return TextResult(self.answers.pop(0), Usage(prompt_tokens=5, calls=1), 1)
        yield  # no model: answered at once


def pick(selector: Any, ctx: SelectionContext, say: Any = None) -> Any:
    return run_steps(selector.select_steps(ctx, say))


# -- selection -------------------------------------------------------------------------


def test_sequential_is_round_robin_from_the_initial_agent() -> None:
    assert pick(Sequential(), context()).agent == "Writer"
    assert pick(Sequential("Editor"), context()).method == "initial"
    assert pick(Sequential("Editor"), context()).agent == "Editor"
    assert pick(Sequential(), context(("Writer", "a"))).agent == "Reviewer"
    assert pick(Sequential(), context(("Editor", "a"))).agent == "Writer"
    # a human's interjection does not move the turn on
    assert pick(Sequential(), context(("Reviewer", "a"), ("user", "hi"))).agent == "Editor"


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        ("Reviewer", "Reviewer"),
        ("  reviewer. ", "Reviewer"),
        ("RE-VIEWER", "Reviewer"),
        ("rev", "Reviewer"),
        ("I think the Editor should speak next.", "Editor"),
        ("Reviwer", "Reviewer"),
        ("Nobody", None),
        ("", None),
        ("Writer or Editor", None),
    ],
)
def test_names_are_read_forgivingly(answer: str, expected: str | None) -> None:
    assert match_speaker(answer, NAMES) == expected


def test_llm_selector_reads_the_name_and_a_reduced_history() -> None:
    say = Answers("the reviewer")
    history = [("Writer", f"draft {i}") for i in range(10)]
    chosen = pick(LLMSelector(keep_last=3), context(*history), say)
    assert (chosen.agent, chosen.method, chosen.usage.calls) == ("Reviewer", "llm", 1)
    prompt = "\n".join(str(m.content) for m in say.prompts[0])
    assert "draft 9" in prompt and "draft 6" not in prompt
    assert "Writer, Reviewer, Editor" in prompt


def test_llm_selector_retries_once_then_falls_back_in_sequence() -> None:
    say = Answers("banana", "Editor")
    chosen = pick(LLMSelector(), context(("Writer", "a")), say)
    assert (chosen.agent, chosen.method, chosen.usage.calls) == ("Editor", "llm", 2)
    assert "not one of the participants" in str(say.prompts[1][-1].content)

    say = Answers("banana", "")
    chosen = pick(LLMSelector(), context(("Writer", "a")), say)
    assert (chosen.agent, chosen.method) == ("Reviewer", "fallback")
    assert chosen.note is not None and "Reviewer (next in sequence)" in chosen.note
    assert len(say.prompts) == 2  # asked twice, never looping


def test_llm_selector_initial_agent_makes_no_call() -> None:
    say = Answers()
    assert pick(LLMSelector("Editor"), context(), say).agent == "Editor"
    assert say.prompts == []


def test_rules_pick_from_the_history() -> None:
    def after_writer_the_editor(ctx: SelectionContext) -> str | None:
        return "Editor" if ctx.last_speaker == "Writer" else None

    rules = Rules(after_writer_the_editor)
    assert pick(rules, context(("Writer", "a"))).agent == "Editor"
    fallback = pick(rules, context(("Editor", "a")))
    assert (fallback.agent, fallback.method) == ("Writer", "fallback")


def test_guard_stops_an_agent_speaking_more_than_k_in_a_row() -> None:
    always_writer = Rules(lambda ctx: "Writer")
    guarded = MaxInARow(always_writer, 2)
    assert pick(guarded, context(("Writer", "a"))).agent == "Writer"
    chosen = pick(guarded, context(("Writer", "a"), ("Writer", "b")))
    assert (chosen.agent, chosen.method) == ("Reviewer", "guard")


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"selection": "random"}, "selection 'random' is not known"),
        ({"initial": "Nobody"}, "initial agent 'Nobody' is not an agent"),
        ({"max_in_a_row": 0}, "max in a row must be at least 1"),
    ],
)
def test_bad_selection_settings(kwargs: dict[str, Any], message: str) -> None:
    args: dict[str, Any] = {"selection": "sequential", "initial": None, "max_in_a_row": None}
    args.update(kwargs)
    with pytest.raises(ValueError, match=message):
        make_selector(args["selection"], NAMES, args["initial"], args["max_in_a_row"])


# -- termination -----------------------------------------------------------------------


def outcome(*pairs: tuple[str, str], **kwargs: Any) -> RoundOutcome:
    turns = said(*pairs)
    return RoundOutcome(round=kwargs.pop("round", len(turns)), turns=turns, **kwargs)


def check(condition: Any, out: RoundOutcome, ask: Any = None) -> Any:
    return run_steps(check_steps(condition, out, ask))


def judge(done: bool, log: list[Any]) -> Any:
    def ask(schema: type[Any], messages: list[Any]) -> Generator[Any, Any, CallResult[Any]]:
        log.append(messages)
        return CallResult(Judgement(done=done, reason="approved as is"), Usage(calls=1), 1)
        yield

    return ask


def test_each_condition_fires_with_its_reason() -> None:
    assert check(max_turns(3), outcome(round=3)).reason == "max_turns"
    assert check(max_turns(3), outcome(round=2)) is None
    assert check(token_budget(100), outcome(usage=Usage(prompt_tokens=100))).reason == "budget"
    assert check(timeout(5), outcome(elapsed_s=5.0)).reason == "time_limit"
    assert check(stall(2), outcome(stale=2)).reason == "stalled"
    assert check(stall(2), outcome(stale=1)) is None
    assert check(external(), outcome(stop_requested=True)).reason == "stopped"
    flag = {"stop": False}
    in_process = external(lambda: flag["stop"])
    assert check(in_process, outcome()) is None
    flag["stop"] = True
    assert check(in_process, outcome()).reason == "stopped"


def test_regex_reads_the_last_message_of_the_given_agents_only() -> None:
    approved = regex(r"\bAPPROVED\b", "Reviewer")
    fired = check(approved, outcome(("Writer", "draft"), ("Reviewer", "APPROVED")))
    assert fired.reason == "matched" and "Reviewer" in fired.detail
    assert check(approved, outcome(("Writer", "APPROVED"))) is None
    assert check(approved, outcome(("Reviewer", "APPROVED"), ("user", "hm"))) is None
    assert check(regex("APPROVED"), outcome(("Writer", "APPROVED"))) is not None


def test_regex_that_does_not_compile_is_one_line() -> None:
    with pytest.raises(ValueError, match=r"termination regex '\(' does not compile"):
        regex("(")


def test_llm_judge_is_asked_only_after_its_agents() -> None:
    log: list[Any] = []
    approval = llm("Has the reviewer approved?", "Reviewer", keep_last=2)
    assert check(approval, outcome(("Writer", "draft")), judge(True, log)) is None
    assert log == []
    fired = check(
        approval, outcome(("Writer", "d1"), ("Writer", "d2"), ("Reviewer", "ok")), judge(True, log)
    )
    assert fired.reason == "judged" and "approved as is" in fired.detail
    prompt = str(log[0][-1].content)
    assert "d2" in prompt and "d1" not in prompt  # a reduced history
    assert check(approval, outcome(("Reviewer", "no")), judge(False, log)) is None


def test_combinations_any_and_all() -> None:
    either = regex("DONE") | max_turns(4)
    assert isinstance(either, AnyOf) and len(either.conditions) == 2
    assert check(either, outcome(("Writer", "DONE"))).reason == "matched"
    assert check(either, outcome(("Writer", "x"), round=4)).reason == "max_turns"
    both = regex("DONE") & token_budget(10)
    assert isinstance(both, AllOf)
    assert check(both, outcome(("Writer", "DONE"))) is None
    fired = check(both, outcome(("Writer", "DONE"), usage=Usage(prompt_tokens=10)))
    assert fired.reason == "matched" and " and " in fired.detail
    nested = any_of(regex("A"), any_of(regex("B"), max_turns(2)))
    assert len(nested.conditions) == 3
    assert all_of(regex("A")).conditions == (regex("A"),)


def test_combinations_fire_and_read_as_their_parts_joined() -> None:
    """``fired``, ``reason`` and the words of ``|`` and ``&`` themselves (no model judge)."""
    cap, match = max_turns(4), regex("DONE")
    either, both = match | cap, match & cap
    capped = outcome(("Writer", "x"), round=4)
    assert either.fired(capped) and not both.fired(capped)
    assert both.fired(outcome(("Writer", "DONE"), round=4))
    assert not either.fired(outcome(("Writer", "x"), round=3))
    assert either.reason == both.reason == "matched"  # the first part's
    words = (describe_condition(match), describe_condition(cap))
    assert describe_condition(either) == " or ".join(words)
    assert describe_condition(both) == " and ".join(words)
    assert any_of(cap) != all_of(cap)


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: max_turns(0), "max_turns must be at least 1, got 0"),
        (lambda: token_budget(0), "token budget must be at least 1, got 0"),
        (lambda: stall(0), "stall turns must be at least 1, got 0"),
        (lambda: llm("done?", keep_last=0), "judge keep_last must be at least 1, got 0"),
    ],
)
def test_counts_below_one_are_refused_naming_the_value(make: Any, message: str) -> None:
    with pytest.raises(ValueError, match=f"^{message}$"):
        make()


def test_any_of_stops_before_a_judge_when_a_cap_fires() -> None:
    log: list[Any] = []
    cond = max_turns(2) | llm("done?")
    assert check(cond, outcome(("Writer", "x"), round=2), judge(True, log)).reason == "max_turns"
    assert log == []


def test_hard_caps() -> None:
    assert hard_cap(max_turns(5)) == 5
    assert hard_cap(regex("x") | max_turns(5) | max_turns(3)) == 3
    assert hard_cap(regex("x") & max_turns(5)) is None
    assert hard_cap(max_turns(5) & max_turns(9)) == 9
    assert not has_hard_cap(regex("x") | timeout(10))


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("words:APPROVED", "must be regex:PATTERN"),
        ("regex:APPROVED@Nobody", "'Nobody' is not an agent"),
        ("regex:(@Reviewer", "does not compile"),
        ("regex:@Reviewer", "empty regex part"),
        ("llm:@Reviewer", "empty llm part"),
    ],
)
def test_until_specs_bad(spec: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_until(spec, NAMES)


def test_until_specs() -> None:
    assert parse_until("regex:APPROVED@reviewer", NAMES) == regex("APPROVED", "Reviewer")
    assert parse_until("regex:a@b@", NAMES) == regex("a@b")
    assert parse_until("llm:Is it done?", NAMES) == llm("Is it done?")
    with pytest.raises(ValueError, match="max_turns must be at least 1"):
        max_turns(0)


def test_the_vocabulary_as_users_write_it() -> None:
    from debategraph.strategies import selection, termination

    assert selection.sequential("Editor") == Sequential("Editor")
    assert selection.llm("Writer", keep_last=3) == LLMSelector("Writer", 3)
    guarded = selection.max_in_a_row(selection.rules(lambda ctx: "Writer"), 1)
    assert pick(guarded, context(("Writer", "a"))).method == "guard"
    either = termination.llm("done?", "Reviewer") | termination.max_turns(3)
    assert hard_cap(either) == 3
