"""Which tests share an xdist worker (the suite runs with ``-n 4 --dist loadgroup``).

Marks are set where the tests are written, so xdist reads them at collection: a hook
adding them later runs after xdist's worker has turned them into node ids.
"""

from __future__ import annotations

import pytest

#: The embedded model's tests run as two chains, each on one worker, beside the other
#: workers: one llama.cpp server per chain at a time, decoding on one thread (conftest.py).
#: Four servers at once on two cores made calls time out; one chain alone was the suite's
#: critical path. Each embedded test names its chain, balanced by their durations.
EMBEDDED_A = pytest.mark.xdist_group("embedded-a")
EMBEDDED_B = pytest.mark.xdist_group("embedded-b")


def one_worker(module: str) -> pytest.MarkDecorator:
    """The mark of a module whose tests share a server started once per module."""
    return pytest.mark.xdist_group(module)
