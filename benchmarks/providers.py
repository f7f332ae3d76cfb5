"""A debate and an eval against an endpoint that behaves like a paid, rate-limited provider.

The test suite's stub server, in this process, answers like a provider: a token-bucket
request limit (``R`` requests a second, burst 1) answering the rest 429 with ``Retry-After``,
and, in the third figure, 15% of requests failing at random (429, 500, 503). The
``debategraph`` CLI runs in a process of its own, as a user runs it (``--max-retries 8``, the
default ``--patience``). Three figures, each printed with its target and PASS/FAIL:

1. ``solve`` within a request limit: 6 solvers x 2 rounds (12 calls) at 4 requests a second.
   The time from the first request to the last answered one, against the least the limit
   allows (``(calls - 1) / R``): at most 1.5x, every call answered.
2. ``eval`` within a request limit: 30 GSM8K-style questions (``--quick``: 5) in single,
   vote and debate-ring (2 solvers, 2 rounds) at ``--parallel 8``, on 20 requests a second
   (``--quick``: 40). The same ratio, at most 1.5x; every question scored in one command,
   none errored.
3. Random faults: the same eval (no limit) with 15% of requests failing at random: every
   question scored, the accuracies those of a fault-free run (the replies are
   deterministic), and the retries it took.
4. Cost and a budget: the eval at a price (``--price 0.15/0.60``, per million tokens;
   ``--max-tokens 64``, the cap a budget holds a call's reply to), its
   cost per question in each mode; then the same eval from scratch with ``--max-cost`` at
   half that cost: it must stop before passing the budget (what it spent, from its one
   line, at most the budget), and the same command without the budget must finish it with
   the unbudgeted run's answers and cost.
5. The response cache: the eval (single, vote) with ``--cache``, then from scratch (new
   checkpoints) with other decision protocols, then with another mode that shares its
   first round (debate-ring): the paid calls each makes (the stub's requests), which must
   be 0 for the second and only the debate's later rounds for the third.

Usage::

    .venv/bin/python benchmarks/providers.py            # full run
    .venv/bin/python benchmarks/providers.py --quick    # smaller smoke variant
    .venv/bin/python benchmarks/providers.py --json out.json

Exit status 1 if any figure that counts fails, else 0. In ``--quick`` mode the time ratios
are advisory: printed with their verdict but never failing the exit code.
"""

from __future__ import annotations

import json
import math
import re
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

# benchmarks/ is on sys.path when run as a script
from harness import Figure, base_parser, cli, run_benchmark, stub_model_args

REPO_ROOT = Path(__file__).resolve().parents[1]
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

from tests.eval_data import chance_responder, write_gsm8k  # noqa: E402
from tests.openai_stub import StubOpenAIServer  # noqa: E402

#: The most the run may take over the least time its limit allows.
RATIO_TARGET = 1.5
#: A question the stub's replies answer (tests/eval_data.py: item 1's gold is 1007).
QUESTION = "Item 1: what is 1000 plus 7?"
MODES = "single,vote,debate-ring"
#: Every call succeeds with this chance: the eval has right and wrong answers to keep.
P_RIGHT = 0.7
FAULT_RATE = 0.15
CLIENT = ("--max-retries", "8")


class Arrivals:
    """The times the stub answered a request, in order (a responder's wrapper)."""

    def __init__(self, respond: Callable[[dict[str, Any]], Any]) -> None:
        self._respond = respond
        self._lock = threading.Lock()
        self.times: list[float] = []

    def __call__(self, body: dict[str, Any]) -> Any:
        with self._lock:
            self.times.append(time.monotonic())
        return self._respond(body)

    def span_s(self) -> float:
        """Seconds from the first answered request to the last."""
        return self.times[-1] - self.times[0] if len(self.times) > 1 else 0.0


