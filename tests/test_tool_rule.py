"""One rule for tools on the embedded model, read from specs or from the graph's binding.

:func:`~debategraph.models.choice.goes_to_embedded` (what the CLI checks before a run,
from specs alone) and :func:`~debategraph.models.choice.without_tool_calls` (what
``agent_of`` checks when the graph is built, from its binding) are one rule: for every
agent's own model and run's model they agree.
"""

from __future__ import annotations

from typing import Any

import pytest

from debategraph.models.binding import ModelBinding
from debategraph.models.choice import goes_to_embedded, without_tool_calls
from debategraph.models.spec import ModelSpec

OWN = [None, ModelSpec("local"), ModelSpec("gpt-4o-mini"), ModelSpec("m", "http://h:1/v1")]
RUN = [ModelSpec("local"), ModelSpec("gpt-4o-mini", "http://run:1/v1")]


def binding(run: ModelSpec) -> ModelBinding:
    """The graph's binding of ``run``, as far as the rule reads it (no server started)."""
    chat: Any = object()
    return ModelBinding(
        chat, "json_schema", "http://x/v1", name=run.label, tool_calls=not run.is_local
    )


@pytest.mark.parametrize("run", RUN, ids=lambda r: r.label)
@pytest.mark.parametrize("own", OWN, ids=lambda o: "none" if o is None else o.label)
def test_the_spec_and_binding_readings_agree(own: ModelSpec | None, run: ModelSpec) -> None:
    embedded = goes_to_embedded(own, run)
    assert embedded == (without_tool_calls(own, binding(run)) is not None)
    local_own = own is not None and own.is_local
    assert embedded == (local_own or (run.is_local and (own is None or own.base_url is None)))
