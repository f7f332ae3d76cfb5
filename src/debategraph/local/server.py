"""The embedded model server: a child process serving a GGUF file on 127.0.0.1.

llama.cpp's own OpenAI-compatible server (from the prebuilt, AVX2-baseline ``xllamacpp``
wheel: nothing is compiled on the user's machine) runs in a child process with one slot
per agent call a round makes at once, each slot with :data:`CTX_PER_SLOT` tokens of
context. Graphs reach it over HTTP through ``langchain-openai`` like any other endpoint.

The child dies with its parent. If it dies first (a signal, running out of memory, a bad
model file), :meth:`LocalModelServer.failure` names how, with the last line it logged, so
a failed call reports "embedded model process died (signal 11); last log line: ..."
instead of an unreachable endpoint; the next use starts a fresh server.
"""

from __future__ import annotations

import atexit
import importlib.util
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from debategraph.errors import LocalModelError, UsageError
from debategraph.local.gguf import GGUFInfo, check_gguf

RUNTIME_MODULE = "xllamacpp"
RUNTIME_INSTALL_HINT = 'install the embedded runtime with: pip install -e ".[local]"'
STARTUP_TIMEOUT_S = 120.0
#: Tokens of context per slot (prompt plus reply), unless :data:`CTX_ENV` says otherwise.
#: The most a slot held, measured with the CLI's defaults on SmolLM2: 1,961 tokens (the
#: judge of a 3-round debate, which reads every turn), 875 (a discussion of a short paper,
#: 2 iterations), 642 (4 solvers x 3 rounds on the full topology). 4,096 leaves twice the
#: largest; 4 slots then take about 520 MB (890 MB at 8,192).
CTX_PER_SLOT = 4096
#: Environment variable overriding :data:`CTX_PER_SLOT` (long full-history debates).
CTX_ENV = "DEBATEGRAPH_CTX_PER_SLOT"
#: Environment variable setting the threads the embedded server decodes with (default: every
#: usable core). Fewer leave cores to other work: llama.cpp's threads wait on each other, so
#: one taken by another process slows every token (the test suite, running in parallel
#: processes, sets 1).
THREADS_ENV = "DEBATEGRAPH_LOCAL_THREADS"
#: llama.cpp's hard cap on parallel sequences.
MAX_SLOTS_RUNTIME = 256
#: Share of the machine's available memory the KV cache of all slots may take.
MEMORY_SHARE = 0.8
DEFAULT_SLOTS = 4
_CHILD = Path(__file__).with_name("child.py")


def runtime_available() -> bool:
    """Whether the embedded runtime (``xllamacpp``) is installed."""
    return importlib.util.find_spec(RUNTIME_MODULE) is not None


def available_memory() -> int:
    """Bytes of memory available for new allocations (``MemAvailable``), or 4 GiB if unknown."""
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 4 << 30


def usable_cores() -> int:
    """The CPU cores this process may run on (its affinity), at least 1.

    The embedded server decodes with this many threads, and a run's calls to it at
    once are fitted to it: more slots than cores share the cores, so each call runs
    proportionally longer (and a queued one waits out its own timeout).
    """
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None
    return cores or os.cpu_count() or 1


def server_threads() -> int:
    """Threads the embedded server decodes with: :data:`THREADS_ENV`, else :func:`usable_cores`.

    Raises:
        UsageError: If :data:`THREADS_ENV` is not a whole number of at least 1.
    """
    configured = os.environ.get(THREADS_ENV, "").strip()
    if not configured:
        return usable_cores()
    if not configured.isdigit() or int(configured) < 1:
        raise UsageError(f"{THREADS_ENV}={configured!r} must be a whole number of threads >= 1")
    return int(configured)


