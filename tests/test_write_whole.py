"""The one writer of whole files (``datafiles.write_whole``): a page, an export, the eval's files.

Whole or not at all, a link followed, a file's mode kept, and a file that cannot be
replaced (``/dev/stdout``, a pipe) written to as it is.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from debategraph.datafiles import write_whole


def disk_full(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make every move into place fail as a full disk would (``os.replace``)."""

    def refuse(source: object, destination: object) -> None:
        raise OSError(28, os.strerror(28))

    monkeypatch.setattr(os, "replace", refuse)


def test_a_link_is_followed_and_a_mode_kept(tmp_path: Path) -> None:
    real = tmp_path / "real.html"
    real.write_text("old", encoding="utf-8")
    real.chmod(0o640)
    link = tmp_path / "link.html"
    link.symlink_to(real.name)
    write_whole(link, "new")
    assert link.is_symlink() and real.read_text(encoding="utf-8") == "new"
    assert stat.S_IMODE(real.stat().st_mode) == 0o640
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link.html", "real.html"]


def test_a_new_file_gets_the_mode_open_gives(tmp_path: Path) -> None:
    umask = os.umask(0o022)
    try:
        write_whole(tmp_path / "new.txt", "hi")
    finally:
        os.umask(umask)
    assert stat.S_IMODE((tmp_path / "new.txt").stat().st_mode) == 0o644


def test_a_file_that_cannot_be_replaced_is_written_to(tmp_path: Path) -> None:
    pipe = tmp_path / "pipe"
    os.mkfifo(pipe)
    reader = os.open(pipe, os.O_RDONLY | os.O_NONBLOCK)
    try:
        write_whole(pipe, "through the pipe")
        assert os.read(reader, 100) == b"through the pipe"
    finally:
        os.close(reader)
    assert stat.S_ISFIFO(pipe.stat().st_mode)  # still the pipe, never a file in its place


def test_a_failed_write_keeps_the_old_file_and_leaves_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "page.html"
    target.write_text("old", encoding="utf-8")
    disk_full(monkeypatch)
    with pytest.raises(OSError, match="No space left"):
        write_whole(target, "new")
    assert target.read_text(encoding="utf-8") == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["page.html"]
