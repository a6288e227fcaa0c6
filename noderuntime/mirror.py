"""The mirror: every node keeps, and serves by hash, the states it proved (docs/RUNS.md,
docs/SECURITY.md N-27).

A state a node fetched and checked (a replay's start and end, a run contribution's final state
proved against its job's Merkle root, a round's outer state) goes into its `StateMirror`, a
content-addressed `CheckpointStore` that also keeps the Merkle proofs it verified, keyed by
(root, leaf). `create_mirror_app` serves it over HTTP, every answer bounded:

- `GET /mirror/states/{0x state hash}`: the state's bytes (at most the mirror's `max_bytes`),
  header `X-State-Hash`; 404 for a hash the mirror does not hold.
- `GET /mirror/proofs/{0x root}/{leaf}`: the `ProofResponse` of leaf `leaf` under `root`, as
  the solver's server gives it (`veritrain.wire`); 404 when not held.
- `GET /health`: `{"status": "ok"}`.

A mirror is untrusted like a solver: `MirrorClient` reads with `CheckpointClient`'s bounds and
accepts only bytes whose hash is the one asked for; a proof is verified against the on-chain
root by whoever uses it. `fetch_from_holders` tries a list of holders in order (the solver
first, then the configured mirrors) and returns the first answer that passes its check.

Run: `veritrain verifier run ... --serve-port 8700` (a node serves its mirror), `veritrain run
post ... --mirror http://host:8700` (a run driver fetches from it).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Annotated, Any, TypeVar

from fastapi import APIRouter, Depends, FastAPI, HTTPException, Request
from fastapi.responses import Response

from noderuntime.core import NodeCore
from veritrain.errors import (
    CheckpointHashMismatch,
    CheckpointNotFound,
    CheckpointUnavailable,
    MerkleProofInvalid,
    RemoteResponseError,
)
from veritrain.hexutil import as_bytes32, to_hex
from veritrain.store import CheckpointStore, atomic_write_bytes
from veritrain.wire import DEFAULT_MAX_STATE_BYTES, HealthResponse, ProofResponse
from veritrain.wire import CheckpointClient as _WireClient

logger = logging.getLogger(__name__)

__all__ = [
    "HOLDER_ERRORS",
    "MirrorClient",
    "MirrorMixin",
    "StateMirror",
    "create_mirror_app",
    "fetch_from_holders",
    "mount_mirror",
]

HOLDER_ERRORS: tuple[type[Exception], ...] = (
    CheckpointUnavailable,
    CheckpointHashMismatch,
    RemoteResponseError,
    MerkleProofInvalid,
)
"""What one holder's failed answer raises (unreachable, 404, wrong bytes, malformed, a proof
that does not verify): the next holder is tried."""

_T = TypeVar("_T")


class StateMirror(CheckpointStore):
    """A content-addressed store of the states this node proved, with their Merkle proofs.

    States live as in `CheckpointStore` (``<root_dir>/<hash>.ckpt``, re-hashed on every read);
    proofs in ``<root_dir>/proofs/<root hex>-<leaf>.json`` (a `ProofResponse`, written
    atomically). The solver's own checkpoint store may be one: it then serves the finals of
    other solvers it proved as well as its own.

    Args:
        root_dir: directory for the files (created if missing).
        max_bytes: the most bytes a kept (and so a served) state may have.
    """

    def __init__(self, root_dir: str | Path, *, max_bytes: int = DEFAULT_MAX_STATE_BYTES) -> None:
        super().__init__(root_dir)
        self.max_bytes = max_bytes
        self.proof_dir = self.root_dir / "proofs"

    def keep(self, blob: bytes) -> bytes | None:
        """Keep a state this node checked; one over `max_bytes` is not kept.

        Returns:
            Its 32-byte state hash, or None when it is too large to serve.
        """
        if len(blob) > self.max_bytes:
            logger.warning(
                "mirror: not keeping a %d-byte state (limit %d)",
                len(blob),
                self.max_bytes,
            )
            return None
        return self.put(blob)

    def keep_replayed(self, root: bytes, leaf: int, blob: bytes) -> bytes | None:
        """Keep a state this node computed by replay as leaf `leaf` of the job whose Merkle
        root is `root` (not yet proved: `replayed` names it until a proof is kept).

        Returns:
            Its 32-byte state hash, or None when it is too large to serve.
        """
        digest = self.keep(blob)
        if digest is not None:
            self.proof_dir.mkdir(parents=True, exist_ok=True)
            atomic_write_bytes(self._replayed_path(root, leaf), digest, durable=False)
        return digest

    def replayed(self, root: bytes, leaf: int) -> bytes | None:
        """The hash of the state this node replayed as leaf `leaf` under `root` and still
        holds (`keep_replayed`), or None."""
        try:
            digest = self._replayed_path(root, leaf).read_bytes()
        except OSError:
            return None
        return digest if len(digest) == 32 and self.has(digest) else None

    def _replayed_path(self, root: bytes, leaf: int) -> Path:
        return self.proof_dir / f"{as_bytes32(root).hex()}-{int(leaf)}.replayed"

    def _proof_path(self, root: bytes, leaf: int) -> Path:
        return self.proof_dir / f"{as_bytes32(root).hex()}-{int(leaf)}.json"

    def keep_proof(self, root: bytes, proof: ProofResponse) -> None:
        """Keep a proof this node verified against the on-chain Merkle root `root`, under that
        root (the root field it is served with is `root`, whatever its sender said)."""
        self.proof_dir.mkdir(parents=True, exist_ok=True)
        kept = proof.model_copy(update={"root": to_hex(as_bytes32(root))})
        target = self._proof_path(root, proof.leaf_index)
        atomic_write_bytes(target, kept.model_dump_json().encode(), durable=False)

    def proof_of(self, root: bytes, leaf: int) -> ProofResponse | None:
        """The kept proof of leaf `leaf` under `root`, or None (also for an unreadable file)."""
        try:
            text = self._proof_path(root, leaf).read_text()
            return ProofResponse.model_validate(json.loads(text))
        except (OSError, ValueError):
            return None


class MirrorClient(_WireClient):
    """A client of one holder's mirror routes (`create_mirror_app`), bounded as
    `veritrain.wire.CheckpointClient` (`max_bytes` per state, `MAX_JSON_BYTES` per proof,
    a minimum rate per body).

    Args: as `CheckpointClient`'s, with the holder's base URL (``http://host:port``).
    """

    def state_by_hash(self, state_hash: bytes | str) -> bytes:
        """The state of this hash, checked.

        Raises:
            CheckpointUnavailable: unreachable, timeout, too large, or not held (404).
            CheckpointHashMismatch: the bytes do not hash to `state_hash`.
        """
        url = self.url("mirror", "states", to_hex(as_bytes32(state_hash)))
        return self._get_checked(url, state_hash)

    def proof_in(self, root: bytes, leaf: int) -> ProofResponse:
        """The holder's proof of leaf `leaf` under `root` (verify it against the chain's root).

        Raises:
            CheckpointUnavailable: unreachable, timeout or not held (404).
            RemoteResponseError: the body is not a proof, or one of another root or leaf.
        """
        url = self.url("mirror", "proofs", to_hex(as_bytes32(root)), int(leaf))
        proof = self._get_json(url, ProofResponse, "proof response")
        if proof.root_bytes() != as_bytes32(root) or proof.leaf_index != int(leaf):
            raise RemoteResponseError(f"{url} answered for another root or leaf")
        return proof


def fetch_from_holders(what: str, attempts: Sequence[tuple[str, Callable[[], _T]]]) -> _T:
    """The first holder's answer that passes its check, trying `attempts` in order.

    Args:
        what: what is fetched, for the error (`"job 3's final state"`).
        attempts: (holder name, a call that fetches and checks, raising one of
            `HOLDER_ERRORS` on a bad or missing answer).

    Returns:
        The first successful call's result.

    Raises:
        CheckpointUnavailable: every holder failed (each one's reason in the message); with a
            single holder, its own error is raised unchanged.
    """
    errors: list[str] = []
    for name, attempt in attempts:
        try:
            return attempt()
        except HOLDER_ERRORS as exc:
            if len(attempts) == 1:
                raise
            errors.append(f"{name}: {exc}")
            logger.debug("%s: %s failed: %s", what, name, exc)
    raise CheckpointUnavailable(
        f"{what} is served by none of its {len(attempts)} holders ({'; '.join(errors)})"
    )


# ---------------------------------------------------------------------------------- server
router = APIRouter(prefix="/mirror", tags=["mirror"])


def _mirror(request: Request) -> StateMirror:
    mirror: StateMirror = request.app.state.mirror
    return mirror


MirrorDep = Annotated[StateMirror, Depends(_mirror)]


def _hash_or_404(text: str) -> bytes:
    try:
        return as_bytes32(text)
    except (ValueError, TypeError) as exc:
        raise HTTPException(status_code=404, detail=f"not a state hash: {text[:80]!r}") from exc


@router.get("/states/{state_hash}")
def get_state(state_hash: str, mirror: MirrorDep) -> Response:
    """The bytes of a held state (404 when not held)."""
    digest = _hash_or_404(state_hash)
    try:
        blob = mirror.get(digest)
    except CheckpointNotFound as exc:
        raise HTTPException(status_code=404, detail=f"{to_hex(digest)} is not held here") from exc
    except CheckpointHashMismatch as exc:
        raise HTTPException(status_code=404, detail=f"{to_hex(digest)} is damaged here") from exc
    if len(blob) > mirror.max_bytes:
        raise HTTPException(status_code=404, detail=f"{to_hex(digest)} is over the limit")
    return Response(
        blob, media_type="application/octet-stream", headers={"X-State-Hash": to_hex(digest)}
    )


@router.get("/proofs/{root}/{leaf}")
def get_proof(root: str, leaf: int, mirror: MirrorDep) -> ProofResponse:
    """A held proof of leaf `leaf` under Merkle root `root` (404 when not held)."""
    proof = mirror.proof_of(_hash_or_404(root), leaf)
    if proof is None:
        raise HTTPException(status_code=404, detail=f"no proof of leaf {leaf} under {root} here")
    return proof


def health() -> HealthResponse:
    """Liveness."""
    return HealthResponse(status="ok")


def mount_mirror(app: FastAPI, mirror: StateMirror) -> FastAPI:
    """Add the mirror routes (``/mirror/...``) over `mirror` to an existing app (the solver's
    checkpoint server serves its store this way) and return it."""
    app.state.mirror = mirror
    app.include_router(router)
    return app


def create_mirror_app(mirror: StateMirror) -> FastAPI:
    """The FastAPI app serving `mirror` (run it with `noderuntime.serving.ServerThread`).

    Args:
        mirror: the node's mirror (shared with the node thread).

    Returns:
        The app: ``/mirror/...`` and ``/health``.
    """
    app = FastAPI(title="veritrain mirror", version="0")
    app.add_api_route("/health", health, methods=["GET"], response_model=HealthResponse)
    return mount_mirror(app, mirror)


# ------------------------------------------------------------------------------------ node
class MirrorMixin(NodeCore):
    """A node's side of the mirror: its `StateMirror` (``self.mirror``, set by the role), the
    holders it asks after a job's solver (``self.mirrors``, `--mirror`), and its server
    (``self.serve_port``, `--serve-port`; started and stopped with the node)."""

    def start_mirror(self) -> None:
        """Serve this node's mirror when a port is configured (idempotent)."""
        from noderuntime.serving import ServerThread

        if self.mirror is None or self.serve_port is None or self._mirror_server is not None:
            return
        app = create_mirror_app(self.mirror)
        self._mirror_server = ServerThread(app, self.serve_host, self.serve_port, what="mirror")
        self._mirror_server.start()

    def stop_mirror(self) -> None:
        """Stop the mirror's server, if running."""
        if self._mirror_server is not None:
            self._mirror_server.stop()
            self._mirror_server = None

    def keep_replayed_final(self, job: Any) -> bool:
        """Serve a Finalized job's final state that this node computed or fetched itself: every
        seat replays the last segment (docs/SECURITY.md P-36) or, a single seat, fetches and
        checks the final state (P-39), and keeps it (`ReplayMixin.claim_check`,
        `final_check`); once the solver revealed its secret, the proof it gave on
        chain for that end places the state in the job's root, and the mirror keeps that proof
        too, so it serves state and proof whether or not the solver ever does.

        Args:
            job: the job's view (Finalized).

        Returns:
            True when the mirror holds the final state and its proof, False when this node did
            not replay the last segment (or the reveal cannot be read).
        """
        from veritrain.merkle import verify_checkpoint

        if self.mirror is None:
            return False
        n, k = int(job.total_steps), int(job.checkpoint_interval)
        leaf, root = n // k, bytes(job.merkle_root)
        kept = self.mirror.proof_of(root, leaf)
        if kept is not None and self.mirror.has(kept.state_hash_bytes()):
            return True
        held = self.mirror.replayed(root, leaf)
        if held is None:
            return False  # this node did not replay the job's last segment
        segments = list(self.client.jobs.get_assignment(int(job.job_id)).segments)
        ends = self.client.round.proven_ends(self.client.jobs.submission_of(int(job.job_id)))
        if ends is None or leaf - 1 not in segments:
            return False
        end, proof = ends[segments.index(leaf - 1)]
        if end != held or not verify_checkpoint(proof, root, n, k, leaf, end):
            return False
        self.mirror.keep_proof(
            root,
            ProofResponse(
                job_id=int(job.job_id),
                leaf_index=leaf,
                step=n,
                state_hash=to_hex(end),
                proof=[to_hex(p) for p in proof],
                root=to_hex(root),
            ),
        )
        return True

    def keep_final(self, job: Any) -> bool:
        """Keep a Finalized job's final state (and its proof) in this node's mirror: the one it
        replayed itself (`keep_replayed_final`), else, for a run contribution, the one fetched
        from its solver or a mirror and proved against the job's root, so that the run can be
        rebuilt when its solver leaves (docs/RUNS.md). Other jobs: nothing.

        Args:
            job: the job's view.

        Returns:
            True when the mirror holds the final (or the job is not a contribution).

        Raises:
            CheckpointUnavailable, CheckpointHashMismatch, RemoteResponseError,
            MerkleProofInvalid: no holder serves it (yet).
        """
        from noderuntime.runs import verified_final
        from veritrain.spec import CONTRIBUTION_MARK

        if self.mirror is None or self.keep_replayed_final(job):
            return True
        if CONTRIBUTION_MARK not in str(job.spec_uri):
            return True
        verified_final(
            self.client,
            int(job.job_id),
            self.mirror,
            self.http_client,
            job=job,
            mirrors=self.mirrors,
        )
        return True
