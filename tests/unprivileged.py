"""Run a file-permission check so that the permissions hold, also when the tests run as root.

Root ignores file modes through its capabilities (``CAP_DAC_OVERRIDE`` and friends), so a
check that a read-only file or folder is refused proves nothing there, and CI runs as root.
:func:`without_privileges` runs such a check in a child process that is still root but has
no capabilities at all (``setpriv`` clears its bounding, inheritable and ambient sets): for
it a file's mode counts as for any user, and root owns ``tmp_path``, so a ``chmod 0o444``
file is read-only to it. Not root: the check runs in this process, as it always did.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from tests.backends import missing_part

REPO_ROOT = Path(__file__).resolve().parents[1]
#: The child: import ``module``, call ``name(*args)``, print what it returns.
CHILD = """
import importlib, sys
module, name, *args = sys.argv[1:]
print(getattr(importlib.import_module(module), name)(*args))
"""
DROP_ALL = ["--bounding-set=-all", "--inh-caps=-all", "--ambient-caps=-all"]


def is_root() -> bool:
    """Whether this process runs as root (file modes do not stop it)."""
    return hasattr(os, "geteuid") and os.geteuid() == 0


def without_privileges(check: Callable[..., str], *args: str) -> str:
    """``check(*args)`` where file permissions are enforced.

    Args:
        check: A module-level function of a test module, returning text to compare.
        args: Its arguments, as strings.

    Returns:
        What ``check`` returned (as root: what the child printed, without the newline).
    """
    if not is_root():
        return check(*args)
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        missing_part("setpriv is not on PATH", "apt-get install util-linux")
    proc = subprocess.run(
        [setpriv, *DROP_ALL, sys.executable, "-c", CHILD, check.__module__, check.__name__, *args],
        cwd=REPO_ROOT,
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout.removesuffix("\n")
