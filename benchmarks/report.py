"""``make bench``: run every benchmark once; write its record, the report and the README's figures.

Runs, one after the other, each script below with ``--json`` (its console output shows
as it goes), then writes:

* ``docs/benchmarks.json``, the record: when, on which machine, each script's JSON output,
  its exit status, how long it ran and the load average at its start and end. It is the
  one source of every figure the README and ``docs/`` state;
* ``docs/benchmarks.md``, the report rendered from it: one table of every figure (what it
  is, its target, what was measured, how), the machine, the load, and why a figure missed;
* the README's generated figure blocks (:data:`README_FIGURES`, the embedded eval's table
  and the test suite's block), rendered from the record (``benchmarks/blocks.py``).

A failing figure does not stop the run: the report says which failed. Exit status 1 if
any counting figure failed. ``--render`` writes the report and the README's blocks again
from the record without running anything; ``--quick`` writes ``--out`` only (a smoke run
never becomes the record).

The suite block: a record may hold ``"suite": {"command", "passed", "wall_s", "written",
"machine", "load"}`` (the test runner's own measurement, written into the record by
whatever measures it); without one the block says that no report holds the suite's size
and time.

    python benchmarks/report.py [--quick] [--out docs/benchmarks.md] [--render]
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO_ROOT = HERE.parent
if str(HERE) not in sys.path:  # imported by path (the tests) rather than run as a script
    sys.path.insert(0, str(HERE))

import blocks  # noqa: E402 (benchmarks/ is on sys.path from here on)

#: Where the embedded eval keeps its checkpoints between ``make bench`` runs (git-ignored).
EVAL_WORKDIR = ".bench-eval"

#: (script, title, extra arguments, extra arguments in full mode only): the benchmarks
#: ``make bench`` runs, in order. The embedded eval (100 questions, every mode and protocol)
#: takes hours on 2 CPUs, so in full mode it keeps its work in ``EVAL_WORKDIR``: a run that
#: stopped resumes, and a finished one is read back from its checkpoints (no model call) to
#: rewrite ``docs/eval``. Its stub figures measure a fresh run each time, so they run apart.
#: ``vote_then_debate.py`` shares that work directory: the vote and debate-full threads it
#: shares with the embedded eval are read back, and only vote-then-debate runs.
#: In full mode ``embedded.py`` also times a fresh install (the README's set-up figure).
SCRIPTS: tuple[tuple[str, str, tuple[str, ...], tuple[str, ...]], ...] = (
    ("speed.py", "Speed beside the peers (stub server, 200 ms per call)", (), ()),
    ("solver_debate.py", "Solver debate in-process (stub server)", (), ()),
    ("durability.py", "Durability: kill -9 and resume, many processes on one file", (), ()),
    (
        "serve.py",
        "Serving: 100 debates through Aegra on PostgreSQL beside the in-process API; "
        "schemathesis against its OpenAPI",
        ("--only", "throughput", "--only", "fuzz"),
        (),
    ),
    (
        "serve.py",
        "Serving: fair shares (one user's flood, a 50 MB body)",
        ("--only", "fairness"),
        (),
    ),
    ("checkpoint_bytes.py", "Checkpoint size", (), ()),
    ("chat.py", "Group chat (stub server)", (), ()),
    ("open_agents.py", "Open agents: per-agent models and tools (stub servers)", (), ()),
    ("composition.py", "Composition: a debate as a supervisor's agent (stub server)", (), ()),
    (
        "providers.py",
        "A paid provider's limits and faults: solve and eval (stub server as a provider)",
        (),
        (),
    ),
    ("eval.py", "Eval harness (stub server at 200 ms per call)", ("--only", "stub"), ()),
    (
        "eval.py",
        "Eval on the embedded model (SmolLM2-135M, arithmetic)",
        ("--only", "embedded"),
        ("--workdir", EVAL_WORKDIR),
    ),
    (
        "simulated.py",
        "Does voting explain debate's gain? The eval on simulated populations (stub server)",
        (),
        (),
    ),
    (
        "vote_then_debate.py",
        "Vote, then debate on the embedded model (SmolLM2-135M, arithmetic)",
        (),
        ("--workdir", EVAL_WORKDIR),
    ),
    ("embedded.py", "Embedded model (llama.cpp server, SmolLM2-135M)", (), ("--install",)),
)


RECORD = REPO_ROOT / "docs" / "benchmarks.json"
REPORT = REPO_ROOT / "docs" / "benchmarks.md"
README = REPO_ROOT / "README.md"
EVAL_DOCS = REPO_ROOT / "docs" / "eval"

#: The figures the README states, each in one generated block of its own:
#: block key -> (script, the figure's name in that script's JSON output).
README_FIGURES: dict[str, tuple[str, str]] = {
    "figure.install": ("embedded.py", "Install"),
    "figure.embedded-solve": ("embedded.py", "CLI solve"),
    "figure.embedded-throughput": ("embedded.py", "Embedded throughput"),
    "figure.client-cpu": ("speed.py", "Client CPU per call"),
    "figure.start-up": ("speed.py", "Start-up and the CLI end to end"),
    "figure.bytes-per-turn": ("checkpoint_bytes.py", "Bytes per agent turn"),
    "figure.serve": ("serve.py", "100 debates through the server"),
    "figure.serve-flood": ("serve.py", "One user floods, another is served"),
    "figure.serve-body": ("serve.py", "A 50 MB body is refused before it is read whole"),
    "figure.eval-throughput": ("eval.py", "Eval throughput"),
    "figure.providers-solve": ("providers.py", "solve within a request limit"),
    "figure.providers-eval": ("providers.py", "eval within a request limit"),
    "figure.providers-faults": ("providers.py", "Random faults"),
    "figure.providers-cost": ("providers.py", "Cost and a budget"),
    "figure.providers-cache": ("providers.py", "The response cache"),
}
#: The block of the embedded eval's table (from ``docs/eval/results.json``).
EVAL_BLOCK = "figure.embedded-eval"
#: The block of the test suite's size and time (from the record's ``suite``).
SUITE_BLOCK = "suite"


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


def loadavg() -> list[float]:
    """The 1, 5 and 15-minute load averages now."""
    return [round(value, 2) for value in os.getloadavg()]


def load_phrase(load: dict[str, list[float]]) -> str:
    """A recorded load (``before`` / ``after`` load averages) in words: the 1-minute ones."""
    return (
        f"1-minute load average {load['before'][0]:.2f} at its start, "
        f"{load['after'][0]:.2f} at its end"
    )


def load_text(run: dict[str, Any]) -> str:
    """The load a script ran under, in a few words (``load not recorded`` without one)."""
    load = run.get("load")
    if not load:
        return "load not recorded"
    return f"load {load['before'][0]:.2f} -> {load['after'][0]:.2f}"


def cell(text: str) -> str:
    """``text`` safe in a Markdown table cell."""
    return " ".join(str(text).split()).replace("|", "\\|")


def now() -> str:
    """The date and time a run is stamped with."""
    return datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")


def new_record(runs: list[dict[str, Any]], quick: bool) -> dict[str, Any]:
    """The record of a ``make bench`` run made now, on this machine.

    Args:
        runs: Each script's run: ``script``, ``title``, ``payload`` (its JSON output, or
            ``None``), ``exit_code`` and, where measured, ``elapsed_s`` and ``load``.
        quick: Whether the scripts ran in ``--quick`` mode.

    Returns:
        The record (what ``docs/benchmarks.json`` holds).
    """
    return {
        "written": now(),
        "quick": quick,
        "machine": machine(),
        "cpus": os.cpu_count(),
        "runs": runs,
    }


def render(results: list[tuple[str, str, dict[str, Any] | None, int]], quick: bool) -> str:
    """The Markdown report of ``results`` (script, title, payload, exit status), made now."""
    runs = [
        {"script": script, "title": title, "payload": payload, "exit_code": code}
        for script, title, payload, code in results
    ]
    return render_report(new_record(runs, quick))


def render_report(record: dict[str, Any]) -> str:
    """The Markdown report (``docs/benchmarks.md``) of a record.

    Args:
        record: What :func:`new_record` returns (or ``docs/benchmarks.json`` holds).

    Returns:
        The report.
    """
    lines = [
        "# Benchmarks",
        "",
        f"Written by `make bench`{' (quick mode)' if record['quick'] else ''} on "
        f"{record['written']}, from its record `docs/benchmarks.json`.",
        "",
        f"Machine: {record['machine']}.",
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
    for run in record["runs"]:
        script, title, payload = run["script"], run["title"], run["payload"]
        if payload is None:
            lines.append(
                f"| {cell(title)} | - | did not run (exit {run['exit_code']}) | FAIL | `{script}` |"
            )
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
    lines += ["", "## Load and time while each script ran", ""]
    if any(run.get("load") for run in record["runs"]):
        lines += [
            f"- `{run['script']}` ({cell(run['title'])}): "
            + (f"{run['elapsed_s']:.0f} s; " if run.get("elapsed_s") is not None else "")
            + (load_phrase(run["load"]) if run.get("load") else "load not recorded")
            for run in record["runs"]
        ]
        total = sum(run.get("elapsed_s") or 0 for run in record["runs"])
        lines += ["", f"The whole run took {total / 60:.0f} min on {record['cpus']} CPUs."]
    else:
        lines.append("Not recorded: " + record.get("note", "this record keeps no load or time."))
    if notes:
        lines += ["", "## Notes", ""] + [f"- {cell(n)}" for n in notes]
    lines += [
        "",
        f"{failed} figure(s) failed." if failed else "Every figure met its target.",
        "",
        "Run it again with `make bench` (the embedded eval keeps its work in "
        f"`{EVAL_WORKDIR}/`, so a stopped run resumes and a finished one is read back without a "
        "model call; `make bench-quick` for a smoke run). The AutoGen peer "
        "needs a virtual environment of its own (AutoGen pins protobuf 5, the LangGraph "
        "server 6): `make peers` makes `.venv-peers` from "
        "`benchmarks/peers/requirements.txt`.",
        "",
    ]
    return "\n".join(lines)


def find_figure(
    record: dict[str, Any], script: str, name: str
) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """The run of ``script`` that measured figure ``name``, and the figure; ``None`` if none."""
    for run in record["runs"]:
        if run["script"] != script or run["payload"] is None:
            continue
        for fig in run["payload"]["figures"]:
            if fig["name"] == name:
                return run, fig
    return None


def stamp(record: dict[str, Any], run: dict[str, Any]) -> str:
    """Where a figure comes from: its script, the date, the machine and the load.

    A script rerun alone (``--only``) keeps its own date and machine in its run.
    """
    written = run.get("written", record["written"])
    where = run.get("machine", record["machine"])
    return f"`benchmarks/{run['script']}`, {written}, {where.split(';')[0]}, {load_text(run)}"


def figure_block(record: dict[str, Any], script: str, name: str) -> str:
    """The README's block of one figure: the headline of the report, and where it comes from."""
    found = find_figure(record, script, name)
    if found is None:
        return (
            f"Not measured: the latest report ({record['written']}) holds no figure "
            f"{name!r} of `benchmarks/{script}`."
        )
    run, fig = found
    verdict = "met" if fig["passed"] else "missed"
    return (
        f"Measured: {fig['headline']} (target {fig['target']}: {verdict}; "
        f"{stamp(record, run)}; [docs/benchmarks.md](docs/benchmarks.md))."
    )


