"""The ``python`` and ``packages`` checks: the interpreter and the installed packages."""

from __future__ import annotations

import importlib.metadata
import sys

from debategraph.doctor.common import RUNTIME_PACKAGE, Check

MIN_PYTHON = (3, 11)
#: Distributions whose versions are reported (``xllamacpp`` for the embedded model only).
PACKAGES = ("debategraph", "langgraph", "langchain-openai")


def check_python() -> Check:
    """The interpreter: 3.11 or newer.

    Returns:
        The check.
    """
    version = ".".join(str(part) for part in sys.version_info[:3])
    ok = sys.version_info[:2] >= MIN_PYTHON
    need = "" if ok else f"; debategraph needs Python {'.'.join(map(str, MIN_PYTHON))} or newer"
    return Check("python", ok, f"{version} ({sys.executable}){need}")


def check_packages(*, embedded: bool) -> Check:
    """The installed versions of the packages debategraph runs on.

    Args:
        embedded: Also report ``xllamacpp`` (the embedded model's runtime).

    Returns:
        The check; it fails if any of them is missing.
    """
    names = [*PACKAGES, RUNTIME_PACKAGE] if embedded else list(PACKAGES)
    found: list[str] = []
    missing: list[str] = []
    for name in names:
        try:
            found.append(f"{name} {importlib.metadata.version(name)}")
        except importlib.metadata.PackageNotFoundError:
            missing.append(name)
    if missing:
        return Check("packages", False, f"not installed: {', '.join(missing)}")
    return Check("packages", True, ", ".join(found))
