"""Headless Chromium for the tests, driven over the Chrome DevTools Protocol (CDP).

:func:`start_chromium` starts Debian's ``chromium`` once (the session-scoped ``browser``
fixture in ``tests/conftest.py``) and reads the DevTools WebSocket URL from its stderr;
:meth:`Browser.open` loads one file in a tab of its own and returns what a test asserts on
(:class:`PageVisit`): every request the page made, how many elements each selector
matches, the title, the body's text, and a full-page PNG screenshot. One WebSocket to the
browser carries every tab (``Target.attachToTarget`` with ``flatten``: each tab's messages
carry its ``sessionId``). Nothing sleeps: every wait reads CDP messages until the one it
waits for comes, or fails after :data:`TIMEOUT_S`.
"""

from __future__ import annotations

import base64
import contextlib
import json
import queue
import shutil
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from websockets.exceptions import ConnectionClosed
from websockets.sync.client import ClientConnection, connect

#: Debian's package and its binary.
CHROMIUM = "chromium"
#: How long any one wait on the browser may take: its start, a command's answer, a load.
TIMEOUT_S = 30.0
#: What Chromium prints on stderr once it listens for DevTools.
LISTENING = "DevTools listening on "

#: What a page shows, read in the tab as one JSON string (SELECTORS: a JSON list).
READ = """JSON.stringify({
  href: location.href,
  ready: document.readyState,
  counts: SELECTORS.map((selector) => document.querySelectorAll(selector).length),
  title: document.title,
  text: document.body ? document.body.innerText : "",
  overflow: document.documentElement.scrollWidth - window.innerWidth,
  unisolated: UNISOLATED,
})"""

#: How many text nodes hold a right-to-left override (U+202E) or embedding outside an
#: isolate of their own: an element holding that text alone whose computed
#: ``unicode-bidi`` is ``isolate`` (``<bdi>``, and HTML's blocks), ``isolate-override``
#: or ``plaintext``. Any other such text would reorder the text around it.
UNISOLATED = """(() => {
  const walker = document.createTreeWalker(document.body || document, NodeFilter.SHOW_TEXT);
  const isolating = new Set(["isolate", "isolate-override", "plaintext"]);
  let count = 0;
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    if (!/[\u202a-\u202e]/.test(node.data)) continue;
    const parent = node.parentElement;
    const alone = parent.childNodes.length === 1;
    if (!alone || !isolating.has(getComputedStyle(parent).unicodeBidi)) count += 1;
  }
  return count;
})()"""

#: The page's y below the last element a selector (SELECTOR) matches; 0 for none.
BOTTOM = """Math.max(0, ...Array.from(document.querySelectorAll(SELECTOR),
  (element) => element.getBoundingClientRect().bottom + window.scrollY))"""
#: Room left below that element, in CSS pixels.
MARGIN = 16

Message = dict[str, Any]
#: Called with every CDP event read while waiting for something else.
OnEvent = Callable[[Message], None]


def ignore(_event: Message) -> None:
    """Drop an event nobody waits for."""


class BrowserError(RuntimeError):
    """Chromium did not start, a CDP command failed, or an awaited event never came."""


@dataclass
class PageVisit:
    """What one page did and showed in the browser.

    Attributes:
        url: The ``file://`` URL it was opened at.
        requests: The URL of every request it made (``Network.requestWillBeSent``), its
            own navigation included, in order.
        counts: How many elements each selector given to :meth:`Browser.open` matches.
        title: ``document.title`` after the load.
        text: ``document.body.innerText``: what a reader sees, as text.
        screenshot: The full-page PNG's path (none taken: ``Path()``).
        overflow: How many CSS pixels the page is wider than the window (0: it fits).
        unisolated: How many of its texts hold a right-to-left override outside an
            isolate (:data:`UNISOLATED`; 0: none can reorder what is around it).
    """

    url: str
    requests: list[str] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)
    title: str = ""
    text: str = ""
    screenshot: Path = Path()
    overflow: int = 0
    unisolated: int = 0

    def foreign_requests(self) -> list[str]:
        """The requests beyond the page's own navigation (a self-contained page makes none)."""
        return [url for url in self.requests if url != self.url]


