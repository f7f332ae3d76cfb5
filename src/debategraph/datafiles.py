"""Files: reading the YAML or JSON files users hand the CLI, writing a file whole or not at all.

One loader for every option that takes a file: JSON is parsed as JSON (``.json``), anything
else as YAML (a superset of JSON). A file that is missing, unreadable or not valid says so
in one line, with the line number of the first error. A key written twice in one mapping
is an error too (YAML would keep the last silently).

Every file the CLI writes (a page, an export, the eval's results) is written to a new
temporary file beside it and moved into place (:func:`stage`, :func:`write_whole`): a
reader (a browser reloading a followed page) or an interrupted write never sees half a file.
"""

from __future__ import annotations

import json
import os
import secrets
import stat
from collections.abc import Callable
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from debategraph.errors import UsageError

if TYPE_CHECKING:
    from pydantic import BaseModel, ValidationError


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


def first_problem(exc: ValidationError, record: type[BaseModel]) -> str:
    """What is wrong with a record a user filled in, in one line.

    An unknown field is named as unknown first (a misspelt ``stance:`` for ``side:``),
    with the fields that are missing beside it; else the first problem.

    Args:
        exc: The error.
        record: The model that refused (its fields name what is allowed).

    Returns:
        ``unknown field 'x': allowed are ...`` (and ``; missing: 'y'``),
        ``field 'x' is missing`` or ``field 'x': what (got value)``.
    """
    errors = exc.errors()

    def where(error: Any) -> str:
        return ".".join(str(p) for p in error["loc"]) or "?"

    unknown = [where(e) for e in errors if e["type"] == "extra_forbidden"]
    missing = [where(e) for e in errors if e["type"] == "missing"]
    if unknown:
        allowed = ", ".join(record.model_fields)
        names = ", ".join(repr(name) for name in unknown)
        said = f"unknown field{'s' if len(unknown) > 1 else ''} {names}: allowed are {allowed}"
        if missing:
            names = ", ".join(repr(name) for name in missing)
            said += f"; missing: {names}"
        return said
    error = errors[0]
    if error["type"] == "missing":
        return f"field {where(error)!r} is missing"
    message = str(error["msg"]).removeprefix("Value error, ")
    return f"field {where(error)!r}: {message} (got {error.get('input')!r})"


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


def stage(path: Path, write: Callable[[IO[bytes]], object]) -> Path:
    """Write a file's content to a new temporary file beside ``path``; move it in yourself.

    The file is created with mode 0o666 less the umask, as ``open`` would (``mkstemp``
    would make it 0o600, and ``os.replace`` keeps the mode), and synced to disk; its name
    is unique, so two writers of one file never share it.

    Args:
        path: The file it will become (``os.replace(temp, path)``).
        write: Writes the content to a binary stream.

    Returns:
        The temporary file (removed again if ``write`` fails).

    Raises:
        OSError: If it cannot be written.
    """
    temp = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    descriptor = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        with os.fdopen(descriptor, "wb") as stream:
            write(stream)
            stream.flush()
            os.fsync(stream.fileno())
    except BaseException:
        temp.unlink(missing_ok=True)
        raise
    return temp


def write_whole(path: Path, text: str) -> None:
    """Write a text file whole or not at all (:func:`stage`, then moved into place).

    A symbolic link is followed (its target is replaced, the link stays); a file that is
    there keeps its mode; what is no regular file (``/dev/stdout``, a pipe) is written to
    as it is, since it cannot be replaced.

    Args:
        path: The file.
        text: Its content, written as UTF-8.

    Raises:
        OSError: If it cannot be written (nothing is left behind, an old file is kept).
    """
    target = path.resolve()
    try:
        mode = target.stat().st_mode
    except FileNotFoundError:
        mode = None
    if mode is not None and not stat.S_ISREG(mode):
        target.write_text(text, encoding="utf-8")
        return
    temp = stage(target, lambda stream: stream.write(text.encode("utf-8")))
    try:
        if mode is not None:
            os.chmod(temp, stat.S_IMODE(mode))
        os.replace(temp, target)
    except OSError:
        temp.unlink(missing_ok=True)
        raise
