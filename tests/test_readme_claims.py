"""What the README tells a user to type works as it says (issue 20, item 8)."""

from __future__ import annotations

import importlib
import json
import re
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import run_cli, stub_args
from tests.groups import one_worker
from tests.openai_stub import StubOpenAIServer

pytestmark = one_worker(__name__)  # a module-scoped fixture

README = Path(__file__).resolve().parent.parent / "README.md"


def test_the_archive_query_in_the_readme_reads_the_file_solve_wrote(
    stub: StubOpenAIServer,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The README's archive query reads the file a default run archives to."""
    text = README.read_text(encoding="utf-8")
    found = re.search(r'sqlite3 (\S+) "(SELECT [^"]+ FROM debates)"', text)
    assert found, "the README shows no archive query"
    archive_file, query = found.groups()
    monkeypatch.chdir(tmp_path)
    code, _, err = run_cli(
        ["solve", "2 + 2?", *stub_args(stub, "debates.sqlite"), "--agents", "2", "--rounds", "1"],
        capsys,
    )
    assert code == 0, err
    with sqlite3.connect(tmp_path / archive_file) as conn:
        rows = conn.execute(query).fetchall()
    assert len(rows) == 1
    assert rows[0][1] == "18"  # the stub's solvers all answer 18


#: What the README's Python may import from debategraph: the package's own names and the
#: documented modules (``docs/architecture.md``); everything else is internal.
DOCUMENTED = {
    "debategraph",
    "debategraph.checkpoints",
    "debategraph.models",
    "debategraph.strategies.selection",
    "debategraph.strategies.termination",
}


def test_readme_python_uses_the_public_api() -> None:
    import ast

    import debategraph

    blocks = re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), re.DOTALL)
    assert len(blocks) >= 4
    for block in blocks:
        for node in ast.walk(ast.parse(block)):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("debategraph"):
                assert node.module in DOCUMENTED, f"README imports {node.module}"
                if node.module == "debategraph":
                    missing = {a.name for a in node.names} - set(debategraph.__all__)
                    assert not missing, f"README imports {missing} from debategraph"


# --------------------------------------------------------------------------------------------
# One source for every figure, and what a newcomer reads (issue 36, items 1 and 7)
# --------------------------------------------------------------------------------------------

REPO_ROOT = README.parent
DOCS = REPO_ROOT / "docs"


