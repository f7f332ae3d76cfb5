"""Each pattern's CLI declaration (its command and rendering), one module per pattern.

A pattern's module defines ``PATTERN``, a
:class:`~debategraph.cli.patterns.declaration.Pattern` named by its registry line; the
helpers they share are in :mod:`debategraph.cli.patterns.shared`. What a pattern is
(titles, result fields, rounds) is not here: :func:`debategraph.registry.described`.
"""

from __future__ import annotations

from debategraph import registry
from debategraph.cli.patterns.declaration import Pattern


def get_pattern(name: str) -> Pattern:
    """The CLI declaration of the pattern called ``name`` (imported on first use).

    Only the CLI asks for it (the command, the headline and progress lines); what the
    pattern is comes from :func:`debategraph.registry.described`.

    Args:
        name: A pattern name, e.g. from a thread's metadata.

    Returns:
        The pattern's declaration.

    Raises:
        UsageError: If this version does not know it.
    """
    pattern: Pattern = registry.entry(name).declaration()
    return pattern
