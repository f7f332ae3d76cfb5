"""Sign-in for ``debategraph serve``: tokens the operator issues, each one a user.

``serve --tokens FILE`` turns it on (Aegra's ``auth`` mechanism, pointed at :data:`auth`).
The file maps each user to the token they send, as ``Authorization: Bearer TOKEN`` or
``X-Api-Key: TOKEN`` (what ``get_client(api_key=...)`` of ``langgraph-sdk`` sends)::

    # tokens.yaml: USER: TOKEN
    # (make a token: python -c "import secrets; print(secrets.token_urlsafe(32))")
    alice: 3q2+7w...
    bob: Zx81Pe...

Aegra keeps each thread, run and assistant with the user who made it; what it leaves
open (runs on another user's thread, other users' inboxes) is closed for any auth
handler by :mod:`debategraph.serve.owners`.
"""

from __future__ import annotations

import functools
import hmac
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from langgraph_sdk import Auth

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
