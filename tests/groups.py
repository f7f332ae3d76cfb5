"""Which tests share an xdist worker (the suite runs with ``-n 4 --dist loadgroup``).

Marks are set where the tests are written, so xdist reads them at collection: a hook
adding them later runs after xdist's worker has turned them into node ids.
"""

from __future__ import annotations

import pytest

#: The embedded model's tests: one llama.cpp server at a time (each takes every core it is
#: given; four at once on two cores made each call slow enough to time out).
EMBEDDED = [pytest.mark.embedded, pytest.mark.xdist_group("embedded")]


def one_worker(module: str) -> pytest.MarkDecorator:
    """The mark of a module whose tests share a server started once per module."""
    return pytest.mark.xdist_group(module)
