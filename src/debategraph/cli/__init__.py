"""The ``debategraph`` command: run, pause, resume, fork and inspect durable debates.

Every run is durable: it writes checkpoints to ``--db`` (a SQLite file, default
``debates.sqlite``, or a Postgres URL) under a thread id, so Ctrl-C, ``kill -9`` or a dead
endpoint leave a thread that ``debategraph resume THREAD`` continues. Errors print as one
line (exit 2 for usage errors, 1 for runtime failures, 130 when interrupted).

Modules: :mod:`~debategraph.cli.app` (the app, one command per registered pattern),
:mod:`~debategraph.cli.commands` (the thread tools), :mod:`~debategraph.cli.runner`
(running a thread), :mod:`~debategraph.cli.render` (what is printed),
:mod:`~debategraph.cli.options` (shared options).
"""

from debategraph.cli.app import app, main

__all__ = ["app", "main"]
