"""Options shared by the CLI's commands (one definition each)."""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from typing import Annotated, Any

import typer

from debategraph.checkpoints.savers import DEFAULT_DB
from debategraph.errors import UsageError
from debategraph.models.money import Price, parse_cost, parse_price
from debategraph.models.spec import (
    DEFAULT_TIMEOUT_S,
    LOCAL_MAX_TOKENS,
    LOCAL_TIMEOUT_S,
    ModelSpec,
)
from debategraph.runs.agents_file import OPTION as AGENTS_FILE_OPTION
from debategraph.runs.finish import POSTGRES_ARCHIVE
from debategraph.strategies.termination.factories import parse_duration

#: The run's model when no option names one (the embedded one), and the spec's defaults
#: the model options read.
LOCAL_SPEC = ModelSpec()

ModelOpt = Annotated[
    str,
    typer.Option(
        "--model", help="'local' (embedded SmolLM2) or the model name an endpoint serves."
    ),
]
BaseUrlOpt = Annotated[
    str | None,
    typer.Option(
        "--base-url",
        # Not ``envvar``: OPENAI_BASE_URL is read where a model goes to the run's
        # endpoint (ModelSpec.validated), so a shell that sets it runs the embedded
        # model, or agents with their own models, as if it were unset.
        help="OpenAI-compatible base URL (with --model NAME) \\[default: env "
        "OPENAI_BASE_URL, else OpenAI's API].",
    ),
]
ApiKeyEnvOpt = Annotated[
    str | None,
    typer.Option(
        "--api-key-env",
        help="The environment variable holding the endpoint's key (OPENAI_API_KEY goes "
        "only to OPENAI_BASE_URL, or OpenAI's API when that is unset).",
    ),
]
TimeoutOpt = Annotated[
    float | None,
    typer.Option(
        "--timeout",
        help=f"Seconds per model request (default {DEFAULT_TIMEOUT_S:g}; "
        f"{LOCAL_TIMEOUT_S:g} on the embedded model).",
    ),
]
MaxTokensOpt = Annotated[
    int | None,
    typer.Option(
        "--max-tokens",
        help="Completion tokens per model call \\[default: the endpoint's own cap; "
        f"{LOCAL_MAX_TOKENS} on the embedded model].",
    ),
]
RetriesOpt = Annotated[
    int,
    typer.Option(
        "--max-retries",
        help="Retries of a call that meets a server fault (5xx), a timeout or a dropped "
        "connection. A rate limit (429) is waited out within --patience.",
    ),
]
RpmOpt = Annotated[
    float | None,
    typer.Option(
        "--rpm",
        help="Requests a minute to send the endpoint at most (its limit, set up front: "
        "calls go evenly spaced instead of meeting 429s).",
    ),
]
TpmOpt = Annotated[
    float | None,
    typer.Option(
        "--tpm",
        help="Model tokens a minute to send the endpoint at most (prompt and completion, "
        "as providers count them).",
    ),
]
PriceOpt = Annotated[
    str | None,
    typer.Option(
        "--price",
        help="The model's price per million tokens: INPUT/OUTPUT\\[/CACHED_INPUT], e.g. "
        "2.50/10/1.25; costs are then recorded and shown.",
    ),
]
MaxCostOpt = Annotated[
    str | None,
    typer.Option(
        "--max-cost",
        help="The most this command may spend on priced calls (e.g. 5 or 0.50): it stops, "
        "resumable, before a call that could pass it.",
    ),
]
PatienceOpt = Annotated[
    str | None,
    typer.Option(
        "--patience",
        help="How long one model call may wait on rate limits and faults before the run "
        "stops, resumable (90s, 10m, 1h) \\[default: 10m].",
    ),
]
CacheOpt = Annotated[
    str | None,
    typer.Option(
        "--cache",
        help="SQLite file of the model's replies (made if missing): a request made before "
        "(same model, parameters, messages and sample) is answered from it, not paid for.",
    ),
]
DbOpt = Annotated[
    str, typer.Option("--db", help="Checkpoint database: a SQLite file path or Postgres URL.")
]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print one JSON object at the end.")]
ConcurrencyOpt = Annotated[
    int | None,
    typer.Option(
        "--max-concurrency",
        help="Agent calls in flight at once, and the embedded model's parallel slots "
        "\\[default: the agents of one round].",
    ),
]
ArchiveOpt = Annotated[
    str | None,
    typer.Option(
        "--archive",
        help="SQLite file for the plain debates/messages/usage tables written when a debate "
        "finishes \\[default: beside the --db file, debates.sqlite -> debates-archive.sqlite; "
        f"{POSTGRES_ARCHIVE} for Postgres].",
    ),
]
PauseOpt = Annotated[
    bool,
    typer.Option("--pause-after-round", help="Pause between rounds to approve or interject."),
]
NewThreadOpt = Annotated[
    str | None, typer.Option("--thread", help="Thread id (generated if absent).")
]
InterjectOpt = Annotated[
    str | None,
    typer.Option("--interject", help="A message every agent reads next round."),
]
ReportOpt = Annotated[
    str | None,
    typer.Option("--report", help="Where to write the run's report \\[default: per pattern]."),
]


