"""The eval's modes: what each runs, as settings of the solver debate graph.

Every mode is the one solver debate graph with different settings, so a mode's answer is
read, voted and charged exactly as ``debategraph solve`` does it:

- ``single``: one solver, one round (one model call per question);
- ``vote``: N solvers answer independently (one round, no exchange), majority vote;
- ``debate-ring``: N solvers on a sparse ring (each hears its ``neighbours`` nearest),
  R rounds, majority vote of the final answers;
- ``debate-full``: the same on the full topology (each hears every other);
- ``vote-then-debate``: ``debate-full`` that stops after any round whose answers agree
  (``--agree``, an agreement protocol: unanimity by default), round 1 included: the
  questions the independent first round agrees on cost a vote, only the rest are
  debated (the graph's ``stop_when``, as ``solve --stop-when``);
- ``NAME=PATH`` (a roster mode): the solvers of the agents file PATH (each with its own
  model, tools or agent) debate like ``debate-ring``; an entry named ``judge`` is the
  judge of the ``judge`` decision protocol;
- ``vote@K``: K solvers answer independently, one round: the vote of independent
  samples that the eval runs at a debate's token budget (see
  :func:`~debategraph.eval.budget.matched_k`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from debategraph.errors import UsageError

SINGLE = "single"
VOTE = "vote"
DEBATE_RING = "debate-ring"
DEBATE_FULL = "debate-full"
VOTE_THEN_DEBATE = "vote-then-debate"
MODES = (SINGLE, VOTE, DEBATE_RING, DEBATE_FULL, VOTE_THEN_DEBATE)
#: ``--modes`` when not given.
DEFAULT_MODES = (SINGLE, VOTE, DEBATE_RING, DEBATE_FULL)
#: The built-in modes whose solvers hear each other after the first round (a roster
#: mode does too; ``vote-then-debate`` where the first round did not agree).
DEBATE_MODES = (DEBATE_RING, DEBATE_FULL, VOTE_THEN_DEBATE)
#: ``--agree`` when not given: ``vote-then-debate`` stops where every solver agrees.
DEFAULT_AGREE = "unanimity"
#: The matched-budget vote's mode is this prefix and its solvers: ``vote@5``.
VOTE_AT = "vote@"

#: A roster mode's name: a simple slug.
_SLUG = re.compile(r"[a-z0-9](?:[a-z0-9_-]{0,38}[a-z0-9])?")
_MODES_RULE = f"{', '.join(MODES)}, or NAME=AGENTS_FILE"


@dataclass(frozen=True)
class RosterMode:
    """A roster mode: the solvers of an agents file, debating like ``debate-ring``.

    Attributes:
        name: The mode's name (a slug, none of the built-in modes').
        path: The agents file, as given.
        solvers: The solvers' records, as the file gives them (dicts: the settings stay
            JSON, stored with each thread, so a resume rebuilds each solver's model).
        judge: The file's ``judge`` entry (the judge of the ``judge`` decision
            protocol, with its own model), or ``None``.
    """

    name: str
    path: str
    solvers: tuple[Mapping[str, Any], ...]
    judge: Mapping[str, Any] | None = None


def parse_modes(text: str) -> tuple[tuple[str, ...], dict[str, str]]:
    """``--modes``: a comma-separated list of modes, in the order given, each once.

    Args:
        text: The option's value, e.g. ``single,vote,mixed=team.yaml``.

    Returns:
        The modes (a roster mode by its name), and each roster mode's agents file by name.

    Raises:
        UsageError: On an unknown mode, a roster mode whose name is not a slug or is a
            built-in mode's, two roster modes of one name, or an empty list, naming what
            is allowed.
    """
    modes: list[str] = []
    rosters: dict[str, str] = {}
    for raw in text.split(","):
        entry = raw.strip()
        if not entry:
            continue
        if "=" in entry:
            name, path = roster_entry(entry)
            if name in rosters and rosters[name] != path:
                raise UsageError(
                    f"--modes: two roster modes are named {name!r} ({rosters[name]} and "
                    f"{path}): give each its own name"
                )
            rosters[name] = path
            mode = name
        else:
            mode = entry.lower()
            if mode not in MODES:
                raise UsageError(f"unknown mode {entry!r} in --modes: use {_MODES_RULE}")
        if mode not in modes:
            modes.append(mode)
    if not modes:
        raise UsageError(f"--modes is empty: use one or more of {_MODES_RULE}")
    return tuple(modes), rosters


def roster_entry(entry: str) -> tuple[str, str]:
    """One roster mode of ``--modes``: ``NAME=AGENTS_FILE``.

    Args:
        entry: The entry, e.g. ``mixed=team.yaml``.

    Returns:
        Its name (lower case) and its file.

    Raises:
        UsageError: If the name is not a slug, is a built-in mode's, or the file is empty.
    """
    raw_name, _, path = entry.partition("=")
    name, path = raw_name.strip().lower(), path.strip()
    if name in MODES or name.startswith(VOTE_AT):
        raise UsageError(
            f"roster mode {entry!r} in --modes: {name!r} is a built-in mode's name: "
            "give the roster another name"
        )
    if not _SLUG.fullmatch(name):
        raise UsageError(
            f"roster mode {entry!r} in --modes: its name must be a slug (1 to 40 of a-z, "
            "0-9, '-' and '_', starting and ending with a letter or digit), as in "
            "mixed=team.yaml"
        )
    if not path:
        raise UsageError(
            f"roster mode {entry!r} in --modes: give its agents file, as in {name}=team.yaml"
        )
    return name, path


def parse_agree(text: str) -> str:
    """``--agree``: the agreement ``vote-then-debate`` stops on.

    Args:
        text: The option's value, e.g. ``supermajority:2/3`` or ``confidence:0.8``.

    Returns:
        The agreement as written without a fallback (``supermajority:2/3``).

    Raises:
        UsageError: One line naming the value and the agreements allowed.
    """
    from debategraph.strategies.decisions import agreement_text, parse_agreement

    try:
        return agreement_text(parse_agreement(text))
    except ValueError as exc:
        raise UsageError(f"--agree {text}: {exc}") from None


def vote_mode(k: int) -> str:
    """The matched vote of ``k`` solvers: ``vote@K``.

    Args:
        k: Its solvers.

    Returns:
        The mode.
    """
    return f"{VOTE_AT}{k}"


def vote_solvers(mode: str) -> int | None:
    """The solvers of a ``vote@K`` mode; ``None`` for any other mode.

    Args:
        mode: The mode.

    Returns:
        K, or ``None``.
    """
    if not mode.startswith(VOTE_AT) or not mode[len(VOTE_AT) :].isdigit():
        return None
    return int(mode[len(VOTE_AT) :])


def is_debate(mode: str, rosters: Mapping[str, RosterMode]) -> bool:
    """Whether the solvers of ``mode`` hear each other after round 1.

    Args:
        mode: The mode.
        rosters: The roster modes, by name.

    Returns:
        True for ``debate-ring``, ``debate-full`` and a roster mode.
    """
    return mode in DEBATE_MODES or mode in rosters


def mode_settings(
    mode: str,
    *,
    agents: int,
    rounds: int,
    neighbours: int,
    roster: RosterMode | None = None,
    agree: str = DEFAULT_AGREE,
) -> dict[str, Any]:
    """The solver debate's settings (its factory's keyword arguments) for one mode.

    Args:
        mode: One of :data:`MODES`, a ``vote@K`` mode, or a roster mode (with ``roster``).
        agents: Solvers of the vote and debate modes.
        rounds: Rounds of the debate modes (the vote and single modes have one).
        neighbours: Solvers each one hears on the ring.
        roster: The roster mode's solvers, where ``mode`` is one.
        agree: ``vote-then-debate``'s agreement (its ``stop_when``).

    Returns:
        The settings, complete (as stored with each thread, like ``solve``'s). Only
        ``vote-then-debate``'s have ``stop_when`` (the other modes' settings, and so
        their threads' ids, are what they were before it existed).

    Raises:
        ValueError: If ``mode`` is none of these.
    """
    solvers: int | list[dict[str, Any]]
    k = vote_solvers(mode)
    if roster is not None:
        topology, solvers, r, near = "ring", [dict(s) for s in roster.solvers], rounds, neighbours
    elif k is not None:
        topology, solvers, r, near = "full", k, 1, None
    elif mode in MODES:
        topology, solvers, r, near = {
            SINGLE: ("single", 1, 1, None),
            VOTE: ("full", agents, 1, None),
            DEBATE_RING: ("ring", agents, rounds, neighbours),
            DEBATE_FULL: ("full", agents, rounds, None),
            VOTE_THEN_DEBATE: ("full", agents, rounds, None),
        }[mode]
    else:
        raise ValueError(f"unknown mode {mode!r}: use {_MODES_RULE}")
    settings: dict[str, Any] = {
        "agents": solvers,
        "max_rounds": r,
        "topology": topology,
        "neighbours": near,
        "token_budget": None,
        "stop_when_unanimous": False,
        "pause_after_round": False,
    }
    if mode == VOTE_THEN_DEBATE:
        settings["stop_when"] = agree
    return settings


def check_settings(
    modes: Sequence[str],
    *,
    agents: int,
    rounds: int,
    neighbours: int,
    rosters: Mapping[str, RosterMode] | None = None,
    agree: str = DEFAULT_AGREE,
) -> None:
    """Build each mode's graph once, so a bad ``--agents``/``--rounds`` fails before any call.

    Args:
        modes: The modes.
        agents: ``--agents``.
        rounds: ``--rounds``.
        neighbours: ``--neighbours``.
        rosters: The roster modes, by name.
        agree: ``--agree``.

    Raises:
        UsageError: With the graph factory's one-line message, naming the mode.
    """
    from debategraph.graphs.solver_debate import build_solver_debate

    rosters = rosters or {}
    if agents < 2 and any(m in MODES and m != SINGLE for m in modes):
        raise UsageError(f"--agents {agents} must be at least 2 for the vote and debate modes")
    for mode in modes:
        roster = rosters.get(mode)
        settings = mode_settings(
            mode, agents=agents, rounds=rounds, neighbours=neighbours, roster=roster, agree=agree
        )
        try:
            build_solver_debate(None, **settings)
        except ValueError as exc:
            where = f"{mode} ({roster.path})" if roster is not None else mode
            raise UsageError(f"{where}: {exc}") from exc


def plain_vote_modes(
    modes: Sequence[str], rounds: int, rosters: Mapping[str, RosterMode] | None = None
) -> list[str]:
    """The debate modes that ``rounds`` makes plain votes: with one round nobody is heard.

    In round 1 every solver answers the question alone; only later rounds show it its
    neighbours' answers. With ``--rounds 1`` a debate mode is therefore a majority vote
    of independent answers, the ``vote`` mode on another thread, and its results are
    valid as that, not as a debate.

    Args:
        modes: The modes run.
        rounds: ``--rounds``.
        rosters: The roster modes, by name (they debate too).

    Returns:
        The debate modes among ``modes`` that exchange nothing (none unless ``rounds`` is 1).
    """
    return [m for m in modes if is_debate(m, rosters or {})] if rounds == 1 else []


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
