"""One module per pattern: ``build_<pattern>(...)`` returns an uncompiled ``StateGraph``.

Every factory starts from :func:`~debategraph.graphs.skeleton.skeleton` and its graph's
:func:`~debategraph.graphs.skeleton.recursion_limit` comes from there; which patterns
exist is :mod:`debategraph.registry`'s list. The public names are ``debategraph``'s.
"""