def run_options(
    pause_after_round: PauseOpt = False,
    model: ModelOpt = LOCAL_SPEC.model,
    base_url: BaseUrlOpt = None,
    api_key_env: ApiKeyEnvOpt = None,
    timeout: TimeoutOpt = None,
    max_tokens: MaxTokensOpt = None,
    max_retries: RetriesOpt = LOCAL_SPEC.max_retries,
    patience: PatienceOpt = None,
    rpm: RpmOpt = None,
    tpm: TpmOpt = None,
    price: PriceOpt = None,
    max_cost: MaxCostOpt = None,
    cache: CacheOpt = None,
    max_concurrency: ConcurrencyOpt = None,
    db: DbOpt = DEFAULT_DB,
    thread: NewThreadOpt = None,
    archive: ArchiveOpt = None,
    json_output: JsonOpt = False,
) -> None:
    """The options every pattern's run command takes (its signature is what counts)."""


def model_spec(common: Mapping[str, Any]) -> ModelSpec:
    """The run's model from the shared model options (:func:`run_options`' values).

    Args:
        common: The options' values by parameter name (``model``, ``base_url``,
            ``api_key_env``, ``timeout``, ``max_tokens``, ``max_retries``, ``patience``,
            ``rpm``, ``tpm``, ``price``).

    Returns:
        The model, checked.

    Raises:
        UsageError: One line naming the option and the bad value.
    """
    return ModelSpec(
        model=common["model"],
        base_url=common["base_url"],
        api_key_env=common["api_key_env"],
        timeout_s=common["timeout"],
        max_tokens=common["max_tokens"],
        max_retries=common["max_retries"],
        patience_s=seconds_of("--patience", common["patience"]),
        rpm=common["rpm"],
        tpm=common["tpm"],
        price=price_of(common["price"]),
    ).validated()


def seconds_of(option: str, value: str | None) -> float | None:
    """A duration option's value in seconds: ``30m`` / ``90s`` / ``1h`` / ``120``, or ``None``.

    Args:
        option: The option's name, for the error (``--patience``).
        value: What it was given (``None``: not given).

    Returns:
        Seconds (> 0), or ``None``.

    Raises:
        UsageError: One line naming the option, the value and the allowed form.
    """
    if value is None:
        return None
    try:
        return parse_duration(value)
    except ValueError as exc:
        raise UsageError(f"{option} {exc}") from None


def price_of(value: str | None) -> Price | None:
    """``--price``, read (``None``: not given).

    Raises:
        UsageError: One line naming the value and the form allowed.
    """
    return None if value is None else parse_price(value, "--price")


def max_cost_of(value: str | None) -> float | None:
    """``--max-cost``, read (``None``: not given).

    Raises:
        UsageError: One line naming the value and what is allowed.
    """
    return None if value is None else parse_cost(value, "--max-cost")


def cache_opened(path: str | None) -> contextlib.AbstractContextManager[object]:
    """``--cache`` opened around a command (:func:`~debategraph.models.cache.cached_run`).

    Without one, nothing of the cache is imported: a run's path crosses no cache code.

    Raises:
        UsageError: If ``path`` is not a cache, before anything inside runs.
    """
    if path is None:
        return contextlib.nullcontext()
    from debategraph.models.cache import cached_run

    return cached_run(path)


def report_option(report: ReportOpt = None) -> None:
    """The option of a pattern that writes a report (its signature is what counts)."""


def flags_without_type(params: list[Any]) -> list[Any]:
    """``params`` with nothing shown after a flag's name in ``--help``.

    Typer's Rich help prints a type beside every option, flags too (``--json <bool>``,
    ``--help <bool>``), but a flag takes no value: an empty metavar shows none.

    Args:
        params: A command's parameters (``get_params(ctx)``: its ``--help`` included).

    Returns:
        The same list, each flag's metavar set to ``""`` unless one was given.
    """
    for param in params:
        if getattr(param, "is_flag", False) and param.metavar is None:
            param.metavar = ""
    return params


def defaults_whole(params: list[Any]) -> list[Any]:
    """``params`` with each comma-separated default shown so that it wraps, never cut.

    Rich cuts a word wider than the help column with an ellipsis (``[default:
    single,vote,debate-ring,debate…``): a default that lists values is shown with a space
    after each comma, so it wraps between them and reads whole at any width.

    Args:
        params: A command's parameters.

    Returns:
        The same list, such defaults shown spaced (the values themselves unchanged).
    """
    for param in params:
        default = getattr(param, "default", None)
        shown = getattr(param, "show_default", None)
        if isinstance(default, str) and "," in default and shown is not False:
            spaced = ", ".join(part.strip() for part in default.split(","))
            param.show_default = False  # written in the help instead, spaced
            param.help = f"{param.help or ''} \\[default: {spaced}]".strip()
    return params


def command_without_flag_types(command: Any, ctx: Any) -> Any:
    """A command, and each command of a group, with its help made plain.

    :func:`flags_without_type` and :func:`defaults_whole` applied.

    Args:
        command: A (typer-vendored) click command or group, or ``None``.
        ctx: The context it is resolved in.

    Returns:
        ``command``.
    """
    if command is not None:
        defaults_whole(flags_without_type(command.get_params(ctx)))
        for sub in (getattr(command, "commands", None) or {}).values():
            command_without_flag_types(sub, ctx)
    return command


#: ``--agents-file``, as every pattern declares it.
AgentsFile = Annotated[
    str | None,
    typer.Option(
        AGENTS_FILE_OPTION,
        help="YAML or JSON list of agents: each the pattern's fields plus model (e.g. "
        "NAME@BASE_URL), tools (e.g. \\[calculator], or an MCP server {command, args} or "
        "{url}) and agent (module:attribute); an entry "
        "named after an official (judge, moderator, summarizer, selector, controller, chair, "
        "consensus) sets that official.",
    ),
]
