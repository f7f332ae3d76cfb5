"""The public API: ``debategraph.__all__``, written once, imported on first use."""

from __future__ import annotations

import subprocess
import sys

import debategraph
from debategraph import registry


def test_type_checkers_see_every_builtin_factory() -> None:
    # The TYPE_CHECKING block (read by _homes) names each factory of the registry's lines.
    assert registry.factories().items() <= debategraph._homes().items()


def test_every_public_name_is_there_and_the_import_is_light() -> None:
    for name in debategraph.__all__:
        assert getattr(debategraph, name) is not None
    assert {"open_checkpointer", "termination", "render_report_markdown"} <= set(
        debategraph.__all__
    )
    code = (
        "import sys, debategraph; debategraph.__all__; "
        "print(sorted(n for n in ('langgraph', 'langchain_core', 'pydantic') if n in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
