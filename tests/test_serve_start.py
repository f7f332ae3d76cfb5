"""``serve``'s first start restarts before the CLI is imported, or leaves it to the command."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from debategraph.cli.serve_start import restart_early
from debategraph.serve import server

URL = "postgresql://debategraph:s3cret@127.0.0.1:5432/db"


@pytest.fixture
def restarts(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, list[str], list[str]]]:
    """Each restart asked for (the URL, the arguments, the variables), none made."""
    made: list[tuple[str, list[str], list[str]]] = []

    def record(db: str, command: Sequence[str], variables: Sequence[str]) -> Any:
        made.append((db, list(command), list(variables)))

    monkeypatch.setattr(server, "restart_without_secrets", record)
    monkeypatch.setenv("DG_TEST_URL", URL)
    return made


def test_the_known_options_restart_without_the_database_ones(
    restarts: list[tuple[str, list[str], list[str]]],
) -> None:
    args = ["serve", "--port=8001", "--db-env", "DG_TEST_URL", "--insecure-no-auth"]
    restart_early([*args, "--cors-origin", "http://a.example", "--models", "m.yaml"])
    again = ["-m", "debategraph.cli", "serve", "--port", "8001", "--insecure-no-auth"]
    again += ["--cors-origin", "http://a.example", "--models", "m.yaml"]
    assert restarts == [(URL, again, ["DG_TEST_URL"])]


@pytest.mark.parametrize(
    "args",
    [
        ["solve", "--db-env", "DG_TEST_URL"],  # another command
        ["serve", "--db-env", "DG_TEST_URL", "--help"],
        ["serve", "--db-fd", "3"],  # the restarted start
        ["serve", "--db-env", "DG_TEST_URL", "--verbose"],  # unknown: the command says so
        ["serve", "--db-env"],  # no value
        ["serve", "--db", URL],  # a password on the command line: the command refuses it
        ["serve", "--db-env", "DG_NOT_SET_HERE"],
        ["serve", "--db", "postgresql://h/db", "--db-env", "DG_TEST_URL"],
    ],
)
def test_anything_else_is_left_to_the_command(
    restarts: list[tuple[str, list[str], list[str]]], args: list[str]
) -> None:
    restart_early(args)
    assert restarts == []
