"""Where a turn is on its thread's page: its element id, and a link to it from elsewhere."""

from __future__ import annotations

from debategraph.state.records import Turn
from debategraph.views.shell import esc, said


def turn_anchor(turn_id: str) -> str:
    """The element id of a turn on the page (``turn-<id>``), the target of its links.

    Args:
        turn_id: The turn's :attr:`~debategraph.state.records.Turn.id`.

    Returns:
        The id.
    """
    return f"turn-{turn_id}"


def turn_link(turn: Turn) -> str:
    """A link to a turn on its page, reading ``agent, round N``.

    Args:
        turn: The turn.

    Returns:
        The ``<a>`` element.
    """
    return f'<a href="#{esc(turn_anchor(turn.id))}">{said(turn.agent)}, round {turn.round}</a>'
