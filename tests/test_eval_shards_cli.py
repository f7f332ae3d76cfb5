"""Many machines, one eval: ``--shard i/N`` runs, and ``eval report`` merges and resumes them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import one_error_line, run_cli, stub_args
from tests.eval_data import chance_responder, write_gsm8k
from tests.openai_stub import StubOpenAIServer

QUESTIONS = 5
answers = chance_responder(0.6, 3, seed=4)
SHAPE = ("--modes", "single,debate-ring", "--agents", "2", "--rounds", "2")


def shard_args(
    server: StubOpenAIServer, dataset: Path, out: Path, db: Path, *extra: str
) -> list[str]:
    args = stub_args(server, db, "--json", *SHAPE, "--decisions", "plurality,weighted", *extra)
    return ["eval", "gsm8k", "--dataset", str(dataset), "--out", str(out), *args]


def rows(result: dict[str, object]) -> dict[str, tuple[int, int]]:
    """Each label's (n, correct)."""
    return {m["mode"]: (m["n"], m["correct"]) for m in result["modes"]}  # type: ignore[attr-defined,index]


@pytest.mark.slow  # make test-fast leaves it out: a few seconds of real time
def test_shards_merge_into_the_unsharded_result(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    dataset = write_gsm8k(tmp_path / "gsm.jsonl", QUESTIONS)
    with StubOpenAIServer(answers) as server:
        whole = tmp_path / "whole"
        code, stdout, err = run_cli(shard_args(server, dataset, whole, whole / "c.sqlite"), capsys)
        assert code == 0, err
        expected = json.loads(stdout)
        lines, ks = [], []
        for i in (1, 2):
            out = tmp_path / f"shard{i}"
            args = shard_args(server, dataset, out, out / "c.sqlite", "--shard", f"{i}/2")
            code, stdout, err = run_cli(args, capsys)
            assert code == 0, err
            shard = json.loads(stdout)
            assert shard["meta"]["shard"] == [i, 2]
            ks.append(shard["matched"][0]["k"])
            lines.append({int(line) for line in _lines(out)})
            assert json.loads((out / "plan.json").read_text())["settings"]["shard"] == [i, 2]
        assert lines == [{1, 3, 5}, {2, 4}]  # every 2nd question, disjoint, all covered
        server.reset_stats()
        merged = tmp_path / "merged"
        args = ["eval", "report", str(tmp_path / "shard1"), str(tmp_path / "shard2")]
        code, stdout, err = run_cli([*args, "--out", str(merged), "--json"], capsys)
        assert code == 0, err
        report = json.loads(stdout)
    assert rows(report) == rows(expected)
    assert report["matched"] == expected["matched"]  # k chosen over all the questions
    assert report["meta"]["questions"] == QUESTIONS
    assert report["meta"]["shards"] == [str(tmp_path / "shard1"), str(tmp_path / "shard2")]
    # Every thread a shard ran is read back; only a vote whose k the merge changed runs.
    k = expected["matched"][0]["k"]
    rerun = sum(n for n, shard_k in zip((3, 2), ks, strict=True) if shard_k != k)
    assert report["meta"]["threads"]["started"] == rerun
    assert len(server.requests) == rerun * k
    assert (merged / "results.csv").is_file() and (merged / "accuracy.png").is_file()


def _lines(out: Path) -> list[str]:
    import csv

    with (out / "results.csv").open(encoding="utf-8") as stream:
        return sorted({row["line"] for row in csv.DictReader(stream) if row["mode"] == "single"})


def test_report_resumes_what_a_shard_left_on_a_shared_database(
    tmp_path: Path, checkpoint_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Shards on one database (SQLite, or Postgres as machines would share it)."""
    dataset = write_gsm8k(tmp_path / "gsm.jsonl", QUESTIONS)
    db = checkpoint_url
    with StubOpenAIServer(answers) as server:
        first = tmp_path / "a"
        code, _, err = run_cli(shard_args(server, dataset, first, db, "--shard", "1/2"), capsys)
        assert code == 0, err
        second = tmp_path / "b"
        server.inject("503", count=1000)  # shard 2 dies at its first call
        code, _, err = run_cli(shard_args(server, dataset, second, db, "--shard", "2/2"), capsys)
        assert code != 0 and "rerun the same command to resume" in err
        assert (second / "plan.json").is_file() and not (second / "results.json").exists()
        server.settle()  # what shard 2 left on the wire is read before the count restarts
        server.clear_faults()
        server.reset_stats()
        merged = tmp_path / "m"
        args = ["eval", "report", str(first), str(second), "--out", str(merged), "--json"]
        if "://" in db:  # plan.json keeps the URL without its password: give it again
            code, _, err = run_cli(args, capsys)
            assert code == 2 and "give the URL with --db" in one_error_line(err)
            assert not server.requests
        code, stdout, err = run_cli([*args, "--db", db], capsys)
        assert code == 0, err
        assert len(server.requests) > 0  # shard 2's questions were run now
    report = json.loads(stdout)
    assert {m["mode"]: m["n"] for m in report["modes"]}["debate-ring"] == QUESTIONS


def test_report_refuses_shards_of_different_settings(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    dataset = write_gsm8k(tmp_path / "gsm.jsonl", 2)
    with StubOpenAIServer(answers) as server:
        a, b = tmp_path / "a", tmp_path / "b"
        base = ["--no-matched", "--shard"]
        assert run_cli(shard_args(server, dataset, a, a / "c.sqlite", *base, "1/2"), capsys)[0] == 0
        args = shard_args(server, dataset, b, b / "c.sqlite", *base, "2/2")
        args[args.index("2", args.index("--agents"))] = "3"  # --agents 3 in shard 2
        assert run_cli(args, capsys)[0] == 0
        before = (a / "results.json").read_bytes()
        code, _, err = run_cli(
            ["eval", "report", str(a), str(b), "--out", str(tmp_path / "m")], capsys
        )
    assert code == 2
    assert one_error_line(err) == (
        f"debategraph: error: {b} is not a shard of the same eval as {a}: agents: 2 != 3"
    )
    assert (a / "results.json").read_bytes() == before and not (tmp_path / "m").exists()


@pytest.mark.parametrize("shard", ["3/2", "0/1", "x"])
def test_bad_shard_is_one_line_and_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], shard: str
) -> None:
    dataset = write_gsm8k(tmp_path / "gsm.jsonl", 2)
    out = tmp_path / "out"
    with StubOpenAIServer(answers) as server:
        code, _, err = run_cli(
            shard_args(server, dataset, out, out / "c.sqlite", "--shard", shard), capsys
        )
        assert not server.requests
    assert code == 2
    assert one_error_line(err) == (
        f"debategraph: error: --shard {shard!r}: must be i/N with 1 <= i <= N "
        "(e.g. 1/4 for the first of 4)"
    )
    assert not out.exists()


def test_shards_from_other_machines_merge_by_content_not_path(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Each "machine" has its own copy of the dataset; its shard folder is moved after."""
    with StubOpenAIServer(answers) as server:
        for i in (1, 2):
            machine = tmp_path / f"machine{i}"
            machine.mkdir()
            dataset = write_gsm8k(machine / "gsm.jsonl", QUESTIONS)
            out = machine / "out"
            args = shard_args(server, dataset, out, out / "checkpoints.sqlite", "--shard", f"{i}/2")
            args.remove("--db")
            args.remove(str(out / "checkpoints.sqlite"))  # the default db, in --out
            assert run_cli([*args, "--no-matched"], capsys)[0] == 0
        gathered = tmp_path / "gathered"
        gathered.mkdir()
        for i in (1, 2):
            (tmp_path / f"machine{i}" / "out").rename(gathered / f"shard{i}")
        server.reset_stats()
        args = ["eval", "report", str(gathered / "shard1"), str(gathered / "shard2")]
        code, stdout, err = run_cli([*args, "--out", str(tmp_path / "m"), "--json"], capsys)
        assert code == 0, err
        assert not server.requests  # every thread read back from the moved folders
    report = json.loads(stdout)
    assert report["meta"]["threads"] == {"started": 0, "resumed": 0, "finished": 2 * QUESTIONS}
