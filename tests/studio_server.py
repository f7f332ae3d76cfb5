"""Run ``langgraph dev`` (the LangGraph Studio / Agent Server) in a subprocess for tests.

:func:`studio_server` starts ``langgraph dev --config CFG --host 127.0.0.1 --port PORT
--no-browser --no-reload`` with ``LANGGRAPH_CLI_NO_ANALYTICS=1``, waits for ``GET /ok``,
yields a :class:`StudioServer` (its ``url`` is the base URL for ``langgraph_sdk``), and
always stops the whole process group at the end, also when the body raised.

The server runs in its own working directory (a temporary one by default): the in-memory
runtime pickles its threads and checkpoints to ``./.langgraph_api/`` of its working
directory, which must not land in the repository nor leak state from one test run into
the next. The config it is given is the repository's ``langgraph.json`` with relative
paths (``dependencies``, graph files, an ``env`` file) made absolute, so the graphs,
ids and descriptions served are exactly the ones the repository declares.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
CONFIG = REPO_ROOT / "langgraph.json"
STARTUP_TIMEOUT_S = 90.0
STOP_TIMEOUT_S = 15.0
HEALTH_PATH = "/ok"

__all__ = [
    "CONFIG",
    "REPO_ROOT",
    "StudioServer",
    "StudioServerError",
    "closed_port",
    "free_port",
    "langgraph_cli",
    "langgraph_dev",
    "port_taken",
    "stream_parts",
    "studio_config",
    "studio_server",
]


class StudioServerError(RuntimeError):
    """``langgraph dev`` did not come up (or could not be found)."""


@dataclass(frozen=True)
class StudioServer:
    """A running ``langgraph dev`` server.

    Attributes:
        url: Base URL, e.g. ``http://127.0.0.1:PORT``.
        port: The port it listens on.
        pid: Process id (also the process group id).
        workdir: Its working directory (holds ``.langgraph_api/``, the config, the log).
        log_path: Where its stdout and stderr go.
        command: The command line it was started with.
        startup_s: Seconds from spawning it to the first good ``GET /ok``.
    """

    url: str
    port: int
    pid: int
    workdir: Path
    log_path: Path
    command: tuple[str, ...]
    startup_s: float

    def log_tail(self, chars: int = 4000) -> str:
        """The end of the server's log (for failure messages)."""
        return _tail(self.log_path, chars)


#: Where test processes reserve the ports :func:`free_port` hands out (one lock file a port).
PORT_LOCKS = Path(tempfile.gettempdir()) / "debategraph-test-ports"
#: The reservations this process holds (their locks last as long as the process).
_RESERVED: list[Any] = []


def _unused_port(host: str) -> int:
    """A port the OS reports unused now (bound to port 0, then let go)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


def free_port(host: str = "127.0.0.1") -> int:
    """A free port that no other test process gets from this function while this one lives.

    The OS picks an unused port, which is let go before a server (a child process) binds
    it, so two test processes (parallel workers) could pick the same one. Each port handed
    out is reserved with a lock on a file named after it (``fcntl.flock``, released when
    the process ends, however it ends); a port another process reserved is skipped. A port
    taken meanwhile by something that binds port 0 itself is a bind error the server
    starters retry (:func:`studio_server`, :func:`tests.aegra_server.aegra_server`).

    Args:
        host: The interface.

    Returns:
        The port, reserved for this process.
    """
    import fcntl

    PORT_LOCKS.mkdir(exist_ok=True)
    while True:
        port = _unused_port(host)
        handle = (PORT_LOCKS / str(port)).open("a")
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:  # another test process has it
            handle.close()
            continue
        _RESERVED.append(handle)
        return port


def closed_port(host: str = "127.0.0.1") -> int:
    """A port nothing listens on, while this process lives: a URL on it is refused.

    The port stays bound here and is never listened on, so no server (of this process or
    another) can take it meanwhile, as one could a port picked and let go.

    Args:
        host: The interface.

    Returns:
        The port.
    """
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind((host, 0))
    _RESERVED.append(sock)
    return int(sock.getsockname()[1])


def port_taken(log_text: str) -> bool:
    """Whether a server's log says its port was taken (so starting it again may work)."""
    return "address already in use" in log_text.lower()


def langgraph_cli() -> str | None:
    """The ``langgraph`` script of this interpreter's environment, else one on ``PATH``."""
    beside = Path(sys.executable).with_name("langgraph")
    if beside.is_file() and os.access(beside, os.X_OK):
        return str(beside)
    return shutil.which("langgraph")


