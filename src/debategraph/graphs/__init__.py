"""One module per pattern: ``build_<pattern>(...)`` returns an uncompiled ``StateGraph``."""

from debategraph.graphs.solver_debate import build_solver_debate

__all__ = ["build_solver_debate"]
