"""Write ``model_labels_v1.sqlite``: a solve whose every agent turn stores its model label whole.

``tests/test_storage_per_turn.py`` reads this thread with the package as it is now, to prove
that a thread saved before turns stored their model once per agent and model (each turn
then held its label in full, ``stub@http://127.0.0.1:PORT/v1``) still reads each turn's
model in its state, ``show`` and both exports.

The point of the file is its OLD bytes. It was written with the code of commit 94ce8b3 (the
last commit before the change). Regenerate it only with such old code (the file must not
exist yet; this script refuses to overwrite it)::

    git worktree add /tmp/wt-before 94ce8b3
    PYTHONPATH=/tmp/wt-before/src:/tmp/wt-before .venv/bin/python \\
        tests/data/make_model_labels_thread.py tests/data/model_labels_v1.sqlite

The thread ``t-models``: ``solve`` with an agents file of three solvers, Ada on model
``ada``, Bo on model ``bo`` (both at the stub server) and Cy on the run's model ``stub``;
2 rounds, every solver answers 72; finished. The file is VACUUMed.
"""

from __future__ import annotations

import contextlib
import io
import sqlite3
import sys
import tempfile
from pathlib import Path
from typing import Any

import debategraph
from debategraph.cli import main
from tests.openai_stub import StubOpenAIServer

THREAD = "t-models"
QUESTION = "Natalia sold 48 clips in April and half as many in May. How many in all?"


def reply(request: dict[str, Any]) -> dict[str, Any]:
    """Every solver answers 72, naming its model in its reasoning."""
    return {"reasoning": f"{request.get('model')}: 48/2 = 24, 48 + 24 = 72.", "answer": "72"}


def write(db: Path) -> None:
    """Run the solve into ``db``."""
    with StubOpenAIServer(reply) as server, tempfile.TemporaryDirectory() as tmp:
        agents = Path(tmp) / "solvers.yaml"
        agents.write_text(
            f"- name: Ada\n  model: ada@{server.url}\n"
            f"- name: Bo\n  model: bo@{server.url}\n"
            "- name: Cy\n",
            encoding="utf-8",
        )
        args = ["solve", QUESTION, "--agents-file", str(agents), "--rounds", "2"]
        args += ["--model", "stub", "--base-url", server.url, "--db", str(db)]
        args += ["--archive", str(Path(tmp) / "archive.sqlite"), "--thread", THREAD]
        args += ["--max-retries", "0"]
        with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(SystemExit):
            main(args)
    conn = sqlite3.connect(db)
    try:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        conn.execute("PRAGMA journal_mode=DELETE")
        conn.execute("VACUUM")
    finally:
        conn.close()


if __name__ == "__main__":
    target = Path(sys.argv[1])
    if target.exists():
        sys.exit(f"{target} exists: this script never overwrites it")
    print(f"debategraph from {debategraph.__file__}")
    write(target)
    print(f"wrote {target}")
