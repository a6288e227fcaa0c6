"""The solver's HTTP wire (PROTOCOL.md 2.4): the response models shared by the server and its
clients, and ONE client class.

The solver serves, under its job's ``checkpointURL`` (``http://host:port/jobs/{jobId}``):
``/checkpoints/{step}`` and ``/states/{step}`` (canonical state bytes), ``/proofs/{leaf}``
(`ProofResponse`), ``/manifest`` (`ManifestResponse`) and ``/state-hashes/{step}``
(`StateHashResponse`); ``/health`` at its root (`HealthResponse`). Hashes are 0x-hex on the
wire and 32-byte ``bytes`` through the accessors.

`CheckpointClient` reads them all; it hash-checks every checkpoint and state it fetches against
the hash the caller expects before returning the bytes::

    with CheckpointClient(job.checkpoint_url) as solver:
        proof = solver.proof(3)                          # not verified here (see replay)
        blob = solver.checkpoint(30, proof.state_hash_bytes())

Run: not a script; ``from veritrain.wire import CheckpointClient``.
"""

from __future__ import annotations

from types import TracebackType
from typing import Annotated, TypeVar

import httpx
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from veritrain.bounded import BodyTooLarge, BodyTooSlow, read_body
from veritrain.errors import CheckpointUnavailable, RemoteResponseError
from veritrain.hexutil import as_bytes32
from veritrain.state import verify_state_hash

__all__ = [
    "DEFAULT_MAX_STATE_BYTES",
    "DEFAULT_TIMEOUT_S",
    "MAX_JSON_BYTES",
    "MIN_RATE_BYTES_PER_S",
    "CheckpointClient",
    "HealthResponse",
    "ManifestResponse",
    "ProofResponse",
    "StateHashResponse",
    "HANDOFF_WAIT",
    "MAX_HANDOFF_BYTES",
    "MAX_HANDOFF_ENDS",
    "hand_off_cutoff",
    "HandOffAccepted",
    "RevealHandOff",
    "SealHandOff",
    "SealSet",
]

DEFAULT_TIMEOUT_S = 60.0
"""Seconds per request when the client builds its own `httpx.Client`."""

MAX_JSON_BYTES = 64 << 20
"""The most bytes a JSON answer (proof, manifest, state hash) may have: 64 MiB, a manifest of
about 900,000 checkpoint hashes."""

DEFAULT_MAX_STATE_BYTES = 64 << 30
"""The most bytes a checkpoint or state may have unless the reader says less (64 GiB; callers
that know the spec pass its state size, `CheckpointClient(max_bytes=...)`)."""

MIN_RATE_BYTES_PER_S = 1 << 20
"""A body must keep arriving at this rate on average (1 MiB/s) after the first `timeout`
seconds: a body of b bytes gets `timeout + b / MIN_RATE_BYTES_PER_S` seconds in all."""

HASH_PATTERN = r"^0x[0-9a-fA-F]{64}$"


class ProofResponse(BaseModel):
    """Body of `GET {checkpointURL}/proofs/{leafIndex}`. Hashes are 0x-hex strings."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    job_id: int
    leaf_index: int = Field(ge=0)
    step: int = Field(ge=0)
    state_hash: str = Field(pattern=HASH_PATTERN)
    proof: list[str]
    root: str = Field(pattern=HASH_PATTERN)

    def state_hash_bytes(self) -> bytes:
        """The leaf's 32-byte state hash."""
        return as_bytes32(self.state_hash)

    def proof_bytes(self) -> list[bytes]:
        """The proof as 32-byte siblings, bottom-up."""
        return [as_bytes32(p) for p in self.proof]

    def root_bytes(self) -> bytes:
        """The root the server claims (check against the on-chain root, not this)."""
        return as_bytes32(self.root)


class ManifestResponse(BaseModel):
    """Body of `GET {checkpointURL}/manifest`: all committed state hashes, leaf order."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    job_id: int
    root: str = Field(pattern=HASH_PATTERN)
    interval: int = Field(ge=1)
    total_steps: int = Field(ge=1)
    leaves: list[str]

    def leaves_bytes(self) -> list[bytes]:
        """State hashes of steps 0, k, ..., N as 32-byte values."""
        return [as_bytes32(h) for h in self.leaves]


class StateHashResponse(BaseModel):
    """Body of `GET {checkpointURL}/state-hashes/{step}` (bisection, docs/DISPUTES.md)."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    step: int = Field(ge=0)
    state_hash: str = Field(pattern=HASH_PATTERN)

    def state_hash_bytes(self) -> bytes:
        """The 32-byte state hash."""
        return as_bytes32(self.state_hash)


