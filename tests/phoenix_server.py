"""Arize Phoenix, a real OTLP receiver a user would run, started by a test (``phoenix serve``).

Phoenix installs from PyPI (``arize-phoenix``) with about 60 packages, some at versions the
dev environment does not take (it would move ``python-dateutil`` and ``tenacity`` back),
so it lives in a virtual environment of its own: ``.ci/run`` makes ``.venv-phoenix`` at the
repository's root; ``DEBATEGRAPH_PHOENIX`` may name another ``phoenix`` script. Without one
the test skips, or fails in one line where the real parts are required
(:func:`tests.backends.missing_part`).
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.backends import missing_part
from tests.studio_server import free_port, launched

PHOENIX_ENV = "DEBATEGRAPH_PHOENIX"
VENV = Path(__file__).resolve().parent.parent / ".venv-phoenix"
INSTALL = "python3 -m venv .venv-phoenix && .venv-phoenix/bin/pip install arize-phoenix"
#: Phoenix migrates its SQLite database and loads its app first: 40 s on a busy machine.
STARTUP_TIMEOUT_S = 240.0


class PhoenixError(RuntimeError):
    """Phoenix exited or did not answer in time (the message holds its log's end)."""


@dataclass(frozen=True)
class Phoenix:
    """A running Phoenix: its URL (the OTLP/HTTP endpoint too) and its log."""

    url: str
    log_path: Path

    def spans(self, project: str = "default") -> list[dict[str, Any]]:
        """Every span Phoenix holds for ``project``, read back through its REST API.

        A project Phoenix does not know (yet: it makes one with its first span) holds none.
        """
        found: list[dict[str, Any]] = []
        cursor = ""
        while True:
            page = f"{self.url}/v1/projects/{project}/spans?limit=1000{cursor}"
            try:
                with urllib.request.urlopen(page, timeout=10) as response:
                    body = json.loads(response.read())
            except urllib.error.HTTPError as exc:
                if exc.code == 404 and not found:
                    return found
                raise
            found.extend(body["data"])
            if not body.get("next_cursor"):
                return found
            cursor = f"&cursor={body['next_cursor']}"


def phoenix_script() -> str:
    """The ``phoenix`` script to run: ``DEBATEGRAPH_PHOENIX``, else ``.venv-phoenix``'s."""
    named = os.environ.get(PHOENIX_ENV, "").strip()
    script = Path(named) if named else VENV / "bin" / "phoenix"
    if not (script.is_file() and os.access(script, os.X_OK)):
        missing_part(f"Arize Phoenix is not installed ({script} is not there)", INSTALL)
    return str(script)


def _healthy(url: str) -> bool:
    try:
        with urllib.request.urlopen(url + "/healthz", timeout=2) as response:
            return bool(response.status == 200)
    except OSError:
        return False


@contextlib.contextmanager
def phoenix_server(folder: Path | None = None) -> Iterator[Phoenix]:
    """Start ``phoenix serve`` on free ports in a folder of its own; stop it at the end.

    Args:
        folder: Its working folder (its database) and log (a temporary folder by default).

    Yields:
        The running Phoenix.

    Raises:
        PhoenixError: If it exits, or does not answer ``GET /healthz`` in time.
    """
    script = phoenix_script()
    work = folder or Path(tempfile.mkdtemp(prefix="phoenix-"))
    work.mkdir(parents=True, exist_ok=True)

    def launch(port: int) -> tuple[list[str], dict[str, str]]:
        env = {
            **os.environ,
            "PHOENIX_HOST": "127.0.0.1",
            "PHOENIX_PORT": str(port),
            "PHOENIX_GRPC_PORT": str(free_port()),
            "PHOENIX_WORKING_DIR": str(work),
            "PHOENIX_TELEMETRY_ENABLED": "false",
        }
        return [script, "serve"], env

    with launched(
        "phoenix serve",
        launch,
        healthy=_healthy,
        cwd=work,
        log_name=lambda _attempt, port: f"phoenix-{port}.log",
        startup_timeout_s=STARTUP_TIMEOUT_S,
        error=PhoenixError,
        poll_s=0.5,
    ) as server:
        yield Phoenix(server.url, server.log_path)
