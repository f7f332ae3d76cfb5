"""``notebooks/open_agents.ipynb`` runs in CI: a mixed roster on two stub endpoints.

The notebook starts the test suite's stub server twice (endpoints A and B) and runs one
debate whose debaters have a model of their own (A), a model and the calculator (B), and
an agent of their own (a prebuilt ReAct agent with its own tool, B), judged on A; then a
graph built without models gets them from the run's context (``Context.agent_models``),
as LangGraph Studio and ``langgraph dev`` pass them. No embedded model is needed.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.notebooks import run_notebook

pytestmark = pytest.mark.slow  # a notebook's kernel


@pytest.mark.timeout(400)
def test_open_agents_notebook_runs_a_mixed_roster(tmp_path: Path) -> None:
    text, nb = run_notebook("open_agents.ipynb", tmp_path, timeout_s=300)
    errors = [
        o for c in nb.cells if c.cell_type == "code" for o in c.outputs if o.output_type == "error"
    ]
    assert not errors, errors
    fast = re.search(r"endpoint A: (\S+)", text)
    slow = re.search(r"endpoint B: (\S+)", text)
    assert fast and slow, text
    a, b = fast.group(1), slow.group(1)
    assert "termination: rounds_completed | rounds: 2" in text, text
    assert "winner: Cy" in text, text
    # Every turn names its model; tool calls come as records before the turn they served.
    calculator = 'calculator({"expression": "1200000 / 48"}) = 25000'
    lane_cost = 'lane_cost({"kilometres": 8}) = 1,200,000'
    for r in (1, 2):
        assert f"[round {r}] Ann via fast-model@{a}: Ann:" in text, text
        assert f"[round {r}] Bob -> tool {calculator}" in text, text
        assert f"[round {r}] Bob via tool-model@{b}: Bob:" in text, text
        assert f"[round {r}] Cy -> tool {lane_cost}" in text, text
        assert f"[round {r}] Cy via agent:cy_planner: Cy:" in text, text
    assert f"judge via judge-model@{a}" in text, text
    # Usage per model: Ann 2 calls, the judge 1; Bob 2 rounds x (tool call + answer); Cy's
    # agent the same, on its own model.
    assert f"fast-model@{a}: 2 calls" in text, text
    assert f"judge-model@{a}: 1 calls" in text, text
    assert f"tool-model@{b}: 4 calls" in text, text
    assert "agent:cy_planner: 4 calls" in text, text
    assert "requests answered: endpoint A 3 | endpoint B 8" in text, text
    # The context names Bob's model: Ann (the run's model) on A, Bob on B, one call each.
    context_part = text.split("requests answered: endpoint A 3 | endpoint B 8", 1)[1]
    assert f"fast-model@{a}: 1 calls" in context_part, text
    assert f"tool-model@{b}: 1 calls" in context_part, text
    assert "requests answered: endpoint A 1 | endpoint B 1" in context_part, text