def run_cli(args: Sequence[str], *, stops: bool = False) -> tuple[float, str]:
    """Run ``debategraph ARGS`` to its end: its wall time and stdout.

    Args:
        args: The command's arguments.
        stops: The command is meant to fail: its last stderr line instead of stdout.

    Raises:
        RuntimeError: If it failed (or, with ``stops``, finished).
    """
    started = time.perf_counter()
    done = subprocess.run(
        cli(*args), capture_output=True, text=True, cwd=REPO_ROOT, timeout=900, check=False
    )
    wall = time.perf_counter() - started
    if (done.returncode != 0) != stops:
        said = done.stderr[-2000:] if done.returncode else "it finished"
        raise RuntimeError(f"debategraph {' '.join(args[:2])}: {said}")
    return wall, done.stderr.strip().splitlines()[-1] if stops else done.stdout


def limit_figure(
    number: int, name: str, setup: str, server: StubOpenAIServer, arrivals: Arrivals,
    rate: float, wall: float, extra: list[tuple[str, str]], values: dict[str, Any],
    ok: bool, quick: bool,
) -> Figure:  # fmt: skip
    """A figure of a run within a request limit: its span against the least time allowed."""
    calls = server.calls
    least = (calls - 1) / rate
    span = arrivals.span_s()
    ratio = span / least if least else 0.0
    return Figure(
        number=number,
        name=name,
        setup=setup,
        rows=[
            ("calls answered", f"{calls}"),
            ("429s answered", f"{server.limited}"),
            ("first to last answer", f"{span:.2f} s"),
            ("least the limit allows", f"{least:.2f} s ({calls} calls at {rate:g}/s)"),
            ("ratio", f"{ratio:.2f}x"),
            ("CLI wall (start-up included)", f"{wall:.2f} s"),
            *extra,
        ],
        target=f"ratio <= {RATIO_TARGET}x, every call answered",
        passed=ok and ratio <= RATIO_TARGET,
        values={
            "calls": calls,
            "limited": server.limited,
            "span_s": round(span, 3),
            "least_s": round(least, 3),
            "ratio": round(ratio, 3),
            "wall_s": round(wall, 3),
            **values,
        },
        advisory=quick,
        headline=f"{ratio:.2f}x the least time its limit allows",
    )


def figure_solve(workdir: Path, *, quick: bool) -> Figure:
    """``solve`` with 6 solvers x 2 rounds on 4 requests a second."""
    rate = 4.0
    arrivals = Arrivals(chance_responder(1.0, 1))
    with StubOpenAIServer(arrivals, rate_limit=(rate, 1)) as server:
        args = ["solve", QUESTION, "--agents", "6", "--rounds", "2", "--json"]
        wall, out = run_cli([*args, *stub_model_args(server.url, workdir / "s.sqlite"), *CLIENT])
        result = json.loads(out)
        done = result["termination_reason"] == "rounds_completed" and server.calls == 12
        return limit_figure(
            1, "solve within a request limit",
            f"6 solvers x 2 rounds, {rate:g} requests/s (burst 1), 429 + Retry-After beyond",
            server, arrivals, rate, wall, [("answer", str(result["answer"]))],
            {"rate": rate, "answer": result["answer"]}, done, quick,
        )  # fmt: skip


def eval_args(dataset: Path, out: Path, url: str) -> list[str]:
    """``debategraph eval gsm8k`` of the figures, against ``url``."""
    return [
        "eval", "gsm8k", "--dataset", str(dataset), "--out", str(out),
        *stub_model_args(url, out / "checkpoints.sqlite"), *CLIENT,
        "--modes", MODES, "--agents", "2", "--rounds", "2", "--parallel", "8",
        "--no-matched", "--json",
    ]  # fmt: skip


def modes_of(out: str) -> dict[str, dict[str, Any]]:
    """An eval's ``--json`` rows, by mode."""
    return {m["mode"]: m for m in json.loads(out)["modes"]}


