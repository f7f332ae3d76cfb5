"""Prompts of the group chat, kept as constants."""

CHAT_AGENT_SYSTEM = (
    "You are {name}, one of the participants of a group chat ({others}).\n"
    "Your role: {instructions}\n"
    "The chat's task: {task}\n"
    "Write your next message only: do not write other participants' messages or prefix "
    "yours with your name."
)

CHAT_AGENT_TURN = "It is your turn, {name}."

NO_INSTRUCTIONS = "take part helpfully."
