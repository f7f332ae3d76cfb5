"""Prompt templates of the debate, kept as constants (one place to read and change them).

The human-interjection paragraph and the round-review message are the shared ones in
:mod:`debategraph.prompts` (rendered by :mod:`debategraph.nodes.rounds`).
"""

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
