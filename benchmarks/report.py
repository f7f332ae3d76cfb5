"""``make bench``: run every benchmark once and write ``docs/benchmarks.md``.

Runs, one after the other, each script below with ``--json`` (its console output shows
as it goes), then writes the report: one table of every figure (what it is, its target,
what was measured, how) and the machine it ran on. A failing figure does not stop the
run: the report says which failed. Exit status 1 if any counting figure failed.

    python benchmarks/report.py [--quick] [--out docs/benchmarks.md]
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO_ROOT = HERE.parent

#: Where the embedded eval keeps its checkpoints between ``make bench`` runs (git-ignored).
EVAL_WORKDIR = ".bench-eval"

#: (script, title, extra arguments, extra arguments in full mode only): the benchmarks
#: ``make bench`` runs, in order. The embedded eval (100 questions, every mode and protocol)
#: takes hours on 2 CPUs, so in full mode it keeps its work in ``EVAL_WORKDIR``: a run that
#: stopped resumes, and a finished one is read back from its checkpoints (no model call) to
#: rewrite ``docs/eval``. Its stub figures measure a fresh run each time, so they run apart.
SCRIPTS: tuple[tuple[str, str, tuple[str, ...], tuple[str, ...]], ...] = (
    ("speed.py", "Speed beside the peers (stub server, 200 ms per call)", (), ()),
    ("solver_debate.py", "Solver debate in-process (stub server)", (), ()),
    ("durability.py", "Durability: kill -9 and resume, many processes on one file", (), ()),
    (
        "serve.py",
        "Serving: 100 debates through Aegra on PostgreSQL beside the in-process API; "
        "schemathesis against its OpenAPI",
        (),
        (),
    ),
    ("checkpoint_bytes.py", "Checkpoint size", (), ()),
    ("chat.py", "Group chat (stub server)", (), ()),
    ("open_agents.py", "Open agents: per-agent models and tools (stub servers)", (), ()),
    ("composition.py", "Composition: a debate as a supervisor's agent (stub server)", (), ()),
    ("eval.py", "Eval harness (stub server at 200 ms per call)", ("--only", "stub"), ()),
    (
        "eval.py",
        "Eval on the embedded model (SmolLM2-135M, arithmetic)",
        ("--only", "embedded"),
        ("--workdir", EVAL_WORKDIR),
    ),
    ("embedded.py", "Embedded model (llama.cpp server, SmolLM2-135M)", (), ()),
)


def machine() -> str:
    """CPU model, cores, memory, OS and Python of this machine, on one line."""
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    memory = ""
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal"):
                memory = f", {int(line.split()[1]) / 1024 / 1024:.0f} GiB RAM"
                break
    except OSError:
        pass
    return (
        f"{cpu}, {os.cpu_count()} CPUs{memory}; {platform.system()} {platform.release()}; "
        f"Python {platform.python_version()}"
    )


def cell(text: str) -> str:
    """``text`` safe in a Markdown table cell."""
    return " ".join(str(text).split()).replace("|", "\\|")


def render(results: list[tuple[str, str, dict[str, Any] | None, int]], quick: bool) -> str:
    """The Markdown report."""
    now = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    lines = [
        "# Benchmarks",
        "",
        f"Written by `make bench`{' (quick mode)' if quick else ''} on {now}.",
        "",
        f"Machine: {machine()}.",
        "",
        "Every model call goes over HTTP to the OpenAI-compatible stub server of the test "
        "suite (`tests/openai_stub.py`), which answers after a set latency; the embedded "
        "figures use the real llama.cpp server and SmolLM2-135M. The peers (plain LangGraph, "
        "AutoGen-core) run the same debate against the same server, alternating run by run; "
        "see each script's docstring for exactly what it runs. The serving figure "
        "(`serve.py`) runs `debategraph serve` (Aegra) on the PostgreSQL server named by "
        "`DEBATEGRAPH_TEST_POSTGRES_URL` (or one `.ci/postgres.sh` starts), with the same "
        "debates in one process beside it.",
        "",
        "| Figure | Target | Measured | Result | How |",
        "|---|---|---|---|---|",
    ]
    failed = 0
    notes: list[str] = []
    misses: list[str] = []
    for script, title, payload, code in results:
        if payload is None:
            lines.append(f"| {cell(title)} | - | did not run (exit {code}) | FAIL | `{script}` |")
            failed += 1
            continue
        for fig in payload["figures"]:
            verdict = "pass" if fig["passed"] else ("advisory" if fig["advisory"] else "FAIL")
            failed += verdict == "FAIL"
            lines.append(
                f"| {cell(fig['name'])} | {cell(fig['target'])} | {cell(fig.get('headline', ''))}"
                f" | {verdict} | {cell(fig['setup'])} (`{script}`) |"
            )
        notes += [f"`{script}`: {w}" for w in payload.get("warnings", [])]
        misses += [
            f"**{fig['name']}** ({fig['headline']}): {fig['why']}"
            for fig in payload["figures"]
            if not fig["passed"] and fig.get("why")
        ]
    if misses:
        lines += ["", "## Why a figure missed its target, and what would reach it", ""]
        lines += [f"- {cell(m)}" for m in misses]
    if notes:
        lines += ["", "## Notes", ""] + [f"- {cell(n)}" for n in notes]
    lines += [
        "",
        f"{failed} figure(s) failed." if failed else "Every figure met its target.",
        "",
        "Run it again with `make bench` (about 16 minutes, plus the embedded eval: about 3 "
        f"hours on 2 CPUs the first time, kept in `{EVAL_WORKDIR}/` so a finished one is read "
        "back without a model call; `make bench-quick` for a smoke run). The AutoGen peer "
        "needs a virtual environment of its own (AutoGen pins protobuf 5, the LangGraph "
        "server 6): `make peers` makes `.venv-peers` from "
        "`benchmarks/peers/requirements.txt`.",
        "",
    ]
    return "\n".join(lines)


def main() -> int:
    """Run the scripts, write the report."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="each script's --quick mode")
    parser.add_argument("--out", type=Path, default=REPO_ROOT / "docs" / "benchmarks.md")
    args = parser.parse_args()
    results: list[tuple[str, str, dict[str, Any] | None, int]] = []
    with tempfile.TemporaryDirectory(prefix="debategraph-bench-") as tmp:
        for index, (script, title, extra, full_extra) in enumerate(SCRIPTS):
            out = Path(tmp) / f"{index}-{script}.json"
            cmd = [sys.executable, str(HERE / script), "--json", str(out), *extra]
            cmd += ["--quick"] if args.quick else list(full_extra)
            print(f"== {script}", flush=True)
            code = subprocess.run(cmd, cwd=REPO_ROOT, check=False).returncode
            payload = json.loads(out.read_text()) if out.exists() else None
            results.append((script, title, payload, code))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(render(results, args.quick))
    print(f"wrote {args.out}")
    return 1 if any(code != 0 for *_, code in results) else 0


if __name__ == "__main__":
    sys.exit(main())
