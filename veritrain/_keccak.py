"""keccak256 (Ethereum's pre-standard SHA-3), via eth-hash (installed with web3)."""

from __future__ import annotations

from eth_hash.auto import keccak as _keccak


def keccak256(data: bytes) -> bytes:
    """Return the 32-byte keccak256 digest of `data` (the EVM's `keccak256`)."""
    return _keccak(bytes(data))
