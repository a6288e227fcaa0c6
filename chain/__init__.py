"""veritrain's chain bindings: the only package that imports web3.

- `Anvil`: a local devnet process (context manager); `DEV_PRIVATE_KEYS` are Anvil's public keys.
- `build`, `load_artifact`: Forge artifacts from ``contracts/out`` (ABIs are never hand-copied).
- `deploy_protocol` (`chain.deploy`); `ProtocolParams`, `Deployment`, `write_manifest`,
  `load_manifest` (`chain.manifest`, which imports no client).
- `ChainClient`: a `chain.transport.Transport` (signing, nonces, fees, reverts, devnet RPCs)
  with one typed facade per contract: ``client.token``, ``.stakes``, ``.jobs``, ``.round``,
  ``.committee``, ``.game``, ``.shares`` (`chain.contracts`).
- `EventWatcher`: ordered, resumable event polling that survives RPC outages.
- `ChainError`, `ContractRevert` (decoded custom errors), `RpcUnavailable`.
- Keys: `chain.keys` (`create_keystore`, `load_keystore`, `load_account`), not imported here
  so that ``python -m chain.keys`` runs it as a script.

Run the chain tests: ``.venv/bin/python -m pytest tests/unit/chain tests/integration``.
"""

from chain.anvil import DEV_MNEMONIC, DEV_PRIVATE_KEYS, Anvil, AnvilError, dev_accounts
from chain.artifacts import ArtifactError, build, load_artifact, repo_root
from chain.client import MAX_UINT256, ChainClient
from chain.deploy import deploy_protocol
from chain.errors import (
    ChainError,
    ChainValueError,
    ContractRevert,
    EventLogMissing,
    RpcUnavailable,
    TransactionFailed,
    decode_revert,
    error_class,
)
from chain.events import EventCursor, EventWatcher, merge_in_order
from chain.manifest import (
    ContractAddresses,
    Deployment,
    ProtocolParams,
    load_manifest,
    manifest_path,
    write_manifest,
)
from chain.types import (
    Assignment,
    ClaimsView,
    DecodedEvent,
    DisputePhase,
    DisputeStatus,
    DisputeView,
    GameStatus,
    GameView,
    JobParamsView,
    JobStatus,
    JobView,
    Role,
    RoundOutcome,
    RoundView,
    RoundWindows,
    Side,
    StakeView,
    StepClaimView,
    Verdict,
)

__all__ = [
    "DEV_MNEMONIC",
    "DEV_PRIVATE_KEYS",
    "MAX_UINT256",
    "Anvil",
    "AnvilError",
    "ArtifactError",
    "Assignment",
    "ChainClient",
    "ChainError",
    "ClaimsView",
    "ChainValueError",
    "ContractAddresses",
    "ContractRevert",
    "DecodedEvent",
    "Deployment",
    "EventLogMissing",
    "DisputePhase",
    "DisputeStatus",
    "DisputeView",
    "GameStatus",
    "GameView",
    "Side",
    "StepClaimView",
    "EventCursor",
    "EventWatcher",
    "JobParamsView",
    "JobStatus",
    "JobView",
    "ProtocolParams",
    "Role",
    "RoundOutcome",
    "RoundView",
    "RoundWindows",
    "RpcUnavailable",
    "StakeView",
    "TransactionFailed",
    "Verdict",
    "build",
    "decode_revert",
    "deploy_protocol",
    "dev_accounts",
    "error_class",
    "load_artifact",
    "load_manifest",
    "manifest_path",
    "merge_in_order",
    "repo_root",
    "write_manifest",
]
