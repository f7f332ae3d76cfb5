"""Which chat model to call and how: :class:`ModelSpec`, and checking its values.

Kept free of the OpenAI client and LangChain's chat models, so that a command line can
check its options without the slow imports that calling a model needs. It imports
:mod:`debategraph.local` (the embedded model's file and slots) only when a spec of the
embedded model is validated.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any, Literal
from urllib.parse import urlparse

from debategraph.errors import UsageError
from debategraph.models.money import Price, parse_price

StructuredMethod = Literal["function_calling", "json_schema", "json_mode", "json_text"]
MethodChoice = Literal["auto", "function_calling", "json_schema", "json_mode", "json_text"]
LOCAL = "local"
#: Completion tokens per call on the embedded model unless a spec sets ``max_tokens``.
LOCAL_MAX_TOKENS = 320
#: Seconds per model request unless a spec sets ``timeout_s``; the embedded model's.
DEFAULT_TIMEOUT_S = 60.0
LOCAL_TIMEOUT_S = 300.0
#: Seconds one call may spend waiting on rate limits and faults before it gives up,
#: unless a spec sets ``patience_s`` (:mod:`debategraph.models.pacing`).
DEFAULT_PATIENCE_S = 600.0


@dataclass(frozen=True)
class ModelSpec:
    """Which chat model to call and how.

    Attributes:
        model: ``local`` for the embedded model (SmolLM2, or the GGUF file named by
            ``DEBATEGRAPH_GGUF``), ``local:PATH.gguf`` for another GGUF file served the
            same way, else the endpoint's model name.
        base_url: OpenAI-compatible base URL; ``None`` uses ``OPENAI_BASE_URL`` or OpenAI.
        api_key: API key; ``None`` uses ``api_key_env``, else ``OPENAI_API_KEY`` where
            the endpoint is the one that variable is for (:meth:`key`), else none. Not
            written by the CLI with a thread (its record keeps ``api_key_env``) and refused
            from a served run's context.
        api_key_env: The name of the environment variable that holds the API key (what
            an agent's model names instead of a key; stored, the key never is).
        temperature: Sampling temperature.
        max_tokens: Completion token cap (``None``: endpoint default; local: 320).
        timeout_s: Per-request timeout in seconds (``None``: 60, local: 300).
        max_retries: Retries of a call that meets a server fault (5xx, 408, 409), a
            timeout or a dropped connection, with backoff. A rate limit (429) is waited
            out and tried again as often as the patience allows.
        patience_s: The most seconds one call waits on rate limits and faults in all
            (``None``: 600); every call to an endpoint waits out what it told one.
        rpm: Requests a minute to allow the endpoint, set up front by the operator
            (every call of the process to it shares them, evenly spaced); ``None``: as
            many as it takes (its 429s still pace them).
        tpm: Tokens a minute to allow the endpoint (prompt and completion; every call of
            the process to it shares them); ``None``: no limit set up front.
        price: What the model costs per million tokens
            (:class:`~debategraph.models.money.Price`; text or a mapping is read as
            one); ``None``: no cost is recorded.
        structured_method: ``auto`` picks ``json_schema`` for api.openai.com and the
            embedded model (grammar-constrained), ``function_calling`` (the most widely
            supported) elsewhere; ``json_text`` asks for the JSON in the reply's text (the
            schema in the prompt; read leniently and repaired), for a model with neither.
        slots: Embedded model only: requests its server answers at once (``None``: 4).
            The CLI sets it to the run's maximum concurrency.
    """

    model: str = LOCAL
    base_url: str | None = None
    api_key: str | None = None
    api_key_env: str | None = None
    temperature: float = 0.7
    max_tokens: int | None = None
    timeout_s: float | None = None
    max_retries: int = 2
    patience_s: float | None = None
    rpm: float | None = None
    tpm: float | None = None
    price: Price | None = None
    structured_method: MethodChoice = "auto"
    slots: int | None = None

    def __post_init__(self) -> None:
        """Read a price given as text or a mapping (an agents file, a stored record)."""
        if self.price is not None and not isinstance(self.price, Price):
            object.__setattr__(self, "price", parse_price(self.price))

    @property
    def label(self) -> str:
        """The spec as one string, without a key: ``local``, ``NAME`` or ``NAME@BASE_URL``."""
        if self.is_local or not self.base_url:
            return self.model
        return f"{self.model}@{self.base_url}"

    @property
    def is_local(self) -> bool:
        """Whether this is the embedded model (``local`` or ``local:PATH``)."""
        return is_local(self.model)

    def check_values(self) -> None:
        """Check the values themselves, reading no file and no environment.

        Raises:
            UsageError: On a bad value, naming it and what is allowed.
        """
        if not self.model.strip():
            raise UsageError("model name is empty: use 'local' or the endpoint's model name")
        if self.timeout_s is not None and self.timeout_s <= 0:
            raise UsageError(f"timeout {self.timeout_s} must be > 0 seconds")
        if self.max_retries < 0:
            raise UsageError(f"max retries {self.max_retries} must be >= 0")
        patience = self.patience_s
        if patience is not None and (
            isinstance(patience, bool) or not isinstance(patience, int | float) or patience < 0
        ):
            raise UsageError(f"patience {patience!r} must be a number of seconds >= 0")
        rpm = self.rpm
        if rpm is not None and (
            isinstance(rpm, bool) or not isinstance(rpm, int | float) or not 0 < rpm < math.inf
        ):
            raise UsageError(f"rpm {rpm!r} must be a number of requests a minute > 0")
        tpm = self.tpm
        if tpm is not None and (
            isinstance(tpm, bool) or not isinstance(tpm, int | float) or not 0 < tpm < math.inf
        ):
            raise UsageError(f"tpm {tpm!r} must be a number of tokens a minute > 0")
        if self.is_local and self.base_url:
            raise UsageError(f"--base-url {self.base_url} needs --model NAME (the model it serves)")
        if isinstance(self.temperature, bool) or not 0 <= self.temperature <= 2:
            raise UsageError(f"temperature {self.temperature!r} must be a number from 0 to 2")
        tokens = self.max_tokens
        if tokens is not None and (
            not isinstance(tokens, int) or isinstance(tokens, bool) or tokens < 1
        ):
            raise UsageError(f"max_tokens {tokens!r} must be a whole number of at least 1")
        if self.structured_method not in METHODS:
            raise UsageError(
                f"structured_method {self.structured_method!r} must be one of {', '.join(METHODS)}"
            )
        if self.base_url:
            check_url_secrets(self.base_url)
        if self.api_key_env is not None and not ENV_NAME.fullmatch(self.api_key_env):
            raise UsageError(
                f"api_key_env {self.api_key_env!r} is not an environment variable's name "
                "(letters, digits and _; give the variable's name, never the key)"
            )

    def key(self) -> str | None:
        """The API key, sent only to the endpoint it was given for.

        ``api_key``, else the variable ``api_key_env`` names, else ``OPENAI_API_KEY``
        where the spec's endpoint is the one that variable is for (``OPENAI_BASE_URL``,
        else OpenAI's API: :func:`openai_home`). A model at any other endpoint that
        names no key gets none: a key never follows a model to an endpoint that was
        not named with it.

        Raises:
            UsageError: If ``api_key_env`` names a variable that is not set.
        """
        if self.api_key is not None:
            return self.api_key
        if self.api_key_env is None:
            home = openai_home()
            at_home = self.base_url is None or same_endpoint(self.base_url, home)
            return os.environ.get("OPENAI_API_KEY") if at_home else None
        value = os.environ.get(self.api_key_env)
        if not value:
            raise UsageError(
                f"model {self.label}: its API key variable {self.api_key_env} is not set"
            )
        return value

    def withheld(self) -> str | None:
        """Which key the rule of :meth:`key` withholds from this endpoint, why, and the fix.

        ``OPENAI_API_KEY`` goes only to the endpoint it is for; a model at another
        endpoint that names no key variable gets none, though plain ``ChatOpenAI`` would
        send it. What a run's first line, a refused call and ``doctor`` say, so that a
        withheld key is not taken for a wrong one.

        Returns:
            ``OPENAI_API_KEY is set but was not sent to URL: ...; --api-key-env
            OPENAI_API_KEY sends it there``, or ``None`` where no key is withheld.
        """
        if not self._keyless() or self.base_url is None or not os.environ.get("OPENAI_API_KEY"):
            return None
        home = openai_home()
        if same_endpoint(self.base_url, home):
            return None
        return (
            f"OPENAI_API_KEY is set but was not sent to {self.base_url}: it goes only to "
            f"{home} (OPENAI_BASE_URL, else OpenAI's API); --api-key-env OPENAI_API_KEY "
            "sends it there"
        )

    def key_note(self) -> str | None:
        """What a refused call (HTTP 401 or 403) adds: the key withheld, or that none was sent.

        Returns:
            :meth:`withheld`'s note; else, where no key goes to the endpoint, that none
            was sent and the option that sends one; ``None`` where a key is sent (or the
            model needs none: the embedded one, a provider's, whose package reads its
            own key).
        """
        withheld = self.withheld()
        if withheld is not None or not self._keyless() or self.key() is not None:
            return withheld
        where = self.base_url or openai_home()
        return f"no API key was sent to {where}: --api-key-env VAR sends the key VAR holds"

    def _keyless(self) -> bool:
        """Whether the spec names no key: the rule of :meth:`key` decides whether one goes."""
        return not (
            self.is_local
            or self.api_key is not None
            or self.api_key_env is not None
            or provider_of(self.model) is not None
        )

    def validated(self) -> ModelSpec:
        """Check the values, the embedded model's file and slots, and fill in defaults.

        Returns:
            A spec with ``base_url`` resolved for remote models.

        Raises:
            UsageError: On a bad value, naming it and what is allowed.
        """
        self.check_values()
        provider = provider_of(self.model)
        if provider is not None:
            check_provider(self.model, provider)
            return self  # its package reads its own endpoint and key variables
        if self.is_local:
            from debategraph.local import check_gguf, check_slots, resolve_gguf

            info = check_gguf(resolve_gguf(self.model))
            if self.slots is not None:
                check_slots(info, self.slots)
            return self
        base_url = self.base_url or os.environ.get("OPENAI_BASE_URL") or None
        if base_url is None and near_local(self.model):
            raise UsageError(
                f"model {self.model!r} would go to OpenAI's API: did you mean {LOCAL} (the "
                "embedded model)? A remote model names its endpoint: --base-url URL"
            )
        if base_url is not None:
            parsed = urlparse(base_url)
            if parsed.scheme not in ("http", "https") or not parsed.netloc:
                named = "base URL" if self.base_url else "OPENAI_BASE_URL"
                raise UsageError(f"{named} {base_url!r} is not an http(s) URL")
        return replace(self, base_url=base_url)


_PROVIDER = re.compile(r"[a-z][a-z_]*")


def provider_of(model: str) -> str | None:
    """The LangChain provider a model's name starts with (``anthropic:claude-...``).

    As LangChain's ``init_chat_model`` reads ``PROVIDER:MODEL``, where ``langchain`` is
    installed; ``openai:NAME`` and any other name (``qwen2.5:7b``) go to an
    OpenAI-compatible endpoint, as without it.

    Args:
        model: The spec's model.

    Returns:
        The provider, or ``None``.
    """
    prefix, sep, name = model.partition(":")
    if not sep or not name.strip() or prefix in ("openai", LOCAL):
        return None
    if not _PROVIDER.fullmatch(prefix):
        return None
    from debategraph.compat import chat_model_providers

    return prefix if prefix in chat_model_providers() else None


def check_provider(model: str, provider: str) -> None:
    """Refuse a provider whose LangChain package is not installed, naming it.

    Args:
        model: The model as given.
        provider: Its provider (:func:`provider_of`).

    Raises:
        UsageError: One line naming the package to install.
    """
    import importlib.util

    from debategraph.compat import chat_model_providers

    module = chat_model_providers()[provider].split(".", 1)[0]
    if importlib.util.find_spec(module) is None:
        package = module.replace("_", "-")
        raise UsageError(
            f"model {model!r}: the {provider} provider needs its LangChain package, "
            f"not installed here: pip install {package}"
        )


#: OpenAI's endpoint: where a model goes when neither it nor ``OPENAI_BASE_URL`` names one.
OPENAI_URL = "https://api.openai.com/v1"


def openai_home() -> str:
    """The endpoint ``OPENAI_API_KEY`` is for: ``OPENAI_BASE_URL``, else OpenAI's API."""
    return os.environ.get("OPENAI_BASE_URL") or OPENAI_URL


