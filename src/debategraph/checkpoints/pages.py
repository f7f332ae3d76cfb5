"""Where each thread's page was written, so pages side by side link by the names they have.

``debategraph view -o NAME`` and the eval's report write a thread's page under a name of
their choosing; each write is noted in the store beside the thread's checkpoints
(``(..., <thread id>)``, key ``page``: the file's absolute path). A page linking another
thread (its origin, its forks) links the file noted for it, and the default name
(:func:`debategraph.views.thread_page.page_name`) for a thread whose page was never
written.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from debategraph.checkpoints.threads import namespace_label

if TYPE_CHECKING:
    from langgraph.store.base import BaseStore

#: The store namespace under which each thread's page is noted: ``(..., <thread id>)``.
PAGES = ("debategraph", "pages")
#: The one key under a thread's namespace.
_KEY = "page"


def note_page(store: BaseStore, thread_id: str, path: Path) -> None:
    """Note that the page of ``thread_id`` was written to ``path`` (its last write wins).

    Args:
        store: The store of the thread's database.
        thread_id: The thread.
        path: The page's file.
    """
    namespace = (*PAGES, namespace_label(thread_id))
    store.put(namespace, _KEY, {"path": str(path.resolve())}, index=False)


def page_paths(store: BaseStore, thread_ids: Iterable[str]) -> dict[str, Path]:
    """Where the pages of ``thread_ids`` were last written, for those noted.

    Args:
        store: The store of the threads' database.
        thread_ids: The threads.

    Returns:
        Thread -> its page's absolute path; a thread whose page was never written is
        left out.
    """
    found: dict[str, Path] = {}
    for thread_id in dict.fromkeys(thread_ids):
        item = store.get((*PAGES, namespace_label(thread_id)), _KEY)
        path = None if item is None else item.value.get("path")
        if isinstance(path, str):
            found[thread_id] = Path(path)
    return found
