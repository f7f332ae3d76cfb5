"""``make readme``: write the README's blocks that come from the code, not from a benchmark.

Each is a generated block (``benchmarks/blocks.py``), rendered here from what it describes:

* ``cli-synopsis``: every command of the ``debategraph`` CLI, walked from the command tree
  the CLI itself runs (its patterns from the registry, the thread tools, ``eval``, ``serve``);
* ``rosters``: each pattern's ``--agents-file`` entry, from the agent record it is read as
  and the officials it names;
* ``notebooks``: every notebook in ``notebooks/``, its title and the test that executes it;
* ``contents``: the README's table of contents, from its headings.

``tests/test_readme_claims.py`` renders them again and compares.

    python benchmarks/readme.py [--check]
"""

from __future__ import annotations

import argparse
import importlib
import json
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO_ROOT = HERE.parent
if str(HERE) not in sys.path:  # imported by path (the tests) rather than run as a script
    sys.path.insert(0, str(HERE))

import blocks  # noqa: E402 (benchmarks/ is on sys.path from here on)

README = REPO_ROOT / "README.md"
NOTEBOOKS = REPO_ROOT / "notebooks"
TESTS = REPO_ROOT / "tests"
WIDTH = 100

#: Each pattern's ``--agents-file`` entry: the record its CLI module reads it as
#: (``read_agents_file(path, RECORD, ...)`` in ``debategraph/cli/patterns/<pattern>.py``).
ROSTER_RECORDS = {
    "solver_debate": "Participant",
    "debate": "Debater",
    "discussion": "Persona",
    "group_chat": "Participant",
    "meeting": "Participant",
}
#: Commands whose shared options are written once: family name -> the commands.
EVAL_RUNS = ("eval gsm8k", "eval mcq", "eval arithmetic")


def command_tree() -> Iterator[tuple[str, list[str], list[str]]]:
    """Every command of the CLI, walked from the command the ``debategraph`` script runs.

    Yields:
        ``(path, arguments, options)``: the command's words after ``debategraph``, its
        arguments as written in a synopsis (``QUESTION``, ``SHARDS...``) and its visible
        options as ``--help`` writes them (``--agents <int>``, ``--matched / --no-matched``;
        a repeatable one ends in ``...``), ``--help`` left out.
    """
    import typer
    from typer._click import core

    from debategraph.cli import app
    from debategraph.cli.group import TOOL_MODULES

    for module in TOOL_MODULES:  # they register the other commands, as app.main does
        importlib.import_module(module)
    root = typer.main.get_command(app.app)

    def walk(command: Any, ctx: Any, path: list[str]) -> Iterator[tuple[str, list[str], list[str]]]:
        if hasattr(command, "list_commands"):
            for name in command.list_commands(ctx):
                _, sub, _ = command.resolve_command(ctx, [name])
                yield from walk(sub, core.Context(sub, info_name=name, parent=ctx), [*path, name])
            return
        arguments: list[str] = []
        options: list[str] = []
        for param in command.get_params(ctx):
            if param.param_type_name == "argument":
                word = "".join(param.get_usage_pieces(ctx)).strip("{}").upper()
                word = word.replace("}", "").replace("{", "")
                arguments.append(word if param.required else f"[{word}]")
                continue
            record = param.get_help_record(ctx)
            if record is None or "--help" in param.opts:
                continue  # hidden (an old name) or --help
            text = record[0]
            if param.multiple:
                text = re.sub(r"<list\[(\w+)\]>", r"<\1>", text) + " ..."
            options.append(text)
        yield " ".join(path), arguments, options

    yield from walk(root, core.Context(root, info_name="debategraph"), [])


def _wrapped(head: str, words: list[str]) -> list[str]:
    """``head`` then ``words``, wrapped at :data:`WIDTH`, continuation lines indented."""
    lines = [head]
    indent = " " * (len(head.split(" ")[0]) + len(head.split(" ")[1]) + 2 if " " in head else 4)
    for word in words:
        if len(lines[-1]) + 1 + len(word) > WIDTH and lines[-1].strip():
            lines.append(indent + word)
        else:
            lines[-1] += " " + word
    return lines