ADDRESS_PATTERN = r"^0x[0-9a-fA-F]{40}$"
SIGNATURE_PATTERN = r"^0x[0-9a-fA-F]{130}$"

MAX_HANDOFF_ENDS = 256
"""The most end hashes a reveal hand-off may carry (one per sample; far above any job's
samples), so a body is bounded before anything is checked against the chain."""

HANDOFF_WAIT = 20
"""Seconds a seat waits for its handed-off seal or reveal to be on chain before it sends its
own transaction (`verifier.handoff`); the solver submits a partial batch after half of it
(`solver.aggregation`). Part of the hand-off's contract between the two, so it lives here."""


def hand_off_cutoff(closes: int, window: int) -> int:
    """Chain time (seconds) from which a seat neither hands off nor waits for a hand-off:
    ``closes - window // 3``, a third of the window kept for its own transaction. A seat waits
    for its handed seal until then at most, so the solver sends the seals it holds by then less
    `HANDOFF_WAIT` (`solver.aggregation`): both sides of the hand-off read it here.

    Args:
        closes: the window's last second (the verdict deadline, or the reveal's close).
        window: the window's length (seconds).
    """
    return int(closes) - int(window) // 3


MAX_HANDOFF_BYTES = 32 << 10
"""The most bytes a seal or reveal hand-off body may have (32 KiB: 256 ends of 66 characters
and some room); a larger body is refused with 413 unread."""


