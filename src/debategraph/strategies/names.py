"""Reading the agent a model meant: exact, forgiving, then fuzzy name matching.

The moderator's and judge's named winners, a discussion's addressed persona and a chat
selector's answer are all model-written names; these functions map them to the roster.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence

#: How close a misspelt name must be to a real one to be read as it (difflib ratio).
FUZZY_CUTOFF = 0.6


def match_name(value: str, names: Sequence[str]) -> str | None:
    """The agent a model meant by ``value``: exact, case-insensitive, then closest.

    Args:
        value: A name as the model wrote it.
        names: Every agent's name.

    Returns:
        The agent's name, or ``None`` if none is close enough.
    """
    key = value.strip().lower()
    lowered = {n.lower(): n for n in names}
    if key in lowered:
        return lowered[key]
    close = difflib.get_close_matches(key, list(lowered), n=1, cutoff=FUZZY_CUTOFF)
    return lowered[close[0]] if close else None


def read_name(value: str, names: Sequence[str], what: str, notes: list[str]) -> str | None:
    """:func:`match_name`, noting in ``notes`` when a name was read as another.

    Args:
        value: A name as the model wrote it.
        names: Every agent's name.
        what: Where the name came from, for the note (``judge winner``).
        notes: Where normalisations are recorded.

    Returns:
        The agent's name, or ``None`` if none is close enough.
    """
    found = match_name(value, names)
    if found is not None and found != value:
        notes.append(f"{what} {value!r} read as {found!r}")
    return found


def _squash(text: str) -> str:
    """A name without case, spaces or punctuation: ``Code-Reviewer`` -> ``codereviewer``."""
    return re.sub(r"[\W_]+", "", text.lower())


def match_speaker(value: str, names: Sequence[str]) -> str | None:
    """The agent a selector meant: the forgiving reading of a name a model wrote.

    In order: the same name ignoring case, spaces and punctuation; a unique prefix
    (``rev`` for ``Reviewer``); the one name the answer mentions (prose such as ``I think
    the Reviewer should go next.``); a close misspelling.

    Args:
        value: The selector's answer.
        names: The agents it may pick.

    Returns:
        The agent's name, or ``None`` if the answer names none (or several).
    """
    squashed = {_squash(n): n for n in names}
    key = _squash(value)
    if not key:
        return None
    if key in squashed:
        return squashed[key]
    prefixed = [n for k, n in squashed.items() if k.startswith(key)]
    if len(prefixed) == 1:
        return prefixed[0]
    words = _squash(" ".join(re.findall(r"\w+", value)))
    mentioned = [n for k, n in squashed.items() if k and k in words]
    if len(mentioned) == 1:
        return mentioned[0]
    close = difflib.get_close_matches(key, list(squashed), n=1, cutoff=0.8)
    return squashed[close[0]] if close else None
