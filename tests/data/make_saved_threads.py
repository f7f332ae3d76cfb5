"""Write ``saved_threads_v1.sqlite``: one small thread of each pattern, saved by OLD code.

``tests/test_saved_threads.py`` opens these threads with the package as it is now, to prove
that threads saved before a refactor still list, show, export, resume and load as records.
What it guards: checkpoints name each pydantic record by its module path (for example
``debategraph.state.records.Turn``, ``debategraph.state.debate.Verdict``,
``debategraph.documents.Document``), and their blobs are deflated with the frozen
dictionary of ``debategraph/checkpoints/serde.py`` (stored type ``msgpack+z1``).

The point of the file is its OLD bytes. It was written with the code of commit 4b93363 (the
commit before the module refactor). Regenerate it only with such old code, never with code
after a refactor: that would make the test prove nothing. To regenerate (the file must not
exist yet; this script refuses to overwrite it)::

    git worktree add /tmp/wt-before 4b93363
    PYTHONPATH=/tmp/wt-before/src:/tmp/wt-before .venv/bin/python \\
        tests/data/make_saved_threads.py tests/data/saved_threads_v1.sqlite

The script prints which ``debategraph`` it imported: check that it is the old checkout's.
The threads, all against the stub server with fixed replies (``--max-retries 0``):

* ``t-solve``: ``solve``, 2 solvers, 1 round: finished, answer 72;
* ``t-debate``: ``debate`` Alice (for) vs Bob (against), 1 round, ``--judge``: finished,
  winner Alice;
* ``t-discuss``: ``discuss`` of a tiny Markdown paper, personas Critic and Builder,
  1 iteration: finished (converged) with a consensus report;
* ``t-chat``: ``chat`` Writer/Reviewer until the Reviewer says APPROVED,
  ``--pause-after-round``: waiting after the Writer's first turn;
* ``t-meeting``: ``meeting`` with stages ``pitch`` (Ann) and ``talk`` (Bob), one round
  each, ``--pause-after-round``: waiting after the pitch.

Then ``prune`` (finished threads keep their last checkpoint; the paused ones keep all).
Turn ids, timestamps and checkpoint ids differ from run to run; the content does not.
"""

from __future__ import annotations

import contextlib
import io
import json
import re
import sqlite3
import sys
import tempfile
from pathlib import Path
from typing import Any

import debategraph
from debategraph.cli import main
from tests.openai_stub import StubOpenAIServer, default_responder, schema_of

SOLVE_QUESTION = "Natalia sold 48 clips in April and half as many in May. How many in total?"
DEBATE_TOPIC = "Tea is better than coffee"
DEBATE_ARGUMENT = "Tea calms the mind and keeps you hydrated; coffee spikes anxiety and crashes."
VERDICT = {
    "winner": "Alice",
    "scores": [{"debater": "Alice", "criterion": "evidence", "score": 8}],
    "rationale": "Alice answered every point.",
    "strongest": [{"debater": "Bob", "argument": "Coffee wakes you up."}],
}
PAPER = """# Sparse Debate Helps

## Abstract
We show that sparse communication topologies improve multi-agent debate.

## Results
Ring topologies match full ones at lower cost.
"""
PERSONAS = [
    {"name": "Critic", "focus": "weaknesses", "description": "Looks for gaps."},
    {"name": "Builder", "focus": "applications", "description": "Looks for uses."},
]
INSIGHT = "Ring topologies match full ones at lower cost, so sparse debate is cheaper."
DISCUSSION: dict[str, Any] = {
    "SectionChoice": {"section_ids": ["S1", "S2"], "reason": "The claim and its evidence."},
    "Analysis": {
        "insights": [
            {
                "content": INSIGHT,
                "importance": 0.8,
                "confidence": 0.7,
                "evidence": ["Ring topologies match full ones at lower cost."],
                "questions": [],
            }
        ]
    },
    "Inquiry": {"questions": [], "skip_reason": "We agree already."},
    "ConvergenceVote": {"score": 0.9, "reason": "We agree on the main claim."},
    "ConsensusReport": {
        "consensus_points": [
            {
                "statement": "Sparse topologies are enough for debate.",
                "supporting": ["Critic", "Builder"],
                "opposing": [],
                "strength": 0.8,
            }
        ],
        "divergent_views": [
            {
                "topic": "How far the result generalises",
                "positions": [
                    {"agent": "Critic", "position": "Only to math tasks.", "reasons": []},
                    {"agent": "Builder", "position": "To most tasks.", "reasons": []},
                ],
            }
        ],
        "overview": "A short paper on sparse communication in multi-agent debate.",
        "main_contributions": ["Ring topologies at lower cost"],
        "consensus_assessment": "Convincing for its setting.",
        "contested_points": ["Generality"],
        "significance": "Cheaper debates.",
        "overall_confidence": 0.75,
    },
}
CHAT_TASK = "Write a haiku about rain"
CHAT_REPLIES = {
    "Writer": "Rain on tin roofs, soft drums all night",
    "Reviewer": "APPROVED, it scans.",
}
MEETING_TOPIC = "Should we move the team to a four-day week?"
MEETING_STAGES = [
    {"name": "pitch", "participants": ["Ann: pitches the idea"], "goal": "Pitch it."},
    {"name": "talk", "participants": [{"name": "Bob", "instructions": "doubts it"}]},
]
MEETING_DECISION = {
    "decision": "Pilot it for a quarter.",
    "rationale": "Gains outweigh risks if support is covered.",
    "dissent": ["Support may suffer."],
    "next_steps": ["Draft a rota"],
}


