"""Reading the YAML or JSON files users hand the CLI (agents, stages), with line numbers.

One loader for every option that takes a file: JSON is parsed as JSON (``.json``), anything
else as YAML (a superset of JSON). A file that is missing, unreadable or not valid says so
in one line, with the line number of the first error. A key written twice in one mapping
is an error too (YAML would keep the last silently).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from debategraph.errors import UsageError


def load_data(path: str | Path, option: str) -> Any:
    """The data of a YAML or JSON file.

    Args:
        path: The file.
        option: The option that named it (``--agents-file``), for errors.

    Returns:
        The parsed data.

    Raises:
        UsageError: If the file is missing, unreadable, or not valid YAML/JSON (with the
            line number).
    """
    import yaml

    file = Path(path)
    try:
        text = file.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise UsageError(f"{option} {file}: no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"{option} {file}: cannot read it: {exc}") from None
    if file.suffix.lower() == ".json":
        try:
            return json.loads(text)
        except json.JSONDecodeError as exc:
            raise UsageError(
                f"{option} {file}: not valid JSON at line {exc.lineno}: {exc.msg}"
            ) from None
    try:
        return yaml.load(text, Loader=_unique_keys_loader())
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise UsageError(f"{option} {file}: not valid YAML{where}: {problem}") from None


def _unique_keys_loader() -> Any:
    """PyYAML's ``SafeLoader``, refusing a key written twice in one mapping."""
    import yaml

    class UniqueKeys(yaml.SafeLoader):
        def construct_mapping(self, node: Any, deep: bool = False) -> Any:
            seen: set[Any] = set()
            for key_node, _ in node.value:
                key = self.construct_object(key_node, deep=deep)
                if isinstance(key, str | int | float | bool) and key in seen:
                    raise yaml.constructor.ConstructorError(
                        None, None, f"{key!r} is written twice", key_node.start_mark
                    )
                seen.add(key)
            return super().construct_mapping(node, deep=deep)

    return UniqueKeys
