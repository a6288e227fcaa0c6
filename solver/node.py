"""The solver node: claims open jobs, trains them, commits checkpoints and sees them through.

Lifecycle of one job, as driven by `SolverNode.step()` (PROTOCOL.md section 1):

1. find an Open job whose spec loads and hash-checks (`load_spec`), whose data fits, whose
   on-chain `initHash` is the state hash of the spec's seed-initialised state (a job whose
   initHash does not match can never be committed) and that this solver can finish in time
   (its measured step rate for the spec, `step_rate`, gives the time to train N steps and hash
   N/k + 1 checkpoints; with the safety margin it must fit in the commit window), and
   `claimJob` it when the solver has enough free stake; a job it cannot use or finish is
   recorded as skipped, with the reason logged, and never examined again;
2. train it with `solver.trainer.train_job` (a checkpoint every k steps into the
   content-addressed store; each new state hash is persisted before going on), watching the
   commit deadline: when the remaining steps at the measured rate no longer fit before it,
   the job is abandoned cleanly (reason logged, its checkpoints deleted);
3. build the Merkle tree, publish the checkpoints on the HTTP server (sealed), draw the job's
   secret (docs/FORCED_ERRORS.md; persisted before anything is sent) and
   `commitCheckpoints(root, proof of leaf 0, http://{public_host}:{port}/jobs/{jobId},
   secretCommitment)` (the contract checks that checkpoint 0, at its position, is initHash);
4. `assignVerifiers` once the randomness block is mined (anyone may; "not ready" reverts are
   retried quietly);
5. once assigned: draw the forced error from the secret and the sample, serve only the start
   checkpoints of the sampled segments, and `postClaims` (start and end hash of every sample;
   the forced sample's end hash is the forced claim) before the verdict deadline; submit the
   seals and then the reveals its seats handed to its server, one transaction each
   (`solver.aggregation`);
6. after the challenge deadline, `revealSecret` with one Merkle multiproof of every claim, then
   serve everything again;
7. `finalize` when due, helping a dispute along (`drawCommittee`, `resolve`) while Disputed;
8. `claimCredit` whenever there is credit.

Every phase is persisted as a typed record (`noderuntime.records.SolverRecords` in
`<data_dir>/solver_state.json`); each phase first checks the job on chain, so a solver killed at
any point resumes where it stopped: mid-training from its last checkpoint, after a commit by
re-serving the checkpoints and carrying on, with the same secret (a restarted solver reveals
what it committed to). A stored checkpoint that fails its hash check (a flipped bit on disk) is
recomputed by replay from the last good one (`solver.trainer.restore_checkpoint`) when training
resumes, before the commit and before it is served.

`step_function(engine)` is the override point of the step rule and `initial_state(engine)` that
of state 0 (testing-only cheating solvers in `adversary.solver` replace them; they play the round
exactly like honest ones).

Run: `veritrain solver run --rpc-url ... --deployment ... --key-env SOLVER_KEY`.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from chain.errors import ContractRevert
from noderuntime import TERMINAL_JOB_STATUSES
from noderuntime.adjudication import Adjudication
from noderuntime.mirror import StateMirror, mount_mirror
from noderuntime.ports import ChainPort
from noderuntime.records import Phase, RecordStore, SolverJob, SolverRecords
from noderuntime.runkeeper import RunKeeper
from noderuntime.runs import RoundNotReady
from solver.aggregation import SealAggregator, mount_aggregation
from solver.round import SolverRound
from solver.server import (
    DEFAULT_STATE_CACHE_BYTES,
    CheckpointCatalog,
    JobCheckpoints,
    ServerThread,
    create_app,
)
from solver.trainer import step_function, train_job
from veritrain.commitments import new_secret, secret_commitment, submission_id
from veritrain.enums import JobStatus, Role
from veritrain.errors import CheckpointUnavailable, VeritrainError
from veritrain.hexutil import from_hex, to_hex
from veritrain.merkle import checkpoint_tree
from veritrain.spec import METRIC_LABELS, load_spec
from veritrain.units import vtt

if TYPE_CHECKING:
    from fastapi import FastAPI

    from veritrain.bisection import StepFn
    from veritrain.training import TrainingEngine, TrainState

logger = logging.getLogger(__name__)

__all__ = ["SolverNode", "Phase"]


class CommitTree(NamedTuple):
    """What `commitCheckpoints` takes of a checkpoint tree.

    Attributes:
        root: the 32-byte Merkle root.
        init_proof: the sibling hashes (32 bytes each, bottom-up) proving checkpoint 0.
    """

    root: bytes
    init_proof: list[bytes]


class SolverNode(SolverRound):
    """A solver: trains claimed jobs and serves their checkpoints.

    Args:
        client: the chain client (injected; holds the solver's key).
        data_dir: directory for the state file and the checkpoint store.
        public_host: host name verifiers use to reach the checkpoint server.
        port: TCP port of the checkpoint server.
        bind_host: interface the server binds (defaults to `public_host`).
        serve: start the HTTP server in `run()` (tests of `step()` may disable it).
        max_active_jobs: jobs held at once (claimed and not yet done).
        poll_interval: seconds between rounds.
        adjudication: the adjudication strategy (None: from ``client.adjudicator.name``).
        stake_amount: wei to stake when not active (None: 4x solverStake, at least min).
        state_cache_bytes: bound (bytes) of the in-memory cache of replayed intermediate
            states served during disputes.
        deadline_margin: safety factor on the estimated training time (0.25: 25% more).
        deadline_margin_s: seconds kept free before the commit deadline on top of that (the
            Merkle tree, the commit transaction, block times).
        rate_trial_seconds: wall-clock budget of the timed trial that measures a spec's step
            rate (at most N steps).
        models: model ids (names, e.g. ``"digits-mlp"``) whose jobs this solver claims; None
            or empty claims any model's jobs. A job of another model is skipped.
        threads: CPU threads for repro jobs (`NodeBase`; None: torch's count).
        device: where repro jobs run, `"auto"`, `"cpu"` or `"cuda"` (`NodeBase`).
        workers: W data-parallel processes each job trains with (`solver.trainer.train_job`:
            the same checkpoints as one process; clamped to the job's micro-batches). W > 1
            needs the honest `step_function` and `initial_state`: a subclass replacing either
            trains on one process.
        min_reward: the least reward (wei) a job must pay to be claimed; an Open job paying
            less is skipped for good (a reward never changes) and said once in the log. 0
            claims any job: the default, so that a spammer's unpaid jobs are claimed unless
            the operator sets a price.

    Raises:
        ValueError: a negative `min_reward`, or `workers` < 1.
    """

    def __init__(
        self,
        client: ChainPort,
        data_dir: Path,
        public_host: str = "127.0.0.1",
        port: int = 8701,
        *,
        bind_host: str | None = None,
        serve: bool = True,
        max_active_jobs: int = 1,
        poll_interval: float = 1.0,
        stake_amount: int | None = None,
        adjudication: Adjudication | None = None,
        state_cache_bytes: int = DEFAULT_STATE_CACHE_BYTES,
        deadline_margin: float = 0.25,
        deadline_margin_s: float = 30.0,
        rate_trial_seconds: float = 1.0,
        models: Sequence[str] | None = None,
        threads: int | None = None,
        device: str = "auto",
        min_reward: int = 0,
        workers: int = 1,
    ) -> None:
        super().__init__(
            client,
            name="solver",
            revert_types=(ContractRevert,),
            poll_interval=poll_interval,
            adjudication=adjudication,
            threads=threads,
            device=device,
        )
        from veritrain.spec import model_id_hash

        self.models = tuple(models or ())
        self._model_hashes = {model_id_hash(m) for m in self.models}
        if min_reward < 0:
            raise ValueError(f"min_reward must be >= 0 wei, got {min_reward}")
        self.min_reward = min_reward
        if workers < 1:
            raise ValueError(f"workers must be >= 1, got {workers}")
        self.workers = workers
        self.data_dir = Path(data_dir)
        self.public_host = public_host
        self.port = port
        self.bind_host = bind_host or public_host
        self.serve = serve
        self.max_active_jobs = max_active_jobs
        self.stake_amount = stake_amount
        self.state = RecordStore(self.data_dir / "solver_state.json", SolverRecords)
        self._initials: dict[int, bytes | None] = {}  # job -> state 0 when not seed-initialised
        self._not_yet: set[int] = set()  # jobs whose start could not be built this round
        # job -> state hashes this process trained and wrote itself (not re-read before commit)
        self._written: dict[int, set[bytes]] = {}
        self._run_states: dict[tuple[bytes, int], Any] = {}  # (run hash, round) -> RunState
        # its checkpoints and the states it proved for runs, served by hash by its server too
        self.store = self.mirror = StateMirror(self.data_dir / "checkpoints")
        self.run_keeper = RunKeeper(
            self, propose=True, challenge=True, store=self.store, mirrors=self.mirrors
        )
        self.catalog = CheckpointCatalog(
            self.store,
            cache_dir=self.data_dir / "step_hashes",
            state_cache_bytes=state_cache_bytes,
        )
        self.deadline_margin = deadline_margin
        self.deadline_margin_s = deadline_margin_s
        self.rate_trial_seconds = rate_trial_seconds
        self._rates: dict[str, tuple[float, float]] = {}  # spec hash hex -> (steps/s, s/ckpt)
        self._server: ServerThread | None = None
        self._forced_rate: int | None = None
        # the seats' seals and reveals handed to this solver (in memory: lost on a restart,
        # when the seats fall back to their own transactions)
        self.aggregator = SealAggregator(client, serves=lambda j: self.catalog.get(j) is not None)
        self._republish()

    # ------------------------------------------------------------------------- training
    def step_function(self, engine: TrainingEngine) -> StepFn:
        """The step rule this solver trains and serves with (honest: `trainer.step_function`).

        Override point: a subclass that trains differently replaces it, and its checkpoints,
        commitments and served states all follow.

        Args:
            engine: the job's engine.
        """
        return step_function(engine)

    def initial_state(self, engine: TrainingEngine) -> TrainState:
        """State 0 this solver trains from (honest: the spec's seed-initialised state).

        Override point: a subclass that starts from other weights replaces it; its tree's leaf 0
        then differs from the job's initHash and `commitCheckpoints` reverts.

        Args:
            engine: the job's engine.
        """
        return engine.init_state()

    def commitment(self, hashes: Sequence[bytes], interval: int, init_hash: bytes) -> CommitTree:
        """The root and the proof of checkpoint 0 this solver commits (honest: the positional
        tree over its own state hashes, `veritrain.merkle.checkpoint_tree`).

        Override point: an adversary that commits another tree replaces it; the contract
        checks the proof at index 0 against the job's initHash (docs/SECURITY.md P-25).

        Args:
            hashes: the 32-byte state hashes of checkpoints 0..N/k it trained.
            interval: the job's checkpoint interval k (steps).
            init_hash: the job's on-chain initHash (unused by the honest solver).
        """
        tree = checkpoint_tree(hashes, interval)
        return CommitTree(tree.root, tree.proof(0))

    # ------------------------------------------------------------------------- lifecycle
    def checkpoint_url(self, job_id: int) -> str:
        """`checkpointURL` committed for a job (PROTOCOL.md 2.4)."""
        return f"http://{self.public_host}:{self.port}/jobs/{job_id}"

    def http_app(self) -> FastAPI:
        """The checkpoint server's app (`solver.server.create_app` over `catalog`, with the
        mirror's routes over its store, `noderuntime.mirror`, the tokens-dataset chunks its
        trainings fetched, `/data/<root>/`, and the seats' hand-offs, `solver.aggregation`); a
        test adversary may wrap it."""
        from veritrain.chunkstore import chunk_cache_dir

        app = create_app(self.catalog, chunk_cache=chunk_cache_dir())
        return mount_aggregation(mount_mirror(app, self.store), self.aggregator)

    def start_server(self) -> None:
        """Start the checkpoint server thread (idempotent)."""
        if self._server is None:
            self._server = ServerThread(self.http_app(), self.bind_host, self.port)
            self._server.start()

    def stop_server(self) -> None:
        """Stop the checkpoint server thread, if running."""
        if self._server is not None:
            self._server.stop()
            self._server = None

    def on_start(self) -> None:
        """Serve checkpoints while the node runs (`NodeBase.run`, once its state is bound)."""
        if self.serve:
            self.start_server()

    def on_stop(self) -> None:
        """Stop the checkpoint server."""
        self.stop_server()

    def _republish(self) -> None:
        """Serve every job whose training finished (after a restart), sealed as it was."""
        for job_id, rec in self.state.read().jobs.items():
            if rec.phase in (Phase.TRAINED, Phase.COMMITTED, Phase.DONE):
                self._apply_seal(job_id, rec)
                self._publish(job_id, rec)

    def _publish(self, job_id: int, rec: SolverJob) -> JobCheckpoints:
        """Serve a trained job: its checkpoints, proofs and (replayed on demand) every
        intermediate state of its own trajectory (`/states/{step}`, for bisection)."""
        entry = JobCheckpoints.build(job_id, rec.interval, rec.total_steps, list(rec.hashes))
        spec_uri, spec_hash = rec.spec_uri, rec.spec_hash

        def replayer() -> tuple[Any, Any]:
            spec = self._specs.get(job_id) or load_spec(spec_uri, spec_hash)
            self._specs[job_id] = spec
            engine = self._engine_of(job_id, spec, spec_uri, spec_hash)
            return engine, self.step_function(engine)

        self.catalog.publish(entry, replayer)
        return entry

    # ----------------------------------------------------------------------------- state

    def _active_jobs(self) -> list[int]:
        return sorted(
            job_id
            for job_id, rec in self.state.read().jobs.items()
            if rec.phase not in (Phase.DONE, Phase.ABANDONED)
        )

    # ------------------------------------------------------------------------------ step
    def step(self) -> None:
        """One round: stake, advance every held job, maybe claim a new one, claim credit."""
        self.ensure_stake(Role.Solver, self.stake_amount)  # tops up after a slash
        for job_id in self._active_jobs():
            if self.stopping:
                return
            self._advance(job_id)
        if len(self._active_jobs()) < self.max_active_jobs and not self.stopping:
            self._maybe_claim()
        if not self.stopping:
            self.run_keeper.tick()  # runs: propose, challenge, finalize round claims
        self.claim_credit()

    def _advance(self, job_id: int) -> None:
        rec = self.job_record(job_id)
        if rec is None:
            return
        job = self.client.jobs.get_job(job_id)
        status = JobStatus(int(job.status))
        me = self.client.address.lower()
        if rec.phase in (Phase.TRAINING, Phase.TRAINED) and (
            job.solver.lower() != me or status in (JobStatus.Open, *TERMINAL_JOB_STATUSES)
        ):
            self.log.warning("job %d: no longer ours (status %s); abandoning", job_id, status.name)
            self._put(job_id, phase=Phase.ABANDONED)
            return
        if rec.phase == Phase.TRAINING:
            if not self._train(job_id, rec, job):
                return
            rec = self._put(job_id, phase=Phase.TRAINED)
        if rec.phase == Phase.TRAINED and rec.root is not None:
            root = rec.root  # set with the last checkpoint, before the phase
            if status is JobStatus.Claimed:
                if self.chain_time() > int(job.commit_deadline):
                    self.log.warning("job %d: commit deadline missed", job_id)
                    self._put(job_id, phase=Phase.ABANDONED)
                    return
                # every checkpoint we are about to commit to must be servable and durable: a
                # bad file (from before a restart) is recomputed by replay now, not discovered
                # by a verifier later; then an fsync of each file the writer thread has not
                # already made durable (those from before a restart), and of the directory
                if not self.full_selftest_ready(job):
                    # a repro2 job: the root waits for the full selftest (it runs while the job
                    # trains, so it is done long before the commit deadline); retried next round
                    refusal = self._refusals.get(job_id)
                    if refusal is not None:  # the full selftest failed: never committed
                        self._abandon(job_id, refusal)
                    return
                self.catalog.verify(job_id, written=self._written.pop(job_id, ()))
                self.store.sync(rec.hashes)
                url = self.checkpoint_url(job_id)
                secret = rec.secret
                if secret is None:
                    # persisted BEFORE the commit, so a restarted solver reveals the same secret
                    secret = new_secret()
                    rec = self._put(job_id, secret=secret)
                commitment = secret_commitment(job_id, self.client.address, secret)
                committed = self.commitment(rec.hashes, rec.interval, bytes(job.init_hash))
                receipt = self.send(
                    f"commitCheckpoints job {job_id} root {to_hex(committed.root)[:10]}",
                    self.client.jobs.commit_checkpoints,
                    job_id,
                    committed.root,
                    committed.init_proof,
                    url,
                    commitment,
                )
                if receipt is None:
                    return
                rec = self._put(job_id, phase=Phase.COMMITTED, url=url)
                job = self.client.jobs.get_job(job_id)
                status = JobStatus(int(job.status))
            elif bytes(job.merkle_root) == root:
                rec = self._put(job_id, phase=Phase.COMMITTED)  # committed before a crash
            else:
                self._put(job_id, phase=Phase.ABANDONED)
                return
        if rec.phase == Phase.COMMITTED:
            self._follow(job_id, job, status)

    # ---------------------------------------------------------------------------- round

    # ---------------------------------------------------------------------------- claim
    def _maybe_claim(self) -> None:
        """Discovery: claim the first Open job this solver can use and finish in time. Jobs
        it skipped (unusable, too long) are never read again; without enough free stake for
        a claim, jobs are read only to adopt one this solver claimed before a crash."""
        params = self.job_params()
        free = int(self.client.stakes.free_stake(self.client.address, int(Role.Solver)))
        short = free < int(params.solver_stake)
        if short and self._active_jobs():
            self.log.debug("not enough free stake to claim a job (%s free)", vtt(free))
            return
        records = self.state.read()
        known = set(records.skip) | set(records.jobs)
        count = int(self.client.jobs.job_count())
        for job_id in range(1, count + 1):
            if job_id in known:
                continue
            job = self.client.jobs.get_job(job_id)
            status = JobStatus(int(job.status))
            if status in TERMINAL_JOB_STATUSES:
                self._skip(job_id)
                continue
            mine = job.solver.lower() == self.client.address.lower()
            if status is JobStatus.Claimed and mine:
                # we claimed it and crashed before recording it: adopt it
                if self._prepare(job_id, job) is not None:
                    self._hold(job_id, job)
                return
            if status is not JobStatus.Open:
                continue
            if job.submitter.lower() == self.client.address.lower():
                self._skip(job_id)  # never ours to claim
                continue
            if self._model_hashes and bytes(job.model_id) not in self._model_hashes:
                self.log.info(
                    "job %d: model 0x%s is not one this solver trains (%s); skipping it",
                    job_id,
                    bytes(job.model_id).hex()[:16],
                    ", ".join(self.models),
                )
                self._skip(job_id)
                continue
            if short:  # scanned only to adopt a claim made before a crash
                return
            if int(job.reward) < self.min_reward:
                self.log.info(
                    "job %d pays %s, below this solver's --min-reward %s; skipping it",
                    job_id,
                    vtt(int(job.reward)),
                    vtt(self.min_reward),
                )
                self._skip(job_id)
                continue
            engine = self._prepare(job_id, job)
            if engine is None and job_id in self._not_yet:
                self._not_yet.discard(job_id)  # not skipped: read again next round
                continue
            if engine is None or not self._can_finish(job_id, engine, int(params.commit_window)):
                self._skip(job_id)
                continue
            if self.send(f"claimJob {job_id}", self.client.jobs.claim_job, job_id) is not None:
                self.metrics.jobs_claimed.inc()
                self._hold(job_id, job)
                return

    def _abandon(self, job_id: int, reason: str) -> None:
        """Drop a held job cleanly: phase ABANDONED (never trained again), its checkpoints
        deleted (unless another held job shares them), its engine released."""
        rec = self._put(job_id, phase=Phase.ABANDONED)
        self.log.warning("job %d: abandoned: %s", job_id, reason)
        kept = {
            bytes(h)
            for other, held in self.state.read().jobs.items()
            if other != job_id and held.phase not in (Phase.DONE, Phase.ABANDONED)
            for h in held.hashes
        }
        for digest in rec.hashes:
            if bytes(digest) not in kept:
                self.store.delete(digest)
        spec = self._specs.pop(job_id, None)
        if spec is not None and not any(s is spec for s in self._specs.values()):
            self._engines.pop(spec.spec_hash().hex(), None)

    def _skip(self, job_id: int) -> None:
        with self.state.transaction() as records:
            if job_id not in records.skip:
                records.skip.append(job_id)

    def _hold(self, job_id: int, job: Any) -> None:
        """Record a job this solver now holds (phase training, no checkpoint yet)."""
        rec = SolverJob(
            phase=Phase.TRAINING,
            spec_uri=self.spec_uri_of(job),
            spec_hash=bytes(job.spec_hash),
            total_steps=int(job.total_steps),
            interval=int(job.checkpoint_interval),
            submission=submission_id(job_id, self.client.address),
        )
        with self.state.transaction() as records:
            records.jobs[job_id] = rec

    def _prepare(self, job_id: int, job: Any) -> Any:
        """Load and check a job's spec and build its engine; None if the job is unusable: its
        spec does not load (a retired arithmetic such as "repro" included), does not match
        the job or its model's registered architecture, family and compute (`model_mismatch`),
        or is a repro2 job on a machine that fails the selftest (`repro_refusal`)."""
        try:
            spec = load_spec(self.spec_uri_of(job), bytes(job.spec_hash))
            if (spec.total_steps, spec.checkpoint_interval) != (
                int(job.total_steps),
                int(job.checkpoint_interval),
            ):
                raise VeritrainError(
                    f"spec says N={spec.total_steps}, k={spec.checkpoint_interval}; chain says "
                    f"N={job.total_steps}, k={job.checkpoint_interval}"
                )
            refusal = self.repro_refusal(spec)
            if refusal is not None:
                self.log.warning("job %d: refusing it: %s", job_id, refusal)
                return None
            mismatch = self.model_mismatch(job, spec)
            if mismatch is not None:
                raise VeritrainError(mismatch)
            initial = self.contribution_start(self.spec_uri_of(job), bytes(job.spec_hash), job_id)
            engine = self.engine_for(spec, initial)
            expected = engine.state_hash(engine.init_state())
            if bytes(job.init_hash) != expected:
                what = (
                    "contribution's initial" if initial is not None else "spec's seed-initialised"
                )
                raise VeritrainError(
                    f"initHash {to_hex(bytes(job.init_hash))} is not the {what} state "
                    f"{to_hex(expected)} (no run from the spec could be committed)"
                )
        except (CheckpointUnavailable, RoundNotReady) as exc:
            # a run's earlier final state could not be fetched, or its round is not ready:
            # look at the job again later
            self.log.warning(
                "job %d: its start cannot be built yet (%s); trying later", job_id, exc
            )
            self._not_yet.add(job_id)
            return None
        except (VeritrainError, OSError, ValueError) as exc:
            self.log.warning("job %d: unusable spec, skipping it: %s", job_id, exc)
            return None
        self._specs[job_id] = spec
        self._initials[job_id] = initial
        return engine

    def contribution_start(
        self, spec_uri: str, spec_hash: bytes, job_id: int | None = None
    ) -> bytes | None:
        """State 0 of a run's contribution (docs/RUNS.md), None for an ordinary job.

        A contribution (round t, seat j) starts from `contribution_init(global state t, the
        seat's latest accepted final)`. This solver rebuilds the run from the chain's final
        round claims (`noderuntime.runs.run_state`: the counted contributions of the earlier
        rounds, their final states fetched from their solvers, else from the `--mirror` holders,
        and proved against their roots) and computes the global state itself; nobody's word for
        it is taken. A seat whose latest counted final no holder serves cannot be started
        (`RunState.seat_start`). A job that is not
        the seat's registered contribution of the run's current round mints nothing, so it is
        not worked on.

        Args:
            spec_uri: the job's spec URI.
            spec_hash: the job's 32-byte specHash.
            job_id: the job (checked to be the seat's registered contribution), or None.

        Returns:
            The initial checkpoint bytes, or None when the URI names no contribution.

        Raises:
            RoundNotReady: the run is not opened, the round not reached or the job not
                registered yet (look again later).
            VeritrainError: the contribution cannot be resolved, its round is over, the job is
                not the seat's registered one, or an earlier round's final state cannot be
                fetched and proved.
        """
        from noderuntime.runs import find_run, run_state
        from veritrain.diloco import load_contribution
        from veritrain.spec import CONTRIBUTION_MARK

        if CONTRIBUTION_MARK not in spec_uri:
            return None
        run, round_index, seat = load_contribution(spec_uri, spec_hash)
        view = find_run(self.client, run)
        if round_index > view.round:
            raise RoundNotReady(f"run {view.run_id} is at round {view.round}, not {round_index}")
        if job_id is not None:
            registered = self.client.runs.contribution_of(view.run_id, round_index, seat)
            if registered == 0 and round_index == view.round:
                raise RoundNotReady(f"run {view.run_id}: job {job_id} is not registered yet")
            if registered != job_id:
                raise VeritrainError(
                    f"not run {view.run_id}'s registered contribution (round {round_index}, "
                    f"seat {seat}): job {registered or 'none'} is"
                )
        key = (run.run_hash(), round_index)
        state = self._run_states.get(key)
        if state is None:  # rounds before t are final once round t is current: cache it
            state = run_state(
                self.client,
                run,
                round_index,
                store=self.store,
                http=self.http_client,
                mirrors=self.mirrors,
            )
            if not state.withheld:  # a withheld seat may be served again: rebuild next time
                self._run_states[key] = state
        return state.seat_start(seat)

    def _engine_of(self, job_id: int, spec: Any, spec_uri: str, spec_hash: bytes) -> Any:
        """The engine of a held job: its spec with its own state 0 (`contribution_start`)."""
        if job_id not in self._initials:
            self._initials[job_id] = self.contribution_start(spec_uri, spec_hash)
        return self.engine_for(spec, self._initials[job_id])

    # ---------------------------------------------------------------------------- train
    def _train(self, job_id: int, rec: SolverJob, job: Any) -> bool:
        engine = (
            self._prepare(job_id, job)
            if job_id not in self._specs
            else self._engine_of(
                job_id, self._specs[job_id], self.spec_uri_of(job), bytes(job.spec_hash)
            )
        )
        if engine is None:
            if job_id in self._not_yet:  # its start cannot be built right now: next round
                self._not_yet.discard(job_id)
                return False
            self._put(job_id, phase=Phase.ABANDONED)
            return False

        def persist(hashes: list[str]) -> None:
            self._put(job_id, hashes=[from_hex(h) for h in hashes])

        hashes = [to_hex(h) for h in rec.hashes]
        resumed_from = len(hashes)
        watch = self._deadline_watch(job_id, engine, int(job.commit_deadline))
        reasons: list[str] = []

        def give_up(step: int) -> str | None:
            reason = watch(step)
            if reason is not None:
                reasons.append(reason)
            return reason

        parallel = (  # W > 1 processes train the honest rule from the spec's state 0 only
            self.workers > 1
            and type(self).step_function is SolverNode.step_function
            and type(self).initial_state is SolverNode.initial_state
        )
        done = train_job(
            engine,
            self.store,
            hashes,
            step_fn=None if parallel else self.step_function(engine),
            initial=None if parallel else lambda: self.initial_state(engine),
            workers=self.workers if parallel else 1,
            device=self.device,
            threads=self.threads,
            on_checkpoint=persist,
            should_stop=lambda: self.stopping,
            give_up=give_up,
            label=f"job {job_id}",
        )
        if not done:
            if reasons:
                self._abandon(job_id, reasons[0])
            return False
        self._written[job_id] = {from_hex(h) for h in hashes[resumed_from:]}
        # Sealed before it is published: no request may ever see an unsealed trained job.
        self.catalog.seal(job_id)
        trained = rec.model_copy(update={"hashes": [from_hex(h) for h in hashes]})
        entry = self._publish(job_id, trained)
        self._put(job_id, root=entry.tree.root, hashes=list(entry.hashes))
        metric = engine.evaluate(engine.load_state(self.store.get(entry.hashes[-1])))
        self.log.info(
            "job %d: trained %d steps, %s %.3f, root %s",
            job_id,
            rec.total_steps,
            METRIC_LABELS.get(engine.metric_name, engine.metric_name),
            metric,
            to_hex(entry.tree.root),
        )
        return True
