"""``debategraph doctor``: check the environment, the model and the checkpoint database.

Each check is a :class:`Check`: a name, whether it passed, and one line saying what was
found or why it failed. :func:`run_checks` yields them one at a time, so the CLI prints
each as it finishes. No check raises: a failure is a ``Check(ok=False)`` whose detail
is the reason, on one line.

The checks:

* ``python`` and ``packages``: the interpreter (3.11 or newer) and the versions of the
  packages debategraph runs on.
* ``checkpoint db``: the ``--db`` value can hold checkpoints. An existing SQLite file is
  opened as the commands open it; for a file that does not exist yet, a checkpoint file
  is written and removed in a temporary folder beside it (the user's file is never
  created). A Postgres URL is connected to.
* Embedded model: ``model file`` (the GGUF file and its size), ``runtime`` (``xllamacpp``
  and, on x86-64 Linux, the AVX2 instructions its wheel is built for), ``structured
  call`` (one timed call on a server with :data:`SLOTS` slots, in tokens per second) and
  ``parallel slots`` (the tokens per second of :data:`SLOTS` calls at once against one
  call alone: parallel slots must not be slower).
* Remote endpoint: ``endpoint`` (``GET {base_url}/models`` answers), ``model`` (the
  model is in that list, when the endpoint lists models) and ``structured output``
  (which of ``json_schema`` and ``function_calling`` return valid output, and how fast).
"""

from __future__ import annotations

import http.client
import importlib.metadata
import json
import os
import platform
import sqlite3
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import openai
from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage
from pydantic import BaseModel, Field

from debategraph.checkpoints import (
    check_sqlite_file,
    is_postgres_url,
    open_checkpointer,
    sqlite_path,
)
from debategraph.errors import DebategraphError, UsageError
from debategraph.local import (
    RUNTIME_INSTALL_HINT,
    GGUFInfo,
    LocalModelServer,
    check_gguf,
    resolve_gguf,
    runtime_available,
    shared_server,
    slot_limit,
)
from debategraph.models import (
    LOCAL,
    ModelBinding,
    ModelSpec,
    get_chat_model,
    json_schema_rejected,
    one_line,
    structured_call,
    text_call,
)

MIN_PYTHON = (3, 11)
#: Distributions whose versions are reported (``xllamacpp`` for the embedded model only).
PACKAGES = ("debategraph", "langgraph", "langchain-openai")
RUNTIME_PACKAGE = "xllamacpp"
#: Parallel slots of the embedded server the checks start (a round of four agents).
SLOTS = 4
#: Completion tokens each call of the throughput comparison generates at most.
THROUGHPUT_MAX_TOKENS = 64
#: Measurements of the throughput comparison at most: a second one only if the first
#: found parallel slots slower (one sample can be skewed by other work on the machine).
THROUGHPUT_TRIALS = 2
#: Seconds ``GET {base_url}/models`` may take (``--timeout`` when given).
REACH_TIMEOUT_S = 5.0
#: Seconds a structured-output probe of a remote endpoint may take (``--timeout`` when given).
PROBE_TIMEOUT_S = 30.0
#: Model names listed in a failure line at most.
LISTED_MAX = 5

_PROBE_MESSAGES: Sequence[BaseMessage] = (
    SystemMessage("You add numbers. Reply with the sum only."),
    HumanMessage("What is 2 + 3?"),
)
_THROUGHPUT_MESSAGES: Sequence[BaseMessage] = (
    HumanMessage("Count from 1 to 200, separated by commas."),
)
#: Errors a model call is expected to fail with (the rest are bugs).
_CALL_ERRORS = (DebategraphError, openai.OpenAIError, OSError)


class _Sum(BaseModel):
    """The reply of a structured-output probe."""

    answer: int = Field(description="The sum, as a number.")


@dataclass(frozen=True)
class Check:
    """The outcome of one check.

    Attributes:
        name: What was checked (``python``, ``checkpoint db``, ``endpoint``, ...).
        ok: Whether it passed.
        detail: What was found, or why it failed (one line).
    """

    name: str
    ok: bool
    detail: str

    def as_dict(self) -> dict[str, Any]:
        """The check as a JSON-ready dict (``name``, ``ok``, ``detail``)."""
        return {"name": self.name, "ok": self.ok, "detail": self.detail}


