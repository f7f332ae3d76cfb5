"""Does voting explain debate's gain? The eval on simulated populations (docs/eval/simulated.md).

"Debate or Vote" (NeurIPS 2025) finds that majority voting explains most
of what multi-agent debate gains over one agent. This script reproduces the direction of
that finding with ``debategraph eval`` itself, end to end through the CLI, on populations
whose behaviour is known: the test suite's stub responder ``tests.eval_data.herd_responder``
behind the OpenAI-compatible stub server (``tests/openai_stub.py``), answering generated
GSM8K-style questions (``tests.eval_data.write_gsm8k``: gold numbers known).

Each simulated agent answers right with probability ``P_RIGHT``, else one of ``WRONG``
common wrong answers, always with the same confidence (so a tie-break by confidence learns
nothing); after round 1 it follows the previous round's plurality with probability ``c``
(conformity), else answers afresh as in round 1. Debate brings no new
information in this model (nothing an agent reads makes it more likely to be right on its
own), which is the paper's account of debate: a martingale over beliefs, so what it gains
comes from aggregation. Three populations span ``c`` from independent to herd-like.

Per population: ``single``, ``vote``, ``debate-full`` and ``vote-then-debate`` (where the
eval has it), ``--agents 5 --rounds 3``, with the matched-budget vote. The figure is the
share of debate's gain over one agent that the vote of the first round already has:
``(vote - single) / (debate - single)``. It passes when that share is at least one half
in every population where debate beats one agent (the direction of the finding: voting
explains most of the gain). The accuracies come with their Wilson intervals, and each
debate is tested against its vote (McNemar, from the eval's own comparisons).

Usage::

    .venv/bin/python benchmarks/simulated.py                # 200 questions each (~4 min)
    .venv/bin/python benchmarks/simulated.py --quick   # 4 questions each, no matched vote
    .venv/bin/python benchmarks/simulated.py --json out.json

The full run writes ``docs/eval/simulated.md``. Exit status 1 if the figure fails.
"""

from __future__ import annotations

import datetime
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from eval import REPO_ROOT, modes_of, run_eval, stub_server
from harness import Figure, base_parser, run_benchmark, stub_model_args

DOCS = REPO_ROOT / "docs" / "eval" / "simulated.md"
#: The populations: (name, conformity c).
POPULATIONS: tuple[tuple[str, float], ...] = (
    ("independent", 0.0),
    ("conformist", 0.5),
    ("herd", 0.9),
)
P_RIGHT = 0.45
WRONG = 3
AGENTS = 5
ROUNDS = 3
PARALLEL = 8
SEED = 0
#: Every answer's confidence, right or wrong: it tells the vote nothing.
CONFIDENCE = 0.9
QUESTIONS = 200
QUICK_QUESTIONS = 4
TIMEOUT_S = 1800.0
#: The modes run per population (``vote-then-debate`` where the eval knows it).
MODES = ("single", "vote", "debate-full", "vote-then-debate")


def _available_modes() -> tuple[str, ...]:
    """:data:`MODES` less any this checkout's eval does not have."""
    from debategraph.eval.modes import MODES as KNOWN

    return tuple(m for m in MODES if m in KNOWN)


def _row(summary: dict[str, Any]) -> str:
    low, high = summary["ci95"]
    return f"{summary['accuracy']:.2f} [{low:.2f}, {high:.2f}]"


def _comparison(result: dict[str, Any], a: str, b: str) -> dict[str, Any] | None:
    """The eval's paired test of ``a`` against ``b`` (either order), if it made one."""
    for entry in [*result.get("comparisons", []), *result.get("matched", [])]:
        pair = {entry.get("a"), entry.get("b"), entry.get("mode"), entry.get("vote_mode")}
        if {a, b} <= pair:
            return entry
    return None


def _p_text(test: dict[str, Any] | None) -> str:
    """``p = 0.02`` from a paired test's entry, ``-`` without one."""
    return "-" if test is None else f"p = {test['p_value']:.3g}"


def run_population(
    workdir: Path, name: str, c: float, questions: int, *, matched: bool = True
) -> dict[str, Any]:
    """One population's eval through the CLI; its results document."""
    if str(REPO_ROOT) not in sys.path:
        sys.path.insert(0, str(REPO_ROOT))
    from tests.eval_data import herd_responder, write_gsm8k

    data = write_gsm8k(workdir / f"{name}.jsonl", questions)
    out = workdir / f"eval-{name}"
    respond = herd_responder(P_RIGHT, c, WRONG, seed=SEED, sure=CONFIDENCE, unsure=CONFIDENCE)
    with stub_server(respond) as server:
        args = [
            "gsm8k", "--dataset", str(data), "--out", str(out),
            "--modes", ",".join(_available_modes()),
            "--agents", str(AGENTS), "--rounds", str(ROUNDS), "--parallel", str(PARALLEL),
            *stub_model_args(server.url, out / "checkpoints.sqlite"),
            *([] if matched else ["--no-matched"]),
        ]  # fmt: skip
        run = run_eval(args, workdir, TIMEOUT_S)
    result = run.result()
    result["command"] = args
    return result


