"""`client.jobs`: `JobManager`: jobs, submissions, verifier assignment, challenges and
finalization (credits and the jackpot pool live in the Escrow: `client.escrow`).

Typed calls of `JobManager` (ABI loaded from contracts/out). Transacting methods return the
mined receipt or raise a decoded `chain.errors.ContractRevert`; views return plain values or
the frozen views of `chain.types`. Units: wei, seconds, blocks.

Run: not a script; ``client.jobs.job_params(...)``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from eth_utils.address import to_checksum_address
from web3.types import TxReceipt

from chain.contracts._base import ContractFacade
from chain.types import (
    Assignment,
    DecodedEvent,
    JobParamsView,
    JobStatus,
    JobView,
    Verdict,
    from_struct,
)
from veritrain.sampling import OwnDraws, job_seed, own_draws, verifier_seed

if TYPE_CHECKING:
    from chain.client import ChainClient

__all__ = ["JobsFacade"]


class JobsFacade(ContractFacade):
    """Typed facade of `JobManager` for one client (``client.jobs``).

    Args:
        client: the owning `ChainClient` (signing, nonces, calls).
    """

    HANDLE = "job_manager"

    def __init__(self, client: ChainClient) -> None:
        super().__init__(client)
        self._spec_uris: dict[int, tuple[str, bytes, bytes]] = {}
        """(spec URI, spec hash, initHash) read from ``JobPosted`` per job id; they never
        change."""
        self._checkpoint_urls: dict[tuple[int, str, bytes, int], str] = {}
        """Checkpoint URLs read from ``CheckpointsCommitted``, by (job id, solver, root,
        randomness block)."""

    def job_params(self) -> JobParamsView:
        """``JobManager.params()`` (wei, seconds)."""
        return from_struct(JobParamsView, self._call_struct("params"))

    def post_cost(self, reward: int) -> int:
        """``JobManager.postCost(reward)``: what `post_job` takes from the submitter (wei):
        ``reward + V * verifierFee`` plus the forced-error premium that joins the jackpot pool
        at the first claim (docs/FORCED_ERRORS.md section 5).

        Args:
            reward: solver reward in wei.
        """
        return int(self._client.call(self.contract, "postCost", reward))

    def forced_error_premium(self) -> int:
        """``JobManager.forcedErrorPremium()``: the premium every job pays (wei)."""
        return int(self._client.call(self.contract, "forcedErrorPremium"))

    def post_job(
        self,
        model_id: bytes,
        spec_hash: bytes,
        init_hash: bytes,
        total_steps: int,
        checkpoint_interval: int,
        reward: int,
        spec_uri: str,
    ) -> TxReceipt:
        """Post a job, escrowing `post_cost` (``reward + V * verifierFee`` + the forced-error
        premium, wei; auto-approves).

        The sender must own the model or be an authorised poster (`SharesFacade.can_post`),
        else the call reverts ``NotModelPoster``.

        Args:
            model_id: ``keccak256(model name)`` (32 bytes), registered at the ShareRegistry.
            spec_hash: ``keccak256(canonical spec JSON)`` (32 bytes).
            init_hash: state hash of the spec's seed-initialised state (32 bytes):
                ``engine.state_hash(engine.init_state())``; leaf 0 of every commitment.
            total_steps: N optimizer steps.
            checkpoint_interval: k steps between checkpoints (N % k == 0).
            reward: solver reward in wei.
            spec_uri: where the spec can be fetched (``data:`` URI or URL).

        Returns:
            The receipt; `job_id_from` extracts the new job id.
        """
        self._client.token.ensure_allowance(self._client.escrow.address, self.post_cost(reward))
        return self._client.transact(
            self.contract,
            "postJob",
            model_id,
            spec_hash,
            init_hash,
            total_steps,
            checkpoint_interval,
            reward,
            spec_uri,
        )

    def cancel_job(self, job_id: int) -> TxReceipt:
        """Cancel an Open job (submitter only); the escrow becomes claimable credit."""
        return self._client.transact(self.contract, "cancelJob", job_id)

    def expire_job(self, job_id: int) -> TxReceipt:
        """Expire an Open job past its open deadline (anyone); the escrow becomes the
        submitter's claimable credit. Raises ``OpenDeadlineNotPassed`` before the deadline."""
        return self._client.transact(self.contract, "expireJob", job_id)

    def claim_job(self, job_id: int) -> TxReceipt:
        """Claim an Open job as solver by its open deadline (locks ``solverStake`` wei; raises
        ``OpenDeadlinePassed`` after it)."""
        return self._client.transact(self.contract, "claimJob", job_id)

    def commit_checkpoints(
        self,
        job_id: int,
        merkle_root: bytes,
        init_proof: Sequence[bytes],
        checkpoint_url: str,
        secret_commitment: bytes,
    ) -> TxReceipt:
        """Commit the checkpoint Merkle root, the URL serving checkpoints and proofs, and the
        solver's secret commitment (``veritrain.forced.secret_commitment``; non-zero).

        Args:
            job_id: the job (claimed by this account).
            merkle_root: root of `veritrain.merkle.checkpoint_tree` (32 bytes).
            init_proof: ``tree.proof(0)``: sibling hashes (32 bytes each, exactly the tree depth)
                proving checkpoint 0, at position 0 of the positional tree, is ``job.init_hash``;
                the call reverts ``InitialStateNotCommitted`` otherwise.
            checkpoint_url: base URL of the solver's checkpoint API.
            secret_commitment: 32 bytes, non-zero.
        """
        return self._client.transact(
            self.contract,
            "commitCheckpoints",
            job_id,
            merkle_root,
            [bytes(p) for p in init_proof],
            checkpoint_url,
            secret_commitment,
        )

    def reclaim_expired(self, job_id: int) -> TxReceipt:
        """Reopen a job whose solver missed the commit deadline for another open window (slashes
        the solver into the jackpot pool)."""
        return self._client.transact(self.contract, "reclaimExpired", job_id)

    def expire_unassigned(self, job_id: int) -> TxReceipt:
        """Expire a Committed job that seated no verifiers by its assign deadline (anyone): the
        job's ``commit_deadline`` (a reassignment resets it to its own time) plus ``open_window``
        seconds. A seat kept from an earlier draw that rejected a sample is judged first (the job
        goes Disputed and expires at a later ``finalize``); else the reward and the held fees are
        credited back to the submitter and the solver is unlocked. Raises
        ``AssignDeadlineNotPassed`` before the deadline, ``UnexpectedJobStatus`` unless
        Committed."""
        return self._client.transact(self.contract, "expireUnassigned", job_id)

    def assign_verifiers(self, job_id: int) -> TxReceipt:
        """Draw verifiers and sampled segments (after the randomness block is mined)."""
        return self._client.transact(self.contract, "assignVerifiers", job_id)

    def predict_sample(self, job_id: int) -> OwnDraws | None:
        """The first assignment `assign_verifiers` would make in the next block, replayed off
        chain: the seed from the randomness block's hash (`veritrain.sampling.job_seed`), the
        verifiers from the StakeManager's view ``drawVerifiers`` with the contract's arguments
        (``LibAssignment``: ``verifiersPerJob`` seats, ``verifierStake`` free, the submitter
        and the solver excluded) and each seat's own draw (`veritrain.sampling.own_draws`).
        Cost: four views and one block read.

        Returns:
            The draw, or None where `assign_verifiers` would not make a first assignment now:
            the job is not Committed, was assigned before (a reassignment keeps its sample),
            its randomness block is not mined or is older than the 256 hashes the chain
            keeps, or no verifier is eligible. The verifier set may still move before a
            transaction is mined: ``assignAndPostClaims`` checks the sample's hash.
        """
        job = self.get_job(job_id, with_uris=False)
        if job.status is not JobStatus.Committed or self.get_assignment(job_id).segments:
            return None
        head = int(self._client.block_number())
        randomness = int(job.randomness_block)
        # the transaction runs in block head + 1, where the hash must be one of the last 256;
        # some nodes estimate at the head itself, which must be past the randomness block too
        if head <= randomness or head + 1 - randomness > 256:
            return None
        block_hash = bytes(self._client.w3.eth.get_block(randomness)["hash"])
        seed = job_seed(block_hash, job_id, bytes(job.merkle_root))
        params = self.job_params()
        drawn, _ids, _ = self._client.call(
            self._client.stakes.contract,
            "drawVerifiers",
            verifier_seed(seed),
            int(params.verifiers_per_job),
            int(params.verifier_stake),
            [job.submitter, job.solver],
            [],
        )
        if not drawn:
            return None
        return own_draws(
            seed,
            [str(v) for v in drawn],
            int(job.total_steps) // int(job.checkpoint_interval),
            int(params.samples_per_job),
            single_seat=int(params.verifiers_per_job) == 1,
        )

    def challenge_approval(self, job_id: int, sample_index: int, verifier: str) -> TxReceipt:
        """Challenge ``verifier``'s approval of sample ``sample_index`` as a whistleblower
        (posts ``challengeBond`` wei; auto-approves the Escrow)."""
        self._client.token.ensure_allowance(
            self._client.escrow.address, self.job_params().challenge_bond
        )
        return self._client.transact(
            self.contract,
            "challengeApproval",
            job_id,
            sample_index,
            to_checksum_address(verifier),
        )

    def finalize(self, job_id: int) -> TxReceipt:
        """Settle a job after its challenge window, or open/continue arbitration; when no verifier
        revealed a verdict, draw fresh ones (the job goes back to Committed) or, past
        ``max_reassignments``, expire it with a refund once every rejected sample was judged (the
        job goes Disputed first while one is left)."""
        return self._client.transact(self.contract, "finalize", job_id)

    def submission_of(self, job_id: int) -> bytes:
        """``submissionOf(jobId)``: the current solver's `SubmissionId` (zero while no solver
        holds the job); the verification round is keyed by it."""
        return bytes(self._client.call(self.contract, "submissionOf", job_id))

    def get_submission(self, submission_id: bytes) -> tuple[int, str]:
        """``getSubmission(submissionId)``: (job id, solver) of a submission."""
        job_id, solver = self._client.call(self.contract, "getSubmission", submission_id)
        return int(job_id), str(solver)

    def job_count(self) -> int:
        """Number of jobs posted (ids are 1..job_count)."""
        return int(self._client.call(self.contract, "jobCount"))

    def get_job(self, job_id: int, *, with_uris: bool = True) -> JobView:
        """``getJob(jobId)`` as a `JobView` (status a `JobStatus`).

        Args:
            job_id: the job.
            with_uris: also read the spec URI and the checkpoint URL from the job's
                ``JobPosted`` and ``CheckpointsCommitted`` events (``eth_getLogs``).

        Raises:
            ContractRevert: the contract rejects the id (decoded).
        """
        data = self._call_struct("getJob", job_id)
        data["status"] = JobStatus(int(data["status"]))
        # The contract keeps no spec hash (it is in the JobPosted event and the training key).
        data["spec_hash"] = self.spec_hash_of(job_id)
        # One word holds initHash until the commit, then the checkpoint root (`Job.root`); the
        # initHash of a committed job is its JobPosted event's.
        root = bytes(data.pop("root"))
        if data.pop("committed"):
            data["merkle_root"], data["init_hash"] = root, self.init_hash_of(job_id)
        else:
            data["merkle_root"], data["init_hash"] = bytes(32), root
        for key in ("model_id", "spec_hash"):
            data[key] = bytes(data[key])
        if with_uris:
            data["spec_uri"] = self.spec_uri(job_id)
            root = data["merkle_root"]
            if root == bytes(32):
                # Nothing committed by the current solver: no URL to look up.
                data["checkpoint_url"] = ""
            else:
                # One log scan per commitment: a new commit brings a new randomness block.
                url_key = (job_id, str(data["solver"]), bytes(root), int(data["randomness_block"]))
                url = self._checkpoint_urls.get(url_key)
                if url is None:
                    url = self._checkpoint_urls[url_key] = self.checkpoint_url(job_id)
                data["checkpoint_url"] = url
        return from_struct(JobView, data, job_id=job_id)

    def checkpoint_commitment(self, job_id: int) -> tuple[bytes, int, int]:
        """``roundJobOf(jobId)``'s tree fields: (Merkle root of the current solver's checkpoints,
        zeros before a commit; total steps N; checkpoint interval k), without `get_job`'s log
        reads."""
        data = self._call_struct("roundJobOf", job_id)
        return (
            bytes(data["merkle_root"]),
            int(data["total_steps"]),
            int(data["checkpoint_interval"]),
        )

    def spec_uri(self, job_id: int) -> str:
        """The job's ``specURI``, from its ``JobPosted`` event, or for a run contribution
        (posted with none) its run's with the contribution's fragment
        (`chain.contracts.runs.RunsFacade.contribution_spec_uri`); "" for an unknown job.
        Cached: it never changes."""
        return self._posted(job_id)[0]

    def spec_hash_of(self, job_id: int) -> bytes:
        """The job's ``specHash`` (32 bytes; zeros for an unknown job), from its ``JobPosted``
        event: the contract keeps it only inside the job's training key
        (``ShareRegistry.trainingKey``), and the spec fetched from `spec_uri` is checked
        against it. Cached: it never changes."""
        return self._posted(job_id)[1]

    def init_hash_of(self, job_id: int) -> bytes:
        """The job's ``initHash`` (32 bytes; zeros for an unknown job), from its ``JobPosted``
        event: the contract keeps it in the job's root word only until the commit, whose Merkle
        root then takes the word (the commit proved checkpoint 0 is initHash). Cached: it never
        changes."""
        return self._posted(job_id)[2]

    def _posted(self, job_id: int) -> tuple[str, bytes, bytes]:
        """(specURI, specHash, initHash) of the job's ``JobPosted`` event, ("", zeros, zeros)
        before it exists; one log scan per job, cached once found (a post is final)."""
        cached = self._spec_uris.get(job_id)
        if cached is None:
            events = self._job_events("JobPosted", job_id)
            if not events:
                return "", bytes(32), bytes(32)
            args = events[-1].args
            uri = str(args["specURI"])
            if not uri:
                # a run's contribution: the spec is its run's (RunOpened), by (round, seat)
                uri = self._client.runs.contribution_spec_uri(job_id)
            cached = self._spec_uris[job_id] = (
                uri,
                bytes(args["specHash"]),
                bytes(args["initHash"]),
            )
        return cached

    def checkpoint_url(self, job_id: int) -> str:
        """The current solver's committed ``checkpointURL``, from the job's latest
        ``CheckpointsCommitted`` event ("" before any commit; the data served is checked against
        the committed root, so the URL is not kept in storage)."""
        events = self._job_events("CheckpointsCommitted", job_id)
        return str(events[-1].args["checkpointURL"]) if events else ""

    def _job_events(self, event: str, job_id: int) -> list[DecodedEvent]:
        """Every ``event`` of the JobManager with indexed ``jobId == job_id`` (its first
        indexed argument), oldest first (`ContractFacade._scan_events`)."""
        return self._scan_events(event, {1: job_id})

    def disputed_sample_of(self, job_id: int) -> int:
        """Sample index under dispute (``disputedSampleOf``)."""
        return int(self._client.call(self.contract, "disputedSampleOf", job_id))

    def disputed_mask_of(self, job_id: int) -> int:
        """Bit mask of disputed sample indices (bit i = sample i; ``disputedMaskOf``)."""
        return int(self._client.call(self.contract, "disputedMaskOf", job_id))

    def get_assignment(self, job_id: int) -> Assignment:
        """Assigned verifiers and sampled segments of a job."""
        verifiers, segments = self._client.call(self.contract, "getAssignment", job_id)
        return Assignment(tuple(str(v) for v in verifiers), tuple(int(s) for s in segments))

    def sample_mask_of(self, job_id: int, verifier: str) -> int:
        """Samples ``verifier`` must verify (``sampleMaskOf``): bit i set = sample i of
        `get_assignment`'s segments is in its own draw (docs/SECURITY.md P-27); its sealed ends
        on the other samples are ignored. 0 if it is not assigned."""
        return int(
            self._client.call(self.contract, "sampleMaskOf", job_id, to_checksum_address(verifier))
        )

    def verdicts_of(self, job_id: int, verifier: str) -> list[Verdict]:
        """A verifier's verdicts in sample order (`Verdict.None_` before submission)."""
        raw = self._client.call(self.contract, "verdictOf", job_id, to_checksum_address(verifier))
        return [Verdict(int(v)) for v in raw]

    def challenger_of(self, job_id: int, sample_index: int, verifier: str) -> str | None:
        """Whistleblower that challenged ``verifier``'s approval of a sample, or None."""
        who = str(
            self._client.call(
                self.contract,
                "challengerOf",
                job_id,
                sample_index,
                to_checksum_address(verifier),
            )
        )
        return None if int(who, 16) == 0 else who

    def escrow_address(self) -> str:
        """The Escrow holding the JobManager's tokens (``escrow()``)."""
        return str(self._client.call(self.contract, "escrow"))

    def verification_round_address(self) -> str:
        """The round the JobManager forwards commitments to (``verificationRound()``)."""
        return str(self._client.call(self.contract, "verificationRound"))

    def verify_checkpoint(
        self, job_id: int, leaf_index: int, state_hash: bytes, proof: Sequence[bytes]
    ) -> bool:
        """``verifyCheckpoint``: does the proof place ``state_hash`` at ``leaf_index``?"""
        return bool(
            self._client.call(
                self.contract, "verifyCheckpoint", job_id, leaf_index, state_hash, list(proof)
            )
        )
