"""Benchmarks of the group chat: selection robustness and interjection latency.

Figures, each printed with its target and PASS/FAIL:

1. Selection robustness: 1,000 group chats (``--quick``: 40) of up to 20 turns, through the
   public API (``ainvoke``, 50 at once) against the simulated OpenAI-compatible server,
   with an LLM selector that answers garbage half the time (empty, ``???``, a name that is
   no agent, two names, prose naming none); the reviewer approves with probability 0.1 a
   turn. Every chat must end within its cap with a reason and no exception; the fallback
   rate (turns whose speaker was the sequence's fallback) is printed.
2. Interjection latency: ``debategraph chat`` runs in one process (200 ms per call); a
   second process runs ``debategraph interject`` at a random moment; counted: agent turns
   between the interjection and the first agent prompt that carries it (target: the next
   turn, i.e. at most 1 turn begun before it). 5 chats (``--quick``: 1).

Usage::

    .venv/bin/python benchmarks/chat.py [--quick] [--json out.json]

The property test over random strategy combinations lives in the test suite
(``tests/test_chat_properties.py``).
"""

from __future__ import annotations

import asyncio
import random
import re
import subprocess
import sys
import threading
import time
import uuid
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from harness import Figure, base_parser, cli, run_benchmark, stub_model_args

from debategraph import build_group_chat, recursion_limit
from debategraph.models import ModelSpec

REPO_ROOT = Path(__file__).resolve().parents[1]
AGENTS = [
    "Writer: drafts and revises the text.",
    "Reviewer: reviews the latest draft; says APPROVED when it is good.",
    "Editor: fixes wording and spelling.",
]
NAMES = ["Writer", "Reviewer", "Editor"]
GARBAGE = ["", "???", "Dave", "Writer and Editor", "{json: true}", "I am not sure, anyone."]
MAX_TURNS = 20
GARBAGE_RATE = 0.5
APPROVE_RATE = 0.1
AT_ONCE = 50


def stub_server(respond: Any, latency_s: float = 0.0) -> Any:
    """The test suite's OpenAI-compatible stub server (imported, not copied)."""
    if str(REPO_ROOT) not in sys.path:
        sys.path.insert(0, str(REPO_ROOT))
    from tests.openai_stub import StubOpenAIServer

    return StubOpenAIServer(respond, latency_s=latency_s)


def chat_responder(seed: int) -> Any:
    """Agents talk; the reviewer approves 10% of the time; the selector is garbage 50%."""
    rng = random.Random(seed)

    def respond(body: dict[str, Any]) -> Any:
        system = str(body["messages"][0]["content"])
        if system.startswith("You choose who speaks next"):
            if rng.random() < GARBAGE_RATE:
                return rng.choice(GARBAGE)
            return rng.choice([*NAMES, "the reviewer", "EDITOR."])
        name = re.search(r"You are (\w+),", system)
        if name and name.group(1) == "Reviewer" and rng.random() < APPROVE_RATE:
            return "APPROVED."
        return f"A message {rng.randrange(10**6)}."

    return respond


async def run_chats(spec: ModelSpec, chats: int) -> tuple[list[dict[str, Any]], list[str]]:
    """Run ``chats`` chats, ``AT_ONCE`` at a time; their outputs and the exceptions."""
    graph = build_group_chat(
        spec,
        agents=AGENTS,
        selection="llm",
        until=[r"regex:\bAPPROVED\b@Reviewer"],
        max_rounds=MAX_TURNS,
    ).compile(name="group_chat")
    config = {"recursion_limit": recursion_limit(graph)}
    gate = asyncio.Semaphore(AT_ONCE)
    errors: list[str] = []

    async def one() -> dict[str, Any] | None:
        async with gate:
            try:
                out: dict[str, Any] = await graph.ainvoke(
                    {"task": "Write a product blurb."},
                    {**config, "configurable": {"thread_id": uuid.uuid4().hex}},
                )
            except Exception as exc:  # noqa: BLE001 - counted: the figure is "0 exceptions"
                errors.append(f"{type(exc).__name__}: {exc}")
                return None
            return out

    outs = await asyncio.gather(*(one() for _ in range(chats)))
    return [o for o in outs if o is not None], errors


