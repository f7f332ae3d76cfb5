"""The eval's result files: ``results.json``, ``results.csv``, the two plots, ``results.md``.

:func:`render_results` renders their contents (each figure once), :func:`write_files`
writes files into ``--out`` all or nothing: each to a temporary file next to its target,
moved into place only once all are complete, so an interrupted or failed write never
leaves a truncated file, nor some files without the others (an older complete one stays
as it was); :func:`write_results` is the two. :func:`write_out` writes any other file of
``--out`` (the questions, the plan) whole or not at all. :func:`read_report` reads
``results.json`` back; the tables (:mod:`~debategraph.eval.tables`) show the figures as
it rounds them. The page that shows them, ``report.html``, is no file of the eval's: the
face that writes an eval's files (:mod:`debategraph.views.eval_files`) renders it from the
plots :func:`render_results` rendered and writes it with them, in one :func:`write_files`.
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
import os
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import MISSING, asdict, fields
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from debategraph.datafiles import stage, write_whole
from debategraph.errors import UsageError
from debategraph.eval.breakdowns import Agreement, QuestionAgreement, SubjectScore
from debategraph.eval.budget import MatchedResult
from debategraph.eval.dynamics import DecisionResult, ModeDynamics
from debategraph.eval.escalation import Escalation
from debategraph.eval.figures import accuracy_figure, dynamics_figure
from debategraph.eval.records import Comparison, ModeSummary, Outcome
from debategraph.eval.stats import ALPHA, Report
from debategraph.strategies.dynamics import DynamicsSummary

if TYPE_CHECKING:
    from matplotlib.figure import Figure

#: The files written, by the key ``write_results`` returns their paths under.
FILES = {
    "json": "results.json",
    "csv": "results.csv",
    "png": "accuracy.png",
    "dynamics": "dynamics.png",
}
#: ``results.md``, written where ``write_results`` is given its text.
MARKDOWN = ("md", "results.md")
_DECIMALS = {"accuracy": 4, "ci_low": 4, "ci_high": 4, "abstention_rate": 4, "calls": 2}
_DECIMALS |= {"prompt_tokens": 1, "completion_tokens": 1, "tokens": 1, "wall_s": 3}
_RATE = 4  # decimals of every other share in results.json


def _p_json(p_value: float) -> float:
    """A p-value for ``results.json``: 6 significant digits."""
    return float(f"{p_value:.6g}")


def _rounded(value: Any, digits: int = _RATE) -> Any:
    """``value`` with every float in it rounded (in lists and mappings too; tuples become lists)."""
    if isinstance(value, bool | int | str) or value is None:
        return value
    if isinstance(value, float):
        return round(value, digits)
    if isinstance(value, Mapping):
        return {key: _rounded(item, digits) for key, item in value.items()}
    return [_rounded(item, digits) for item in value]


def _summary_json(summary: ModeSummary, pareto: set[str]) -> dict[str, Any]:
    """A label's summary as a ``results.json`` entry: rounded, with ``ci95`` and ``pareto``."""
    values = asdict(summary)
    order = ["mode", "decision", *(f.name for f in fields(summary) if f.name not in {"mode"})]
    entry: dict[str, Any] = {}
    for key in dict.fromkeys(order):
        value = values[key]
        entry[key] = round(value, _DECIMALS[key]) if key in _DECIMALS else value
        if key == "ci_high":
            entry["ci95"] = [entry["ci_low"], entry["ci_high"]]
    entry["pareto"] = summary.mode in pareto
    return entry


def _comparison_json(comparison: Comparison) -> dict[str, Any]:
    """A comparison as a ``results.json`` entry, its p-value to 6 significant digits."""
    entry = asdict(comparison)
    entry["p_value"] = _p_json(comparison.p_value)
    entry["significant"] = entry["p_value"] < ALPHA
    return entry


def _matched_json(result: MatchedResult) -> dict[str, Any]:
    """A matched-budget result as a ``results.json`` entry."""
    entry: dict[str, Any] = _rounded(asdict(result))
    entry["tokens"] = round(result.tokens, 1)
    entry["vote_tokens"] = round(result.vote_tokens, 1)
    entry["p_value"] = _p_json(result.p_value)
    entry["significant"] = entry["p_value"] < ALPHA
    return entry


def _dynamics_json(entry: ModeDynamics) -> dict[str, Any]:
    """A debate mode's dynamics as a ``results.json`` entry (shares to 4 decimals)."""
    return {
        "mode": entry.mode,
        **_rounded(entry.summary.model_dump()),
        "decisions": [_rounded(asdict(result)) for result in entry.decisions],
    }


