"""The vote after each round, drawn (inline SVG), and who flipped: for a thread's page.

Read from the transcript alone, for any pattern: a stage in which two or more agents
gave an answer in one round (the solvers' ``solve``) is a vote. Each such stage gets a
stacked bar per round (how many agents gave each answer, abstentions grey), a grid of
each agent's answer per round (a flip outlined), and the list of flips (agent, round,
from -> to: :func:`~debategraph.strategies.dynamics.flips`). A human's interjection is
marked on the bars where it came in: a dashed line after the round it followed. The
charts scale to the width they have (a ``viewBox``); their labels are short, with no
direction control in them (a right-to-left override would reverse a label).
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Collection, Sequence

from debategraph.state.records import INTERJECT_STAGE, Turn
from debategraph.strategies.dynamics import Flip, flips
from debategraph.views.shell import esc, said

#: Answers' colours, by first appearance (more answers reuse them in turn).
PALETTE = ("#0969da", "#1a7f37", "#bf3989", "#9a6700", "#8250df", "#cf222e", "#1b7c83", "#953800")
#: An abstention's colour.
NO_ANSWER_COLOUR = "#afb8c1"
#: How an abstention reads.
NO_ANSWER = "no answer"

_BAR_W, _BAR_GAP, _CHART_H, _TOP, _LEFT = 56, 24, 160, 12, 36
_CELL_W, _CELL_H, _NAME_W = 72, 24, 120

#: Unicode's direction controls (embeddings, overrides, isolates, marks): never in a label.
_DIRECTION_CONTROLS = re.compile("[\u200e\u200f\u202a-\u202e\u2066-\u2069]")


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


def votes_html(transcript: Sequence[Turn]) -> str:
    """The votes section: per voting stage, the drawn vote, the answer grid and the flips.

    Args:
        transcript: The thread's turns.

    Returns:
        The HTML (empty when no stage is a vote).
    """
    parts = []
    interjected = {t.round for t in transcript if t.role == "user" and t.stage == INTERJECT_STAGE}
    for stage, rounds in answers_by_round(transcript).items():
        colours = _colours(rounds)
        flipped = flips(rounds)
        items = "\n".join(
            f"<li>{said(f.agent)}, round {f.round}: {said(f.before or NO_ANSWER)} → "
            f"{said(f.after or NO_ANSWER)}</li>"
            for f in flipped
        )
        listing = f'<ul class="flips">{items}</ul>' if flipped else "<p>No answer changed.</p>"
        parts.append(
            f'<div class="votes" data-stage="{esc(stage)}"><h3>Votes after each round '
            f'<span class="muted">({said(stage)})</span></h3>\n'
            f"{_bars(rounds, colours, interjected)}\n{_grid(rounds, colours, flipped)}\n"
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
    shown = NO_ANSWER if text is None else " ".join(_plain(text).split())
    return shown if len(shown) <= limit else shown[: limit - 1] + "…"


def _plain(text: str) -> str:
    """A label's text without direction controls."""
    return _DIRECTION_CONTROLS.sub("", text)


def _bars(
    rounds: dict[int, dict[str, str | None]],
    colours: dict[str | None, str],
    interjected: Collection[int] = (),
) -> str:
    """One stacked bar per round: how many agents gave each answer; interjections marked."""
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
                f'fill="{colours[answer]}" data-answer="{esc(_plain(answer or ""))}" '
                f'data-count="{n}">'
                f"<title>round {rnd}: {n} x {esc(_plain(answer or NO_ANSWER))}</title></rect>"
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
        if rnd in interjected:  # read from the next round on: marked between the two
            mark = x + _BAR_W + _BAR_GAP / 2
            shapes.append(
                f'<g class="interjection-mark" data-after-round="{rnd}"><line x1="{mark}" '
                f'y1="{_TOP}" x2="{mark}" y2="{_TOP + _CHART_H}"/><text x="{mark}" '
                f'y="{_TOP - 2}" text-anchor="middle">human</text>'
                f"<title>a human interjected after round {rnd}</title></g>"
            )
    shapes.append(
        f'<text x="4" y="{_TOP + 10}">{most}</text><text x="4" y="{_TOP + _CHART_H}">0</text>'
    )
    height = _TOP + _CHART_H + 24
    return (
        f'<svg class="vote-bars" xmlns="http://www.w3.org/2000/svg" width="{width}" '
        f'height="{height}" viewBox="0 0 {width} {height}" role="img" '
        f'aria-label="answers per round">{"".join(shapes)}</svg>'
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
                f'rx="3" fill="{colours[answer]}"{stroke}><title>{esc(_plain(agent))}, round '
                f"{rnd}: {esc(_plain(answer or NO_ANSWER))}</title></rect>"
                f'<text x="{x + _CELL_W / 2}" y="{y + 16}" text-anchor="middle" fill="#fff">'
                f"{esc(_short(answer))}</text>"
            )
    width = _NAME_W + len(order) * _CELL_W
    height = 28 + len(agents) * _CELL_H
    return (
        f'<svg class="vote-grid" xmlns="http://www.w3.org/2000/svg" width="{width}" '
        f'height="{height}" viewBox="0 0 {width} {height}" role="img" '
        f'aria-label="each agent\'s answer per round">{"".join(shapes)}</svg>'
    )
