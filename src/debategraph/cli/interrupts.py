"""Interrupts: Ctrl-C, SIGINT and SIGTERM end every command with one line and exit 130.

The CLI's entry point runs under :func:`guarded` from its first import on: SIGTERM acts as
Ctrl-C (the running code sees a ``KeyboardInterrupt``, so an event loop cancels its calls
and the embedded model's server stops as on Ctrl-C), and any ``KeyboardInterrupt`` ends
the process with one line on stderr and exit status 130. The line names the thread the
command left resumable, once the runner said one is recorded (:func:`resumable`), and
says nothing was saved before that.

A signal handler's ``KeyboardInterrupt`` can land where Python swallows it (a weakref
callback, a ``__del__``: "Exception ignored in ..."): the process would go on as if
nothing happened. Under :func:`guarded` such a swallowed interrupt is delivered again,
as a fresh SIGTERM (which acts as Ctrl-C), instead of being printed. The fresh SIGTERM
comes from a helper thread, so it lands once the unraisable hook has returned: raised
inside the hook, the interrupt would be swallowed a second time ("Exception ignored in
sys.unraisablehook"); one that lands in the hook all the same is sent again.

This module imports nothing heavy: it is in place before the app's own imports start.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import CodeType, FrameType
from typing import Any, NoReturn

#: The exit status of an interrupted command (128 + SIGINT, as a shell reports it).
EXIT_INTERRUPTED = 130

_thread: tuple[str, str] | None = None  # (thread id, --db) a command left resumable
_exiting = False  # an interrupt is ending the process
_again: int | None = None  # a pipe's write end: a byte asks the helper thread for a SIGTERM


def resumable(thread_id: str, db: str) -> None:
    """Note that ``thread_id`` is recorded in ``db``: an interrupt from now on says so.

    Args:
        thread_id: The thread the running command works on.
        db: The ``--db`` value (for the resume command).
    """
    global _thread
    _thread = (thread_id, db)


def resume_command(thread_id: str, db: str) -> str:
    """The command that continues a thread.

    Args:
        thread_id: The thread.
        db: The ``--db`` value.

    Returns:
        ``debategraph resume THREAD --db DB``, and ``--cache FILE`` where the run uses
        a response cache (the resumed run's calls are answered from it too).
    """
    from debategraph.models.cache import active_cache
    from debategraph.runs.human import resume_command as command

    cache = active_cache()
    return command(thread_id, db, None if cache is None else str(cache.path))


def review_command(thread_id: str, db: str) -> str:
    """What a human runs to go on with a thread waiting at its round review.

    Args:
        thread_id: The thread.
        db: The ``--db`` value.

    Returns:
        :func:`resume_command`, then ``--approve | --interject TEXT``
        (:func:`debategraph.runs.human.review_command`, the line a thread's page shows).
    """
    from debategraph.models.cache import active_cache
    from debategraph.runs.human import review_command as command

    cache = active_cache()
    return command(thread_id, db, None if cache is None else str(cache.path))


def message() -> str:
    """The line an interrupt ends with now.

    Returns:
        ``interrupted; thread X is resumable: debategraph resume X --db DB`` once a thread
        is recorded, else a line saying nothing was saved.
    """
    if _thread is None:
        return "interrupted; nothing was saved (no thread was created)"
    thread_id, db = _thread
    return f"interrupted; thread {thread_id} is resumable: {resume_command(thread_id, db)}"


def exit_interrupted() -> NoReturn:
    """Print the interrupt's one line on stderr and exit with status 130.

    Further interrupts are ignored from here on, so the clean-up that runs on the way
    out (the embedded model's server stopping) prints no traceback.
    """
    global _exiting
    _exiting = True
    _ignore_interrupts()
    _forget_unhandled_interrupt()
    sys.stderr.write(f"debategraph: error: {message()}\n")
    sys.stderr.flush()
    sys.exit(EXIT_INTERRUPTED)


def _forget_unhandled_interrupt() -> None:
    """Keep the exit status 130 when the interrupt landed in ``exec`` of source text.

    CPython notes a ``KeyboardInterrupt`` that leaves an ``exec`` of source text (the way
    ``dataclasses`` and ``namedtuple`` build methods while modules import) as unhandled,
    even once it is caught, and then ends the process by SIGINT whatever status
    ``sys.exit`` gave. Executing source text again clears that note; the text is a
    constant.
    """
    exec("pass")


def _ignore_interrupts() -> None:
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)


def _on_sigterm(signum: int, frame: FrameType | None) -> None:
    """SIGTERM does what Ctrl-C does now (an event loop's own handler, if one runs)."""
    if _inside(frame, _Redelivering.__call__.__code__):  # raised here, it would be lost
        _send_again()
        return
    handler = signal.getsignal(signal.SIGINT)
    if callable(handler) and handler is not _on_sigterm:
        handler(signal.SIGINT, frame)
        return
    raise KeyboardInterrupt


def _inside(frame: FrameType | None, code: CodeType) -> bool:
    """Whether ``frame`` runs ``code`` or is called, at any depth, from a frame that does."""
    while frame is not None:
        if frame.f_code is code:
            return True
        frame = frame.f_back
    return False


def _send_again() -> None:
    """Have the helper thread send this process a SIGTERM (handled by the main thread).

    A write to a pipe: no lock is taken, so a signal handler may call it at any moment.
    """
    if _again is not None and not _exiting:
        os.write(_again, b"!")


def _start_sender() -> None:
    """Start, once per process, the helper thread :func:`_send_again` writes to."""
    global _again
    if _again is None:
        read_end, _again = os.pipe()
        threading.Thread(
            target=_sender, args=(read_end,), name="interrupt-again", daemon=True
        ).start()


def _sender(read_end: int) -> None:
    while os.read(read_end, 1):
        time.sleep(0.001)  # the hook that asked has returned by now (if not, it asks again)
        os.kill(os.getpid(), signal.SIGTERM)


class _Redelivering:
    """An unraisable hook that delivers a swallowed interrupt again instead of printing it."""

    def __init__(self, previous: Callable[[Any], object]) -> None:
        self.previous = previous

    def __call__(self, unraisable: Any) -> None:
        if isinstance(unraisable.exc_value, KeyboardInterrupt):
            _send_again()  # Ctrl-C again, once out of this hook (_on_sigterm)
            return
        self.previous(unraisable)


@contextmanager
def guarded() -> Iterator[None]:
    """Run a command so that every interrupt ends it with one line and exit 130.

    Inside, SIGTERM acts as Ctrl-C, an interrupt Python swallowed is delivered again,
    and a ``KeyboardInterrupt`` that reaches here becomes :func:`exit_interrupted`. On
    the way out the resumable thread and, unless an interrupt ends the process, the
    previous SIGTERM handler and unraisable hook are restored (the CLI may run
    in-process, several times).

    Yields:
        Nothing.
    """
    global _thread
    main = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGTERM, _on_sigterm) if main else None
    previous_hook = sys.unraisablehook
    if main:
        _start_sender()
        sys.unraisablehook = _Redelivering(previous_hook)
    saved = _thread
    try:
        yield
    except KeyboardInterrupt:
        exit_interrupted()
    finally:
        _thread = saved
        if main and not _exiting:
            signal.signal(signal.SIGTERM, previous)
            sys.unraisablehook = previous_hook