def _escalation_json(entry: Escalation) -> dict[str, Any]:
    """``vote-then-debate``'s figures as a ``results.json`` entry (tokens to 1 decimal)."""
    values = asdict(entry)
    values.pop("tests")
    document: dict[str, Any] = _rounded(values)
    for key in ("tokens", "every_tokens", "saved_tokens"):
        document[key] = _rounded(values[key], 1)
    document["tests"] = [_comparison_json(test) for test in entry.tests]
    return document


def _subject_json(score: SubjectScore) -> dict[str, Any]:
    """A mode's score on a subject as a ``results.json`` entry, with ``ci95``."""
    entry: dict[str, Any] = _rounded(asdict(score))
    entry["ci95"] = [entry["ci_low"], entry["ci_high"]]
    return entry


def _agreement_json(entry: Agreement) -> dict[str, Any]:
    """A mode's agreement across epochs as a ``results.json`` entry (per question too)."""
    document: dict[str, Any] = _rounded(asdict(entry))
    return document


def results_document(report: Report, meta: Mapping[str, Any]) -> dict[str, Any]:
    """``results.json``'s content: ``meta``, ``modes``, ``comparisons``, ``matched``, ``dynamics``.

    And ``vote_then_debate`` (:mod:`~debategraph.eval.escalation`'s figures), where the
    run has that mode; ``subjects`` (each mode's accuracy per subject), where the dataset
    names subjects; ``epochs`` (each mode's agreement across epochs, per question too),
    where ``--epochs`` asked each question more than once.

    Args:
        report: The report (see :func:`~debategraph.eval.stats.build_report`).
        meta: Anything to record with the results, as given.

    Returns:
        The document (rounded; values of ``meta`` JSON lacks are left to the writer).
    """
    pareto = set(report.pareto)
    return {
        "meta": dict(meta),
        "modes": [_summary_json(summary, pareto) for summary in report.summaries],
        "comparisons": [_comparison_json(comparison) for comparison in report.comparisons],
        "matched": [_matched_json(result) for result in report.matched],
        "dynamics": [_dynamics_json(entry) for entry in report.dynamics],
        **(
            {"vote_then_debate": [_escalation_json(entry) for entry in report.escalation]}
            if report.escalation
            else {}
        ),
        **({"subjects": [_subject_json(s) for s in report.subjects]} if report.subjects else {}),
        **(
            {"epochs": [_agreement_json(entry) for entry in report.agreement]}
            if report.agreement
            else {}
        ),
    }


def _pair(value: Sequence[float]) -> tuple[float, float]:
    """A ``[low, high]`` list as a tuple."""
    low, high = value
    return (low, high)


def _comparison(entry: Mapping[str, Any]) -> Comparison:
    """A paired test back from its ``results.json`` entry."""
    return Comparison(**{f.name: entry[f.name] for f in fields(Comparison)})


def read_report(document: Mapping[str, Any]) -> Report:
    """The report back from a ``results.json`` document (its rounded figures).

    For callers that hold the JSON (the benchmark's report, ``--json`` output) and want
    the tables: ``tables.markdown_table(read_report(json.loads(text)))`` is the same text
    as ``markdown_table(report)`` of the report that wrote it (the tables show the figures
    as ``results.json`` rounds them).

    Args:
        document: ``results.json``'s content (``matched`` and ``dynamics`` may be absent).

    Returns:
        The report.

    Raises:
        ValueError: When an entry lacks a field or has one of the wrong kind.
    """
    try:
        summaries = tuple(
            ModeSummary(
                **{
                    f.name: entry[f.name]
                    for f in fields(ModeSummary)
                    if f.name in entry or f.default is MISSING  # errored: results before it
                }
            )
            for entry in document["modes"]
        )
        comparisons = tuple(_comparison(entry) for entry in document["comparisons"])
        matched = tuple(
            MatchedResult(**{f.name: entry[f.name] for f in fields(MatchedResult)})
            for entry in document.get("matched", [])
        )
        dynamics = []
        for entry in document.get("dynamics", []):
            values = dict(entry)
            mode = values.pop("mode")
            decisions = tuple(
                DecisionResult(
                    **{
                        **{f.name: item[f.name] for f in fields(DecisionResult)},
                        "oracle_ci": _pair(item["oracle_ci"]),
                        "final_ci": _pair(item["final_ci"]),
                        "loss_ci": _pair(item["loss_ci"]),
                    }
                )
                for item in values.pop("decisions")
            )
            dynamics.append(ModeDynamics(mode, DynamicsSummary.model_validate(values), decisions))
        escalation = tuple(
            Escalation(
                **{
                    **{f.name: entry[f.name] for f in fields(Escalation) if f.name != "tests"},
                    "tests": tuple(_comparison(test) for test in entry["tests"]),
                }
            )
            for entry in document.get("vote_then_debate", [])
        )
        subjects = tuple(
            SubjectScore(**{f.name: entry[f.name] for f in fields(SubjectScore)})
            for entry in document.get("subjects", [])
        )
        agreement = tuple(
            Agreement(
                **{
                    **{f.name: entry[f.name] for f in fields(Agreement)},
                    "by_question": tuple(
                        QuestionAgreement(**question) for question in entry["by_question"]
                    ),
                }
            )
            for entry in document.get("epochs", [])
        )
        front = [s for s, e in zip(summaries, document["modes"], strict=True) if e["pareto"]]
    except (KeyError, TypeError) as exc:
        raise ValueError(f"not a results.json document: {type(exc).__name__} {exc}") from exc
    front.sort(key=lambda s: (s.tokens, -s.accuracy))  # as pareto_front orders it
    pareto = tuple(s.mode for s in front)
    return Report(
        summaries, comparisons, matched, tuple(dynamics), pareto, escalation, subjects, agreement
    )


