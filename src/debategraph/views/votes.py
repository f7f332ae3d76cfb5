"""The vote after each round, drawn (inline SVG), and who flipped: for a thread's page.

Read from the transcript alone, for any pattern: a stage in which two or more agents
gave an answer in one round (the solvers' ``solve``) is a vote. Each such stage gets a
stacked bar per round (how many agents gave each answer, abstentions grey), a grid of
each agent's answer per round (a flip outlined), and the list of flips (agent, round,
from -> to).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from debategraph.state.records import Turn
from debategraph.views.shell import esc

#: Answers' colours, by first appearance (more answers reuse them in turn).
PALETTE = ("#0969da", "#1a7f37", "#bf3989", "#9a6700", "#8250df", "#cf222e", "#1b7c83", "#953800")
#: An abstention's colour.
NO_ANSWER_COLOUR = "#afb8c1"
#: How an abstention reads.
NO_ANSWER = "no answer"

_BAR_W, _BAR_GAP, _CHART_H, _TOP, _LEFT = 56, 24, 160, 12, 36
_CELL_W, _CELL_H, _NAME_W = 72, 24, 120


@dataclass(frozen=True)
class Flip:
    """An agent changing its answer from one round to the next.

    Attributes:
        agent: Who.
        round: The round of the new answer.
        before: Its answer the round before (``None``: none).
        after: Its answer in ``round`` (``None``: none).
    """

    agent: str
    round: int
    before: str | None
    after: str | None


def answers_by_round(transcript: Sequence[Turn]) -> dict[str, dict[int, dict[str, str | None]]]:
    """The stages whose turns are votes: stage -> round -> agent -> its answer.

    A stage is a vote where two or more agents answered in one of its rounds; an agent's
    turn of that stage without an answer (an abstention) is ``None``; an agent's later
    turn in the same round replaces its earlier one.

    Args:
        transcript: The thread's turns.

    Returns:
        The votes, stages and rounds in order of first appearance.
    """
    stages: dict[str, dict[int, dict[str, str | None]]] = defaultdict(lambda: defaultdict(dict))
    for turn in transcript:
        if turn.role == "agent":
            stages[turn.stage][turn.round][turn.agent] = turn.answer
    return {
        stage: dict(rounds)
        for stage, rounds in stages.items()
        if any(sum(a is not None for a in r.values()) >= 2 for r in rounds.values())
    }


def flips(rounds: dict[int, dict[str, str | None]]) -> list[Flip]:
    """Every change of an agent's answer between the rounds it answered in.

    Args:
        rounds: Round -> agent -> answer (one stage of :func:`answers_by_round`).

    Returns:
        The flips, by round then agent order.
    """
    last: dict[str, str | None] = {}
    out: list[Flip] = []
    for rnd in sorted(rounds):
        for agent, answer in rounds[rnd].items():
            if agent in last and last[agent] != answer:
                out.append(Flip(agent, rnd, last[agent], answer))
            last[agent] = answer
    return out


def votes_html(transcript: Sequence[Turn]) -> str:
    """The votes section: per voting stage, the drawn vote, the answer grid and the flips.

    Args:
        transcript: The thread's turns.

    Returns:
        The HTML (empty when no stage is a vote).
    """
    parts = []
    for stage, rounds in answers_by_round(transcript).items():
        colours = _colours(rounds)
        flipped = flips(rounds)
        items = "\n".join(
            f"<li>{esc(f.agent)}, round {f.round}: {esc(f.before or NO_ANSWER)} → "
            f"{esc(f.after or NO_ANSWER)}</li>"
            for f in flipped
        )
        listing = f'<ul class="flips">{items}</ul>' if flipped else "<p>No answer changed.</p>"
        parts.append(
            f'<div class="votes" data-stage="{esc(stage)}"><h3>Votes after each round '
            f'<span class="muted">({esc(stage)})</span></h3>\n'
            f"{_bars(rounds, colours)}\n{_grid(rounds, colours, flipped)}\n"
            f"<h3>Flips</h3>\n{listing}</div>"
        )
    return "\n".join(parts)


def _colours(rounds: dict[int, dict[str, str | None]]) -> dict[str | None, str]:
    colours: dict[str | None, str] = {None: NO_ANSWER_COLOUR}
    for rnd in sorted(rounds):
        for answer in rounds[rnd].values():
            if answer not in colours:
                colours[answer] = PALETTE[(len(colours) - 1) % len(PALETTE)]
    return colours


def _short(text: str | None, limit: int = 10) -> str:
    shown = NO_ANSWER if text is None else " ".join(text.split())
    return shown if len(shown) <= limit else shown[: limit - 1] + "…"


def _bars(rounds: dict[int, dict[str, str | None]], colours: dict[str | None, str]) -> str:
    """One stacked bar per round: how many agents gave each answer."""
    most = max(len(r) for r in rounds.values())
    unit = _CHART_H / most
    width = _LEFT + len(rounds) * (_BAR_W + _BAR_GAP)
    shapes = []
    for i, rnd in enumerate(sorted(rounds)):
        x = _LEFT + i * (_BAR_W + _BAR_GAP)
        y = float(_TOP + _CHART_H)
        counts = Counter(rounds[rnd].values())
        for answer in colours:  # the same order in every bar
            n = counts.get(answer, 0)
            if not n:
                continue
            h = n * unit
            y -= h
            label = f"{_short(answer, 7)}: {n}"
            shapes.append(
                f'<rect class="vote" x="{x}" y="{y:.1f}" width="{_BAR_W}" height="{h:.1f}" '
                f'fill="{colours[answer]}" data-answer="{esc(answer or "")}" data-count="{n}">'
                f"<title>round {rnd}: {n} x {esc(answer or NO_ANSWER)}</title></rect>"
            )
            if h >= 14:
                shapes.append(
                    f'<text x="{x + _BAR_W / 2}" y="{y + h / 2 + 4:.1f}" text-anchor="middle" '
                    f'fill="#fff">{esc(label)}</text>'
                )
        shapes.append(
            f'<text x="{x + _BAR_W / 2}" y="{_TOP + _CHART_H + 16}" text-anchor="middle">'
            f"round {rnd}</text>"
        )
    shapes.append(
        f'<text x="4" y="{_TOP + 10}">{most}</text><text x="4" y="{_TOP + _CHART_H}">0</text>'
    )
    height = _TOP + _CHART_H + 24
    return (
        f'<svg class="vote-bars" xmlns="http://www.w3.org/2000/svg" width="{width}" '
        f'height="{height}" role="img" aria-label="answers per round">{"".join(shapes)}</svg>'
    )


def _grid(
    rounds: dict[int, dict[str, str | None]],
    colours: dict[str | None, str],
    flipped: Sequence[Flip],
) -> str:
    """Each agent's answer per round (a row per agent), a flip outlined."""
    agents = list(dict.fromkeys(a for rnd in sorted(rounds) for a in rounds[rnd]))
    changed = {(f.agent, f.round) for f in flipped}
    order = sorted(rounds)
    shapes = [
        f'<text x="{_NAME_W + i * _CELL_W + _CELL_W / 2}" y="16" text-anchor="middle">'
        f"round {rnd}</text>"
        for i, rnd in enumerate(order)
    ]
    for row, agent in enumerate(agents):
        y = 24 + row * _CELL_H
        shapes.append(f'<text x="0" y="{y + 16}">{esc(_short(agent, 16))}</text>')
        for col, rnd in enumerate(order):
            if agent not in rounds[rnd]:
                continue
            answer = rounds[rnd][agent]
            x = _NAME_W + col * _CELL_W
            stroke = ' stroke="#1f2328" stroke-width="3"' if (agent, rnd) in changed else ""
            shapes.append(
                f'<rect x="{x + 1}" y="{y + 1}" width="{_CELL_W - 2}" height="{_CELL_H - 2}" '
                f'rx="3" fill="{colours[answer]}"{stroke}><title>{esc(agent)}, round {rnd}: '
                f"{esc(answer or NO_ANSWER)}</title></rect>"
                f'<text x="{x + _CELL_W / 2}" y="{y + 16}" text-anchor="middle" fill="#fff">'
                f"{esc(_short(answer))}</text>"
            )
    width = _NAME_W + len(order) * _CELL_W
    height = 28 + len(agents) * _CELL_H
    return (
        f'<svg class="vote-grid" xmlns="http://www.w3.org/2000/svg" width="{width}" '
        f'height="{height}" role="img" aria-label="each agent\'s answer per round">'
        f"{''.join(shapes)}</svg>"
    )