def figure_eval(workdir: Path, *, questions: int, rate: float, quick: bool) -> Figure:
    """The eval of ``questions`` in three modes at --parallel 8 on ``rate`` requests/s."""
    dataset = write_gsm8k(workdir / "gsm.jsonl", questions)
    arrivals = Arrivals(chance_responder(P_RIGHT, 2))
    with StubOpenAIServer(arrivals, rate_limit=(rate, 1)) as server:
        wall, out = run_cli(eval_args(dataset, workdir / "limited", server.url))
        modes = modes_of(out)
        scored = {m: (v["n"], v.get("errored", 0)) for m, v in modes.items()}
        ok = scored == dict.fromkeys(MODES.split(","), (questions, 0))
        return limit_figure(
            2, "eval within a request limit",
            f"{questions} questions x {MODES} (2 solvers, 2 rounds), --parallel 8, "
            f"{rate:g} requests/s (burst 1)",
            server, arrivals, rate, wall,
            [("scored (n, errored)", ", ".join(f"{m} {n}/{e}" for m, (n, e) in scored.items()))],
            {"rate": rate, "questions": questions, "scored": scored}, ok, quick,
        )  # fmt: skip


def figure_faults(workdir: Path, *, questions: int) -> Figure:
    """The eval with 15% of requests failing at random, beside a fault-free one."""
    dataset = write_gsm8k(workdir / "gsm-faults.jsonl", questions)
    with StubOpenAIServer(chance_responder(P_RIGHT, 2)) as server:
        _, out = run_cli(eval_args(dataset, workdir / "clean", server.url))
        clean = modes_of(out)
    with StubOpenAIServer(
        chance_responder(P_RIGHT, 2), fault_rate=FAULT_RATE, fault_seed=1
    ) as server:
        wall, out = run_cli(eval_args(dataset, workdir / "faulty", server.url))
        faulty = modes_of(out)
        failed = len(server.requests) - server.calls
        calls = server.calls
    same = {m: faulty[m]["correct"] == v["correct"] for m, v in clean.items()}
    scored = all(v["n"] == questions and not v.get("errored") for v in faulty.values())
    unchanged = ", ".join(f"{m} {'yes' if s else 'no'}" for m, s in same.items())
    return Figure(
        number=3,
        name="Random faults",
        setup=f"{questions} questions x {MODES}, {FAULT_RATE:.0%} of requests answered "
        "429, 500 or 503 at random; beside the same eval without faults",
        rows=[
            ("calls answered", f"{calls}"),
            ("requests failed and retried", f"{failed}"),
            ("every question scored", "yes" if scored else "no"),
            ("answers as without faults", unchanged),
            ("CLI wall", f"{wall:.2f} s"),
        ],
        target="every question scored, the fault-free run's answers",
        passed=scored and all(same.values()),
        values={"calls": calls, "retried": failed, "scored": scored, "same": same},
        headline=f"{failed} failed requests retried, answers unchanged",
    )


#: The price of figure 4 (per million tokens: input, output).
PRICE = "0.15/0.60"