def _tool(name: str) -> Any:
    """``benchmarks/<name>.py`` imported by path (``benchmarks/`` is not a package)."""
    import importlib.util
    import sys

    spec = importlib.util.spec_from_file_location(
        f"bench_{name}", REPO_ROOT / "benchmarks" / f"{name}.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def _record() -> dict[str, Any]:
    record: dict[str, Any] = json.loads((DOCS / "benchmarks.json").read_text(encoding="utf-8"))
    return record


#: Hand-written Markdown that must state no figure of its own (the generated reports,
#: ``docs/benchmarks.md`` and ``docs/eval/results.md``, are where figures are written).
HAND_WRITTEN = [README, *sorted(p for p in DOCS.glob("*.md") if p.name != "benchmarks.md")]

#: A measured-looking figure: a number with a unit of time, size, rate or ratio.
FIGURE = re.compile(
    r"(?<![\w.@/:-])(\d[\d,]*(?:\.\d+)?) ?"
    r"(ms|s|sec|seconds?|min|minutes?|hours?|h|KB|MB|GB|KiB|MiB|GiB|B|bytes|tok/s|x|%"
    r"|tokens|questions a minute|questions/min|debates/s|calls|passed|failed|skipped)(?![\w/])"
)

#: Numbers with units that are settings, not measurements: each (the text, why it may stand).
SETTINGS = {
    "60 s": "--timeout's default",
    "30 s": "the SQLite busy timeout",
    "200 ms": "the stub server's set latency in the benchmarks",
    "90 s": "an example --time-limit",
    "90s": "an example --time-limit",
    "12.0 s": "an example of the cancelled-call message",
    "4,096 tokens": "the embedded model's context per slot",
    "10%": "the matched vote's tolerance",
    "95%": "the confidence of the intervals",
    "5%": "the significance level",
    "24 characters": "the shortest token serve accepts",
}


def _prose(text: str) -> str:
    """``text`` without its generated blocks and its examples (fenced output, JSON, code)."""
    import blocks

    text = blocks.strip(text)
    return re.sub(r"```(?:text|json|python|yaml)\n.*?```", "", text, flags=re.DOTALL)


@pytest.fixture(autouse=True, scope="module")
def _benchmarks_on_path() -> Iterator[None]:
    import sys

    sys.path.insert(0, str(REPO_ROOT / "benchmarks"))
    yield
    sys.path.remove(str(REPO_ROOT / "benchmarks"))


@pytest.mark.parametrize("path", HAND_WRITTEN, ids=lambda p: p.name)
def test_hand_written_text_states_no_figure(path: Path) -> None:
    """A figure comes from a report, in a generated block; by hand only settings."""
    found = [
        m.group(0)
        for m in FIGURE.finditer(_prose(path.read_text(encoding="utf-8")))
        if m.group(0) not in SETTINGS
    ]
    assert not found, (
        f"{path.name} states figures by hand: {found}; let `make bench` write them "
        "(a generated block, benchmarks/report.py) or remove them"
    )


def test_generated_blocks_are_what_renders_them() -> None:
    """Every block of the README is exactly what its tool renders now (and each is there once)."""
    import blocks

    report, readme = _tool("report"), _tool("readme")
    text = README.read_text(encoding="utf-8")
    found = blocks.find(text)
    keys = [key for key, _ in found]
    assert len(keys) == len(set(keys)), f"a block is in the README twice: {sorted(keys)}"
    rendered = {**report.readme_blocks(_record()), **readme.render_all(text)}
    assert set(keys) == set(rendered), f"blocks missing or unknown: {set(keys) ^ set(rendered)}"
    for key, body in found:
        assert body == rendered[key].rstrip("\n") + "\n", (
            f"the README's block {key!r} is stale: run `make readme` / "
            "`python benchmarks/report.py --render`"
        )


def test_no_figure_is_stated_twice() -> None:
    """One block per figure, and no block of the README's elsewhere in docs/."""
    import blocks

    report = _tool("report")
    sources = list(report.README_FIGURES.values())
    assert len(sources) == len(set(sources)), "two README blocks state one figure"
    in_readme = {key for key, _ in blocks.find(README.read_text(encoding="utf-8"))}
    for path in HAND_WRITTEN[1:]:
        again = in_readme & {key for key, _ in blocks.find(path.read_text(encoding="utf-8"))}
        assert not again, f"{path.name} states {again} again"


def _report_table() -> dict[str, str]:
    """``docs/benchmarks.md``'s table, read as a reader reads it: figure name -> measured."""
    rows = {}
    for line in (DOCS / "benchmarks.md").read_text(encoding="utf-8").splitlines():
        cells = [c.strip().replace("\\|", "|") for c in re.split(r"(?<!\\)\|", line)[1:-1]]
        if len(cells) == 5 and cells[0] not in ("Figure", "---"):
            rows[cells[0]] = cells[2]
    return rows


def test_readme_figures_are_the_report_s() -> None:
    """Each figure the README states is, word for word, the one docs/benchmarks.md holds."""
    import blocks

    report = _tool("report")
    table = _report_table()
    found = dict(blocks.find(README.read_text(encoding="utf-8")))
    for key, (_, name) in report.README_FIGURES.items():
        body = found[key]
        if body.startswith("Not measured"):
            assert name not in table, f"{key}: the report holds {name!r}, the README says not"
            continue
        assert name in table, f"{key}: the report holds no figure {name!r}"
        assert body.startswith(f"Measured: {table[name]} ("), f"{key}: {body!r} vs {table[name]!r}"


def test_the_report_is_rendered_from_its_record() -> None:
    """docs/benchmarks.md is what its record renders to: no figure written into it by hand."""
    report = _tool("report")
    record = _record()
    assert (DOCS / "benchmarks.md").read_text(encoding="utf-8") == report.render_report(record)
    for run in record["runs"]:  # where, when and under what load: said for each script
        assert "load" in run or record.get("note"), run["script"]


def test_a_block_says_where_its_figure_comes_from() -> None:
    """A figure block names its script, the date, the machine and the load.

    The date and machine are its run's own where it was rerun alone (``report.py --only``).
    """
    report = _tool("report")
    record = _record()
    for key, body in report.readme_blocks(record).items():
        if key in report.README_FIGURES and body.startswith("Measured"):
            script, name = report.README_FIGURES[key]
            run, _ = report.find_figure(record, script, name)
            written = run.get("written", record["written"])
            machine = run.get("machine", record["machine"])
            assert f"`benchmarks/{script}`" in body and written in body, body
            assert machine.split(";")[0] in body and "load" in body, body


def test_a_figure_block_follows_the_record() -> None:
    """A new record (a new `make bench`) changes the block: nothing in it is typed."""
    report = _tool("report")
    record = _record()
    before = report.readme_blocks(record)["figure.client-cpu"]
    run, fig = report.find_figure(record, "speed.py", "Client CPU per call")
    fig["headline"] = "9.99 ms; autogen 1.00 ms"
    run["load"] = {"before": [0.5, 0.4, 0.3], "after": [1.5, 1.0, 0.5]}
    after = report.readme_blocks(record)["figure.client-cpu"]
    assert after != before
    assert "Measured: 9.99 ms; autogen 1.00 ms (" in after and "load 0.50 -> 1.50" in after


def test_the_embedded_eval_is_labelled_a_read_back() -> None:
    """The eval's table says how its run got its threads: a read-back is called one."""
    report = _tool("report")
    body = report.eval_block(DOCS / "eval")
    meta = json.loads((DOCS / "eval" / "results.json").read_text())["meta"]["threads"]
    if meta["finished"]:
        assert f"read {meta['finished']} back" in body and "read-back" in body, body


def test_the_synopsis_names_every_command_and_option() -> None:
    """Walked from the CLI's own command tree: every command and visible option is written."""
    import blocks

    readme = _tool("readme")
    synopsis = dict(blocks.find(README.read_text(encoding="utf-8")))["cli-synopsis"]
    tree = list(readme.command_tree())
    assert len(tree) >= 19
    for path, _, options in tree:
        assert f"debategraph {path} " in synopsis or synopsis.count(f"debategraph {path}\n")
        for option in options:
            flag = re.findall(r"--[\w-]+", option)[0]
            assert flag in synopsis, f"{path} {flag}"
    for path, flag in [
        ("eval arithmetic", "--count"),
        ("eval report", "--out"),
        ("eval gsm8k", "--decisions"),
        ("eval gsm8k", "--judge-model"),
        ("eval gsm8k", "--shard"),
        ("solve", "--tools"),
        ("serve", "--models"),
    ]:
        assert any(p == path and any(flag in o for o in opts) for p, _, opts in tree), flag
        assert f"debategraph {path}" in synopsis and flag in synopsis


def test_every_python_example_has_an_offline_route() -> None:
    """Each Python example runs, or says how it runs, on the embedded model."""
    blocks_ = re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), re.DOTALL)
    for block in blocks_:
        assert '"local"' in block, f"no offline route in:\n{block[:200]}"
    assert any('ModelSpec(model="local")' in b for b in blocks_)


