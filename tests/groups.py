"""Which tests share an xdist worker (the suite runs with ``-n 4 --dist loadgroup``).

Marks are set where the tests are written, so xdist reads them at collection: a hook
adding them later runs after xdist's worker has turned them into node ids.
"""

from __future__ import annotations

import pytest

#: The embedded model's end-to-end tests (``tests/test_embedded.py``): one worker, one
#: llama.cpp server at a time (four at once on two cores made calls time out).
EMBEDDED = [pytest.mark.embedded, pytest.mark.xdist_group("embedded")]
#: The embedded model's benchmark and doctor tests: a second worker beside the first, so the
#: two longest chains of the suite run at once (each server on one thread: conftest.py).
EMBEDDED_BENCH = [pytest.mark.embedded, pytest.mark.xdist_group("embedded-bench")]


def one_worker(module: str) -> pytest.MarkDecorator:
    """The mark of a module whose tests share a server started once per module."""
    return pytest.mark.xdist_group(module)