class SealHandOff(BaseModel):
    """Body of `POST {checkpointURL}/seals`: a seat's EIP-712 seal for the solver to submit
    with ``commitVerdictsFor`` (`chain.seals`; `solver.aggregation`)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    verifier: str = Field(pattern=ADDRESS_PATTERN)
    commitment: str = Field(pattern=HASH_PATTERN)
    signature: str = Field(pattern=SIGNATURE_PATTERN)


class RevealHandOff(BaseModel):
    """Body of `POST {checkpointURL}/reveals`: a seat's sealed ends and salt for the solver to
    submit with ``revealVerdictsSigned`` (every seat's in one call, before any seal is on chain)
    or ``revealVerdictsFor``; sent only once the seat holds every seat's signed seal
    (`SealSet`) or the reveal window is open."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    verifier: str = Field(pattern=ADDRESS_PATTERN)
    ends: list[Annotated[str, Field(pattern=HASH_PATTERN)]] = Field(
        min_length=1, max_length=MAX_HANDOFF_ENDS
    )
    salt: str = Field(pattern=HASH_PATTERN)

    def ends_bytes(self) -> list[bytes]:
        """The ends as 32-byte hashes (each checked by the model's pattern)."""
        return [as_bytes32(e) for e in self.ends]


class SealSet(BaseModel):
    """Body of `GET {checkpointURL}/seals`: the seals the solver holds for its job's next batch,
    not yet on chain. A seat opens its own seal to the solver (`RevealHandOff`) only once this
    holds every seat's seal, each signed by its seat; it keeps them as evidence, so a seat that
    signs a second seal after seeing the opened ends is slashed on proof of both
    (``proveEquivocation``, docs/SECURITY.md P-40)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    job_id: int = Field(ge=0)
    seals: list[SealHandOff] = Field(max_length=MAX_HANDOFF_ENDS)


class HandOffAccepted(BaseModel):
    """Answer of the hand-off routes: the entry is pending, to be submitted in a batch."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    job_id: int
    verifier: str
    pending: int = Field(ge=0)


class HealthResponse(BaseModel):
    """Body of `GET /health`."""

    status: str


_M = TypeVar("_M", bound=BaseModel)


class CheckpointClient:
    """Client of one job's checkpoint server (``checkpointURL``).

    Every answer is read as a stream and bounded, since the server is the solver's and may be
    hostile: at most `max_bytes` for a checkpoint or state and `MAX_JSON_BYTES` for JSON, and
    within `timeout` seconds plus one second per `MIN_RATE_BYTES_PER_S` received (a server
    that drips bytes is cut off). Going over either is `CheckpointUnavailable`.

    Args:
        base_url: the job's ``checkpointURL`` (``http://host:port/jobs/{jobId}``).
        http: a shared `httpx.Client` (tests pass one over a FastAPI app); the client builds
            and owns one when None.
        timeout: seconds per request (connect, each read, and the body's base allowance).
        max_bytes: the most bytes a checkpoint or state may have.
    """

    def __init__(
        self,
        base_url: str,
        http: httpx.Client | None = None,
        *,
        timeout: float = DEFAULT_TIMEOUT_S,
        max_bytes: int = DEFAULT_MAX_STATE_BYTES,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.timeout = timeout
        self.max_bytes = max_bytes
        self._owned = http is None
        self._http = (
            http if http is not None else httpx.Client(timeout=timeout, follow_redirects=True)
        )

    def __enter__(self) -> CheckpointClient:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        """Close the HTTP client if this object built it."""
        if self._owned:
            self._http.close()

    def url(self, *parts: object) -> str:
        """``base_url/part/...``."""
        return "/".join([self.base_url, *(str(p) for p in parts)])

    def _get(self, url: str, limit: int) -> bytes:
        """The body of a 200 answer, at most `limit` bytes, in time (see the class)."""
        try:
            with self._http.stream("GET", url) as resp:
                if resp.status_code != 200:
                    raise CheckpointUnavailable(f"GET {url} returned HTTP {resp.status_code}")
                # `timeout` seconds, and one more per MIN_RATE_BYTES_PER_S received
                rate = MIN_RATE_BYTES_PER_S
                return read_body(resp.iter_bytes(), limit, lambda n: self.timeout + n / rate)
        except BodyTooLarge:
            raise CheckpointUnavailable(f"GET {url} sent more than {limit:,} bytes") from None
        except BodyTooSlow as slow:
            raise CheckpointUnavailable(
                f"GET {url} arrived too slowly ({slow.size:,} bytes in {slow.allowed:.0f} s)"
            ) from None
        except httpx.HTTPError as exc:
            raise CheckpointUnavailable(f"GET {url} failed: {exc!r}") from exc

    def _get_json(self, url: str, model: type[_M], what: str) -> _M:
        body = self._get(url, MAX_JSON_BYTES)
        try:
            return model.model_validate_json(body)
        except ValidationError as exc:
            raise RemoteResponseError(f"bad {what} from {url}: {exc}") from exc

    def _get_checked(self, url: str, expected_hash: bytes | str) -> bytes:
        blob = self._get(url, self.max_bytes)
        verify_state_hash(blob, as_bytes32(expected_hash), url)
        return blob

    def checkpoint(self, step: int, expected_hash: bytes | str) -> bytes:
        """Checkpoint ``step`` (a multiple of k), checked against its expected state hash.

        Args:
            step: checkpoint step.
            expected_hash: the committed or claimed 32-byte state hash (bytes or 0x-hex).

        Returns:
            Bytes whose state hash equals ``expected_hash``.

        Raises:
            CheckpointUnavailable: unreachable host, timeout or non-200 status.
            CheckpointHashMismatch: the bytes do not hash to ``expected_hash``.
        """
        return self._get_checked(self.url("checkpoints", step), expected_hash)

    def state(self, step: int, expected_hash: bytes | str) -> bytes:
        """The solver's state at any step (``/states/{step}``), checked against its expected
        state hash (e.g. a game's agreed hash).

        Raises:
            CheckpointUnavailable: unreachable host, timeout or non-200 status.
            CheckpointHashMismatch: the bytes do not hash to ``expected_hash``.
        """
        return self._get_checked(self.url("states", step), expected_hash)

    def state_hash(self, step: int) -> StateHashResponse:
        """The solver's state hash at any step (``/state-hashes/{step}``).

        Raises:
            CheckpointUnavailable: unreachable host, timeout or non-200 status.
            RemoteResponseError: the body is malformed or names another step.
        """
        url = self.url("state-hashes", step)
        body = self._get_json(url, StateHashResponse, "state-hash response")
        if body.step != step:
            raise RemoteResponseError(f"{url} answered for step {body.step}")
        return body

    def proof(self, leaf: int) -> ProofResponse:
        """The Merkle proof of leaf ``leaf`` (not verified here; see `veritrain.replay`).

        Raises:
            CheckpointUnavailable: unreachable host, timeout or non-200 status.
            RemoteResponseError: the body is not a valid proof response.
        """
        return self._get_json(self.url("proofs", leaf), ProofResponse, "proof response")

    def manifest(self) -> ManifestResponse:
        """The solver's manifest (all committed state hashes).

        Raises:
            CheckpointUnavailable: unreachable host, timeout or non-200 status.
            RemoteResponseError: the body is not a valid manifest.
        """
        return self._get_json(self.url("manifest"), ManifestResponse, "manifest")