def same_endpoint(first: str, second: str) -> bool:
    """Whether two base URLs name one endpoint (scheme, host and path; case of host aside).

    Args:
        first: A base URL.
        second: Another.

    Returns:
        ``True`` when they are the same endpoint.
    """

    def norm(url: str) -> tuple[str, str, str]:
        parsed = urlparse(url.strip())
        return parsed.scheme.lower(), parsed.netloc.lower(), parsed.path.rstrip("/")

    return norm(first) == norm(second)


#: An environment variable's name.
ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")

#: The keys a model mapping may hold, and the :class:`ModelSpec` field each sets.
MODEL_KEYS: Mapping[str, str] = {
    "model": "model",
    "base_url": "base_url",
    "api_key_env": "api_key_env",
    "temperature": "temperature",
    "max_tokens": "max_tokens",
    "timeout": "timeout_s",
    "timeout_s": "timeout_s",
    "max_retries": "max_retries",
    "patience": "patience_s",
    "patience_s": "patience_s",
    "rpm": "rpm",
    "tpm": "tpm",
    "price": "price",
    "structured_method": "structured_method",
}

#: What a model spec may be, for errors.
MODEL_FORMS = (
    "'local', 'local:PATH.gguf', 'NAME', 'NAME@BASE_URL' or 'openai:NAME', a mapping "
    f"({', '.join(k for k in MODEL_KEYS if not k.endswith('_s'))}), a ModelSpec or a "
    "LangChain chat model"
)


