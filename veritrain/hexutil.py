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


def checksum_address(value: str) -> str:
    """Check a 20-byte `0x` address as EIP-55 says and return it checksummed.

    EIP-55 (https://eips.ethereum.org/EIPS/eip-55) encodes a checksum in the case of the hex
    letters: an all-lowercase or all-uppercase address carries none and is accepted as it is; a
    mixed-case one must match its checksum, so one mistyped digit is caught instead of naming an
    account nobody holds.

    Args:
        value: `0x` + 40 hex digits.

    Returns:
        The EIP-55 checksummed form (42 characters).

    Raises:
        ValueError: not `0x` + 40 hex digits, or mixed case whose checksum fails (one line, naming
            the value).
    """
    from eth_utils.address import is_checksum_address, is_hex_address, to_checksum_address

    if not isinstance(value, str) or not value.startswith("0x") or not is_hex_address(value):
        raise ValueError(f"not an address (0x + 40 hex digits): {value!r}")
    body = value[2:]
    if body != body.lower() and body != body.upper() and not is_checksum_address(value):
        raise ValueError(
            f"address {value!r} fails its EIP-55 checksum (a mistyped digit?); "
            "check it, or give it all in lowercase"
        )
    return str(to_checksum_address(value))
