"""The embedded model's child process: llama.cpp's own server from the ``xllamacpp`` wheel.

Run as a script (``python child.py ...``), not as a module of the package, so the child
imports nothing but ``xllamacpp``: it is up in about a second. ``xllamacpp.Server``
serves llama.cpp's OpenAI-compatible HTTP API from threads of this process; running it
here keeps a crash of the native code (a signal, running out of memory) out of the
process that holds the graph and its checkpoints. The child asks Linux to end it when
its parent dies, and exits if it finds itself orphaned already.
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import os
import signal
import sys
import time

PR_SET_PDEATHSIG = 1


def _die_with_parent(parent: int) -> None:
    """SIGTERM this process when ``parent`` dies (Linux); exit now if it already has."""
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL("libc.so.6", use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    if os.getppid() != parent:
        sys.exit(0)


def main(argv: list[str] | None = None) -> None:
    """Serve a GGUF file until SIGTERM or the parent's death.

    Args:
        argv: Command-line arguments (default ``sys.argv[1:]``).
    """
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--model", required=True)
    parser.add_argument("--alias", required=True)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--slots", type=int, required=True)
    parser.add_argument("--ctx-per-slot", type=int, required=True)
    parser.add_argument("--threads", type=int, required=True)
    parser.add_argument("--parent", type=int, required=True)
    args = parser.parse_args(argv)
    _die_with_parent(args.parent)

    import xllamacpp  # type: ignore[import-untyped]

    params = xllamacpp.CommonParams()
    params.model.path = args.model
    params.model_alias = {args.alias}
    params.hostnames = ["127.0.0.1"]
    params.port = args.port
    params.n_parallel = args.slots
    params.n_ctx = args.slots * args.ctx_per_slot  # the total across slots
    params.cpuparams.n_threads = args.threads
    params.cpuparams_batch.n_threads = args.threads
    params.n_threads_http = max(4, args.slots + 2)
    server = xllamacpp.Server(params)
    print(f"debategraph: serving on {server.listening_address}", file=sys.stderr, flush=True)
    while True:
        time.sleep(3600)


if __name__ == "__main__":
    main()
