"""The eval's plots: ``accuracy.png`` (accuracy against tokens) and ``dynamics.png``.

Both use a bare ``Figure`` (matplotlib's object API with its Agg canvas) rather than
``pyplot``: no global figure to close, and the backend of a host process (a notebook) is
left alone. matplotlib is imported inside the functions: it is slow to import.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Literal

from debategraph.strategies.decisions import PLURALITY

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

    from debategraph.eval.dynamics import ModeDynamics
    from debategraph.eval.records import ModeSummary

Align = Literal["left", "center", "right"]
_SIDES: tuple[tuple[int, Align], ...] = ((12, "left"), (-12, "right"))
#: Label positions tried around a point, in points from it: (dx, dy, horizontal alignment).
_SPOTS: list[tuple[int, int, Align]] = [
    (10, 0, "left"),
    (-10, 0, "right"),
    (8, 10, "left"),
    (8, -10, "left"),
    (-8, 10, "right"),
    (-8, -10, "right"),
    (0, 14, "center"),
    (0, -14, "center"),
    *[(dx, dy, ha) for dy in (24, -24, 36, -36, 48, -48, 60, -60) for dx, ha in _SIDES],
]
#: Markers of a mode's protocol rows (its plurality row is a circle), in label order.
_MARKERS = ("s", "D", "^", "v", "P", "X", "<", ">")


def _n_label(counts: Sequence[int]) -> str:
    """``n = 100``, or ``n = 95-100`` when the rows answered different numbers."""
    ordered = sorted(set(counts)) or [0]
    if len(ordered) == 1:
        return f"n = {ordered[0]}"
    return f"n = {ordered[0]}\N{EN DASH}{ordered[-1]}"


def _mode_of(summary: ModeSummary) -> str:
    """The mode of a label (``debate-full/judge`` -> ``debate-full``)."""
    if summary.decision == PLURALITY:
        return summary.mode
    return summary.mode.removesuffix(f"/{summary.decision}")


def _overlap(a: tuple[float, float, float, float], b: tuple[float, float, float, float]) -> float:
    """The area two boxes ``(x0, y0, x1, y1)`` share."""
    width = min(a[2], b[2]) - max(a[0], b[0])
    height = min(a[3], b[3]) - max(a[1], b[1])
    return max(0.0, width) * max(0.0, height)


def _place_labels(
    figure: Figure,
    axes: Axes,
    points: Sequence[tuple[str, float, float, float, float]],
    segments: Sequence[tuple[float, float, float, float]] = (),
) -> None:
    """Label each point where its text covers the fewest other labels, points and bars.

    Greedy, leftmost point first: each label tries the spots of :data:`_SPOTS` in turn
    and takes the first that overlaps nothing placed (else the one that overlaps least),
    staying inside the axes where it can; a label set off from its point gets a thin
    line to it.

    Args:
        figure: The figure (on an Agg canvas, its layout fixed).
        axes: The axes of the points.
        points: ``(label, x, y, ci_low, ci_high)`` in data coordinates.
        segments: Horizontal or vertical lines to keep clear, ``(x0, y0, x1, y1)`` in
            data coordinates.
    """
    axes.autoscale_view()  # limits final (the layout is fixed): pixel positions are too
    renderer = figure.canvas.get_renderer()  # type: ignore[attr-defined]
    to_pixels = axes.transData.transform
    frame = axes.get_window_extent(renderer)
    bounds = (frame.x0, frame.y0, frame.x1, frame.y1)
    scale = figure.dpi / 72.0
    obstacles: list[tuple[float, float, float, float]] = []
    for _, x, y, low, high in points:
        px, py = to_pixels((x, y))
        obstacles.append((px - 10, py - 10, px + 10, py + 10))  # the marker and its ring
        _, bottom = to_pixels((x, low))
        _, top = to_pixels((x, high))
        obstacles.append((px - 2, bottom, px + 2, top))
    for x0, y0, x1, y1 in segments:
        (ax, ay), (bx, by) = to_pixels((x0, y0)), to_pixels((x1, y1))
        obstacles.append((min(ax, bx) - 2, min(ay, by) - 2, max(ax, bx) + 2, max(ay, by) + 2))
    for label, x, y, _, _ in sorted(points, key=lambda p: (p[1], -p[2])):
        px, py = to_pixels((x, y))
        probe = axes.text(x, y, label, fontsize=8)
        extent = probe.get_window_extent(renderer)
        probe.remove()
        width, height = extent.width, extent.height
        best: tuple[float, tuple[float, float, float, float], int] | None = None
        for index, (dx, dy, ha) in enumerate(_SPOTS):
            left = px + dx * scale - {"left": 0.0, "right": width, "center": width / 2}[ha]
            bottom = py + dy * scale - height / 2
            box = (left, bottom, left + width, bottom + height)
            cost = sum(_overlap(box, other) for other in obstacles)
            cost += 4 * (width * height - _overlap(box, bounds))  # outside the axes
            if best is None or cost < best[0]:
                best = (cost, box, index)
            if cost == 0:
                break
        assert best is not None
        _, box, index = best
        dx, dy, ha = _SPOTS[index]
        far = abs(dy) > 12
        axes.annotate(
            label,
            (x, y),
            xytext=(dx, dy),
            textcoords="offset points",
            fontsize=8,
            ha=ha,
            va="center",
            annotation_clip=False,
            arrowprops={"arrowstyle": "-", "color": "0.55", "lw": 0.6, "shrinkB": 5}
            if far
            else None,
        )
        obstacles.append(box)


def accuracy_figure(summaries: Sequence[ModeSummary], pareto: Sequence[str]) -> Figure:
    """``accuracy.png``: accuracy (95% Wilson bars) against mean total tokens per question.

    One point per label, coloured by mode (a protocol row shares its mode's colour, with
    a marker of its own); the Pareto front's points ringed and joined by a step line
    (the best accuracy reached at or below each budget). The x axis is logarithmic when
    the budgets span a factor of 8 or more.

    Args:
        summaries: The labels' summaries.
        pareto: The labels on the Pareto front, fewest tokens first.

    Returns:
        The figure, on an Agg canvas (``figure.savefig(stream, format="png")``).
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.lines import Line2D
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    figure = Figure(figsize=(8.0, 5.6), dpi=100)
    FigureCanvasAgg(figure)
    # Fixed margins rather than a layout engine: the labels are placed in pixels before
    # the figure is drawn, and a constrained layout would draw it twice more.
    figure.subplots_adjust(left=0.08, right=0.98, bottom=0.09, top=0.94)
    axes = figure.add_subplot()
    palette = [f"C{i}" for i in range(10)]
    modes = list(dict.fromkeys(_mode_of(s) for s in summaries))
    colour_of = {mode: palette[i % len(palette)] for i, mode in enumerate(modes)}
    marker_index: dict[str, int] = {}
    for summary in summaries:
        mode = _mode_of(summary)
        if summary.decision == PLURALITY:
            marker = "o"
        else:
            marker = _MARKERS[marker_index.get(mode, 0) % len(_MARKERS)]
            marker_index[mode] = marker_index.get(mode, 0) + 1
        x, y = summary.tokens, summary.accuracy
        axes.errorbar(
            [x],
            [y],
            yerr=[[y - summary.ci_low], [summary.ci_high - y]],
            fmt=marker,
            color=colour_of[mode],
            capsize=3,
            markersize=6,
            clip_on=False,
        )
    on_front = set(pareto)
    front = [s for s in summaries if s.mode in on_front]
    front.sort(key=lambda s: (s.tokens, -s.accuracy))
    handles = []
    if front:
        axes.step(
            [s.tokens for s in front],
            [s.accuracy for s in front],
            where="post",
            color="0.35",
            linestyle="--",
            linewidth=1,
            zorder=1,
        )
        axes.scatter(
            [s.tokens for s in front],
            [s.accuracy for s in front],
            s=190,
            facecolors="none",
            edgecolors="black",
            linewidths=1.2,
            zorder=3,
            clip_on=False,
        )
        handles.append(
            Line2D(
                [],
                [],
                color="0.35",
                linestyle="--",
                marker="o",
                markersize=11,
                markerfacecolor="none",
                markeredgecolor="black",
                label="Pareto front",
            )
        )
    positive = [s.tokens for s in summaries if s.tokens > 0]
    if len(positive) == len(summaries) and positive and max(positive) >= 8 * min(positive):
        axes.set_xscale("log")
        # Ticks at 1, 2 and 5 times each power of ten, as plain numbers (1,000 rather
        # than 10^3, which mathtext also renders slowly).
        axes.xaxis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0)))
        axes.xaxis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:,.0f}"))
        axes.xaxis.set_minor_formatter(NullFormatter())
    if not summaries:
        axes.text(0.5, 0.5, "no results", ha="center", va="center", transform=axes.transAxes)
    axes.set_xlabel("mean total tokens per question (prompt + completion)")
    axes.set_ylabel("accuracy (95% Wilson interval)")
    axes.set_ylim(-0.03, 1.05)  # a point at 0 is drawn whole
    axes.margins(x=0.2)  # room for the labels beside the outermost points
    axes.set_title(
        f"Accuracy against tokens per question ({_n_label([s.n for s in summaries])} questions)"
    )
    axes.grid(alpha=0.3)
    if handles:
        axes.legend(handles=handles, loc="best", fontsize=8)
    steps = [(a.tokens, a.accuracy, b.tokens, a.accuracy) for a, b in itertools.pairwise(front)]
    steps += [(b.tokens, a.accuracy, b.tokens, b.accuracy) for a, b in itertools.pairwise(front)]
    _place_labels(
        figure,
        axes,
        [(s.mode, s.tokens, s.accuracy, s.ci_low, s.ci_high) for s in summaries],
        steps,
    )
    return figure


