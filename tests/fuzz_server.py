"""A bounded ``schemathesis`` run against a running ``debategraph serve``'s own OpenAPI.

Every operation of the served OpenAPI document is called with generated requests (its
examples, coverage cases, fuzzing and stateful sequences), signed in with a user's
token; a response fails on a 5xx (``not_a_server_error``) or on exception text in its
body (``no_exception_text``, :mod:`tests.schemathesis_hooks`). Used by
``tests/test_serve_safety.py`` (a few examples) and ``benchmarks/serve_fuzz.py`` (more).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
CHECKS = "not_a_server_error,no_exception_text"


@dataclass(frozen=True)
class FuzzResult:
    """What a run found.

    Attributes:
        returncode: ``st run``'s exit status (0: no failure, no error).
        cases: Test cases generated.
        failures: Unique failures found.
        seconds: How long it ran, as it reports.
        tail: The end of its output (for a failure's message).
    """

    returncode: int
    cases: int
    failures: int
    seconds: float
    tail: str


def fuzz(
    url: str,
    token: str,
    *,
    examples: int,
    seed: int,
    timeout_s: float = 900,
    phases: Sequence[str] | None = None,
) -> FuzzResult:
    """Run ``st run`` on ``url``'s ``/openapi.json``.

    Args:
        url: The server's base URL.
        token: A user's token (sent as ``X-Api-Key``).
        examples: Examples per operation and phase (``--max-examples``).
        seed: Hypothesis's seed: the same run each time.
        timeout_s: The most it may take.
        phases: The phases to run (``--phases``: ``examples``, ``coverage``, ``fuzzing``,
            ``stateful``); ``None``: every one.

    Returns:
        What it found.
    """
    st = Path(sys.executable).with_name("st")
    command = [
        str(st),
        "run",
        f"{url}/openapi.json",
        "--header",
        f"x-api-key: {token}",
        "--checks",
        CHECKS,
        "--max-examples",
        str(examples),
        "--seed",
        str(seed),
        "--workers",
        "1",
        "--no-color",
    ]
    if phases is not None:
        command += ["--phases", ",".join(phases)]
    env = {**os.environ, "SCHEMATHESIS_HOOKS": "tests.schemathesis_hooks"}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO_ROOT), env.get("PYTHONPATH")]))
    done = subprocess.run(
        command,
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout_s,
        check=False,
    )
    output = done.stdout + done.stderr
    cases = re.search(r"(\d+) generated", output)
    failures = re.search(r"(\d+) found (\d+) unique failures", output)
    seconds = re.search(r" in ([\d.]+)s =", output)
    return FuzzResult(
        done.returncode,
        int(cases.group(1)) if cases else 0,
        int(failures.group(2)) if failures else 0,
        float(seconds.group(1)) if seconds else 0.0,
        output[-4000:],
    )
