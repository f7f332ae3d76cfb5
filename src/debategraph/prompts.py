"""Prompt templates, kept as constants (one place to read and change them)."""

SOLVER_SYSTEM = (
    "You are {solver}, one of {n_solvers} agents solving a math word problem together. "
    "Reason step by step, briefly, then give the final answer as a single number."
)

SOLVER_FIRST_ROUND = (
    "Question: {question}\n\n"
    "Solve the problem. Put your short step-by-step reasoning in `reasoning` and only the "
    "final number in `answer`."
)

SOLVER_REFINE = (
    "Question: {question}\n\n"
    "Your previous solution (round {prev_round}):\n{own}\n\n"
    "Solutions from the agents you can hear:\n{peers}\n\n"
    "Using the other agents' reasoning as additional advice, examine your solution and "
    "theirs step by step, then give an updated answer. Put your reasoning in `reasoning` "
    "and only the final number in `answer`."
)

SOLUTION_VIEW = "{agent}: {content}\nFinal answer: {answer}"

NO_ANSWER = "(no answer)"
