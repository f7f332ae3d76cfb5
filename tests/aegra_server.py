"""Run ``debategraph serve`` (Aegra on PostgreSQL) in a subprocess for tests and benchmarks.

:func:`aegra_server` starts ``debategraph serve --db-env VAR --host 127.0.0.1 --port PORT``
(the URL, password included, in ``VAR`` of the server's environment: never on a command
line, which ``serve`` refuses) in its own process group, waits for ``GET /health`` to
report the database connected, yields an :class:`AegraServer` (its ``url`` is the base
URL for ``langgraph_sdk``), and stops the group at the end, also when the body raised.
Several servers on one database are several calls with the same URL;
:meth:`AegraServer.kill` is ``kill -9``.

"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import urllib.request
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.studio_server import _tail, launched

STARTUP_TIMEOUT_S = 120.0
HEALTH_PATH = "/health"


class AegraServerError(RuntimeError):
    """``debategraph serve`` did not come up."""


@dataclass
class AegraServer:
    """A running ``debategraph serve``.

    Attributes:
        url: Base URL, e.g. ``http://127.0.0.1:PORT``.
        process: The server process (the leader of its own process group).
        log_path: Where its stdout and stderr go.
        startup_s: Seconds from spawning it to the first healthy ``GET /health``.
    """

    url: str
    process: subprocess.Popen[bytes]
    log_path: Path
    startup_s: float

    @property
    def pid(self) -> int:
        """The server's process id."""
        return self.process.pid

    def log_tail(self, chars: int = 4000) -> str:
        """The end of the server's log (for failure messages)."""
        return _tail(self.log_path, chars)

    def kill(self) -> None:
        """``kill -9`` the server's process group and reap it."""
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=30)


def healthy(url: str) -> bool:
    """Whether the server answers ``GET /health`` with its database connected."""
    try:
        with urllib.request.urlopen(url + HEALTH_PATH, timeout=2) as response:
            return bool(json.loads(response.read()).get("database") == "connected")
    except (OSError, ValueError):
        return False


#: The variable ``serve --db-env`` reads a test server's database URL from.
DB_ENV = "DEBATEGRAPH_TEST_SERVE_DB"


def serve_command(db: str, port: int, *args: str, typed: bool = False) -> list[str]:
    """The command line of ``debategraph serve`` in this interpreter's environment.

    The URL is not on it: :data:`DB_ENV` holds it, set in this process's environment
    too, so a command run with that environment as it is (``subprocess.run`` with no
    ``env``) reads it. The variable holds the URL of the latest command made.

    Args:
        db: The PostgreSQL URL.
        port: The port to listen on.
        *args: More ``debategraph serve`` arguments.
        typed: Give the URL with ``--db`` on the command line instead (``serve`` refuses
            one that holds a password).

    Returns:
        The command line.
    """
    if not typed:
        os.environ[DB_ENV] = db
    return [
        sys.executable,
        "-m",
        "debategraph.cli",
        "serve",
        *(["--db", db] if typed else ["--db-env", DB_ENV]),
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        *args,
    ]


def models_file(folder: Path, endpoints: Mapping[str, str], **fields: Any) -> Path:
    """The operator's model list naming each stub: ``name`` -> its base URL.

    Each model is called as it is named (``model: NAME``), with no retries and a 30 s
    timeout unless ``fields`` say otherwise.

    Args:
        folder: Where to write ``models.yaml``.
        endpoints: Model name -> base URL.
        **fields: More fields of every entry.

    Returns:
        The file.
    """
    entries = [
        {"name": name, "model": name, "base_url": url, "max_retries": 0, "timeout": 30, **fields}
        for name, url in endpoints.items()
    ]
    path = folder / "models.yaml"
    path.write_text(json.dumps({"models": entries}, indent=2))
    return path


@contextlib.contextmanager
def aegra_server(
    db: str,
    *,
    logdir: Path | None = None,
    extra_args: tuple[str, ...] = (),
    env: Mapping[str, str] | None = None,
    startup_timeout_s: float = STARTUP_TIMEOUT_S,
    typed_db: bool = False,
) -> Iterator[AegraServer]:
    """Start ``debategraph serve`` on a free port; stop its process group at the end.

    Args:
        db: The PostgreSQL URL it serves from.
        logdir: Where its log goes (a temporary folder by default).
        extra_args: More ``debategraph serve`` arguments.
        env: Extra environment variables.
        startup_timeout_s: How long to wait for it to be healthy.
        typed_db: Give ``db`` with ``--db`` on the command line (with no password: put
            that in ``env``'s ``PGPASSWORD``), not in :data:`DB_ENV`.

    Yields:
        The running server.

    Raises:
        AegraServerError: If it exits or is not healthy in time (with its log's end).
    """
    folder = logdir or Path(tempfile.mkdtemp(prefix="aegra-"))
    child_env = {
        **{name: value for name, value in os.environ.items() if name != DB_ENV},
        "PYTHONUNBUFFERED": "1",
        "LANGSMITH_TRACING": "false",
        **({} if typed_db else {DB_ENV: db}),  # its own, not the URL serve_command last had
        **(env or {}),
    }
    with launched(
        "debategraph serve",
        lambda port: (serve_command(db, port, *extra_args, typed=typed_db), child_env),
        healthy=healthy,
        cwd=folder,
        log_name=lambda _attempt, port: f"serve-{port}.log",
        startup_timeout_s=startup_timeout_s,
        error=AegraServerError,
    ) as server:
        yield AegraServer(server.url, server.process, server.log_path, server.startup_s)