def check_input(spec: ModelSpec) -> ModelSpec:
    """Refuse bad input before any check runs (the CLI's exit code 2).

    A missing default model file (``--model local``) is not bad input but a failed
    ``model file`` check; a ``local:PATH`` that does not exist is.

    Args:
        spec: The model to check.

    Returns:
        The spec, with the remote endpoint's base URL resolved from the environment.

    Raises:
        UsageError: On a bad value, or a remote model without a base URL.
    """
    spec.check_values()
    if spec.is_local:
        if spec.model != LOCAL:
            resolve_gguf(spec.model)
        return spec
    checked = spec.validated()
    if checked.base_url is None:
        raise UsageError(
            f"doctor --model {spec.model} needs --base-url URL or OPENAI_BASE_URL "
            "(for OpenAI itself: --base-url https://api.openai.com/v1)"
        )
    return checked


def run_checks(spec: ModelSpec, db: str) -> Iterator[Check]:
    """Run every check for a model and a checkpoint database, yielding each as it ends.

    Args:
        spec: The model (``local``, ``local:PATH.gguf`` or an endpoint's model name);
            its ``timeout_s`` bounds each request.
        db: The ``--db`` value: a SQLite file path or a Postgres URL.

    Yields:
        The checks, in order; later model checks are left out when one they need failed.

    Raises:
        UsageError: From :func:`check_input`, before the first check.
    """
    spec = check_input(spec)
    yield check_python()
    yield check_packages(embedded=spec.is_local)
    yield check_database(db)
    if spec.is_local:
        yield from embedded_checks(spec)
    else:
        yield from remote_checks(spec)


# -- environment -------------------------------------------------------------------------


def check_python() -> Check:
    """The interpreter: 3.11 or newer.

    Returns:
        The check.
    """
    version = ".".join(str(part) for part in sys.version_info[:3])
    ok = sys.version_info[:2] >= MIN_PYTHON
    need = "" if ok else f"; debategraph needs Python {'.'.join(map(str, MIN_PYTHON))} or newer"
    return Check("python", ok, f"{version} ({sys.executable}){need}")


def check_packages(*, embedded: bool) -> Check:
    """The installed versions of the packages debategraph runs on.

    Args:
        embedded: Also report ``xllamacpp`` (the embedded model's runtime).

    Returns:
        The check; it fails if any of them is missing.
    """
    names = [*PACKAGES, RUNTIME_PACKAGE] if embedded else list(PACKAGES)
    found: list[str] = []
    missing: list[str] = []
    for name in names:
        try:
            found.append(f"{name} {importlib.metadata.version(name)}")
        except importlib.metadata.PackageNotFoundError:
            missing.append(name)
    if missing:
        return Check("packages", False, f"not installed: {', '.join(missing)}")
    return Check("packages", True, ", ".join(found))


# -- checkpoint database ----------------------------------------------------------------


def check_database(db: str) -> Check:
    """Whether ``db`` can hold checkpoints, leaving nothing behind.

    Args:
        db: A SQLite file path (``sqlite:///`` prefix allowed) or a Postgres URL.

    Returns:
        The check.
    """
    if is_postgres_url(db):
        return _check_postgres(db)
    path = sqlite_path(db)
    try:
        check_sqlite_file(path)  # refuses a folder, a read-only or non-SQLite file untouched
        if path.exists():
            return _check_sqlite_file(db, path)
        return _check_sqlite_folder(path)
    except (DebategraphError, OSError, sqlite3.Error) as exc:
        return Check("checkpoint db", False, one_line(str(exc)))


def _check_sqlite_file(db: str, path: Path) -> Check:
    """Open an existing SQLite file as the commands do, and take (then drop) a write lock."""
    with open_checkpointer(db) as saver:
        conn = getattr(saver, "conn", None)
        if isinstance(conn, sqlite3.Connection):
            try:
                conn.execute("BEGIN IMMEDIATE")
            except sqlite3.OperationalError as exc:
                raise UsageError(f"--db {path} cannot be written: {exc}") from exc
            conn.rollback()
    return Check("checkpoint db", True, f"{path}: SQLite, writable ({_size(path.stat().st_size)})")


def _check_sqlite_folder(path: Path) -> Check:
    """Write and remove a checkpoint file in a temporary folder beside ``path``."""
    folder = path.parent if str(path.parent) else Path(".")
    try:
        with tempfile.TemporaryDirectory(prefix=".debategraph-doctor-", dir=folder) as tmp:
            try:
                with open_checkpointer(Path(tmp) / "probe.sqlite"):
                    pass
            except UsageError as exc:
                why = exc.__cause__ or exc
                raise UsageError(
                    f"--db {path}: SQLite cannot write in folder {folder}: {why}"
                ) from exc
    except OSError as exc:
        raise UsageError(
            f"--db {path}: folder {folder} is not writable ({exc.strerror or exc})"
        ) from exc
    return Check(
        "checkpoint db",
        True,
        f"{path} does not exist yet; folder {folder.resolve()} is writable "
        "(the file is created by the first run)",
    )


