"""The key search itself: :func:`tests.backends.decoded_dump` sees a key wherever it is stored.

Every "no API key is written" test searches what a run wrote with ``decoded_dump``. Here
a key is planted where a leak would put it (a turn's content in graph state, the run's
config, an inbox item in the store, an archived transcript), on both checkpoint
backends, and the search must find it: checkpoints are stored compressed
(``msgpack+z1``), so a search of the SQLite file's raw bytes would not.
"""

from __future__ import annotations

import secrets
from pathlib import Path

from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.runnables import RunnableConfig

from debategraph import build_solver_debate, recursion_limit, registry
from debategraph.checkpoints import open_checkpointer, open_store, thread_config
from debategraph.checkpoints.archive import archive_debate
from debategraph.checkpoints.inbox import INTERJECT, post
from tests.backends import decoded_dump
from tests.fake_model import ScriptedChatModel, tool_reply

QUESTION = "Natalia sold 48 clips in April and half as many in May. How many in total?"


def planted(key: str) -> ScriptedChatModel:
    """A model whose every answer carries ``key`` in its reasoning (a turn's content)."""

    def respond(messages: list[BaseMessage]) -> AIMessage:
        args = {"reasoning": f"48 + 24 = 72, and the key is {key}", "answer": "72"}
        return tool_reply("SolverReply", {**args, "confidence": 0.9})

    return ScriptedChatModel(respond=respond)


def run_with_key(db: str, key: str, thread_id: str = "t") -> dict[str, object]:
    """A two-solver debate whose turns hold ``key``, checkpointed in ``db``."""
    graph = build_solver_debate(planted(key), agents=2, max_rounds=2)
    with open_checkpointer(db) as saver:
        compiled = graph.compile(checkpointer=saver)
        config: RunnableConfig = {
            **thread_config(thread_id),
            "recursion_limit": recursion_limit(compiled),
        }
        compiled.invoke({"question": QUESTION}, config)
        values: dict[str, object] = compiled.get_state(config).values
    return values


def test_a_key_in_graph_state_is_found_on_either_backend(checkpoint_url: str) -> None:
    key = f"sk-planted-{secrets.token_hex(12)}"
    run_with_key(checkpoint_url, key)
    dump = decoded_dump(checkpoint_url)
    assert key in dump
    if not checkpoint_url.startswith("postgresql://"):
        # Compressed: the raw bytes do not show it (why the search decodes).
        assert key.encode() not in Path(checkpoint_url).read_bytes()


def test_a_key_in_the_runs_config_is_found(checkpoint_url: str) -> None:
    key = f"sk-config-{secrets.token_hex(12)}"
    graph = build_solver_debate(planted("no key here"), agents=2, max_rounds=2)
    with open_checkpointer(checkpoint_url) as saver:
        compiled = graph.compile(checkpointer=saver)
        config: RunnableConfig = {
            "configurable": {"thread_id": "c", "leaked": key},
            "metadata": {"leaked_too": key},
            "recursion_limit": recursion_limit(compiled),
        }
        compiled.invoke({"question": QUESTION}, config)
    assert key in decoded_dump(checkpoint_url)


def test_a_key_in_the_store_is_found(checkpoint_url: str) -> None:
    key = f"sk-inbox-{secrets.token_hex(12)}"
    with open_store(checkpoint_url) as store:
        post(store, "t", INTERJECT, f"here is {key}")
    assert key in decoded_dump(checkpoint_url)


def test_a_key_in_an_archive_or_another_file_is_found(tmp_path: Path) -> None:
    key = f"sk-archive-{secrets.token_hex(12)}"
    db = str(tmp_path / "d.sqlite")
    values = run_with_key(db, key)
    archive = tmp_path / "archive.sqlite"
    solver = registry.described("solver_debate")
    archive_debate(archive, thread_id="t", pattern=solver, values=values, status="finished")
    assert key in decoded_dump(archive)
    text = tmp_path / "export.json"
    text.write_text(f'{{"note": "{key}"}}', encoding="utf-8")
    assert key in decoded_dump(text)