def parse_model(value: Any, who: str = "model") -> Any:
    """What an agent's ``model`` names: a :class:`ModelSpec`, or the chat model given.

    The string form names the model and its endpoint at once, close to LangChain's
    ``init_chat_model`` strings: ``local`` (the embedded model), ``local:PATH.gguf``
    (another GGUF file served the same way), ``NAME`` (that model at the run's
    endpoint: ``OPENAI_BASE_URL`` or OpenAI), ``NAME@BASE_URL`` (that model at that
    OpenAI-compatible endpoint), ``openai:NAME`` (the ``openai`` provider prefix is
    the only one: every endpoint is reached as OpenAI-compatible). A mapping holds
    :data:`MODEL_KEYS`; the key itself is never given, only ``api_key_env``, the name
    of the variable that holds it.

    Args:
        value: The spec as given.
        who: Whose model it is, for errors (``agent 'ann'``).

    Returns:
        A :class:`ModelSpec`, or the LangChain chat model given (any ``BaseChatModel``).

    Raises:
        ValueError: One line naming the bad value and what is allowed.
    """
    if isinstance(value, ModelSpec):
        return value
    if isinstance(value, str):
        return _from_text(value.strip(), who)
    if isinstance(value, Mapping):
        return _from_mapping(value, who)
    from langchain_core.language_models import BaseChatModel

    if isinstance(value, BaseChatModel):
        return value
    raise ValueError(f"{who}: model {value!r} is not a model spec: give {MODEL_FORMS}")


