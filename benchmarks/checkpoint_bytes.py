"""Checkpoint storage per agent turn: where the bytes of a solver debate's SQLite file go.

``debategraph solve`` (the CLI, as a subprocess: its config, metadata and durability) runs
a 4-solver ring debate for ``--long`` and ``--short`` rounds (default 100 and 50; no early
stop) on a fresh SQLite file, against the test suite's simulated OpenAI server in this
process: every answer is 160 characters of reasoning (``--chars``; varied, deterministic)
and a number.
The file is then checkpointed out of its WAL and VACUUMed, and read back through
``open_checkpointer`` (every blob decodes, ``read_run`` finds the run, the transcript has
every turn).

Two figures, each printed with its target and PASS/FAIL (same format as the other
benchmarks: ``Figure`` and the main loop come from ``benchmarks/harness.py``):

1. Bytes per agent turn: (file size - bytes of text the model wrote) / agent turns, at both
   sizes, and per turn added from the short to the long run (the file's growth: the cost
   of a turn without the file's fixed part). Target, as the issue measures it: <= 2048 B
   at the long run, and file(long) / file(short) <= 2.1 (linear in rounds). In ``--quick``
   mode the runs are too short for the first (the fixed part dominates): it applies to
   the per-added-turn figure instead.
2. Where the bytes go, per agent turn, for the ``--long`` run: SQLite pages per table and
   index (``dbstat``), row bytes per table and column (checkpoint blob, metadata, key
   columns; pending writes by channel), the checkpoint blob by field (each channel value,
   ``channel_versions``, ``versions_seen``, ...; as plain msgpack, before compression) and
   the metadata JSON by key. Target: the tables' pages add up to the file (the breakdown
   misses nothing).

Usage::

    .venv/bin/python benchmarks/checkpoint_bytes.py            # 100 and 50 rounds
    .venv/bin/python benchmarks/checkpoint_bytes.py --quick    # 20 and 10 rounds
    .venv/bin/python benchmarks/checkpoint_bytes.py --long 200 --short 100 --json out.json
    .venv/bin/python benchmarks/checkpoint_bytes.py --chars 1000   # longer answers
    .venv/bin/python benchmarks/checkpoint_bytes.py --keep /tmp/cpb  # keep the SQLite files

Exit status 1 if a figure fails, else 0.
"""

from __future__ import annotations

import hashlib
import json
import random
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

# benchmarks/ is on sys.path when run as a script
from harness import Figure, base_parser, cli, run_benchmark, stub_model_args
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from solver_debate import REPO_ROOT
from stub_replies import ANSWER, QUESTION

from debategraph import build_solver_debate
from debategraph.checkpoints import open_checkpointer, read_run, thread_config
from debategraph.checkpoints.savers import serializer
from debategraph.graphs.solver_debate import GRAPH_NAME

if TYPE_CHECKING:
    from tests.openai_stub import StubOpenAIServer

AGENTS = 4
#: Characters of reasoning in every answer by default (the issue's figure: about 160).
REASONING_CHARS = 160
#: Text a solver's reasoning is cut from, at a different place for every answer, so that
#: answers differ as a model's do and compress like English (identical or templated
#: answers would compress far better than real ones).
PASSAGE = (
    "To solve this, first read what the question gives: Natalia sold clips to 48 friends "
    "in April. In May she sold half as many clips as in April, which is 48 divided by 2, "
    "giving 24 clips. The question asks for the total over both months, so we add the "
    "April amount and the May amount: 48 plus 24 equals 72. A quick check: 24 is exactly "
    "half of 48, and subtracting 48 from 72 leaves 24, which matches the May figure. One "
    "trap would be reading 'half as many' as 'half as many more', which would give 48 "
    "plus 72; nothing in the wording supports that reading. My neighbours' answers agree "
    "with mine: solver two wrote the same two steps, and solver four reached 72 by first "
    "doubling the May sales to recover April and then summing. Their arithmetic is sound, "
    "though solver four's route is longer than needed. I see no reason to change my "
    "answer this round. If the numbers were larger, the same method applies: halve the "
    "first month, then add both months together. Rounding never arises here because 48 "
    "is even. Units are clips throughout, so no conversion is needed. Considering an "
    "alternative reading where April means only sales to friends while May includes "
    "strangers, the question still says half as many clips, not half as many friends, "
    "so the total remains seventy-two. Confidence is high because three independent "
    "derivations give the same result and every intermediate value checks out exactly. "
    "Looking back over the previous round, the main disagreement was about whether May's "
    "sales should be computed from April's or from some other baseline mentioned in a "
    "neighbour's draft. Re-reading the problem statement settles it: the only baseline "
    "given is April, forty-eight clips. Another neighbour briefly proposed ninety-six, "
    "apparently by doubling instead of halving; after their correction they returned to "
    "seventy-two. I weigh their revised explanation as reliable, since each step can be "
    "verified by hand in a few seconds. For completeness, a table helps: April 48, May "
    "24, total 72. Percentages offer another view: May is fifty percent of April, so "
    "the total is one hundred fifty percent of April, and 1.5 times 48 is 72. Any answer "
    "other than 72 would require misreading either the quantity or the relation between "
    "months. Should a later round raise new evidence, such as a hidden condition about "
    "returned clips, I would revisit it, but the text mentions none. Summarising for my "
    "peers: halve, add, verify; the result is stable under each check I can think of, "
    "including estimation: roughly fifty plus roughly twenty-five is about seventy-five, "
    "close to 72, which rules out arithmetic slips of an order of magnitude. "
)
#: Bytes per agent turn beyond the model's text, at each size.
PER_TURN_TARGET = 2048
#: file(long) / file(short) for twice the rounds: linear growth.
GROWTH_TARGET = 2.1
#: The tables' and indexes' pages must add up to the file within this share.
ACCOUNTED_TARGET = 0.02