def render_synopsis() -> str:
    """The ``cli-synopsis`` block: every command, the options a family shares written once."""
    from debategraph import registry

    tree = list(command_tree())
    families = {
        "run options": [e.command for e in registry.entries()],
        "eval options": list(EVAL_RUNS),
    }
    shared: dict[str, list[str]] = {}
    for family, members in families.items():
        options = [opts for path, _, opts in tree if path in members]
        shared[family] = [o for o in options[0] if all(o in rest for rest in options[1:])]
    lines = ["```text"]
    for family, members in families.items():
        lines += _wrapped(f"{family}:", [f"[{o}]" for o in shared[family]])
        lines.append(f"  (every one of: {', '.join(members)})")
    lines.append("")
    for path, arguments, options in tree:
        family = next((f for f, members in families.items() if path in members), None)
        own = [o for o in options if family is None or o not in shared[family]]
        words = arguments + [f"[{o}]" for o in own] + ([f"[{family}]"] if family else [])
        lines += _wrapped(f"debategraph {path}", words)
    lines.append("```")
    return "\n".join(lines)


def render_rosters() -> str:
    """The ``rosters`` block: each pattern's agents-file entry, from its record's fields."""
    import debategraph
    from debategraph import registry

    common = debategraph.AgentSpec.model_fields
    rows = [
        "| pattern | command | entry (record) | its own fields | officials (entries named so) |",
        "|---|---|---|---|---|",
    ]
    for entry in registry.entries():
        record = getattr(debategraph, ROSTER_RECORDS[entry.name])
        own = [
            f"`{name}`" + (" (required)" if field.is_required() else "")
            for name, field in record.model_fields.items()
            if name not in common
        ]
        officials = importlib.import_module(f"debategraph.cli.patterns.{entry.name}").OFFICIALS
        rows.append(
            f"| `{entry.name}` | `{entry.command}` | `{record.__name__}` | "
            f"{', '.join(own) or '-'} | {', '.join(f'`{o}`' for o in sorted(officials))} |"
        )
    fields = ", ".join(
        f"`{name}`" + (" (required)" if field.is_required() else "")
        for name, field in common.items()
    )
    stage = ", ".join(
        f"`{name}`" + (" (required)" if field.is_required() else "")
        for name, field in debategraph.Stage.model_fields.items()
    )
    rows += [
        "",
        f"Every entry, of every pattern, also takes what every agent has (`AgentSpec`): {fields}. "
        f"A meeting's `--stages FILE` lists `Stage` records: {stage}.",
    ]
    return "\n".join(rows)


def render_notebooks() -> str:
    """The ``notebooks`` block: each notebook, its title and the test that executes it."""
    runs: dict[str, list[str]] = {}
    for test in sorted(TESTS.glob("test_*.py")):
        for name in re.findall(r'run_notebook\(\s*"([\w.-]+\.ipynb)"', test.read_text()):
            runs.setdefault(name, []).append(f"`tests/{test.name}`")
    lines = []
    for path in sorted(NOTEBOOKS.glob("*.ipynb")):
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        title = next(
            "".join(c["source"]).splitlines()[0].lstrip("# ").strip()
            for c in cells
            if c["cell_type"] == "markdown"
        )
        tested = ", ".join(runs.get(path.name, [])) or "no test executes it"
        lines.append(f"- [`notebooks/{path.name}`](notebooks/{path.name}): {title} ({tested})")
    return "\n".join(lines)


def anchor(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces as dashes."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def render_contents(text: str) -> str:
    """The ``contents`` block: the ``##`` and ``###`` headings of ``text``, outside code."""
    lines = []
    fenced = False
    for line in blocks.strip(text).splitlines():
        if line.startswith("```"):
            fenced = not fenced
        found = re.match(r"^(##|###) (.+)$", line)
        if fenced or not found or found.group(2) == "Contents":
            continue
        indent = "  " if found.group(1) == "###" else ""
        lines.append(f"{indent}- [{found.group(2)}](#{anchor(found.group(2))})")
    return "\n".join(lines)


def render_all(text: str) -> dict[str, str]:
    """Every block this script writes, by key (the contents from ``text``'s headings)."""
    return {
        "cli-synopsis": render_synopsis(),
        "rosters": render_rosters(),
        "notebooks": render_notebooks(),
        "contents": render_contents(text),
    }


def main() -> int:
    """Write the blocks into the README (``--check``: only say whether they are current)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if a block is stale")
    args = parser.parse_args()
    text = README.read_text(encoding="utf-8")
    new = blocks.fill(text, render_all(text))
    if args.check:
        if new != text:
            print("README.md: a generated block is stale: run `make readme`")
            return 1
        return 0
    README.write_text(new, encoding="utf-8")
    print(f"wrote the generated blocks of {README}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
