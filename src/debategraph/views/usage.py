"""What a thread spent, for its page: usage per agent and per model, and each agent's models.

The tables hold what ``show --json`` gives (the thread's ``usage_by_agent`` and
``usage_by_model``): every agent and official that made a call is a row, those whose
calls leave no turn (a chat's LLM selector and judge) included, each with the models
that answered it: its turns' (:attr:`~debategraph.state.records.Turn.model`, a meeting's
controller's too) and, for an official without turns, the thread's ``official_models``.
A thread whose values hold no usage table (values made by hand) gets its transcript's sums.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from debategraph.checkpoints.thread_values import usage_by
from debategraph.models.money import money
from debategraph.state.records import Turn, Usage
from debategraph.views.markdown import MODEL_TIME
from debategraph.views.shell import esc, said

#: The turns whose model answered for their agent: its own and an official's (a system
#: turn, such as a meeting's controller), never a human's or a tool call's.
_ANSWERING_ROLES = frozenset({"agent", "system"})


def agent_models(
    transcript: Sequence[Turn], values: Mapping[str, Any] | None = None
) -> dict[str, list[str]]:
    """Each agent and the models that answered for it, in order of appearance.

    Args:
        transcript: The thread's turns.
        values: The thread's state values: their ``official_models`` (the models of
            officials whose calls leave no turn) are added.

    Returns:
        Agent -> its models (empty where no turn of it names one); a human's and a tool's
        turns are no agent's.
    """
    models: dict[str, dict[str, None]] = {}
    for turn in transcript:
        if turn.role in _ANSWERING_ROLES:
            models.setdefault(turn.agent, {}).update({turn.model: None} if turn.model else {})
    officials = (values or {}).get("official_models") or {}
    for agent, named in officials.items() if isinstance(officials, Mapping) else ():
        models.setdefault(str(agent), {}).update(dict.fromkeys(map(str, named)))
    return {agent: list(named) for agent, named in models.items()}


def usage_rows(values: Mapping[str, Any], transcript: Sequence[Turn], key: str) -> dict[str, Usage]:
    """The thread's usage by ``agent`` or ``model``, the rows of its table.

    Args:
        values: The thread's state values (``usage_by_agent``, ``usage_by_model``).
        transcript: Its turns: their sums where the values hold no table.
        key: ``agent`` or ``model``.

    Returns:
        Name -> usage, rows with no call left out.
    """
    raw = values.get(f"usage_by_{key}")
    if isinstance(raw, Mapping) and raw:
        table = {str(k): Usage.coerce(v) for k, v in raw.items()}
    else:
        table = usage_by(transcript, key)
    return {name: u for name, u in table.items() if u.calls}


def usage_tables(values: Mapping[str, Any], transcript: Sequence[Turn]) -> str:
    """Tokens, calls, model time and (where a call had a price) cost, per agent and model.

    Args:
        values: The thread's state values.
        transcript: The thread's turns.

    Returns:
        The two tables' HTML (a table is left out when nothing made a model call); the
        cost column only where a call was priced, ``-`` for a row with no price.
    """
    models = agent_models(transcript, values)
    parts = []
    for key in ("agent", "model"):
        rows = usage_rows(values, transcript, key)
        if not rows or (key == "model" and list(rows) == [""]):
            continue
        with_models = key == "agent" and any(models.values())
        priced = any(u.cost is not None for u in rows.values())
        extra = "<th>models</th>" if with_models else ""
        head = (
            f"<tr><th>{key}</th>{extra}<th class='num'>prompt</th><th class='num'>completion"
            f"</th><th class='num'>calls</th><th class='num'>{esc(MODEL_TIME)} (s)</th>"
            + ("<th class='num'>cost</th>" if priced else "")
            + "</tr>"
        )
        body = []
        for name, u in rows.items():
            named = ", ".join(models.get(name, []))
            cell = f"<td>{said(named)}</td>" if with_models else ""
            cost = "-" if u.cost is None else money(u.cost)
            body.append(
                f"<tr><td>{said(name or '?')}</td>{cell}<td class='num'>{u.prompt_tokens:,}</td>"
                f"<td class='num'>{u.completion_tokens:,}</td><td class='num'>{u.calls}</td>"
                f"<td class='num'>{u.latency_s:.1f}</td>"
                + (f"<td class='num'>{esc(cost)}</td>" if priced else "")
                + "</tr>"
            )
        parts.append(f'<table class="usage-{key}">{head}{"".join(body)}</table>')
    return "\n".join(parts)
