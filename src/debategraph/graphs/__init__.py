"""One module per pattern: ``build_<pattern>(...)`` returns an uncompiled ``StateGraph``."""

from debategraph.graphs.debate import build_debate
from debategraph.graphs.discussion import build_discussion
from debategraph.graphs.solver_debate import build_solver_debate

__all__ = ["build_debate", "build_discussion", "build_solver_debate"]
