"""Errors debategraph raises on purpose, each meant to be shown to a user as one line."""

from __future__ import annotations


class DebategraphError(Exception):
    """Base class of the errors the CLI prints as a single line."""

    exit_code: int = 1


class UsageError(DebategraphError):
    """A bad value given by the user (exit code 2)."""

    exit_code = 2


class ResumeRefused(UsageError):
    """A resume value a paused thread's round review does not take; it stays paused there.

    Not a ``ValueError``: LangGraph checks a resume value with pydantic before it saves
    it, and pydantic would wrap a ``ValueError`` in a many-line ``ValidationError``
    (:mod:`debategraph.nodes.review`).
    """


class ModelUnavailableError(DebategraphError):
    """The model endpoint could not be reached or kept failing after its retries.

    The graph run stops at the failing node, so the thread stays resumable.
    """


class BudgetSpentError(DebategraphError):
    """A served user's token budget for the day is spent.

    Raised before a model call of the user's run, it stops the run there, so the thread
    stays resumable (:mod:`debategraph.serve.limits`).
    """


class CostLimitReached(DebategraphError):
    """A model call was not made: it could have taken the spend past ``--max-cost``.

    Raised before the call (:class:`debategraph.models.money.Budget`), it stops the run
    there, so the thread stays resumable.
    """


class LocalModelError(DebategraphError):
    """The embedded llama.cpp server could not be started."""


class UnreadableCheckpointError(DebategraphError, ValueError):
    """A stored checkpoint this version cannot read (written by a newer version)."""
