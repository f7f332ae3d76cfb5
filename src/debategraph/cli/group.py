"""The ``debategraph`` command group: one command per registered pattern, then the tools.

A pattern's command is built from its declaration when it is invoked (its own options
plus the shared run options), so ``debategraph --help`` lists every pattern from the
registry without importing one, and a new pattern needs no change here.

The thread tools (:mod:`~debategraph.cli.commands`), ``eval``
(:mod:`~debategraph.cli.evaluate`) and ``serve`` (:mod:`~debategraph.cli.serve`) register
on :data:`app` from their own modules, which import this one; :mod:`debategraph.cli.app`
imports them when the CLI runs. So imports go one way: this module imports none of them.
"""

from __future__ import annotations

import inspect
from typing import Any

import typer
from typer.core import TyperCommand, TyperGroup

from debategraph import registry
from debategraph.cli import options
from debategraph.errors import UsageError

#: The shared run options, in the order ``--help`` shows them.
_RUN_OPTIONS = inspect.signature(options.run_options, eval_str=True).parameters
_REPORT_OPTIONS = inspect.signature(options.report_option, eval_str=True).parameters


#: The modules that register the other commands on :data:`app` (the thread tools, ``serve``
#: and ``eval``), in the order ``--help`` lists them, whichever was imported first.
#: :func:`debategraph.cli.app.main` imports them.
TOOL_MODULES = (
    "debategraph.cli.commands",
    "debategraph.cli.doctor",
    "debategraph.cli.view",
    "debategraph.cli.serve",
    "debategraph.cli.mcp",
    "debategraph.cli.evaluate",
    "debategraph.cli.eval_tasks",
)


class PatternGroup(TyperGroup):
    """The top-level group: one command per registered pattern, then the thread tools.

    Listing commands (``--help``) uses each pattern's registry line; the pattern itself
    is imported only when its command runs or shows its own help.
    """

    def list_commands(self, ctx: Any) -> list[str]:  # noqa: D102
        rank = {module: i for i, module in enumerate(TOOL_MODULES)}

        def order(name: str) -> int:
            callback = getattr(self.commands.get(name), "callback", None)
            return rank.get(getattr(callback, "__module__", ""), len(rank))

        tools = sorted(super().list_commands(ctx), key=order)  # stable: as registered
        return [*(e.command for e in registry.entries()), *tools]

    def get_command(self, ctx: Any, cmd_name: str) -> Any:  # noqa: D102
        for entry in registry.entries():
            if entry.command == cmd_name:
                return TyperCommand(cmd_name, help=entry.help, short_help=entry.help)
        return options.command_without_flag_types(super().get_command(ctx, cmd_name), ctx)

    def get_params(self, ctx: Any) -> list[Any]:  # noqa: D102 (no `<bool>` beside --help)
        return options.flags_without_type(super().get_params(ctx))

    def resolve_command(self, ctx: Any, args: list[str]) -> tuple[str | None, Any, list[str]]:
        """The command to run: a pattern's is built from its declaration now.

        An unknown name is answered with the closest of every command's names, the
        patterns' included (``slove``: ``solve``).
        """
        import difflib

        try:
            name, command, rest = super().resolve_command(ctx, args)
        except typer.TyperException as exc:  # typer's click's UsageError
            typo = args[0] if args else ""
            if not typo or self.get_command(ctx, typo) is not None:
                raise
            known = self.list_commands(ctx)
            close = difflib.get_close_matches(typo, known, n=3, cutoff=0.6)
            said = f"No such command {typo!r}."
            if close:
                said += f" Did you mean {' or '.join(repr(c) for c in close)}?"
            exc.message = f"{said} (commands: debategraph --help)"
            raise
        for entry in registry.entries():
            if entry.command == name:
                return name, options.command_without_flag_types(pattern_command(entry), ctx), rest
        return name, command, rest


app = typer.Typer(
    name="debategraph",
    cls=PatternGroup,
    help="Multi-agent debate graphs on LangGraph, durable on SQLite or Postgres.",
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)


def pattern_command(entry: registry.Entry) -> Any:
    """The CLI command of a pattern: its own options plus the shared run options.

    Args:
        entry: The pattern's registry line.

    Returns:
        The (typer-vendored) click command.

    Raises:
        ValueError: If the pattern's options reuse a shared option's name.
    """
    pattern = entry.declaration()
    own = inspect.signature(pattern.command, eval_str=True).parameters
    shared = dict(_RUN_OPTIONS)
    if pattern.described.report is not None:
        shared.update(_REPORT_OPTIONS)
    clash = sorted(set(own) & set(shared))
    if clash:
        raise ValueError(f"pattern {pattern.name!r} redefines shared option(s) {clash}")

    def run(**kwargs: Any) -> None:
        from debategraph.cli.runner import OPTION_OF, launch
        from debategraph.graphs.inputs import check_input
        from debategraph.runs.start import new_run

        common = {name: kwargs.pop(name) for name in shared}
        launched = pattern.command(**kwargs)
        try:  # the check the graph and the server make, before anything is written
            check_input(entry.name, launched.input)
        except ValueError as exc:
            raise UsageError(str(exc)) from None
        spec = options.model_spec(common)
        max_cost = options.max_cost_of(common["max_cost"])
        thread = common["thread"]
        if thread is not None and not thread.strip():
            raise UsageError("--thread is empty: give a thread id or leave it out")
        settings = {**launched.settings, "pause_after_round": common["pause_after_round"]}
        with options.cache_opened(common["cache"]):  # a bad --cache: refused before any request
            checked = new_run(
                entry.name, settings, spec, common["max_concurrency"], names=OPTION_OF
            )
            launch(
                pattern,
                checked,
                launched,
                db=common["db"],
                thread=thread,
                json_output=common["json_output"],
                archive=common["archive"],
                report=common.get("report"),
                max_cost=max_cost,
            )

    run.__signature__ = inspect.Signature([*own.values(), *shared.values()])  # type: ignore[attr-defined]
    run.__doc__ = pattern.command.__doc__ or entry.help
    single = typer.Typer(add_completion=False, pretty_exceptions_enable=False)
    single.command(name=entry.command, help=entry.help)(run)
    command = typer.main.get_command(single)
    command.name = entry.command
    return command