def slot_limit(info: GGUFInfo, ctx_per_slot: int | None = None) -> int:
    """How many slots this machine can hold for a model.

    That is its available memory (:data:`MEMORY_SHARE` of it), less the model file, over
    one slot's KV cache, and at most llama.cpp's cap.

    Args:
        info: The model's header.
        ctx_per_slot: Context per slot (default: :func:`slot_context`).

    Returns:
        The largest slot count (at least 1).
    """
    per_slot = info.kv_bytes_per_token * (ctx_per_slot or slot_context(info))
    room = available_memory() * MEMORY_SHARE - info.size
    return max(1, min(MAX_SLOTS_RUNTIME, int(room // max(1, per_slot))))


def slot_context(info: GGUFInfo) -> int:
    """Context per slot: :data:`CTX_ENV` or :data:`CTX_PER_SLOT`, at most the model's own.

    Raises:
        UsageError: If :data:`CTX_ENV` is not a whole number of at least 256.
    """
    configured = os.environ.get(CTX_ENV, "").strip()
    wanted = CTX_PER_SLOT
    if configured:
        if not configured.isdigit() or int(configured) < 256:
            raise UsageError(f"{CTX_ENV}={configured!r} must be a whole number of tokens >= 256")
        wanted = int(configured)
    return min(wanted, info.context_length)


def check_slots(info: GGUFInfo, slots: int) -> None:
    """Refuse a slot count below 1 or above what the machine can hold.

    Args:
        info: The model's header.
        slots: Requested parallel slots (the run's maximum concurrency).

    Raises:
        UsageError: Naming the value and the allowed range.
    """
    limit = slot_limit(info)
    if not 1 <= slots <= limit:
        raise UsageError(
            f"--max-concurrency {slots} is outside 1..{limit}: the embedded model "
            f"({info.name}, {slot_context(info)} tokens per slot) fits at most {limit} "
            f"parallel slots in this machine's {available_memory() / 2**30:.1f} GiB free"
        )


def free_port() -> int:
    """Ask the OS for a free TCP port on 127.0.0.1.

    Returns:
        The port number.
    """
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class LocalModelServer:
    """One llama.cpp server child process on 127.0.0.1.

    Attributes:
        model: The GGUF file's header.
        slots: Parallel slots (requests served at once).
        ctx_per_slot: Tokens of context each slot holds.
        port: The port it listens on once started.
    """

    def __init__(self, model_path: Path, *, slots: int = DEFAULT_SLOTS) -> None:
        self.model = check_gguf(model_path)
        self.slots = slots
        self.ctx_per_slot = slot_context(self.model)
        self.port = 0
        self._proc: subprocess.Popen[bytes] | None = None
        self._log: IO[bytes] | None = None
        self._lock = threading.Lock()

    @property
    def base_url(self) -> str:
        """OpenAI-compatible base URL (``http://127.0.0.1:PORT/v1``)."""
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def pid(self) -> int | None:
        """The child's process id, once started."""
        return self._proc.pid if self._proc is not None else None

    @property
    def running(self) -> bool:
        """Whether the server process is alive."""
        return self._proc is not None and self._proc.poll() is None

    def start(self, timeout_s: float = STARTUP_TIMEOUT_S) -> LocalModelServer:
        """Start the server and wait until it answers its health check.

        Args:
            timeout_s: How long to wait for the model to load.

        Returns:
            The server itself.

        Raises:
            UsageError: If the runtime is not installed or the slot count does not fit.
            LocalModelError: If the server dies or does not come up.
        """
        if self.running:
            return self
        if not runtime_available():
            raise UsageError(f"the embedded model runtime is not installed; {RUNTIME_INSTALL_HINT}")
        check_slots(self.model, self.slots)
        self.port = free_port()
        self._log = tempfile.TemporaryFile(prefix="debategraph-llama-")  # noqa: SIM115 - closed in stop()
        threads = server_threads()
        cmd = [
            sys.executable, str(_CHILD),
            "--model", str(self.model.path),
            "--alias", self.model.name,
            "--port", str(self.port),
            "--slots", str(self.slots),
            "--ctx-per-slot", str(self.ctx_per_slot),
            "--threads", str(threads),
            "--parent", str(os.getpid()),
        ]  # fmt: skip
        self._proc = subprocess.Popen(
            cmd, stdin=subprocess.DEVNULL, stdout=self._log, stderr=subprocess.STDOUT
        )
        atexit.register(self.stop)
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            failure = self.failure()
            if failure is not None:
                raise LocalModelError(f"{failure} (while loading {self.model.path})")
            if self._healthy():
                return self
            time.sleep(0.1)
        self.stop()
        raise LocalModelError(f"embedded model server did not answer within {timeout_s:.0f}s")

    def failure(self, wait_s: float = 0.0) -> str | None:
        """How the server process ended, if it has: the one line an error should show.

        Args:
            wait_s: How long to wait for a process that is going down to be reaped.

        Returns:
            ``embedded model process died (signal 11); last log line: ...`` (or
            ``exited with code N``), or ``None`` while it runs (or was never started).
        """
        proc = self._proc
        if proc is None:
            return None
        try:
            code = proc.wait(timeout=wait_s) if wait_s > 0 else proc.poll()
        except subprocess.TimeoutExpired:
            return None
        if code is None:
            return None
        if code < 0:
            try:
                how = f"died ({signal.Signals(-code).name}, signal {-code})"
            except ValueError:
                how = f"died (signal {-code})"
        else:
            how = f"exited with code {code}"
        return f"embedded model process {how}; last log line: {self.last_log_line()}"

    def last_log_line(self) -> str:
        """The last line the server logged (``(no output)`` if none)."""
        if self._log is None or self._log.closed:
            return "(no output)"
        self._log.seek(0, os.SEEK_END)
        size = self._log.tell()
        self._log.seek(max(0, size - 8192))
        lines = self._log.read().decode(errors="replace").strip().splitlines()
        return " ".join(lines[-1].split()) if lines else "(no output)"

    def _healthy(self) -> bool:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/health", timeout=2) as resp:
                return int(resp.status) == 200
        except (urllib.error.URLError, OSError):
            return False

    def stop(self) -> None:
        """Stop the server (idempotent): SIGTERM, then SIGKILL after 5 seconds."""
        with self._lock:
            proc, self._proc = self._proc, None
            if proc is not None and proc.poll() is None:
                proc.terminate()
                try:
                    proc.wait(timeout=5)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait(timeout=5)
            if self._log is not None:
                self._log.close()
                self._log = None


@dataclass(frozen=True)
class _Key:
    path: Path
    slots: int


_servers: dict[_Key, LocalModelServer] = {}
_servers_lock = threading.Lock()


def shared_server(model_path: Path, slots: int | None = DEFAULT_SLOTS) -> LocalModelServer:
    """The process-wide server for a model file and slot count, started on first use.

    A server that has died is replaced by a fresh one (its failure was already reported
    by the call that met it).

    Args:
        model_path: The GGUF file.
        slots: Parallel slots; ``None``: any server of the file that runs (an agent's
            own ``local`` model shares the run's), else :data:`DEFAULT_SLOTS`.

    Returns:
        The running server.
    """
    if slots is None:
        with _servers_lock:
            for known, running in _servers.items():
                if known.path == model_path.resolve() and running.running:
                    return running
        slots = DEFAULT_SLOTS
    key = _Key(model_path.resolve(), slots)
    with _servers_lock:
        server = _servers.get(key)
        if server is None or not server.running:
            if server is not None:
                server.stop()
            others = [k.path for k, s in _servers.items() if s.running and k != key]
            if others:
                check_room(model_path, slots, others)
            server = _servers[key] = LocalModelServer(model_path, slots=slots).start()
        return server


def check_room(model_path: Path, slots: int, running: Sequence[Path]) -> None:
    """Refuse a second embedded model that this machine's free memory cannot hold.

    A run whose agents name two GGUF files (``local`` and ``local:PATH``) starts a
    server for each; the second is checked against the memory free while the first
    runs: its file plus its slots' KV cache must fit in :data:`MEMORY_SHARE` of it.

    Args:
        model_path: The GGUF file about to be served.
        slots: Its parallel slots.
        running: The files already served by this process.

    Raises:
        UsageError: One line naming both models and the memory each needs.
    """
    info = check_gguf(model_path)
    needed = info.size + slots * info.kv_bytes_per_token * slot_context(info)
    free = available_memory() * MEMORY_SHARE
    if needed > free:
        served = ", ".join(p.name for p in running)
        raise UsageError(
            f"embedded model {model_path.name} needs {needed / 2**30:.1f} GiB with {slots} "
            f"slots, but only {free / 2**30:.1f} GiB is free beside {served} (already served): "
            "give those agents one model file, or a remote model"
        )
