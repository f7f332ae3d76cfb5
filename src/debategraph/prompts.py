"""Prompt templates, kept as constants (one place to read and change them)."""

HUMAN_INTERJECTION = "A human moderator says (take it into account):\n{notes}\n\n"

ROUND_REVIEW = (
    "{Word} {round} of {rounds} is done. Approve to go on, respond with a text every {who} "
    "reads next {word}, or reject to stop here."
)

CHAT_MESSAGE_LINE = "{agent}: {content}"

CHAT_HUMAN_LINE = "A human (take it into account): {content}"

JUDGE_SYSTEM = (
    "You watch a conversation between agents and decide whether it has reached its goal. "
    "Answer only about the question you are asked."
)

JUDGE_TASK = "Conversation (latest messages):\n{conversation}\n\nQuestion: {question}"

SELECTOR_SYSTEM = (
    "You choose who speaks next in a group chat. The participants:\n{roster}\n"
    "Answer with one participant's name and nothing else."
)

SELECTOR_TASK = (
    "Task: {task}\n\nConversation (latest messages):\n{conversation}\n\n"
    "Who should speak next? Answer with exactly one of: {names}."
)

SELECTOR_RETRY = "That is not one of the participants. Answer with exactly one of: {names}."

EXTRACT_FIELDS = (
    "Below is an agent's reply. Fill in the requested fields from what it says; add nothing "
    "it does not say."
)
