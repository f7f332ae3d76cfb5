"""Prompt templates of the solver debate, kept as constants (one place to read and change them).

The human-interjection paragraph and the round-review message are the shared ones in
:mod:`debategraph.prompts` (rendered by :mod:`debategraph.nodes.rounds`).
"""

SOLVER_SYSTEM = (
    "You are {solver}, one of {n_solvers} agents solving a math word problem. "
    "Reason briefly, step by step; answer with one number."
)

#: A solver's own instructions (its record's ``instructions``), after its system prompt.
SOLVER_INSTRUCTIONS = "{system}\n\n{instructions}"

SOLVER_SYSTEM_EXPRESSION = (
    "You are {solver}, one of {n_solvers} agents solving a math problem. "
    "Reason briefly, step by step; answer with the final answer alone, in LaTeX, without "
    "words (for example \\frac{{\\sqrt{{2}}}}{{2}}, [1, 3) or x^2+1)."
)

SOLVER_SYSTEM_CHOICE = (
    "You are {solver}, one of {n_solvers} agents answering a multiple-choice question. "
    "Reason briefly, step by step; answer with the letter of one choice."
)

#: A multiple-choice question as the solvers read it: the question, then one line per choice.
CHOICE_QUESTION = "{question}\n\nChoices:\n{choices}"

CHOICE_LINE = "{letter}) {text}"

SOLVER_FIRST_ROUND = "Question: {question}\n\n{human}Solve it."

SOLVER_REFINE = (
    "Question: {question}\n\n"
    "Your previous answer: {own}\n\n"
    "Your neighbours' solutions:\n{peers}\n\n"
    "{human}"
    "Check their reasoning and yours step by step, then solve it again."
)

SOLUTION_VIEW = "{agent}: {content}\nAnswer: {answer}"

NO_ANSWER = "(no answer)"

JUDGE_SYSTEM = (
    "You are the judge of {n_solvers} agents who solved a math word problem and disagree. "
    "Read each agent's final answer and the gist of its reasoning, check the reasoning step "
    "by step, and pick the answer that is correct. Answer with one number, exactly as one "
    "of the agents gave it."
)

JUDGE_SYSTEM_EXPRESSION = (
    "You are the judge of {n_solvers} agents who solved a math problem and disagree. "
    "Read each agent's final answer and the gist of its reasoning, check the reasoning step "
    "by step, and pick the answer that is correct. Answer with the final answer alone, in "
    "LaTeX, as one of the agents gave it."
)

JUDGE_SYSTEM_CHOICE = (
    "You are the judge of {n_solvers} agents who answered a multiple-choice question and "
    "disagree. Read each agent's final answer and the gist of its reasoning, check the "
    "reasoning step by step, and pick the answer that is correct. Answer with the letter of "
    "one choice that one of the agents gave."
)

#: The solver's system prompt by the form its answer takes (``answers.answer_form``).
SOLVER_SYSTEMS = {
    "number": SOLVER_SYSTEM,
    "expression": SOLVER_SYSTEM_EXPRESSION,
    "choice": SOLVER_SYSTEM_CHOICE,
}

#: The judge's system prompt by the form the answers take.
JUDGE_SYSTEMS = {
    "number": JUDGE_SYSTEM,
    "expression": JUDGE_SYSTEM_EXPRESSION,
    "choice": JUDGE_SYSTEM_CHOICE,
}

JUDGE_TASK = (
    "Question: {question}\n\nThe agents' final solutions:\n{finals}\n\nWhich answer is correct?"
)
