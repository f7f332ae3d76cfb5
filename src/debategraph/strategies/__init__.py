"""Small composable strategies shared by every graph.

Topologies, answer extractors, aggregators, decision protocols and debate dynamics
here; who speaks next in :mod:`debategraph.strategies.selection` and when a loop ends in
:mod:`debategraph.strategies.termination` (both have an ``llm``: use them as
``selection.llm()`` and ``termination.llm(...)``).
"""

from debategraph.strategies import selection, termination
from debategraph.strategies.answers import (
    CHOICE_LETTERS,
    CHOICES_RULE,
    choice_index,
    choice_letter,
    extract_answer,
    normalize_choice,
    valid_choices,
)
from debategraph.strategies.decisions import (
    JUDGE,
    PLURALITY,
    Decided,
    DecisionProtocol,
    decide,
    judge_needed,
    parse_protocol,
    parse_protocols,
)
from debategraph.strategies.dynamics import (
    Dynamics,
    DynamicsSummary,
    summarize_dynamics,
    thread_dynamics,
)
from debategraph.strategies.numbers import normalize_number
from debategraph.strategies.topology import (
    TOPOLOGY_NAMES,
    Topology,
    custom,
    full,
    make_topology,
    ring,
    solver_names,
    star,
)
from debategraph.strategies.voting import Vote, majority_vote

__all__ = [
    "CHOICES_RULE",
    "CHOICE_LETTERS",
    "JUDGE",
    "PLURALITY",
    "TOPOLOGY_NAMES",
    "Decided",
    "DecisionProtocol",
    "Dynamics",
    "DynamicsSummary",
    "Topology",
    "Vote",
    "choice_index",
    "choice_letter",
    "custom",
    "decide",
    "extract_answer",
    "full",
    "judge_needed",
    "majority_vote",
    "make_topology",
    "normalize_choice",
    "normalize_number",
    "parse_protocol",
    "parse_protocols",
    "ring",
    "selection",
    "solver_names",
    "star",
    "summarize_dynamics",
    "termination",
    "thread_dynamics",
    "valid_choices",
]
