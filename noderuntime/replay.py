"""`ReplayMixin`: a node's replays of committed work: one sampled segment against the
commitment or the solver's claim (`replay_check`, `claim_check`; `veritrain.replay`), and the
honest per-step trajectory of a segment (`segment_trajectory`), started from a checkpoint
proven against the on-chain root and kept in the node's data dir.

Run: not a script; `from noderuntime import NodeBase`.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from noderuntime.logs import progress_bar
from noderuntime.records import RecordStore, StartIndex
from noderuntime.specs import SpecsMixin

if TYPE_CHECKING:
    from chain.types import JobView
    from veritrain.bisection import StepTrajectory
    from veritrain.replay import SegmentCheck

__all__ = ["ReplayMixin"]


class ReplayMixin(SpecsMixin):
    """Segment replays and honest trajectories (stands on the specs and engines)."""

    def replay_check(
        self, job: JobView, segment: int, *, unavailable_is_reject: bool
    ) -> SegmentCheck:
        """Check one committed segment of `job` by replay (`veritrain.replay.check_segment`).

        Args:
            job: the job view (its `merkle_root` is the on-chain commitment).
            segment: segment index s.
            unavailable_is_reject: turn an unreachable solver into a failed check instead of
                raising `CheckpointUnavailable`.

        Returns:
            The `SegmentCheck` (`ok`, `reason`).

        Raises:
            CheckpointUnavailable: the solver cannot be reached and `unavailable_is_reject`
                is False.
        """
        from veritrain.replay import check_segment

        return self._replay(
            job,
            segment,
            lambda spec, url, **kw: check_segment(
                spec,
                url,
                bytes(job.merkle_root),
                segment,
                init_hash=bytes(job.init_hash),
                **kw,
            ),
            unavailable_is_reject=unavailable_is_reject,
            matches="the commitment",
            mismatch="INVALID",
            purpose="committee",
        )

    def claim_check(
        self,
        job: JobView,
        segment: int,
        start_hash: bytes,
        claimed_end: bytes,
        *,
        unavailable_is_reject: bool,
        purpose: str = "verdict",
    ) -> SegmentCheck:
        """Check the solver's claim on one sampled segment by replay
        (`veritrain.replay.check_claim`): the start checkpoint must hash to `start_hash`, and
        k replayed steps must end at `claimed_end`.

        Args:
            job: the job view.
            segment: segment index s.
            start_hash: the claimed start state hash (`claims_of(sid).start_hashes[j]`).
            claimed_end: the claimed end state hash (`endHashes[j]`).
            unavailable_is_reject: turn an unreachable solver into a failed check instead of
                raising `CheckpointUnavailable`.
            purpose: the metrics' ``purpose`` label: ``"verdict"`` (a verifier) or
                ``"whistleblower"``.

        Returns:
            The `SegmentCheck` (`ok`, `reason`).

        Raises:
            CheckpointUnavailable: the solver cannot be reached and `unavailable_is_reject`
                is False.
        """
        from veritrain.replay import check_claim

        # the last segment (replayed by every seat that does not only fetch it, docs/SECURITY.md
        # P-36, P-39): keep the final state this node computed, so it serves it whether or not
        # the solver does
        last = int(job.total_steps) // int(job.checkpoint_interval) - 1
        keep = self._final_keeper(job) if segment == last else None
        return self._replay(
            job,
            segment,
            lambda spec, url, **kw: check_claim(
                spec, url, segment, start_hash, claimed_end, on_end=keep, **kw
            ),
            unavailable_is_reject=unavailable_is_reject,
            matches="the claim",
            mismatch="claim WRONG",
            purpose=purpose,
        )

    def final_check(
        self, job: JobView, claimed_end: bytes, *, unavailable_is_reject: bool
    ) -> SegmentCheck:
        """Check the final state's availability (`veritrain.replay.check_final`, the duty of
        a single seat on a last sample it does not replay, docs/SECURITY.md P-39): fetch the
        state at step N, match it to `claimed_end` and keep it in the mirror, so this node
        serves it whether or not the solver does (P-36).

        Raises:
            CheckpointUnavailable: the solver cannot be reached and `unavailable_is_reject`
                is False.
        """
        from veritrain.errors import CheckpointUnavailable
        from veritrain.replay import SegmentCheck, check_final

        leaf = int(job.total_steps) // int(job.checkpoint_interval)
        label = f"job {int(job.job_id)} final state"
        try:
            spec = self.replay_spec(job)
        except CheckpointUnavailable as exc:
            if not unavailable_is_reject:
                raise
            self.log.warning("%s: unavailable: %s", label, exc)
            k = int(job.checkpoint_interval)
            return SegmentCheck(leaf - 1, (leaf - 1) * k, leaf * k, None, None, False, str(exc))
        result = check_final(
            spec,
            self.checkpoint_url_of(job),
            claimed_end,
            max_bytes=self.engine_for(spec).max_state_bytes(),
            client=self.http_client,
            unavailable_is_reject=unavailable_is_reject,
            on_end=self._final_keeper(job),
        )
        if result.ok:
            self.log.info("%s: fetched, matches the claim (kept)", label)
        else:
            self.log.warning("%s: not confirmed: %s", label, result.reason)
        return result

    def _final_keeper(self, job: JobView) -> Callable[[bytes], object] | None:
        """What keeps `job`'s final state in this node's mirror (leaf N/k of its root), once
        this node has replayed or fetched it (P-36); None without a mirror."""
        mirror, root = self.mirror, bytes(job.merkle_root)
        if mirror is None:
            return None
        leaf = int(job.total_steps) // int(job.checkpoint_interval)
        return lambda blob: mirror.keep_replayed(root, leaf, blob)

    def _replay(
        self,
        job: JobView,
        segment: int,
        check: Callable[..., SegmentCheck],
        *,
        unavailable_is_reject: bool,
        matches: str,
        mismatch: str,
        purpose: str,
    ) -> SegmentCheck:
        """Run one segment check with the job's spec, engine and checkpoint URL behind a
        progress bar, and log its outcome (`replay_check` and `claim_check`).

        Args:
            check: ``check(spec, url, *, engine, on_step, client, unavailable_is_reject)``
                returning a `SegmentCheck`.
            matches: what a matching replay is logged as matching.
            mismatch: the log tag of a failed check.
            purpose: the metrics' ``purpose`` label (`noderuntime.metrics.REPLAY_PURPOSES`).
        """
        from veritrain.errors import CheckpointUnavailable
        from veritrain.replay import SegmentCheck

        label = f"job {int(job.job_id)} segment {segment}"
        try:
            spec = self.replay_spec(job)
        except CheckpointUnavailable as exc:
            if not unavailable_is_reject:
                raise
            self.log.warning("%s: %s: unavailable: %s", label, mismatch, exc)
            self.metrics.unavailable(purpose=purpose)
            k = int(job.checkpoint_interval)
            return SegmentCheck(
                segment=segment,
                start_step=segment * k,
                end_step=(segment + 1) * k,
                committed_end_hash=None,
                replayed_end_hash=None,
                ok=False,
                reason=f"unavailable: {exc}",
            )
        engine = self.engine_for(spec)
        url = self.checkpoint_url_of(job)
        started = time.monotonic()
        with progress_bar(label, spec.checkpoint_interval) as advance:
            result = check(
                spec,
                url,
                engine=engine,
                on_step=lambda _state, _loss: advance(1),
                client=self.http_client,
                unavailable_is_reject=unavailable_is_reject,
            )
        unavailable = not result.ok and "unavailable" in result.reason
        self.metrics.replay(
            time.monotonic() - started, ok=result.ok, purpose=purpose, unavailable=unavailable
        )
        if result.ok:
            self.log.info("%s: replay matches %s", label, matches)
        elif unavailable:
            self.log.warning("%s: %s: %s", label, mismatch, result.reason)
        else:
            # Most mismatches of honest solvers' jobs are planted forced errors
            # (docs/FORCED_ERRORS.md): routine work, not an alarm. A real cheat shows as a
            # dispute once the secret is revealed, and that is logged as one.
            self.log.info(
                "%s: %s (a planted forced error or a cheat; the solver's secret tells): %s",
                label,
                mismatch,
                result.reason,
            )
        return result

    # ------------------------------------------------------------------------ trajectory
    def segment_trajectory(self, job: JobView, segment: int) -> StepTrajectory:
        """The honest per-step trajectory of a committed segment (`StepTrajectory`).

        The start checkpoint comes from the node's own store when it has it, else from the
        solver (`/checkpoints/{a}`), checked against leaf s whose Merkle proof is verified
        against the on-chain root; it is then kept in `<data_dir>/checkpoints` and the
        per-step hashes in `<data_dir>/step_hashes/`, so a restarted node neither needs the
        solver nor replays again.

        Raises:
            CheckpointUnavailable: the solver cannot be reached (and nothing is stored), or
                the spec is in a retired arithmetic (`replay_spec`).
            MerkleProofInvalid: the solver's proof of leaf s does not verify.
        """
        from veritrain.bisection import StepTrajectory
        from veritrain.errors import MerkleProofInvalid
        from veritrain.merkle import verify_checkpoint
        from veritrain.store import CheckpointStore
        from veritrain.wire import CheckpointClient

        job_id = int(job.job_id)
        key = (job_id, segment)
        if key in self._trajectories:
            return self._trajectories[key]
        spec = self.replay_spec(job)
        k = spec.checkpoint_interval
        data_dir = self.data_dir
        store = CheckpointStore(data_dir / "checkpoints")
        index = self._start_index(data_dir)
        url = self.checkpoint_url_of(job)
        known = index.read().starts.get(f"{job_id}:{segment}")
        if known is not None and store.has(known):
            start_blob = store.get(known)
        else:
            cap = self.engine_for(spec).max_state_bytes()
            solver = CheckpointClient(url, self.http_client, max_bytes=cap)
            proof = solver.proof(segment)
            start_hash = proof.state_hash_bytes()
            if proof.step != segment * k or not verify_checkpoint(
                proof.proof_bytes(),
                bytes(job.merkle_root),
                spec.total_steps,
                k,
                segment,
                start_hash,
            ):
                raise MerkleProofInvalid(f"job {job_id}: bad proof of leaf {segment}")
            start_blob = solver.checkpoint(segment * k, start_hash)
            store.put(start_blob)
            with index.transaction() as starts:
                starts.starts[f"{job_id}:{segment}"] = start_hash
        traj = StepTrajectory(
            self.engine_for(spec),
            start_blob,
            (segment + 1) * k,
            store=store,
            cache_path=data_dir / "step_hashes" / f"job{job_id}-seg{segment}.json",
        )
        self._trajectories[key] = traj
        return traj

    @staticmethod
    def _start_index(data_dir: Path) -> RecordStore[StartIndex]:
        return RecordStore(data_dir / "step_hashes" / "starts.json", StartIndex)
