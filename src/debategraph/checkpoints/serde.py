"""The checkpoint serializer: LangGraph's, restricted to safe types, its blobs compressed.

Each checkpoint and pending write is one msgpack blob, and most of a small blob is names
repeated in every one of them: ``debategraph.state.records``, ``Usage``,
``prompt_tokens``, ``model_validate_json``, ``channel_versions``, ``branch:to:``. Blobs
are compressed with zlib and a preset dictionary of those names, through LangGraph's own
wrapper for transformed blobs (:class:`~langgraph.checkpoint.serde.encrypted.EncryptedSerializer`
with a :class:`Deflate` "cipher"): the stored type becomes ``msgpack+z1`` (compressed) or
``msgpack+z0`` (stored as it was, where compressing would not make it smaller). Blobs
without a ``+`` (everything written before) load as they always did.
"""

from __future__ import annotations

import functools
import zlib
from typing import TYPE_CHECKING, Any

from debategraph.errors import UnreadableCheckpointError

if TYPE_CHECKING:  # imported where used: the CLI's --help loads none of LangGraph
    from langgraph.checkpoint.serde.base import SerializerProtocol
    from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

#: Blobs shorter than this are stored as they are (``z0``).
COMPRESS_MIN_BYTES = 32
#: zlib level: 6 is zlib's default, within a few percent of 9 on blobs this small.
COMPRESS_LEVEL = 6
#: The preset dictionary of ``z1``: strings every checkpoint of every pattern repeats
#: (LangGraph's checkpoint keys and channel prefixes, the base state's keys, the shared
#: records' module, classes and fields, pydantic's revival method). zlib finds a match
#: here as it would earlier in the same blob; the most frequent come last (closest).
#: NEVER EDIT: stored blobs need these exact bytes. For another dictionary add ``z2``.
ZDICT_V1 = " ".join(
    (
        "__interrupt__ __pregel_tasks __pregel_resuming __input__ updated_channels",
        "builtins datetime notes started_at termination_reason rounds_completed",
        "RoundRecord answers agreement votes stage reply_to recipients timestamp",
        "role agent user content confidence answer reason",
        "debategraph.state.records Turn id round usage_by_agent transcript",
        "channel_values channel_versions versions_seen __start__ join: branch:to:",
        "usage debategraph.state.records Usage prompt_tokens completion_tokens calls",
        "latency_s estimated model_validate_json",
    )
).encode()

_RAW = -15  # raw deflate: no zlib header or checksum (SQLite keeps the bytes intact)


class Deflate:
    """A :class:`~langgraph.checkpoint.serde.base.CipherProtocol` that compresses.

    ``encrypt`` names what it did: ``z1`` (deflate with :data:`ZDICT_V1`) or ``z0``
    (stored as given: short, or not smaller compressed).
    """

    def encrypt(self, plaintext: bytes) -> tuple[str, bytes]:
        """Compress ``plaintext`` when that makes it smaller.

        Args:
            plaintext: A serialized blob.

        Returns:
            ``(name, bytes)``: ``("z1", compressed)`` or ``("z0", plaintext)``.
        """
        if len(plaintext) < COMPRESS_MIN_BYTES:
            return "z0", plaintext
        packer = zlib.compressobj(
            COMPRESS_LEVEL, zlib.DEFLATED, _RAW, 9, zlib.Z_DEFAULT_STRATEGY, ZDICT_V1
        )
        packed = packer.compress(plaintext) + packer.flush()
        return ("z1", packed) if len(packed) < len(plaintext) else ("z0", plaintext)

    def decrypt(self, ciphername: str, ciphertext: bytes) -> bytes:
        """Undo :meth:`encrypt`.

        Args:
            ciphername: ``z0`` or ``z1``.
            ciphertext: The stored bytes.

        Returns:
            The serialized blob.

        Raises:
            UnreadableCheckpointError: For another name (a blob written by a newer
                version), or a blob cut short or corrupt; the CLI shows it as one line.
        """
        if ciphername == "z0":
            return ciphertext
        if ciphername == "z1":
            unpacker = zlib.decompressobj(_RAW, ZDICT_V1)
            try:
                data = unpacker.decompress(ciphertext) + unpacker.flush()
            except zlib.error as exc:
                raise UnreadableCheckpointError(f"a checkpoint blob is corrupt: {exc}") from exc
            if not unpacker.eof:  # raw deflate has no checksum: at least it must be whole
                raise UnreadableCheckpointError("a checkpoint blob is cut short (corrupt)")
            return data
        raise UnreadableCheckpointError(
            f"a checkpoint is stored as {ciphername!r}, which this version of debategraph "
            "cannot read (it reads z0 and z1): upgrade debategraph to read this database"
        )


def serializer() -> SerializerProtocol:
    """Checkpoint serializer: safe types and our records only, blobs compressed.

    Returns:
        LangGraph's :class:`JsonPlusSerializer` (msgpack allowlist: LangGraph's safe
        types and every known pattern's records, :func:`debategraph.registry.record_types`),
        as a subclass that stores a transcript write's model labels once
        (:func:`~debategraph.state.records.stored_form`), inside its
        ``EncryptedSerializer`` with the :class:`Deflate` cipher. LangGraph sees through
        the wrapper when it extends the allowlist (``with_allowlist``, which copies the
        inner serializer, subclass and all).
    """
    from langgraph.checkpoint.serde.encrypted import EncryptedSerializer

    from debategraph.registry import record_types

    inner = _stored_form_serializer()(
        allowed_msgpack_modules=[(t.__module__, t.__name__) for t in record_types()]
    )
    return EncryptedSerializer(Deflate(), inner)


@functools.cache
def _stored_form_serializer() -> type[JsonPlusSerializer]:
    """LangGraph's :class:`JsonPlusSerializer`, dumping a value's stored form.

    Made on first use: the CLI's ``--help`` loads none of LangGraph.
    """
    from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

    from debategraph.state.records import stored_form

    class StoredFormSerializer(JsonPlusSerializer):
        """Dumps :func:`~debategraph.state.records.stored_form` of each value."""

        def dumps_typed(self, obj: Any) -> tuple[str, bytes]:
            return super().dumps_typed(stored_form(obj))

    return StoredFormSerializer
