"""Running the repository's notebooks in the tests: one helper for every notebook test."""

from __future__ import annotations

from pathlib import Path

import nbformat
from nbclient import NotebookClient

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"


def run_notebook(
    name: str, tmp_path: Path, *, timeout_s: int = 600, stdout_only: bool = False
) -> tuple[str, nbformat.NotebookNode]:
    """Execute ``notebooks/<name>`` in ``tmp_path``.

    Args:
        name: The notebook's file name.
        tmp_path: Its working directory.
        timeout_s: The most one cell may take.
        stdout_only: Leave out what cells wrote to stderr (warnings).

    Returns:
        The text its cells printed, and the executed notebook.
    """
    nb = nbformat.read(NOTEBOOKS / name, as_version=4)
    NotebookClient(
        nb,
        timeout=timeout_s,
        kernel_name="python3",
        resources={"metadata": {"path": str(tmp_path)}},
    ).execute()
    # A cell's stream is cut into outputs wherever the kernel flushed it (on a busy machine,
    # mid-line): its pieces are joined as written, and each cell starts on a line of its own.
    cells = [
        "".join(
            str(output.get("text", ""))
            for output in cell.get("outputs", [])
            if not stdout_only or output.get("name") == "stdout"
        )
        for cell in nb.cells
        if cell.cell_type == "code"
    ]
    return "\n".join(cells), nb
