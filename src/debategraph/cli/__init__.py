"""The ``debategraph`` command: run, pause, resume, fork and inspect durable debates.

Every run is durable: it writes checkpoints to ``--db`` (a SQLite file, default
``debates.sqlite``, or a Postgres URL) under a thread id, so Ctrl-C, ``kill -9`` or a dead
endpoint leave a thread that ``debategraph resume THREAD`` continues. Errors print as one
line (exit 2 for usage errors, 1 for runtime failures, 130 when interrupted).

Modules: :mod:`~debategraph.cli.group` (the app, one command per registered pattern),
:mod:`~debategraph.cli.app` (the entry point, which registers the other commands),
:mod:`~debategraph.cli.patterns` (each pattern's command and rendering: its
:class:`~debategraph.cli.patterns.declaration.Pattern`), :mod:`~debategraph.cli.commands`
(the thread tools, which name no pattern), :mod:`~debategraph.cli.runner` (running a thread),
:mod:`~debategraph.cli.render` (what is printed), :mod:`~debategraph.cli.options`
(shared options), :mod:`~debategraph.cli.evaluate` (``debategraph eval``),
:mod:`~debategraph.cli.interrupts` (Ctrl-C and SIGTERM). The app
(``debategraph.cli.app.app``) is imported when :func:`main` runs, so an interrupt during
its imports already ends with one line.
"""

from __future__ import annotations

__all__ = ["main"]


def main(argv: list[str] | None = None) -> None:
    """Entry point (:func:`debategraph.cli.app.main`), guarded from its first import on.

    Args:
        argv: Arguments (default ``sys.argv[1:]``).
    """
    from debategraph.cli.interrupts import guarded

    with guarded():
        if argv is None:  # this process's own command line: serve may start again at once
            import sys

            from debategraph.cli.serve_start import restart_early

            restart_early(sys.argv[1:])
        from debategraph.cli.app import main as app_main

        app_main(argv)
