"""The embedded model's parts that need no runtime: GGUF files, slots, errors, CLI checks."""

from __future__ import annotations

import struct
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest

from debategraph import local
from debategraph.errors import UsageError
from debategraph.local import server as local_server
from debategraph.local.gguf import GGUF_ENV, check_gguf, resolve_gguf
from debategraph.models import ModelSpec
from tests.conftest import one_error_line, run_cli


def _string(text: str) -> bytes:
    data = text.encode()
    return struct.pack("<Q", len(data)) + data


def write_gguf(path: Path, *, layers: int = 30, kv_heads: int = 3, context: int = 8192) -> Path:
    """A GGUF file with a real header (a llama-like model) and no tensors."""
    kv: list[tuple[str, int, bytes]] = [
        ("general.architecture", 8, _string("llama")),
        ("general.name", 8, _string("Tiny Test")),
        ("llama.block_count", 4, struct.pack("<I", layers)),
        ("llama.context_length", 4, struct.pack("<I", context)),
        ("llama.embedding_length", 4, struct.pack("<I", 576)),
        ("llama.attention.head_count", 4, struct.pack("<I", 9)),
        ("llama.attention.head_count_kv", 4, struct.pack("<I", kv_heads)),
        ("llama.rope.freq_base", 6, struct.pack("<f", 10000.0)),
        # a big scalar table is skipped, a string table is read through
        ("tokenizer.ggml.scores", 9, struct.pack("<IQ", 6, 100) + b"\0" * 400),
        ("tokenizer.ggml.tokens", 9, struct.pack("<IQ", 8, 2) + _string("a") + _string("b")),
    ]
    body = b"".join(_string(k) + struct.pack("<I", t) + v for k, t, v in kv)
    path.write_bytes(b"GGUF" + struct.pack("<IQQ", 3, 0, len(kv)) + body)
    return path


@pytest.fixture
def gguf(tmp_path: Path) -> Path:
    return write_gguf(tmp_path / "tiny.gguf")


def test_header_is_read(gguf: Path) -> None:
    info = check_gguf(gguf)
    assert (info.architecture, info.n_layer, info.n_head_kv, info.context_length) == (
        "llama",
        30,
        3,
        8192,
    )
    assert info.key_length == info.value_length == 64  # 576 / 9 heads
    assert info.kv_bytes_per_token == 2 * 30 * 3 * 128
    assert info.name == "tiny"


def test_missing_and_non_gguf_files_are_one_line(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match=r"does not exist \(give a \.gguf model file\)"):
        check_gguf(tmp_path / "nope.gguf")
    text = tmp_path / "notes.txt"
    text.write_text("hello, not a model")
    with pytest.raises(UsageError, match="is not a valid GGUF model file") as info:
        check_gguf(text)
    assert str(text) in str(info.value) and "\n" not in str(info.value)
    truncated = tmp_path / "cut.gguf"
    truncated.write_bytes(write_gguf(tmp_path / "whole.gguf").read_bytes()[:40])
    with pytest.raises(UsageError, match="is not a valid GGUF model file"):
        check_gguf(truncated)
    with pytest.raises(UsageError, match="is not a file"):
        check_gguf(tmp_path)


