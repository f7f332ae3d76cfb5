"""Prompt templates, kept as constants (one place to read and change them)."""

SOLVER_SYSTEM = (
    "You are {solver}, one of {n_solvers} agents solving a math word problem. "
    "Reason briefly, step by step; the answer is a single number."
)

SOLVER_FIRST_ROUND = "Question: {question}\n\n{human}Solve it."

SOLVER_REFINE = (
    "Question: {question}\n\n"
    "Your previous solution:\n{own}\n\n"
    "Solutions of the agents you hear:\n{peers}\n\n"
    "{human}"
    "Use their reasoning as advice: check yours and theirs step by step, then answer again."
)

HUMAN_INTERJECTION = "A human moderator says (take it into account):\n{notes}\n\n"

SOLUTION_VIEW = "{agent}: {content}\nAnswer: {answer}"

NO_ANSWER = "(no answer)"

ROUND_REVIEW = (
    "Round {round} of {rounds} is done. Approve to go on, or interject: your text is shown "
    "to every solver next round."
)

# -- debate ------------------------------------------------------------------------------

DEBATER_SYSTEM = (
    "You are {name}, a debater arguing {side}.{persona} The debaters are: {roster}. "
    "Argue your side honestly and persuasively, in plain prose without headings."
)

DEBATER_PERSONA = " Persona: {persona}"

DEBATE_OPENING = (
    "Motion: {topic}\n\n"
    "{summary}{history}{human}"
    "No opposing argument has been made to you yet. Make the case for your side: state "
    "your position on the motion and your strongest arguments, in at most {words} words."
)

DEBATE_REPLY = (
    "Motion: {topic}\n\n"
    "{summary}{history}"
    "Latest opposing argument, from {opponent}:\n{latest}\n\n"
    "{human}"
    "Respond to this latest opposing argument in at most {words} words: rebut its main "
    "point and advance your own side."
)

DEBATE_SUMMARY_VIEW = "Summary of the earlier debate:\n{summary}\n\n"

DEBATE_HISTORY_VIEW = "The debate so far, oldest first:\n{turns}\n\n"

DEBATE_TURN_VIEW = "[round {round}] {speaker}: {content}"

DEBATE_YOU = "{name} (you)"

MODERATOR_SYSTEM = (
    "You moderate a debate between {roster}. After each round you decide whether the "
    "debate is settled (one side has clearly won, or the debaters only repeat themselves) "
    "and who is leading."
)

MODERATOR_TASK = (
    "Motion: {topic}\n\n"
    "{summary}{history}"
    "Round {round} of at most {rounds} is over. Is the debate settled? Name who is "
    "leading: one of {names}, or 'tie'."
)

JUDGE_SYSTEM = (
    "You judge a debate between {roster}. Judge the arguments that were made, not your "
    "own opinion of the motion."
)

JUDGE_CRITERIA = "logic, evidence, rebuttal"

JUDGE_TASK = (
    "Motion: {topic}\n\n"
    "{summary}{history}"
    "The debate is over. Give your verdict: the winner (one of {names}, or 'tie'); a "
    "score from 1 to 10 for each debater on each criterion ({criteria}); your rationale; "
    "and each debater's strongest argument."
)

SUMMARIZER_SYSTEM = "You summarise debates faithfully and briefly, naming who argued what."

SUMMARIZE_TASK = (
    "Motion: {topic}\n\n"
    "{summary}"
    "Arguments to add, oldest first:\n{turns}\n\n"
    "Write an updated summary of the whole debate so far in at most {words} words: each "
    "debater's main arguments and rebuttals, attributed by name."
)

DEBATE_ROUND_REVIEW = (
    "Round {round} of {rounds} is done. Approve to go on, or interject: your text is shown "
    "to every debater next round."
)

# -- discussion ----------------------------------------------------------------------------

DISCUSSION_SYSTEM = (
    "You are {name}, one of the agents discussing a document: {roster}. Your focus: "
    "{focus}. {description} Stay in your role and be concrete."
)

DISCUSSION_OUTLINE = (
    "Document: {title}\n\nAbstract: {abstract}\n\nSections (id: title, words):\n{sections}\n\n"
)

DISCUSSION_SECTION_LINE = "{id}: {title} ({words} words)"

DISCUSSION_CHOOSE = (
    "{outline}Choose at most {max_sections} sections to read in full, those that matter "
    "most for your focus. Give their ids and why."
)

DISCUSSION_READ_SECTION = "## {id}: {title}\n{text}"

DISCUSSION_ANALYSE = (
    "Document: {title}\n\nAbstract: {abstract}\n\nThe sections you chose to read:\n\n"
    "{sections}\n\n"
    "Give two or three insights from your focus. For each: the insight, its importance "
    "and your confidence (0 to 1), short quotes from the sections above as evidence, and "
    "any questions it raises."
)

DISCUSSION_INSIGHT_VIEW = (
    "[{id}] {content} (importance {importance:.2f}, confidence {confidence:.2f})"
)

DISCUSSION_INSIGHTS_OF = "{agent}{you}:\n{insights}"

DISCUSSION_YOU = " (you)"

DISCUSSION_ASK = (
    "Document: {title}\n\nIteration {iteration}. The latest insights, by agent:\n\n"
    "{insights}\n\n"
    "Review the other agents' insights (not your own). Ask a question only where it would "
    "really improve the analysis: a clarification, a challenge or an extension, naming the "
    "agent and the insight id. Do not ask for the sake of asking: if the insights are clear "
    "and sound, ask nothing and give your reason for skipping."
)

DISCUSSION_QUESTION_VIEW = (
    "[{id}] from {asker} ({type}, priority {priority:.2f}) on {target}: {text}"
)

DISCUSSION_ANSWER = (
    "Document: {title}\n\nYour latest insights:\n{insights}\n\n"
    "Iteration {iteration}. Questions addressed to you:\n{questions}\n\n"
    "Answer each question by its id. Take a stance: agree, disagree, clarify, or revise "
    "(then give the new text of the insight in revised_insight)."
)

DISCUSSION_ASSESS = (
    "Document: {title}\n\nIteration {iteration}. The latest insights, by agent:\n\n"
    "{insights}\n\nThis iteration's questions and answers:\n{exchange}\n\n"
    "How far has the discussion converged? Score it from 0 (far apart) to 1 (fully "
    "agreed) and say why in one sentence."
)

DISCUSSION_EXCHANGE_VIEW = "{question}\n  -> {agent} ({stance}): {answer}"

DISCUSSION_NO_EXCHANGE = "(no questions this iteration)"

CONSENSUS_SYSTEM = (
    "You write the consensus report of a discussion of a document by {roster}. Report "
    "what they agree on and where they still differ, faithfully and by name."
)

CONSENSUS_TASK = (
    "Document: {title}\n\nAbstract: {abstract}\n\nThe final insights, by agent:\n\n"
    "{insights}\n\nThe last iteration's questions and answers:\n{exchange}\n\n"
    "The discussion ended after {iterations} iteration(s) ({reason}). Write the report: "
    "consensus points (with supporting and opposing agents, by name), divergent views "
    "(each agent's position), an overview, the main contributions, the consensus "
    "assessment, the contested points, the significance and your overall confidence."
)