def figure_cost(workdir: Path, *, questions: int) -> Figure:
    """The eval at a price, then from scratch at half its cost as the budget."""
    dataset = write_gsm8k(workdir / "gsm-cost.jsonl", questions)
    priced = ("--price", PRICE, "--max-tokens", "64")  # a cap: what a call holds at most
    with StubOpenAIServer(chance_responder(P_RIGHT, 2)) as server:
        _, out = run_cli([*eval_args(dataset, workdir / "priced", server.url), *priced])
        full = modes_of(out)
        total = sum(float(v["cost"]) * int(v["n"]) for v in full.values())
        budget = round(total / 2, 6)
        budgeted = [*eval_args(dataset, workdir / "budget", server.url), *priced]
        _, line = run_cli([*budgeted, "--max-cost", f"{budget}"], stops=True)
        found = re.search(r"cost limit reached: \$([0-9.,e-]+) spent", line)
        spent = float(found.group(1).replace(",", "")) if found else math.inf
        _, out = run_cli(budgeted)  # the same command, no budget: it finishes
        finished = modes_of(out)
    same = all(finished[m]["correct"] == v["correct"] for m, v in full.items())
    per_question = ", ".join(f"{m} ${float(v['cost']):.6f}" for m, v in full.items())
    return Figure(
        number=4,
        name="Cost and a budget",
        setup=f"{questions} questions x {MODES} at --price {PRICE}; then from scratch with "
        "--max-cost at half the full cost, then the same command without it",
        rows=[
            ("cost per question", per_question),
            ("the eval's cost", f"${total:.6f}"),
            ("--max-cost", f"${budget:.6f}"),
            (
                "spent when it stopped",
                f"${spent:.6f} ({spent / budget:.0%} of the budget)"
                if found
                else f"no cost line: {line}",
            ),
            ("finished by the same command, answers as before", "yes" if same else "no"),
        ],
        target="stopped at or under the budget; finished with the unbudgeted answers",
        passed=found is not None and spent <= budget and same,
        values={"total": total, "budget": budget, "spent": spent, "same": same},
        headline=f"stopped at ${spent:.6f} of a ${budget:.6f} budget",
    )


def figure_cache(workdir: Path, *, questions: int) -> Figure:
    """An eval with ``--cache``, then again with other decisions, then with a debate mode."""
    dataset = write_gsm8k(workdir / "gsm-cache.jsonl", questions)
    cache = workdir / "replies.sqlite"

    with StubOpenAIServer(chance_responder(P_RIGHT, 2)) as server:  # one endpoint

        def run(name: str, *extra: str) -> int:
            before = server.calls
            args = eval_args(dataset, workdir / name, server.url)
            at = args.index("--modes")
            del args[at : at + 2]  # the modes come from ``extra``
            run_cli([*args, "--cache", str(cache), *extra])
            return server.calls - before

        first = run("cache-first", "--modes", "single,vote")
        decisions = run(
            "cache-decisions", "--modes", "single,vote", "--decisions", "plurality,weighted"
        )
        debate = run("cache-debate", "--modes", "debate-ring")
    later_rounds = questions * 2  # 2 solvers' round-2 calls: round 1 is the vote's
    return Figure(
        number=5,
        name="The response cache",
        setup=f"{questions} questions with --cache: single,vote; then from new checkpoints "
        "with --decisions plurality,weighted; then --modes debate-ring (2 solvers, 2 rounds)",
        rows=[
            ("paid calls, first run", f"{first}"),
            ("paid calls, other decisions", f"{decisions}"),
            ("paid calls, debate-ring", f"{debate} (its round-2 calls: {later_rounds})"),
        ],
        target="0 paid calls for what was made before",
        passed=decisions == 0 and debate == later_rounds,
        values={"first": first, "decisions": decisions, "debate": debate},
        headline=f"{decisions} paid calls on a rerun with other decisions (first run: {first})",
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmarks; 1 if a counting figure fails, else 0."""
    args = base_parser(__doc__, quick_help="5 questions at 40/s, not 30 at 20/s").parse_args(argv)
    quick: bool = args.quick
    questions = 5 if quick else 30
    return run_benchmark(
        "debategraph providers benchmark",
        [
            lambda workdir: figure_solve(workdir, quick=quick),
            lambda workdir: figure_eval(
                workdir, questions=questions, rate=40.0 if quick else 20.0, quick=quick
            ),
            lambda workdir: figure_faults(workdir, questions=questions),
            lambda workdir: figure_cost(workdir, questions=4 if quick else questions),
            lambda workdir: figure_cache(workdir, questions=4 if quick else questions),
        ],
        args=args,
        quick_note="quick mode: 5 questions at 40 requests/s (4 for the cost and the cache); "
        "the time ratios are advisory",
    )


if __name__ == "__main__":
    sys.exit(main())
