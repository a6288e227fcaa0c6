"""The solver's checkpoint server (PROTOCOL.md 2.4), a FastAPI app.

Routes, under `checkpointURL = http://host:port/jobs/{jobId}`:

- `GET /jobs/{job_id}/checkpoints/{step}`: checkpoint bytes, header `X-State-Hash`.
- `GET /jobs/{job_id}/proofs/{leaf_index}`: Merkle proof of one leaf.
- `GET /jobs/{job_id}/manifest`: root, interval, total steps and every leaf's state hash.
- `GET /jobs/{job_id}/states/{step}`: canonical bytes of the state at ANY step in [0, N]
  (bisection, docs/DISPUTES.md), header `X-State-Hash`; intermediate states are replayed from
  the segment's start checkpoint with the job's engine and step function (the solver's own,
  adversary modes included, so what is served is consistent with the commitment).
- `GET /jobs/{job_id}/state-hashes/{step}`: `{"step", "state_hash"}` of the same state.

Intermediate (non-checkpoint) states cost up to k replayed steps each, so they are served only
while a dispute on the job needs them (`CheckpointCatalog.open_dispute`, set by the solver node
when it sees its job Disputed; 409 otherwise), kept in a bounded in-memory LRU cache
(`state_cache_bytes`, never on disk), and both state routes are rate limited per client host
(a token bucket, `StatesRateLimit`; 429 with `Retry-After`).
- `GET /health`: `{"status": "ok"}`.

Sealed jobs (docs/FORCED_ERRORS.md): until the solver has revealed the job's secret on chain,
the node seals the job (`CheckpointCatalog.seal`). A sealed job serves only the checkpoints
(and `/states`, `/state-hashes`) at the start steps of its sampled segments, and answers 403 to
proofs, the manifest and every other step, so nothing cheaper than a replay tells a forced
claim apart; `unseal` (after the reveal, or in a dispute) serves everything again.

The app reads from a `CheckpointCatalog` that the solver node fills once a job's training is
complete; the bytes come from the content-addressed `CheckpointStore`, which re-hashes every
file it reads, so a corrupted file is never served as valid: it is recomputed by replay from
the last good checkpoint (`CheckpointCatalog.checkpoint_bytes`), or answered with 500 when it
cannot be.

`ServerThread` (`noderuntime.serving`) runs the app with uvicorn inside the solver process.

Run: not a script; `SolverNode` starts it (`veritrain solver run --host ... --port ...`).
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable, Collection, Iterable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

from fastapi import APIRouter, Depends, FastAPI, HTTPException, Request, Response

from noderuntime.serving import ServerThread, mount_datasets
from solver.trainer import restore_checkpoint
from veritrain.bisection import StepFn, StepTrajectory
from veritrain.errors import CheckpointHashMismatch, CheckpointNotFound, VeritrainError
from veritrain.hexutil import to_hex
from veritrain.merkle import MerkleTree, checkpoint_tree
from veritrain.state import state_hash
from veritrain.store import CheckpointStore
from veritrain.wire import HealthResponse, ManifestResponse, ProofResponse, StateHashResponse

if TYPE_CHECKING:
    from veritrain.training import TrainingEngine

logger = logging.getLogger(__name__)

__all__ = [
    "JobCheckpoints",
    "CheckpointCatalog",
    "create_app",
    "ServerThread",
    "StatesUnavailable",
    "StatesNotInDispute",
    "StatesRateLimit",
    "ByteLRU",
    "DEFAULT_STATE_CACHE_BYTES",
    "Replayer",
]

DEFAULT_STATE_CACHE_BYTES = 64 * 2**20
"""Default bound (bytes) of the in-memory cache of replayed intermediate states."""

Replayer = Callable[[], "tuple[TrainingEngine, StepFn | None]"]
"""Builds (lazily, on the first intermediate-state request) the job's engine and the step
function of the solver's trajectory (None: honest `train_step`)."""


