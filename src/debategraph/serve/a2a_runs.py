"""A served pattern as an A2A agent's work: :class:`PatternExecutor`, ``a2a-sdk``'s executor.

Each A2A task is run through the server's own Agent Protocol, as the user who sent it
(:mod:`~debategraph.serve.loopback`): a run it makes is checked, owned and counted like
any other. What A2A names maps onto a thread:

- **contextId is the thread.** A context id that is a UUID is the thread's id; any
  other string names the thread :func:`thread_of` derives from it. A new context makes
  a new thread, owned by the sender; a context whose thread is another user's is
  refused as not found (the server's own answer to that user).
- **The message is the human message.** Its text parts, joined, are the pattern's
  ``messages`` input (each pattern reads its question, topic, document or task from
  the last human message). The request's ``metadata`` may hold ``context`` (the run's
  context, as on the Agent Protocol: ``{"model": NAME, ...}``, checked against the
  operator's list) and ``review: true`` (pause after each round); the task keeps both
  for the messages that follow.
- **Progress is status updates.** Each event of the run's custom stream (a round
  opening, a round's votes, a decision: :func:`debategraph.nodes.messages.emit`) is a
  ``working`` status update with one line of text and the event as its metadata.
- **The answer is the artifact.** The run's outcome (the ``outcome`` event's text)
  is the task's ``outcome`` artifact and its final status message; the task completes.
- **A pause is input-required.** A run that pauses (a round review's interrupt, or
  with ``review: true`` the thread waiting between rounds) leaves the task
  ``input-required`` with the review's text. The next message on the task (or its
  context) resumes it: an empty message or ``approve`` goes on, any other text is the
  human's interjection, which every agent reads next round (resumed with the values
  every review takes: ``{"approve": true}`` / ``{"interject": TEXT}``).
- **Cancel stops the run.** The thread's runs are cancelled (``action=interrupt``): its
  checkpoints stay, and a message on the same context goes on from where it stopped.

A refusal by the server (a model the list does not hold, a bad input, too many runs,
another user's thread) ends the task ``rejected`` with the server's one line; a run that
fails ends it ``failed`` with its error's line.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.tasks import TaskUpdater
from a2a.types.a2a_pb2 import Message, Part, Task, TaskState, TaskStatus
from google.protobuf.json_format import MessageToDict  # type: ignore[import-untyped]

from debategraph import registry
from debategraph.nodes.messages import OUTCOME_STAGE
from debategraph.nodes.rounds import BOUNDARY_NODES, REVIEW_NODE
from debategraph.runs.account import Account
from debategraph.serve.loopback import Loopback, refusal_line

if TYPE_CHECKING:
    from a2a.server.events import EventQueue
    from langgraph_sdk.client import LangGraphClient

#: Where the request's :class:`~debategraph.serve.loopback.Loopback` is kept in its
#: ``ServerCallContext.state``.
LOOPBACK = "debategraph.loopback"
#: The words of a message that approves a paused round (besides an empty one).
APPROVE_WORDS = frozenset({"approve", "approved", "ok", "continue", "go on"})
#: The namespace of the threads of context ids that are not UUIDs.
CONTEXT_NAMESPACE = uuid.uuid5(uuid.NAMESPACE_URL, "https://debategraph/a2a/context")
#: The metadata keys a request (and its task) may set.
SETTINGS = ("context", "review")
#: What a thread paused between rounds (not at an interrupt) asks the human.
BETWEEN_ROUNDS = (
    "{Word} {round} is done. Reply with text to interject (every agent reads it next "
    "{word}), or send an empty message or 'approve' to go on."
)
#: The run statuses a cancel stops.
LIVE_RUNS = ("pending", "running")


class Refused(Exception):
    """The server refused what a message asks (one line: the task is rejected)."""


class RunFailed(Exception):
    """The task's run failed (one line: the task failed)."""


def thread_of(context_id: str) -> str:
    """The thread an A2A context id names.

    Args:
        context_id: The context id (a UUID is the thread's own id).

    Returns:
        The thread id: the UUID as it is, or one derived from the text.
    """
    try:
        return str(uuid.UUID(context_id))
    except ValueError:
        return str(uuid.uuid5(CONTEXT_NAMESPACE, context_id))


@dataclass(frozen=True)
class Settings:
    """What a task runs with: the run's context and whether it pauses between rounds.

    Attributes:
        context: The run's context (model names, never endpoints: the server checks).
        review: Pause after each round for the human.
    """

    context: Mapping[str, Any] | None = None
    review: bool = False

    @classmethod
    def of(cls, request: Mapping[str, Any], task: Task | None) -> Settings:
        """The request's settings, else its task's.

        Args:
            request: The request's ``metadata``.
            task: The task it continues (``None``: a new one).

        Returns:
            The settings.

        Raises:
            Refused: If ``context`` is not an object or ``review`` not a boolean.
        """
        kept: dict[str, Any] = MessageToDict(task.metadata) if task is not None else {}
        given = {**kept, **{k: request[k] for k in SETTINGS if k in request}}
        context, review = given.get("context"), given.get("review", False)
        if context is not None and not isinstance(context, Mapping):
            raise Refused(f"metadata.context must be an object, not {context!r}")
        if not isinstance(review, bool):
            raise Refused(f"metadata.review must be true or false, not {review!r}")
        return cls(context, review)

    def as_metadata(self) -> dict[str, Any]:
        """The settings as a task's metadata."""
        return {"review": self.review, **({"context": dict(self.context)} if self.context else {})}


