"""``debategraph mcp``: every pattern as an MCP tool, served over stdio to one client.

An MCP client (Claude Desktop, an IDE, ``langchain-mcp-adapters``) starts the command and
speaks MCP on its stdin and stdout; each registered pattern is a tool
(:mod:`debategraph.runs.mcp_server`). A call runs its pattern as a pattern command
does: checked with :func:`~debategraph.runs.start.new_run` before anything is written,
recorded in ``--db`` (SQLite or Postgres, so ``debategraph threads`` lists it and
``debategraph view`` shows it), driven with :class:`~debategraph.runs.thread.Run` (each
round's progress sent to the client), archived at its end. The model and the database are
the command's: the shared run options of every pattern command, but those of one run
(``--thread``, ``--pause-after-round``, ``--json``); a caller chooses the text, the
rounds, a solver debate's number of solvers and, on a remote endpoint, a model it serves.
Nothing is printed on stdout but MCP.
"""

from __future__ import annotations

import inspect
import uuid
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from debategraph.cli import options
from debategraph.cli.group import app
from debategraph.errors import CostLimitReached, ModelUnavailableError, UsageError

if TYPE_CHECKING:  # the command's modules load when it runs, not with every command
    from debategraph.models.spec import ModelSpec
    from debategraph.runs.mcp_server import Call

#: The shared run options a server of many runs does not take (they are one run's).
ONE_RUNS = ("pause_after_round", "thread", "json_output")
#: How a tool's input names the settings, in messages.
ARGUMENT_OF = {"max_rounds": "rounds", "agents": "agents"}
HELP = (
    "Serve every pattern as an MCP tool over stdio (for Claude Desktop or any MCP client): "
    "each call runs on the model and database given here, its thread listed by "
    "debategraph threads."
)
MODEL_HELP = (
    "A model the server's endpoint serves, by name (default: the server's --model); "
    "only on a server started with --base-url."
)


@dataclass(frozen=True)
class Served:
    """What every call of this server runs with: its options, read once.

    Attributes:
        spec: The model (``--model``, ``--base-url``...).
        db: ``--db``.
        archive: ``--archive`` (``None``: beside ``--db``).
        max_concurrency: ``--max-concurrency``.
        max_cost: ``--max-cost``, per call.
    """

    spec: ModelSpec
    db: str
    archive: str | None
    max_concurrency: int | None
    max_cost: float | None

    def model(self, name: str | None) -> ModelSpec:
        """The model a call names, at the server's endpoint (``None``: the server's).

        Raises:
            UsageError: If the server runs the embedded model (it serves no other name).
        """
        if name is None or name == self.spec.model:
            return self.spec
        if self.spec.is_local:
            raise UsageError(
                f"model {name!r}: this server runs the embedded model only; start it with "
                "--model NAME --base-url URL to let callers name the endpoint's models"
            )
        return replace(self.spec, model=name).validated()

    def run(self, call: Call, feed: Any) -> str:
        """Run one call to its end as a pattern command does: its thread's id.

        Args:
            call: The call.
            feed: Called with each custom event of the run (from this thread).

        Returns:
            The new thread's id.

        Raises:
            ValueError: An input its graph refuses.
            UsageError: A setting the factory refuses, a model its endpoint does not serve.
            ModelUnavailableError: The endpoint failed (the thread stays resumable).
            CostLimitReached: ``--max-cost`` reached (the thread stays resumable).
        """
        from debategraph.checkpoints import inbox
        from debategraph.checkpoints.savers import open_checkpointer
        from debategraph.graphs.inputs import check_input
        from debategraph.registry import described
        from debategraph.runs.finish import archive_thread, default_archive
        from debategraph.runs.human import close_inbox
        from debategraph.runs.results import thread_wall
        from debategraph.runs.start import new_run
        from debategraph.runs.thread import Run

        check_input(call.pattern, call.graph_input())
        spec = self.model(call.model)
        checked = new_run(
            call.pattern, call.settings(), spec, self.max_concurrency, names=ARGUMENT_OF
        )
        thread_id = uuid.uuid4().hex[:12]
        with open_checkpointer(self.db) as saver, inbox.open_store(self.db) as store:
            run = Run(
                saver,
                checked.info,
                store=store,
                max_concurrency=checked.max_concurrency,
                model=checked.spec,
                built=checked.graph,
                max_cost=self.max_cost,
            )
            run.record(thread_id, call.graph_input())
            try:
                run.drive(
                    thread_id, None, modes=["custom"], on_chunk=lambda _, e: feed(e), ask=_never
                )
            except (ModelUnavailableError, CostLimitReached) as exc:
                resume = f"debategraph resume {thread_id} --db {self.db}"
                raise type(exc)(f"{exc}; thread {thread_id} is resumable: {resume}") from exc
            values = run.values(thread_id)
            close_inbox(store, thread_id, values.get("transcript") or [])
            archive_thread(
                self.archive or default_archive(self.db),
                described(call.pattern),
                self.db,
                thread_id,
                values,
                thread_wall(saver, self.db, thread_id),
            )
        return thread_id


def _never(payload: Any) -> None:
    """Nobody answers a pause: a tool's run pauses at none (``pause_after_round`` off)."""


def serve_stdio(served: Served) -> None:
    """Serve every pattern as an MCP tool on stdin and stdout until the client leaves.

    Args:
        served: What every call runs with.
    """
    import anyio
    from anyio import from_thread, to_thread

    from debategraph.runs.mcp_server import Offer, mcp_server

    try:
        from mcp.server.stdio import stdio_server
    except ImportError:
        raise UsageError(
            "debategraph mcp needs the mcp package: pip install 'debategraph[mcp]'"
        ) from None

    async def runs(call: Call, feed: Any) -> str:
        def sync_feed(event: Any) -> None:
            from_thread.run(feed, event)

        return await to_thread.run_sync(served.run, call, sync_feed)

    offer = Offer(settings=True, models=None, model_help=MODEL_HELP)
    server = mcp_server("debategraph", offer, runs)

    async def main() -> None:
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())

    anyio.run(main)


def mcp_command(**given: Any) -> None:
    """Serve every pattern as an MCP tool over stdio (for Claude Desktop or any MCP client).

    Each pattern is a tool taking its question, topic, document or task (and rounds, a
    solver debate's number of solvers, a model by name); each call runs on the model
    and database given here, as a pattern command would, and its thread is listed by
    ``debategraph threads``.
    """
    with options.cache_opened(given["cache"]):  # a bad --cache: refused before serving
        served = Served(
            options.model_spec(given),
            given["db"],
            given["archive"],
            given["max_concurrency"],
            options.max_cost_of(given["max_cost"]),
        )
        from debategraph.runs.start import check_concurrency

        check_concurrency(served.max_concurrency)
        serve_stdio(served)


_SHARED = inspect.signature(options.run_options, eval_str=True).parameters
mcp_command.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
    [p for name, p in _SHARED.items() if name not in ONE_RUNS]
)
app.command(name="mcp", help=HELP)(mcp_command)