def _nan(value: float | None) -> float:
    """``None`` as NaN (a gap in a line)."""
    return math.nan if value is None else value


def dynamics_figure(dynamics: Sequence[ModeDynamics]) -> Figure:
    """``dynamics.png``: per round and debate mode, accuracy, then flips and conformity.

    Left panel: the agents' accuracy (solid, its 95% Wilson band shaded) and the round's
    plurality decision's accuracy (dashed, 95% Wilson bars). Right panel, from round 2:
    the flip-to-wrong rate (of the solvers right the round before), the flip-to-right rate
    (of those wrong) and conformity (of those off the previous plurality, the share that
    moved to it). With no debate mode the figure says so.

    Args:
        dynamics: The debate modes' dynamics.

    Returns:
        The figure, on an Agg canvas.
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.lines import Line2D
    from matplotlib.ticker import MaxNLocator

    if not dynamics:
        figure = Figure(figsize=(6.4, 3.2), dpi=100, layout="constrained")
        FigureCanvasAgg(figure)
        axes = figure.add_subplot()
        axes.set_axis_off()
        axes.text(
            0.5,
            0.5,
            "no debate modes (2+ rounds) in this eval:\nno dynamics to plot",
            ha="center",
            va="center",
            transform=axes.transAxes,
        )
        return figure
    figure = Figure(figsize=(11.0, 4.6), dpi=100)
    FigureCanvasAgg(figure)
    figure.subplots_adjust(left=0.06, right=0.99, bottom=0.11, top=0.93, wspace=0.16)
    accuracy, moves = figure.subplots(1, 2)
    mode_handles = []
    last = max(len(d.summary.rounds) for d in dynamics)
    for index, entry in enumerate(dynamics):
        colour = f"C{index % 10}"
        rounds = entry.summary.rounds
        xs = [r.round for r in rounds]
        shift = 0.04 * (index - (len(dynamics) - 1) / 2)  # bars of several modes side by side
        agents = [r.agent_accuracy for r in rounds]
        accuracy.plot(xs, agents, color=colour, marker="o", linestyle="-")
        accuracy.fill_between(
            xs,
            [r.agent_ci[0] for r in rounds],
            [r.agent_ci[1] for r in rounds],
            color=colour,
            alpha=0.15,
            linewidth=0,
        )
        decided = [r.decision_accuracy for r in rounds]
        accuracy.errorbar(
            [x + shift for x in xs],
            decided,
            yerr=[
                [d - r.decision_ci[0] for d, r in zip(decided, rounds, strict=True)],
                [r.decision_ci[1] - d for d, r in zip(decided, rounds, strict=True)],
            ],
            color=colour,
            marker="s",
            linestyle="--",
            capsize=3,
        )
        later = [r for r in rounds if r.round >= 2]
        later_x = [r.round + shift for r in later]
        for values, style, marker in (
            ([_nan(r.flip_to_wrong) for r in later], "-", "v"),
            ([_nan(r.flip_to_right) for r in later], "--", "^"),
            ([_nan(r.conformity) for r in later], ":", "s"),
        ):
            moves.plot(later_x, values, color=colour, linestyle=style, marker=marker)
        mode_handles.append(
            Line2D(
                [],
                [],
                color=colour,
                linewidth=6,
                label=f"{entry.mode} (n = {entry.summary.threads})",
            )
        )
    black = "0.2"
    accuracy.legend(
        handles=[
            *mode_handles,
            Line2D([], [], color=black, marker="o", label="agents (95% band)"),
            Line2D([], [], color=black, marker="s", linestyle="--", label="plurality decision"),
        ],
        fontsize=8,
        loc="best",
    )
    moves.legend(
        handles=[
            Line2D([], [], color=black, marker="v", label="flip to wrong (of right)"),
            Line2D(
                [], [], color=black, marker="^", linestyle="--", label="flip to right (of wrong)"
            ),
            Line2D([], [], color=black, marker="s", linestyle=":", label="conformity (of movers)"),
        ],
        fontsize=8,
        loc="best",
    )
    if last < 2:
        moves.text(
            0.5,
            0.5,
            "one round only: no flips",
            ha="center",
            va="center",
            transform=moves.transAxes,
        )
    for axes, title, label, first in (
        (accuracy, "Accuracy per round", "accuracy", 1),
        (moves, "Flips and conformity per round", "rate", min(2, last)),
    ):
        axes.set_title(title)
        axes.set_xlabel("round")
        axes.set_ylabel(label)
        axes.set_ylim(-0.03, 1.05)
        axes.set_xlim(first - 0.3, last + 0.3)
        if last - first < 8:  # a tick per round (a locator may pick fractions of one)
            axes.set_xticks(range(first, last + 1))
        else:
            axes.xaxis.set_major_locator(MaxNLocator(integer=True))
        axes.grid(alpha=0.3)
    return figure
