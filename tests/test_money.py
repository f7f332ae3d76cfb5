"""Prices, costs and budgets: what a run or an eval spent, and where it stops.

Unit tests of :mod:`debategraph.models.money` and the tokens-a-minute limit, then the CLI
against the stub (which reports usage as a provider does): a solve's cost in every
place it is shown, ``--max-cost`` stopping a run and an eval resumably, agents files
with prices, and bad values refused in one line before any call.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from langchain_core.messages import AIMessage, HumanMessage

from debategraph.errors import CostLimitReached, UsageError
from debategraph.models.money import (
    Budget,
    Price,
    money,
    parse_cost,
    parse_price,
    spend_words,
)
from debategraph.models.pacing import Pace
from debategraph.models.spec import ModelSpec, parse_model
from debategraph.models.usage import usage_of
from debategraph.state.records import Usage
from tests.conftest import one_error_line, run_cli, stub_args
from tests.eval_data import chance_responder, write_gsm8k
from tests.openai_stub import StubOpenAIServer

pytestmark = pytest.mark.usefixtures("fresh_paces")

#: A price that makes a stub call cost cents: 1,000 per million prompt tokens, 2,000 out.
PRICE = "1000/2000"


# -- prices and costs ----------------------------------------------------------------------


def test_a_price_reads_as_text_or_a_mapping_and_prices_tokens() -> None:
    assert parse_price("2.50/10") == Price(2.5, 10.0)
    assert parse_price("$2.5/10/1.25") == Price(2.5, 10.0, 1.25)
    assert parse_price({"input": 1, "output": 2, "cached_input": 0.5}) == Price(1, 2, 0.5)
    price = Price(2.0, 8.0, 0.5)
    assert price.cost(1_000_000, 0) == 2.0
    assert price.cost(1_000_000, 1_000_000, cached_tokens=500_000) == 1.0 + 0.25 + 8.0
    assert Price(2.0, 8.0).cost(1000, 0, cached_tokens=1000) == 0.002  # no cached rate
    assert parse_price(price.written()) == price


@pytest.mark.parametrize(
    ("value", "says"),
    [
        ("2.5", "expected INPUT/OUTPUT[/CACHED_INPUT]"),
        ("1/2/3/4", "expected INPUT/OUTPUT[/CACHED_INPUT]"),
        ("-1/2", "'-1' is not an amount >= 0"),
        ("1/two", "'two' is not an amount >= 0"),
        ("1/nan", "'nan' is not an amount >= 0"),
        ({"input": 1}, "'output' is missing"),
        ({"input": 1, "output": 2, "per": "token"}, "unknown key 'per'"),
        ({"input": True, "output": 2}, "is not an amount >= 0"),
        (7, "expected INPUT/OUTPUT"),
    ],
)
def test_a_bad_price_is_one_line_naming_it(value: object, says: str) -> None:
    with pytest.raises(UsageError) as error:
        parse_price(value, "--price")
    assert str(error.value).startswith("--price")
    assert says in str(error.value) and "\n" not in str(error.value)


def test_a_reply_costs_its_tokens_at_the_price_and_a_cached_prompt_less() -> None:
    reply = AIMessage(
        "4",
        usage_metadata={
            "input_tokens": 1000,
            "output_tokens": 100,
            "total_tokens": 1100,
            "input_token_details": {"cache_read": 600},
        },
    )
    usage = usage_of(reply, 0.1, [HumanMessage("hi")], Price(1.0, 4.0, 0.25))
    assert usage.cost == pytest.approx((400 * 1.0 + 600 * 0.25 + 100 * 4.0) / 1e6)
    assert usage_of(reply, 0.1, [], None).cost is None  # no price: no cost


def test_costs_add_up_and_no_price_is_no_cost() -> None:
    priced, unpriced = Usage(calls=1, cost=0.25), Usage(calls=1)
    assert (priced + priced).cost == 0.5
    assert (priced + unpriced).cost == 0.25
    assert (unpriced + unpriced).cost is None
    assert "cost" not in unpriced.model_dump() and "cache_hits" not in unpriced.model_dump()
    words = spend_words(priced.model_dump(), {"a": priced, "b": unpriced})
    assert words == "$0.25 (no price for b)"
    assert spend_words(unpriced.model_dump(), {"b": unpriced}) == ""


def test_money_reads_as_people_write_it() -> None:
    amounts = (0, 0.012345, 0.8, 1.5, 1234.5, 0.00001234)
    assert [money(x) for x in amounts] == [
        "$0.00", "$0.01235", "$0.80", "$1.50", "$1,234.50", "$1.23e-05",
    ]  # fmt: skip


# -- the budget ----------------------------------------------------------------------------


def test_a_budget_holds_each_calls_most_and_refuses_one_that_could_pass_it() -> None:
    budget = Budget(1.0)
    price = Price(1000.0, 1000.0)  # a token costs a thousandth
    first = budget.hold(price, 100, max_tokens=300)  # at most 400 tokens: 0.4
    second = budget.hold(price, 100, max_tokens=300)  # 0.8 held in all
    with pytest.raises(CostLimitReached, match=r"\$0.80 held by calls in flight"):
        budget.hold(price, 100, max_tokens=300)  # 1.2 > 1.0: not made
    budget.settle(first, 0.15, completion_tokens=50)  # it used less than it held
    budget.settle(second, None)  # it failed: nothing spent
    assert budget.spent == 0.15
    budget.hold(price, 100, max_tokens=300)  # 0.15 + 0.4 fits now


def test_a_model_without_a_cap_is_held_for_its_largest_reply_seen() -> None:
    budget = Budget(10_000.0)
    price = Price(0.0, 1_000_000.0)  # a completion token costs 1
    assert budget.hold(price, 10, None) == 1024  # never seen a reply: the floor
    budget.settle(1024, 2.0, completion_tokens=2000)
    assert budget.hold(price, 10, None) == 2000


@pytest.mark.parametrize("value", ["0", "-1", "free", "inf", "nan"])
def test_a_bad_budget_is_refused(value: str) -> None:
    with pytest.raises(UsageError, match=r"--max-cost .*expected an amount > 0"):
        parse_cost(value)


# -- tokens a minute -----------------------------------------------------------------------


def test_tokens_a_minute_hold_calls_until_the_bucket_refills() -> None:
    pace = Pace()
    pace.limit_tokens_to(600.0)  # 10 tokens a second, a bucket of 600
    assert pace.enter(500)
    assert not pace.enter(200)  # 100 left
    pace.leave()
    pace.used(500, 100)  # it used 100 of the 500 it took: 400 come back
    assert pace.enter(200)
    fresh = Pace()
    fresh.limit_tokens_to(600.0)
    assert fresh.enter(10_000)  # more than a minute's: it takes the whole bucket, when full
    assert not fresh.enter(1)


# -- the command line ----------------------------------------------------------------------


def solve(server: StubOpenAIServer, db: Path, *extra: str) -> list[str]:
    return ["solve", "What is 2+2?", *stub_args(server, db), "--agents", "2", *extra]


def test_a_solve_says_what_it_cost_everywhere(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "d.sqlite"
    with StubOpenAIServer(chance_responder(1.0, 1)) as server:
        args = solve(server, db, "--rounds", "2", "--price", PRICE, "--thread", "t")
        code, stdout, err = run_cli([*args, "--json"], capsys)
    assert code == 0, err
    result = json.loads(stdout)
    usage = result["usage"]
    expected = (usage["prompt_tokens"] * 1000 + usage["completion_tokens"] * 2000) / 1e6
    assert usage["cost"] == pytest.approx(expected) and usage["cost"] > 0
    assert sum(a["cost"] for a in result["usage_by_agent"].values()) == pytest.approx(expected)
    (by_model,) = result["usage_by_model"].values()
    assert by_model["cost"] == pytest.approx(expected)

    code, stdout, err = run_cli(["show", "t", "--db", str(db)], capsys)
    assert code == 0, err
    assert money(usage["cost"]) in stdout  # the result line
    code, stdout, err = run_cli(["export", "t", "--db", str(db), "--format", "md"], capsys)
    assert code == 0, err
    assert f"cost {money(usage['cost'])}" in stdout
    page = tmp_path / "t.html"
    code, _, err = run_cli(["view", "t", "--db", str(db), "--output", str(page)], capsys)
    assert code == 0, err
    html = page.read_text(encoding="utf-8")
    assert "<th class='num'>cost</th>" in html  # the usage tables' cost column
    assert money(result["usage_by_agent"]["solver_1"]["cost"]) in html


def test_max_cost_stops_a_solve_before_the_call_that_could_pass_it_and_resume_goes_on(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Each call may cost up to about 0.11 (20 completion tokens at most): 0.5 pays round 1."""
    db = tmp_path / "d.sqlite"
    with StubOpenAIServer(chance_responder(1.0, 1)) as server:
        args = solve(server, db, "--rounds", "2", "--price", PRICE, "--max-tokens", "20")
        code, _, err = run_cli([*args, "--max-cost", "0.5", "--thread", "t"], capsys)
        assert code == 1
        line = one_error_line(err)
        assert line.startswith("debategraph: error: cost limit reached: $0.3")
        assert "of --max-cost $0.50" in line and "stopped before it" in line
        assert "thread t is resumable: debategraph resume t" in line
        made = server.calls
        assert 2 <= made < 4  # round 1 answered; round 2 not all made

        code, _, err = run_cli(["resume", "t", "--db", str(db), "--max-cost", "0.01"], capsys)
        assert code == 1 and "cost limit reached" in one_error_line(err)
        assert server.calls == made  # refused before any call

        code, stdout, err = run_cli(["resume", "t", "--db", str(db), "--json"], capsys)
        assert code == 0, err
    result = json.loads(stdout)
    assert result["termination_reason"] == "rounds_completed"
    assert result["usage"]["calls"] == 4 and result["usage"]["cost"] > 0.5  # the thread's