def _from_text(text: str, who: str) -> ModelSpec:
    if not text:
        raise ValueError(f"{who}: model is empty: give {MODEL_FORMS}")
    if is_local(text):
        return ModelSpec(model=text)
    at = text.find("@http")  # a model's name may hold an "@"; its URL starts with http
    if at < 0 and "://" in text:
        url = text[text.rfind("@", 0, text.find("://")) + 1 :]
        raise ValueError(f"{who}: base URL {url!r} is not an http(s) URL")
    if at < 0 and "@" in text:  # NAME@URL whose URL is not one
        url = text[text.rfind("@") + 1 :]
        raise ValueError(
            f"{who}: base URL {url!r} (after the '@' of {text!r}) is not an http(s) URL: "
            "give NAME@http://HOST/v1 (a name that holds an '@' goes in a mapping, "
            "{model: NAME})"
        )
    name, base_url = (text[:at], text[at + 1 :]) if at >= 0 else (text, "")
    if name.startswith("openai:"):
        name = name.removeprefix("openai:")
    name = name.strip()
    if not name:
        raise ValueError(f"{who}: model {text!r} names no model: give {MODEL_FORMS}")
    if at >= 0:
        _check_url(base_url.strip(), who)
        return ModelSpec(model=name, base_url=base_url.strip())
    return _provider_checked(ModelSpec(model=name), who)


