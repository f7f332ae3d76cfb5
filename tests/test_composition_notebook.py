"""``notebooks/composition.ipynb`` runs in CI: a debate inside the apps people build.

The notebook starts the test suite's stub server and runs the four ways a pattern graph
composes: a node of a ``MessagesState`` graph, an agent of ``create_supervisor``, a tool
of ``create_react_agent`` (``as_tool``), and a subgraph paused after a round under its
parent's checkpointer and resumed with an interjection; then it streams a parent with
``subgraphs=True``. No embedded model is needed.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.notebooks import run_notebook

pytestmark = pytest.mark.slow  # a notebook's kernel

ANSWER = "The answer is 42: 3 of 3 solvers gave it (plurality)."


@pytest.mark.timeout(200)
def test_composition_notebook_runs_the_four_ways(tmp_path: Path) -> None:
    text, nb = run_notebook("composition.ipynb", tmp_path, timeout_s=120, stdout_only=True)
    errors = [
        o for c in nb.cells if c.cell_type == "code" for o in c.outputs if o.output_type == "error"
    ]
    assert not errors, errors
    lines = text.splitlines()
    # 1. A node: the debaters' turns named after them, then the judge's verdict.
    assert "human -: Cities should ban cars downtown" in lines, text
    for side in ("Affirmative", "Negative"):
        assert sum(line.startswith(f"ai    {side}: {side}:") for line in lines) == 2, text
    assert "1. node -> Affirmative wins after 2 rounds: Cleaner air." in lines, text
    # 2. An agent of a supervisor: handed over, answered, handed back, quoted.
    assert "tool  transfer_to_panel: Successfully transferred to panel" in lines, text
    assert f"2. supervisor -> Final: {ANSWER}" in lines, text
    # 3. A tool: the pattern's input as arguments, the outcome as the result, refusals as
    # the result's one line.
    assert "tool: panel | arguments: ['question', 'choices', 'answer_kind']" in lines, text
    assert f"tool result: {ANSWER}" in lines, text
    assert "artifact votes: {'42': 3} | rounds: 2" in lines, text
    assert 'refused: question is empty: give the problem text, e.g. "2+3?"' in lines, text
    assert f"3. tool -> Final: {ANSWER}" in lines, text
    # 4. Paused inside the parent, resumed with an interjection that reached round 2.
    assert "paused: round_review after round 1" in lines, text
    assert "parent waits at: ('panel',) | the panel at: ('human',)" in lines, text
    assert "round 2 prompts with the interjection: 3 of 3" in lines, text
    assert "the parent's conversation holds it: True" in lines, text
    assert f"4. paused and resumed -> {ANSWER}" in lines, text
    # Streams reach inside the subgraph: agents' names and the pattern's events.
    assert "agents streaming: solver_1, solver_2, solver_3" in lines, text
    events = [line for line in lines if line.startswith("event: ")]
    assert events[0] == "event: {'event': 'round', 'round': 1}", text
    assert "event: {'event': 'round', 'round': 2}" in events, text
    assert sum("'event': 'votes'" in e for e in events) == 2, text
    assert "'event': 'outcome'" in events[-1] and ANSWER in events[-1], text
