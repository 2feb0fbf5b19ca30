"""Content digests of a row's candidate and references: what proves, the next night,
that a row is the same row (`run --reuse`, pipeline.reuse), never its name or path.

Each digest is the first 8 bytes of the SHA-256 of a canonical form of the text as
the pipeline read it (before any tokenization, so any change a scorer could see
changes it):

    a text given as a string      b"s" + its UTF-8 bytes
    a text given as sentences     b"l" + for each sentence: its UTF-8 length as 8
                                  bytes little-endian, then its UTF-8 bytes
    a list of references          b"r" + for each reference: the length of its
                                  canonical form (above) as 8 bytes little-endian,
                                  then that form

so a string and a list of sentences never share a form, nor do two lists that
join to the same text.  The per-document table stores the two digests as signed
64-bit integers read little-endian (`candidate_digest`, `references_digest`); a
row's `digest` in the graph is the 16 bytes of both.  The human pseudo-system
(which has no candidate) has candidate digest 0.  SHA-256 because it is the
fastest strong hash here (the CPU's SHA instructions: 0.7 us a candidate,
against 0.9 for BLAKE2b), 8 bytes because a row is matched against its own
previous (system, doc_id), so a changed text passes only with a chance of 2^-64.
"""

from __future__ import annotations

import hashlib
import struct

DIGEST_BYTES = 8
NO_CANDIDATE = bytes(DIGEST_BYTES)  # the human pseudo-system's candidate digest
_LENGTH = struct.Struct("<Q")
_sha256 = hashlib.sha256


def canonical(text) -> bytes:
    """A text's canonical bytes: a string, or a list (or tuple) of sentence strings."""
    if type(text) is str:
        return b"s" + text.encode("utf-8", "surrogatepass")
    parts = [b"l"]
    for sentence in text:
        data = sentence.encode("utf-8", "surrogatepass")
        parts += (_LENGTH.pack(len(data)), data)
    return b"".join(parts)


def text_digest(text) -> bytes:
    """The 8-byte digest of a candidate text."""
    return _sha256(canonical(text)).digest()[:DIGEST_BYTES]


def references_digest(references) -> bytes:
    """The 8-byte digest of a list of reference texts."""
    parts = [b"r"]
    for reference in references:
        data = canonical(reference)
        parts += (_LENGTH.pack(len(data)), data)
    return _sha256(b"".join(parts)).digest()[:DIGEST_BYTES]


def row_digests(groups: list) -> list[bytes]:
    """The 16-byte digest of every candidate of some DocumentGroups
    (pipeline.documents), in order: its text's, then its references' (computed
    once per list of references)."""
    out = []
    for group in groups:
        seen: dict = {}
        for c, references in group.candidates:
            refs = seen.get(id(references))
            if refs is None:
                refs = seen[id(references)] = references_digest(references)
            out.append(text_digest(c.text) + refs)
    return out
