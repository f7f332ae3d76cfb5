"""Small composable strategies shared by every graph.

Topologies, answer extractors and aggregators here; who speaks next in
:mod:`debategraph.strategies.selection` and when a loop ends in
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
    normalize_number,
    valid_choices,
)
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
    "TOPOLOGY_NAMES",
    "Topology",
    "Vote",
    "choice_index",
    "choice_letter",
    "custom",
    "extract_answer",
    "full",
    "majority_vote",
    "make_topology",
    "normalize_choice",
    "normalize_number",
    "ring",
    "selection",
    "solver_names",
    "star",
    "termination",
    "valid_choices",
]