def _json(report: Report, meta: Mapping[str, Any]) -> str:
    """``results.json``; values of ``meta`` that JSON lacks (paths...) become strings."""
    text = json.dumps(results_document(report, meta), indent=2, ensure_ascii=False, default=str)
    return text + "\n"


def _csv(outcomes: Sequence[Outcome]) -> str:
    """``results.csv``: one row per outcome, an abstention's answer left empty."""
    buffer = io.StringIO(newline="")
    writer = csv.writer(buffer)
    names = [f.name for f in fields(Outcome)]
    writer.writerow(names)
    for outcome in outcomes:
        row = asdict(outcome)
        writer.writerow(["" if row[name] is None else row[name] for name in names])
    return buffer.getvalue()


def check_out_dir(path: Path) -> None:
    """Make ``--out`` and prove it writable before any question runs.

    Args:
        path: The folder.

    Raises:
        UsageError: If it cannot be made or written to.
    """
    try:
        path.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=path, prefix=".write-test-"):
            pass
    except OSError as exc:
        raise UsageError(f"--out {path}: not writable: {exc.strerror or exc}") from exc


def cannot_write(out_dir: Path, name: str, exc: OSError) -> UsageError:
    """The one-line error of a file of ``--out`` that could not be written."""
    return UsageError(f"--out {out_dir}: cannot write {name}: {exc.strerror or exc}")


def write_out(path: Path, text: str) -> Path:
    """Write a text file of ``--out`` whole or not at all.

    Written to a temporary file beside it and moved into place, so an interrupted write
    leaves no half file.

    Args:
        path: The file, in ``--out``.
        text: Its content.

    Returns:
        ``path``.

    Raises:
        UsageError: If it cannot be written (``--out DIR: cannot write NAME: why``).
    """
    try:
        write_whole(path, text)
    except OSError as exc:
        raise cannot_write(path.parent, path.name, exc) from exc
    return path


def _png(figure: Figure) -> bytes:
    """A figure's PNG."""
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png")
    return buffer.getvalue()


def render_results(
    outcomes: Sequence[Outcome],
    report: Report,
    meta: Mapping[str, Any],
    markdown: str | None = None,
) -> dict[str, bytes]:
    """The contents of the eval's result files, by file name, as :func:`write_results` writes them.

    ``results.json``, ``results.csv``, ``accuracy.png``, ``dynamics.png`` (in that order,
    the order of :data:`FILES`), then ``results.md`` where ``markdown`` is given. Each
    figure is rendered once; a page that shows the plots (``report.html``) inlines these
    bytes. Nothing is written.

    Args:
        outcomes: Every outcome of the eval, one CSV row each.
        report: Their report (see :func:`~debategraph.eval.stats.build_report`).
        meta: Anything to record with the results; values JSON cannot hold are written as
            their ``str``.
        markdown: ``results.md``'s text (``None``: no ``results.md``).

    Returns:
        Each file's content, by its name.

    Raises:
        OSError: If a file cannot be rendered; its ``filename`` is the file's name (for
            :func:`cannot_write`).
    """
    renderers: dict[str, Callable[[], bytes]] = {
        FILES["json"]: lambda: _json(report, meta).encode("utf-8"),
        FILES["csv"]: lambda: _csv(outcomes).encode("utf-8"),
        FILES["png"]: lambda: _png(accuracy_figure(report.summaries, report.pareto)),
        FILES["dynamics"]: lambda: _png(dynamics_figure(report.dynamics)),
    }
    if markdown is not None:
        renderers[MARKDOWN[1]] = lambda: markdown.encode("utf-8")
    files = {}
    for name, render in renderers.items():
        try:
            files[name] = render()
        except OSError as exc:
            raise OSError(exc.errno, exc.strerror or str(exc), name) from exc
    return files


