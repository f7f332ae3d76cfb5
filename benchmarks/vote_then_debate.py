"""Benchmark of ``vote-then-debate`` on the embedded model: what debating only the disputes saves.

One figure, run as ``debategraph eval`` end to end (a subprocess, what users run):

1. Vote, then debate: ``debategraph eval arithmetic --model local`` (SmolLM2-135M on
   llama.cpp) on 100 generated questions ``a + b`` with one-digit operands (``--operands 2
   --max-operand 9 --seed 0``: an easy task a 135M model scores on), modes ``vote``,
   ``debate-full`` and ``vote-then-debate`` (``--agree unanimity``), the matched-budget
   votes, ``--agents 3 --rounds 2 --parallel 4``. Reported: each mode's accuracy (Wilson
   interval) and tokens per question; how many questions ``vote-then-debate`` went on to
   debate; its tokens per question against ``debate-full`` (on the same questions) and
   ``vote``; its paired McNemar tests against ``vote``, ``debate-full`` and the vote at its
   budget; and the plain answer the eval's ``results.md`` opens with. Target: the wiring
   (every mode answers every question, ``results.json`` holds ``vote_then_debate``), not a
   saving: ``vote-then-debate`` is ``debate-full`` stopped where round 1 agrees, but its
   threads are sampled apart from ``debate-full``'s, so on few questions it may spend more
   (a quick run of 3 questions did: 797 against 746 tokens per question); the tokens and
   accuracies are reported as measured. ``--workdir`` keeps the checkpoints: ``make bench``
   passes the embedded eval's (``.bench-eval``), so the ``vote`` and ``debate-full``
   threads that ``eval.py`` ran on the same questions with the same settings are read back
   without a model call and only ``vote-then-debate`` runs. ``--quick``: 1 question,
   ``--agents 2``, no matched vote, ``--max-tokens 160`` (the wiring; at 64, cut-off
   replies cost more retries than they save). Skipped with a warning where the embedded runtime or
   its model file is missing.

Usage::

    .venv/bin/python benchmarks/vote_then_debate.py            # 100 questions (~1 h on 2 CPUs)
    .venv/bin/python benchmarks/vote_then_debate.py --quick    # 1 question (~20 s)
    .venv/bin/python benchmarks/vote_then_debate.py --workdir .bench-eval --json out.json
    .venv/bin/python benchmarks/vote_then_debate.py --workdir .bench-eval --no-matched

A full run (not ``--quick``) writes ``docs/eval/vote-then-debate.md`` (the eval's
``results.md``: its plain answer and tables) and ``docs/eval/vote-then-debate.json``.

Exit status 1 if the figure fails, else 0.
"""

from __future__ import annotations

import datetime
import os
import shutil
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

# benchmarks/ is on sys.path when run as a script
from eval import (
    ARITH_MAX_OPERAND,
    ARITH_OPERANDS,
    EMBEDDED_QUESTIONS,
    EMBEDDED_TIMEOUT_S,
    ROUNDS,
    WARNINGS,
    embedded_missing,
    modes_of,
    run_eval,
)
from harness import Figure, base_parser, run_benchmark
from stub_process import stub_process

from debategraph.eval.advice import plain_answer
from debategraph.eval.report import read_report

MODES = ("vote", "debate-full", "vote-then-debate")
AGREE = "unanimity"
#: The embedded eval's checkpoint file in its work directory (``eval.py``'s figure 3): the
#: threads of the modes both run are the same threads, read back.
DB = "embedded-checkpoints.sqlite"
#: Where a full run's table goes (``vote-then-debate.md`` and ``.json``).
DOCS = Path(__file__).resolve().parents[1] / "docs" / "eval"


def _mode_row(m: dict[str, Any]) -> tuple[str, str]:
    return (
        m["mode"],
        f"accuracy {m['accuracy']:.2f} [{m['ci95'][0]:.2f}, {m['ci95'][1]:.2f}] (n {m['n']}), "
        f"{m['tokens']:,.0f} tokens/q, {m['calls']:.1f} calls/q",
    )


def publish(out: Path, command: str, wall_s: float, meta: dict[str, Any]) -> Path:
    """``docs/eval/vote-then-debate.md``: the eval's ``results.md`` under a line saying how.

    Also copies its ``results.json`` beside it (``vote-then-debate.json``).
    """
    DOCS.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(out / "results.json", DOCS / "vote-then-debate.json")
    day = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d")
    threads = meta["threads"]
    header = [
        "# Vote, then debate, on the embedded model",
        "",
        f"Written by `benchmarks/vote_then_debate.py` on {day} ({os.cpu_count()} CPUs): "
        f"`debategraph {command}` ({meta['model']}). Its last run ran {threads['started']} "
        f"threads, resumed {threads['resumed']} and read {threads['finished']} back from the "
        "checkpoints of earlier runs (its own, stopped and resumed, and any `benchmarks/eval.py` "
        f"run of the same modes on the same questions) in {wall_s:.0f} s. The figures: "
        "[vote-then-debate.json](vote-then-debate.json).",
        "",
        "A 135M-parameter model on one-digit sums: the plumbing and the cost, not a finding "
        "about debate on a capable model. The paragraph below is the eval's own plain answer "
        "(`results.md`), written from the figures.",
        "",
    ]
    text = (out / "results.md").read_text(encoding="utf-8")
    path = DOCS / "vote-then-debate.md"
    path.write_text("\n".join(header) + "\n" + text, encoding="utf-8")
    return path


