"""Node functions: the shared core, and one package per pattern.

The shared core, which every pattern builds on: :mod:`~debategraph.nodes.rounds` (the
round loop, interjections, the review point, stop requests, the deadline),
:mod:`~debategraph.nodes.agent` (an agent and the model it calls),
:mod:`~debategraph.nodes.roster` (checking rosters), :mod:`~debategraph.nodes.conversation`
(what a speaker reads of a shared conversation) and :mod:`~debategraph.nodes.dual` (one
node body, sync and async).

Each pattern's package (``debategraph.nodes.<pattern>``) has the same files: ``setup.py``
(its settings checks, the frozen settings record its nodes share, node names, defaults),
``prompts.py`` (its prompts, as constants), one module per phase of its graph (e.g. the
debate's ``rounds.py`` and ``officials.py``; a ``views.py`` holds what its agents read),
and an ``__init__`` that only re-exports. These packages are internal: a pattern's public
face is its factory (``debategraph.build_<pattern>``); see ``docs/architecture.md``.
"""
