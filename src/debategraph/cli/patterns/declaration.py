"""What a pattern declares for the CLI: its :class:`Pattern` (command and rendering).

A pattern's ``cli/patterns/<p>.py`` defines ``PATTERN``, a :class:`Pattern`, and its
registry line (:class:`debategraph.registry.Entry`) names it as a ``"module:attribute"``
string, so declaring a pattern in the registry loads no CLI. The command returns a
:class:`Launch`. What the pattern is (its title, result fields, rounds, the file a run
writes: a :class:`~debategraph.described.Described`) is written below the CLI, in
``nodes/<p>/described.py``; a declaration holds it as :attr:`Pattern.described`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from debategraph.described import Described
from debategraph.registry import Values
from debategraph.runs.start import Launch

__all__ = ["Launch", "Pattern", "Values"]


def _nothing(node: str, update: Values) -> list[str]:
    return []


@dataclass(frozen=True)
class Pattern:
    """One pattern's CLI command and terminal rendering (its ``cli/patterns`` module).

    What the pattern is (titles, result fields, rounds, the file a run writes) is its
    :attr:`described` record, written below the CLI in ``nodes/<p>/described.py`` and
    named by its registry line; this declaration adds only what a terminal needs.

    Attributes:
        described: What the pattern is (its ``DESCRIBED``).
        command: The CLI command's own options, as a typer-annotated function returning
            a :class:`Launch`; the shared options (model, ``--db``, ``--thread``,
            ``--pause-after-round``...) are added by the CLI.
        headline: The result as lines of Rich markup, from the description's
            ``summary`` fields.
        progress: Lines of Rich markup to show for one node's update, besides the
            transcript records it wrote (which the CLI prints itself).
        streams: Whether a node's model tokens are prose worth streaming (``None``: no
            node's are).
        streamed_stage: Turns of this stage, written by a node that :attr:`streams`,
            were streamed token by token, so the CLI does not print them again
            (``None``: every agent turn such a node writes was streamed).
    """

    described: Described
    command: Callable[..., Launch]
    headline: Callable[[Values], list[str]]
    progress: Callable[[str, Values], list[str]] = _nothing
    streams: Callable[[str], bool] | None = None
    streamed_stage: str | None = None

    @property
    def name(self) -> str:
        """The pattern's name (its description's, and its registry line's)."""
        return self.described.name
