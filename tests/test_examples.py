"""Every factory's ``Example:`` runs, as written, against an OpenAI-compatible server.

The example is the fenced block in the factory's docstring. It builds its model with
``ChatOpenAI(...)``, which reads ``OPENAI_BASE_URL`` and ``OPENAI_API_KEY``: here they
point at the stub server, which answers every request from the request alone (JSON built
from a requested schema, tool arguments from a tool's schema, else ``stub reply``). The
README's examples use the same public API (``tests/test_readme_claims.py``).
"""

from __future__ import annotations

import re
import textwrap

import pytest

import debategraph
from debategraph import registry
from tests.openai_stub import StubOpenAIServer

EXAMPLE = re.compile(r"\n\s*Example:\n\s*```python\n(.*?)\n\s*```", re.DOTALL)


def example_of(factory_name: str) -> str:
    doc = getattr(debategraph, factory_name).__doc__ or ""
    match = EXAMPLE.search(doc)
    assert match, f"{factory_name}'s docstring has no Example: with a ```python block"
    return textwrap.dedent(match.group(1))


def test_the_public_api_is_small() -> None:
    assert sorted(debategraph.__all__) == sorted(
        [
            *registry.factories(),
            "recursion_limit",
            "as_tool",
            "Context",
            "ModelSpec",
            "Debater",
            "Persona",
            "Participant",
            "AgentSpec",
            "Stage",
            "Turn",
            "Usage",
            "DebategraphError",
            "UsageError",
            "ResumeRefused",
            "ModelUnavailableError",
            "open_checkpointer",
            "termination",
            "render_report_markdown",
            "enable_tracing",
        ]
    )
    for name in debategraph.__all__:
        assert getattr(debategraph, name) is not None


@pytest.mark.parametrize("factory_name", sorted(registry.factories()))
def test_example_runs(
    factory_name: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code = example_of(factory_name)
    # Compiled graphs carry their own recursion limit: no example passes one.
    assert "from debategraph import" in code and "recursion_limit" not in code
    with StubOpenAIServer() as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-stub")
        exec(compile(code, f"<{factory_name} example>", "exec"), {"__name__": "example"})
        assert server.requests, "the example called no model"
    printed = capsys.readouterr().out
    assert printed.strip(), "the example printed nothing"
