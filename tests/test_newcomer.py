"""A newcomer's first hour (issue 52): reading needs no key, a withheld key is said, lines true.

Each test drives the CLI in this process against the OpenAI-compatible stub
(:class:`~tests.openai_stub.StubOpenAIServer`), its key-checking mode where keys matter.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import one_error_line, run_cli
from tests.openai_stub import StubOpenAIServer

KEY = "sk-newcomer-0123"
VAR = "NEWCOMER_KEY"
PAPER = "# On Rings\n\n## Method\nAgents on a ring.\n\n## Results\nThe ring matches.\n"


def keyed(url: str) -> str:
    """An agent's model at the stub, its key named by variable (as a newcomer writes it)."""
    return f"{{model: stub, base_url: '{url}', api_key_env: {VAR}}}"


def pattern_runs(url: str, folder: Path) -> dict[str, list[str]]:
    """One run of every pattern whose agents all name their key by variable."""
    paper = folder / "paper.md"
    paper.write_text(PAPER)
    files = {
        "solve": "- name: Ann\n  model: M\n- name: Bo\n  model: M\n",
        "debate": "- name: Ann\n  side: for\n  model: M\n- name: Bo\n  side: against\n  model: M\n"
        "- name: judge\n  model: M\n",
        "discuss": "- name: Ann\n  focus: methods\n  model: M\n- name: Bo\n  focus: impact\n"
        "  model: M\n- name: consensus\n  model: M\n",
        "chat": "- name: Writer\n  instructions: writes\n  model: M\n- name: Reviewer\n"
        "  instructions: reviews\n  model: M\n",
        "meeting": "- name: skeptic\n  model: M\n- name: chair\n  model: M\n",
    }
    subjects = {"solve": "2 + 3?", "discuss": str(paper), "meeting": "A four-day week?"}
    runs = {}
    for command, text in files.items():
        agents = folder / f"{command}.yaml"
        agents.write_text(text.replace("M", keyed(url)))
        runs[command] = [
            command,
            subjects.get(command, "Tea or coffee?"),
            "--agents-file",
            str(agents),
            "--rounds",
            "1",
            "--thread",
            command,
        ]
    runs["debate"].append("--judge")
    runs["discuss"] += ["--report", str(folder / "report.md")]
    return runs


