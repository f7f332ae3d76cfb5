"""``debategraph doctor``: check the environment, the model and the checkpoint database.

Each check is a :class:`Check`: a name, whether it passed, and one line saying what was
found or why it failed. :func:`run_checks` yields them one at a time, so the CLI prints
each as it finishes. No check raises: a failure is a ``Check(ok=False)`` whose detail
is the reason, on one line.

The checks, one module per group:

* :mod:`~debategraph.doctor.environment`: ``python`` and ``packages``, the interpreter
  (3.11 or newer) and the versions of the packages debategraph runs on.
* :mod:`~debategraph.doctor.database`: ``checkpoint db``, the ``--db`` value can hold
  checkpoints. An existing SQLite file is opened as the commands open it; for a file
  that does not exist yet, a checkpoint file is written and removed in a temporary
  folder beside it (the user's file is never created). A Postgres URL is connected to.
* :mod:`~debategraph.doctor.embedded`: the embedded model's ``model file`` (the GGUF
  file and its size), ``runtime`` (``xllamacpp`` and, on x86-64 Linux, the AVX2
  instructions its wheel is built for), ``structured call`` (one timed call on a server
  with :data:`SLOTS` slots, in tokens per second) and ``parallel slots`` (the tokens per
  second of :data:`SLOTS` calls at once against one call alone: parallel slots must not
  be slower).
* :mod:`~debategraph.doctor.remote`: a remote endpoint's ``endpoint`` (``GET
  {base_url}/models`` answers), ``model`` (the model is in that list, when the endpoint
  lists models) and ``structured output`` (which of ``json_schema`` and
  ``function_calling`` return valid output, and how fast).
"""

from __future__ import annotations

from collections.abc import Iterator

from debategraph.doctor.common import RUNTIME_PACKAGE, Check
from debategraph.doctor.database import check_database
from debategraph.doctor.embedded import (
    SLOTS,
    THROUGHPUT_MAX_TOKENS,
    THROUGHPUT_TRIALS,
    check_runtime,
    cpu_flags,
    embedded_checks,
)
from debategraph.doctor.environment import MIN_PYTHON, PACKAGES, check_packages, check_python
from debategraph.doctor.remote import (
    PROBE_TIMEOUT_S,
    REACH_TIMEOUT_S,
    check_endpoint,
    check_model_listed,
    check_structured_output,
    remote_checks,
)
from debategraph.errors import UsageError
from debategraph.local import resolve_gguf
from debategraph.models import LOCAL, ModelSpec
from debategraph.models.probe import LISTED_MAX

__all__ = [
    "LISTED_MAX",
    "MIN_PYTHON",
    "PACKAGES",
    "PROBE_TIMEOUT_S",
    "REACH_TIMEOUT_S",
    "RUNTIME_PACKAGE",
    "SLOTS",
    "THROUGHPUT_MAX_TOKENS",
    "THROUGHPUT_TRIALS",
    "Check",
    "check_database",
    "check_endpoint",
    "check_input",
    "check_model_listed",
    "check_packages",
    "check_python",
    "check_runtime",
    "check_structured_output",
    "cpu_flags",
    "embedded_checks",
    "remote_checks",
    "run_checks",
]


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
