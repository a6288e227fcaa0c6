"""veritrain core: job specs, deterministic training, checkpoints, Merkle commitments, replay.

Shared by every role (solver, verifier, whistleblower). Importing `veritrain` stays light:
torch-backed names (`TrainingEngine`, `TrainState`, `apply_profile`, `build_model`) load
lazily on first access (PEP 562).

Run: not a script; `import veritrain; spec = veritrain.default_digits_spec()`.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from veritrain.commitments import leaf_hash
from veritrain.data import Dataset, batch_indices, dataset_root, dataset_root_hex, load_dataset
from veritrain.errors import (
    CheckpointFormatError,
    CheckpointHashMismatch,
    CheckpointNotFound,
    CheckpointUnavailable,
    DatasetError,
    DatasetRootMismatch,
    MerkleError,
    MerkleProofInvalid,
    NodeStateError,
    ProfileUnavailable,
    RemoteResponseError,
    SpecError,
    SpecHashMismatch,
    SpecUnavailable,
    VeritrainError,
)
from veritrain.hexutil import as_bytes32, from_hex, to_hex
from veritrain.merkle import MerkleTree, checkpoint_tree, verify_checkpoint, verify_proof
from veritrain.replay import (
    SegmentCheck,
    check_segment,
    replay_segment,
)
from veritrain.spec import (
    DatasetConfig,
    ExecutionProfile,
    GPTConfig,
    JobSpec,
    LlamaConfig,
    ModelConfig,
    OptimizerConfig,
    default_digits_spec,
    load_spec,
    model_id_hash,
)
from veritrain.state import decode_state, encode_state, state_hash, verify_state_hash
from veritrain.store import CheckpointStore
from veritrain.wire import CheckpointClient, ManifestResponse, ProofResponse

if TYPE_CHECKING:
    from veritrain.training import TrainingEngine, TrainState, apply_profile, build_model

_LAZY = {
    "TrainingEngine": "veritrain.training",
    "TrainState": "veritrain.training",
    "apply_profile": "veritrain.training",
    "build_model": "veritrain.training",
}

__version__ = "0.1.0"

__all__ = [
    "CheckpointFormatError",
    "CheckpointHashMismatch",
    "CheckpointNotFound",
    "CheckpointClient",
    "CheckpointStore",
    "CheckpointUnavailable",
    "Dataset",
    "DatasetConfig",
    "DatasetError",
    "DatasetRootMismatch",
    "ExecutionProfile",
    "GPTConfig",
    "LlamaConfig",
    "JobSpec",
    "ManifestResponse",
    "MerkleError",
    "MerkleProofInvalid",
    "MerkleTree",
    "ModelConfig",
    "NodeStateError",
    "OptimizerConfig",
    "ProfileUnavailable",
    "ProofResponse",
    "RemoteResponseError",
    "SegmentCheck",
    "SpecError",
    "SpecHashMismatch",
    "SpecUnavailable",
    "TrainState",
    "TrainingEngine",
    "VeritrainError",
    "apply_profile",
    "as_bytes32",
    "batch_indices",
    "build_model",
    "check_segment",
    "checkpoint_tree",
    "dataset_root",
    "dataset_root_hex",
    "decode_state",
    "default_digits_spec",
    "encode_state",
    "from_hex",
    "leaf_hash",
    "load_dataset",
    "load_spec",
    "model_id_hash",
    "replay_segment",
    "state_hash",
    "to_hex",
    "verify_checkpoint",
    "verify_proof",
    "verify_state_hash",
]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'veritrain' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
