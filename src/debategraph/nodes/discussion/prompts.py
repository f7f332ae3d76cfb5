"""Prompt templates of the discussion, kept as constants (one place to read and change them).

``{human}`` is the paragraph of a human's interjections so far
(:func:`debategraph.nodes.rounds.interjection_prompt`), empty when there are none.
"""

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
    "{human}"
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
    "{human}"
    "Answer each question by its id. Take a stance: agree, disagree, clarify, or revise "
    "(then give the new text of the insight in revised_insight)."
)

DISCUSSION_ASSESS = (
    "Document: {title}\n\nIteration {iteration}. The latest insights, by agent:\n\n"
    "{insights}\n\nThis iteration's questions and answers:\n{exchange}\n\n"
    "{human}"
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
    "{human}"
    "The discussion ended after {iterations} iteration(s) ({reason}). Write the report: "
    "consensus points (with supporting and opposing agents, by name), divergent views "
    "(each agent's position), an overview, the main contributions, the consensus "
    "assessment, the contested points, the significance and your overall confidence."
)
