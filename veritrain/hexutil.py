"""Hex helpers for 32-byte hashes: the wire format is a lowercase `0x`-prefixed string.

Run: not a script; `from veritrain.hexutil import to_hex, from_hex`.
"""

from __future__ import annotations


def to_hex(data: bytes) -> str:
    """Encode bytes as a lowercase `0x`-prefixed hex string.

    Args:
        data: any bytes.

    Returns:
        `"0x" + data.hex()`.
    """
    return "0x" + bytes(data).hex()


def from_hex(text: str) -> bytes:
    """Decode a hex string, with or without the `0x` prefix.

    Args:
        text: hex digits, optionally prefixed by `0x`/`0X`.

    Returns:
        The decoded bytes.

    Raises:
        ValueError: if `text` is not valid hex.
    """
    body = text[2:] if text[:2] in ("0x", "0X") else text
    return bytes.fromhex(body)


def as_bytes32(value: bytes | str) -> bytes:
    """Normalise a 32-byte hash given as raw bytes or as a hex string.

    Args:
        value: 32 raw bytes or a 64-digit hex string (optionally `0x`-prefixed).

    Returns:
        The 32 raw bytes.

    Raises:
        ValueError: if the value is not exactly 32 bytes long.
    """
    raw = from_hex(value) if isinstance(value, str) else bytes(value)
    if len(raw) != 32:
        raise ValueError(f"expected 32 bytes, got {len(raw)}")
    return raw
