"""The suite keeps its promises: ``.ci/run`` fails when a real part it promises is missing.

``.ci/run`` runs here on a copy of itself in a fake checkout: ``python3`` on ``PATH`` makes
virtual environments whose ``pip``, ``ruff`` and ``mypy`` only log their call and whose
``python`` logs ``-m pytest`` (with the environment the tests would get) and runs anything
else with this interpreter; ``.ci/postgres.sh`` is a stub per test. Then pytest itself, run as
a user would, on a Postgres-backed test: skipped without a server, failed where the real
parts are required, whatever ``CI`` says.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.studio_server import closed_port

# Runs .ci/run and pytest in processes of their own: make test-fast leaves it out.
pytestmark = pytest.mark.slow

REPO_ROOT = Path(__file__).resolve().parents[1]
#: A test on ``checkpoint_url``'s Postgres case, in a module of few imports: its run is
#: pytest's start-up and the fixture's decision, not LangChain's and LangGraph's imports.
POSTGRES_CASE = (
    "tests/test_eval_decisions.py::"
    "test_the_judge_is_asked_once_per_thread_and_never_by_a_rerun[postgres]"
)
SWITCHES = ("CI", "DEBATEGRAPH_REQUIRE_REAL_PARTS", "DEBATEGRAPH_TEST_POSTGRES_URL")

PYTHON3 = """#!/usr/bin/env bash
# python3 -m venv DIR: a fake environment whose tools log their calls.
set -eu
[ "$1 $2" = "-m venv" ] || exec {real} "$@"
mkdir -p "$3/bin"
for tool in pip ruff mypy; do
    printf '#!/usr/bin/env bash\\necho "%s $*" >>{log}\\n' "$tool" >"$3/bin/$tool"
done
cat >"$3/bin/python" <<'SH'
#!/usr/bin/env bash
if [ "${{1-}} ${{2-}}" = "-m pytest" ]; then
    {{ echo "pytest $*"
      echo "REQUIRE=${{DEBATEGRAPH_REQUIRE_REAL_PARTS-}}"
      echo "URL=${{DEBATEGRAPH_TEST_POSTGRES_URL-}}"; }} >>{log}
    exit 0