def reply(request: dict[str, Any]) -> Any:
    """One responder for every pattern: by the structured output asked for, else the speaker."""
    name = schema_of(request)
    system = str((request.get("messages") or [{}])[0].get("content", ""))
    if name == "SolverReply":
        solver = re.search(r"You are (\S+),", system)
        who = solver.group(1) if solver else "solver"
        return {"reasoning": f"{who}: 48/2 = 24, 48 + 24 = 72.", "answer": "72"}
    if name == "Verdict":
        return VERDICT
    if name == "RoundDecision":
        return {"action": "next_stage", "reason": "Said enough."}
    if name == "FinalDecision":
        return MEETING_DECISION
    if name in DISCUSSION:
        return DISCUSSION[name]
    if name is not None:  # any other schema: arguments valid for it
        return default_responder(request)
    participant = re.match(r"You are (.+?), a participant", system)
    if participant:
        return f"{participant.group(1)} makes a point about the four-day week."
    chat = re.match(r"You are (\w+),", system)
    if chat and chat.group(1) in CHAT_REPLIES:
        return CHAT_REPLIES[chat.group(1)]
    return DEBATE_ARGUMENT  # the debaters


def run(args: list[str]) -> dict[str, Any]:
    """Run the CLI with ``--json`` and return its result; exit on failure."""
    out, err = io.StringIO(), io.StringIO()
    code: object = 0
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            main([*args, "--json"])
        except SystemExit as exc:
            code = exc.code
    if code not in (0, None):
        sys.exit(f"{args[0]} failed (exit {code}):\n{err.getvalue()}{out.getvalue()}")
    result: Any = json.loads(out.getvalue())
    return result if isinstance(result, dict) else {"rows": result}


def expect(result: dict[str, Any], **wanted: Any) -> None:
    """Exit unless ``result`` has every ``key=value`` of ``wanted``."""
    for key, value in wanted.items():
        if result.get(key) != value:
            sys.exit(f"expected {key}={value!r}, got {result.get(key)!r} in {result}")


def generate(db: Path) -> None:
    """Write the five threads into ``db``, a file that must not exist yet."""
    if db.exists():
        sys.exit(f"{db} exists: read this script's docstring before regenerating it")
    with tempfile.TemporaryDirectory() as tmp, StubOpenAIServer(reply) as server:
        files = Path(tmp)
        common = ["--model", "stub", "--base-url", server.url, "--max-retries", "0"]
        common += ["--db", str(db), "--archive", str(files / "archive.sqlite")]

        solve = ["solve", SOLVE_QUESTION, "--agents", "2", "--rounds", "1"]
        expect(run([*solve, "--thread", "t-solve", *common]), answer="72")

        debate = ["debate", DEBATE_TOPIC, "--debater", "Alice:for", "--debater", "Bob:against"]
        debate += ["--rounds", "1", "--judge", "--thread", "t-debate"]
        expect(run([*debate, *common]), winner="Alice")

        paper, personas = files / "paper.md", files / "personas.json"
        paper.write_text(PAPER, encoding="utf-8")
        personas.write_text(json.dumps(PERSONAS), encoding="utf-8")
        discuss = ["discuss", str(paper), "--persona", str(personas), "--max-iterations", "1"]
        discuss += ["--report", str(files / "report.md"), "--thread", "t-discuss"]
        expect(run([*discuss, *common]), title="Sparse Debate Helps")

        chat = ["chat", CHAT_TASK, "--agent", "Writer: writes haiku"]
        chat += ["--agent", "Reviewer: reviews"]
        chat += ["--until", r"regex:\bAPPROVED\b@Reviewer", "--max-turns", "4"]
        chat += ["--pause-after-round", "--thread", "t-chat"]
        expect(run([*chat, *common]), status="waiting")

        stages = files / "stages.json"
        stages.write_text(json.dumps(MEETING_STAGES), encoding="utf-8")
        meeting = ["meeting", MEETING_TOPIC, "--stages", str(stages), "--max-rounds", "1"]
        meeting += ["--pause-after-round", "--thread", "t-meeting"]
        expect(run([*meeting, *common]), status="waiting")

        run(["prune", "--db", str(db)])
    with contextlib.closing(sqlite3.connect(db)) as conn:  # everything in the one file
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    for row in run(["threads", "--db", str(db)])["rows"]:
        print(row["thread_id"], row["pattern"], row["status"], file=sys.stderr)
    print(f"{db}: {db.stat().st_size} bytes", file=sys.stderr)


if __name__ == "__main__":
    print(f"debategraph from {debategraph.__file__}", file=sys.stderr)
    generate(Path(sys.argv[1] if len(sys.argv) > 1 else "saved_threads_v1.sqlite"))