def _check_postgres(db: str) -> Check:
    """Connect to a Postgres URL (and set up the checkpoint tables, as a run would)."""
    where = urlsplit(db)
    label = f"Postgres {where.hostname or 'localhost'}{where.path}"
    errors: tuple[type[Exception], ...] = (DebategraphError, OSError, *_postgres_errors())
    try:
        with open_checkpointer(db):
            pass
    except errors as exc:
        return Check("checkpoint db", False, one_line(str(exc)))
    return Check("checkpoint db", True, f"{label}: connected, checkpoint tables ready")


def _postgres_errors() -> tuple[type[Exception], ...]:
    try:
        import psycopg
    except ImportError:
        return ()
    return (psycopg.Error,)


# -- embedded model ----------------------------------------------------------------------


def embedded_checks(spec: ModelSpec) -> Iterator[Check]:
    """The embedded model: its file, its runtime, a timed call, parallel slots.

    The server the checks start is stopped at the end.

    Args:
        spec: A ``local`` or ``local:PATH`` spec.

    Yields:
        ``model file``, ``runtime``, ``structured call``, ``parallel slots`` (the later
        ones only if those they need passed).
    """
    try:
        info = check_gguf(resolve_gguf(spec.model))
    except UsageError as exc:
        yield Check("model file", False, one_line(str(exc)))
        return
    yield Check(
        "model file",
        True,
        f"{info.path} ({_size(info.size)}, {info.architecture}, {info.n_layer} layers)",
    )
    runtime = check_runtime()
    yield runtime
    if not runtime.ok:
        return
    slots = min(SLOTS, slot_limit(info))
    started = time.perf_counter()
    try:
        server = shared_server(info.path, slots)
    except (DebategraphError, OSError) as exc:
        yield Check("structured call", False, one_line(str(exc)))
        return
    try:
        up_s = time.perf_counter() - started
        yield _timed_structured_call(replace(spec, slots=slots), info, up_s)
        yield _parallel_slots(replace(spec, slots=slots), server)
    finally:
        server.stop()


def check_runtime() -> Check:
    """``xllamacpp`` installed, and on x86-64 Linux a CPU with AVX2 (its wheel's baseline).

    Returns:
        The check.
    """
    if not runtime_available():
        return Check(
            "runtime", False, f"{RUNTIME_PACKAGE} is not installed; {RUNTIME_INSTALL_HINT}"
        )
    try:
        version = importlib.metadata.version(RUNTIME_PACKAGE)
    except importlib.metadata.PackageNotFoundError:
        version = "(version unknown)"
    label = f"{RUNTIME_PACKAGE} {version}"
    machine = platform.machine().lower()
    if not sys.platform.startswith("linux") or machine not in ("x86_64", "amd64"):
        return Check("runtime", True, f"{label} (CPU features not checked on {machine})")
    flags = cpu_flags()
    if flags is None:
        return Check("runtime", True, f"{label} (/proc/cpuinfo unreadable: AVX2 not checked)")
    if "avx2" not in flags:
        return Check(
            "runtime",
            False,
            f"{label}, but this CPU lacks AVX2, which the {RUNTIME_PACKAGE} wheel is built for",
        )
    return Check("runtime", True, f"{label}, CPU has AVX2")


def cpu_flags(cpuinfo: Path = Path("/proc/cpuinfo")) -> frozenset[str] | None:
    """The CPU's feature flags from ``/proc/cpuinfo`` (Linux).

    Args:
        cpuinfo: The file to read.

    Returns:
        The flags of the first CPU, or ``None`` if the file cannot be read or has none.
    """
    try:
        with cpuinfo.open(encoding="utf-8", errors="replace") as fh:
            for line in fh:
                key, _, value = line.partition(":")
                if key.strip() == "flags":
                    return frozenset(value.split())
    except OSError:
        return None
    return None