fi
exec {real} "$@"
SH
chmod +x "$3"/bin/*
"""


def ci_run(
    tmp_path: Path,
    postgres_sh: str,
    ci: str | None,
    fakes: dict[str, str] | None = None,
    hide: tuple[str, ...] = (),
) -> tuple[int, str, str]:
    """Run a copy of ``.ci/run`` with ``postgres_sh`` as ``.ci/postgres.sh``.

    Args:
        tmp_path: The test's folder.
        postgres_sh: The body of ``.ci/postgres.sh``.
        ci: ``CI``'s value, or ``None`` for none.
        fakes: Commands to fake, ``{name: bash script}`` (``{log}`` in it is the fake
            tools' log, ``{tools}`` their folder).
        hide: Commands the run must not find. With fakes or these, ``PATH`` holds the
            fakes and links to the system's commands of other names.

    Returns:
        (exit status, its stderr, the fake tools' log).
    """
    checkout, tools, log = tmp_path / "checkout", tmp_path / "tools", tmp_path / "calls.log"
    (checkout / ".ci").mkdir(parents=True)
    for name in ("run", "constraints.txt"):
        shutil.copy(REPO_ROOT / ".ci" / name, checkout / ".ci" / name)
    (checkout / ".ci" / "postgres.sh").write_text(postgres_sh)
    tools.mkdir()
    python3 = tools / "python3"
    python3.write_text(PYTHON3.format(real=sys.executable, log=log))
    python3.chmod(0o755)
    log.write_text("")
    env = {k: v for k, v in os.environ.items() if k not in SWITCHES}
    env["PATH"] = f"{tools}{os.pathsep}{env.get('PATH', '')}"
    if fakes or hide:
        others = only_other_commands(tmp_path, {*(fakes or {}), *hide})
        env["PATH"] = f"{tools}{os.pathsep}{others}"
        for name, script in (fakes or {}).items():
            fake = tools / name
            fake.write_text(
                "#!/usr/bin/env bash\n"
                + script.replace("{log}", str(log)).replace("{tools}", str(tools))
            )
            fake.chmod(0o755)
    if ci is not None:
        env["CI"] = ci
    proc = subprocess.run(
        ["bash", str(checkout / ".ci" / "run")],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    return proc.returncode, proc.stderr, log.read_text()


def only_other_commands(tmp_path: Path, hidden: set[str]) -> str:
    """A folder of links to every command on ``PATH`` but the ``hidden`` names."""
    system = tmp_path / "system"
    system.mkdir()
    for folder in reversed(os.environ.get("PATH", "").split(os.pathsep)):  # first one wins
        for command in Path(folder).glob("*") if Path(folder).is_dir() else ():
            if command.name not in hidden and os.access(command, os.X_OK):
                (system / command.name).unlink(missing_ok=True)
                (system / command.name).symlink_to(command)
    return str(system)


#: A Chromium on ``PATH``, for the runs that test a later step: without one, ``.ci/run``
#: would ``apt-get install`` it on this machine (failing without root, or on the dpkg
#: lock another run holds).
CHROMIUM_THERE = {"chromium": "true\n"}

BROKEN_POSTGRES = {
    "fails": (
        'echo "postgres.sh: E: Unable to locate package postgresql" >&2\nexit 100\n',
        ".ci/run: PostgreSQL did not start (.ci/postgres.sh failed; its log is above)",
    ),
    "prints-no-url": ("echo 'ready'\n", ".ci/run: .ci/postgres.sh printed no PostgreSQL URL"),
    "url-does-not-answer": (
        "echo 'export DEBATEGRAPH_TEST_POSTGRES_URL="
        f"postgresql://nobody:secret@127.0.0.1:{closed_port()}/none'\n",
        "does not answer",
    ),
}


@pytest.mark.parametrize("ci", [None, "false"], ids=["no-CI", "CI=false"])
@pytest.mark.parametrize("case", sorted(BROKEN_POSTGRES))
def test_ci_run_stops_when_postgres_is_not_there(case: str, ci: str | None, tmp_path: Path) -> None:
    script, message = BROKEN_POSTGRES[case]
    code, err, calls = ci_run(tmp_path, f"#!/usr/bin/env bash\n{script}", ci, CHROMIUM_THERE)
    assert code != 0, f"{case}: .ci/run went on (exit 0)\n{err}\n{calls}"
    assert "pytest" not in calls, f"{case}: the tests ran without PostgreSQL\n{calls}"
    assert "ruff check ." in calls  # it got as far as the Postgres step
    assert message in err, err
    assert "secret" not in err
    assert "Traceback" not in err


def test_ci_run_requires_the_real_parts_whatever_ci_says(tmp_path: Path) -> None:
    from tests.backends import postgres_admin_url

    url = postgres_admin_url()  # a real server: skipped without one, failed where required
    script = f"#!/usr/bin/env bash\necho 'export DEBATEGRAPH_TEST_POSTGRES_URL={url}'\n"
    code, err, calls = ci_run(tmp_path, script, "false", CHROMIUM_THERE)
    assert code == 0, err + calls
    runs = calls.split("pytest -m pytest")[1:]
    assert runs, calls
    for run in runs:  # the README's command, and the newest versions' run if there was one
        assert "REQUIRE=1\n" in run, calls
        assert f"URL={url}\n" in run, calls


def run_real_part_case(case: str = POSTGRES_CASE, **env: str) -> tuple[str, str]:
    """Run one test of a real part as a user would: by default a Postgres one, without a server.

    Args:
        case: The test's node id (another real part's test: what ``env`` sets ``PATH`` to
            may hide its command).
        env: Variables set for it, beyond the environment less :data:`SWITCHES`.

    Returns:
        (``passed``, ``failed`` (an error in its fixture counts) or ``skipped``, the output).
    """
    clean = {k: v for k, v in os.environ.items() if k not in SWITCHES}
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            case,
            "-q",
            "-rfs",
            "-p",
            "no:cacheprovider",
            "-n",
            "0",  # one process: the suite's own workers are running it
            # Neither case is a Hypothesis or an AnyIO test, and the skip or failure is the
            # fixture's: without these plugins' imports a run takes 0.7 s of CPU, not 1.5 s.
            "-p",
            "no:hypothesispytest",
            "-p",
            "no:anyio",
        ],
        cwd=REPO_ROOT,
        env={**clean, **env},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    output = proc.stdout + proc.stderr
    found = re.search(r"^=* ?1 (passed|failed|skipped|error)", output, re.MULTILINE)
    assert found, output
    return {"error": "failed"}.get(found.group(1), found.group(1)), output  # in its fixture


@pytest.mark.parametrize(
    ("env", "outcome"),
    [
        ({}, "skipped"),
        ({"CI": "false"}, "skipped"),
        ({"CI": "true"}, "failed"),
        ({"DEBATEGRAPH_REQUIRE_REAL_PARTS": "1"}, "failed"),
        ({"DEBATEGRAPH_REQUIRE_REAL_PARTS": "1", "CI": "false"}, "failed"),
    ],
    ids=["no-CI", "CI=false", "CI=true", "required", "required-CI=false"],
)
def test_postgres_case_without_a_server(env: dict[str, str], outcome: str) -> None:
    found, output = run_real_part_case(**env)
    assert found == outcome, output
    assert "DEBATEGRAPH_TEST_POSTGRES_URL is not set" in output
    if outcome == "failed":
        assert "the real parts must run here" in output, output
        assert "Traceback" not in output


BROWSER_CASE = "tests/test_view_browser.py::test_the_harness_sees_what_a_page_requests_and_runs"


@pytest.mark.parametrize(
    ("env", "outcome"),
    [({}, "skipped"), ({"DEBATEGRAPH_REQUIRE_REAL_PARTS": "1"}, "failed")],
    ids=["no-CI", "required"],
)
def test_browser_case_without_chromium(env: dict[str, str], outcome: str, tmp_path: Path) -> None:
    path = only_other_commands(tmp_path, {"chromium"})
    found, output = run_real_part_case(BROWSER_CASE, PATH=path, **env)
    assert found == outcome, output
    assert "chromium is not installed" in output
    if outcome == "failed":
        assert "the real parts must run here" in output, output
        assert "Traceback" not in output


@pytest.mark.parametrize(
    ("value", "on"),
    [
        *[("1", True), ("true", True), ("TRUE", True), ("yes", True)],
        *[("false", False), ("0", False), ("", False), ("no", False), ("off", False)],
    ],
)
def test_ci_is_true_only_when_it_says_so(
    value: str, on: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.backends import REQUIRE_ENV, real_parts_required, require_module

    monkeypatch.delenv(REQUIRE_ENV, raising=False)
    monkeypatch.setenv("CI", value)
    assert real_parts_required() is on
    # The embedded model's and the Studio server's tests decide through the same helper.
    expected = pytest.fail.Exception if on else pytest.skip.Exception
    with pytest.raises(expected, match="debategraph_no_such_module is not importable"):
        require_module("debategraph_no_such_module", "pip install nothing")
    require_module("sqlite3", "in the standard library")  # present: goes on


#: A fake ``apt-get``: what it does (besides logging its call), and whether .ci/run goes on.
APT_GET = {
    "fails": (
        'if [ "$1" = install ]; then echo "E: Unable to locate package chromium" >&2; exit 100; fi',
        False,
    ),
    "installs-nothing": ("true", False),
    "installs": (
        'if [ "$1" = install ]; then printf "#!/bin/sh\\n" >{tools}/chromium; '
        "chmod +x {tools}/chromium; fi",
        True,
    ),
}
#: The step after Chromium's: a PostgreSQL that does not start ends the run there.
NO_POSTGRES = "#!/usr/bin/env bash\nexit 1\n"
POSTGRES_FAILED = ".ci/run: PostgreSQL did not start"


@pytest.mark.parametrize("case", sorted(APT_GET))
def test_ci_run_installs_chromium_where_it_is_missing(case: str, tmp_path: Path) -> None:
    script, goes_on = APT_GET[case]
    apt_get = f'echo "apt-get $*" >>{{log}}\n{script}\n'
    code, err, calls = ci_run(tmp_path, NO_POSTGRES, None, {"apt-get": apt_get}, ("chromium",))
    assert code != 0 and "pytest" not in calls, f"{case}: {err}\n{calls}"
    assert "apt-get install -y -q chromium" in calls, calls
    assert "ruff check ." in calls and "mypy" in calls  # after lint and types
    if goes_on:
        assert POSTGRES_FAILED in err, err
        assert "chromium did not install" not in err
    else:
        assert POSTGRES_FAILED not in err, err  # stopped before it
        [line] = [ln for ln in err.splitlines() if ln.startswith(".ci/run:")]
        assert line == (
            ".ci/run: chromium did not install (apt-get install chromium failed; its log is above)"
        )


def test_ci_run_leaves_an_installed_chromium_alone(tmp_path: Path) -> None:
    fakes = {"apt-get": 'echo "apt-get $*" >>{log}\n', "chromium": "true\n"}
    code, err, calls = ci_run(tmp_path, NO_POSTGRES, None, fakes)
    assert code != 0 and POSTGRES_FAILED in err, err
    assert "apt-get" not in calls, calls
