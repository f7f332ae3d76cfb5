"""``debategraph serve``'s first start, before the CLI's own modules are imported.

``serve`` reads the database URL, then starts itself again in the same process with the
URL in a pipe (:func:`debategraph.serve.server.restart_without_secrets`). Done from the
``serve`` command's body, that first start imported the whole CLI (every pattern's
command, LangGraph: about 1 s of CPU) only to read a few options and ``execve``; the new
start imports it all again. :func:`restart_early` reads those options from the command
line itself and starts again at once, for a command line whose every word it knows;
anything else (``--help``, an unknown option, a URL it refuses) goes on to the command,
which restarts or refuses as it always did.
"""

from __future__ import annotations

import os

__all__ = ["restart_early"]

#: ``serve``'s options that take a value (``--db`` and ``--db-env`` among them).
VALUE_OPTIONS = frozenset(
    {
        "--db",
        "--db-env",
        "--host",
        "--port",
        "--config",
        "--pool-size",
        "--log-level",
        "--models",
        "--tokens",
        "--cors-origin",
        "--allowed-host",
    }
)
#: ``serve``'s flags.
FLAGS = frozenset({"--insecure-no-auth"})


def restart_early(args: list[str]) -> None:
    """Start ``serve`` again without its database options, the URL in a pipe, if it can.

    Returns (doing nothing) unless ``args`` is ``serve`` followed only by its known
    options, with a URL :func:`~debategraph.serve.server.database_url` accepts, on a
    POSIX system; else it does not return: the process is the restarted server, or the
    restart failed in one line (exit 2).

    Args:
        args: The command line after the program's name.
    """
    if os.name != "posix" or not args or args[0] != "serve":
        return
    given: dict[str, str] = {}
    rest: list[str] = []
    words = iter(args[1:])
    for word in words:
        name, equals, value = word.partition("=")
        if name in FLAGS and not equals:
            rest.append(word)
            continue
        if name not in VALUE_OPTIONS:
            return  # --help, --db-fd, a word of a later release: the command reads them
        if not equals:
            following = next(words, None)
            if following is None:
                return
            value = following
        if name in ("--db", "--db-env"):
            given[name] = value  # the last one given, as the command reads it
        else:
            rest += [name, value]

    from debategraph.errors import UsageError
    from debategraph.serve.server import URL_ENV, database_url, restart_without_secrets

    typed = "--db" in given
    db_env = given.get("--db-env")
    try:
        url = database_url(
            given["--db"] if typed else os.environ.get(URL_ENV, ""),
            db_env=db_env,
            on_command_line=typed,
        )
    except UsageError:
        return  # the command refuses it in its one line, after its own checks
    try:
        again = ["-m", "debategraph.cli", "serve", *rest]
        restart_without_secrets(url, again, [db_env] if db_env else [])
    except UsageError as exc:
        from debategraph.cli.render import fail

        fail(str(exc), exc.exit_code)