def test_the_notebooks_are_named_as_they_are_and_each_is_run() -> None:
    """Every notebook is in the README, none that is not, and a test executes each."""
    text = README.read_text(encoding="utf-8")
    named = set(re.findall(r"notebooks/([\w-]+\.ipynb)", text))
    there = {p.name for p in (REPO_ROOT / "notebooks").glob("*.ipynb")}
    assert named == there
    tests = "".join(p.read_text() for p in (REPO_ROOT / "tests").glob("test_*.py"))
    for name in there:
        assert f'run_notebook("{name}"' in tests, f"no test executes notebooks/{name}"
    assert "no test executes it" not in text


def test_each_pattern_s_roster_is_read_as_its_table_says() -> None:
    """The roster table's record is the one the pattern's CLI reads its agents file as."""
    import inspect

    from debategraph import registry

    readme = _tool("readme")
    for entry in registry.entries():
        module = importlib.import_module(f"debategraph.cli.patterns.{entry.name}")
        record = readme.ROSTER_RECORDS[entry.name]
        assert re.search(rf"read_agents_file\(\s*\w+,\s*{record}\b", inspect.getsource(module)), (
            f"{entry.name}: its agents file is not read as {record}"
        )


def test_why_not_texts_state_measured_figures_never_constants() -> None:
    """A benchmark's "why not" text writes its figures from what it measured."""
    import ast

    figure = re.compile(r"\d[\d,]*(?:\.\d+)? ?(?:ms|s|min|x|%|MB|KB|B|tok/s)\b")
    typed = []
    for path in sorted((REPO_ROOT / "benchmarks").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.keyword) and node.arg == "why":
                parts: list[ast.AST] = [node.value]
            elif isinstance(node, ast.FunctionDef) and node.name.startswith("why_"):
                parts = list(node.body[1:])  # the docstring aside
            else:
                continue
            typed += [
                f"{path.name}:{part.lineno}: {m.group(0)}"
                for body in parts
                for part in ast.walk(body)
                if isinstance(part, ast.Constant) and isinstance(part.value, str)
                for m in figure.finditer(part.value)
            ]
    assert not typed, f"constants in why-not texts: {typed}"


