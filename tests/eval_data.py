"""Small eval datasets and a stub responder that answers right with a known probability."""

from __future__ import annotations

import hashlib
import itertools
import json
import math
import random
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

_ITEM = re.compile(r"Item (\d+):")
#: The gold answer of question ``i``: far from any other question's.
GOLD_OFFSET = 1000


def gold_of(i: int) -> int:
    """The gold number of the i-th generated question."""
    return GOLD_OFFSET + 7 * i


def write_gsm8k(path: Path, n: int) -> Path:
    """A GSM8K-style JSONL file of ``n`` questions (``Item i: ...``, gold after ``####``)."""
    lines = [
        json.dumps(
            {
                "question": f"Item {i}: what is {gold_of(i) - i} plus {i}?",
                "answer": f"{gold_of(i) - i} + {i} = {gold_of(i)}\n#### {gold_of(i):,}",
            }
        )
        for i in range(n)
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def write_mcq(path: Path, n: int) -> Path:
    """A multiple-choice JSONL file: question ``i``'s gold is letter ``"ABCD"[i % 4]``."""
    rows = []
    for i in range(n):
        choices = [f"option {i}-{k}" for k in range(4)]
        rows.append(
            json.dumps({"question": f"Item {i}: pick", "choices": choices, "answer": "ABCD"[i % 4]})
        )
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return path


def _user_text(request: dict[str, Any]) -> str:
    return "\n".join(
        str(m.get("content", "")) for m in request.get("messages", []) if m.get("role") == "user"
    )


def chance_responder(p: float, wrong: int, seed: int = 0) -> Callable[[dict[str, Any]], Any]:
    """Each call answers its question's gold number with probability ``p``, independently.

    Otherwise one of ``wrong`` wrong numbers, uniformly. The draw is seeded by the whole
    request (its messages: solver, round, question), so a rerun of the same call draws
    the same answer while distinct calls are independent.
    """

    def respond(request: dict[str, Any]) -> dict[str, Any]:
        text = json.dumps(request.get("messages", []), sort_keys=True)
        rng = random.Random(hashlib.sha256(f"{seed}:{text}".encode()).digest())
        found = _ITEM.search(_user_text(request))
        gold = gold_of(int(found.group(1))) if found else 0
        answer = gold if rng.random() < p else gold + rng.randint(1, wrong)
        return {"reasoning": f"so it is {answer}", "answer": str(answer), "confidence": 0.9}

    return respond


def choice_responder(request: dict[str, Any]) -> dict[str, Any]:
    """Answers the gold letter of generated MCQ question ``i`` (``"ABCD"[i % 4]``)."""
    found = _ITEM.search(_user_text(request))
    letter = "ABCD"[int(found.group(1)) % 4] if found else "A"
    return {"reasoning": "it is that one", "answer": letter, "confidence": 0.9}


def plurality_accuracy(p: float, n: int, wrong: int) -> float:
    """Exact accuracy of a plurality vote of ``n`` independent answers.

    Each answer is right with probability ``p``, else one of ``wrong`` wrong values
    uniformly. A tie among the top answers is won by each tied answer equally often (the
    vote gives it to the earliest solver's answer; the solvers are exchangeable).
    """
    q = (1 - p) / wrong
    total = 0.0
    for draw in itertools.product(range(wrong + 1), repeat=n):  # 0: right, k: wrong value k
        prob = math.prod(p if d == 0 else q for d in draw)
        counts = [draw.count(v) for v in range(wrong + 1)]
        top = max(counts)
        if counts[0] == top:
            total += prob / sum(1 for c in counts if c == top)
    return total


def band(p: float, n: int, z: float = 3.29) -> tuple[float, float]:
    """The binomial band ``p +- z * sd`` of a proportion over ``n`` trials (99.9% at 3.29)."""
    half = z * math.sqrt(p * (1 - p) / n)
    return p - half, p + half


#: Who a solver's prompt is for, and each solution it reads after round 1 (its solver
#: and answer: ``SOLUTION_VIEW`` is ``"{agent}: {gist}\nAnswer: {answer}"``).
_SOLVER = re.compile(r"You are (solver_\d+), one of \d+ agents")
_OWN = re.compile(r"^Your previous answer: (.+)$", re.MULTILINE)
_PEER = re.compile(r"^(solver_\d+): .*\nAnswer: (.+)$", re.MULTILINE)


def previous_round(request: dict[str, Any]) -> dict[str, str | None] | None:
    """The previous round's answers a refining solver reads, in solver order.

    Its own (``Your previous answer``) and its neighbours' (each solution's ``Answer:``
    line); ``None`` for a first-round prompt. With the ``full`` topology that is the whole
    previous round, so its plurality is the one the debate's dynamics measure.
    """
    text = _user_text(request)
    own = _OWN.search(text)
    solver = _SOLVER.search(" ".join(str(m.get("content", "")) for m in request["messages"]))
    if own is None or solver is None:
        return None
    answers = {solver.group(1): own.group(1), **dict(_PEER.findall(text))}
    ordered = sorted(answers.items(), key=lambda item: int(item[0].split("_")[1]))
    return {s: None if a == "(no answer)" else a for s, a in ordered}


def herd_responder(
    p: float,
    c: float = 0.0,
    wrong: int = 10**9,
    seed: int = 0,
    sure: float = 0.9,
    unsure: float = 0.2,
) -> Callable[[dict[str, Any]], Any]:
    """A solver that follows the herd with probability ``c``, else answers right with ``p``.

    After round 1, with probability ``c`` a call answers the previous round's plurality
    (``majority_vote`` of the answers it reads, in solver order: the debate's own
    tie-break); otherwise, and in round 1, it answers its question's gold with probability
    ``p``, else ``gold + k`` with ``k`` uniform in ``1..wrong`` (the default ``wrong`` makes
    two wrong answers coincide with negligible probability; ``wrong=1`` is one common
    mistake). Its confidence is ``sure`` when its answer is the gold, else ``unsure``. Draws
    are seeded by the whole request, as :func:`chance_responder`'s.
    """
    from debategraph.strategies.voting import majority_vote  # the debate's own vote

    def respond(request: dict[str, Any]) -> dict[str, Any]:
        text = json.dumps(request.get("messages", []), sort_keys=True)
        rng = random.Random(hashlib.sha256(f"{seed}:{text}".encode()).digest())
        found = _ITEM.search(_user_text(request))
        gold = str(gold_of(int(found.group(1))) if found else 0)
        before = previous_round(request)
        herd = majority_vote(before).answer if before is not None else None
        if herd is not None and rng.random() < c:
            answer = herd
        elif rng.random() < p:
            answer = gold
        else:
            answer = str(int(gold) + rng.randint(1, wrong))
        confidence = sure if answer == gold else unsure
        return {"reasoning": f"so it is {answer}", "answer": answer, "confidence": confidence}

    return respond