def agent_message(updater: TaskUpdater, text: str) -> Message:
    """A message of the agent's on the task: one text part."""
    return updater.new_agent_message([Part(text=text)])


def review_text(value: Any) -> str:
    """The text a human reads at a pause, from the interrupt's value.

    Args:
        value: The interrupt's value: a round review's payload (its ``message``), a
            ``HITLRequest`` (its actions' descriptions), a string, or anything else
            (shown as JSON).

    Returns:
        The text.
    """
    if isinstance(value, str):
        return value
    if isinstance(value, Mapping):
        if isinstance(value.get("message"), str):
            return str(value["message"])
        actions = value.get("action_requests")
        if isinstance(actions, list):
            lines = [a.get("description") for a in actions if isinstance(a, Mapping)]
            if any(isinstance(line, str) and line for line in lines):
                return "\n".join(line for line in lines if isinstance(line, str) and line)
    return json.dumps(value, default=str)


def resume_of(state: Mapping[str, Any], text: str) -> dict[str, Any]:
    """The run that resumes a paused thread with a human's message.

    Args:
        state: The thread's state (``langgraph-sdk``'s ``threads.get_state``).
        text: The message's text (empty or an :data:`APPROVE_WORDS` word: approve).

    Returns:
        The run's ``command`` or ``input``: a resume value at an interrupt, else the
        interjection as a transcript update (or no input) at a pause between rounds.
    """
    approve = not text or text.lower() in APPROVE_WORDS
    if interrupts_of(state):
        return {"command": {"resume": {"approve": True} if approve else {"interject": text}}}
    if approve:
        return {"input": None}
    return {"command": {"update": {"transcript": [{"role": "user", "content": text}]}}}


def interrupts_of(state: Mapping[str, Any]) -> list[Any]:
    """The values of a thread's pending interrupts."""
    tasks = state.get("tasks") or []
    return [i.get("value") for t in tasks for i in (t.get("interrupts") or [])]


def one_line(exc: Exception) -> str:
    """The server's one line for a refused request (its body's ``message``).

    Args:
        exc: What ``langgraph-sdk`` raised (an ``httpx.HTTPStatusError``), or a
            :class:`RunFailed`.

    Returns:
        The line.
    """
    import httpx

    if isinstance(exc, RunFailed):
        return str(exc)
    if isinstance(exc, httpx.HTTPStatusError):
        return refusal_line(exc)
    return f"the server could not be reached ({type(exc).__name__})"


