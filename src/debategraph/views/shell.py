"""Self-contained HTML pages: the one document shell, escaping and inline images.

Every page debategraph writes (a thread's page from ``debategraph view``, the eval's
``report.html``) is one file that opens offline years later: its style is inline, its
images are ``data:`` URIs or inline SVG, and it fetches nothing. The shell's
Content-Security-Policy says so to the browser as well (``default-src 'none'``): no
script runs, no request leaves the page, whatever a model wrote into it. Model text is
escaped with :func:`esc` before it goes in; the policy is the second wall, not the first.

Every page fits a phone's screen (390 CSS pixels) without sideways scrolling: a table
scrolls inside its own box, an SVG chart scales to the width it has, a long word breaks
anywhere, and model text is isolated (:func:`said`: ``<bdi>``) so that a right-to-left
override in it reorders nothing around it.
"""

from __future__ import annotations

import base64
import html

#: What a page may load: nothing but its own inline style and ``data:`` images. No script.
CONTENT_SECURITY_POLICY = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"

#: The style every page shares (a page adds its own after it).
BASE_STYLE = """
:root { --fg: #1f2328; --muted: #59636e; --line: #d1d9e0; --bg: #ffffff; --soft: #f6f8fa;
  --accent: #0969da; --good: #1a7f37; --bad: #cf222e; --warn: #9a6700; }
* { box-sizing: border-box; }
/* No system-ui: where it names no installed font (a headless Linux), Chromium takes minutes
   to lay out one long word. */
body { margin: 0 auto; max-width: 72rem; padding: 1.5rem; color: var(--fg); background: var(--bg);
  font: 15px/1.5 -apple-system, BlinkMacSystemFont, "Segoe UI", "Noto Sans", Helvetica, Arial,
    sans-serif;
  overflow-wrap: anywhere; }
@media (max-width: 40rem) { body { padding: .75rem; } }
h1 { font-size: 1.5rem; margin: 0 0 .5rem; } h2 { font-size: 1.2rem; margin: 1.5rem 0 .5rem; }
h3 { font-size: 1rem; margin: 1rem 0 .25rem; }
table { border-collapse: collapse; margin: .5rem 0; display: block; max-width: 100%;
  overflow-x: auto; }
th, td { border: 1px solid var(--line); padding: .25rem .5rem; text-align: left;
  vertical-align: top; }
th { background: var(--soft); overflow-wrap: normal; }
td:not(.num) { min-width: 7rem; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
.muted { color: var(--muted); }
pre, .text { white-space: pre-wrap; overflow-wrap: anywhere; unicode-bidi: isolate; }
pre { background: var(--soft); padding: .5rem; border-radius: 6px; margin: .25rem 0; }
img, svg { max-width: 100%; height: auto; }
bdi { unicode-bidi: isolate; }
a { color: var(--accent); }
"""


def esc(text: object) -> str:
    """``text`` (its ``str``) escaped for HTML text and attribute values (quotes included).

    The one escape for model text, names and anything else a page shows: ``<script>``
    is shown as the characters ``<script>``, never parsed as a tag.

    Args:
        text: Anything; ``None`` is the empty string.

    Returns:
        The escaped text.
    """
    return html.escape("" if text is None else str(text), quote=True)


def said(text: object) -> str:
    """Text someone wrote (a model, a user), escaped and isolated: ``<bdi>text</bdi>``.

    The isolate keeps a right-to-left override (``U+202E``) or any other direction in the
    text from reordering what the page shows around it.

    Args:
        text: Anything; ``None`` is the empty string.

    Returns:
        The ``<bdi>`` element.
    """
    return f"<bdi>{esc(text)}</bdi>"


def data_uri(content: bytes, media_type: str) -> str:
    """``content`` as a ``data:`` URI (base64), for an image inside a self-contained page.

    Args:
        content: The file's bytes (a PNG, an SVG).
        media_type: Its media type (``image/png``).

    Returns:
        ``data:<media_type>;base64,<content>``.
    """
    return f"data:{media_type};base64,{base64.b64encode(content).decode('ascii')}"


def document(title: str, body: str, *, style: str = "", refresh_s: int | None = None) -> str:
    """A whole self-contained HTML document.

    Args:
        title: The page's title (escaped here).
        body: The body's HTML, already escaped where it holds text.
        style: CSS added after :data:`BASE_STYLE`.
        refresh_s: Reload the page this often (a ``<meta http-equiv="refresh">``: the
            browser re-reads the file, no script involved), for a page rewritten while a
            run goes on; ``None`` for a finished run's page.

    Returns:
        The document, from ``<!DOCTYPE html>`` to ``</html>``.
    """
    refresh = ""
    if refresh_s is not None:
        refresh = f'<meta http-equiv="refresh" content="{int(refresh_s)}">\n'
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f'<meta http-equiv="Content-Security-Policy" content="{CONTENT_SECURITY_POLICY}">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"{refresh}<title>{esc(title)}</title>\n"
        f"<style>{BASE_STYLE}{style}</style>\n"
        f"</head>\n<body>\n{body}\n</body>\n</html>\n"
    )
