"""The eval's modes: what each runs, as settings of the solver debate graph.

Every mode is the one solver debate graph with different settings, so a mode's answer is
read, voted and charged exactly as ``debategraph solve`` does it:

- ``single``: one solver, one round (one model call per question);
- ``vote``: N solvers answer independently (one round, no exchange), majority vote;
- ``debate-ring``: N solvers on a sparse ring (each hears its ``neighbours`` nearest),
  R rounds, majority vote of the final answers;
- ``debate-full``: the same on the full topology (each hears every other).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from debategraph.errors import UsageError

SINGLE = "single"
VOTE = "vote"
DEBATE_RING = "debate-ring"
DEBATE_FULL = "debate-full"
MODES = (SINGLE, VOTE, DEBATE_RING, DEBATE_FULL)
#: The modes whose solvers hear each other after the first round.
DEBATE_MODES = (DEBATE_RING, DEBATE_FULL)


def parse_modes(text: str) -> tuple[str, ...]:
    """``--modes``: a comma-separated list of modes, in the order given, each once.

    Args:
        text: The option's value, e.g. ``single,vote``.

    Returns:
        The modes.

    Raises:
        UsageError: On an unknown mode or an empty list, naming what is allowed.
    """
    modes: list[str] = []
    for raw in text.split(","):
        mode = raw.strip().lower()
        if not mode:
            continue
        if mode not in MODES:
            raise UsageError(f"unknown mode {raw.strip()!r} in --modes: use {', '.join(MODES)}")
        if mode not in modes:
            modes.append(mode)
    if not modes:
        raise UsageError(f"--modes is empty: use one or more of {', '.join(MODES)}")
    return tuple(modes)


def mode_settings(mode: str, *, agents: int, rounds: int, neighbours: int) -> dict[str, Any]:
    """The solver debate's settings (its factory's keyword arguments) for one mode.

    Args:
        mode: One of :data:`MODES`.
        agents: Solvers of the vote and debate modes.
        rounds: Rounds of the debate modes (the vote and single modes have one).
        neighbours: Solvers each one hears on the ring.

    Returns:
        The settings, complete (as stored with each thread, like ``solve``'s).
    """
    topology, n, r, k = {
        SINGLE: ("single", 1, 1, None),
        VOTE: ("full", agents, 1, None),
        DEBATE_RING: ("ring", agents, rounds, neighbours),
        DEBATE_FULL: ("full", agents, rounds, None),
    }[mode]
    return {
        "agents": n,
        "max_rounds": r,
        "topology": topology,
        "neighbours": k,
        "token_budget": None,
        "stop_when_unanimous": False,
        "pause_after_round": False,
    }


def check_settings(modes: Sequence[str], *, agents: int, rounds: int, neighbours: int) -> None:
    """Build each mode's graph once, so a bad ``--agents``/``--rounds`` fails before any call.

    Args:
        modes: The modes.
        agents: ``--agents``.
        rounds: ``--rounds``.
        neighbours: ``--neighbours``.

    Raises:
        UsageError: With the graph factory's one-line message, naming the option.
    """
    from debategraph.graphs.solver_debate import build_solver_debate

    if agents < 2 and any(m != SINGLE for m in modes):
        raise UsageError(f"--agents {agents} must be at least 2 for the vote and debate modes")
    for mode in modes:
        settings = mode_settings(mode, agents=agents, rounds=rounds, neighbours=neighbours)
        try:
            build_solver_debate(None, **settings)
        except ValueError as exc:
            raise UsageError(f"{mode}: {exc}") from exc


def plain_vote_modes(modes: Sequence[str], rounds: int) -> list[str]:
    """The debate modes that ``rounds`` makes plain votes: with one round nobody is heard.

    In round 1 every solver answers the question alone; only later rounds show it its
    neighbours' answers. With ``--rounds 1`` a debate mode is therefore a majority vote
    of independent answers, the ``vote`` mode on another thread, and its results are
    valid as that, not as a debate.

    Args:
        modes: The modes run.
        rounds: ``--rounds``.

    Returns:
        The debate modes among ``modes`` that exchange nothing (none unless ``rounds`` is 1).
    """
    return [m for m in modes if m in DEBATE_MODES] if rounds == 1 else []


def plain_vote_note(modes: Sequence[str]) -> str:
    """The note that says which debate modes ran as plain votes.

    Args:
        modes: What :func:`plain_vote_modes` returned (not empty).

    Returns:
        One line, for the screen and ``results.json``.
    """
    what = "are plain majority votes" if len(modes) > 1 else "is a plain majority vote"
    return (
        f"--rounds 1: {' and '.join(modes)} {what} (in round 1 no solver hears another, "
        f"so nothing is debated); use --rounds 2 or more to debate"
    )
