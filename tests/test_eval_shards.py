"""Shards of one eval: ``--shard i/N``, the slices, the plans and the checks that merge them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from debategraph.errors import UsageError
from debategraph.eval.shards import (
    PLAN_FILE,
    check_shards,
    differences,
    parse_shard,
    read_plan,
    shard_items,
    write_plan,
)


@pytest.mark.parametrize(("text", "shard"), [("1/1", (1, 1)), ("2/4", (2, 4)), (" 3 / 3 ", (3, 3))])
def test_parse_shard(text: str, shard: tuple[int, int]) -> None:
    assert parse_shard(text) == shard


@pytest.mark.parametrize("text", ["0/2", "3/2", "1", "a/b", "1/0", "-1/2", "1/2/3", ""])
def test_bad_shard_is_one_line(text: str) -> None:
    with pytest.raises(UsageError) as info:
        parse_shard(text)
    assert str(info.value) == (
        f"--shard {text!r}: must be i/N with 1 <= i <= N (e.g. 1/4 for the first of 4)"
    )


def test_shards_are_disjoint_and_cover() -> None:
    items = list(range(10))
    slices = [shard_items(items, (i, 3)) for i in (1, 2, 3)]
    assert slices == [[0, 3, 6, 9], [1, 4, 7], [2, 5, 8]]
    assert sorted(x for s in slices for x in s) == items
    assert shard_items(items, None) == items
    assert shard_items(items, (5, 20)) == [4]


def _plan(tmp_path: Path, name: str, **settings: object) -> Path:
    folder = tmp_path / name
    folder.mkdir()
    base = {"modes": "single,vote", "agents": 3, "shard": None, "db": None, "parallel": 4}
    write_plan(folder, {**base, **settings})
    return folder


def test_plan_round_trips_and_names_differences(tmp_path: Path) -> None:
    a = _plan(tmp_path, "a", shard=[1, 2], db="x.sqlite")
    b = _plan(tmp_path, "b", shard=[2, 2], db="y.sqlite", parallel=8)
    c = _plan(tmp_path, "c", shard=[2, 2], agents=5)
    plans = {p: read_plan(p) for p in (a, b)}
    assert plans[a]["shard"] == [1, 2]
    assert check_shards(plans) == 2
    assert differences(read_plan(a), read_plan(c)) == ["agents: 3 != 5"]
    with pytest.raises(UsageError) as info:
        check_shards({a: read_plan(a), c: read_plan(c)})
    assert str(info.value) == f"{c} is not a shard of the same eval as {a}: agents: 3 != 5"


def test_shard_checks(tmp_path: Path) -> None:
    a = _plan(tmp_path, "a", shard=[1, 3])
    b = _plan(tmp_path, "b", shard=[1, 3])
    c = _plan(tmp_path, "c", shard=[2, 2])
    with pytest.raises(UsageError, match=r"both shard 1/3"):
        check_shards({a: read_plan(a), b: read_plan(b)})
    with pytest.raises(UsageError, match=r"is shard 2/2 but .* is one of 3"):
        check_shards({a: read_plan(a), c: read_plan(c)})
    with pytest.raises(UsageError, match=r"^shard 2/3, 3/3 missing"):
        check_shards({a: read_plan(a)})


def test_unreadable_plans(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match=r"no plan\.json"):
        read_plan(tmp_path)
    (tmp_path / PLAN_FILE).write_text("{", encoding="utf-8")
    with pytest.raises(UsageError, match="cannot read it"):
        read_plan(tmp_path)
    (tmp_path / PLAN_FILE).write_text(json.dumps({"version": 99, "settings": {}}), "utf-8")
    with pytest.raises(UsageError, match="plan version 99"):
        read_plan(tmp_path)
