"""The one agent-node helper: which model an agent calls, the call itself, its usage.

Every pattern's agent nodes call the model through an :class:`Agent`: it finds the model
(the one the graph was built with, else the run's :class:`~debategraph.context.Context`,
as in LangGraph Studio), makes the structured or text call through
:mod:`debategraph.models` (validation, repair, retry, fallback, usage), blocking
(:meth:`Agent.ask`), awaited (:meth:`Agent.aask`) or as steps a node body yields from
(:meth:`Agent.ask_steps`, see :mod:`debategraph.nodes.dual`). Nodes turn the result into
a transcript record and write it with :func:`~debategraph.state.base.turn_update`, which
charges its usage.

The model stack (``openai``, ``langchain-openai``) is imported on the first call, not when
a graph module is imported: declaring or validating a graph stays quick.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from pydantic import BaseModel

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel
    from langchain_core.messages import BaseMessage
    from langgraph.runtime import Runtime

    from debategraph.context import Context
    from debategraph.models import CallResult, ModelBinding, ModelSpec, Steps, TextResult

S = TypeVar("S", bound=BaseModel)


def bind(model: BaseChatModel | ModelBinding | ModelSpec | None) -> ModelBinding | None:
    """What a graph factory keeps of its ``model`` argument.

    Args:
        model: A chat model, binding or spec; ``None`` reads the model from each run's
            context.

    Returns:
        The binding, or ``None``.
    """
    if model is None:
        return None
    from debategraph.models import bind_model

    return bind_model(model)


@dataclass(frozen=True)
class Agent:
    """One agent of a graph: its name and the model it calls.

    Attributes:
        name: The agent's name (as recorded on its turns and usage).
        model: The model the graph was built with; ``None`` reads the run's context.
    """

    name: str
    model: ModelBinding | None = None

    def binding(self, runtime: Runtime[Context] | None) -> ModelBinding:
        """The model this agent calls in this run.

        Args:
            runtime: The node's runtime (its context names the model).

        Returns:
            The bound model.
        """
        if self.model is not None:
            return self.model
        from debategraph.models import bind_model

        return bind_model(runtime.context if runtime is not None else None)

    def ask_steps(
        self,
        runtime: Runtime[Context] | None,
        schema: type[S],
        messages: Sequence[BaseMessage],
        **kwargs: Any,
    ) -> Steps[CallResult[S]]:
        """The steps of a structured reply, for a node body (``yield from`` them).

        See :func:`~debategraph.models.structured_call` and
        :func:`~debategraph.nodes.dual.agent_node`.

        Args:
            runtime: The node's runtime (its context names the model).
            schema: The pydantic model the reply must fit.
            messages: The prompt.
            **kwargs: Passed on (``max_attempts``).

        Returns:
            The steps; they return the validated value (or ``None`` with a reason) and
            its usage.
        """
        from debategraph.models import structured_steps

        return structured_steps(self.binding(runtime), schema, messages, **kwargs)

    def say_steps(
        self, runtime: Runtime[Context] | None, messages: Sequence[BaseMessage], **kwargs: Any
    ) -> Steps[TextResult]:
        """The steps of a prose reply, for a node body; its tokens stream.

        See :func:`~debategraph.models.text_call`; taken as :meth:`ask_steps` are.

        Args:
            runtime: The node's runtime.
            messages: The prompt.
            **kwargs: Passed on (``max_attempts``).

        Returns:
            The steps; they return the text (or ``""`` with a reason) and its usage.
        """
        from debategraph.models import text_steps

        return text_steps(self.binding(runtime), messages, **kwargs)

    def ask(
        self,
        runtime: Runtime[Context] | None,
        schema: type[S],
        messages: Sequence[BaseMessage],
        **kwargs: Any,
    ) -> CallResult[S]:
        """A structured reply, with blocking calls (:meth:`ask_steps`, run).

        Takes what :meth:`ask_steps` takes; returns what its steps return.
        """
        from debategraph.models import run_steps

        return run_steps(self.ask_steps(runtime, schema, messages, **kwargs))

    def say(
        self, runtime: Runtime[Context] | None, messages: Sequence[BaseMessage], **kwargs: Any
    ) -> TextResult:
        """A prose reply, with blocking calls (:meth:`say_steps`, run).

        Takes what :meth:`say_steps` takes; returns what its steps return.
        """
        from debategraph.models import run_steps

        return run_steps(self.say_steps(runtime, messages, **kwargs))

    async def aask(
        self,
        runtime: Runtime[Context] | None,
        schema: type[S],
        messages: Sequence[BaseMessage],
        **kwargs: Any,
    ) -> CallResult[S]:
        """:meth:`ask` for async code: it awaits the model, on no thread."""
        from debategraph.models import arun_steps

        return await arun_steps(self.ask_steps(runtime, schema, messages, **kwargs))

    async def asay(
        self, runtime: Runtime[Context] | None, messages: Sequence[BaseMessage], **kwargs: Any
    ) -> TextResult:
        """:meth:`say` for async code: it awaits the model, on no thread."""
        from debategraph.models import arun_steps

        return await arun_steps(self.say_steps(runtime, messages, **kwargs))