def figure_selection(workdir: Path, *, chats: int) -> Figure:
    """Figure 1: every chat ends within its cap, with a reason, whatever the selector says."""
    started = time.perf_counter()
    with stub_server(chat_responder(7)) as server:
        spec = ModelSpec(model="sim", base_url=server.url, timeout_s=30, max_retries=0)
        outs, errors = asyncio.run(run_chats(spec, chats))
    wall = time.perf_counter() - started
    turns = [len(o["selections"]) for o in outs]
    methods = Counter(s.method for o in outs for s in o["selections"])
    reasons = Counter(o["termination_reason"] for o in outs)
    within = sum(1 for o, n in zip(outs, turns, strict=True) if n <= MAX_TURNS and o["is_complete"])
    fallback_rate = methods["fallback"] / max(1, sum(methods.values()))
    passed = not errors and within == chats
    return Figure(
        number=1,
        name="Selection robustness",
        setup=(
            f"{chats} chats of up to {MAX_TURNS} turns, llm selector answering garbage "
            f"{GARBAGE_RATE:.0%} of the time, {AT_ONCE} at once (ainvoke, stub HTTP server)"
        ),
        rows=[
            ("chats ended within the cap", f"{within}/{chats}"),
            ("exceptions", str(len(errors)) + (f" (first: {errors[0]})" if errors else "")),
            ("termination reasons", ", ".join(f"{k} {v}" for k, v in sorted(reasons.items()))),
            ("turns per chat", f"mean {sum(turns) / max(1, len(turns)):.1f}, max {max(turns)}"),
            ("speaker chosen by", ", ".join(f"{k} {v}" for k, v in sorted(methods.items()))),
            ("fallback rate", f"{fallback_rate:.1%} of turns"),
            ("wall", f"{wall:.1f} s"),
        ],
        target="every chat ends within its cap with a reason; 0 exceptions",
        passed=passed,
        values={
            "chats": chats,
            "within_cap": within,
            "exceptions": len(errors),
            "fallback_rate": fallback_rate,
            "methods": dict(methods),
            "reasons": dict(reasons),
        },
        headline=(
            f"{within}/{chats} chats ended within {MAX_TURNS} turns, {len(errors)} exceptions; "
            f"fallback rate {fallback_rate:.1%} of turns"
        ),
    )


class Timeline:
    """What the stub server was asked, when: agent turns, and whether each carried a marker."""

    def __init__(self, marker: str) -> None:
        self.marker = marker
        self.turns: list[tuple[float, bool]] = []
        self.lock = threading.Lock()

    def respond(self, body: dict[str, Any]) -> Any:
        """A writer and a reviewer who never approve; each turn is recorded."""
        text = " ".join(str(m.get("content", "")) for m in body["messages"])
        with self.lock:
            self.turns.append((time.monotonic(), self.marker in text))
        return f"Turn {len(self.turns)}: another draft."

    def count(self) -> int:
        """Agent turns asked so far."""
        with self.lock:
            return len(self.turns)


def one_interjection(workdir: Path, trial: int, rng: random.Random) -> int | None:
    """Run a chat, interject from a second process at a random turn; turns it took to arrive.

    Returns:
        Agent turns that began after the interjection was posted and did not carry it
        (0: the next turn read it), or ``None`` if no later turn carried it.
    """
    marker = f"MARKER-{uuid.uuid4().hex[:8]}"
    timeline = Timeline(marker)
    db = workdir / f"latency-{trial}.sqlite"
    thread = f"latency-{trial}"
    with stub_server(timeline.respond, latency_s=0.2) as server:
        chat = subprocess.Popen(
            cli(
                "chat",
                "Write a slogan.",
                "--rounds",
                "200",
                "--thread",
                thread,
                "--json",
                *stub_model_args(server.url, db),
            ),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        wait_for = rng.randint(2, 6)
        deadline = time.monotonic() + 60
        while timeline.count() < wait_for and time.monotonic() < deadline:
            time.sleep(0.01)
        sent = subprocess.run(
            cli("interject", thread, marker, "--db", str(db)), capture_output=True, text=True
        )
        posted = time.monotonic()
        if sent.returncode == 0:  # the chat is long enough for a slow start: end it once read
            deadline = time.monotonic() + 60
            while not any(c for _, c in timeline.turns) and time.monotonic() < deadline:
                time.sleep(0.05)
        chat.kill()
        chat.wait()
        if sent.returncode != 0:
            raise RuntimeError(f"debategraph interject failed: {sent.stderr.strip()}")
    carried = [c for _, c in timeline.turns]
    if True not in carried:
        return None
    first = carried.index(True)  # it may be read before the interject process even returned
    return sum(1 for at, _ in timeline.turns[:first] if at > posted)


def figure_interjection(workdir: Path, *, trials: int) -> Figure:
    """Figure 2: an interjection from another process reaches the next speaker's prompt."""
    rng = random.Random(11)
    lags = [one_interjection(workdir, i, rng) for i in range(trials)]
    arrived = [lag for lag in lags if lag is not None]
    worst = max(arrived) if len(arrived) == len(lags) else None
    passed = worst is not None and worst == 0
    shown = ", ".join("never" if lag is None else str(lag) for lag in lags)
    return Figure(
        number=2,
        name="Interjection latency",
        setup=(
            f"{trials} chats (Writer, Reviewer, 200 ms per call) run by "
            "`debategraph chat`; `debategraph interject` from a second process at a random turn"
        ),
        rows=[
            ("turns begun after it, before one carried it", shown),
            ("worst", "never arrived" if worst is None else str(worst)),
        ],
        target="0: the next turn's prompt carries it",
        passed=passed,
        values={"lags": lags},
        headline=f"the next turn's prompt carried it in {lags.count(0)}/{trials} chats",
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmarks; 1 if a counting figure fails, else 0."""
    args = base_parser(__doc__).parse_args(argv)
    quick: bool = args.quick
    return run_benchmark(
        "debategraph group chat benchmark",
        [
            lambda workdir: figure_selection(workdir, chats=40 if quick else 1000),
            lambda workdir: figure_interjection(workdir, trials=1 if quick else 5),
        ],
        args=args,
    )


if __name__ == "__main__":
    sys.exit(main())