def _content(data: bytes) -> Callable[[IO[bytes]], object]:
    """What writes ``data`` to a stream (:func:`~debategraph.datafiles.stage`'s writer)."""
    return lambda stream: stream.write(data)


def write_files(out_dir: Path, files: Mapping[str, bytes]) -> dict[str, Path]:
    """Write files into ``out_dir`` all or nothing.

    Every file is staged to a temporary file beside its target first; only once all are
    complete are they moved into place, in the order given. When one cannot be written,
    the temporary files are removed and no file is left half-written (an older complete
    one stays as it was); none is moved in unless all were staged. (A move into place
    that fails, a rename within one folder, would leave those moved before it.)

    Args:
        out_dir: The folder to write into; created when missing.
        files: Each file's content, by its name in ``out_dir``.

    Returns:
        The paths written, by file name, in the order given.

    Raises:
        UsageError: When a file cannot be written (``--out DIR: cannot write NAME: why``).
    """
    staged: dict[str, Path] = {}
    name = next(iter(files), "")
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
        for name, content in files.items():
            staged[name] = stage(out_dir / name, _content(content))
        for name, temp in list(staged.items()):
            os.replace(temp, out_dir / name)
            del staged[name]
    except OSError as exc:
        raise cannot_write(out_dir, name, exc) from exc
    finally:
        for temp in staged.values():
            with contextlib.suppress(OSError):
                temp.unlink(missing_ok=True)
    return {name: out_dir / name for name in files}


def result_keys(markdown: bool) -> dict[str, str]:
    """The result files' names by the key :func:`write_results` returns their paths under."""
    return dict([*FILES.items(), MARKDOWN] if markdown else FILES)


def write_results(
    out_dir: Path,
    outcomes: Sequence[Outcome],
    report: Report,
    meta: Mapping[str, Any],
    markdown: str | None = None,
) -> dict[str, Path]:
    """Write ``results.json``, ``results.csv``, ``accuracy.png`` and ``dynamics.png``.

    And ``results.md`` where ``markdown`` is given (the eval's:
    :func:`~debategraph.eval.advice.results_markdown`, the plain answer then the tables).
    :func:`render_results` renders them, :func:`write_files` writes them.

    ``results.json`` holds ``meta`` as given, then ``modes`` (one entry per label: the
    summary's fields, rates to 4 decimals, tokens to 1, calls to 2, wall time to 3, plus
    ``ci95: [low, high]`` and ``pareto``), ``comparisons`` (with ``significant``),
    ``matched`` and ``dynamics`` (shares to 4 decimals, p-values to 6 significant
    digits). ``results.csv`` has one row per outcome under the ``Outcome`` field names.
    Each figure is rendered once. All the files are complete before any is moved into
    place, and none is left half-written when something fails.

    Args:
        out_dir: The folder to write into; created when missing.
        outcomes: Every outcome of the eval, one CSV row each.
        report: Their report (see :func:`~debategraph.eval.stats.build_report`).
        meta: Anything to record with the results (dataset, model, settings, skips);
            values JSON cannot hold are written as their ``str``.
        markdown: ``results.md``'s text (``None``: no ``results.md``).

    Returns:
        The paths written, by key: ``"json"``, ``"csv"``, ``"png"`` (accuracy.png),
        ``"dynamics"`` (dynamics.png), and with ``markdown`` ``"md"`` (results.md).

    Raises:
        UsageError: When a file cannot be written (a one-line message naming it).
    """
    try:
        files = render_results(outcomes, report, meta, markdown)
    except OSError as exc:
        raise cannot_write(out_dir, exc.filename, exc) from exc
    paths = write_files(out_dir, files)
    return {key: paths[name] for key, name in result_keys(markdown is not None).items()}
