"""Sign-in for ``debategraph serve``: tokens the operator issues, each one a user.

``serve --tokens FILE`` turns it on (Aegra's ``auth`` mechanism, pointed at :data:`auth`).
The file maps each user to the token they send, as ``Authorization: Bearer TOKEN`` or
``X-Api-Key: TOKEN`` (what ``get_client(api_key=...)`` of ``langgraph-sdk`` sends)::

    # tokens.yaml: USER: TOKEN
    # (make a token: python -c "import secrets; print(secrets.token_urlsafe(32))")
    alice: 3q2+7w...
    bob: Zx81Pe...

Aegra keeps each thread, run and assistant with the user who made it and shows a user
only their own. The store is scoped here (:func:`own_store`): a user reaches
``("users", <themselves>, ...)`` and the inbox of their own threads, nothing else, so
nobody interjects into or stops another user's debate. An operator with an auth handler
of their own registers :func:`own_store` on it (``my_auth.on.store(own_store)``).
"""

from __future__ import annotations

import functools
import hmac
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from langgraph_sdk import Auth

from debategraph.checkpoints.inbox import NAMESPACE as INBOX
from debategraph.datafiles import load_data
from debategraph.errors import UsageError

#: The environment variable naming the tokens file for the server process.
TOKENS_ENV = "DEBATEGRAPH_TOKENS"
#: Aegra's ``auth.path`` of :data:`auth`.
AUTH_PATH = "debategraph.serve.auth:auth"
#: The shortest token accepted (a guessable token is no sign-in).
MIN_TOKEN_CHARS = 24


def read_tokens(path: str | Path, option: str = "--tokens") -> dict[str, str]:
    """The tokens file: token -> user, every entry checked.

    Args:
        path: The YAML or JSON file mapping users to tokens.
        option: The option that named it, for errors.

    Returns:
        Token -> user.

    Raises:
        UsageError: One line: an unreadable or malformed file, no users, a token that
            is not a string or is shorter than :data:`MIN_TOKEN_CHARS`, a user written
            twice, or one token given to two users (the token itself is never shown).
    """
    data = load_data(path, option)
    where = f"{option} {path}"
    if not isinstance(data, Mapping) or not data:
        raise UsageError(f"{where}: give one line per user, USER: TOKEN")
    tokens: dict[str, str] = {}
    for user, token in data.items():
        if not isinstance(user, str) or not user.strip():
            raise UsageError(f"{where}: user {user!r} is not a name")
        if not isinstance(token, str) or len(token.strip()) < MIN_TOKEN_CHARS:
            raise UsageError(
                f"{where}: user {user!r}: the token must be a string of at least "
                f'{MIN_TOKEN_CHARS} characters (python -c "import secrets; '
                'print(secrets.token_urlsafe(32))")'
            )
        if token.strip() in tokens:
            raise UsageError(f"{where}: user {user!r} has the same token as another user")
        tokens[token.strip()] = user
    return tokens


@functools.lru_cache(maxsize=1)
def served_tokens() -> dict[str, str]:
    """The tokens of this server process (:data:`TOKENS_ENV`'s file), read once.

    Raises:
        UsageError: If the variable is unset, or as :func:`read_tokens`.
    """
    path = os.environ.get(TOKENS_ENV)
    if not path:
        raise UsageError(f"{TOKENS_ENV} is not set: name the tokens file (serve --tokens FILE)")
    return read_tokens(path, TOKENS_ENV)


def user_of(headers: Mapping[str, str]) -> str | None:
    """The user a request's token names (``None``: no token, or an unknown one).

    Args:
        headers: The request's headers, names in lower case.

    Returns:
        The user.
    """
    given = headers.get("x-api-key") or ""
    scheme, _, value = (headers.get("authorization") or "").partition(" ")
    if not given and scheme.lower() == "bearer":
        given = value.strip()
    if not given:
        return None
    found = None
    for token, user in served_tokens().items():  # every token compared: no early exit
        if hmac.compare_digest(token.encode(), given.encode()):
            found = user
    return found


auth = Auth()


@auth.authenticate
async def authenticate(headers: Mapping[Any, Any]) -> Auth.types.MinimalUserDict:
    """Aegra's sign-in: the user whose token the request carries, else 401.

    Args:
        headers: The request's headers.

    Returns:
        The user (``identity`` is their name in the tokens file).

    Raises:
        Auth.exceptions.HTTPException: 401 without a token or with an unknown one.
    """
    lower = {_text(k).lower(): _text(v) for k, v in headers.items()}
    user = user_of(lower)
    if user is None:
        raise Auth.exceptions.HTTPException(
            status_code=401,
            detail="sign in: send your token as 'Authorization: Bearer TOKEN' or 'X-Api-Key'",
        )
    return {"identity": user, "display_name": user, "is_authenticated": True}


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


@auth.on.store
async def own_store(ctx: Auth.types.AuthContext, value: dict[str, Any]) -> None:
    """Let a user reach only their own store namespaces and their own threads' inboxes.

    Aegra scopes ``("users", <id>)`` itself and leaves every other namespace open to
    every user: this refuses those, and an inbox of a thread the user does not own.

    Args:
        ctx: Who asks and what for.
        value: The request (its ``namespace``, ``namespace_prefix`` or ``prefix``).

    Raises:
        Auth.exceptions.HTTPException: 403 naming what the user may reach.
    """
    me = ctx.user.identity
    raw = next((value[k] for k in ("namespace", "namespace_prefix", "prefix") if k in value), None)
    namespace = _labels(raw)
    if not namespace or (namespace[0] == "users" and namespace[1:2] == [me]):
        return  # Aegra puts an empty namespace under ("users", me)
    if tuple(namespace[:2]) == INBOX and len(namespace) >= 3:
        thread_id = namespace[2].replace("%2E", ".").replace("%25", "%")
        if await _owns(me, thread_id):
            return
        raise Auth.exceptions.HTTPException(
            status_code=403, detail=f"thread {thread_id!r} is not one of yours: its inbox is not"
        )
    raise Auth.exceptions.HTTPException(
        status_code=403,
        detail=f"namespace {'.'.join(namespace)!r} is not yours: a user reaches ('users', "
        f"'{me}', ...) and the inbox of their own threads ('debategraph', 'inbox', THREAD)",
    )


def _labels(raw: Any) -> list[str]:
    if isinstance(raw, str):
        return [part for part in raw.split(".") if part]
    if isinstance(raw, list | tuple):
        return [str(part) for part in raw]
    return []


async def _owns(user: str, thread_id: str) -> bool:
    """Whether ``user`` owns the thread, in Aegra's threads table."""
    from aegra_api.core.orm import Thread, _get_session_maker  # type: ignore[import-untyped]
    from sqlalchemy import select

    async with _get_session_maker()() as session:
        owner = await session.scalar(select(Thread.user_id).where(Thread.thread_id == thread_id))
    return bool(owner == user)