class StatesUnavailable(VeritrainError, LookupError):
    """The catalog cannot produce this state (unknown job, step out of range, no replayer)."""


class StatesNotInDispute(VeritrainError, LookupError):
    """An intermediate state of a job no open dispute needs (served only during disputes)."""


class ByteLRU:
    """A thread-safe least-recently-used cache of byte strings bounded by their total size.

    Args:
        max_bytes: the bound (bytes) on the sum of the cached values' lengths; a value larger
            than the bound is never cached; 0 disables the cache.
    """

    def __init__(self, max_bytes: int) -> None:
        if max_bytes < 0:
            raise ValueError(f"cache size must be >= 0 bytes, got {max_bytes}")
        self.max_bytes = max_bytes
        self._items: OrderedDict[tuple[int, int], bytes] = OrderedDict()
        self._size = 0
        self._lock = threading.Lock()

    @property
    def size(self) -> int:
        """Bytes held now (<= `max_bytes`)."""
        with self._lock:
            return self._size

    def __len__(self) -> int:
        with self._lock:
            return len(self._items)

    def get(self, key: tuple[int, int]) -> bytes | None:
        """The cached value (marked most recently used), or None."""
        with self._lock:
            value = self._items.get(key)
            if value is not None:
                self._items.move_to_end(key)
            return value

    def put(self, key: tuple[int, int], value: bytes) -> None:
        """Cache `value`, evicting the least recently used entries to stay within the bound."""
        if len(value) > self.max_bytes:
            return
        with self._lock:
            old = self._items.pop(key, None)
            if old is not None:
                self._size -= len(old)
            self._items[key] = value
            self._size += len(value)
            while self._size > self.max_bytes:
                _, evicted = self._items.popitem(last=False)
                self._size -= len(evicted)

    def drop(self, job_id: int) -> None:
        """Forget every entry of a job."""
        with self._lock:
            for key in [k for k in self._items if k[0] == job_id]:
                self._size -= len(self._items.pop(key))


class StatesRateLimit:
    """Per-client token bucket for the state routes.

    Each client host holds up to `burst` tokens, refilled at `rate` tokens per second; a
    request takes one. Source: the classic token-bucket algorithm (Turner, 1986; as in
    RFC 2697's single-rate meter).

    Args:
        rate: tokens per second (> 0).
        burst: bucket size (requests allowed at once, >= 1).
        clock: monotonic clock in seconds (tests pass their own).
    """

    def __init__(
        self, rate: float = 2.0, burst: int = 20, clock: Callable[[], float] = time.monotonic
    ) -> None:
        if rate <= 0 or burst < 1:
            raise ValueError(f"rate limit needs rate > 0 and burst >= 1, got {rate}, {burst}")
        self.rate = rate
        self.burst = burst
        self._clock = clock
        self._buckets: dict[str, tuple[float, float]] = {}  # host -> (tokens, last time)
        self._lock = threading.Lock()

    def acquire(self, client: str) -> float:
        """Take a token for `client`.

        Returns:
            0.0 when the request may go ahead, else the seconds until a token is available.
        """
        now = self._clock()
        with self._lock:
            tokens, last = self._buckets.get(client, (float(self.burst), now))
            tokens = min(float(self.burst), tokens + (now - last) * self.rate)
            if tokens >= 1.0:
                self._buckets[client] = (tokens - 1.0, now)
                return 0.0
            self._buckets[client] = (tokens, now)
            return (1.0 - tokens) / self.rate


