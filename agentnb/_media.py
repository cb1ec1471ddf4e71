"""Recognise what binary data is from its first bytes, for content that arrives without a media type."""

from __future__ import annotations

import base64
import binascii

__all__ = ["detect_media_type_from_base64"]

# (prefix, media type); RIFF containers are told apart by bytes 8-12.
_SIGNATURES: tuple[tuple[bytes, str], ...] = (
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
    (b"BM", "image/bmp"),
    (b"<svg", "image/svg+xml"),
    (b"<?xml", "image/svg+xml"),
    (b"%PDF-", "application/pdf"),
    (b"ID3", "audio/mpeg"),
    (b"\xff\xfb", "audio/mpeg"),
    (b"\xff\xf3", "audio/mpeg"),
    (b"OggS", "audio/ogg"),
    (b"fLaC", "audio/flac"),
)
_RIFF = {b"WEBP": "image/webp", b"WAVE": "audio/wav"}


def detect_media_type_from_base64(
    *, data_bytes: bytes | None = None, data_str: str | None = None, data_uri: str | None = None
) -> str | None:
    """The media type of the data (``"image/png"``, ``"application/pdf"``, ...), or ``None`` if unrecognised.

    Give exactly one of raw bytes, a base64 string, or a ``data:`` URI (whose declared type is not trusted:
    the bytes decide).

    Example:
        >>> detect_media_type_from_base64(data_str="iVBORw0KGgo=")
        'image/png'
    """
    if sum(x is not None for x in (data_bytes, data_str, data_uri)) != 1:
        raise ValueError("Provide exactly one of data_bytes, data_str, or data_uri.")
    if data_uri is not None:
        if not data_uri.startswith("data:") or "," not in data_uri:
            raise ValueError(f"Invalid data URI format. Expected 'data:<type>;base64,<data>', got {data_uri[:40]!r}.")
        prefix, data_str = data_uri.split(",", 1)
        if not prefix.endswith(";base64"):
            raise ValueError("Data URI must use base64 encoding.")
    if data_str is not None:
        try:
            data_bytes = base64.b64decode(data_str, validate=True)
        except (binascii.Error, ValueError) as e:
            raise ValueError("Invalid base64 data provided.") from e
    data = data_bytes or b""
    if data.startswith(b"RIFF") and len(data) > 11:
        return _RIFF.get(data[8:12])
    return next((media for prefix, media in _SIGNATURES if data.startswith(prefix)), None)
