"""Small composable strategies shared by every graph: topologies, extractors, aggregators."""

from debategraph.strategies.answers import extract_answer, normalize_number
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
    "TOPOLOGY_NAMES",
    "Topology",
    "Vote",
    "custom",
    "extract_answer",
    "full",
    "majority_vote",
    "make_topology",
    "normalize_number",
    "ring",
    "solver_names",
    "star",
]
