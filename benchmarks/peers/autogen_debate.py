"""The benchmark debate on AutoGen-core, in the shape of its multi-agent debate pattern.

AutoGen-core documents a "multi-agent debate" design pattern: solver agents that each
keep their whole conversation, publish each round's answer to a topic their neighbours
subscribe to, answer again once every neighbour's answer of the round is in, and send
their last answer to an aggregator that takes a majority vote. This is that design,
written against AutoGen-core's public API (``RoutedAgent``, ``message_handler``, topics
and subscriptions on a ``SingleThreadedAgentRuntime``, ``OpenAIChatCompletionClient``):
4 solvers on a ring (each hears the two beside it), 3 rounds. Each debate has a runtime
of its own; N debates at once share one event loop and one model client.

It needs AutoGen, which cannot share debategraph's environment (it pins protobuf 5, the
LangGraph server needs 6), so it runs in a virtual environment of its own:

    make peers   # .venv-peers with benchmarks/peers/requirements.txt
    .venv-peers/bin/python benchmarks/peers/autogen_debate.py --url URL

It answers ``run N`` lines on standard input as ``benchmarks/workload.py`` does.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import sys
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from autogen_core import (
    ClosureAgent,
    ClosureContext,
    DefaultTopicId,
    MessageContext,
    RoutedAgent,
    SingleThreadedAgentRuntime,
    TypeSubscription,
    default_subscription,
    message_handler,
)
from autogen_core.models import (
    AssistantMessage,
    ChatCompletionClient,
    LLMMessage,
    SystemMessage,
    UserMessage,
)
from autogen_ext.models.openai import OpenAIChatCompletionClient

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from workload import QUESTION, serve

#: The pattern's instructions, in our words but the same content and about the same length
#: as the documented example's: a system message asking for a short solution ending in a
#: number in double braces; the first question; the neighbours' solutions, then the ask.
SYSTEM = (
    "You are an assistant skilled in mathematics and reasoning. Help solve a math "
    "reasoning problem by giving a clear, detailed solution. Keep your output under 100 "
    "words and end it with the final answer as a single number in double braces, for "
    "example: 'The answer is {{42}}.'"
)
FIRST_TASK = (
    "Can you solve this math problem?\n{question}\nExplain your reasoning. End with the "
    "final answer as a single number in the form {{{{answer}}}}."
)
PEER = "A solution from another agent: {content}\n"
REFINE_TASK = (
    "Here are other agents' solutions to the problem:\n{peers}Taking their solutions as "
    "extra information, can you give your answer to the math problem? The original problem "
    "is: {question} End with the final answer as a single number in the form {{{{answer}}}}."
)


@dataclass
class Question:
    content: str


@dataclass
class SolveRequest:
    content: str
    question: str


@dataclass
class RoundAnswer:
    content: str
    question: str
    answer: str
    round: int


@dataclass
class LastAnswer:
    answer: str


@dataclass
class Verdict:
    answer: str


def read_answer(text: str) -> str:
    """The answer in a reply: its JSON ``answer``, else the last number in it."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        data = None
    if isinstance(data, dict) and "answer" in data:
        return str(data["answer"])
    numbers = re.findall(r"-?\d[\d,]*(?:\.\d+)?", text)
    return numbers[-1].replace(",", "") if numbers else ""


