"""Typed persisted records of the nodes: what each role remembers across restarts.

Every record is a pydantic model: 32-byte hashes are `bytes` in memory and 0x-hex strings on
disk (`Hash32`), ids are ints. A `RecordStore` keeps one model in one JSON file, rewritten
atomically (temporary file + fsync + rename) when a `transaction()` block exits cleanly, so a
node killed at any point resumes from a complete file::

    store = RecordStore(data_dir / "solver_state.json", SolverRecords)
    with store.transaction() as records:
        records.jobs[7].phase = Phase.TRAINED
    store.read().jobs[7].phase                 # "trained"

Run: not a script; ``from noderuntime.records import RecordStore, SolverRecords``.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Generic, TypeVar

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    PlainSerializer,
    ValidationError,
    model_validator,
)

from veritrain.errors import NodeStateError
from veritrain.hexutil import as_bytes32, to_hex
from veritrain.store import atomic_write_bytes

if TYPE_CHECKING:
    from chain.types import ChainIdentity

__all__ = [
    "ChainBinding",
    "CheckResult",
    "GameMove",
    "GameRecord",
    "JobIndex",
    "Hash32",
    "NodeRecords",
    "Phase",
    "Record",
    "RecordStore",
    "SolverClaims",
    "SolverJob",
    "SolverRecords",
    "StartIndex",
    "VerifierJob",
    "VerifierRecords",
    "Vote",
    "WhistleblowerRecords",
]


def _hash32(value: Any) -> bytes:
    if isinstance(value, bytearray):
        value = bytes(value)
    if isinstance(value, bytes | str):
        return as_bytes32(value)
    raise ValueError(f"expected 32 bytes or a 0x-hex string, got {type(value).__name__}")


Hash32 = Annotated[
    bytes,
    BeforeValidator(_hash32),
    PlainSerializer(to_hex, return_type=str, when_used="json"),
]
"""A 32-byte hash: `bytes` in memory, a 0x-hex string on disk (any of both accepted in)."""


class Record(BaseModel):
    """Base of every persisted record: assignments are validated, unknown keys ignored."""

    model_config = ConfigDict(validate_assignment=True, extra="ignore")


R = TypeVar("R", bound=Record)


class RecordStore(Generic[R]):
    """One record model persisted atomically in one JSON file.

    Args:
        path: the JSON file (its directory is created if missing).
        model: the record class; a missing file starts from ``model()``.

    Raises:
        NodeStateError: the existing file is not valid JSON for ``model``.
    """

    def __init__(self, path: str | Path, model: type[R]) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.model = model
        self._lock = threading.RLock()
        if self.path.exists():
            try:
                self._value = model.model_validate_json(self.path.read_bytes())
            except (OSError, ValidationError) as exc:
                raise NodeStateError(f"cannot read node state {self.path}: {exc}") from exc
        else:
            self._value = model()

    def read(self) -> R:
        """A deep copy of the current record (changing it changes nothing on disk)."""
        with self._lock:
            return self._value.model_copy(deep=True)

    @contextmanager
    def transaction(self) -> Iterator[R]:
        """Change a working copy under the lock; written once when the block exits cleanly.

        If the block raises, nothing is written and the record stays as it was.

        Yields:
            The working copy to change in place.
        """
        with self._lock:
            working = self._value.model_copy(deep=True)
            yield working
            self._write(working)
            self._value = working

    def reset(self, archive: Path) -> None:
        """Move the file into the folder `archive` (created) and start again from ``model()``.

        Args:
            archive: where the old file goes, under its own name.
        """
        with self._lock:
            if self.path.exists():
                archive.mkdir(parents=True, exist_ok=True)
                self.path.replace(archive / self.path.name)
            self._value = self.model()

    def save(self) -> None:
        """Write the current record (e.g. to materialise the default)."""
        with self._lock:
            self._write(self._value)

    def _write(self, value: R) -> None:
        text = value.model_dump_json(indent=2)
        atomic_write_bytes(self.path, text.encode("utf-8"))


# ------------------------------------------------------------------------------ shared parts
class CheckResult(Record):
    """The outcome of replaying one claimed segment.

    Attributes:
        ok: the replay matched the claim (approve).
        reason: why not, when ``ok`` is False.
        end: the end state hash the replay computed (None when no replay ran: the start
            checkpoint was unavailable or did not match its claim, or the node did not replay).
    """

    ok: bool
    reason: str = ""
    end: Hash32 | None = None


class GameMove(Record):
    """One move this node made in a dissection game (docs/DISPUTES.md).

    Attributes:
        kind: `veritrain.bisection.MoveKind` value.
        lo, hi: the interval (steps) the move was computed for.
        steps: the points the move's hashes are at: the interior points ``point(1..parts-1)``
            for a bisect, ``point(1..parts)`` for a response.
        hashes: the state hashes at ``steps``: posted (bisect) or this node's own (respond).
        index: the part a response picked, ``[point(index), point(index + 1)]``.
        start, end: the endpoints posted first.

    Records written by the binary game (``step``, ``hash``, ``agree``) load as their one-point
    equivalent: agree was part 1 (``[mid, hi]``), disagree part 0 (``[lo, mid]``).
    """

    kind: str
    lo: int
    hi: int
    steps: list[int] = Field(default_factory=list)
    hashes: list[Hash32] = Field(default_factory=list)
    index: int | None = None
    start: Hash32 | None = None
    end: Hash32 | None = None

    @model_validator(mode="before")
    @classmethod
    def _from_binary(cls, data: Any) -> Any:
        """Map a binary-bisection record (``step``/``hash``/``agree``) onto this shape."""
        if not isinstance(data, dict) or not {"step", "hash", "agree"} & data.keys():
            return data
        data = dict(data)
        step, digest = data.pop("step", None), data.pop("hash", None)
        agree = data.pop("agree", None)
        if step is not None and "steps" not in data:
            data["steps"] = [step]
        if digest is not None and "hashes" not in data:
            data["hashes"] = [digest]
        if agree is not None and "index" not in data:
            data["index"] = 1 if agree else 0
        return data


class GameRecord(Record):
    """The moves of one game, keyed by its dispute id in `NodeRecords.games`."""

    job_id: int
    segment: int
    moves: list[GameMove] = Field(default_factory=list)


class JobIndex(Record):
    """The jobs a node may act on, kept from JobManager events (`NodeBase.follow_jobs`).

    Attributes:
        cursor: the next block whose events are still to read (resumes after a restart).
        to_assign: jobs whose checkpoints are committed and whose verifiers are not assigned
            yet (the `assignVerifiers` duty anyone may do).
        watch: jobs this node has a part in (e.g. a verifier's assigned jobs), until settled.
    """

    cursor: int = 0
    to_assign: list[int] = Field(default_factory=list)
    watch: list[int] = Field(default_factory=list)


class ChainBinding(Record):
    """The chain and deployment a node's records were made on (`chain.types.ChainIdentity`):
    job ids, cursors and phases mean nothing on another chain, or on a devnet restarted from
    genesis (same chain id and addresses, another deployment block hash).

    Attributes:
        chain_id: EIP-155 chain id.
        deployment: the deployment's JobManager address.
        block: the deployment block number.
        block_hash: 0x-hex hash of that block.
    """

    chain_id: int
    deployment: str
    block: int
    block_hash: str

    @classmethod
    def of(cls, identity: ChainIdentity) -> ChainBinding:
        """The binding of a live `chain.types.ChainIdentity`."""
        return cls(
            chain_id=identity.chain_id,
            deployment=identity.deployment,
            block=identity.block,
            block_hash=identity.block_hash,
        )

    def describe(self) -> str:
        """``chain 31337, deployment 0x.., block 1 (0xab..)`` (`ChainIdentity.describe`)."""
        from chain.types import ChainIdentity

        return ChainIdentity(
            chain_id=self.chain_id,
            deployment=self.deployment,
            block=self.block,
            block_hash=self.block_hash,
        ).describe()


class NodeRecords(Record):
    """What every node remembers: the chain it is bound to, its games and its index of jobs it
    may act on."""

    chain: ChainBinding | None = None
    games: dict[int, GameRecord] = Field(default_factory=dict)
    index: JobIndex = Field(default_factory=JobIndex)


class StartIndex(Record):
    """Segment start checkpoints already fetched and proven: ``"job:segment"`` -> state hash."""

    starts: dict[str, Hash32] = Field(default_factory=dict)


# ------------------------------------------------------------------------------------ solver
class Phase:
    """Solver-side job phases (persisted strings)."""

    TRAINING = "training"
    TRAINED = "trained"
    COMMITTED = "committed"
    DONE = "done"
    ABANDONED = "abandoned"


class SolverClaims(Record):
    """The claims a solver posts for its sampled segments (docs/FORCED_ERRORS.md)."""

    segments: list[int]
    starts: list[Hash32]
    ends: list[Hash32]
    forced_sample: int | None = None
    forced_true_end: Hash32


class SolverJob(Record):
    """One job a solver holds, from its claim to its settlement.

    Attributes:
        phase: a `Phase` value.
        spec_uri, spec_hash: the job's spec and its on-chain hash.
        total_steps, interval: N and k (steps).
        hashes: state hashes of the checkpoints made so far (steps 0, k, ...).
        root: the Merkle root once trained.
        secret: the forced-error secret, persisted before the commit.
        submission: this solver's `SubmissionId` of the job (keys its verification round).
        url: the committed checkpointURL.
        claims: the claims drawn once assigned.
        revealed: whether the secret is revealed (the server is unsealed).
        outcome: the final `JobStatus` name.
    """

    phase: str
    spec_uri: str
    spec_hash: Hash32
    total_steps: int
    interval: int
    hashes: list[Hash32] = Field(default_factory=list)
    root: Hash32 | None = None
    secret: Hash32 | None = None
    submission: Hash32 | None = None
    url: str | None = None
    claims: SolverClaims | None = None
    revealed: bool = False
    outcome: str | None = None


class SolverRecords(NodeRecords):
    """The solver's state file: its jobs, the jobs it will not take, and its measured speed.

    Attributes:
        jobs: the jobs it holds or held, by job id.
        skip: job ids it will not take (unusable, or too long to finish in time).
        step_rates: measured training speed per spec, steps per second, keyed by the spec
            hash's 64 hex digits (measured once per spec; see `SolverNode.step_rate`).
        checkpoint_seconds: measured seconds to encode and hash one checkpoint, same keys.
    """

    jobs: dict[int, SolverJob] = Field(default_factory=dict)
    skip: list[int] = Field(default_factory=list)
    step_rates: dict[str, float] = Field(default_factory=dict)
    checkpoint_seconds: dict[str, float] = Field(default_factory=dict)


# ---------------------------------------------------------------------------------- verifier
class VerifierJob(Record):
    """A verifier's progress on one assigned job.

    Attributes:
        submission: the `SubmissionId` the verdicts are about (``submissionOf(jobId)``).
        results: replay result per sample index.
        ends, salt: the sealed verdicts, persisted before `commitVerdicts`: one end state hash
            per sample (the claim to approve, the replayed end or
            `veritrain.forced.UNREPLAYED_END` to reject). A file written before verdicts were
            end hashes holds ``approvals`` instead: it is ignored on load, so a job sealed in
            that format takes the ``lost`` path (it cannot be revealed).
        submitted: True once revealed (False when the deadline was missed).
        missed: the verdict deadline passed before sealing.
        lost: sealed on chain but the verdicts are not in this file.
        seal_handed_at, reveal_handed_at: chain time (seconds) the seal or the reveal was
            handed to the job's solver for its batch (`verifier.node`); the seat sends its own
            transaction when the chain does not show it done a hand-off wait later.
        seen_seals: every seat's signed seal as the solver showed it before this seat opened
            its own (lower-case address -> [commitment, signature], 0x-hex), kept as evidence
            against a seat that signs a second one (docs/SECURITY.md P-40).
        seals_checked: the seals on chain were compared with `seen_seals` (and any
            equivocation proven).
    """

    submission: Hash32 | None = None
    results: dict[int, CheckResult] = Field(default_factory=dict)
    ends: list[Hash32] | None = None
    salt: Hash32 | None = None
    submitted: bool | None = None
    missed: bool = False
    lost: bool = False
    seal_handed_at: int | None = None
    reveal_handed_at: int | None = None
    seen_seals: dict[str, list[str]] = Field(default_factory=dict)
    seals_checked: bool = False


class Vote(Record):
    """A committee vote, persisted before `commitVote` so it can be revealed."""

    valid: bool
    salt: Hash32


class VerifierRecords(NodeRecords):
    """The verifier's state file."""

    jobs: dict[int, VerifierJob] = Field(default_factory=dict)
    votes: dict[int, Vote] = Field(default_factory=dict)
    done_jobs: list[int] = Field(default_factory=list)
    done_disputes: list[int] = Field(default_factory=list)


# ----------------------------------------------------------------------------- whistleblower
class WhistleblowerRecords(NodeRecords):
    """The whistleblower's state file.

    Attributes:
        checks: replay result per ``"job:sample"``.
        challenges: ``"job:sample:verifier"`` already challenged (by us or anyone).
        filed: ``"job:sample:verifier"`` this whistleblower challenged whose outcome (won,
            lost) is not counted yet (`veritrain_challenges_total`).
        done_jobs: jobs past settlement.
    """

    checks: dict[str, CheckResult] = Field(default_factory=dict)
    challenges: list[str] = Field(default_factory=list)
    filed: list[str] = Field(default_factory=list)
    done_jobs: list[int] = Field(default_factory=list)
