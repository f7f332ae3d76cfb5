"""The README's picture of a thread's page: ``make screenshot`` writes ``docs/images/view.png``.

A four-solver, three-round solver debate runs through the CLI against the test suite's stub
server (nothing leaves the machine; the answers below are scripted): one solver asks the
calculator, two start wrong and change their minds, and a human interjects after round 1.
``debategraph view``'s page of it is opened in headless Chromium (the suite's harness,
``tests/browser.py``) and photographed from the top to the end of its transcript, then stored
with a palette of 256 colours (the page's flat colours survive; the file stays small).

Run it from the repository root with the development environment (it needs ``chromium``)::

    .venv/bin/python docs/screenshot.py [--out docs/images/view.png]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[1]
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))  # the suite's stub server and browser harness

from PIL import Image  # noqa: E402

from debategraph.views.thread_file import write_thread_page  # noqa: E402
from tests.browser import Browser, PageVisit, chromium_path, start_chromium  # noqa: E402
from tests.conftest import cli, solver_of  # noqa: E402
from tests.openai_stub import StubOpenAIServer, StubReply  # noqa: E402

QUESTION = (
    "Natalia sold clips to 48 of her friends in April, and then she sold half as many clips "
    "in May. How many clips did Natalia sell altogether in April and May?"
)
NOTE = "May is half of April: check the 24 before you add."
MODEL = "demo-model"
#: The most the README's picture may weigh.
MAX_BYTES = 300_000
#: Where the picture ends: below this part of the page.
UNTIL = "#transcript"
#: The window's width, CSS pixels.
WIDTH = 960
#: Each solver's answer and reasoning in rounds 1, 2 and 3.
SCRIPT = {
    "solver_1": [("72", "48 + 48 / 2 = 72 (the calculator agrees).")] * 3,
    "solver_2": [
        ("96", "Twice as many in May: 48 + 96... no, I take 96 in all."),
        ("72", "The note is right: May is 24, so 48 + 24 = 72."),
        ("72", "Still 72."),
    ],
    "solver_3": [("72", "April 48, May 24: 72 in all.")] * 3,
    "solver_4": [
        ("60", "48 + 12 = 60."),
        ("60", "I keep 60."),
        ("72", "My neighbours show May is 24, not 12: 72."),
    ],
}


class Scripted:
    """The stub's replies: :data:`SCRIPT`'s answers, round by round, and one tool call."""

    def __init__(self) -> None:
        self.answered: Counter[str] = Counter()

    def __call__(self, body: dict[str, Any]) -> Any:
        """The reply to one chat request."""
        who = solver_of(body)
        rnd = self.answered[who]
        tools = [t["function"]["name"] for t in body.get("tools") or []]
        results = [m for m in body["messages"] if m.get("role") == "tool"]
        if tools == ["calculator"]:  # the tool loop before each answer
            if who == "solver_1" and rnd == 0 and not results:
                return StubReply(tool_args={"expression": "48 + 48 / 2"}, tool_name="calculator")
            return f"{who} has what it needs."
        self.answered[who] += 1
        answer, reasoning = SCRIPT[who][min(rnd, 2)]
        return {"reasoning": reasoning, "answer": answer, "confidence": 0.6 + 0.1 * rnd}


def draw(browser: Browser, out: Path, width: int = WIDTH) -> PageVisit:
    """Run the debate, write its page, photograph it into ``out`` (a 256-colour PNG).

    Args:
        browser: A running headless Chromium.
        out: The PNG to write.
        width: The window's width, CSS pixels.

    Returns:
        What the page requested and showed (``.turn`` counted).
    """
    with (
        tempfile.TemporaryDirectory() as folder,
        StubOpenAIServer(Scripted(), models=(MODEL,)) as stub,
    ):
        db = str(Path(folder) / "threads.sqlite")
        common = ["--model", MODEL, "--base-url", stub.url, "--db", db, "--max-retries", "0"]
        cli("solve", QUESTION, "--agents", "4", "--rounds", "3", "--tools", "calculator",
            "--pause-after-round", "--thread", "natalia", *common)  # fmt: skip
        cli("resume", "natalia", "--interject", NOTE, "--db", db)
        cli("resume", "natalia", "--approve", "--db", db)
        page = write_thread_page(db, "natalia", Path(folder) / "natalia.html")
        out.parent.mkdir(parents=True, exist_ok=True)
        visit = browser.open(page, out, [".turn"], width=width, until=UNTIL)
    Image.open(out).convert("RGB").quantize(256, dither=Image.Dither.NONE).save(out, optimize=True)
    return visit


def main(argv: list[str] | None = None) -> int:
    """Draw the README's picture (:func:`draw`) in a Chromium of its own.

    Returns:
        The exit status: 1, with one line, without chromium, where the page made a
        request or the picture weighs over :data:`MAX_BYTES`.
    """
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=REPO_ROOT / "docs" / "images" / "view.png")
    parser.add_argument("--width", type=int, default=WIDTH, help="window width, CSS pixels")
    args = parser.parse_args(argv)
    binary = chromium_path()
    if binary is None:
        print(
            "screenshot.py: chromium is not installed (apt-get install chromium)", file=sys.stderr
        )
        return 1
    with start_chromium(binary) as browser:
        visit = draw(browser, args.out, args.width)
    size = args.out.stat().st_size
    if visit.foreign_requests():
        print(f"screenshot.py: the page made requests: {visit.foreign_requests()}", file=sys.stderr)
        return 1
    if size > MAX_BYTES:
        print(f"screenshot.py: {args.out} is {size} bytes, over {MAX_BYTES}", file=sys.stderr)
        return 1
    print(f"{args.out}: {size} bytes, {visit.counts['.turn']} turns")
    return 0


if __name__ == "__main__":
    sys.exit(main())
