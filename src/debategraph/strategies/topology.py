"""Communication topologies: which solvers each solver hears between rounds."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

TOPOLOGY_NAMES = ("ring", "full", "star", "single")
#: Neighbours per solver of a ring, when none are given.
DEFAULT_NEIGHBOURS = 2


def solver_names(n: int) -> list[str]:
    """Default solver names.

    Args:
        n: How many solvers.

    Returns:
        ``["solver_1", ..., "solver_n"]``.
    """
    return [f"solver_{i}" for i in range(1, n + 1)]


@dataclass(frozen=True)
class Topology:
    """Who hears whom: ``neighbours[a]`` are the solvers whose answers ``a`` reads.

    Attributes:
        name: ``ring``, ``full``, ``star``, ``single`` or ``custom``.
        neighbours: For each solver, the solvers it hears (never itself).
    """

    name: str
    neighbours: Mapping[str, tuple[str, ...]]

    @property
    def solvers(self) -> list[str]:
        """The solvers, in order."""
        return list(self.neighbours)

    @property
    def edges(self) -> int:
        """Number of directed "hears" links."""
        return sum(len(v) for v in self.neighbours.values())

    def __post_init__(self) -> None:
        _validate(self.neighbours, minimum=1 if self.name == SINGLE else 2)


#: One solver that hears no one: a single model call per round (the eval's baseline).
SINGLE = "single"


def _validate(neighbours: Mapping[str, Sequence[str]], minimum: int = 2) -> None:
    names = list(neighbours)
    if len(names) < minimum:
        raise ValueError(f"a topology needs at least {minimum} solvers, got {len(names)}")
    known = set(names)
    for solver, heard in neighbours.items():
        unknown = sorted(set(heard) - known)
        if unknown:
            raise ValueError(
                f"topology: {solver} hears unknown solver(s) {', '.join(unknown)}; "
                f"known: {', '.join(names)}"
            )
        if solver in heard:
            raise ValueError(f"topology: {solver} lists itself as a neighbour (no self loops)")
    # Connectivity, links taken in both directions: every solver must be reachable.
    undirected: dict[str, set[str]] = {n: set() for n in names}
    for solver, heard in neighbours.items():
        for other in heard:
            undirected[solver].add(other)
            undirected[other].add(solver)
    seen = {names[0]}
    stack = [names[0]]
    while stack:
        for nxt in undirected[stack.pop()] - seen:
            seen.add(nxt)
            stack.append(nxt)
    if len(seen) != len(names):
        cut = ", ".join(n for n in names if n not in seen)
        raise ValueError(f"topology is disconnected: {cut} cannot hear or be heard by {names[0]}")


def _over(kind: str, n: int, hears: Callable[[int, list[str]], Sequence[str]]) -> Topology:
    """Topology ``kind`` over ``solver_1..n``, solver ``i`` hearing ``hears(i, names)``."""
    if n < 2:
        raise ValueError(f"agents must be at least 2, got {n}")
    names = solver_names(n)
    return Topology(kind, {name: tuple(hears(i, names)) for i, name in enumerate(names)})


def ring(n: int, k: int = DEFAULT_NEIGHBOURS) -> Topology:
    """Neighbour-connected ring: each solver hears its ``k`` nearest solvers on a circle.

    Neighbours alternate sides: ``i+1, i-1, i+2, i-2, ...``.

    Args:
        n: Number of solvers (>= 2).
        k: Neighbours per solver, 1 to ``n - 1``.

    Returns:
        The topology.

    Raises:
        ValueError: If ``n`` or ``k`` is out of range.
    """
    if n >= 2 and not 1 <= k <= n - 1:
        raise ValueError(f"neighbours k={k} is out of range: with {n} solvers use 1..{n - 1}")

    def nearest(i: int, names: list[str]) -> list[str]:
        sides = ((i + step) % n for d in range(1, n) for step in (d, -d))
        return list(dict.fromkeys(names[j] for j in sides if j != i))[:k]

    return _over("ring", n, nearest)


def full(n: int) -> Topology:
    """Every one of ``n`` solvers (>= 2) hears every other solver."""
    return _over("full", n, lambda i, names: names[:i] + names[i + 1 :])


def star(n: int) -> Topology:
    """Of ``n`` solvers (>= 2), the first is the hub: it hears everyone, everyone hears it."""
    return _over("star", n, lambda i, names: names[1:] if i == 0 else names[:1])


def single() -> Topology:
    """One solver alone: it hears no one, so the "debate" is one answer per round.

    The baseline a debate is measured against (``debategraph eval --modes single``).

    Returns:
        The topology, of the one solver ``solver_1``.
    """
    return Topology(SINGLE, {solver_names(1)[0]: ()})


def custom(neighbours: Mapping[str, Sequence[str]]) -> Topology:
    """A topology from an adjacency mapping ``{solver: [solvers it hears]}``.

    Args:
        neighbours: Adjacency mapping; its keys name the solvers.

    Returns:
        The topology.

    Raises:
        ValueError: On unknown names, self loops or a disconnected graph.
    """
    return Topology("custom", {str(k): tuple(str(x) for x in v) for k, v in neighbours.items()})


def make_topology(
    kind: str | Mapping[str, Sequence[str]] | Topology, n: int, k: int = DEFAULT_NEIGHBOURS
) -> Topology:
    """Build a topology from a name, an adjacency mapping, or pass one through.

    Args:
        kind: ``ring``, ``full``, ``star``, ``single``, an adjacency mapping, or a
            :class:`Topology`.
        n: Number of solvers (ignored for ``single``, mappings and topologies, which name
            their own).
        k: Neighbours per solver for ``ring``.

    Returns:
        The topology.

    Raises:
        ValueError: If the name is unknown or the values are out of range.
    """
    if isinstance(kind, Topology):
        return kind
    if isinstance(kind, Mapping):
        return custom(kind)
    if kind == "ring":
        return ring(n, k)
    if kind == "full":
        return full(n)
    if kind == "star":
        return star(n)
    if kind == SINGLE:
        return single()
    raise ValueError(
        f"unknown topology {kind!r}: use one of {', '.join(TOPOLOGY_NAMES)} or an adjacency mapping"
    )