def test_one_debate_s_why_not_states_the_round_timing_measured() -> None:
    """The rounds' timing comes from when the requests reached the server, in this run."""
    speed = _tool("speed")
    latency = speed.LATENCY_S
    # Three rounds of 4 requests: 2.5 ms apart within a round; 7 ms from a round's last
    # reply to the next round's first request.
    arrivals, at = [], 100.0
    for _ in range(3):
        round_ = [at + i * 0.0025 for i in range(4)]
        arrivals += round_
        at = round_[-1] + latency + 0.007
    timing = speed.round_timing(arrivals, latency)
    assert timing["rounds"] == 3
    assert timing["spread_ms"] == pytest.approx(7.5)
    assert timing["turn_ms"] == pytest.approx(7.0)
    why = speed.why_one(1.06, 1.04, timing)
    assert "over 7.5 ms" in why and "7.0 ms pass" in why
    assert f"{0.06 * speed.CRITICAL_S / speed.ROUNDS * 1000:.1f} ms beyond" in why
    assert "about" not in why


def test_the_embedded_eval_s_headline_labels_a_read_back() -> None:
    """A run that read finished threads back says so in its headline: its time is no eval's."""
    evaluation = _tool("eval")
    meta = {"threads": {"started": 0, "resumed": 0, "finished": 700}}
    said = evaluation._threads(meta, 17.0, brief=True)
    assert "700 read back" in said and "read-back" in said and "0 threads run" in said
    ran = evaluation._threads(
        {"threads": {"started": 4, "resumed": 1, "finished": 0}}, 9.0, brief=True
    )
    assert ran == "4 threads run and 1 resumed in 9 s"


@pytest.mark.parametrize(
    "first_line", ["from typing import TypedDict", "from langgraph.graph import END"]
)
def test_an_offline_python_example_runs_as_written(
    first_line: str, stub: StubOpenAIServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The README's example runs on the model it names offline (the stub stands in for it)."""
    examples = re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), re.DOTALL)
    code = next(b for b in examples if b.startswith(first_line))
    offline = 'ModelSpec(model="local")'
    assert offline in code
    monkeypatch.chdir(tmp_path)  # the examples write their SQLite files here
    code = code.replace(offline, f'ModelSpec(model="stub", base_url="{stub.url}", max_retries=0)')
    exec(compile(code, "README.md", "exec"), {"__name__": "readme_example"})
    assert stub.calls > 0