class PatternExecutor(AgentExecutor):
    """Runs one served pattern for A2A tasks (see the module's docstring).

    Attributes:
        graph_id: The pattern's graph id (its registry name).
        boundary: Where its threads wait between rounds (the breakpoints of ``review``).
        word: What the pattern calls a round, in the text of a pause between rounds.
    """

    def __init__(self, graph_id: str) -> None:
        """Serve the pattern ``graph_id``."""
        self.graph_id = graph_id
        described = registry.described(graph_id)
        self.boundary = sorted((described.boundary_nodes or BOUNDARY_NODES) - {REVIEW_NODE})
        self.word = described.round_word
        self._running: set[str] = set()
        self._cancelled: set[str] = set()

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        """Run (or resume) the task's thread until it ends or pauses."""
        task_id, context_id = str(context.task_id), str(context.context_id)
        updater = TaskUpdater(event_queue, task_id, context_id)
        task = context.current_task
        refused: str | None = None
        try:
            settings = Settings.of(context.metadata, task)
        except Refused as exc:
            settings, refused = Settings(), str(exc)
        if task is None:
            await event_queue.enqueue_event(
                Task(
                    id=task_id,
                    context_id=context_id,
                    status=TaskStatus(state=TaskState.TASK_STATE_SUBMITTED),
                    history=[context.message] if context.message else [],
                    metadata=settings.as_metadata(),
                )
            )
        if refused is not None:
            await updater.reject(agent_message(updater, refused))
            return
        self._running.add(task_id)
        try:
            await self._execute(context, settings, updater)
        finally:
            self._running.discard(task_id)
            self._cancelled.discard(task_id)

    async def _execute(
        self, context: RequestContext, settings: Settings, updater: TaskUpdater
    ) -> None:
        import httpx

        loopback: Loopback = context.call_context.state[LOOPBACK]
        thread_id = thread_of(updater.context_id)
        async with loopback.client() as sdk:
            try:
                await self._run(sdk, thread_id, context.get_user_input(), settings, updater)
                return
            except Refused as exc:
                state, line = TaskState.TASK_STATE_REJECTED, str(exc)
            except httpx.HTTPStatusError as exc:
                state, line = TaskState.TASK_STATE_REJECTED, one_line(exc)
            except (RunFailed, httpx.TransportError) as exc:
                state, line = TaskState.TASK_STATE_FAILED, one_line(exc)
        if updater.task_id not in self._cancelled:  # else its run failed as it was stopped
            await updater.update_status(state, agent_message(updater, line))

    async def _run(
        self,
        sdk: LangGraphClient,
        thread_id: str,
        text: str,
        settings: Settings,
        updater: TaskUpdater,
    ) -> None:
        text = text.strip()
        state = await self._thread_state(sdk, thread_id)
        run: dict[str, Any]
        if state is not None and state.get("next"):
            run = resume_of(state, text)
        elif not text:
            raise Refused(f"send the {self.graph_id}'s question, topic, document or task as text")
        else:
            run = {"input": {"messages": [{"role": "user", "content": text}]}}
        while True:
            await updater.start_work()
            outcome = await self._stream(sdk, thread_id, run, settings, updater)
            if updater.task_id in self._cancelled:
                return  # cancel() says so
            state = await sdk.threads.get_state(thread_id)
            if not state.get("next"):
                break
            interrupts = interrupts_of(state)
            values = state.get("values") or {}
            rnd = values.get("round") if isinstance(values, Mapping) else None
            if not interrupts and not rnd:  # paused before round 1: nothing to review
                run = {"input": None}
                continue
            word = self.word
            text = (
                "\n\n".join(review_text(v) for v in interrupts)
                if interrupts
                else BETWEEN_ROUNDS.format(Word=word.capitalize(), word=word, round=rnd)
            )
            await updater.requires_input(agent_message(updater, text))
            return
        if outcome is None:
            await updater.failed(agent_message(updater, "the run ended with no outcome"))
            return
        await updater.add_artifact([Part(text=outcome)], name=OUTCOME_STAGE)
        await updater.complete(agent_message(updater, outcome))

    async def _thread_state(self, sdk: LangGraphClient, thread_id: str) -> Any:
        """The state of the sender's thread, or ``None`` for a thread made now.

        Raises:
            Refused: If the thread is another user's, or another pattern's.
        """
        import httpx

        try:
            thread = await sdk.threads.get(thread_id)
        except httpx.HTTPStatusError as exc:
            if exc.response.status_code != 404:
                raise
            try:
                await sdk.threads.create(
                    thread_id=thread_id,
                    if_exists="raise",
                    metadata={"graph_id": self.graph_id},
                )
            except httpx.HTTPStatusError as conflict:
                if conflict.response.status_code in (404, 409):
                    raise Refused(f"context {thread_id} not found") from None
                raise
            return None
        metadata = thread.get("metadata") or {}
        graph = metadata.get("graph_id") if isinstance(metadata, Mapping) else None
        if graph not in (None, self.graph_id):
            raise Refused(f"context {thread_id} is a {graph}: send its messages to /a2a/{graph}")
        return await sdk.threads.get_state(thread_id)

    async def _stream(
        self,
        sdk: LangGraphClient,
        thread_id: str,
        run: dict[str, Any],
        settings: Settings,
        updater: TaskUpdater,
    ) -> str | None:
        """Stream one run, its progress as status updates; its outcome's text, if any.

        Raises:
            RunFailed: If the run fails (its error's line).
        """
        account = Account(self.graph_id)
        async for part in sdk.runs.stream(
            thread_id,
            self.graph_id,
            stream_mode="custom",
            context=dict(settings.context) if settings.context else None,
            interrupt_before=self.boundary if settings.review else None,
            **run,
        ):
            data = part.data
            if part.event == "error":
                message = data.get("message") if isinstance(data, Mapping) else data
                raise RunFailed(f"the run failed: {str(message).splitlines()[0]}")
            if part.event != "custom" or not isinstance(data, Mapping):
                continue
            step = account.read(data)
            if step is None or account.outcome is not None:
                continue
            await updater.update_status(
                TaskState.TASK_STATE_WORKING,
                message=agent_message(updater, step.message),
                metadata=dict(data),
            )
        return None if account.outcome is None else str(account.outcome.get("text", ""))

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        """Stop the task's runs; the thread keeps its checkpoints (resumable)."""
        import httpx

        updater = TaskUpdater(event_queue, str(context.task_id), str(context.context_id))
        if updater.task_id in self._running:
            self._cancelled.add(updater.task_id)
        thread_id = thread_of(updater.context_id)
        loopback: Loopback = context.call_context.state[LOOPBACK]
        async with loopback.client() as sdk:
            for status in LIVE_RUNS:
                try:
                    runs = await sdk.runs.list(thread_id, status=status)  # type: ignore[arg-type]
                except httpx.HTTPStatusError:
                    runs = []
                for found in runs:
                    await sdk.runs.cancel(thread_id, found["run_id"], wait=True)
        line = "cancelled: the thread keeps its checkpoints; a message on this context goes on"
        await updater.cancel(agent_message(updater, line))