def test_every_reading_command_reads_keyed_threads_of_every_pattern_without_the_keys(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    db = str(tmp_path / "d.sqlite")
    monkeypatch.setenv(VAR, KEY)
    with StubOpenAIServer(api_key=KEY) as server:
        run_model = ["--model", "stub", "--base-url", server.url, "--api-key-env", VAR]
        for args in pattern_runs(server.url, tmp_path).values():
            code, _, err = run_cli([*args, *run_model, "--db", db, "--json"], capsys)
            assert code == 0, err
        assert set(server.keys) == {f"Bearer {KEY}"}  # every call sent the key and was answered
    monkeypatch.delenv(VAR)  # a new shell: the key is gone, reading goes on
    code, out, err = run_cli(["threads", "--db", db, "--json"], capsys)
    assert code == 0, err
    listed = {row["thread_id"]: row["status"] for row in json.loads(out)}
    assert listed == dict.fromkeys(["solve", "debate", "discuss", "chat", "meeting"], "finished")
    for thread in listed:
        for args in (
            ["show", thread],
            ["history", thread],
            ["export", thread],
            ["export", thread, "--format", "json"],
            ["view", thread, "--output", str(tmp_path / f"{thread}.html")],
        ):
            code, out, err = run_cli([*args, "--db", db], capsys)
            assert code == 0 and "Traceback" not in out + err, (args, err)
        assert (tmp_path / f"{thread}.html").stat().st_size > 0
    # Running it again does need the key, and says which in one line.
    code, _, err = run_cli(["fork", "debate", "--at", "0", "--db", db], capsys)
    assert code == 2 and f"its API key variable {VAR} is not set" in one_error_line(err)


def test_a_withheld_key_is_named_on_the_first_line_the_refused_call_and_in_doctor(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    db = str(tmp_path / "d.sqlite")
    with StubOpenAIServer(api_key=KEY) as server:
        endpoint = ["--model", "stub", "--base-url", server.url, "--db", db]
        once = [*endpoint, "--max-retries", "0"]
        code, _, err = run_cli(["solve", "2 + 3?", "--agents", "2", *once], capsys)
        assert code == 1, err
        first, *_ = err.splitlines()
        withheld = f"OPENAI_API_KEY is set but was not sent to {server.url}"
        assert withheld in first and "--api-key-env OPENAI_API_KEY sends it" in first
        line = one_error_line(err)
        assert "answered HTTP 401" in line and withheld in line, line
        assert "--api-key-env OPENAI_API_KEY" in line

        code, out, _ = run_cli(["doctor", *endpoint], capsys)
        assert code == 1
        checks = dict(line[2:].split(": ", 1) for line in out.splitlines() if ": " in line)
        assert checks["api key"].startswith(f"none sent: {withheld}")
        assert "wants an API key (HTTP 401 on /models): no key was sent" in checks["endpoint"]
        assert "refused the API key" not in out

        # Sent as the line says, the same run goes through; a wrong key is "refused".
        code, _, err = run_cli(
            ["solve", "2 + 3?", "--agents", "2", *once, "--api-key-env", "OPENAI_API_KEY"],
            capsys,
        )
        assert code == 0, err
        assert "not sent" not in err
        monkeypatch.setenv("WRONG_KEY", "sk-wrong")
        code, out, _ = run_cli(["doctor", *endpoint, "--api-key-env", "WRONG_KEY"], capsys)
        assert code == 1 and "refused the API key (HTTP 401 on /models)" in out
        assert "api key: sent (WRONG_KEY)" in out


@pytest.mark.parametrize(
    ("base_url", "says"),
    [
        ("http://api.exmaple.invalid/v1", "its host api.exmaple.invalid does not resolve (DNS:"),
        ("http://127.0.0.1:{closed}/v1", "it refused the connection (nothing listens there"),
        ("https://127.0.0.1:{open}/v1", "TLS failed ("),
    ],
    ids=["dns", "refused", "tls"],
)
def test_an_endpoint_that_cannot_be_reached_is_named_as_what_failed(
    base_url: str, says: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from tests.studio_server import closed_port

    with StubOpenAIServer() as server:  # an HTTP server: TLS to it fails the handshake
        url = base_url.format(closed=closed_port(), open=server.port)
        args = ["solve", "2 + 3?", "--agents", "2", "--model", "m", "--base-url", url]
        code, _, err = run_cli(
            [*args, "--db", str(tmp_path / "d.db"), "--max-retries", "0"], capsys
        )
    assert code == 1, err
    line = one_error_line(err)
    assert f"model endpoint {url} is unreachable: {says}" in line, line
    assert "timed out" not in line


def test_a_near_miss_of_local_is_asked_about_not_sent_to_openai(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    for slip in ("locl", "Local", "lcoal"):
        code, _, err = run_cli(
            ["solve", "2+3?", "--model", slip, "--db", str(tmp_path / "d")], capsys
        )
        assert code == 2
        assert f"model {slip!r} would go to OpenAI's API: did you mean local" in one_error_line(err)
    assert not (tmp_path / "d").exists()


@pytest.mark.parametrize(
    ("typo", "says"),
    [
        ("slove", "Did you mean 'solve'"),
        ("dabate", "Did you mean 'debate'?"),
        ("thraeds", "Did you mean 'threads'?"),
    ],
)
def test_an_unknown_command_is_answered_with_the_closest_names(
    typo: str, says: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run_cli([typo], capsys)
    assert code == 2
    line = one_error_line(err)
    assert f"No such command {typo!r}. {says}" in line, line


def test_an_unknown_field_in_an_agents_file_is_named_as_unknown(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    agents = tmp_path / "agents.yaml"
    agents.write_text("- name: Ann\n  stance: for\n- name: Bo\n  side: against\n")
    code, _, err = run_cli(
        ["debate", "Tea?", "--agents-file", str(agents), "--db", str(tmp_path / "d")], capsys
    )
    assert code == 2
    line = one_error_line(err)
    assert "line 1: unknown field 'stance': allowed are name, " in line, line
    assert line.endswith("; missing: 'side'"), line


def test_the_first_line_names_every_model_the_run_calls(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with StubOpenAIServer(models=("stub", "other")) as run_server, StubOpenAIServer() as own:
        agents = tmp_path / "agents.yaml"
        agents.write_text(
            f"- name: Ann\n  side: for\n  model: stub@{own.url}\n- name: Bo\n  side: against\n"
            "- name: Cy\n  side: neither\n  model: other\n"
        )
        args = ["debate", "Tea?", "--agents-file", str(agents), "--rounds", "1"]
        args += ["--model", "stub", "--base-url", run_server.url, "--db", str(tmp_path / "d")]
        code, _, err = run_cli(args, capsys)
        urls = run_server.url, own.url
    assert code == 0, err
    first = err.splitlines()[0]
    assert f"models stub @ {urls[0]}; Ann: stub @ {urls[1]}; Cy: other @ {urls[0]} · " in first


def test_help_shows_a_listed_default_whole(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    code, out, _ = run_cli(["eval", "gsm8k", "--help"], capsys)
    assert code == 0
    text = " ".join(line.strip("│ ") for line in out.splitlines())
    assert "[default: single, vote, debate-ring, debate-full]" in " ".join(text.split())
    assert "…" not in out.split("--decisions")[0]


README = Path(__file__).resolve().parent.parent / "README.md"


def quickstart_commands() -> list[list[str]]:
    """The README's quickstart commands, in order, as a shell splits them (exports aside)."""
    import re
    import shlex

    text = README.read_text(encoding="utf-8")
    section = text[text.index("## Quickstart\n") : text.index("## Contents\n")]
    blocks = re.findall(r"```bash\n(.*?)```", section, flags=re.DOTALL)
    lines = [line.strip() for block in blocks for line in block.splitlines()]
    return [shlex.split(line) for line in lines if line and not line.startswith("export ")]


def test_the_readme_quickstart_runs_in_order_with_the_stub_as_your_endpoint(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Install, the embedded debate (``tests/test_embedded.py`` runs its question), then yours.

    The stub stands for "your endpoint" in its key-checking mode: the command as written
    sends the key ``MY_API_KEY`` holds, and the threads it made are listed and viewed.
    """
    install, embedded, *yours = quickstart_commands()
    import shlex

    text = README.read_text(encoding="utf-8")
    setup = text[text.index("## Set up\n") :]
    first_setup = shlex.split(setup[setup.index("```bash\n") + 8 :].splitlines()[0])
    assert first_setup[: len(install)] == install  # the set-up command's install, then solve
    assert embedded[:2] == [".venv/bin/debategraph", "solve"]
    monkeypatch.chdir(tmp_path)  # the default --db (debates.sqlite) and the page land here
    monkeypatch.setenv("MY_API_KEY", KEY)
    with StubOpenAIServer(api_key=KEY, models=("YOUR_MODEL",)) as server:
        for command in yours:
            assert command[0] == ".venv/bin/debategraph", command
            args = [server.url if a == "https://YOUR-ENDPOINT/v1" else a for a in command[1:]]
            if args[0] == "solve":
                assert args[: len(embedded) - 1] == embedded[1:]  # the same debate, then where
            if args[:2] == ["view", "THREAD"]:
                args[1] = json.loads(run_cli(["threads", "--json"], capsys)[1])[-1]["thread_id"]
            code, _, err = run_cli(args, capsys)
            assert code == 0 and "Traceback" not in err, (command, err)
        assert server.keys and set(server.keys) == {f"Bearer {KEY}"}
    assert len(list(tmp_path.glob("*.html"))) == 1