def eval_block(docs: Path) -> str:
    """The README's table of the embedded eval, from ``docs/eval/results.json``.

    Args:
        docs: The directory ``benchmarks/eval.py`` publishes to.

    Returns:
        The block: the plain modes and the matched votes, then how the run got its threads
        (a read-back is said to be one).
    """
    path = docs / "results.json"
    if not path.is_file():
        return f"Not measured: `{path.relative_to(REPO_ROOT)}` does not exist."
    result = json.loads(path.read_text(encoding="utf-8"))
    written = ""
    summary = docs / "results.md"
    if summary.is_file():
        found = re.search(r"Written by `benchmarks/eval.py` on (\S+?):", summary.read_text())
        written = f" on {found.group(1)}" if found else ""
    matched = {m["vote_mode"]: m["mode"] for m in result.get("matched", [])}
    lines = [
        "| mode | accuracy (95% CI) | total tok/q | calls/q |",
        "| :--- | ---: | ---: | ---: |",
    ]
    for m in result["modes"]:
        if m["decision"] != "plurality":
            continue
        label = m["mode"]
        if label in matched:
            label += f" (matched to {matched[label]})"
        elif label == "vote":
            label += f" ({result['meta']['agents']})"
        lines.append(
            f"| {label} | {m['accuracy']:.2f} [{m['ci95'][0]:.2f}, {m['ci95'][1]:.2f}] "
            f"| {m['tokens']:,.0f} | {m['calls']:.1f} |"
        )
    threads, load = result["meta"]["threads"], result["meta"].get("load")
    # The table holds counts (accuracy, tokens and calls a question): what else ran on
    # the machine changes none of them, only how long the run took, which it leaves out.
    load_said = (
        load_phrase(load)
        if load
        else "run before the eval recorded its load: the table holds counts (accuracy, tokens "
        "and calls a question), which the load does not change"
    )
    lines += [
        "",
        f"Written by `benchmarks/eval.py`{written} ([docs/eval/results.md]"
        f"(docs/eval/results.md), {load_said}): that run ran {threads['started']} "
        f"threads and resumed {threads['resumed']}, and read {threads['finished']} back "
        "from the checkpoints of earlier runs without a model call (a read-back: its time "
        "is not the eval's).",
    ]
    return "\n".join(lines)


