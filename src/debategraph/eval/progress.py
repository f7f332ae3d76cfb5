"""How far an eval is: questions done, each mode's running accuracy, calls in flight.

The figures only; the CLI draws them (a bar on a terminal, a line every few seconds
elsewhere). A question is done when every listed mode has answered it; a matched vote's
threads (after the listed modes') are counted on their own. At the end,
:func:`threads_line` says how the run got its finished threads (the words the terminal
and ``report.html`` show for ``results.json``'s ``meta.threads``).
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field

from debategraph.eval.records import Outcome
from debategraph.words import plural


def threads_line(counts: Mapping[str, int]) -> str:
    """How a run got its threads, from ``meta.threads``, every one of them finished.

    ``meta.threads`` counts the threads that ended finished by how this run found them:
    ``started`` (run from their start), ``resumed`` (from an earlier run's last step)
    and ``finished`` (already finished: read back from the checkpoints without a model
    call). A thread whose calls kept failing (``errored``) is in none of them.

    Args:
        counts: ``meta.threads``.

    Returns:
        ``80 threads finished: 80 started, 0 resumed, 0 read back from checkpoints``.
    """
    started, resumed = counts.get("started", 0), counts.get("resumed", 0)
    read = counts.get("finished", 0)
    return (
        f"{plural(started + resumed + read, 'thread')} finished: {started} started, "
        f"{resumed} resumed, {read} read back from checkpoints"
    )


@dataclass
class Tally:
    """The running counts of an eval's (question, mode) outcomes.

    Attributes:
        modes: The listed modes (a question is done when all of them answered it).
        total: The questions (each epoch's asking of a question counts as one).
        done: Questions every listed mode answered.
        started: When the run started (``time.monotonic``).
    """

    modes: tuple[str, ...]
    total: int
    done: int = 0
    started: float = field(default_factory=time.monotonic)
    _right: dict[str, int] = field(default_factory=dict)
    _seen: dict[str, int] = field(default_factory=dict)
    _pending: dict[tuple[int, int], int] = field(default_factory=dict)

    def count(self, outcome: Outcome) -> bool:
        """Count one (question, mode) outcome.

        Args:
            outcome: What the mode answered (its plurality row).

        Returns:
            Whether it is the last listed mode of its question (the question is done).
        """
        mode = outcome.mode
        self._seen[mode] = self._seen.get(mode, 0) + 1
        self._right[mode] = self._right.get(mode, 0) + outcome.correct
        if mode not in self.modes:
            return False
        left = self._pending.get(outcome.key, len(self.modes)) - 1
        self._pending[outcome.key] = left
        self.done += left == 0
        return left == 0

    def accuracy(self, mode: str) -> str:
        """``debate-full 0.67``: a mode's accuracy so far.

        Args:
            mode: A mode with an outcome counted.

        Returns:
            The mode and its accuracy, to 2 decimals.
        """
        return f"{mode} {self._right[mode] / self._seen[mode]:.2f}"

    def running(self) -> str:
        """Each listed mode's accuracy so far (those with an outcome), in plan order.

        Returns:
            ``single 0.50 · vote 0.67``.
        """
        return " · ".join(self.accuracy(m) for m in self.modes if self._seen.get(m))

    def status(self) -> str:
        """How far the run is: questions done, calls in flight, time so far, any rate limit.

        Returns:
            One line.
        """
        from debategraph.models.limits import calls_in_flight
        from debategraph.models.pacing import waiting_note

        seconds = int(time.monotonic() - self.started)
        waiting = waiting_note()
        return (
            f"eval: {self.done}/{self.total} questions done · {calls_in_flight()} model "
            f"call(s) in flight · {seconds // 60}m{seconds % 60:02d}s"
            + (f" · {waiting}" if waiting else "")
        )
