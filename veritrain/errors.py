"""Exceptions of the veritrain core package.

Every error raised on purpose by `veritrain` derives from `VeritrainError`; where it helps, the
subclass also derives from the matching builtin (`ValueError`, `LookupError`, ...) so callers
that only know the builtins still catch it (the web3.py convention).

Run: not a script; `from veritrain.errors import VeritrainError`.
"""

from __future__ import annotations


class VeritrainError(Exception):
    """Base class of every error raised by the veritrain core package."""


# --- job spec --------------------------------------------------------------------------------
class SpecError(VeritrainError, ValueError):
    """A job spec is malformed or inconsistent."""


class RetiredArithmetic(SpecError):
    """A spec names an arithmetic (`ExecutionProfile.arith`) that is no longer run, because its
    results are not the same bytes on every machine (`veritrain.spec.RETIRED_ARITHS`); the
    message says which name to post the job with instead."""


class SpecHashMismatch(SpecError):
    """The spec bytes do not hash (keccak256) to the expected on-chain `specHash`.

    Attributes:
        expected: the expected 32-byte hash.
        actual: the 32-byte keccak256 of the bytes that were received.
    """

    def __init__(self, expected: bytes, actual: bytes) -> None:
        self.expected = expected
        self.actual = actual
        super().__init__(f"spec hash mismatch: expected 0x{expected.hex()}, got 0x{actual.hex()}")


class SpecUnavailable(VeritrainError, ConnectionError):
    """The spec URI could not be read (bad scheme, missing file, HTTP failure)."""


# --- data ------------------------------------------------------------------------------------
class DatasetError(VeritrainError, ValueError):
    """A dataset could not be loaded or does not fit the model."""


class DatasetRootMismatch(DatasetError):
    """The loaded train split does not hash to the spec's `dataset.root`."""

    def __init__(self, expected: str, actual: str) -> None:
        self.expected = expected
        self.actual = actual
        super().__init__(f"dataset root mismatch: spec says {expected}, loaded data is {actual}")


# --- execution profile -----------------------------------------------------------------------
class ProfileUnavailable(VeritrainError, RuntimeError):
    """The execution profile cannot be applied here (e.g. it asks for CUDA and none is present).

    Replaying under a different profile would give different state hashes, so there is no
    silent fallback.
    """


# --- checkpoints -----------------------------------------------------------------------------
class ParallelTrainingError(VeritrainError, RuntimeError):
    """A worker of a data-parallel run (`veritrain.parallel`) died or failed; the others were
    stopped. The message names each worker and why, and the last checkpoint handed over."""


class CheckpointFormatError(VeritrainError, ValueError):
    """Bytes are not a well-formed canonical "VTCK\\x01" checkpoint, or do not fit the model."""


class CheckpointHashMismatch(VeritrainError, ValueError):
    """Checkpoint bytes do not hash to the expected state hash (`veritrain.state.state_hash`).

    Attributes:
        expected: the expected 32-byte state hash.
        actual: the 32-byte state hash of the bytes that were received or read.
        source: where the bytes came from (URL or file path), for the message.
    """

    def __init__(self, expected: bytes, actual: bytes, source: str = "") -> None:
        self.expected = expected
        self.actual = actual
        self.source = source
        where = f" from {source}" if source else ""
        super().__init__(
            f"checkpoint hash mismatch{where}: expected 0x{expected.hex()}, got 0x{actual.hex()}"
        )


class CheckpointNotFound(VeritrainError, LookupError):
    """A checkpoint with the requested hash is not in the local store."""


class CheckpointUnavailable(VeritrainError, ConnectionError):
    """A remote checkpoint/proof/manifest could not be fetched (unreachable host, timeout,
    non-2xx status)."""


class RemoteResponseError(VeritrainError, ValueError):
    """A remote server answered with a body that does not follow PROTOCOL.md section 2.4."""


# --- merkle ----------------------------------------------------------------------------------
class MerkleError(VeritrainError, ValueError):
    """A Merkle tree cannot be built (e.g. no leaves) or an index is out of range."""


class MerkleProofInvalid(MerkleError):
    """A Merkle proof does not verify against the expected (on-chain) root."""


# --- node state ------------------------------------------------------------------------------
class NodeStateError(VeritrainError, ValueError):
    """A node's persisted JSON state file is unreadable or not a JSON object."""


class ChainMismatch(NodeStateError):
    """A node's data dir holds state made on another chain or deployment (a devnet restarted
    from genesis, another RPC, another manifest): its job ids and cursors mean nothing here."""


class DataDirBusy(NodeStateError):
    """Another running node holds the lock of this data dir."""
