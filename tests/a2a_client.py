"""An ``a2a-sdk`` client of a served pattern, as an A2A client uses one (tests only).

:func:`client_of` resolves the pattern's agent card at its well-known path and makes the
client ``ClientFactory`` makes from it (A2A 1.0's JSON-RPC methods); ``legacy=True``
makes the one an A2A 0.3 client is (``message/send``, ``tasks/get``...), from the same
card's 0.3 interface. :func:`message` is a request with text parts, :func:`sent` the
events a send gives, and :func:`texts` the text of their status messages.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Any

import httpx

WAIT_S = 60.0


@contextlib.asynccontextmanager
async def client_of(
    url: str, graph: str, token: str | None, *, streaming: bool = True, legacy: bool = False
) -> AsyncIterator[Any]:
    """A client of the agent ``/a2a/{graph}`` of the server at ``url``, signed in with ``token``.

    Args:
        url: The server's base URL.
        graph: The pattern.
        token: The user's token (``None``: none sent).
        streaming: Send with ``SendStreamingMessage`` (else ``SendMessage``).
        legacy: Speak A2A 0.3 (the card's 0.3 interface).

    Yields:
        The client (``a2a.client.Client``).
    """
    from a2a.client import ClientConfig, ClientFactory
    from a2a.client.card_resolver import A2ACardResolver

    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with httpx.AsyncClient(headers=headers, timeout=WAIT_S) as http:
        card = await A2ACardResolver(http, f"{url}/a2a/{graph}").get_agent_card()
        if legacy:
            kept = [i for i in card.supported_interfaces if i.protocol_version == "0.3"]
            del card.supported_interfaces[:]
            card.supported_interfaces.extend(kept)
        factory = ClientFactory(ClientConfig(httpx_client=http, streaming=streaming))
        yield factory.create(card)


def message(text: str, *, task_id: str = "", context_id: str = "", **metadata: Any) -> Any:
    """A ``SendMessageRequest`` of one text part, its ``metadata`` the run's settings."""
    import uuid

    from a2a.types.a2a_pb2 import Message, Part, Role, SendMessageRequest

    request = SendMessageRequest(
        message=Message(
            role=Role.ROLE_USER,
            message_id=str(uuid.uuid4()),
            task_id=task_id,
            context_id=context_id,
            parts=[Part(text=text)],
        )
    )
    request.metadata.update(metadata)
    return request


async def sent(client: Any, request: Any) -> list[Any]:
    """Every event (``StreamResponse``) a send gives, in order."""
    return [event async for event in client.send_message(request)]


def status_of(event: Any) -> Any:
    """The task status an event carries (a status update's, or a task's)."""
    return event.status_update.status if event.HasField("status_update") else event.task.status


def texts(events: list[Any]) -> list[str]:
    """The text of each status message the events carry, in order."""
    found = []
    for event in events:
        parts = status_of(event).message.parts
        found += [part.text for part in parts if part.text]
    return found