def figure_vote_then_debate(
    workdir: Path,
    *,
    questions: int,
    agents: int,
    parallel: int,
    matched: bool,
    docs: bool,
    stub_url: str | None = None,
) -> list[Figure]:
    """The figure: ``vote-then-debate`` against ``vote`` and ``debate-full``.

    On the embedded model, or (``stub_url``) on the stub server there.
    """
    missing = None if stub_url is not None else embedded_missing()
    if missing is not None:
        WARNINGS.add(f"vote-then-debate figure not run: {missing}")
        return []
    model = (
        ["--model", "local"] if stub_url is None else ["--model", "stub", "--base-url", stub_url]
    )
    out = Path("vote-then-debate-eval")
    task = [
        "arithmetic", "--count", str(questions), "--operands", str(ARITH_OPERANDS),
        "--max-operand", str(ARITH_MAX_OPERAND), "--seed", "0",
    ]  # fmt: skip
    args = [
        *task, "--out", str(out), *model, "--modes", ",".join(MODES),
        "--agree", AGREE, "--agents", str(agents), "--rounds", str(ROUNDS),
        "--parallel", str(parallel), "--db", DB, *([] if matched else ["--no-matched"]),
    ]  # fmt: skip
    print(f"  vote-then-debate eval: {questions} questions x {len(MODES)} modes ...", flush=True)
    run = run_eval(args, workdir, EMBEDDED_TIMEOUT_S)
    result = run.result()
    by_mode = modes_of(result)
    (entry,) = result["vote_then_debate"]
    complete = all(by_mode.get(m, {}).get("n") == questions for m in MODES)
    vtd, debate, vote = (by_mode[m] for m in ("vote-then-debate", "debate-full", "vote"))
    answer = plain_answer(read_report(result), result["meta"])
    if docs and complete:
        publish(workdir / out, "eval " + " ".join(args), run.wall_s, result["meta"])
    tests = "; ".join(
        f"vs {t['b'] if t['a'] == 'vote-then-debate' else t['a']}: {t['a_only']} vs "
        f"{t['b_only']} discordant, McNemar p {t['p_value']:.3g}"
        for t in entry["tests"]
    )
    saved = (
        "n/a"
        if entry["saved_tokens"] is None
        else f"{entry['saved_tokens']:,.0f} tokens/q ({entry['saved_share']:.0%}) against "
        f"{entry['against']} ({entry['how']})"
    )
    rows = [_mode_row(by_mode[m]) for m in MODES]
    rows += [
        ("debated", f"{entry['debated']} of {entry['n']} questions ({entry['debated_share']:.0%})"),
        (
            "tokens per question",
            f"vote-then-debate {vtd['tokens']:,.0f} vs debate-full {debate['tokens']:,.0f} "
            f"vs vote {vote['tokens']:,.0f}",
        ),
        ("saved", saved),
        ("paired tests", tests or "none"),
        ("plain answer", answer),
        ("threads", str(result["meta"]["threads"])),
    ]
    return [
        Figure(
            number=1,
            name="Vote, then debate",
            setup=f"debategraph eval {' '.join(task)} --model {result['meta']['model']}, "
            f"modes {','.join(MODES)} --agree {AGREE}, --agents {agents} --rounds {ROUNDS} "
            f"--parallel {parallel}{'' if matched else ' --no-matched'}",
            rows=rows,
            target=f"every mode answers all {questions} questions and results.json holds "
            "vote_then_debate (the wiring; tokens and accuracy reported as measured)",
            passed=complete,
            headline=f"vote-then-debate debated {entry['debated']}/{entry['n']} questions: "
            f"{vtd['tokens']:,.0f} tokens/q (accuracy {vtd['accuracy']:.2f}) vs debate-full "
            f"{debate['tokens']:,.0f} ({debate['accuracy']:.2f}) vs vote {vote['tokens']:,.0f} "
            f"({vote['accuracy']:.2f})",
            values={
                "questions": questions,
                "modes": {
                    m: {k: by_mode[m][k] for k in ("n", "accuracy", "ci95", "tokens", "calls")}
                    for m in MODES
                },
                "vote_then_debate": entry,
                "matched": result.get("matched", []),
                "plain_answer": answer,
                "threads": result["meta"]["threads"],
                "wall_s": run.wall_s,
            },
            notes=[
                "SmolLM2-135M on one-digit sums: the plumbing and the cost, not a finding "
                "about debate on a capable model",
            ],
        )
    ]


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark; 1 if its figure fails, else 0."""
    parser = base_parser(__doc__, quick_help="1 question, 2 solvers, no matched vote, the stub")
    parser.add_argument(
        "--workdir",
        type=Path,
        help="keep the work (checkpoints included) in this folder; the embedded eval's "
        "(.bench-eval) reads its vote and debate-full threads back",
    )
    parser.add_argument(
        "--no-matched",
        action="store_true",
        help="leave out the votes at each debate's budget (vote@K): fewer than half the calls",
    )
    args = parser.parse_args(argv)
    quick: bool = args.quick

    def figure(workdir: Path) -> list[Figure]:
        settings: dict[str, Any] = {
            "questions": 1 if quick else EMBEDDED_QUESTIONS,
            "agents": 2 if quick else 3,
            "parallel": 2 if quick else 4,
            "matched": not (quick or args.no_matched),
            "docs": not quick,
        }
        if not quick:
            return figure_vote_then_debate(workdir, **settings)
        with stub_process() as server:
            return figure_vote_then_debate(workdir, **settings, stub_url=server.url)

    return run_benchmark(
        "debategraph vote-then-debate benchmark",
        [figure],
        args=args,
        quick_note="quick mode: 1 question, 2 solvers, no matched vote, on the stub server",
        warnings=lambda: WARNINGS,
        tmp_prefix="debategraph-vtd-",
        workdir=args.workdir,
        progress=True,
    )


if __name__ == "__main__":
    sys.exit(main())