# ------------------------------------------------------------------------------------ catalog
@dataclass(frozen=True)
class JobCheckpoints:
    """The committed checkpoints of one job.

    Attributes:
        job_id: on-chain job id.
        interval: checkpoint interval k (steps).
        total_steps: N (steps).
        hashes: 32-byte state hashes of steps 0, k, ..., N.
        tree: the Merkle tree over them (PROTOCOL.md 2.3).
    """

    job_id: int
    interval: int
    total_steps: int
    hashes: tuple[bytes, ...]
    tree: MerkleTree

    @classmethod
    def build(
        cls, job_id: int, interval: int, total_steps: int, hashes: list[bytes]
    ) -> JobCheckpoints:
        """Build the catalog entry (and its Merkle tree) from the state hashes.

        Raises:
            ValueError: if the number of hashes is not N/k + 1.
        """
        if interval <= 0 or total_steps % interval or len(hashes) != total_steps // interval + 1:
            raise ValueError(
                f"job {job_id}: {len(hashes)} hashes do not fit N={total_steps}, k={interval}"
            )
        return cls(job_id, interval, total_steps, tuple(hashes), checkpoint_tree(hashes, interval))


@dataclass
class CheckpointCatalog:
    """Thread-safe map from job id to its committed checkpoints, plus the byte store.

    Attributes:
        store: where the checkpoint bytes live.
        cache_dir: where per-segment step-hash files go (32 bytes a step; None: not kept).
        state_cache_bytes: bound (bytes) of the in-memory cache of replayed intermediate
            states (`ByteLRU`).
    """

    store: CheckpointStore
    cache_dir: Path | None = None
    state_cache_bytes: int = DEFAULT_STATE_CACHE_BYTES
    _jobs: dict[int, JobCheckpoints] = field(default_factory=dict)
    _replayers: dict[int, Replayer] = field(default_factory=dict)
    _trajectories: dict[tuple[int, int], StepTrajectory] = field(default_factory=dict)
    _sealed: dict[int, frozenset[int]] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _repair_lock: threading.Lock = field(default_factory=threading.Lock)
    _disputed: set[int] = field(default_factory=set)
    _states: ByteLRU = field(init=False)

    def __post_init__(self) -> None:
        self._states = ByteLRU(self.state_cache_bytes)

    @property
    def state_cache(self) -> ByteLRU:
        """The bounded cache of replayed intermediate states (`state_cache_bytes`)."""
        return self._states

    # -------------------------------------------------------------------------- disputes
    def open_dispute(self, job_id: int) -> None:
        """Serve the job's intermediate states: a dispute on it needs them."""
        with self._lock:
            self._disputed.add(job_id)

    def close_dispute(self, job_id: int) -> None:
        """Stop serving the job's intermediate states and drop them from the cache."""
        with self._lock:
            self._disputed.discard(job_id)
        self.state_cache.drop(job_id)

    def in_dispute(self, job_id: int) -> bool:
        """Whether an open dispute needs the job's intermediate states."""
        with self._lock:
            return job_id in self._disputed

    # --------------------------------------------------------------------------- sealing
    def seal(self, job_id: int, open_steps: Iterable[int] = ()) -> None:
        """Serve only the checkpoints at `open_steps` of a job (the starts of its sampled
        segments), no proofs and no manifest, until `unseal` (docs/FORCED_ERRORS.md)."""
        with self._lock:
            self._sealed[job_id] = frozenset(int(s) for s in open_steps)

    def unseal(self, job_id: int) -> None:
        """Serve everything of a job again (after its secret is revealed)."""
        with self._lock:
            self._sealed.pop(job_id, None)

    def is_sealed(self, job_id: int) -> bool:
        """Whether the job is sealed."""
        with self._lock:
            return job_id in self._sealed

    def may_serve_step(self, job_id: int, step: int) -> bool:
        """Whether the state at `step` may be served (always, unless sealed and not a sampled
        start)."""
        with self._lock:
            steps = self._sealed.get(job_id)
        return steps is None or step in steps

    def publish(self, entry: JobCheckpoints, replayer: Replayer | None = None) -> None:
        """Make a job's checkpoints servable (idempotent).

        Args:
            entry: the committed checkpoints.
            replayer: enables `/states/{step}` for intermediate steps (see `Replayer`).
        """
        with self._lock:
            self._jobs[entry.job_id] = entry
            if replayer is not None:
                self._replayers[entry.job_id] = replayer

    def get(self, job_id: int) -> JobCheckpoints | None:
        """The job's entry, or None when the job is not served."""
        with self._lock:
            return self._jobs.get(job_id)

    def job_ids(self) -> list[int]:
        """Ids of the served jobs."""
        with self._lock:
            return sorted(self._jobs)

    # ------------------------------------------------------------- intermediate states
    def _entry(self, job_id: int, step: int) -> JobCheckpoints:
        entry = self.get(job_id)
        if entry is None:
            raise StatesUnavailable(f"unknown job {job_id}: this solver serves {self.job_ids()}")
        if not 0 <= step <= entry.total_steps:
            raise StatesUnavailable(f"job {job_id} has steps 0..{entry.total_steps}, not {step}")
        return entry

    def trajectory(self, job_id: int, segment: int) -> StepTrajectory:
        """The per-step trajectory of one committed segment (built once, then cached).

        Raises:
            StatesUnavailable: unknown job or segment, or no replayer for the job.
        """
        entry = self._entry(job_id, 0)
        if not 0 <= segment < entry.total_steps // entry.interval:
            raise StatesUnavailable(f"job {job_id} has no segment {segment}")
        with self._lock:
            traj = self._trajectories.get((job_id, segment))
            replayer = self._replayers.get(job_id)
        if traj is not None:
            return traj
        if replayer is None:
            raise StatesUnavailable(f"job {job_id}: intermediate states are not served")
        engine, step_fn = replayer()
        k = entry.interval
        cache = None
        if self.cache_dir is not None:
            cache = self.cache_dir / f"job{job_id}-seg{segment}.json"
        traj = StepTrajectory(  # intermediate states go to the bounded cache, never to disk
            engine,
            self.checkpoint_bytes(job_id, segment),
            (segment + 1) * k,
            step_fn=step_fn,
            cache_path=cache,
        )
        with self._lock:
            return self._trajectories.setdefault((job_id, segment), traj)

    def checkpoint_bytes(self, job_id: int, index: int) -> bytes:
        """The bytes of committed checkpoint `index` (step `index * k`), hash-checked.

        A stored file that is missing or fails its hash check is recomputed by replay from
        the last good checkpoint with the job's engine and step function
        (`solver.trainer.restore_checkpoint`) and written back, so a flipped bit on disk is
        never served and never costs the solver its job.

        Raises:
            StatesUnavailable: unknown job or index.
            CheckpointNotFound, CheckpointHashMismatch: the file is bad and the job has no
                replayer, or the replay does not reproduce the recorded hash.
        """
        entry = self._entry(job_id, 0)
        if not 0 <= index < len(entry.hashes):
            raise StatesUnavailable(f"job {job_id} has leaves 0..{len(entry.hashes) - 1}")
        try:
            return self.store.get(entry.hashes[index])
        except (CheckpointHashMismatch, CheckpointNotFound) as exc:
            with self._lock:
                replayer = self._replayers.get(job_id)
            if replayer is None:
                raise
            logger.error("job %d: stored checkpoint %d is bad (%s); repairing", job_id, index, exc)
        engine, step_fn = replayer()
        with self._repair_lock:  # one repair at a time; the catalog stays readable meanwhile
            return restore_checkpoint(
                engine, self.store, list(entry.hashes), index, step_fn=step_fn
            )

    def verify(self, job_id: int, written: Collection[bytes] = ()) -> int:
        """Check every stored checkpoint of a job, repairing the bad ones (`checkpoint_bytes`).

        Args:
            job_id: the job.
            written: state hashes this process has just written from bytes it hashed itself
                (not re-read: the page cache would hand back those very bytes); serving
                re-checks every file anyway.

        Returns:
            The number of checkpoints read and checked.

        Raises:
            StatesUnavailable, CheckpointHashMismatch, CheckpointNotFound: see
                `checkpoint_bytes`.
        """
        entry = self._entry(job_id, 0)
        skip = {bytes(h) for h in written}
        checked = 0
        for index, digest in enumerate(entry.hashes):
            if bytes(digest) in skip and self.store.has(digest):
                continue
            self.checkpoint_bytes(job_id, index)
            checked += 1
        return checked

    def _locate(self, job_id: int, step: int) -> tuple[JobCheckpoints, bytes | None]:
        entry = self._entry(job_id, step)
        if step % entry.interval == 0:
            return entry, entry.hashes[step // entry.interval]
        return entry, None

    def state_hash(self, job_id: int, step: int) -> bytes:
        """The solver's state hash at any step (committed leaf, or replayed).

        Raises:
            StatesUnavailable: see `trajectory`.
        """
        entry, leaf = self._locate(job_id, step)
        if leaf is not None:
            return leaf
        return self.trajectory(job_id, step // entry.interval).hash_at(step)

    def state_bytes(self, job_id: int, step: int) -> bytes:
        """The solver's state bytes at any step (stored checkpoint, or replayed into the
        bounded `state_cache`).

        Raises:
            StatesUnavailable: see `trajectory`.
            CheckpointNotFound, CheckpointHashMismatch: a stored checkpoint is missing/corrupt.
        """
        entry, leaf = self._locate(job_id, step)
        if leaf is not None:
            return self.checkpoint_bytes(job_id, step // entry.interval)
        cached = self.state_cache.get((job_id, step))
        if cached is not None:
            return cached
        blob = self.trajectory(job_id, step // entry.interval).state_at(step)
        self.state_cache.put((job_id, step), blob)
        return blob


# ------------------------------------------------------------------------------------- deps
def get_catalog(request: Request) -> CheckpointCatalog:
    """FastAPI dependency: the catalog attached to the app."""
    catalog: CheckpointCatalog = request.app.state.catalog
    return catalog


CatalogDep = Annotated[CheckpointCatalog, Depends(get_catalog)]


def _job_or_404(catalog: CheckpointCatalog, job_id: int) -> JobCheckpoints:
    entry = catalog.get(job_id)
    if entry is None:
        raise HTTPException(
            status_code=404,
            detail=f"unknown job {job_id}: this solver serves jobs {catalog.job_ids()}",
        )
    return entry


def _refuse_if_sealed(catalog: CheckpointCatalog, job_id: int, step: int | None = None) -> None:
    """403 while the job is sealed, unless `step` is the start of a sampled segment."""
    if step is not None and catalog.may_serve_step(job_id, step):
        return
    if step is None and not catalog.is_sealed(job_id):
        return
    raise HTTPException(
        status_code=403,
        detail=(
            f"job {job_id} is sealed until its secret is revealed: only the start checkpoints "
            "of sampled segments are served"
        ),
    )


def _limit_rate(request: Request) -> None:
    """429 with `Retry-After` (whole seconds) when the client host ran out of tokens."""
    limiter: StatesRateLimit = request.app.state.states_rate_limit
    host = request.client.host if request.client is not None else "unknown"
    wait = limiter.acquire(host)
    if wait > 0:
        raise HTTPException(
            status_code=429,
            detail=f"too many state requests from {host}: retry in {wait:.1f} s",
            headers={"Retry-After": str(max(1, math.ceil(wait)))},
        )


def _refuse_unless_disputed(catalog: CheckpointCatalog, job_id: int, step: int) -> None:
    """409 for an intermediate step of a job no open dispute needs (404 for unknown jobs)."""
    entry = _job_or_404(catalog, job_id)
    if step % entry.interval == 0 or catalog.in_dispute(job_id):
        return
    raise HTTPException(
        status_code=409,
        detail=(
            f"job {job_id} is not disputed: only its checkpoints (every {entry.interval} "
            "steps) are served; intermediate states are served during a dispute"
        ),
    )


_STATE_ERRORS: dict[int | str, dict[str, object]] = {
    403: {"description": "The job is sealed and the step is not a sampled segment start."},
    404: {"description": "Unknown job, step out of [0, N], or intermediate states not served."},
    409: {"description": "An intermediate step of a job with no open dispute."},
    429: {
        "description": "Rate limited; retry after the `Retry-After` header's seconds.",
        "headers": {"Retry-After": {"schema": {"type": "integer"}}},
    },
    500: {"description": "A stored checkpoint is corrupt and could not be recomputed."},
}

# ------------------------------------------------------------------------------------ routes
jobs_router = APIRouter(prefix="/jobs/{job_id}", tags=["checkpoints"])
health_router = APIRouter(tags=["health"])


@health_router.get("/health", response_model=HealthResponse)
def health() -> HealthResponse:
    """Liveness probe."""
    return HealthResponse(status="ok")


@jobs_router.get("/checkpoints/{step}", response_class=Response)
def get_checkpoint(job_id: int, step: int, catalog: CatalogDep) -> Response:
    """Checkpoint bytes of `step` (a multiple of k in [0, N]).

    Raises:
        HTTPException: 404 for an unknown job or a step that is not a checkpoint; 500 when
            the stored bytes no longer match their hash.
    """
    entry = _job_or_404(catalog, job_id)
    _refuse_if_sealed(catalog, job_id, step)
    if step < 0 or step > entry.total_steps or step % entry.interval:
        raise HTTPException(
            status_code=404,
            detail=(
                f"job {job_id} has no checkpoint at step {step}: checkpoints are every "
                f"{entry.interval} steps from 0 to {entry.total_steps}"
            ),
        )
    digest = entry.hashes[step // entry.interval]
    try:
        blob = catalog.checkpoint_bytes(job_id, step // entry.interval)
    except CheckpointNotFound as exc:
        raise HTTPException(status_code=404, detail=f"checkpoint missing: {exc}") from exc
    except CheckpointHashMismatch as exc:
        logger.error("refusing to serve a corrupt checkpoint: %s", exc)
        raise HTTPException(status_code=500, detail=f"corrupt checkpoint: {exc}") from exc
    return Response(
        content=blob,
        media_type="application/octet-stream",
        headers={"X-State-Hash": to_hex(digest)},
    )


@jobs_router.get("/proofs/{leaf_index}", response_model=ProofResponse)
def get_proof(job_id: int, leaf_index: int, catalog: CatalogDep) -> ProofResponse:
    """Merkle proof of leaf `leaf_index` (step `leaf_index * k`).

    Raises:
        HTTPException: 404 for an unknown job or a leaf index out of range; 403 while the
            job is sealed.
    """
    entry = _job_or_404(catalog, job_id)
    _refuse_if_sealed(catalog, job_id)
    if not 0 <= leaf_index < len(entry.hashes):
        raise HTTPException(
            status_code=404,
            detail=f"job {job_id} has leaves 0..{len(entry.hashes) - 1}, not {leaf_index}",
        )
    return ProofResponse(
        job_id=job_id,
        leaf_index=leaf_index,
        step=leaf_index * entry.interval,
        state_hash=to_hex(entry.hashes[leaf_index]),
        proof=[to_hex(p) for p in entry.tree.proof(leaf_index)],
        root=to_hex(entry.tree.root),
    )


@jobs_router.get("/manifest", response_model=ManifestResponse)
def get_manifest(job_id: int, catalog: CatalogDep) -> ManifestResponse:
    """Everything a verifier needs to know about the committed tree.

    Raises:
        HTTPException: 404 for an unknown job; 403 while the job is sealed.
    """
    entry = _job_or_404(catalog, job_id)
    _refuse_if_sealed(catalog, job_id)
    return ManifestResponse(
        job_id=job_id,
        root=to_hex(entry.tree.root),
        interval=entry.interval,
        total_steps=entry.total_steps,
        leaves=[to_hex(h) for h in entry.hashes],
    )


@jobs_router.get(
    "/states/{step}",
    response_class=Response,
    responses={
        200: {
            "description": "The state's canonical bytes; header `X-State-Hash` (BLAKE3).",
            "content": {"application/octet-stream": {}},
        },
        **_STATE_ERRORS,
    },
)
def get_state(job_id: int, step: int, catalog: CatalogDep, request: Request) -> Response:
    """Canonical bytes of the solver's state at any step in [0, N] (replayed on demand).

    Raises:
        HTTPException: 429 when the client is over its rate limit; 404 for an unknown job, a
            step out of range or a job whose intermediate states are not served; 403 while
            the job is sealed (except the sampled starts); 409 for an intermediate step of a
            job with no open dispute; 500 for a corrupt stored checkpoint.
    """
    _limit_rate(request)
    _refuse_if_sealed(catalog, job_id, step)
    _refuse_unless_disputed(catalog, job_id, step)
    try:
        blob = catalog.state_bytes(job_id, step)
    except (StatesUnavailable, CheckpointNotFound) as exc:
        raise HTTPException(status_code=404, detail=str(exc)) from exc
    except CheckpointHashMismatch as exc:
        logger.error("refusing to serve a corrupt checkpoint: %s", exc)
        raise HTTPException(status_code=500, detail=f"corrupt checkpoint: {exc}") from exc
    return Response(
        content=blob,
        media_type="application/octet-stream",
        headers={"X-State-Hash": to_hex(state_hash(blob))},
    )


@jobs_router.get("/state-hashes/{step}", response_model=StateHashResponse, responses=_STATE_ERRORS)
def get_state_hash(
    job_id: int, step: int, catalog: CatalogDep, request: Request
) -> StateHashResponse:
    """The solver's state hash at any step in [0, N].

    Raises:
        HTTPException: 429, 404, 403 and 409 as for `/states/{step}`; 500 for a corrupt
            stored checkpoint.
    """
    _limit_rate(request)
    _refuse_if_sealed(catalog, job_id, step)
    _refuse_unless_disputed(catalog, job_id, step)
    try:
        digest = catalog.state_hash(job_id, step)
    except (StatesUnavailable, CheckpointNotFound) as exc:
        raise HTTPException(status_code=404, detail=str(exc)) from exc
    except CheckpointHashMismatch as exc:
        raise HTTPException(status_code=500, detail=f"corrupt checkpoint: {exc}") from exc
    return StateHashResponse(step=step, state_hash=to_hex(digest))


def create_app(
    catalog: CheckpointCatalog,
    *,
    states_rate_limit: StatesRateLimit | None = None,
    datasets: Sequence[str | Path] = (),
    chunk_cache: str | Path | None = None,
) -> FastAPI:
    """Build the FastAPI app serving `catalog`.

    Args:
        catalog: the solver's checkpoint catalog (shared with the node thread).
        states_rate_limit: the per-client limit of the state routes (default
            `StatesRateLimit()`: 20 at once, then 2 per second).
        datasets: prepared tokens-dataset directories to serve at `/data/<root>/`
            (`noderuntime.serving.mount_datasets`).
        chunk_cache: a chunk cache directory whose verified chunks are served there too (the
            chunks of the datasets this node trained on), or None.

    Returns:
        The app (run it with uvicorn, or test it with `fastapi.testclient.TestClient`).
    """

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        logger.info("checkpoint server up, serving jobs %s", catalog.job_ids())
        yield
        logger.info("checkpoint server down")

    app = FastAPI(title="veritrain solver", version="0", lifespan=lifespan)
    app.state.catalog = catalog
    app.state.states_rate_limit = states_rate_limit or StatesRateLimit()
    app.include_router(health_router)
    app.include_router(jobs_router)
    if datasets or chunk_cache is not None:
        mount_datasets(app, datasets, cache_dir=chunk_cache)
    return app