def studio_config(
    config: Path = CONFIG, root: Path = REPO_ROOT, overrides: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """``config`` with every path relative to ``root`` made absolute.

    Args:
        config: A ``langgraph.json``.
        root: The directory its relative paths are relative to.
        overrides: Top-level keys to set on the result.

    Returns:
        The config, ready to be written anywhere.
    """
    data: dict[str, Any] = json.loads(config.read_text())

    def absolute(path: str) -> str:
        return str((root / path).resolve()) if not Path(path).is_absolute() else path

    data["dependencies"] = [
        absolute(dep) if dep.startswith(".") or "/" in dep else dep
        for dep in data.get("dependencies", [])
    ]
    graphs: dict[str, Any] = {}
    for graph_id, spec in data.get("graphs", {}).items():
        source = spec["path"] if isinstance(spec, dict) else spec
        where, sep, variable = str(source).rpartition(":")
        if "/" in where:  # a file path, not a dotted module name
            source = f"{absolute(where)}{sep}{variable}"
        graphs[graph_id] = {**spec, "path": source} if isinstance(spec, dict) else source
    data["graphs"] = graphs
    if isinstance(data.get("env"), str):
        data["env"] = absolute(data["env"])
    data.update(overrides or {})
    return data


def _tail(path: Path, chars: int) -> str:
    try:
        return path.read_text(errors="replace")[-chars:]
    except OSError:
        return ""


def _healthy(url: str) -> bool:
    try:
        with urllib.request.urlopen(url + HEALTH_PATH, timeout=2) as response:
            return bool(response.status == 200 and json.loads(response.read()).get("ok"))
    except (OSError, ValueError):
        return False


@dataclass(frozen=True)
class Launched:
    """A server process that answered its health check.

    Attributes:
        url: Base URL, e.g. ``http://127.0.0.1:PORT``.
        port: The port it listens on.
        process: The process (the leader of its own process group).
        log_path: Where its stdout and stderr go.
        command: The command line it was started with.
        startup_s: Seconds from spawning it to its first good health check.
    """

    url: str
    port: int
    process: subprocess.Popen[bytes]
    log_path: Path
    command: tuple[str, ...]
    startup_s: float


#: Given a free port: the command line and the environment to start a server on it.
Launch = Callable[[int], tuple[Sequence[str], Mapping[str, str]]]


@contextlib.contextmanager
def launched(
    name: str,
    launch: Launch,
    *,
    healthy: Callable[[str], bool],
    cwd: Path,
    log_name: Callable[[int, int], str],
    startup_timeout_s: float,
    error: type[Exception],
    poll_s: float = 0.2,
) -> Iterator[Launched]:
    """Start a server on a free port, wait until it is healthy, stop its process group after.

    The one start-and-wait of the suite's servers (``langgraph dev``, ``debategraph
    serve``, Phoenix): its own session (stopped whole), dying with the test process, its
    output in a log, and up to three ports tried, since one may be taken between picking
    it and binding it.

    Args:
        name: The server, for errors (``langgraph dev``).
        launch: The command line and environment for a port.
        healthy: Whether the server at a base URL answers its health check.
        cwd: Its working folder.
        log_name: The log's file name in ``cwd``, by attempt and port.
        startup_timeout_s: How long to wait for it to be healthy.
        error: The exception to raise.
        poll_s: Seconds between health checks.

    Yields:
        The healthy server.

    Raises:
        Exception: ``error``, if it exits or is not healthy in time (with its log's end).
    """
    attempts = 3
    for attempt in range(1, attempts + 1):
        port = free_port()
        url = f"http://127.0.0.1:{port}"
        command, env = launch(port)
        log_path = cwd / log_name(attempt, port)
        with log_path.open("wb") as log:
            started = time.monotonic()
            process = subprocess.Popen(
                list(command),
                cwd=cwd,
                env=dict(env),
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # own process group, so it can be stopped whole
                preexec_fn=_die_with_parent if sys.platform == "linux" else None,
            )
        try:
            while not healthy(url):
                if process.poll() is not None:
                    break
                if time.monotonic() - started > startup_timeout_s:
                    raise error(
                        f"{name} not healthy in time; log {log_path}:\n{_tail(log_path, 4000)}"
                    )
                time.sleep(poll_s)
            else:
                yield Launched(
                    url, port, process, log_path, tuple(command), time.monotonic() - started
                )
                return
        finally:
            if process.poll() is None:
                stop_group(process)
        log_text = _tail(log_path, 4000)
        if not port_taken(log_text) or attempt == attempts:
            raise error(
                f"{name} exited with code {process.returncode} before it was ready; "
                f"log {log_path}:\n{log_text}"
            )


def _group_alive(pgid: int) -> list[int]:
    """Processes of group ``pgid`` that are still running (zombies excluded)."""
    proc = Path("/proc")
    if not proc.is_dir():  # not Linux: ask the kernel about the group as a whole
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return []
        except PermissionError:
            return [pgid]
        return [pgid]
    alive = []
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        # pid (comm) state ppid pgrp ...; comm may hold spaces and parentheses
        fields = stat[stat.rfind(")") + 2 :].split()
        if len(fields) > 2 and int(fields[2]) == pgid and fields[0] not in ("Z", "X"):
            alive.append(int(entry.name))
    return alive


def _die_with_parent() -> None:  # pragma: no cover - runs in the child before exec
    """Linux: SIGTERM the server if the test process dies first (even by SIGKILL)."""
    with contextlib.suppress(Exception):
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        pr_set_pdeathsig = 1
        libc.prctl(pr_set_pdeathsig, signal.SIGTERM)


def _signal_group(pgid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


def stop_group(process: subprocess.Popen[bytes], timeout_s: float = STOP_TIMEOUT_S) -> None:
    """SIGTERM the process group, then SIGKILL what is left; reap the leader.

    Raises:
        StudioServerError: If members of the group outlive SIGKILL.
    """
    pgid = process.pid  # started with start_new_session=True: pid == pgid
    _signal_group(pgid, signal.SIGTERM)
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(timeout=timeout_s)
    deadline = time.monotonic() + timeout_s
    while _group_alive(pgid) and time.monotonic() < deadline:
        _signal_group(pgid, signal.SIGKILL)
        time.sleep(0.1)
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(timeout=5)
    left = _group_alive(pgid)
    if left:
        raise StudioServerError(f"langgraph dev processes {left} survived SIGKILL")


@contextlib.contextmanager
def studio_server(
    config: Path = CONFIG,
    *,
    workdir: Path | None = None,
    startup_timeout_s: float = STARTUP_TIMEOUT_S,
    env: Mapping[str, str] | None = None,
    extra_args: tuple[str, ...] = (),
    config_overrides: Mapping[str, Any] | None = None,
) -> Iterator[StudioServer]:
    """Start ``langgraph dev`` on a free port and stop it (and its process group) at the end.

    Args:
        config: The ``langgraph.json`` to serve (relative paths are relative to its folder).
        workdir: Working directory of the server; a temporary one (removed afterwards)
            when ``None``.
        startup_timeout_s: How long to wait for ``GET /ok``.
        env: Extra environment variables for the server.
        extra_args: Extra ``langgraph dev`` arguments.
        config_overrides: Top-level keys to set on the served config.

    Yields:
        The running server.

    Raises:
        StudioServerError: If the CLI is missing or the server does not come up in time
            (the message carries the end of its log).
    """
    cli = langgraph_cli()
    if cli is None:
        raise StudioServerError(
            "the langgraph CLI is not installed: pip install 'langgraph-cli[inmem]'"
        )
    own_dir = workdir is None
    cwd = Path(tempfile.mkdtemp(prefix="langgraph-dev-")) if workdir is None else workdir
    try:
        cwd.mkdir(parents=True, exist_ok=True)
        served = cwd / "langgraph.json"
        served.write_text(
            json.dumps(studio_config(config, config.resolve().parent, config_overrides), indent=2)
        )
        child_env = {
            **os.environ,
            "LANGGRAPH_CLI_NO_ANALYTICS": "1",
            "LANGSMITH_TRACING": "false",
            "LANGCHAIN_TRACING_V2": "false",
            "PYTHONUNBUFFERED": "1",
            **(env or {}),
        }

        def launch(port: int) -> tuple[Sequence[str], Mapping[str, str]]:
            command = (
                cli,
                "dev",
                "--config",
                str(served),
                "--host",
                "127.0.0.1",
                "--port",
                str(port),
                "--no-browser",
                "--no-reload",
                *extra_args,
            )
            return command, child_env

        with launched(
            "langgraph dev",
            launch,
            healthy=_healthy,
            cwd=cwd,
            log_name=lambda attempt, _port: f"langgraph-dev.{attempt}.log",
            startup_timeout_s=startup_timeout_s,
            error=StudioServerError,
        ) as server:
            yield StudioServer(
                url=server.url,
                port=server.port,
                pid=server.process.pid,
                workdir=cwd,
                log_path=server.log_path,
                command=server.command,
                startup_s=server.startup_s,
            )
    finally:
        if own_dir:
            shutil.rmtree(cwd, ignore_errors=True)


def stream_parts(client: Any, thread_id: str, graph: str, **kwargs: Any) -> list[tuple[str, Any]]:
    """One run of an Agent Protocol server streamed in ``updates`` mode, errors refused.

    Args:
        client: A ``langgraph-sdk`` sync client.
        thread_id: The thread.
        graph: The graph (or assistant) id.
        **kwargs: More ``runs.stream`` arguments.

    Returns:
        The run's ``(event, data)`` parts.
    """
    parts = [
        (part.event, part.data)
        for part in client.runs.stream(thread_id, graph, stream_mode=["updates"], **kwargs)
    ]
    errors = [data for event, data in parts if event == "error"]
    assert not errors, errors
    return parts


@pytest.fixture(scope="module")
def langgraph_dev() -> Iterator[StudioServer]:
    """A ``langgraph dev`` server for the repository's ``langgraph.json``, per test module."""
    with studio_server() as server:
        yield server
