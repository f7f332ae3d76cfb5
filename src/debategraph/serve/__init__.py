"""debategraph on an Agent Protocol server: Aegra on PostgreSQL (``debategraph[serve]``).

``debategraph serve --db postgresql://...`` checks the config and the database, then runs
Aegra's server in this process with every pattern's graph (``graphs/studio.py``); a
``langgraph-sdk`` client starts, streams, pauses, interjects and resumes debates on it.
Several such processes on one database serve the same threads. See the README's
"Serving debategraph".

Modules: :mod:`~debategraph.serve.config` (what is checked and served),
:mod:`~debategraph.serve.app` (the app Aegra mounts: the input check),
:mod:`~debategraph.serve.server` (starting it).
"""

from debategraph.serve.config import check_database, serve_config
from debategraph.serve.server import serve

__all__ = ["check_database", "serve", "serve_config"]
