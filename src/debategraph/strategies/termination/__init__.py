"""Termination conditions: composable, and each says when it fired.

A pattern checks its conditions after every round (a chat: after every turn), in the order
it lists them, and ends with the first that fires; its ``termination_reason`` is that
condition's ``reason``. Every loop also has a cap, so it always ends (DESIGN.md
principle 3).

Conditions combine with ``|`` (:class:`AnyOf`: the first that fires) and ``&``
(:class:`AllOf`: every one at once), or with :func:`any_of` / :func:`all_of`. A model-judged
condition (:class:`LLMJudge`) makes a call, so a combination is checked with
:func:`check_steps` (a node body ``yield from`` s it), which also says in words what fired.
"""

from debategraph.strategies.termination.chat import (
    JUDGE_KEEP_LAST,
    Ask,
    Fired,
    Judgement,
    LLMJudge,
    Regex,
    check_steps,
    hard_cap,
    has_hard_cap,
    time_limit,
)
from debategraph.strategies.termination.conditions import (
    Agreement,
    AllOf,
    AnyOf,
    Combinable,
    Condition,
    Convergence,
    ExternalStop,
    MaxRounds,
    RoundOutcome,
    Settled,
    Silence,
    Stall,
    TimeLimit,
    TokenBudget,
    Unanimity,
    describe_condition,
    first_fired,
)
from debategraph.strategies.termination.factories import (
    all_of,
    any_of,
    external,
    llm,
    max_turns,
    parse_duration,
    parse_until,
    regex,
    stall,
    timeout,
    token_budget,
)

__all__ = [
    "JUDGE_KEEP_LAST",
    "Agreement",
    "AllOf",
    "AnyOf",
    "Ask",
    "Combinable",
    "Condition",
    "Convergence",
    "ExternalStop",
    "Fired",
    "Judgement",
    "LLMJudge",
    "MaxRounds",
    "Regex",
    "RoundOutcome",
    "Settled",
    "Silence",
    "Stall",
    "TimeLimit",
    "TokenBudget",
    "Unanimity",
    "all_of",
    "any_of",
    "check_steps",
    "describe_condition",
    "external",
    "first_fired",
    "hard_cap",
    "has_hard_cap",
    "llm",
    "max_turns",
    "parse_duration",
    "parse_until",
    "regex",
    "stall",
    "time_limit",
    "timeout",
    "token_budget",
]