@default_subscription
class Solver(RoutedAgent):
    """One debater: keeps its conversation, answers, and tells its neighbours."""

    def __init__(
        self, client: ChatCompletionClient, topic: str, neighbours: int, rounds: int
    ) -> None:
        super().__init__("A math solver.")
        self._client = client
        self._topic = topic
        self._neighbours = neighbours
        self._rounds = rounds
        self._round = 0
        self._system: list[LLMMessage] = [SystemMessage(content=SYSTEM)]
        self._history: list[LLMMessage] = []
        self._inbox: dict[int, list[RoundAnswer]] = {}

    @message_handler
    async def on_request(self, message: SolveRequest, ctx: MessageContext) -> None:
        self._history.append(UserMessage(content=message.content, source="user"))
        result = await self._client.create(self._system + self._history)
        assert isinstance(result.content, str)
        self._history.append(AssistantMessage(content=result.content, source=self.id.type))
        answer = read_answer(result.content)
        self._round += 1
        if self._round == self._rounds:
            await self.publish_message(LastAnswer(answer=answer), topic_id=DefaultTopicId())
        else:
            await self.publish_message(
                RoundAnswer(result.content, message.question, answer, self._round),
                topic_id=DefaultTopicId(type=self._topic),
            )

    @message_handler
    async def on_peer(self, message: RoundAnswer, ctx: MessageContext) -> None:
        heard = self._inbox.setdefault(message.round, [])
        heard.append(message)
        if len(heard) < self._neighbours:
            return
        del self._inbox[message.round]
        peers = "".join(PEER.format(content=m.content) for m in heard)
        task = REFINE_TASK.format(peers=peers, question=message.question)
        await self.send_message(SolveRequest(task, message.question), self.id)


@default_subscription
class Aggregator(RoutedAgent):
    """Starts the debate and votes on the solvers' last answers."""

    def __init__(self, solvers: int) -> None:
        super().__init__("Aggregates the solvers' answers.")
        self._solvers = solvers
        self._answers: list[str] = []

    @message_handler
    async def on_question(self, message: Question, ctx: MessageContext) -> None:
        task = FIRST_TASK.format(question=message.content)
        await self.publish_message(SolveRequest(task, message.content), DefaultTopicId())

    @message_handler
    async def on_last(self, message: LastAnswer, ctx: MessageContext) -> None:
        self._answers.append(message.answer)
        if len(self._answers) == self._solvers:
            winner = Counter(self._answers).most_common(1)[0][0]
            await self.publish_message(Verdict(winner), topic_id=DefaultTopicId())


async def one_debate(client: ChatCompletionClient, agents: int, rounds: int) -> str:
    """Run one debate on a runtime of its own; the voted answer."""
    runtime = SingleThreadedAgentRuntime()
    names = [f"Solver{chr(ord('A') + i)}" for i in range(agents)]
    for name in names:
        await Solver.register(
            runtime, name, lambda name=name: Solver(client, name, neighbours=2, rounds=rounds)
        )
    for i, name in enumerate(names):  # ring: each hears the one before and the one after
        for neighbour in (names[(i - 1) % agents], names[(i + 1) % agents]):
            await runtime.add_subscription(TypeSubscription(name, neighbour))
    await Aggregator.register(runtime, "Aggregator", lambda: Aggregator(agents))
    verdict: asyncio.Future[str] = asyncio.get_running_loop().create_future()

    async def collect(_: ClosureContext, message: Verdict, ctx: MessageContext) -> None:
        if isinstance(message, Verdict) and not verdict.done():
            verdict.set_result(message.answer)

    await ClosureAgent.register_closure(
        runtime,
        "collector",
        collect,
        subscriptions=lambda: [TypeSubscription("default", "collector")],
        unknown_type_policy="ignore",
    )
    runtime.start()
    await runtime.publish_message(Question(QUESTION), DefaultTopicId())
    answer = await verdict
    await runtime.stop_when_idle()
    return answer


def main() -> None:
    """Serve ``run N`` commands."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", required=True)
    parser.add_argument("--agents", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--plan")
    args = parser.parse_args()
    client = OpenAIChatCompletionClient(
        model="stub",
        base_url=args.url,
        api_key="x",
        max_retries=0,
        timeout=60,
        model_info={
            "vision": False,
            "function_calling": True,
            "json_output": True,
            "family": "unknown",
            "structured_output": True,
        },
    )
    loop = asyncio.new_event_loop()

    async def timed() -> tuple[float, Any]:
        started = time.perf_counter()
        answer = await one_debate(client, args.agents, args.rounds)
        return time.perf_counter() - started, answer

    async def batch(n: int) -> list[tuple[float, Any]]:
        return await asyncio.gather(*(timed() for _ in range(n)))

    def run(n: int) -> tuple[list[float], list[Any]]:
        done = loop.run_until_complete(batch(n))
        return [w for w, _ in done], [a for _, a in done]

    serve(run, args.plan)


if __name__ == "__main__":
    main()