def test_an_agent_with_its_own_priced_model_is_charged_at_its_price(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with StubOpenAIServer(chance_responder(1.0, 1)) as server:
        agents = tmp_path / "agents.json"
        own = {"model": "stub", "base_url": server.url, "price": {"input": 0, "output": 0}}
        agents.write_text(json.dumps([{"name": "cheap", "model": own}, {"name": "run"}]))
        args = ["solve", "What is 2+2?", *stub_args(server, tmp_path / "d.sqlite")]
        args += ["--agents-file", str(agents), "--rounds", "1", "--price", PRICE, "--json"]
        code, stdout, err = run_cli(args, capsys)
    assert code == 0, err
    by_agent = json.loads(stdout)["usage_by_agent"]
    assert by_agent["cheap"]["cost"] == 0.0
    assert by_agent["run"]["cost"] > 0


@pytest.mark.parametrize(
    ("option", "value", "says"),
    [
        ("--price", "10", "--price '10': expected INPUT/OUTPUT[/CACHED_INPUT]"),
        ("--price", "1/-2", "--price '1/-2': '-2' is not an amount >= 0"),
        ("--max-cost", "0", "--max-cost '0': expected an amount > 0"),
        ("--max-cost", "lots", "--max-cost 'lots': expected an amount > 0"),
        ("--tpm", "0", "tpm 0.0 must be a number of tokens a minute > 0"),
    ],
)
def test_a_bad_price_budget_or_limit_is_one_line_before_any_call(
    option: str, value: str, says: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with StubOpenAIServer(chance_responder(1.0, 1)) as server:
        args = [*solve(server, tmp_path / "d.sqlite"), option, value]
        code, _, err = run_cli(args, capsys)
        assert server.calls == 0
    assert code == 2
    assert one_error_line(err).startswith(f"debategraph: error: {says}")
    assert not (tmp_path / "d.sqlite").exists()  # nothing written


def test_a_bad_price_in_an_agents_model_names_the_agent() -> None:
    with pytest.raises(ValueError, match=r"^agent 'a': price '1/x': 'x' is not an amount"):
        parse_model({"model": "m", "price": "1/x"}, "agent 'a'")
    spec = parse_model({"model": "m", "price": "1/2", "tpm": 9000}, "agent 'a'")
    assert isinstance(spec, ModelSpec) and spec.price == Price(1, 2) and spec.tpm == 9000


def test_an_eval_costs_each_row_and_stops_at_its_budget_resumable(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    dataset = write_gsm8k(tmp_path / "gsm.jsonl", 6)
    out = tmp_path / "out"
    with StubOpenAIServer(chance_responder(1.0, 1)) as server:
        args = ["eval", "gsm8k", "--dataset", str(dataset), "--out", str(out), "--modes"]
        args += ["single,vote", "--agents", "2", "--no-matched", "--parallel", "1"]
        args += [*stub_args(server, out / "c.sqlite"), "--price", PRICE, "--max-tokens", "20"]
        code, _, err = run_cli([*args, "--max-cost", "0.5"], capsys)
        assert code == 1
        line = one_error_line(err)
        assert "cost limit reached" in line and "rerun the same command to resume" in line
        code, stdout, err = run_cli([*args, "--json"], capsys)  # no budget: it finishes
        assert code == 0, err
    modes = {m["mode"]: m for m in json.loads(stdout)["modes"]}
    assert modes["vote"]["cost"] > modes["single"]["cost"] > 0
    rows = list(csv.DictReader((out / "results.csv").open(encoding="utf-8")))
    assert all(float(r["cost"]) > 0 for r in rows)
    results = (out / "results.md").read_text(encoding="utf-8")
    answer, tables = results.split("\n\n", 1)
    assert "At the prices given, a question cost: single $" in answer
    assert "cost/q" in tables
    assert "cost/q" in (out / "report.html").read_text(encoding="utf-8")


def test_a_served_model_has_the_operators_price_and_a_client_cannot_set_one(
    tmp_path: Path,
) -> None:
    from debategraph.models.context import Context
    from debategraph.serve.models import RefusedContext, read_models

    path = tmp_path / "models.yaml"
    path.write_text(
        "models:\n  - {name: mini, model: gpt-4o-mini, price: 0.15/0.60/0.075, tpm: 200000}\n"
    )
    allowed = read_models(path)
    assert allowed.models["mini"].price == Price(0.15, 0.6, 0.075)
    resolved = Context(**allowed.resolve({"model": "mini"}))
    assert resolved.price == Price(0.15, 0.6, 0.075) and resolved.tpm == 200000
    for field in ("price", "tpm"):
        with pytest.raises(RefusedContext) as refused:
            allowed.check({"model": "mini", field: "0/0"})
        assert refused.value.status == 403 and f"field {field!r}" in str(refused.value)
    path.write_text("models:\n  - {name: mini, model: gpt-4o-mini, price: cheap}\n")
    with pytest.raises(UsageError, match=r"model 'mini': price 'cheap': expected INPUT/OUTPUT"):
        read_models(path)