def suite_block(record: dict[str, Any]) -> str:
    """The README's block of the test suite's size and time, from the record's ``suite``."""
    suite = record.get("suite")
    if not suite:
        return (
            "Not measured: no report holds the suite's size and time yet (the record's "
            "`suite`, `benchmarks/report.py`)."
        )
    return (
        f"Measured: `{suite['command']}`: {suite['passed']:,} passed in "
        f"{suite['wall_s'] / 60:.1f} min ({suite['written']}, {suite['machine']}, "
        f"{suite['load']})."
    )


def readme_blocks(record: dict[str, Any], eval_docs: Path = EVAL_DOCS) -> dict[str, str]:
    """Every block of the README this script writes, by key, rendered from ``record``."""
    rendered = {
        key: figure_block(record, script, name) for key, (script, name) in README_FIGURES.items()
    }
    rendered[EVAL_BLOCK] = eval_block(eval_docs)
    rendered[SUITE_BLOCK] = suite_block(record)
    return rendered


def write_outputs(record: dict[str, Any], out: Path, readme: Path | None) -> None:
    """Write the report to ``out`` and, unless ``None``, the README's blocks."""
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(render_report(record))
    print(f"wrote {out}")
    if readme is not None:
        text = readme.read_text(encoding="utf-8")
        readme.write_text(blocks.fill(text, readme_blocks(record)), encoding="utf-8")
        print(f"wrote the generated figure blocks of {readme}")


