"""The ``debategraph`` entry point: the app with every command registered, run guarded.

The app (:data:`~debategraph.cli.group.app`: one command per registered pattern, built
from its declaration only when invoked) is defined in :mod:`debategraph.cli.group`. The
modules of the other commands (:mod:`~debategraph.cli.commands`,
:mod:`~debategraph.cli.evaluate`, :mod:`~debategraph.cli.serve`) register on it from
there, and :func:`main` imports them when it runs, so ``import debategraph.cli.app``
loads none of them, and no command module imports this one.
"""

from __future__ import annotations

import importlib
import sys

import typer

from debategraph.cli import interrupts
from debategraph.cli.group import TOOL_MODULES, app
from debategraph.cli.render import fail
from debategraph.errors import DebategraphError
from debategraph.models.tracing import enable_tracing

__all__ = ["app", "main"]


def main(argv: list[str] | None = None) -> None:
    """Entry point: run the CLI, turning every expected failure into one line.

    Runs under :func:`~debategraph.cli.interrupts.guarded`: SIGTERM acts as Ctrl-C, and
    an interrupt at any moment ends with one line (naming the thread to resume, once one
    is recorded) and exit status 130.

    Args:
        argv: Arguments (default ``sys.argv[1:]``).
    """
    with interrupts.guarded():
        enable_tracing()  # where the OTEL_* variables name an endpoint; else imports nothing
        for module in TOOL_MODULES:  # they register the other commands on the app
            importlib.import_module(module)

        command = typer.main.get_command(app)
        try:
            code = command.main(args=argv, prog_name="debategraph", standalone_mode=False)
        except typer.TyperException as exc:  # bad options/arguments (typer's own click)
            fail(exc.format_message(), exc.exit_code)
        except typer.Abort:
            fail("aborted", interrupts.EXIT_INTERRUPTED)
        except DebategraphError as exc:
            fail(str(exc), exc.exit_code)
        if code == interrupts.EXIT_INTERRUPTED:
            # typer turns a KeyboardInterrupt in a command into a silent exit 130
            interrupts.exit_interrupted()
        sys.exit(code if isinstance(code, int) else 0)
