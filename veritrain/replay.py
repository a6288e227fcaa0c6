"""Verification by replay, shared by the verifier and the whistleblower.

A sampled segment s covers steps s*k .. (s+1)*k. `check_claim` (what verifiers and
whistleblowers run during a verification round, docs/FORCED_ERRORS.md) downloads checkpoint
s*k, checks its state hash against the solver's claimed start hash, replays k steps and compares
the result with the claimed end hash. `check_segment` (a committed segment, once the solver
serves its proofs) fetches the Merkle proofs of
leaves s and s+1 from the solver (PROTOCOL.md 2.4), checks both against the on-chain root,
downloads checkpoint s*k and checks its state hash, replays k steps under the job's execution
profile and compares the hash of the result with the committed leaf s+1. This is the segment
replay of Proof-of-Learning (Jia et al., "Proof-of-Learning: Definitions and Practice",
IEEE S&P 2021), made exact (distance 0) by the pinned profile instead of a tolerance.

torch is imported lazily (only when a segment is replayed).

Run: not a script; `check_segment(spec, "http://127.0.0.1:8001/jobs/1", root, 3)`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import httpx

from veritrain.errors import (
    CheckpointFormatError,
    CheckpointHashMismatch,
    CheckpointUnavailable,
    RemoteResponseError,
)
from veritrain.hexutil import as_bytes32, to_hex
from veritrain.merkle import verify_checkpoint
from veritrain.spec import JobSpec
from veritrain.state import state_hash
from veritrain.wire import DEFAULT_MAX_STATE_BYTES, DEFAULT_TIMEOUT_S, CheckpointClient

if TYPE_CHECKING:
    from veritrain.training import OnStep, TrainingEngine

logger = logging.getLogger(__name__)

__all__ = [
    "SegmentCheck",
    "check_claim",
    "check_final",
    "check_segment",
    "replay_segment",
]


@dataclass(frozen=True)
class SegmentCheck:
    """Outcome of checking one segment.

    Attributes:
        segment: segment index s.
        start_step: s*k.
        end_step: (s+1)*k.
        committed_end_hash: state hash the solver committed for end_step (None if unknown).
        replayed_end_hash: hash of the replayed state (None if replay did not run).
        ok: True iff everything verified and the replay matched; False means reject.
        reason: human-readable cause when `ok` is False, "" otherwise.
    """

    segment: int
    start_step: int
    end_step: int
    committed_end_hash: bytes | None
    replayed_end_hash: bytes | None
    ok: bool
    reason: str


# --- replay ----------------------------------------------------------------------------------
def _engine_for(spec_or_engine: Any) -> TrainingEngine:
    from veritrain.training import TrainingEngine

    if isinstance(spec_or_engine, TrainingEngine):
        return spec_or_engine
    if isinstance(spec_or_engine, JobSpec):
        return TrainingEngine(spec_or_engine)
    raise TypeError(f"expected a TrainingEngine or JobSpec, got {type(spec_or_engine).__name__}")


def replay_segment(
    engine: TrainingEngine | JobSpec,
    start_blob: bytes,
    end_step: int,
    on_step: OnStep | None = None,
    *,
    start_step: int | None = None,
) -> bytes:
    """Load a checkpoint, train up to `end_step` and return the end checkpoint bytes.

    Args:
        engine: the job's `TrainingEngine` (or its `JobSpec`, to build one; that applies the
            profile and loads the data, so reuse an engine across segments).
        start_blob: checkpoint bytes of the segment start (hash already checked by the caller).
        end_step: step to replay up to (<= total_steps).
        on_step: optional per-step callback `(state, loss)`.
        start_step: if given, the checkpoint's step must equal it.

    Returns:
        Canonical checkpoint bytes of state `end_step`; `state_hash()` of them is compared
        with the committed leaf.

    Raises:
        CheckpointFormatError: the checkpoint is malformed, does not fit the model, or its
            step differs from `start_step` / exceeds `end_step`.
    """
    eng = _engine_for(engine)
    state = eng.load_state(start_blob)
    if start_step is not None and state.step != start_step:
        raise CheckpointFormatError(f"checkpoint is at step {state.step}, expected {start_step}")
    if state.step > end_step:
        raise CheckpointFormatError(f"checkpoint step {state.step} is past end step {end_step}")
    eng.run(state, end_step, on_step)
    return eng.state_bytes(state)


def check_segment(
    spec: JobSpec,
    base_url: str,
    root: bytes | str,
    segment: int,
    *,
    engine: TrainingEngine | None = None,
    client: httpx.Client | None = None,
    on_step: OnStep | None = None,
    unavailable_is_reject: bool = False,
    timeout: float = DEFAULT_TIMEOUT_S,
    init_hash: bytes | None = None,
) -> SegmentCheck:
    """Check one committed segment by replay against the on-chain Merkle root.

    Steps: fetch proofs of leaves s and s+1; check their leaf index and step; verify both
    proofs at their positions against `root` (`veritrain.merkle.verify_checkpoint`, as
    `LibCheckpoint.verify` on chain); download checkpoint s*k and
    check its state hash against the proven leaf; replay k steps; compare the end hash with the
    proven leaf s+1.

    Args:
        spec: the job spec (already checked against the on-chain spec hash).
        base_url: the job's `checkpointURL`.
        root: the on-chain Merkle root (32 bytes or 0x-hex); the server's own `root` field is
            ignored.
        segment: s, 0 <= s < N/k.
        engine: a `TrainingEngine` for `spec` to reuse (built when None).
        client: optional shared `httpx.Client`.
        on_step: optional per-step callback during the replay.
        unavailable_is_reject: when True, an unreachable solver/missing checkpoint yields
            `ok=False`; when False (default) `CheckpointUnavailable` propagates, so the node
            can retry before its verdict deadline.
        timeout: HTTP timeout in seconds when no client is given.
        init_hash: the job's on-chain initial state hash (32 bytes): segment 0 must start from
            it. The commit proved checkpoint 0 is initHash and the positional tree holds one
            state per index, so a proven start of segment 0 is initHash already; the check
            stays as a guard that does not depend on the tree (docs/SECURITY.md P-7, P-25).

    Returns:
        A `SegmentCheck`; `ok=False` with a `reason` for invalid proofs, a proof for the
        wrong leaf/step, a segment 0 that does not start from `init_hash`, a checkpoint that
        does not hash to its leaf or does not decode, a malformed server response, or a replay
        mismatch.

    Raises:
        ValueError: `segment` out of range.
        CheckpointUnavailable: see `unavailable_is_reject`.
    """
    k = spec.checkpoint_interval
    if not 0 <= segment < spec.num_segments:
        raise ValueError(f"segment {segment} out of range [0, {spec.num_segments})")
    start_step, end_step = segment * k, (segment + 1) * k
    root_b = as_bytes32(root)
    committed_end: bytes | None = None

    def result(ok: bool, reason: str = "", replayed: bytes | None = None) -> SegmentCheck:
        if not ok:
            logger.info("segment %d rejected: %s", segment, reason)
        return SegmentCheck(segment, start_step, end_step, committed_end, replayed, ok, reason)

    engine = engine if engine is not None else _engine_for(spec)
    try:
        # a hostile server's answer is cut at the most bytes a state of this spec can have
        solver = CheckpointClient(
            base_url, client, timeout=timeout, max_bytes=engine.max_state_bytes()
        )
        with solver:
            proofs = [solver.proof(i) for i in (segment, segment + 1)]
            for leaf_index, step, p in (
                (segment, start_step, proofs[0]),
                (segment + 1, end_step, proofs[1]),
            ):
                if p.leaf_index != leaf_index or p.step != step:
                    return result(
                        False,
                        f"proof for leaf {leaf_index} names leaf {p.leaf_index} step {p.step}, "
                        f"expected step {step}",
                    )
                if not verify_checkpoint(
                    p.proof_bytes(), root_b, spec.total_steps, k, leaf_index, p.state_hash_bytes()
                ):
                    return result(
                        False,
                        f"Merkle proof of leaf {leaf_index} (step {step}, state {p.state_hash}) "
                        f"does not verify against the on-chain root {to_hex(root_b)}",
                    )
            start_hash = proofs[0].state_hash_bytes()
            committed_end = proofs[1].state_hash_bytes()
            if segment == 0 and init_hash is not None and start_hash != bytes(init_hash):
                return result(
                    False,
                    f"segment 0 starts from state {to_hex(start_hash)}, not from the job's "
                    f"initial state {to_hex(bytes(init_hash))}",
                )
            start_blob = solver.checkpoint(start_step, start_hash)
    except CheckpointUnavailable as exc:
        if unavailable_is_reject:
            return result(False, f"data unavailable: {exc}")
        raise
    except (RemoteResponseError, ValueError) as exc:
        # CheckpointHashMismatch is a ValueError too; bad hex in a proof also lands here.
        kind = (
            "checkpoint hash mismatch"
            if isinstance(exc, CheckpointHashMismatch)
            else "bad response"
        )
        return result(False, f"{kind}: {exc}")

    return _replay_and_compare(
        spec, engine, start_blob, start_step, end_step, committed_end, "committed", on_step, result
    )


def check_claim(
    spec: JobSpec,
    base_url: str,
    segment: int,
    start_hash: bytes | str,
    claimed_end: bytes | str,
    *,
    engine: TrainingEngine | None = None,
    client: httpx.Client | None = None,
    on_step: OnStep | None = None,
    unavailable_is_reject: bool = False,
    timeout: float = DEFAULT_TIMEOUT_S,
    on_end: Callable[[bytes], object] | None = None,
) -> SegmentCheck:
    """Check the solver's claim on one sampled segment by replay (docs/FORCED_ERRORS.md).

    Verifiers check claims, not Merkle leaves: before the solver reveals its secret it serves
    only the start checkpoints of sampled segments, and no proofs. The start checkpoint s*k is
    fetched and must hash to `start_hash` (else reject); k steps are replayed and the claim is
    approved iff the replayed end hash equals `claimed_end`. The Merkle proofs of both claims
    are checked on chain when the solver reveals its secret.

    Args:
        spec: the job spec (already checked against the on-chain spec hash).
        base_url: the job's `checkpointURL`.
        segment: s, 0 <= s < N/k.
        start_hash: the claimed state hash at step s*k (`claims_of(sid).start_hashes[j]`).
        claimed_end: the claimed state hash at step (s+1)*k (`endHashes[j]`).
        engine: a `TrainingEngine` for `spec` to reuse (built when None).
        client: optional shared `httpx.Client`.
        on_step: optional per-step callback during the replay.
        unavailable_is_reject: when True, an unreachable solver yields `ok=False`; when False
            `CheckpointUnavailable` propagates so the node can retry.
        timeout: HTTP timeout in seconds when no client is given.
        on_end: called with the replayed end state's canonical bytes once the replay ran
            (matching the claim or not: a forced sample's claim is wrong on purpose), so a
            node can keep and serve the state it computed (docs/SECURITY.md P-36).

    Returns:
        A `SegmentCheck` whose `committed_end_hash` is the claimed end hash; `ok=False` with a
        `reason` for a start checkpoint that does not hash to the claim or does not decode, or
        a replay mismatch.

    Raises:
        ValueError: `segment` out of range.
        CheckpointUnavailable: see `unavailable_is_reject`.
    """
    k = spec.checkpoint_interval
    if not 0 <= segment < spec.num_segments:
        raise ValueError(f"segment {segment} out of range [0, {spec.num_segments})")
    start_step, end_step = segment * k, (segment + 1) * k
    start_b, claimed_b = as_bytes32(start_hash), as_bytes32(claimed_end)

    def result(ok: bool, reason: str = "", replayed: bytes | None = None) -> SegmentCheck:
        if not ok:
            logger.info("segment %d claim rejected: %s", segment, reason)
        return SegmentCheck(segment, start_step, end_step, claimed_b, replayed, ok, reason)

    engine = engine if engine is not None else _engine_for(spec)
    start_blob = _fetch_claimed(
        base_url,
        client,
        timeout,
        engine.max_state_bytes(),
        start_step,
        start_b,
        "start checkpoint does not match the claimed start hash",
        unavailable_is_reject,
        result,
    )
    if isinstance(start_blob, SegmentCheck):
        return start_blob
    return _replay_and_compare(
        spec,
        engine,
        start_blob,
        start_step,
        end_step,
        claimed_b,
        "claimed",
        on_step,
        result,
        on_end,
    )


def check_final(
    spec: JobSpec,
    base_url: str,
    claimed_end: bytes | str,
    *,
    max_bytes: int = DEFAULT_MAX_STATE_BYTES,
    client: httpx.Client | None = None,
    unavailable_is_reject: bool = False,
    timeout: float = DEFAULT_TIMEOUT_S,
    on_end: Callable[[bytes], object] | None = None,
) -> SegmentCheck:
    """Check the final state's availability without replaying (docs/SECURITY.md P-39).

    With one seat per job the seat's duty on the last sample, unless its draw holds the
    segment before it, is to fetch the final checkpoint (step N, which the solver serves while
    the job is sealed exactly when this duty applies) and check its state hash against the
    claimed end of the last sample; the claim is proven against the committed root when the
    solver reveals its secret. Nothing is replayed, so a match vouches that the final state is
    served and kept, not that the last segment is valid (a whistleblower checks that).

    Args:
        spec: the job spec (already checked against the on-chain spec hash).
        base_url: the job's `checkpointURL`.
        claimed_end: the claimed end hash of the last sample (`endHashes[-1]`).
        max_bytes: the largest state accepted (bytes; the job engine's `max_state_bytes`).
        client: optional shared `httpx.Client`.
        unavailable_is_reject: when True, an unreachable solver yields `ok=False`; when False
            `CheckpointUnavailable` propagates so the node can retry.
        timeout: HTTP timeout in seconds when no client is given.
        on_end: called with the fetched final state's bytes once they match the claim (the
            node keeps and serves it, P-36).

    Returns:
        A `SegmentCheck` of the last segment with ``replayed_end_hash=None`` (nothing was
        replayed): ``ok=True`` when the served state hashes to the claim; ``ok=False`` with a
        `reason` when it does not or is unavailable. A fetched state is never sealed on its
        own: on ``ok=False`` the verifier node replays the segment (`VerifierNode.judge_final`,
        E-3), so serving wrong bytes cannot make an honest seat a losing rejecter.

    Raises:
        CheckpointUnavailable: see `unavailable_is_reject`.
    """
    k, n = spec.checkpoint_interval, spec.total_steps
    segment = spec.num_segments - 1
    claimed_b = as_bytes32(claimed_end)

    def result(ok: bool, reason: str = "") -> SegmentCheck:
        if not ok:
            logger.info("final state of segment %d not confirmed: %s", segment, reason)
        return SegmentCheck(segment, n - k, n, claimed_b, None, ok, reason)

    blob = _fetch_claimed(
        base_url,
        client,
        timeout,
        max_bytes,
        n,
        claimed_b,
        "final checkpoint does not match the claimed end hash",
        unavailable_is_reject,
        result,
    )
    if isinstance(blob, SegmentCheck):
        return blob
    if on_end is not None:
        on_end(blob)
    return result(True)


def _fetch_claimed(
    base_url: str,
    client: httpx.Client | None,
    timeout: float,
    max_bytes: int,
    step: int,
    claimed: bytes,
    mismatch: str,
    unavailable_is_reject: bool,
    result: Callable[..., SegmentCheck],
) -> bytes | SegmentCheck:
    """The checkpoint at `step`, which must hash to the `claimed` state hash; else the failed
    check ``result(False, reason)`` (`mismatch` names a wrong hash).

    Raises:
        CheckpointUnavailable: the solver cannot be reached and `unavailable_is_reject` is
            False.
    """
    try:
        with CheckpointClient(base_url, client, timeout=timeout, max_bytes=max_bytes) as solver:
            return solver.checkpoint(step, claimed)
    except CheckpointUnavailable as exc:
        if unavailable_is_reject:
            return result(False, f"data unavailable: {exc}")
        raise
    except CheckpointHashMismatch as exc:
        return result(False, f"{mismatch}: {exc}")


def _replay_and_compare(
    spec: JobSpec,
    engine: TrainingEngine | None,
    start_blob: bytes,
    start_step: int,
    end_step: int,
    expected_end: bytes,
    what: str,
    on_step: OnStep | None,
    result: Callable[..., SegmentCheck],
    on_end: Callable[[bytes], object] | None = None,
) -> SegmentCheck:
    """Replay steps [start_step, end_step) from `start_blob` and compare the end state hash
    with `expected_end` (the solver's committed or claimed end, named by `what`); `on_end`,
    when given, gets the replayed end state's bytes.

    Returns:
        ``result(ok, reason, replayed_hash)``: `ok=False` for a start checkpoint that does not
        decode or a replayed end hash other than `expected_end`.
    """
    eng = engine if engine is not None else _engine_for(spec)
    try:
        end_blob = replay_segment(eng, start_blob, end_step, on_step, start_step=start_step)
    except CheckpointFormatError as exc:
        return result(False, f"start checkpoint (step {start_step}) is invalid: {exc}")
    if on_end is not None:
        on_end(end_blob)
    replayed = state_hash(end_blob)
    if replayed != expected_end:
        return result(
            False,
            f"replay of steps {start_step}..{end_step} gives state {to_hex(replayed)}, solver "
            f"{what} {to_hex(expected_end)}",
            replayed,
        )
    return result(True, "", replayed)