def run_scripts(quick: bool, only: tuple[str, ...] = ()) -> list[dict[str, Any]]:
    """Run every script of :data:`SCRIPTS` (or those ``only`` names); each one's run."""
    runs: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="debategraph-bench-") as tmp:
        for index, (script, title, extra, full_extra) in enumerate(SCRIPTS):
            if only and not {script, f"{script}:{title}"} & set(only):
                continue
            out = Path(tmp) / f"{index}-{script}.json"
            cmd = [sys.executable, str(HERE / script), "--json", str(out), *extra]
            cmd += ["--quick"] if quick else list(full_extra)
            print(f"== {script}", flush=True)
            before, started = loadavg(), time.perf_counter()
            code = subprocess.run(cmd, cwd=REPO_ROOT, check=False).returncode
            runs.append(
                {
                    "script": script,
                    "title": title,
                    "payload": json.loads(out.read_text()) if out.exists() else None,
                    "exit_code": code,
                    "elapsed_s": round(time.perf_counter() - started, 1),
                    "load": {"before": before, "after": loadavg()},
                    "written": now(),
                    "machine": machine(),
                }
            )
    return runs


def main() -> int:
    """Run the scripts (or read the record), write the record, the report and the README."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="each script's --quick mode")
    parser.add_argument("--out", type=Path, default=REPORT)
    parser.add_argument(
        "--render",
        action="store_true",
        help=f"run nothing: write the report and the README's blocks from {RECORD.name}",
    )
    parser.add_argument(
        "--only",
        action="append",
        default=[],
        metavar="SCRIPT",
        help=f"run only this script, or SCRIPT:TITLE (repeatable), and put its runs into "
        f"{RECORD.name} in place of the ones it had; each keeps its own date, machine, load",
    )
    args = parser.parse_args()
    if args.render:
        write_outputs(json.loads(RECORD.read_text()), args.out, README)
        return 0
    if args.only and not args.quick:
        known = {script for script, *_ in SCRIPTS} | {f"{s}:{t}" for s, t, *_ in SCRIPTS}
        unknown = sorted(set(args.only) - known)
        if unknown:
            parser.error(f"--only {unknown[0]}: not one of the benchmarks (benchmarks/*.py)")
        runs = run_scripts(False, tuple(args.only))
        record = json.loads(RECORD.read_text())
        fresh = {(run["script"], run["title"]) for run in runs}
        order = [(script, title) for script, title, *_ in SCRIPTS]
        kept = [
            run
            for run in record["runs"]
            if (run["script"], run["title"]) not in fresh
            and (run["script"], run["title"]) in order  # a title no script has any more
        ]
        record["runs"] = sorted(
            [*kept, *runs], key=lambda run: order.index((run["script"], run["title"]))
        )
        RECORD.write_text(json.dumps(record, indent=1) + "\n")
        write_outputs(record, args.out, README)
        return 1 if any(run["exit_code"] != 0 for run in runs) else 0
    runs = run_scripts(args.quick)
    record = new_record(runs, args.quick)
    if not args.quick:  # a smoke run never becomes the record
        if RECORD.is_file():  # the suite's measurement is not make bench's to drop
            kept = json.loads(RECORD.read_text()).get("suite")
            if kept:
                record["suite"] = kept
        RECORD.write_text(json.dumps(record, indent=1) + "\n")
    write_outputs(record, args.out, None if args.quick else README)
    return 1 if any(run["exit_code"] != 0 for run in runs) else 0


if __name__ == "__main__":
    sys.exit(main())
