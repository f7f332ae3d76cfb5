"""The round review: the pause after a round, in the shape chat UIs render, and its replies.

A graph built with ``pause_after_round=True`` goes through the review point
(:data:`~debategraph.nodes.rounds.REVIEW_NODE`) between rounds. Its ``interrupt()`` value
is a ``HITLRequest`` of langchain's human-in-the-loop middleware (what agent-chat-ui,
Studio and ``useStream`` clients render with buttons): one action request named
:data:`REVIEW_ACTION`, whose ``args`` are the pattern's own view of the round (``round``,
``rounds``, the answers, arguments or messages...) plus an empty :data:`INTERJECTION` for
an edit to fill, and whose ``description`` says what the human may answer; and one review
config allowing :data:`DECISIONS`. The interrupt's ``response_schema`` is
:data:`RESPONSE_SCHEMA`, the JSON schema of the replies the review takes:

- the middleware's ``HITLResponse``, ``{"decisions": [decision]}`` (or the decision
  alone), with one decision: ``{"type": "approve"}`` goes on; ``{"type": "respond",
  "message": text}``, or ``{"type": "edit", "edited_action": {"name": ..., "args": {...,
  "interjection": text}}}``, goes on with ``text`` as the human's interjection, which
  every agent reads next round; ``{"type": "reject", "message": text}`` stops the run
  (``termination_reason`` ``stopped``, on to the pattern's finish), its message, if any,
  recorded in the transcript as the human's;
- the replies taken before: ``{"approve": True}``, ``True`` or ``None`` go on;
  ``{"interject": text}`` or a plain string interjects (an empty text goes on).

Any other value is refused before LangGraph saves it (:func:`read_reply`, run by
``interrupt()`` itself): one line naming the value and what is allowed, a
:class:`~debategraph.errors.ResumeRefused`, and the thread stays paused at its review, so
resuming again with a good value works. A human's text is never dropped: an edit that
changes anything but its interjection is refused too.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Annotated, Any, NoReturn

from pydantic import PlainValidator, WithJsonSchema

from debategraph.errors import ResumeRefused
from debategraph.nodes.rounds import OPEN_ROUND_NODE, REVIEW_NODE, STOPPED, RoundEnd
from debategraph.prompts import ROUND_REVIEW
from debategraph.state.records import interjection

#: The name of the one action a round review asks about.
REVIEW_ACTION = "round_review"
#: The decisions a round review allows, as a ``review_configs`` entry lists them.
DECISIONS = ("approve", "edit", "respond", "reject")
#: The argument an ``edit`` decision fills with the text to interject.
INTERJECTION = "interjection"
#: The replies taken before the ``HITLRequest`` shape: ``{"approve": True}`` and
#: ``{"interject": text}``.
APPROVE = "approve"
INTERJECT = "interject"

#: What a refusal says is allowed.
ALLOWED = (
    "give {'decisions': [{'type': 'approve'}]} (or one 'respond' decision with a 'message', "
    "an 'edit' of args.interjection, a 'reject' with an optional 'message'), "
    "{'approve': True}, {'interject': TEXT}, a text, True or None"
)
#: Each decision's fields.
_FIELDS = {
    "approve": {"type"},
    "respond": {"type", "message"},
    "edit": {"type", "edited_action"},
    "reject": {"type", "message"},
}

_TEXT = {"type": "string", "description": "What every agent reads next round."}
#: One HITL decision, as the schema lists it.
_DECISION: dict[str, Any] = {
    "oneOf": [
        {
            "type": "object",
            "properties": {"type": {"const": "approve"}},
            "required": ["type"],
            "additionalProperties": False,
        },
        {
            "type": "object",
            "properties": {"type": {"const": "respond"}, "message": _TEXT},
            "required": ["type", "message"],
            "additionalProperties": False,
        },
        {
            "type": "object",
            "properties": {
                "type": {"const": "edit"},
                "edited_action": {
                    "type": "object",
                    "properties": {
                        "name": {"const": REVIEW_ACTION},
                        "args": {
                            "type": "object",
                            "properties": {INTERJECTION: _TEXT},
                            "required": [INTERJECTION],
                        },
                    },
                    "required": ["args"],
                },
            },
            "required": ["type", "edited_action"],
            "additionalProperties": False,
        },
        {
            "type": "object",
            "properties": {
                "type": {"const": "reject"},
                "message": {"type": "string", "description": "Why the run stops."},
            },
            "required": ["type"],
            "additionalProperties": False,
        },
    ]
}
#: The JSON schema of the replies a round review takes (the interrupt's ``response_schema``).
RESPONSE_SCHEMA: dict[str, Any] = {
    "title": "RoundReviewReply",
    "description": "A human's reply to a round review: go on, interject, or stop the run.",
    "anyOf": [
        {
            "type": "object",
            "properties": {
                "decisions": {"type": "array", "items": _DECISION, "minItems": 1, "maxItems": 1}
            },
            "required": ["decisions"],
            "additionalProperties": False,
        },
        _DECISION,
        {
            "type": "object",
            "properties": {APPROVE: {"const": True}, INTERJECT: _TEXT},
            "minProperties": 1,
            "additionalProperties": False,
        },
        {"type": "string"},
        {"const": True},
        {"type": "null"},
    ],
}


@dataclass(frozen=True)
class Reply:
    """What a human answered at a round review.

    Attributes:
        text: The human's text (an interjection, or the reason a run was stopped), or
            ``None``.
        stop: Whether the run stops here (a ``reject`` decision).
    """

    text: str | None = None
    stop: bool = False


def review_payload(
    rnd: int, rounds: int, who: str, *, word: str = "round", **details: Any
) -> dict[str, Any]:
    """The ``HITLRequest`` a round-boundary interrupt shows a human.

    Args:
        rnd: The round just finished.
        rounds: The round cap.
        who: Whom an interjection reaches, e.g. ``solver`` or ``debater``.
        word: What the pattern calls a round (the discussion: ``iteration``).
        **details: The pattern's own view of the round (answers, arguments...).

    Returns:
        ``action_requests`` (one, :data:`REVIEW_ACTION`: ``args`` are ``round``,
        ``rounds``, the details and an empty :data:`INTERJECTION`; ``description`` says
        what the human may answer) and ``review_configs`` (it allows :data:`DECISIONS`).
    """
    prompt = ROUND_REVIEW.format(
        round=rnd, rounds=rounds, who=who, word=word, Word=word.capitalize()
    )
    return {
        "action_requests": [
            {
                "name": REVIEW_ACTION,
                "args": {"round": rnd, "rounds": rounds, **details, INTERJECTION: ""},
                "description": prompt,
            }
        ],
        "review_configs": [{"action_name": REVIEW_ACTION, "allowed_decisions": list(DECISIONS)}],
    }


def hitl_response(decision: str, message: str | None = None) -> dict[str, Any]:
    """A reply of one decision in the ``HITLResponse`` shape, as a face resumes with it.

    Args:
        decision: ``approve``, ``respond`` or ``reject``.
        message: A ``respond``'s text, or a ``reject``'s reason.

    Returns:
        ``{"decisions": [{"type": decision, "message": message}]}`` (no ``message`` when
        ``None``).
    """
    made: dict[str, Any] = {"type": decision}
    if message is not None:
        made["message"] = message
    return {"decisions": [made]}


def review_request(value: Any) -> Mapping[str, Any] | None:
    """The round review's action request in an interrupt's value, for a face to show.

    Args:
        value: An interrupt's value (a paused thread's).

    Returns:
        ``{"name", "args", "description"}`` (``args`` without the empty interjection),
        or ``None`` when the value is not a round review (another pattern's interrupt, a
        parent's own).
    """
    requests = value.get("action_requests") if isinstance(value, Mapping) else None
    if not isinstance(requests, list) or not requests or not isinstance(requests[0], Mapping):
        return None
    request = requests[0]
    if request.get("name") != REVIEW_ACTION or not isinstance(request.get("args"), Mapping):
        return None
    args = {k: v for k, v in request["args"].items() if k != INTERJECTION}
    return {**request, "args": args, "description": str(request.get("description") or "")}


def read_reply(value: Any, shown: Mapping[str, Any] | None = None) -> Reply:
    """Read a resume value given to a round review, or refuse it.

    Args:
        value: The value given to ``Command(resume=...)``.
        shown: The ``args`` the review showed (an edit may change only its
            interjection); ``None``: not checked.

    Returns:
        The reply: its text (an interjection, or a stop's reason) and whether it stops.

    Raises:
        ResumeRefused: One line naming the value and what is allowed.
    """
    if value is None or value is True:
        return Reply()
    if isinstance(value, str):
        return Reply(value.strip() or None)
    if isinstance(value, Mapping):
        if "decisions" in value:
            decisions = value["decisions"]
            if set(value) != {"decisions"}:
                _refuse(value, "a HITL response holds 'decisions' only")
            if not isinstance(decisions, list) or len(decisions) != 1:
                _refuse(value, "'decisions' must be a list of one decision (one action)")
            return _decision(value, decisions[0], shown)
        if "type" in value:
            return _decision(value, value, shown)
        if value and set(value) <= {APPROVE, INTERJECT}:
            text = value.get(INTERJECT, "")
            if isinstance(text, str) and text.strip():
                return Reply(text.strip())
            if isinstance(text, str) and value.get(APPROVE, True) is True:
                return Reply()
    _refuse(value, "not a reply a round review takes")


def _decision(value: Any, decision: Any, shown: Mapping[str, Any] | None) -> Reply:
    """Read one HITL decision (``value`` is the whole resume value, for the message)."""
    kind = decision.get("type") if isinstance(decision, Mapping) else None
    if not isinstance(kind, str) or kind not in _FIELDS:
        _refuse(value, f"decision type {kind!r} is not one of {', '.join(DECISIONS)}")
    extra = sorted(set(decision) - _FIELDS[kind])
    if extra:
        _refuse(value, f"a {kind} decision has no field {extra[0]!r}")
    message = decision.get("message", "")
    if not isinstance(message, str):
        _refuse(value, f"a {kind} decision's message must be a text")
    if kind == "approve":
        return Reply()
    if kind == "reject":
        return Reply(message.strip() or None, stop=True)
    if kind == "respond":
        if not message.strip():
            _refuse(value, "a respond decision needs a non-empty 'message' to interject")
        return Reply(message.strip())
    return _edit(value, decision.get("edited_action"), shown)


def _edit(value: Any, action: Any, shown: Mapping[str, Any] | None) -> Reply:
    """Read an edit decision's action: its interjection, and nothing else changed."""
    args = action.get("args") if isinstance(action, Mapping) else None
    if not isinstance(args, Mapping) or action.get("name", REVIEW_ACTION) != REVIEW_ACTION:
        _refuse(value, f"an edit's edited_action is {{'name': {REVIEW_ACTION!r}, 'args': ...}}")
    changed = [
        key
        for key, edited in args.items()
        if key != INTERJECTION and shown is not None and not _same(edited, shown.get(key))
    ]
    if changed:
        _refuse(value, f"an edit may change only args.{INTERJECTION}, not {', '.join(changed)}")
    text = args.get(INTERJECTION)
    if not isinstance(text, str) or not text.strip():
        _refuse(value, f"an edit interjects args.{INTERJECTION}, which is empty (approve instead)")
    return Reply(text.strip())


def _same(edited: Any, original: Any) -> bool:
    """Whether an edited argument is the one shown (a UI sends edited fields as text)."""
    if edited == original:
        return True
    if not isinstance(edited, str):
        return False
    try:
        return bool(json.loads(edited) == original)
    except ValueError:
        return False


def _refuse(value: Any, why: str) -> NoReturn:
    """Raise the one-line refusal of a resume value."""
    shown = repr(value)
    shown = shown if len(shown) <= 80 else shown[:77] + "..."
    raise ResumeRefused(f"resume value {shown} refused: {why}; {ALLOWED}")


def reply_schema(request: Mapping[str, Any]) -> Any:
    """What ``interrupt()`` checks a resume value with: :func:`read_reply` and its schema.

    Args:
        request: The review's ``HITLRequest`` (an edit is held to its ``args``).

    Returns:
        A type for ``interrupt(..., response_schema=...)``: LangGraph validates a resume
        value with it before saving anything (a refused one leaves the thread paused) and
        shows :data:`RESPONSE_SCHEMA` as the interrupt's ``response_schema``.
    """
    found = review_request(request)
    shown = None if found is None else found["args"]

    def check(value: Any) -> Reply:
        return read_reply(value, shown)

    return Annotated[Reply, PlainValidator(check), WithJsonSchema(RESPONSE_SCHEMA)]


def make_review(
    payload: Callable[[Mapping[str, Any]], dict[str, Any]],
) -> Callable[..., dict[str, Any]]:
    """The review node: pauses after a round until a human answers.

    On resume LangGraph re-runs the node from its start and ``interrupt`` returns the
    reply, read by :func:`read_reply` (a refused one raises before anything is saved), so
    the node is idempotent. An interjection is a ``user`` turn that agents read from the
    next round on; a reject sets ``termination_reason`` to ``stopped`` and records its
    message, if any, as the human's turn.

    Args:
        payload: Builds the interrupt's ``HITLRequest`` from the state
            (:func:`review_payload`).

    Returns:
        The node function.
    """
    from langgraph.types import interrupt  # the graph runtime; not needed to declare one

    def round_review(state: Mapping[str, Any]) -> dict[str, Any]:
        request = payload(state)
        reply: Reply = interrupt(request, response_schema=reply_schema(request))
        update: dict[str, Any] = {}
        if reply.text is not None:
            update["transcript"] = [interjection(reply.text, after_round=state["round"])]
        if reply.stop:
            update["termination_reason"] = STOPPED
        return update

    return round_review


def add_review(
    builder: Any,
    payload: Callable[[Mapping[str, Any]], dict[str, Any]],
    open_node: str = OPEN_ROUND_NODE,
    finish: str | None = None,
) -> None:
    """Add the review node to a graph, leading back to the node that opens a round.

    Args:
        builder: The pattern's ``StateGraph``.
        payload: Builds the interrupt's ``HITLRequest`` from the state.
        open_node: The node that opens a round.
        finish: Where a run a human stopped goes (the pattern's finish: its aggregator,
            judge, report...). ``None``: it opens one more round, whose close ends it
            ``stopped`` (as a stop request does).
    """
    from debategraph.nodes.dual import loop_node

    builder.add_node(REVIEW_NODE, loop_node(make_review(payload)))
    if finish is None:
        builder.add_edge(REVIEW_NODE, open_node)
        return

    def after_review(state: RoundEnd) -> str:
        return finish if state.get("termination_reason") else open_node

    builder.add_conditional_edges(REVIEW_NODE, loop_node(after_review), [open_node, finish])