class Browser:
    """One running headless Chromium and the CDP connection to it."""

    def __init__(self, ws: ClientConnection, log: list[str]):
        self._ws = ws
        self._log = log  # chromium's stderr, for error messages
        self._next_id = 0

    def send(
        self,
        method: str,
        params: Message | None = None,
        session: str = "",
        on_event: OnEvent = ignore,
    ) -> Any:
        """Send one CDP command and wait for its answer.

        Args:
            method: E.g. ``Page.navigate``.
            params: Its parameters.
            session: The tab's session (``Target.attachToTarget``); empty for the browser.
            on_event: Gets every event read before the answer.

        Returns:
            The command's ``result``.

        Raises:
            BrowserError: If the command fails or no answer comes within :data:`TIMEOUT_S`.
        """
        self._next_id += 1
        message: Message = {"id": self._next_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        self._ws.send(json.dumps(message))
        reply = self._until(lambda m: m.get("id") == message["id"], on_event, method)
        if "error" in reply:
            raise BrowserError(f"CDP {method} failed: {reply['error'].get('message')}")
        return reply.get("result", {})

    def _until(self, wanted: Callable[[Message], bool], on_event: OnEvent, what: str) -> Message:
        """Read messages until ``wanted(message)``; hand every other event to ``on_event``."""
        deadline = time.monotonic() + TIMEOUT_S
        while True:
            left = deadline - time.monotonic()
            try:
                raw = self._ws.recv(timeout=max(left, 0.0))
            except TimeoutError:
                said = " | ".join(self._log[-3:]) or "nothing"
                raise BrowserError(
                    f"no answer to {what} within {TIMEOUT_S:.0f} s (chromium's stderr: {said})"
                ) from None
            message = json.loads(raw)
            if wanted(message):
                return dict(message)
            if "method" in message:
                on_event(message)

    def open(
        self,
        page: Path,
        screenshot: Path | None,
        selectors: Sequence[str] = (),
        *,
        width: int = 0,
        until: str = "",
    ) -> PageVisit:
        """Load ``page`` in a new tab, read it, screenshot it whole, close the tab.

        Args:
            page: An HTML file.
            screenshot: Where the full-page PNG goes (``None``: none is taken).
            selectors: CSS selectors whose matches are counted (``PageVisit.counts``).
            width: The window's width in CSS pixels (0: the browser's default); the
                screenshot is as wide (0: as wide as the page, overflow included).
            until: A CSS selector: the screenshot ends below its last match (empty, or
                no match: at the page's end).

        Returns:
            What the page requested and showed.
        """
        visit = PageVisit(url=page.resolve().as_uri())
        target = self.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self.send("Target.attachToTarget", {"targetId": target, "flatten": True})[
            "sessionId"
        ]

        def record(event: Message) -> None:
            if event.get("sessionId") != session:
                return
            if event["method"] == "Network.requestWillBeSent":
                visit.requests.append(event["params"]["request"]["url"])
            elif event["method"] == "Page.loadEventFired":
                loaded.append(True)

        loaded: list[bool] = []
        try:
            # No scrollbar: the page is laid out as wide when measured as when photographed
            # (a full-page capture drops the scrollbar and would wrap its lines anew).
            self.send("Emulation.setScrollbarsHidden", {"hidden": True}, session, record)
            if width:
                metrics = {"width": width, "height": 600, "deviceScaleFactor": 1, "mobile": False}
                self.send("Emulation.setDeviceMetricsOverride", metrics, session, record)
            self.send("Network.enable", None, session, record)
            self.send("Page.enable", None, session, record)
            loaded.clear()  # the blank tab's own load, if it came late
            navigated = self.send("Page.navigate", {"url": visit.url}, session, record)
            if "errorText" in navigated:
                raise BrowserError(f"{visit.url}: {navigated['errorText']}")
            if not loaded:
                self._until(
                    lambda m: (
                        m.get("sessionId") == session and m.get("method") == "Page.loadEventFired"
                    ),
                    record,
                    f"the load of {visit.url}",
                )
            read = READ.replace("SELECTORS", json.dumps(list(selectors)))
            read = read.replace("UNISOLATED", UNISOLATED)
            shown = json.loads(self._evaluate(read, session, record))
            if (shown["href"], shown["ready"]) != (visit.url, "complete"):
                raise BrowserError(
                    f"the tab shows {shown['href']} ({shown['ready']}), not {visit.url} loaded"
                )
            visit.counts = dict(zip(selectors, shown["counts"], strict=True))
            visit.title, visit.text = shown["title"], shown["text"]
            visit.overflow, visit.unisolated = shown["overflow"], shown["unisolated"]
            if screenshot is not None:
                visit.screenshot = self._screenshot(session, screenshot, width, until, record)
        finally:
            self.send("Target.closeTarget", {"targetId": target})
        return visit

    def _evaluate(self, expression: str, session: str, on_event: OnEvent) -> Any:
        result = self.send(
            "Runtime.evaluate", {"expression": expression, "returnByValue": True}, session, on_event
        )
        if "exceptionDetails" in result:
            raise BrowserError(f"{expression}: {result['exceptionDetails'].get('text')}")
        return result["result"].get("value")

    def _screenshot(
        self, session: str, path: Path, width: int, until: str, on_event: OnEvent
    ) -> Path:
        size = self.send("Page.getLayoutMetrics", None, session, on_event)["cssContentSize"]
        height = size["height"]
        if until:
            bottom = self._evaluate(
                BOTTOM.replace("SELECTOR", json.dumps(until)), session, on_event
            )
            height = min(height, bottom + MARGIN) if bottom else height
        wide = min(size["width"], width) if width else size["width"]
        clip = {"x": 0, "y": 0, "width": wide, "height": height, "scale": 1}
        shot = self.send(
            "Page.captureScreenshot",
            {"format": "png", "captureBeyondViewport": True, "clip": clip},
            session,
            on_event,
        )
        path.write_bytes(base64.b64decode(shot["data"]))
        return path

    def quit(self) -> None:
        """Ask Chromium to quit (``Browser.close``); it may drop the socket before it answers."""
        with contextlib.suppress(BrowserError, ConnectionClosed):
            self.send("Browser.close")


def chromium_path() -> str | None:
    """Where Chromium is, or ``None`` if it is not installed."""
    return shutil.which(CHROMIUM)


@contextmanager
def start_chromium(binary: str) -> Iterator[Browser]:
    """Run a headless Chromium for the block's length, then shut it down and clean up.

    Args:
        binary: The ``chromium`` executable.

    Yields:
        The browser, connected.

    Raises:
        BrowserError: If it does not print its DevTools URL within :data:`TIMEOUT_S`.
    """
    with tempfile.TemporaryDirectory(prefix="debategraph-chromium-") as profile:
        process = subprocess.Popen(
            [
                binary,
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--remote-debugging-port=0",
                f"--user-data-dir={profile}",
                "about:blank",
            ],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        log: list[str] = []
        lines: queue.Queue[str | None] = queue.Queue()
        reader = threading.Thread(target=_drain, args=(process, lines, log), daemon=True)
        reader.start()
        asked = False
        try:
            ws_url = _devtools_url(lines, log)
            with connect(ws_url, max_size=None, proxy=None, open_timeout=TIMEOUT_S) as ws:
                browser = Browser(ws, log)
                try:
                    yield browser
                finally:
                    browser.quit()
                    asked = True
        finally:
            try:
                process.wait(timeout=TIMEOUT_S if asked else 0)
            except subprocess.TimeoutExpired:
                process.kill()  # it did not quit when asked, or never connected
                process.wait()
            reader.join(timeout=TIMEOUT_S)


def _drain(process: subprocess.Popen[str], lines: queue.Queue[str | None], log: list[str]) -> None:
    """Read Chromium's stderr to its end (a full pipe would stall it), line by line."""
    assert process.stderr is not None
    for line in process.stderr:
        log.append(line.rstrip())
        lines.put(line)
    lines.put(None)


def _devtools_url(lines: queue.Queue[str | None], log: list[str]) -> str:
    deadline = time.monotonic() + TIMEOUT_S
    while True:
        try:
            line = lines.get(timeout=max(deadline - time.monotonic(), 0.0))
        except queue.Empty:
            line = None
        if line is None:
            said = " | ".join(log[-3:]) or "nothing"
            raise BrowserError(f"chromium printed no DevTools URL (its stderr: {said})")
        if line.startswith(LISTENING):
            return line[len(LISTENING) :].strip()