PROCESS_TIMEOUT_S = 900.0


# --------------------------------------------------------------------------
# Simulated endpoint
# --------------------------------------------------------------------------


def reasoning(request: dict[str, Any], chars: int) -> str:
    """Deterministic reasoning of exactly ``chars`` characters for a request."""
    seed = hashlib.sha256(json.dumps(request.get("messages"), sort_keys=True).encode()).digest()
    start = random.Random(seed).randrange(len(PASSAGE))
    text = (PASSAGE * (chars // len(PASSAGE) + 2))[start : start + chars]
    return text


def stub_server(chars: int) -> StubOpenAIServer:
    """The test suite's simulated OpenAI server (imported, not copied), replying with
    ``SolverReply`` arguments of ``chars`` characters of reasoning."""
    if str(REPO_ROOT) not in sys.path:
        sys.path.insert(0, str(REPO_ROOT))
    from tests.openai_stub import StubOpenAIServer

    def respond(request: dict[str, Any]) -> dict[str, Any]:
        return {"reasoning": reasoning(request, chars), "answer": ANSWER, "confidence": 0.8}

    return StubOpenAIServer(respond)


# --------------------------------------------------------------------------
# One run
# --------------------------------------------------------------------------


@dataclass
class Run:
    """One debate on a fresh file, measured."""

    rounds: int
    chars: int
    thread_id: str
    file_bytes: int
    turns: int
    text_bytes: int
    wall_s: float
    breakdown: dict[str, Any] = field(default_factory=dict)

    @property
    def per_turn(self) -> float:
        """Bytes per agent turn beyond the model's text."""
        return (self.file_bytes - self.text_bytes) / self.turns


def solve(server: StubOpenAIServer, db: Path, rounds: int) -> tuple[str, float]:
    """``debategraph solve`` in a subprocess; the thread id and wall seconds."""
    archive = db.with_name(f"{db.stem}-archive.sqlite")
    args = ["solve", QUESTION, "--agents", str(AGENTS), "--rounds", str(rounds)]
    cmd = cli(*args, *stub_model_args(server.url, db), "--archive", str(archive), "--json")
    started = time.perf_counter()
    proc = subprocess.run(
        cmd,
        cwd=db.parent,
        capture_output=True,
        text=True,
        timeout=PROCESS_TIMEOUT_S,
        check=False,
    )
    wall = time.perf_counter() - started
    lines = [line for line in proc.stdout.strip().splitlines() if line.startswith("{")]
    result = json.loads(lines[-1]) if lines else {}
    if proc.returncode != 0 or result.get("termination_reason") != "rounds_completed":
        raise RuntimeError(
            f"debategraph solve ({rounds} rounds) went wrong: exit {proc.returncode}, "
            f"{result or proc.stdout[-500:]}\n{proc.stderr[-2000:]}"
        )
    if server.calls != AGENTS * rounds:
        raise RuntimeError(f"expected {AGENTS * rounds} model calls, got {server.calls}")
    return str(result["thread_id"]), wall


def vacuum(db: Path) -> int:
    """Fold the WAL into the file and VACUUM it; the file's size."""
    conn = sqlite3.connect(db)
    try:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        conn.execute("VACUUM")
    finally:
        conn.close()
    wal = Path(f"{db}-wal")
    return db.stat().st_size + (wal.stat().st_size if wal.exists() else 0)


def read_back(db: Path, thread_id: str, rounds: int) -> tuple[int, int]:
    """Read the thread through the public API; its agent turns and their text's bytes.

    Raises:
        RuntimeError: If the run's settings or the transcript do not read back.
    """
    with open_checkpointer(db) as saver:
        run = read_run(saver, thread_id)
        if run is None or run.settings.get("max_rounds") != rounds:
            raise RuntimeError(f"read_run did not find the run's settings: {run}")
        graph = build_solver_debate(None, agents=AGENTS, max_rounds=rounds).compile(
            checkpointer=saver, name=GRAPH_NAME
        )
        transcript = graph.get_state(thread_config(thread_id)).values["transcript"]
    turns = [t for t in transcript if t.role == "agent"]
    if len(turns) != AGENTS * rounds:
        raise RuntimeError(f"expected {AGENTS * rounds} agent turns, read {len(turns)}")
    return len(turns), sum(len(t.content.encode()) for t in turns)


def measure(workdir: Path, rounds: int, chars: int) -> Run:
    """One debate of ``rounds`` rounds, ``chars`` characters of reasoning per answer."""
    db = workdir / f"solve_{rounds}.sqlite"
    for stale in (db, Path(f"{db}-wal"), Path(f"{db}-shm")):
        stale.unlink(missing_ok=True)
    print(f"  {AGENTS} solvers x {rounds} rounds ...", flush=True)
    with stub_server(chars) as server:
        thread_id, wall = solve(server, db, rounds)
    size = vacuum(db)
    turns, text = read_back(db, thread_id, rounds)
    return Run(rounds, chars, thread_id, size, turns, text, wall, breakdown(db))


# --------------------------------------------------------------------------
# Breakdown
# --------------------------------------------------------------------------

#: Plain msgpack, to size a blob's fields before any compression the saver applies.
_PLAIN = JsonPlusSerializer(allowed_msgpack_modules=None)


def _plain_size(value: Any) -> int:
    return len(_PLAIN.dumps_typed(value)[1])


def _columns(conn: sqlite3.Connection, table: str) -> list[str]:
    return [str(row[1]) for row in conn.execute(f"PRAGMA table_info({table})")]


def breakdown(db: Path) -> dict[str, Any]:
    """Bytes of a (vacuumed) checkpoint file by table, column, channel and blob field."""
    serde = serializer()
    conn = sqlite3.connect(db)
    try:
        out: dict[str, Any] = {}
        page_size = int(conn.execute("PRAGMA page_size").fetchone()[0])
        pages = int(conn.execute("PRAGMA page_count").fetchone()[0])
        out["page_size"] = page_size
        out["pages"] = pages
        try:
            out["dbstat"] = {
                str(name): {"pages": int(size), "payload": int(payload), "unused": int(unused)}
                for name, size, payload, unused in conn.execute(
                    "SELECT name, sum(pgsize), sum(payload), sum(unused) FROM dbstat "
                    "GROUP BY name ORDER BY 2 DESC"
                )
            }
        except sqlite3.OperationalError:  # SQLite built without dbstat
            out["dbstat"] = {}
        tables = [
            str(row[0])
            for row in conn.execute(
                "SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name"
            )
        ]
        out["tables"] = {}
        for table in tables:
            cols = _columns(conn, table)
            sums = ", ".join(f"coalesce(sum(length(CAST({c} AS BLOB))), 0)" for c in cols)
            row = conn.execute(f"SELECT count(*), {sums} FROM {table}").fetchone()
            out["tables"][table] = {
                "rows": int(row[0]),
                **dict(zip(cols, map(int, row[1:]), strict=True)),
            }

        fields: Counter[str] = Counter()
        stored = 0
        metadata_keys: Counter[str] = Counter()
        for type_, blob, metadata in conn.execute(
            "SELECT type, checkpoint, metadata FROM checkpoints"
        ):
            stored += len(blob or b"")
            checkpoint = serde.loads_typed((type_, blob))
            for key, value in checkpoint.items():
                if key == "channel_values":
                    for channel, channel_value in value.items():
                        fields[f"channel_values[{channel}]"] += _plain_size(channel_value)
                else:
                    fields[key] += _plain_size(value)
            for key, value in json.loads(metadata or b"{}").items():
                metadata_keys[key] += len(json.dumps({key: value}, ensure_ascii=False)) - 2
        out["checkpoint_fields_plain"] = dict(fields.most_common())
        out["checkpoint_blob_stored"] = stored
        out["metadata_keys"] = dict(metadata_keys.most_common())

        writes: dict[str, dict[str, int]] = {}
        for channel, rows, size in conn.execute(
            "SELECT channel, count(*), coalesce(sum(length(value)), 0) FROM writes "
            "GROUP BY channel ORDER BY 3 DESC, 2 DESC"
        ):
            group = "branch:to:*" if str(channel).startswith("branch:to:") else str(channel)
            entry = writes.setdefault(group, {"rows": 0, "bytes": 0})
            entry["rows"] += int(rows)
            entry["bytes"] += int(size)
        out["writes_by_channel"] = writes
        return out
    finally:
        conn.close()


# --------------------------------------------------------------------------
# Figures
# --------------------------------------------------------------------------


def _b(value: float) -> str:
    return f"{value:,.0f} B"


def figure_per_turn(long: Run, short: Run, *, quick: bool) -> Figure:
    """Bytes per agent turn beyond the model's text, and growth from short to long."""
    growth = long.file_bytes / short.file_bytes
    rows = []
    for run in (long, short):
        rows.append(
            (
                f"{run.rounds} rounds",
                f"file {run.file_bytes / 1024:,.0f} KiB, {run.turns} agent turns, model text "
                f"{run.text_bytes / 1024:,.0f} KiB -> {_b(run.per_turn)} per turn beyond the "
                f"text ({run.file_bytes / run.text_bytes:.1f}x the text; solve {run.wall_s:.1f} s)",
            )
        )
    rows.append((f"growth {short.rounds} -> {long.rounds}", f"{growth:.3f}x"))
    added_turns = long.turns - short.turns
    slope = (
        (long.file_bytes - short.file_bytes) - (long.text_bytes - short.text_bytes)
    ) / added_turns
    rows.append(
        (
            "per added turn",
            f"{_b(slope)} beyond the text (file growth from {short.rounds} to {long.rounds} "
            "rounds per added turn: what a longer run costs, without the fixed part)",
        )
    )
    if quick:
        measured, what = slope, "per added turn"
    else:
        measured, what = long.per_turn, f"at {long.rounds} rounds"
    ok = measured <= PER_TURN_TARGET and growth <= GROWTH_TARGET
    return Figure(
        number=1,
        name="Bytes per agent turn",
        setup=f"debategraph solve, {AGENTS} solvers (ring), {long.rounds} and {short.rounds} "
        f"rounds, {long.chars}-char reasoning, fresh SQLite files, VACUUMed",
        rows=rows,
        target=f"bytes per agent turn beyond the text {what} <= {PER_TURN_TARGET} B and "
        f"file{long.rounds} / file{short.rounds} <= {GROWTH_TARGET}",
        passed=ok,
        headline=f"{measured:,.0f} B per agent turn beyond the text {what}; growth "
        f"{short.rounds} -> {long.rounds} rounds {growth:.3f}x",
        values={
            "runs": [
                {
                    "rounds": run.rounds,
                    "file_bytes": run.file_bytes,
                    "turns": run.turns,
                    "text_bytes": run.text_bytes,
                    "bytes_per_turn_beyond_text": run.per_turn,
                    "file_over_text": run.file_bytes / run.text_bytes,
                    "wall_s": run.wall_s,
                }
                for run in (long, short)
            ],
            "growth": growth,
            "bytes_per_added_turn_beyond_text": slope,
        },
        notes=[
            "file = the --db file after PRAGMA wal_checkpoint(TRUNCATE) and VACUUM; model "
            "text = UTF-8 bytes of the agent turns' content read back from the checkpoints"
        ],
    )


def _other_columns(columns: dict[str, int], *named: str) -> int:
    """Bytes of a table's columns other than ``named`` (its key columns)."""
    return sum(v for k, v in columns.items() if k not in {"rows", *named})


def figure_breakdown(run: Run) -> Figure:
    """Where the bytes of ``run``'s file go, per agent turn."""
    data = run.breakdown
    per = float(run.turns)
    rows: list[tuple[str, str]] = []

    def share(items: dict[str, int], top: int = 8) -> str:
        ranked = sorted(items.items(), key=lambda kv: -kv[1])
        parts = [f"{k} {v / per:,.0f}" for k, v in ranked[:top] if v]
        rest = sum(v for _, v in ranked[top:])
        if rest:
            parts.append(f"other {rest / per:,.0f}")
        return ", ".join(parts)

    stat: dict[str, dict[str, int]] = data["dbstat"]
    if stat:
        rows.append(
            (
                "pages (dbstat)",
                share({name: s["pages"] for name, s in stat.items()})
                + f"; of which unused {sum(s['unused'] for s in stat.values()) / per:,.0f}",
            )
        )
    tables: dict[str, dict[str, int]] = data["tables"]
    for table, columns in (("checkpoints", ("checkpoint", "metadata")), ("writes", ("value",))):
        sizes = tables.get(table, {})
        count = sizes.get("rows", 0)
        named = ", ".join(
            f"{'blob' if col == 'checkpoint' else col} {sizes.get(col, 0) / per:,.0f}"
            for col in columns
        )
        rows.append(
            (
                f"{table} rows",
                f"{count} ({count / (run.rounds or 1):.1f} per round): {named}, key columns "
                f"{_other_columns(sizes, *columns) / per:,.0f}",
            )
        )
    for table, cols in tables.items():
        if table in {"checkpoints", "writes"}:
            continue
        size = sum(v for k, v in cols.items() if k != "rows")
        rows.append((f"{table} rows", f"{cols.get('rows', 0)}: {size / per:,.1f}"))
    by_channel = data["writes_by_channel"]
    rows.append(
        (
            "writes by channel",
            share({ch: e["bytes"] for ch, e in by_channel.items()})
            + " (rows: "
            + ", ".join(f"{ch} {e['rows']}" for ch, e in by_channel.items() if e["rows"])
            + ")",
        )
    )
    fields: dict[str, int] = data["checkpoint_fields_plain"]
    plain = sum(fields.values())
    stored = data["checkpoint_blob_stored"]
    rows.append(
        (
            "blob fields (plain)",
            share(fields, top=10) + f"; plain {plain / per:,.0f} -> stored {stored / per:,.0f}",
        )
    )
    rows.append(("metadata by key", share(data["metadata_keys"])))
    accounted = sum(s["pages"] for s in stat.values()) if stat else 0
    file_bytes = data["pages"] * data["page_size"]
    # The schema, freelist and pointer-map pages are not in dbstat's per-table rows.
    missing = (file_bytes - accounted) / file_bytes if stat else 0.0
    rows.append(
        (
            "accounted",
            f"{accounted:,} of {file_bytes:,} B in table and index pages ({missing:.1%} elsewhere)"
            if stat
            else "dbstat not available in this SQLite: pages not broken down",
        )
    )
    return Figure(
        number=2,
        name="Where the bytes go",
        setup=f"the {run.rounds}-round file of figure 1, bytes per agent turn ({run.turns} turns)",
        rows=rows,
        target=f"tables and indexes account for the file (<= {ACCOUNTED_TARGET:.0%} elsewhere)",
        passed=missing <= ACCOUNTED_TARGET,
        headline=f"{missing:.1%} of the file outside table and index pages",
        values={**data, "rounds": run.rounds, "turns": run.turns, "file_bytes": run.file_bytes},
        notes=[
            "blob fields are plain msgpack of each decoded field (what LangGraph's "
            "serializer writes); 'stored' is the blob column as saved"
        ],
    )


# --------------------------------------------------------------------------
# Main
# --------------------------------------------------------------------------


def main(argv: Sequence[str] | None = None) -> int:
    """Run both figures; 1 if one fails, else 0."""
    parser = base_parser(__doc__, quick_help="20 and 10 rounds")
    parser.add_argument("--long", type=int, help="rounds of the long run (default 100)")
    parser.add_argument("--short", type=int, help="rounds of the short run (default 50)")
    parser.add_argument(
        "--chars",
        type=int,
        default=REASONING_CHARS,
        help=f"characters of reasoning per answer (default {REASONING_CHARS})",
    )
    parser.add_argument("--keep", type=Path, metavar="DIR", help="keep the SQLite files in DIR")
    args = parser.parse_args(argv)
    long_rounds = args.long or (20 if args.quick else 100)
    short_rounds = args.short or (10 if args.quick else 50)
    runs: dict[str, Run] = {}

    def per_turn_step(workdir: Path) -> Figure:
        print("runs:", flush=True)
        runs["long"] = measure(workdir, long_rounds, args.chars)
        runs["short"] = measure(workdir, short_rounds, args.chars)
        return figure_per_turn(runs["long"], runs["short"], quick=args.quick)

    return run_benchmark(
        "debategraph checkpoint bytes benchmark",
        [per_turn_step, lambda workdir: figure_breakdown(runs["long"])],
        args=args,
        workdir=args.keep,
        progress=True,
    )


if __name__ == "__main__":
    sys.exit(main())
