"""Prompt templates, kept as constants (one place to read and change them)."""

SOLVER_SYSTEM = (
    "You are {solver}, one of {n_solvers} agents solving a math word problem. "
    "Reason briefly, step by step; the answer is a single number."
)

SOLVER_FIRST_ROUND = "Question: {question}\n\nSolve it."

SOLVER_REFINE = (
    "Question: {question}\n\n"
    "Your previous solution:\n{own}\n\n"
    "Solutions of the agents you hear:\n{peers}\n\n"
    "Use their reasoning as advice: check yours and theirs step by step, then answer again."
)

SOLUTION_VIEW = "{agent}: {content}\nAnswer: {answer}"

NO_ANSWER = "(no answer)"
