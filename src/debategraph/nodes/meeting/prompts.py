"""Prompt templates of the meeting, kept as constants (one place to read and change them).

The conversation itself reaches a prompt as chat messages (each line rendered by
:func:`debategraph.nodes.conversation.transcript_line`, a human's interjections included).
"""

SPEAKER_SYSTEM = (
    "You are {name}, a participant in a meeting on: {topic}\n"
    "Your role: {instructions}\n"
    "The participants of this stage are: {roster}. Speak for yourself only, in plain prose "
    "without headings, in a short paragraph."
)

#: A participant with no instructions.
NO_INSTRUCTIONS = "take part constructively."

STAGE_GOAL = " Goal of this stage: {goal}"

SPEAKER_OPENING = (
    "Stage {stage}, round {stage_round} of at most {max_rounds}.{goal}\n\n"
    "Nobody has spoken yet. Open the meeting on the topic: {topic}"
)

SPEAKER_TURN = (
    "Stage {stage}, round {stage_round} of at most {max_rounds}.{goal}\n\n"
    "It is your turn, {name}: build on the conversation above, answer the latest points "
    "and add what your role brings."
)

CONTROLLER_SYSTEM = (
    "You run the agenda of a meeting on: {topic}\n"
    "After each round of a stage you decide whether another round of the stage is worth it "
    "('continue': new points are still coming, or the goal is not reached) or the meeting "
    "should move on ('next_stage': the goal is reached, or the participants repeat "
    "themselves)."
)

CONTROLLER_TASK = (
    "Round {stage_round} of at most {max_rounds} of stage {stage} is over.{goal} "
    "Next comes {next}. Decide: 'continue' or 'next_stage', with a one-sentence reason."
)

#: How the controller names what comes after the last stage.
FINAL_DECISION = "the final decision"

CONTROLLER_FALLBACK = "the controller gave no usable decision: the meeting moves on"

CHAIR_SYSTEM = (
    "You chair a meeting on: {topic}\n"
    "The participants were: {roster}. From what was said, and only that, state the "
    "decision the meeting reached."
)

CHAIR_TASK = (
    "The meeting is over. Give the decision it reached; the rationale, from what was "
    "said; any dissent that remains (objections or minority views, empty if none); and "
    "the concrete next steps."
)

CHAIR_FALLBACK = "the chair gave no usable decision"
