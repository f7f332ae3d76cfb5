"""An interrupt is never lost, wherever in the process it lands (issue 48, item 6).

Two moments where one used to go missing, each made to happen on purpose in a process of
its own: a SIGTERM whose ``KeyboardInterrupt`` Python swallows (raised inside a
``__del__``, as garbage collection may run one at any moment), and a SIGTERM that lands
while ``asyncio.run`` installs its Ctrl-C handler. Each time the process ends as every
interrupt does: exit 130, one line, no traceback and no "Exception ignored".
"""

from __future__ import annotations

import asyncio.runners
import inspect
import subprocess
import sys
import textwrap

INTERRUPTED = "debategraph: error: interrupted; nothing was saved (no thread was created)"


def run_script(source: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(source)],
        capture_output=True,
        text=True,
        timeout=60,
    )


def assert_interrupted(done: subprocess.CompletedProcess[str]) -> None:
    assert done.returncode == 130, done.stderr
    assert done.stdout == "", done.stdout
    assert done.stderr.splitlines() == [INTERRUPTED], done.stderr


def test_a_sigterm_swallowed_in_a_finalizer_is_delivered_again() -> None:
    """Its ``KeyboardInterrupt`` raised in ``__del__`` is swallowed: it comes back outside."""
    done = run_script(
        """
        import os, signal, time
        from debategraph.cli.interrupts import guarded

        class Finalized:
            def __del__(self):
                os.kill(os.getpid(), signal.SIGTERM)  # handled here, inside __del__
                for _ in range(100):
                    pass

        with guarded():
            Finalized()
            started = time.monotonic()
            while time.monotonic() - started < 20:
                pass
            print("the interrupt was lost")
        """
    )
    assert_interrupted(done)


def _line_of(function: object, statement: str) -> int:
    lines, first = inspect.getsourcelines(function)  # type: ignore[arg-type]
    found = [first + i for i, line in enumerate(lines) if line.strip() == statement]
    assert len(found) == 1, f"{statement!r} in {function}: {found}"
    return found[0]


def test_a_sigterm_as_asyncio_installs_its_handler_ends_the_run() -> None:
    """Between installing its Ctrl-C handler and counting interrupts, ``asyncio.run``
    would let the cancel out as a bare ``CancelledError``: a run ends interrupted."""
    line = _line_of(asyncio.runners.Runner.run, "self._interrupt_count = 0")
    done = run_script(
        f"""
        import asyncio, asyncio.runners, os, signal, sys
        from debategraph.cli.interrupts import guarded
        from debategraph.runs.thread import run_on_loop

        def trace(frame, event, arg):
            if frame.f_code is asyncio.runners.Runner.run.__code__:
                if event == "line" and frame.f_lineno == {line}:
                    sys.settrace(None)
                    os.kill(os.getpid(), signal.SIGTERM)  # the handler runs before the line
                return trace
            return None

        with guarded():
            sys.settrace(trace)
            run_on_loop(asyncio.sleep(20))
            print("the interrupt was lost")
        """
    )
    assert_interrupted(done)
