"""The CLI types no default of its own: each option's default is the factory's.

A pattern's command turns its options into the factory's keyword arguments (a
``Launch``); run with no option given, every setting it passes must be what the factory
does when that argument is left out (its signature's default), so a default changes in
one place (the pattern's setup module, which both read). The shared run options are held
to :class:`~debategraph.models.spec.ModelSpec`'s defaults and the factories'
``pause_after_round``; ``serve``'s to :func:`debategraph.serve.server.serve`'s.
"""

from __future__ import annotations

import ast
import inspect
import json
import typing
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from debategraph import registry
from debategraph.cli import options
from debategraph.cli.serve import serve as serve_command
from debategraph.models.spec import ModelSpec
from debategraph.nodes.group_chat.setup import DEFAULT_MAX_ROUNDS as CHAT_ROUNDS
from debategraph.nodes.group_chat.setup import DEFAULT_UNTIL
from debategraph.serve.server import serve as serve_function

#: Settings whose CLI value differs from the factory's default on purpose, and the
#: constant the CLI passes instead (read from the pattern's setup module, as the factory
#: reads it).
DELIBERATE = {
    # The CLI's default chat (a writer and a reviewer) ends when the reviewer approves;
    # the factory's default ``until`` is none.
    ("group_chat", "until"): list(DEFAULT_UNTIL),
    # The CLI always caps a chat; the factory's ``None`` caps it at the same number only
    # when no other condition ends it.
    ("group_chat", "max_rounds"): CHAT_ROUNDS,
}

#: The shared run options and the ``ModelSpec`` fields they fill.
SPEC_FIELD_OF = {
    "model": "model",
    "base_url": "base_url",
    "api_key_env": "api_key_env",
    "timeout": "timeout_s",
    "max_tokens": "max_tokens",
    "max_retries": "max_retries",
}


def defaults(function: Callable[..., Any]) -> dict[str, Any]:
    """A function's parameters that have a default, with it."""
    parameters = inspect.signature(function).parameters.values()
    return {p.name: p.default for p in parameters if p.default is not p.empty}


def plain(value: Any) -> Any:
    """A value as JSON would hold it (tuples as lists), to compare the CLI's with a factory's."""
    return json.loads(json.dumps(value, default=lambda o: o.model_dump(mode="json")))


def required_arguments(command: Callable[..., Any], tmp_path: Path) -> list[Any]:
    """Values for a command's arguments without defaults: a document for a path, else text."""
    values: list[Any] = []
    for parameter in inspect.signature(command, eval_str=True).parameters.values():
        if parameter.default is not parameter.empty:
            continue
        kind = typing.get_args(parameter.annotation)[0]
        if kind is Path:
            document = tmp_path / "paper.md"
            document.write_text("# A paper\n\nIt makes one claim, and argues for it.\n")
            values.append(document)
        else:
            values.append("Is one plus one two?")
    return values


@pytest.mark.parametrize("name", registry.names())
def test_a_commands_defaults_are_its_factorys(name: str, tmp_path: Path) -> None:
    entry = registry.entry(name)
    command = entry.declaration().command
    launched = command(*required_arguments(command, tmp_path))
    factory = defaults(entry.build())
    unknown = sorted(set(launched.settings) - set(factory))
    assert not unknown, f"{name}: the CLI passes settings the factory does not take: {unknown}"
    differ = {
        setting: (value, factory[setting])
        for setting, value in launched.settings.items()
        if plain(value) != plain(DELIBERATE.get((name, setting), factory[setting]))
    }
    assert not differ, f"{name}: CLI default vs the factory's default: {differ}"


@pytest.mark.parametrize("name", registry.names())
def test_the_shared_run_options_defaults_are_the_factorys(name: str) -> None:
    run = defaults(options.run_options)
    assert run["pause_after_round"] == defaults(registry.entry(name).build())["pause_after_round"]


def test_the_model_options_defaults_are_the_specs() -> None:
    run = defaults(options.run_options)
    spec = defaults(ModelSpec)
    assert {o: run[o] for o in SPEC_FIELD_OF} == {o: spec[f] for o, f in SPEC_FIELD_OF.items()}


def test_serves_defaults_are_the_servers() -> None:
    cli, server = defaults(serve_command), defaults(serve_function)
    shared = sorted(set(cli) & set(server) - {"db"})
    assert shared == [
        "host",
        "insecure_no_auth",
        "log_level",
        "models",
        "pool_size",
        "port",
        "tokens",
    ]
    assert {k: cli[k] for k in shared} == {k: server[k] for k in shared}


@pytest.mark.slow  # make test-fast leaves it out: a few seconds of real time
def test_help_lists_the_commands_in_one_order_whichever_module_came_first() -> None:
    """The tools' modules register their commands on import: ``--help`` must not follow that."""
    from tests.processes import python_output

    script = (
        "import importlib, sys, typer\n"
        "from typer._click import core\n"
        "for m in sys.argv[1:]: importlib.import_module(m)\n"
        "from debategraph.cli.group import TOOL_MODULES, app\n"
        "for m in TOOL_MODULES: importlib.import_module(m)\n"
        "root = typer.main.get_command(app)\n"
        "print(' '.join(root.list_commands(core.Context(root))))\n"
    )
    orders = {
        python_output(script, *first)
        for first in (
            [],
            ["debategraph.cli.evaluate", "debategraph.cli.serve"],
            ["debategraph.cli.serve", "debategraph.cli.commands"],
        )
    }
    assert len(orders) == 1, orders
    assert orders.pop().split()[-5:] == ["doctor", "view", "serve", "mcp", "eval"]


def test_the_eval_options_defaults_live_below_the_cli() -> None:
    """Each option every ``eval`` command shares defaults to a constant of the eval layer
    (``eval/options.py``, ``eval/modes.py``), never to a literal typed in the CLI
    (``None``: the option is unset; ``False``: ``--json`` is off)."""
    from debategraph.cli import evaluate

    tree = ast.parse(Path(evaluate.__file__).read_text())
    shared = next(
        n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == "_eval_options"
    )
    given = shared.args.args[-len(shared.args.defaults) :]
    literal = [
        f"{arg.arg}={ast.unparse(default)}"
        for arg, default in zip(given, shared.args.defaults, strict=True)
        if isinstance(default, ast.Constant) and default.value not in (None, False)
    ]
    assert not literal, f"eval defaults typed in cli/evaluate.py: {literal}"
    names = {d.id for d in shared.args.defaults if isinstance(d, ast.Name)}
    from debategraph.eval import modes
    from debategraph.eval import options as eval_options

    assert all(
        hasattr(eval_options, n) or hasattr(modes, n) for n in names - {"DEFAULT_MODES_TEXT"}
    )