def test_local_path_and_environment(gguf: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert resolve_gguf(f"local:{gguf}") == gguf
    monkeypatch.setenv(GGUF_ENV, str(gguf))
    assert resolve_gguf("local") == gguf
    monkeypatch.setenv(GGUF_ENV, str(gguf.with_name("gone.gguf")))
    with pytest.raises(UsageError, match=f"{GGUF_ENV}: .*gone.gguf does not exist"):
        resolve_gguf("local")


def test_spec_checks_the_file_and_slots(gguf: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    spec = ModelSpec(model=f"local:{gguf}", slots=2)
    assert spec.is_local and spec.validated() is spec
    with pytest.raises(UsageError, match="does not exist"):
        ModelSpec(model="local:/no/such/model.gguf").validated()
    monkeypatch.setattr(local_server, "available_memory", lambda: 8 << 30)
    limit = local.slot_limit(check_gguf(gguf))
    assert 1 < limit < local_server.MAX_SLOTS_RUNTIME
    with pytest.raises(UsageError, match=f"--max-concurrency {limit + 1} is outside 1..{limit}"):
        ModelSpec(model=f"local:{gguf}", slots=limit + 1).validated()
    with pytest.raises(UsageError, match="--max-concurrency 0 is outside"):
        ModelSpec(model=f"local:{gguf}", slots=0).validated()


def test_runtime_missing_names_the_install_command(
    gguf: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(local_server, "runtime_available", lambda: False)
    with pytest.raises(UsageError, match=r'pip install -e "\.\[local\]"'):
        local.LocalModelServer(gguf).start()


def test_failure_names_the_signal_and_last_log_line(gguf: Path) -> None:
    server = local.LocalModelServer(gguf)
    assert server.failure() is None  # never started
    log = tempfile.TemporaryFile()  # noqa: SIM115 - the server closes it in stop()
    code = "import os, signal; print('loading tensors', flush=True); os.kill(os.getpid(), 11)"
    server._log = log
    server._proc = subprocess.Popen([sys.executable, "-c", code], stdout=log, stderr=log)
    message = server.failure(wait_s=10)
    assert message == (
        "embedded model process died (SIGSEGV, signal 11); last log line: loading tensors"
    )
    server._proc = subprocess.Popen([sys.executable, "-c", "raise SystemExit(3)"])
    assert (server.failure(wait_s=10) or "").startswith("embedded model process exited with code 3")
    server.stop()


# -- CLI -------------------------------------------------------------------------------


def test_cli_bad_gguf_paths(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    db = str(tmp_path / "d.sqlite")
    code, _, err = run_cli(["solve", "1+1?", "--model", "local:/no/such.gguf", "--db", db], capsys)
    assert code == 2
    assert "/no/such.gguf does not exist" in one_error_line(err)
    notes = tmp_path / "notes.txt"
    notes.write_text("not a model")
    code, _, err = run_cli(["debate", "Tea", "--model", f"local:{notes}", "--db", db], capsys)
    assert code == 2
    assert "is not a valid GGUF model file" in one_error_line(err)


def test_cli_concurrency_limits(
    gguf: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = str(tmp_path / "d.sqlite")
    args: list[Any] = ["solve", "1+1?", "--model", f"local:{gguf}", "--db", db]
    code, _, err = run_cli([*args, "--max-concurrency", "0"], capsys)
    assert (code, "--max-concurrency 0 must be at least 1" in one_error_line(err)) == (2, True)
    code, _, err = run_cli([*args, "--max-concurrency", "100000"], capsys)
    assert code == 2
    line = one_error_line(err)
    assert "--max-concurrency 100000 is outside 1.." in line and "parallel slots" in line


def test_cli_runtime_missing(
    gguf: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(local_server, "runtime_available", lambda: False)
    db = tmp_path / "d.sqlite"
    code, _, err = run_cli(["solve", "1+1?", "--model", f"local:{gguf}", "--db", str(db)], capsys)
    assert code == 2
    assert "the embedded model runtime is not installed" in one_error_line(err)


def test_context_per_slot(gguf: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    info = check_gguf(gguf)
    assert local_server.slot_context(info) == local.CTX_PER_SLOT
    monkeypatch.setenv(local_server.CTX_ENV, "16384")
    assert local_server.slot_context(info) == 8192  # no more than the model was trained on
    monkeypatch.setenv(local_server.CTX_ENV, "lots")
    with pytest.raises(UsageError, match="DEBATEGRAPH_CTX_PER_SLOT='lots' must be"):
        local_server.slot_context(info)


def test_a_second_embedded_model_that_does_not_fit_is_refused_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from debategraph.local import server

    second = write_gguf(tmp_path / "second.gguf")
    monkeypatch.setattr(server, "available_memory", lambda: 64 << 20)
    with pytest.raises(
        UsageError, match=r"embedded model second.gguf needs .* beside first.gguf"
    ) as err:
        server.check_room(second, 4, [tmp_path / "first.gguf"])
    assert "\n" not in str(err.value)
    monkeypatch.setattr(server, "available_memory", lambda: 64 << 30)
    server.check_room(second, 4, [tmp_path / "first.gguf"])  # fits: no error


def test_server_threads_follow_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    from debategraph.local.server import THREADS_ENV, server_threads, usable_cores

    monkeypatch.delenv(THREADS_ENV, raising=False)
    assert server_threads() == usable_cores()
    monkeypatch.setenv(THREADS_ENV, "3")
    assert server_threads() == 3
    for bad in ("0", "two", "-1"):
        monkeypatch.setenv(THREADS_ENV, bad)
        with pytest.raises(UsageError, match=f"{THREADS_ENV}='{bad}' must be a whole number"):
            server_threads()
