"""One module per pattern: ``build_<pattern>(...)`` returns an uncompiled ``StateGraph``.

A factory module holds only its factory: it checks its settings with its pattern's
``nodes/<pattern>/setup.py``, starts from :func:`~debategraph.graphs.skeleton.skeleton`
(context schema, the pattern's schemas, the model bound once, the round cap recorded,
the shared ``take_input`` and ``respond`` nodes at its ends) and adds its nodes; compiled,
a graph carries the recursion limit it needs
(:func:`~debategraph.graphs.skeleton.recursion_limit`). :mod:`~debategraph.graphs.tool`
makes a compiled graph a LangChain tool. :mod:`~debategraph.graphs.studio` compiles
every built-in pattern for LangGraph Studio. Which patterns exist is
:mod:`debategraph.registry`'s list; the public names are ``debategraph``'s.
"""