def _from_mapping(value: Mapping[Any, Any], who: str) -> ModelSpec:
    if "api_key" in value:
        raise ValueError(
            f"{who}: model has an 'api_key': give 'api_key_env', the name of the environment "
            "variable that holds it (keys are never written down)"
        )
    unknown = sorted(str(k) for k in value if k not in MODEL_KEYS)
    if unknown:
        allowed = ", ".join(k for k in MODEL_KEYS if not k.endswith("_s"))
        raise ValueError(f"{who}: unknown model field {unknown[0]!r}: allowed are {allowed}")
    fields = {MODEL_KEYS[str(k)]: v for k, v in value.items()}
    name = fields.get("model")
    if not isinstance(name, str) or not name.strip():
        raise ValueError(f"{who}: model mapping needs 'model', a model name, got {name!r}")
    if "base_url" in fields:
        _check_url(fields["base_url"], who)
    numbers = ("temperature", "max_tokens", "timeout_s", "patience_s", "rpm", "tpm")
    bad = [k for k in numbers if not _number(fields.get(k))]
    if bad:
        raise ValueError(f"{who}: model field {bad[0]!r} must be a number, got {fields[bad[0]]!r}")
    try:
        spec = ModelSpec(**fields)
        spec.check_values()
    except (TypeError, UsageError) as exc:
        raise ValueError(f"{who}: {exc}") from None
    return _provider_checked(spec, who)


def _provider_checked(spec: ModelSpec, who: str) -> ModelSpec:
    """``spec``, refused where it names a provider whose package is not installed.

    Wherever a model is written down (an agents file, the served models file, a roster),
    as ``--model`` is at a run's start: before any call.
    """
    provider = provider_of(spec.model)
    if provider is not None:
        try:
            check_provider(spec.model, provider)
        except UsageError as exc:
            raise ValueError(f"{who}: {exc}") from None
    return spec


def _number(value: Any) -> bool:
    return value is None or (isinstance(value, int | float) and not isinstance(value, bool))


def _check_url(url: Any, who: str) -> None:
    parsed = urlparse(url) if isinstance(url, str) else None
    if parsed is None or parsed.scheme not in ("http", "https") or not parsed.netloc:
        raise ValueError(f"{who}: base URL {url!r} is not an http(s) URL")
    try:
        check_url_secrets(url)
    except UsageError as exc:
        raise ValueError(f"{who}: {exc}") from None


#: The structured-output methods a spec may name.
METHODS = ("auto", "function_calling", "json_schema", "json_mode", "json_text")

#: Query parameters that would put a key in a URL.
_SECRET_PARAMS = re.compile(r"key|token|secret|password|sig", re.IGNORECASE)


def check_url_secrets(url: str) -> None:
    """Refuse a base URL that carries a credential (a user, a password, a key parameter).

    A model's endpoint is stored with the thread and shown in errors and usage, so a
    key must come from an environment variable (``api_key_env``), never from the URL.

    Args:
        url: The base URL.

    Raises:
        UsageError: One line, without the URL (which holds the secret).
    """
    parsed = urlparse(url)
    if parsed.username or parsed.password or _SECRET_PARAMS.search(parsed.query):
        raise UsageError(
            "a base URL may not carry a user, password or key: name the key's environment "
            "variable with api_key_env instead"
        )


def near_local(model: str) -> bool:
    """Whether a model name is a near miss of ``local`` (``locl``, ``Local``, ``lcoal``).

    Such a name is a slip, not a model: without an endpoint it would go to OpenAI's API,
    which serves no such model, and fail there, far from the typo.

    Args:
        model: The model name.

    Returns:
        ``True`` for a name close to ``local`` that is not it.
    """
    import difflib

    head = model.partition(":")[0].strip().lower()
    if is_local(model) or not head:
        return False
    return head == LOCAL or difflib.SequenceMatcher(None, head, LOCAL).ratio() >= NEAR_MISS


#: How close (:class:`difflib.SequenceMatcher`'s ratio) a slip is to the name it misses.
NEAR_MISS = 0.75


def is_local(model: str) -> bool:
    """Whether a model name means the embedded model (``local`` or ``local:PATH``).

    Args:
        model: The model name.

    Returns:
        ``True`` for the embedded model.
    """
    return model == LOCAL or model.startswith(f"{LOCAL}:")