def _share(modes: dict[str, dict[str, Any]]) -> float | None:
    """``(vote - single) / (debate - single)``, or ``None`` where debate does not gain."""
    single = float(modes["single"]["accuracy"])
    gain = float(modes["debate-full"]["accuracy"]) - single
    if gain <= 0:
        return None
    return float((modes["vote"]["accuracy"] - single) / gain)


def figure(workdir: Path, *, questions: int, docs: Path | None) -> Figure:
    """The figure over every population (and ``docs/eval/simulated.md`` when ``docs``)."""
    rows: list[tuple[str, str]] = []
    table: list[str] = []
    values: dict[str, Any] = {}
    passed = True
    for name, c in POPULATIONS:
        result = run_population(workdir, name, c, questions, matched=docs is not None)
        modes = modes_of(result)
        share = _share(modes)
        if share is not None and share < 0.5:
            passed = False
        matched = next((m for m in modes if m.startswith("vote@")), None)
        p_text = _p_text(_comparison(result, "debate-full", "vote"))
        p_matched = _p_text(_comparison(result, "debate-full", matched)) if matched else "-"
        values[name] = {
            "c": c,
            "share": share,
            "modes": {m: {"accuracy": s["accuracy"], "ci95": s["ci95"]} for m, s in modes.items()},
            "tokens": {m: s["tokens"] for m, s in modes.items()},
        }
        shown = "debate gains nothing" if share is None else f"{share:.0%}"
        rows.append(
            (
                f"{name} (c = {c})",
                f"single {_row(modes['single'])}, vote {_row(modes['vote'])}, "
                f"debate-full {_row(modes['debate-full'])}: vote has {shown} of the gain",
            )
        )
        cells = [
            f"{name} (c = {c})",
            _row(modes["single"]),
            _row(modes["vote"]),
            _row(modes["debate-full"]),
            _row(modes[matched]) + f" (`{matched}`)" if matched else "-",
            _row(modes["vote-then-debate"]) if "vote-then-debate" in modes else "-",
            shown,
            p_text,
            p_matched,
        ]
        table.append("| " + " | ".join(cells) + " |")
    if docs is not None:
        write_docs(docs, table, questions)
    return Figure(
        number=1,
        name="Voting explains debate's gain (simulated populations)",
        setup=(
            f"debategraph eval gsm8k against the stub server, {questions} generated questions per "
            f"population, agents right with p = {P_RIGHT} ({WRONG} common wrong answers), "
            f"following the plurality with probability c after round 1; --agents {AGENTS} "
            f"--rounds {ROUNDS}"
        ),
        rows=rows,
        target="the vote has at least half of debate's gain over one agent, in every population",
        passed=passed,
        values=values,
        headline=", ".join(
            f"{n}: {'-' if v['share'] is None else format(v['share'], '.0%')}"
            for n, v in values.items()
        ),
    )


def write_docs(path: Path, table: Sequence[str], questions: int) -> None:
    """``docs/eval/simulated.md``: the table and the exact command."""
    day = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d")
    lines = [
        "# Does voting explain debate's gain? Simulated populations",
        "",
        f"Written by `benchmarks/simulated.py` on {day} ({os.cpu_count()} CPUs): "
        f"`debategraph eval gsm8k` end to end through the CLI, against the test suite's "
        f"OpenAI-compatible stub server answering as `tests.eval_data.herd_responder`, on "
        f"{questions} generated GSM8K-style questions per population.",
        "",
        f"Every simulated agent answers right with probability {P_RIGHT}, else one of {WRONG} "
        f"common wrong answers, with the same confidence ({CONFIDENCE}) right or wrong; after "
        "round 1 it follows the previous round's plurality with probability c, else answers "
        "afresh. Debate brings no new information here, which is "
        'the account "Debate or Vote" (NeurIPS 2025) gives of it: the finding reproduced is '
        "its direction, that majority voting explains most of debate's gain over one agent. "
        "This is a simulation of that account, not a measurement of a model.",
        "",
        "| population | single | vote | debate-full | matched vote | vote-then-debate "
        "| vote's share of debate's gain | debate-full vs vote (McNemar) "
        "| debate-full vs matched vote (McNemar) |",
        "|---|---|---|---|---|---|---|---|---|",
        *table,
        "",
        "Accuracy with its 95% Wilson interval; the share is `(vote - single) / (debate-full - "
        "single)`; the matched vote is the eval's vote of independent answers at the debate's "
        "token budget (`vote@K`). Reproduce:",
        "",
        "```bash",
        ".venv/bin/python benchmarks/simulated.py          # writes this page",
        "```",
        "",
        f"(`--agents {AGENTS} --rounds {ROUNDS} --parallel {PARALLEL}`, seed {SEED}; "
        "`make bench` runs it too.)",
        "",
    ]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines), encoding="utf-8")


def main(argv: Sequence[str] | None = None) -> int:
    """Run the figure; 1 if it fails."""
    parser = base_parser(__doc__, quick_help=f"{QUICK_QUESTIONS} questions each, no matched vote")
    args = parser.parse_args(argv)
    quick: bool = args.quick
    return run_benchmark(
        "debategraph simulated-population eval",
        [
            lambda workdir: figure(
                workdir,
                questions=QUICK_QUESTIONS if quick else QUESTIONS,
                docs=None if quick else DOCS,
            )
        ],
        args=args,
        tmp_prefix="debategraph-simulated-",
    )


if __name__ == "__main__":
    sys.exit(main())
