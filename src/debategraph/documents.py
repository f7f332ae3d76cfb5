"""Load a Markdown or plain-text document and split it into titled sections.

The discussion graph shows its agents a document's title, abstract and section list, and
lets each one read the sections it picks. :func:`parse_document` does the splitting on
text; :func:`load_document` also reads a file.
"""

from __future__ import annotations

import re
from pathlib import Path

from pydantic import BaseModel, ConfigDict

#: A Markdown heading: ``#`` to ``######``, a space, the heading text.
HEADING_RE = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
#: Headings that start a new section (deeper ones stay inside their section's text).
SECTION_LEVEL = 2
ABSTRACT_TITLES = frozenset({"abstract", "summary"})
WHOLE_TEXT_TITLE = "Full text"
PREAMBLE_TITLE = "Preamble"
NO_SECTIONS_NOTE = "no section headings found: the whole text is one section"
#: Longest argument of :func:`load_document` still tried as a path.
MAX_PATH_CHARS = 4096


class Section(BaseModel):
    """One section of a document.

    Attributes:
        id: Short id agents name it by (``S1``, ``S2``...).
        title: Its heading.
        text: Its text (subsection headings included).
    """

    model_config = ConfigDict(frozen=True)

    id: str
    title: str
    text: str

    @property
    def words(self) -> int:
        """Whitespace-separated words in the text."""
        return len(self.text.split())


class Document(BaseModel):
    """A parsed document.

    Attributes:
        title: The first ``#`` heading, else the first non-empty line.
        abstract: The "Abstract" section's text, else the first paragraph.
        sections: The ``#``/``##`` sections in order (the abstract section excluded).
        notes: What the parser had to assume (e.g. no headings).
    """

    model_config = ConfigDict(frozen=True)

    title: str
    abstract: str
    sections: list[Section]
    notes: list[str]

    def section(self, section_id: str) -> Section | None:
        """The section with id ``section_id`` (case-insensitive), if any."""
        key = section_id.strip().upper()
        return next((s for s in self.sections if s.id.upper() == key), None)


def _paragraphs(lines: list[str]) -> list[str]:
    out: list[str] = []
    current: list[str] = []
    for line in [*lines, ""]:
        if line.strip():
            current.append(line.strip())
        elif current:
            out.append(" ".join(current))
            current = []
    return out


def parse_document(text: str, source: str = "document") -> Document:
    """Split Markdown or plain text into title, abstract and sections.

    Args:
        text: The document's text.
        source: What to call it in error messages (a path, or ``document``).

    Returns:
        The document. Without ``#``/``##`` headings the whole body is one section, with
        a note saying so.

    Raises:
        ValueError: If the text is empty.
    """
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    if not text.strip():
        raise ValueError(f"{source} is empty: give a document with a title and some text")
    notes: list[str] = []
    title = ""
    body_start = 0
    for index, line in enumerate(lines):
        match = HEADING_RE.match(line)
        if match and len(match.group(1)) == 1 and match.group(2):
            title, body_start = match.group(2), index + 1
            break
    if not title:
        first = next(i for i, line in enumerate(lines) if line.strip())
        title = HEADING_RE.sub(r"\2", lines[first].strip()).strip() or lines[first].strip()
        body_start = first + 1
        notes.append("no '# ' title heading: the first line is the title")
    preamble: list[str] = []
    raw_sections: list[tuple[str, list[str]]] = []
    for line in lines[body_start:]:
        match = HEADING_RE.match(line)
        if match and len(match.group(1)) <= SECTION_LEVEL and match.group(2):
            raw_sections.append((match.group(2), []))
        elif raw_sections:
            raw_sections[-1][1].append(line)
        else:
            preamble.append(line)
    abstract = ""
    kept: list[tuple[str, str]] = []
    for heading, body in raw_sections:
        body_text = "\n".join(body).strip()
        if not abstract and heading.strip().lower() in ABSTRACT_TITLES:
            abstract = " ".join(_paragraphs(body))
        else:
            kept.append((heading, body_text))
    paragraphs = _paragraphs(preamble)
    if not abstract and paragraphs:
        abstract = paragraphs[0]
        if raw_sections:
            paragraphs = paragraphs[1:]
    elif not abstract:
        first_body = next((b for _, b in kept if b), "")
        abstract = _paragraphs(first_body.split("\n"))[0] if first_body else ""
        notes.append("no abstract: the first paragraph stands in for it")
    if not raw_sections:
        body_text = "\n".join(preamble).strip()
        kept = [(WHOLE_TEXT_TITLE, body_text or title)]
        notes.append(NO_SECTIONS_NOTE)
    elif paragraphs:
        kept.insert(0, (PREAMBLE_TITLE, "\n\n".join(paragraphs)))
    if not kept:
        kept = [(WHOLE_TEXT_TITLE, abstract or title)]
        notes.append(NO_SECTIONS_NOTE)
    sections = [
        Section(id=f"S{n}", title=heading.strip(), text=body)
        for n, (heading, body) in enumerate(kept, 1)
    ]
    return Document(title=title.strip(), abstract=abstract, sections=sections, notes=notes)


def load_document(text_or_path: str | Path) -> Document:
    """Load a document from a file path or from its text.

    A :class:`~pathlib.Path`, or a one-line string naming an existing file, is read as
    UTF-8; any other string is the document's text.

    Args:
        text_or_path: A path, or the document's text.

    Returns:
        The parsed document (see :func:`parse_document`).

    Raises:
        ValueError: If the file cannot be read, or the document is empty.
    """
    path: Path | None = None
    if isinstance(text_or_path, Path):
        path = text_or_path
    elif "\n" not in text_or_path and 0 < len(text_or_path) <= MAX_PATH_CHARS:
        candidate = Path(text_or_path.strip()).expanduser()
        try:
            if candidate.is_file():
                path = candidate
        except OSError:
            path = None
    if path is None:
        return parse_document(str(text_or_path))
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else type(exc).__name__
        raise ValueError(f"cannot read document {str(path)!r}: {reason}") from None
    return parse_document(text, source=f"document {str(path)!r}")
