"""The test suite's OpenAI-compatible stub server, in a process of its own.

Benchmarks that measure a client's CPU time or profile it run the server here, so none
of the server's work is counted as the client's. Run as a script it prints
``URL <base url>`` once listening, then serves until its standard input closes; each
line ``stats`` it reads is answered with ``STATS <json>`` (calls answered, prompt tokens,
most requests at once, since the last such line); ``latency SECONDS`` sets each later
request's latency and is answered with ``LATENCY <seconds>``.

    python benchmarks/stub_process.py --latency 0.2 --chars 500
"""

from __future__ import annotations

import argparse
import contextlib
import json
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[1]
HERE = Path(__file__).resolve().parent


@dataclass
class StubProcess:
    """A running stub server process.

    Attributes:
        url: Its base URL (``http://127.0.0.1:PORT/v1``).
        proc: The process.
    """

    url: str
    proc: subprocess.Popen[str]

    def take_stats(self) -> dict[str, Any]:
        """The server's counts since the last call (or its start), then reset them.

        Returns:
            ``calls``, ``prompt_tokens``, ``completion_tokens``, ``max_in_flight``,
            ``first_request_at`` (the wall clock, ``time.time()``, of the first request) and
            ``arrivals`` (the wall clock of each request, in order).
        """
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write("stats\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line.startswith("STATS "):
            raise RuntimeError(f"stub server answered {line!r}")
        stats: dict[str, Any] = json.loads(line[len("STATS ") :])
        return stats

    def set_latency(self, latency_s: float) -> None:
        """Answer each later chat request ``latency_s`` seconds after it arrives.

        Args:
            latency_s: The new latency in seconds.

        Raises:
            RuntimeError: If the server does not acknowledge it.
        """
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(f"latency {latency_s}\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line.startswith("LATENCY "):
            raise RuntimeError(f"stub server answered {line!r}")


@contextlib.contextmanager
def stub_process(latency_s: float = 0.0, chars: int = 500) -> Iterator[StubProcess]:
    """Start the stub server in a child process; stop it on exit.

    Args:
        latency_s: Seconds each chat request waits before its answer.
        chars: Length of each solver's reasoning in the replies.

    Yields:
        The running server.
    """
    cmd = [sys.executable, str(Path(__file__)), "--latency", str(latency_s), "--chars", str(chars)]
    proc = subprocess.Popen(
        cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=REPO_ROOT
    )
    assert proc.stdout is not None and proc.stdin is not None
    line = proc.stdout.readline()
    if not line.startswith("URL "):
        proc.kill()
        raise RuntimeError(f"stub server did not start: {line!r}")
    server = StubProcess(line.split()[1], proc)
    try:
        yield server
    finally:
        proc.stdin.close()
        proc.wait(timeout=10)


def main() -> None:
    """Serve until standard input closes."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--latency", type=float, default=0.0)
    parser.add_argument("--chars", type=int, default=500)
    args = parser.parse_args()
    sys.path[:0] = [str(REPO_ROOT), str(HERE)]
    from stub_replies import make_responder

    from tests.openai_stub import StubOpenAIServer

    respond = make_responder(args.chars)
    arrivals: list[float] = []

    def responder(body: dict[str, Any]) -> Any:
        arrivals.append(time.time())
        return respond(body)

    with StubOpenAIServer(responder, latency_s=args.latency) as server:
        print(f"URL {server.url}", flush=True)
        for line in sys.stdin:
            if line.startswith("latency "):
                server.latency_s = float(line.split()[1])
                print(f"LATENCY {server.latency_s}", flush=True)
                continue
            if line.strip() != "stats":
                continue
            stats = {
                "calls": server.calls,
                "prompt_tokens": server.prompt_tokens,
                "completion_tokens": server.completion_tokens,
                "max_in_flight": server.max_in_flight,
                "first_request_at": arrivals[0] if arrivals else None,
                "arrivals": list(arrivals),
            }
            server.reset_stats()
            arrivals.clear()
            print(f"STATS {json.dumps(stats)}", flush=True)


if __name__ == "__main__":
    main()
