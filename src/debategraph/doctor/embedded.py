"""The embedded model's checks: its file, its runtime, a timed call, parallel slots.

``model file`` reports the GGUF file and its size; ``runtime`` checks ``xllamacpp`` and,
on x86-64 Linux, the AVX2 instructions its wheel is built for; ``structured call`` is one
timed call on a server with :data:`SLOTS` slots, in tokens per second; ``parallel
slots`` compares the tokens per second of :data:`SLOTS` calls at once against one call
alone (parallel slots must not be slower).
"""

from __future__ import annotations

import importlib.metadata
import platform
import sys
import time
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path

from langchain_core.messages import BaseMessage, HumanMessage

from debategraph.doctor.common import (
    _CALL_ERRORS,
    _PROBE_MESSAGES,
    RUNTIME_PACKAGE,
    Check,
    _size,
    _Sum,
)
from debategraph.errors import DebategraphError, UsageError
from debategraph.local import (
    DEFAULT_SLOTS,
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
    ModelBinding,
    ModelSpec,
    get_chat_model,
    structured_call,
    text_call,
)
from debategraph.words import one_line, plural

#: Parallel slots of the embedded server the checks start (a round of four agents).
SLOTS = 4
#: Completion tokens each call of the throughput comparison generates at most.
THROUGHPUT_MAX_TOKENS = 64
#: Measurements of the throughput comparison at most: a second one only if the first
#: found parallel slots slower, or faster than possible (one sample can be skewed by other
#: work on the machine).
THROUGHPUT_TRIALS = 2

_THROUGHPUT_MESSAGES: Sequence[BaseMessage] = (
    HumanMessage("Count from 1 to 200, separated by commas."),
)


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
        f"{info.path} ({_size(info.size)}, {info.architecture}, {plural(info.n_layer, 'layer')})",
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
    slots = plural(spec.slots or DEFAULT_SLOTS, "slot")
    head = f"{info.name} on {slots} (up in {up_s:.1f}s): {binding.method}"
    timing = f"{usage.completion_tokens} tokens in {usage.latency_s:.2f}s, {rate:.0f} tok/s"
    if result.value is None:
        return Check(
            "structured call", False, f"{head}: no valid output, {timing} ({result.reason})"
        )
    return Check("structured call", True, f"{head} reply, {timing}")


def _parallel_slots(spec: ModelSpec, server: LocalModelServer) -> Check:
    """Tokens per second of ``spec.slots`` calls at once against one call alone.

    ``n`` calls at once can make at most ``n`` times the tokens per second of one call
    alone: a measured ratio above that is no result but a skewed measurement (the call
    alone slowed by a cold start or other work, or stopped after a few tokens). Such a
    trial is measured again; if every trial is skewed, the check fails and says why,
    never showing the ratio as the machine's.
    """
    n = spec.slots or SLOTS
    if n < 2:
        return Check(
            "parallel slots", False, "only 1 slot fits in this machine's memory: no parallel calls"
        )
    trials: list[_Trial] = []
    try:
        binding = get_chat_model(replace(spec, max_tokens=THROUGHPUT_MAX_TOKENS, temperature=0.0))
        while len(trials) < THROUGHPUT_TRIALS:
            trials.append(_compare(binding, n))
            sound = [t for t in trials if t.ratio <= n]
            if sound and max(t.ratio for t in sound) >= 1.0:
                break
    except _CALL_ERRORS as exc:
        failure = server.failure(1.0)
        return Check("parallel slots", False, failure or one_line(str(exc)))
    sound = [t for t in trials if t.ratio <= n]
    if not sound:
        return Check("parallel slots", False, _unreliable(trials[-1], n, len(trials)))
    best = max(sound, key=lambda t: t.ratio)
    detail = (
        f"{n} concurrent: {best.ratio:.2f}x the tokens/s of 1 call alone "
        f"({best.alone.rate:.0f} -> {best.together.rate:.0f} tok/s)"
    )
    if len(trials) > 1:
        detail += f", best of {plural(len(trials), 'trial')}"
    if best.ratio < 1.0:
        return Check("parallel slots", False, f"{detail}: parallel slots are slower here")
    return Check("parallel slots", True, detail)


def _unreliable(trial: _Trial, n: int, count: int) -> str:
    """Why a throughput comparison whose ratio exceeds ``n`` is no measurement."""
    alone, together = trial.alone, trial.together
    return (
        f"measurement unreliable ({plural(count, 'trial')}): {n} concurrent calls came out "
        f"at {trial.ratio:.2f}x the tokens/s of 1 call alone, and {n} calls at once can make "
        f"at most {n}x; the call alone made {plural(alone.tokens, 'token')} in "
        f"{alone.wall_s:.2f} s ({alone.rate:.0f} tok/s), the {n} at once "
        f"{plural(together.tokens, 'token')} in {together.wall_s:.2f} s "
        f"({together.rate:.0f} tok/s): the call alone was slowed (a cold start, other work "
        "on the machine) or stopped early; run doctor again on a quiet machine"
    )


@dataclass(frozen=True)
class _Timed:
    """Completion tokens of calls made at once, and the wall time they took."""

    tokens: int
    wall_s: float

    @property
    def rate(self) -> float:
        """Tokens per second of wall time."""
        return self.tokens / self.wall_s if self.wall_s > 0 else 0.0


@dataclass(frozen=True)
class _Trial:
    """One call alone, then several at once."""

    alone: _Timed
    together: _Timed

    @property
    def ratio(self) -> float:
        """The throughput at once over the throughput alone."""
        return self.together.rate / self.alone.rate if self.alone.rate > 0 else 0.0


def _compare(binding: ModelBinding, calls: int) -> _Trial:
    """One call alone, then ``calls`` at once."""
    return _Trial(_throughput(binding, 1), _throughput(binding, calls))


def _throughput(binding: ModelBinding, calls: int) -> _Timed:
    """Completion tokens and wall time of ``calls`` identical calls at once."""
    started = time.perf_counter()
    with ThreadPoolExecutor(max_workers=calls) as pool:
        results = list(pool.map(lambda _: text_call(binding, _THROUGHPUT_MESSAGES), range(calls)))
    wall = time.perf_counter() - started
    return _Timed(sum(result.usage.completion_tokens for result in results), wall)