def _timed_structured_call(spec: ModelSpec, info: GGUFInfo, up_s: float) -> Check:
    """One structured call on the embedded model, in completion tokens per second."""
    try:
        binding = get_chat_model(spec)
        result = structured_call(binding, _Sum, _PROBE_MESSAGES, max_attempts=2)
    except _CALL_ERRORS as exc:
        return Check("structured call", False, one_line(str(exc)))
    usage = result.usage
    rate = usage.completion_tokens / usage.latency_s if usage.latency_s > 0 else 0.0
    head = f"{info.name} on {spec.slots} slots (up in {up_s:.1f}s): {binding.method}"
    timing = f"{usage.completion_tokens} tokens in {usage.latency_s:.2f}s, {rate:.0f} tok/s"
    if result.value is None:
        return Check(
            "structured call", False, f"{head}: no valid output, {timing} ({result.reason})"
        )
    return Check("structured call", True, f"{head} reply, {timing}")


def _parallel_slots(spec: ModelSpec, server: LocalModelServer) -> Check:
    """Tokens per second of ``spec.slots`` calls at once against one call alone."""
    n = spec.slots or SLOTS
    if n < 2:
        return Check(
            "parallel slots", False, "only 1 slot fits in this machine's memory: no parallel calls"
        )
    try:
        binding = get_chat_model(replace(spec, max_tokens=THROUGHPUT_MAX_TOKENS, temperature=0.0))
        trials = 1
        best = _compare(binding, n)
        while best[0] < 1.0 and trials < THROUGHPUT_TRIALS:
            trials += 1
            best = max(best, _compare(binding, n))
    except _CALL_ERRORS as exc:
        failure = server.failure(1.0)
        return Check("parallel slots", False, failure or one_line(str(exc)))
    ratio, alone, together = best
    detail = (
        f"{n} concurrent: {ratio:.2f}x the tokens/s of 1 call alone "
        f"({alone:.0f} -> {together:.0f} tok/s)"
    )
    if trials > 1:
        detail += f", best of {trials} trials"
    if ratio < 1.0:
        return Check("parallel slots", False, f"{detail}: parallel slots are slower here")
    return Check("parallel slots", True, detail)


def _compare(binding: ModelBinding, calls: int) -> tuple[float, float, float]:
    """One call alone, then ``calls`` at once: (throughput ratio, tok/s alone, tok/s at once)."""
    alone = _throughput(binding, 1)
    together = _throughput(binding, calls)
    return (together / alone if alone > 0 else 0.0), alone, together


def _throughput(binding: ModelBinding, calls: int) -> float:
    """Completion tokens per second of wall time of ``calls`` identical calls at once."""
    started = time.perf_counter()
    with ThreadPoolExecutor(max_workers=calls) as pool:
        results = list(pool.map(lambda _: text_call(binding, _THROUGHPUT_MESSAGES), range(calls)))
    wall = time.perf_counter() - started
    tokens = sum(result.usage.completion_tokens for result in results)
    return tokens / wall if wall > 0 else 0.0


# -- remote endpoint ---------------------------------------------------------------------


def remote_checks(spec: ModelSpec) -> Iterator[Check]:
    """A remote endpoint: reachable, serving the model, and its structured-output methods.

    Args:
        spec: A remote spec with ``base_url`` set (see :func:`check_input`).

    Yields:
        ``endpoint``, then (if it answered) ``model`` when it lists models, and
        ``structured output``.
    """
    base_url = str(spec.base_url)
    reach, listed = check_endpoint(base_url, spec.api_key, spec.timeout_s or REACH_TIMEOUT_S)
    yield reach
    if not reach.ok:
        return
    if listed is not None:
        yield check_model_listed(spec.model, listed)
    yield check_structured_output(spec)


