r"""Expression answers: a MATH answer read whole, and equivalent ones voting together.

Unit tests read answers with the one extractor and script the solvers and the judge on
one fake model; integration tests drive ``debategraph solve --answer-kind expression``
against the stub over HTTP.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage
from langgraph.checkpoint.memory import InMemorySaver

from debategraph import build_solver_debate, recursion_limit
from debategraph.checkpoints.savers import serializer
from debategraph.strategies import expressions, extract_answer
from debategraph.strategies.expressions import canonical_expression, read_expression
from debategraph.strategies.math_answers import math_equal
from debategraph.strategies.numbers import normalize_number, normalize_value
from tests.conftest import one_error_line, run_cli, stub_args
from tests.fake_model import ScriptedChatModel, tool_reply
from tests.openai_stub import StubOpenAIServer

QUESTION = "What is $\\sin 45^\\circ$?"
ROOT = "\\frac{\\sqrt{2}}{2}"
#: Three spellings of one answer, one per solver, and a wrong one.
SPELLINGS = {"solver_1": ROOT, "solver_2": "\\sqrt{2}/2", "solver_3": "\\frac{1}{\\sqrt{2}}"}
SOLVER_RE = re.compile(r"You are (\S+), one of")
JUDGE_RE = re.compile(r"You are the judge of")


@pytest.mark.parametrize(
    ("text", "loose", "expected"),
    [
        (ROOT, True, ROOT),
        ("\\sqrt{2}/2", True, ROOT),
        ("\\frac{1}{\\sqrt{2}}", True, ROOT),
        ("0.5", True, "0.5"),
        ("\\dfrac{1}{2}", True, "0.5"),
        ("\\frac{1}{2}+\\frac14", True, "0.75"),  # a rational value is a number again
        ("$[1, 3)$", True, "\\left[1, 3\\right)"),
        ("x \\in [1, 3)", True, "\\left[1, 3\\right)"),
        ("x = 5", True, "5"),  # an equation's right side
        ("2x+x^2", True, "x^{2} + 2 x"),
        ("x^2 + 2x", True, "x^{2} + 2 x"),
        ("\\pi\\cdot 3", True, "3 \\pi"),
        ("east", True, "east"),  # words are a text answer, not a product of letters
        ("**\\frac{3}{4}**.", True, "0.75"),
        ("The answer is $\\boxed{\\dfrac{\\pi}{3}}$.", False, "\\frac{\\pi}{3}"),
        ("\\boxed{1} then \\boxed{\\frac{a}{b}}", False, "\\frac{a}{b}"),  # the last one
        ("so #### 2\\sqrt{3}", False, "2 \\sqrt{3}"),
        ("Therefore, Answer: $(0, \\infty)$.", False, "\\left(0, \\infty\\right)"),
        ("1, 2", True, "\\left\\{1, 2\\right\\}"),  # a list, never the number 12
        ("3,5", True, "\\left\\{3, 5\\right\\}"),
        ("1,000", True, "1000"),  # thousands grouped: one number
        ("2^{100}", True, "1267650600228229401496703205376"),  # exact, every digit
        ("\\$18.90", True, "18.9"),
        ("sin(x)", True, "\\sin{\\left(x \\right)}"),  # a function without its backslash
        ("sqrt(2)/2", True, ROOT),
        ("(0, inf)", True, "\\left(0, \\infty\\right)"),
        ("\\frac{1}{0}", True, "\\frac{1}{0}"),  # sympy's \tilde{\infty} would not read back
        ("x = y = 2", True, "x=y=2"),
        ("I am not sure at all", True, None),  # prose is no expression
        ("Therefore 5", True, None),  # a word beside math is prose too, never 5*T*h*e*r...
        ("I think 5", True, None),
        ("It is 5, surely", False, None),  # nothing marked: reasoning alone says nothing
        ("", True, None),
        ("$$", True, None),
    ],
)
def test_an_expression_is_read_whole_in_one_canonical_form(
    text: str, loose: bool, expected: str | None
) -> None:
    assert read_expression(text, loose=loose) == expected
    assert extract_answer(text, loose=loose, kind="expression") == expected


def test_the_canonical_form_is_read_back_as_the_same_object() -> None:
    for gold in ("\\frac{1}{\\sqrt{2}}", "[1,3)", "x^2+2x", "\\text{east}", "(0,\\infty)", "1,2"):
        canonical = canonical_expression(gold.replace("\\text{east}", "east"))
        assert math_equal(canonical, gold).correct, (gold, canonical)


@pytest.mark.parametrize(
    "text",
    ["\\frac{1}{0}", "\\frac{0}{0}", "x = y = 2", "\\overline{0.3}", "e^{i\\pi}", "1, 2",
     "\\sqrt{2}/2", "\\pi\\cdot 3", "x \\in [1, 3)", "2^{100}", "\\$18.90", "east"],
)  # fmt: skip
def test_reading_a_canonical_form_again_gives_it_back(text: str) -> None:
    """A judge or a solver copying an answer as shown must give the same answer."""
    canonical = canonical_expression(text)
    assert canonical_expression(canonical) == canonical


def test_the_number_kind_is_unchanged() -> None:
    assert extract_answer("\\sqrt{2}/2", loose=True) == "2"  # a number: the last one
    assert extract_answer("\\sqrt{2}/2", loose=True, kind="expression") == ROOT


HUGE = [
    "2^{2^{100}}",
    "2^{99!}",
    "2^(10^{10})",
    "\\binom{10^{12}}{10^{6}}",
    "999^{999}\\cdot 999^{999}",
    "(10^{9})!",
    "2^{2^{2^{100}}}",
    "x" * 300,
]


def test_what_sympy_would_compute_without_end_is_kept_as_text() -> None:
    """On a worker thread, as solvers answer: math-verify has no timer there."""
    kept: dict[str, str] = {}

    def read() -> None:
        for text in HUGE:
            kept[text] = canonical_expression(text)

    worker = threading.Thread(target=read, daemon=True)
    worker.start()
    worker.join(timeout=20)
    assert not worker.is_alive(), f"still computing after {list(kept)}"
    assert kept == {text: text.replace(" ", "") for text in HUGE}  # compared as text
    assert canonical_expression("3! + 4!") == "30"  # a small factorial is computed


def test_a_huge_answer_is_wrong_with_its_reason_never_computed() -> None:
    checked = math_equal("2^{2^{100}}", "4")
    assert not checked.correct
    assert checked.reason == "the answer '2^{2^{100}}' is too large to evaluate"


def test_numbers_keep_every_digit() -> None:
    assert normalize_number("12345678901234567890123456789.5") == "12345678901234567890123456789.5"
    assert normalize_value("123456789012345678901234567890123/8") == (
        "15432098626543209862654320986265.375"
    )


def test_no_warning_about_a_missing_timer_reaches_the_terminal() -> None:
    """On a worker thread math-verify runs without its timer and says so; too_large guards."""
    script = (
        "import threading\n"
        "from debategraph.strategies.expressions import canonical_expression\n"
        "from debategraph.strategies.math_answers import math_equal\n"
        "def read(): print(canonical_expression('\\\\sqrt{2}/2'), math_equal('1', '1').correct)\n"
        "worker = threading.Thread(target=read); worker.start(); worker.join()\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=False
    )
    assert (done.returncode, done.stdout) == (0, ROOT + " True\n"), done.stderr
    assert done.stderr == ""


def test_without_math_verify_an_expression_is_its_tidy_text(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(expressions, "has_math_verify", lambda: False)
    assert canonical_expression("\\left( 1 , 3 \\right)") == "(1,3)"
    assert canonical_expression("\\dfrac{\\pi}{3}") == "\\frac{\\pi}{3}"
    assert canonical_expression("\\frac{1}{2}") == "0.5"  # a number needs no math-verify


# --------------------------------------------------------------------------
# In the graph
# --------------------------------------------------------------------------


def model_for(answers: dict[str, str], pick: str = "\\sqrt{2}/2") -> ScriptedChatModel:
    """Solvers answer as ``answers`` says; the judge picks ``pick``."""

    def respond(messages: list[BaseMessage]) -> AIMessage:
        system = str(messages[0].content)
        if JUDGE_RE.search(system):
            return tool_reply("JudgeReply", {"reasoning": "checked", "answer": pick})
        solver = SOLVER_RE.search(system)
        assert solver is not None, system
        answer = answers[solver.group(1)]
        args = {"reasoning": f"sin 45 is {answer}", "answer": answer, "confidence": 0.8}
        return tool_reply("ExpressionReply", args)

    return ScriptedChatModel(respond=respond)


def run(graph: Any, graph_input: dict[str, Any]) -> dict[str, Any]:
    compiled = graph.compile(checkpointer=InMemorySaver(serde=serializer()))
    config: Any = {"configurable": {"thread_id": "t"}, "recursion_limit": recursion_limit(compiled)}
    compiled.invoke(graph_input, config)
    values: dict[str, Any] = compiled.get_state(config).values
    return values


def test_three_spellings_of_one_answer_are_one_vote() -> None:
    model = model_for(SPELLINGS)
    out = run(
        build_solver_debate(model, agents=3, max_rounds=1),
        {"question": QUESTION, "answer_kind": "expression"},
    )
    assert (out["answer"], out["votes"], out["agreement"]) == (ROOT, {ROOT: 3}, 1.0)
    assert out["answer_kind"] == "expression"
    system = str(model.prompts[0][0].content)
    assert "in LaTeX" in system and "one number" not in system


def test_as_numbers_the_same_spellings_lose_their_meaning() -> None:
    """The planted counterpart: read as numbers, each spelling is its last number."""
    graph = build_solver_debate(model_for(SPELLINGS), agents=3, max_rounds=1)
    out = run(graph, {"question": QUESTION})
    assert out["votes"] == {"2": 3}


def test_the_judges_pick_is_read_as_an_expression() -> None:
    answers = {"solver_1": "1", "solver_2": ROOT, "solver_3": "\\sqrt{3}"}
    model = model_for(answers, pick="\\frac{1}{\\sqrt{2}}")
    out = run(
        build_solver_debate(model, agents=3, max_rounds=1, decision="judge"),
        {"question": QUESTION, "answer_kind": "expression"},
    )
    assert out["answer"] == ROOT  # the judge's spelling, found to be solver_2's answer
    judge = [p for p in model.prompts if JUDGE_RE.search(str(p[0].content))]
    assert len(judge) == 1 and "in LaTeX" in str(judge[0][0].content)


@pytest.mark.parametrize(
    ("graph_input", "message"),
    [
        ({"answer_kind": "latex"}, "answer_kind must be one of number, expression, got 'latex'"),
        (
            {"answer_kind": "expression", "choices": ["1", "2"]},
            "answer_kind 'expression' is for a question without choices",
        ),
    ],
)
def test_a_bad_answer_kind_is_refused_before_any_call(
    graph_input: dict[str, Any], message: str
) -> None:
    model = model_for(SPELLINGS)
    with pytest.raises(ValueError, match=re.escape(message)):
        run(
            build_solver_debate(model, agents=3, max_rounds=1),
            {"question": QUESTION, **graph_input},
        )
    assert not model.prompts


# --------------------------------------------------------------------------
# Through the CLI, against the stub
# --------------------------------------------------------------------------


def spelling_responder(request: dict[str, Any]) -> dict[str, Any]:
    system = str(request["messages"][0]["content"])
    solver = SOLVER_RE.search(system)
    answer = SPELLINGS[solver.group(1)] if solver else "?"
    return {"reasoning": f"it is {answer}", "answer": answer, "confidence": 0.7}


def test_solve_answer_kind_expression_over_http(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with StubOpenAIServer(spelling_responder) as server:
        args = stub_args(server, tmp_path / "c.sqlite", "--agents", "3", "--rounds", "1")
        code, out, err = run_cli(
            ["solve", QUESTION, "--answer-kind", "expression", "--json", *args], capsys
        )
    assert code == 0, err
    result = json.loads(out)
    assert (result["answer"], result["votes"]) == (ROOT, {ROOT: 3})
    assert "Timeout is disabled" not in err  # math-verify's warning: our guard is the timer


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--answer-kind", "latex"], "'latex' is not one of 'number', 'expression'"),
        (
            ["--answer-kind", "expression", "--choice", "a", "--choice", "b"],
            "--answer-kind expression is for a question without --choice",
        ),
    ],
)
def test_solve_refuses_a_bad_answer_kind(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], extra: list[str], message: str
) -> None:
    with StubOpenAIServer(spelling_responder) as server:
        args = stub_args(server, tmp_path / "c.sqlite")
        code, _, err = run_cli(["solve", QUESTION, *extra, *args], capsys)
        assert not server.requests
    assert code == 2
    assert message in err and "Traceback" not in err
    if extra[1] == "expression":
        assert message in one_error_line(err)
