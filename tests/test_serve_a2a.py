"""The A2A agents' mapping, in-process: contexts, settings, pauses, resumes and cards.

The A2A door end to end (a real ``a2a-sdk`` client against ``debategraph serve``) is in
``tests/test_serve_safety.py``; here are the cases a served graph does not reach there: a
pause at an interrupt (a graph built with ``pause_after_round``, in the round review's
shape or the ``HITLRequest`` one) and settings a client gets wrong.
"""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from debategraph import registry
from tests.backends import require_module

require_module("a2a", "pip install -e '.[dev]' installs the serve extra (a2a-sdk)")

from a2a.types.a2a_pb2 import Task  # noqa: E402

from debategraph.serve.a2a_agents import agent_card  # noqa: E402
from debategraph.serve.a2a_runs import (  # noqa: E402
    Refused,
    Settings,
    resume_of,
    review_text,
    thread_of,
)

REVIEW = {
    "kind": "round_review",
    "round": 1,
    "rounds": 3,
    "message": "Round 1 of 3 is done. Approve to go on, or interject.",
}
HITL = {
    "action_requests": [{"name": "round_review", "args": {}, "description": "Round 1 is done."}],
    "review_configs": [{"action_name": "round_review", "allowed_decisions": ["approve"]}],
}


def at_interrupt(value: Any) -> dict[str, Any]:
    return {"next": ["human"], "tasks": [{"interrupts": [{"value": value}]}]}


BETWEEN_ROUNDS = {"next": ["open_round"], "tasks": [{"interrupts": []}]}


def test_a_context_id_is_a_thread_and_text_names_one_thread() -> None:
    made = str(uuid.uuid4())
    assert thread_of(made) == made
    assert thread_of("homework") == thread_of("homework") != thread_of("homework-2")
    assert uuid.UUID(thread_of("homework"))


@pytest.mark.parametrize(
    ("text", "run"),
    [
        ("", {"command": {"resume": {"approve": True}}}),
        ("Approve", {"command": {"resume": {"approve": True}}}),
        ("Check the units", {"command": {"resume": {"interject": "Check the units"}}}),
    ],
)
def test_a_message_resumes_an_interrupt_with_the_values_every_review_takes(
    text: str, run: dict[str, Any]
) -> None:
    assert resume_of(at_interrupt(REVIEW), text) == run
    assert resume_of(at_interrupt(HITL), text) == run


def test_a_message_between_rounds_is_the_interjection_or_goes_on() -> None:
    assert resume_of(BETWEEN_ROUNDS, "") == {"input": None}
    update = {"transcript": [{"role": "user", "content": "Check the units"}]}
    assert resume_of(BETWEEN_ROUNDS, "Check the units") == {"command": {"update": update}}


def test_a_pause_shows_the_reviews_own_text() -> None:
    assert review_text(REVIEW) == REVIEW["message"]
    assert review_text(HITL) == "Round 1 is done."
    assert review_text("Go on?") == "Go on?"
    assert review_text({"other": 1}) == '{"other": 1}'


def test_settings_come_from_the_request_else_its_task_and_bad_ones_are_refused() -> None:
    task = Task(id="t", context_id="c")
    task.metadata.update({"context": {"model": "stub"}, "review": True})
    assert Settings.of({}, task) == Settings({"model": "stub"}, True)
    assert Settings.of({"review": False}, task) == Settings({"model": "stub"}, False)
    assert Settings.of({}, None) == Settings()
    with pytest.raises(Refused, match=r"metadata.context must be an object, not 'stub'"):
        Settings.of({"context": "stub"}, None)
    with pytest.raises(Refused, match=r"metadata.review must be true or false, not 'yes'"):
        Settings.of({"review": "yes"}, None)


def test_a_card_is_the_registry_lines_and_names_the_token_only_where_users_sign_in() -> None:
    entry = registry.entry("debate")
    card = agent_card("debate", "http://host/a2a/debate", signs_in=False)
    assert (card.name, card.description, card.skills[0].name) == (
        "debate",
        entry.description,
        entry.help,
    )
    assert not card.security_schemes and not card.security_requirements
    signed = agent_card("debate", "http://host/a2a/debate", signs_in=True)
    assert list(signed.security_requirements[0].schemes) == ["bearer"]
