"""One run's path, as ``docs/architecture.md`` draws it, is the path a run takes.

``debategraph solve`` runs in a fresh interpreter against the stub server, each module of
the package whose code runs noted the first time (a call made while a module is being
imported is no step of the run), up to the run's first HTTP request (the endpoint asked
what it serves). The doc's ``run-path`` block names those modules in that order; and a
run builds its pattern's graph once.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.processes import python_output

DOC = Path(__file__).resolve().parents[1] / "docs" / "architecture.md"

#: Runs ``solve`` against a stub server; prints the modules whose code ran before the
#: first connection to the stub, and how many times the pattern's factory ran.
TRACE = r"""
import json, socket, sys, tempfile, threading
from tests.openai_stub import StubOpenAIServer
from debategraph.graphs import solver_debate

server = StubOpenAIServer()
server.start()
port = int(server.url.rsplit(":", 1)[1].split("/")[0])
seen, stop, builds = [], threading.Event(), []
connect = socket.socket.connect

def connecting(self, address):
    if isinstance(address, tuple) and address[1] == port:
        stop.set()
    return connect(self, address)

def noting(frame, event, arg):
    if stop.is_set() or event != "call" or frame.f_code.co_name == "<module>":
        return
    module = frame.f_globals.get("__name__", "")
    if not module.startswith("debategraph.") or module in seen:
        return
    outer = frame.f_back
    while outer is not None:  # a call made while a module is imported
        if outer.f_code.co_name == "<module>" and outer.f_globals.get("__name__") != "__main__":
            return
        outer = outer.f_back
    seen.append(module)

factory = solver_debate.build_solver_debate
def counted(*args, **kwargs):
    builds.append(1)
    return factory(*args, **kwargs)

solver_debate.build_solver_debate = counted
socket.socket.connect = connecting
from debategraph.cli.app import main
sys.setprofile(noting)
threading.setprofile(noting)
try:
    main(["solve", "What is 2+3?", "--agents", "2", "--rounds", "1", "--model", "stub",
          "--base-url", server.url, "--db", tempfile.mktemp(suffix=".sqlite"),
          "--max-retries", "0", "--json"])
except SystemExit as exc:
    code = exc.code
finally:
    sys.setprofile(None)
    threading.setprofile(None)
print(json.dumps({"path": seen, "builds": len(builds), "code": code}))
"""


def drawn_path() -> list[str]:
    """The modules of the doc's ``run-path`` block: the first word of each line."""
    block = re.search(r"```run-path\n(.*?)```", DOC.read_text(encoding="utf-8"), re.DOTALL)
    assert block, "docs/architecture.md has no run-path block"
    return [line.split()[0] for line in block.group(1).splitlines() if line.strip()]


def as_path(module: str) -> str:
    """``debategraph.runs.start`` -> ``runs/start.py`` (a package: its ``__init__.py``)."""
    parts = module.split(".")[1:]
    src = Path(__file__).resolve().parents[1] / "src" / "debategraph"
    if (src.joinpath(*parts) / "__init__.py").exists():
        return "/".join([*parts, "__init__.py"])
    return "/".join(parts) + ".py"


@pytest.mark.slow  # make test-fast leaves it out: a Python process of its own
def test_the_drawn_path_is_the_path_one_solve_takes() -> None:
    ran = json.loads(python_output(TRACE).strip().splitlines()[-1])
    assert ran["code"] in (0, None), ran
    assert [as_path(m) for m in ran["path"]] == drawn_path()
    assert ran["builds"] == 1  # the settings are checked by building the graph the run runs