def check_endpoint(
    base_url: str, api_key: str | None, timeout_s: float
) -> tuple[Check, list[str] | None]:
    """``GET {base_url}/models``: does the endpoint answer, and which models does it list.

    Args:
        base_url: The OpenAI-compatible base URL.
        api_key: The API key (``None``: ``OPENAI_API_KEY``, if set).
        timeout_s: Seconds to wait.

    Returns:
        The check, and the model ids it lists (``None`` if it lists none).
    """
    url = f"{base_url.rstrip('/')}/models"
    request = urllib.request.Request(url, headers={"Accept": "application/json"})
    key = api_key or os.environ.get("OPENAI_API_KEY")
    if key:
        request.add_header("Authorization", f"Bearer {key}")
    started = time.perf_counter()
    try:
        with urllib.request.urlopen(request, timeout=timeout_s) as response:
            body = response.read()
    except urllib.error.HTTPError as exc:
        if exc.code in (401, 403):
            return Check(
                "endpoint", False, f"{base_url} refused the API key (HTTP {exc.code} on /models)"
            ), None
        return Check(
            "endpoint", True, f"{base_url} answered (HTTP {exc.code} on /models: no model list)"
        ), None
    except urllib.error.URLError as exc:
        reason = exc.reason
        if isinstance(reason, TimeoutError):
            return Check(
                "endpoint", False, f"{base_url} did not answer within {timeout_s:g}s"
            ), None
        text = reason.strerror if isinstance(reason, OSError) and reason.strerror else reason
        return Check("endpoint", False, f"{base_url} is unreachable: {one_line(str(text))}"), None
    except TimeoutError:
        return Check("endpoint", False, f"{base_url} did not answer within {timeout_s:g}s"), None
    except (OSError, http.client.HTTPException) as exc:
        return Check("endpoint", False, f"{base_url} is unreachable: {one_line(str(exc))}"), None
    elapsed_ms = (time.perf_counter() - started) * 1000
    listed = _model_ids(body)
    if listed is None:
        return Check(
            "endpoint", True, f"{base_url} answered in {elapsed_ms:.0f} ms (no model list)"
        ), None
    return Check(
        "endpoint",
        True,
        f"{base_url} answered in {elapsed_ms:.0f} ms, listing {len(listed)} model(s)",
    ), listed


def _model_ids(body: bytes) -> list[str] | None:
    """The ``data[].id`` of a ``/models`` reply, or ``None`` if it is not such a list."""
    try:
        payload = json.loads(body)
    except (json.JSONDecodeError, UnicodeDecodeError):
        return None
    data = payload.get("data") if isinstance(payload, dict) else None
    if not isinstance(data, list):
        return None
    return [str(item["id"]) for item in data if isinstance(item, dict) and "id" in item]


def check_model_listed(model: str, listed: Sequence[str]) -> Check:
    """Whether the endpoint's model list names ``model``.

    Args:
        model: The model name.
        listed: The ids the endpoint lists.

    Returns:
        The check.
    """
    if model in listed:
        return Check("model", True, f"{model} is listed")
    shown = ", ".join(listed[:LISTED_MAX]) + (", ..." if len(listed) > LISTED_MAX else "")
    return Check(
        "model", False, f"{model} is not among the {len(listed)} model(s) listed: {shown or '-'}"
    )


def check_structured_output(spec: ModelSpec) -> Check:
    """Which structured-output methods the endpoint supports, and how long each took.

    ``json_schema`` is tried, then ``function_calling``. The check passes when the
    method runs use on this endpoint works (``json_schema`` falls back to
    ``function_calling`` on its own when the endpoint rejects it).

    Args:
        spec: A remote spec with ``base_url`` set.

    Returns:
        The check.
    """
    spec = replace(spec, timeout_s=spec.timeout_s or PROBE_TIMEOUT_S)
    try:
        runs_use = get_chat_model(spec).method
        outcomes = {
            method: _probe(replace(spec, structured_method=method))
            for method in ("json_schema", "function_calling")
        }
    except _CALL_ERRORS as exc:
        return Check("structured output", False, one_line(str(exc)))
    working = [m for m, (ok, _) in outcomes.items() if ok]
    parts = [f"{m} {'ok' if ok else 'failed'} ({note})" for m, (ok, note) in outcomes.items()]
    detail = f"{'; '.join(parts)}; runs use {runs_use}"
    ok = bool(working) if runs_use == "json_schema" else runs_use in working
    return Check("structured output", ok, detail)


def _probe(spec: ModelSpec) -> tuple[bool, str]:
    """One structured call with the spec's method: whether it worked, and its latency or why not.

    Raises:
        ModelUnavailableError: If the endpoint fails the request outright.
    """
    binding = get_chat_model(spec)
    json_schema = binding.method == "json_schema"
    if json_schema:  # a fresh verdict: forget an earlier rejection of this endpoint
        json_schema_rejected(binding.endpoint, forget=True)
    started = time.perf_counter()
    result = structured_call(binding, _Sum, _PROBE_MESSAGES, max_attempts=2)
    elapsed = time.perf_counter() - started
    if json_schema and json_schema_rejected(binding.endpoint):
        return False, "rejected by the endpoint"
    if result.value is None:
        return False, one_line(result.reason or "no valid output")[:160]
    return True, f"{elapsed:.2f}s"


def _size(n_bytes: int) -> str:
    """``98.4 MB`` (or ``12 KB`` below a megabyte)."""
    return f"{n_bytes / 1e6:.1f} MB" if n_bytes >= 1e6 else f"{n_bytes / 1e3:.0f} KB"
