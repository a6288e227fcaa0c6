// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

// Libraries
import {SafeCast} from "@openzeppelin/contracts/utils/math/SafeCast.sol";
import {LibEquivocation} from "./LibEquivocation.sol";
import {LibPayouts} from "./LibPayouts.sol";
import {LibVerdict} from "./LibVerdict.sol";
// Interfaces
import {IAdjudicator} from "../interfaces/IAdjudicator.sol";
import {IJobManager} from "../interfaces/IJobManager.sol";
import {IJobManagerErrors} from "../interfaces/IJobManagerErrors.sol";
// Types
import {Bucket} from "../types/EscrowTypes.sol";
import {JobRecord, JobStatus, Verdict} from "../types/JobTypes.sol";
import {Role} from "../types/Role.sol";
import {RoundOutcome} from "../types/RoundTypes.sol";
import {LibStateHash} from "../types/StateHash.sol";
import {LibSubmission, SubmissionId} from "../types/SubmissionId.sol";
import {
    Seat,
    SeatRelease,
    SeatStatus,
    Settlement,
    Submission,
    fetchesOnly,
    seatedVerifiers,
    segmentAt
} from "../types/SubmissionTypes.sol";

/// @title LibSettlement
/// @notice How the JobManager settles a submission: the round outcome (docs/FORCED_ERRORS.md
///         section 3), finalization, and dispute outcomes (PROTOCOL.md 3.3). Every token moves as a
///         bucket move, a credit or a direct payment at the Escrow: the solver's reward on finalize
///         and a seat's fee (on finalize, expiry and rejection) are paid straight to the wallet
///         (`IEscrow.pay`, a credit only when the token refuses the transfer); refunds, challenge
///         bonds, jackpots, pot shares and arbiter fees stay credits. Stakes are slashed to the
///         Escrow and booked at once; a seat's reject bonds are stake, returned by an unlock and
///         forfeited by a slash.
/// @dev An external library (DELEGATECALL): it runs in the JobManager's context and storage, so the
///      StakeManager, Escrow and ShareRegistry see the JobManager as the caller, events are the
///      JobManager's (`IJobManager` events), and the JobManager's reentrancy guard covers it. It keeps
///      the JobManager under the contract size limit. Linked at deployment (contracts/script/Deploy.sol).
library LibSettlement {
    /// @notice The seats that caught a forced error (rejected the forced claim with the solver's
    ///         true end) and their jackpots, held back to be paid with their fees when the job
    ///         finalizes in the same call (`_settleForced`).
    /// @param mask Bit i set = seat i (assignment order) won: its bond comes back and `jackpots[i]`
    ///        is its jackpot (wei; zero when the pool ran dry, the bond still comes back).
    /// @param total Sum of `jackpots` (wei).
    struct Catches {
        uint256 mask;
        uint256 total;
        uint256[] jackpots;
    }

    ////// External //////

    /// @notice A Claimed job past its commit deadline goes back to Open for another openWindow; its
    ///         solver is slashed into the jackpot pool (abandonment is never refunded to anyone the
    ///         solver may collude with; PROTOCOL.md 3.3, "Abandonment and locked stake").
    function reopen(JobRecord storage job, Settlement memory s, uint256 jobId) external {
        address solver = job.solver;
        job.solver = address(0);
        job.commitDeadline = 0;
        job.openDeadline = SafeCast.toUint32(block.timestamp + s.openWindow);
        job.status = JobStatus.Open;
        // SAFETY: trusted StakeManager; the slashed tokens arrive at the Escrow and join the pool.
        uint256 slashed = LibPayouts.slashInto(s, solver, Role.Solver, Bucket.Jackpot);
        emit IJobManager.JobReclaimed(jobId, solver, slashed);
    }

    /// @notice Slashes and voids the seat of `verifier`, proven by the verification round (the
    ///         only caller) to have signed two seals for `submissionId`, its job's active submission,
    ///         while the job is Verifying (`LibEquivocation.slash`).
    /// @dev Reverts NotVerificationRound, SubmissionNotActive, UnexpectedJobStatus.
    function slashEquivocation(
        mapping(uint256 jobId => JobRecord job) storage jobs,
        mapping(SubmissionId submissionId => Submission submission) storage submissions,
        Settlement memory s,
        SubmissionId submissionId,
        address verifier
    ) external {
        if (msg.sender != address(s.round)) {
            revert IJobManagerErrors.NotVerificationRound(msg.sender);
        }
        uint256 jobId = submissionId.jobIdOf();
        JobRecord storage job = jobs[jobId];
        address solver = submissionId.solverOf();
        if (solver == address(0) || job.solver != solver) revert IJobManagerErrors.SubmissionNotActive(submissionId);
        if (job.status != JobStatus.Verifying) revert IJobManagerErrors.UnexpectedJobStatus(jobId, job.status);
        LibEquivocation.slash(job, submissions[submissionId], s, jobId, verifier);
    }

    /// @notice Some sample has no revealed verdict (RoundOutcome.NoVerdicts: every seat holding it
    ///         stayed silent, docs/SECURITY.md P-27): the silent verifiers are slashed into the pool
    ///         (their fees stay held for the next ones); then the job goes back to Committed with a
    ///         fresh randomness block, keeping the seats that revealed with their verdicts, bonds and
    ///         challenges, at most `maxReassignments` times. The Committed job's assign deadline
    ///         (`commitDeadline` + openWindow, `expireUnassigned`) counts from now. After that the
    ///         submission is marked expiring: the caller adjudicates its disputed samples first
    ///         (a revealed reject is never forgiven, P-34) and then expires it (`expire`).
    /// @return reassigned True if fresh verifiers are to be drawn (the round must be reset).
    /// @return kept Seats kept for the next draw (they revealed).
    function settleUnverified(JobRecord storage job, Submission storage sub, Settlement memory s, uint256 jobId)
        external
        returns (bool reassigned, uint256 kept)
    {
        _settleMissedVerdicts(job, sub, s, jobId, false);
        if (sub.reassignments >= s.maxReassignments) {
            sub.expiring = true;
            return (false, 0);
        }
        uint24 reassignment = ++sub.reassignments;
        uint64 randomnessBlock = uint64(block.number + 1);
        job.randomnessBlock = SafeCast.toUint32(randomnessBlock);
        job.commitDeadline = SafeCast.toUint32(block.timestamp);
        job.status = JobStatus.Committed;
        emit IJobManager.VerifiersReassigning(jobId, reassignment, randomnessBlock);
        address[] memory verifiers = seatedVerifiers(sub, s);
        for (uint256 i; i < sub.seatCount; ++i) {
            if (sub.seats[verifiers[i]].status == SeatStatus.Submitted) ++kept;
        }
        return (true, kept);
    }

    /// @notice Expires an expiring submission whose disputed samples are all adjudicated (or that
    ///         has none), with nobody left at fault: the open bonds are returned (an abstention on a
    ///         sample another seat replayed forfeits, P-33), the seats that revealed are released
    ///         with their fee, the reward and the other fees go back to the submitter and the
    ///         solver, never proven wrong, is unlocked.
    function expire(JobRecord storage job, Submission storage sub, Settlement memory s, uint256 jobId) external {
        job.status = JobStatus.Expired;
        uint256 openMask = sub.disputedMask;
        sub.disputedMask = 0;
        if (openMask != 0) _returnOpenBonds(sub, s, jobId, openMask);
        (SeatRelease memory release, uint256 feesLeft) = _payStanding(sub, s, SeatStatus.Submitted, _noCatches());
        uint256 refund = job.reward + feesLeft;
        emit IJobManager.JobExpired(jobId, refund);
        LibPayouts.credit(s, Bucket.Escrowed, job.submitter, refund);
        LibPayouts.unlock(s, job.solver, Role.Solver);
        LibPayouts.fundStakes(s, release.earned);
        LibPayouts.releaseSeats(sub, s, release.unlocks, release.earnings);
    }

    /// @notice Settles the round outcome of a Verifying submission past its windows: slashes missed
    ///         verdicts (unless NoClaims), faults the solver on NoClaims/NoReveal (the job is
    ///         Rejected) or settles the forced error, finalizing the job at once when that leaves no
    ///         sample disputed (`_settleForced`).
    /// @return closed True if the job was rejected or finalized here (nothing left to finalize or
    ///         dispute).
    function settleRound(
        JobRecord storage job,
        Submission storage sub,
        Settlement memory s,
        uint256 jobId,
        RoundOutcome outcome,
        uint256 forcedSample
    ) external returns (bool closed) {
        if (outcome != RoundOutcome.NoClaims) _settleMissedVerdicts(job, sub, s, jobId, true);
        if (outcome == RoundOutcome.NoClaims || outcome == RoundOutcome.NoReveal) {
            _faultSolver(job, sub, s, jobId, outcome);
            return true;
        }
        if (outcome == RoundOutcome.Forced) closed = _settleForced(job, sub, s, jobId, forcedSample);
    }

    /// @notice No dispute left: pays the solver its reward and the verifiers their fees straight to
    ///         their wallets (`IEscrow.pay`), unlocks their stakes and reports the job to the
    ///         ShareRegistry, which mints its verified compute as ownership shares to the solver if
    ///         the job extends the model's lineage.
    function finalizeJob(JobRecord storage job, Submission storage sub, Settlement memory s, uint256 jobId) external {
        _finalizeJob(job, sub, s, jobId, _noCatches());
    }

    /// @notice Sends the first disputed sample (in sample order) that still has a challenger to
    ///         `adjudicator`, with that sample's next challenger that has not lost a game on it
    ///         (`LibVerdict.nextChallenger`). -> Disputed. Records the dispute's submission in
    ///         `disputeSubmissions`. A disputed sample none of whose challengers is left to play
    ///         leaves the disputed set (`SampleUndisputed`) instead of blocking the job: finalize
    ///         never waits on a challenger that does not exist. An abstention on a sample another
    ///         seat replayed is no challenger: it forfeits its bond to the pool there (P-33).
    /// @dev Reverts AdjudicatorNotSet before the admin sets one.
    /// @return opened False if no disputed sample has a challenger left (the disputed set is then
    ///         empty and the caller finalizes the job).
    function openDispute(
        JobRecord storage job,
        Submission storage sub,
        Settlement memory s,
        mapping(uint256 disputeId => SubmissionId submissionId) storage disputeSubmissions,
        IAdjudicator adjudicator,
        uint256 jobId
    ) external returns (bool opened) {
        if (address(adjudicator) == address(0)) revert IJobManagerErrors.AdjudicatorNotSet();
        uint256 mask = sub.disputedMask;
        uint256 sampleIndex = 0;
        address challenger;
        while (mask != 0) {
            sampleIndex = LibVerdict.firstSet(mask);
            challenger = LibVerdict.nextChallenger(sub, s, sampleIndex);
            if (challenger != address(0)) break;
            mask &= ~(uint256(1) << sampleIndex);
            emit IJobManager.SampleUndisputed(jobId, sampleIndex);
            // Abstainers left on it were passed over: another seat replayed it (P-33).
            LibVerdict.forfeitAbstentions(sub, s, jobId, sampleIndex);
        }
        // SAFETY: `mask` is the stored 64-bit mask with bits cleared.
        // forge-lint: disable-next-line(unsafe-typecast)
        sub.disputedMask = uint64(mask);
        if (mask == 0) return false;
        job.status = JobStatus.Disputed;
        sub.disputePending = true;
        // SAFETY: sampleIndex < samplesPerJob <= 64.
        // forge-lint: disable-next-line(unsafe-typecast)
        sub.disputeSample = uint8(sampleIndex);
        uint256 disputeId = _callAdjudicator(job, sub, s, adjudicator, jobId, sampleIndex, challenger);
        job.disputeId = disputeId;
        disputeSubmissions[disputeId] = LibSubmission.id(jobId, job.solver);
        emit IJobManager.JobDisputed(jobId, disputeId, sampleIndex, segmentAt(sub, sampleIndex));
        opened = true;
    }

    /// @notice Opens the adjudicator's dispute on sample `sampleIndex` against `challenger` and
    ///         records whether its ruling binds only that challenger.
    function _callAdjudicator(
        JobRecord storage job,
        Submission storage sub,
        Settlement memory s,
        IAdjudicator adjudicator,
        uint256 jobId,
        uint256 sampleIndex,
        address challenger
    ) internal returns (uint256 disputeId) {
        // The solver and the submitter never judge their own job. The job's verifiers, whose
        // verdicts ride on the outcome, are only a reserve: the adjudicator takes them only when
        // too few verifiers with nothing at stake are eligible (small networks).
        address[] memory excluded = new address[](2);
        excluded[0] = job.solver;
        excluded[1] = job.submitter;
        bool challengerOnly;
        // SAFETY: the adjudicator is set once by the admin and must not call back from openDispute
        // (IAdjudicator @dev); the id is recorded right after and nonReentrant guards the rest.
        // slither-disable-next-line reentrancy-no-eth,reentrancy-benign
        (disputeId, challengerOnly) =
            adjudicator.openDispute(jobId, segmentAt(sub, sampleIndex), challenger, excluded, seatedVerifiers(sub, s));
        sub.disputeChallenger = challengerOnly ? challenger : address(0);
    }

    /// @notice Applies an adjudicator's outcome on the submission's disputed sample: slashes the
    ///         non-voting arbiters, settles the valid or invalid side and distributes the pot.
    ///         When the dispute was one challenger's own game and the solver won it, only that
    ///         challenger loses (`_settleValid`) and the sample stays disputed while another
    ///         challenger of it has not played: the next `finalize` opens that one's game.
    function settleDispute(
        JobRecord storage job,
        Submission storage sub,
        Settlement memory s,
        uint256 jobId,
        uint256 disputeId,
        bool segmentValid,
        address[] calldata majority,
        address[] calldata nonVoters
    ) external {
        uint256 sampleIndex = sub.disputeSample;
        sub.disputePending = false;
        sub.disputedMask &= ~(uint64(1) << sampleIndex);

        uint256 pot = _slashArbiters(s, jobId, nonVoters);
        address[] memory winners;
        uint256 sidePot;
        if (segmentValid) (sidePot, winners) = _settleValid(job, sub, s, jobId, sampleIndex);
        else (sidePot, winners) = _settleInvalid(job, sub, s, jobId, disputeId, sampleIndex);
        pot += sidePot;
        emit IJobManager.DisputeSettled(jobId, disputeId, segmentValid, pot);
        LibPayouts.distributePot(job, s, jobId, pot, majority, winners);
    }

    ////// Internal: round settlement //////

    /// @notice Slashes assigned verifiers that never revealed into the jackpot pool, never to a party
    ///         of the job (a submitter-solver pair could post a job nobody can replay in time and
    ///         collect the seats' stakes, docs/SECURITY.md P-19); their fee goes back to the
    ///         submitter if `refundFees` (else it stays held for reassigned verifiers).
    function _settleMissedVerdicts(
        JobRecord storage job,
        Submission storage sub,
        Settlement memory s,
        uint256 jobId,
        bool refundFees
    ) internal {
        // `submitted` counts the Submitted seats: all of them revealed, none missed (the happy
        // path reads no seat here).
        if (sub.submitted == sub.seatCount) return;
        address[] memory verifiers = seatedVerifiers(sub, s);
        for (uint256 i; i < sub.seatCount; ++i) {
            address verifier = verifiers[i];
            Seat storage seat = sub.seats[verifier];
            if (seat.status != SeatStatus.Assigned) continue;
            seat.status = SeatStatus.Missed;
            if (refundFees) LibPayouts.refundFee(sub, s, job.submitter, s.verifierFee);
            // SAFETY: trusted StakeManager; the slashed tokens arrive at the Escrow and join the pool.
            uint256 slashed = LibPayouts.slashInto(s, verifier, Role.Verifier, Bucket.Jackpot);
            emit IJobManager.VerdictMissed(jobId, verifier, slashed);
            // It never revealed: its seat's bond is idle.
            LibPayouts.releaseIdleBond(s, seat.rejectMask, verifier);
        }
    }

    /// @notice NoClaims / NoReveal (docs/FORCED_ERRORS.md section 3): returns every bond, slashes the
    ///         solver into the jackpot pool (never to the submitter, who may be the solver's
    ///         accomplice), releases the verifiers still standing with their fee (the job locked
    ///         their stake) and rejects the job. Missed verdicts are settled before.
    function _faultSolver(
        JobRecord storage job,
        Submission storage sub,
        Settlement memory s,
        uint256 jobId,
        RoundOutcome outcome
    ) internal {
        job.status = JobStatus.Rejected;
        uint256 openMask = sub.disputedMask;
        sub.disputedMask = 0;
        if (openMask != 0) _returnOpenBonds(sub, s, jobId, openMask);
        address solver = job.solver;
        // SAFETY: trusted StakeManager; the slashed tokens arrive at the Escrow and join the pool.
        uint256 slashed = LibPayouts.slashInto(s, solver, Role.Solver, Bucket.Jackpot);
        emit IJobManager.SolverFaulted(jobId, solver, outcome, slashed);
        _closeRejected(
            job, sub, s, jobId, 0, outcome == RoundOutcome.NoClaims ? SeatStatus.Assigned : SeatStatus.Submitted
        );
    }

    /// @notice Forced error on sample `f` (docs/FORCED_ERRORS.md section 3). Its approvers approved
    ///         the forced claim without replaying: they are slashed into the jackpot pool, and the
    ///         whistleblowers that challenged them get their bond back plus min(jackpot, pool) each;
    ///         both are closed on `f`. A rejecter whose sealed end is the solver's true end replayed
    ///         the segment and agrees with the commitment: it gets its bond back plus the jackpot, and
    ///         its verdict on `f` becomes an approval of the true end. A rejecter whose end differs
    ///         challenges the true end (`ForcedEndDisputed`): `f` stays disputed, so a rejecter that
    ///         did not replay loses its dispute and a solver that cheated inside the forced segment
    ///         is caught. Otherwise `f` leaves the disputed set.
    ///         When no sample is left disputed, the job finalizes here (as `finalize` would next)
    ///         and each catching seat gets its fee and jackpot in one transfer and its reject bond
    ///         back with its seat's unlock (docs/SECURITY.md, "Gas cuts"); otherwise the catches are
    ///         paid now, each its jackpot, and their bonds unlocked.
    /// @return finalized True if the job was finalized here.
    function _settleForced(JobRecord storage job, Submission storage sub, Settlement memory s, uint256 jobId, uint256 f)
        internal
        returns (bool finalized)
    {
        uint256 slashed = _slashForcedApprovers(job, sub, s, jobId, f);
        (uint256 paid, bool disputed, Catches memory catches) =
            _payForced(sub, s, LibSubmission.id(jobId, job.solver), f);
        uint64 disputedMask = sub.disputedMask;
        if (!disputed) disputedMask &= ~(uint64(1) << f);
        emit IJobManager.ForcedErrorSettled(jobId, f, slashed, paid);
        if (disputedMask == 0) {
            // Nothing to dispute: `finalize` would finalize next (`_closeOrDispute`), so it happens
            // here, with the catches' jackpots taken from the pool now and paid with the fees. The
            // submission's word and the catches' seats are left as they are: the job ends here.
            // SAFETY: trusted Escrow; catches.total <= the pool read by `_payForced`.
            if (catches.total != 0) s.escrow.move(Bucket.Jackpot, Bucket.Escrowed, catches.total);
            _finalizeJob(job, sub, s, jobId, catches);
            return true;
        }
        sub.disputedMask = disputedMask;
        address[] memory verifiers = seatedVerifiers(sub, s);
        for (uint256 i; catches.mask >> i != 0; ++i) {
            if ((catches.mask >> i) & 1 == 1) {
                // The catch's verdict on f becomes an approval of the true end, so the disputes
                // still to come count it with the approvers.
                // SAFETY: f < samplesPerJob <= 64.
                // forge-lint: disable-next-line(unsafe-typecast)
                Seat storage seat = sub.seats[verifiers[i]];
                seat.rejectMask &= ~uint64(uint256(1) << f);
                // SAFETY: trusted Escrow and StakeManager; the jackpot to the wallet, the reject
                // bond unlocked from the seat's stake, unless it was the seat's only non-approval:
                // then it is the seat's idle bond, released with its seat (`LibPayouts.idleBond`).
                LibPayouts.pay(s, Bucket.Jackpot, verifiers[i], catches.jackpots[i]);
                if (seat.rejectMask != 0) LibPayouts.returnSeatBond(s, verifiers[i]);
            }
        }
    }

    /// @notice Slashes the seats that approved forced sample `f` (they approved without replaying)
    ///         into the jackpot pool and closes them on `f`.
    /// @return slashed Total slashed (wei).
    function _slashForcedApprovers(
        JobRecord storage job,
        Submission storage sub,
        Settlement memory s,
        uint256 jobId,
        uint256 f
    ) internal returns (uint256 slashed) {
        address[] memory verifiers = seatedVerifiers(sub, s);
        uint256 count = sub.seatCount;
        for (uint256 i; i < count; ++i) {
            Seat storage seat = sub.seats[verifiers[i]];
            if (seat.status == SeatStatus.Submitted && LibVerdict.verdictAt(seat, f) == Verdict.Approve) {
                seat.status = SeatStatus.Slashed;
                sub.seatClosed[f][verifiers[i]] = true;
                slashed += LibPayouts.slashVerifier(job, sub, s, jobId, verifiers[i], Bucket.Jackpot);
            }
        }
    }

    /// @notice Pays the jackpot of forced sample `f` to the whistleblowers of its approvals (bond back
    ///         plus min(jackpot, pool) each, to their wallets, `IEscrow.payTwo`) and books it for its
    ///         rejecters whose sealed end matches the solver's true end (paid by `_settleForced`).
    /// @return paid Jackpots paid or booked (wei).
    /// @return disputed Whether a rejecter's end differs from the true end.
    /// @return catches The rejecters that caught the forced error and their jackpots.
    function _payForced(Submission storage sub, Settlement memory s, SubmissionId submissionId, uint256 f)
        internal
        returns (uint256 paid, bool disputed, Catches memory catches)
    {
        catches.jackpots = new uint256[](sub.seatCount);
        uint256 pool = s.escrow.jackpotPool();
        // SAFETY: trusted VerificationRound view; read once for every seat.
        bytes5 trueTag = LibStateHash.endTag(f, s.round.forcedEndTagOf(submissionId));
        for (uint256 i; i < catches.jackpots.length; ++i) {
            // cached in `s` after the first read (`seatedVerifiers`)
            address verifier = seatedVerifiers(sub, s)[i];
            (address winner, bool differs) = _forcedWinner(sub, s, submissionId, trueTag, f, verifier);
            if (differs) disputed = true;
            if (winner == address(0)) continue;
            uint256 amount = pool < s.jackpot ? pool : s.jackpot;
            // SAFETY: amount <= pool; paid only adds amounts taken from the pool.
            unchecked {
                pool -= amount;
                paid += amount;
            }
            emit IJobManager.JackpotPaid(submissionId.jobIdOf(), winner, amount);
            // The seat itself only when it caught f: no seat challenges its own approval
            // (`ChallengerConflicted`), so a whistleblower's win is never taken for a catch.
            if (winner == verifier) {
                catches.mask |= uint256(1) << i;
                catches.jackpots[i] = amount;
                catches.total += amount;
            } else {
                // SAFETY: trusted Escrow; one transfer for the bond and the jackpot.
                s.escrow.payTwo(Bucket.Bonds, s.challengeBond, Bucket.Jackpot, amount, winner);
            }
        }
    }

    /// @notice Who wins forced sample `f`'s jackpot through `verifier`'s seat: the seat itself if it
    ///         rejected `f` with the solver's true end (`_settleForced` turns its verdict on `f` into
    ///         an approval when a dispute follows), the
    ///         whistleblower of its approval of `f` if any (closed on `f`), else nobody. A rejecter's
    ///         end matches as in `IVerificationRound.forcedEndMatches`: its seat's tag equals
    ///         `trueTag` (the true end's tag, `LibStateHash.endTag`), read here from the seat's word,
    ///         or else the whole end the round kept, asked of the round.
    /// @return winner The winner, or zero.
    /// @return differs True if the seat abstained on `f` or rejected it with another end
    ///         (`ForcedEndDisputed`: `f` stays disputed).
    function _forcedWinner(
        Submission storage sub,
        Settlement memory s,
        SubmissionId submissionId,
        bytes5 trueTag,
        uint256 f,
        address verifier
    ) internal returns (address winner, bool differs) {
        Seat storage seat = sub.seats[verifier];
        Verdict verdict = LibVerdict.verdictAt(seat, f);
        if (verdict == Verdict.Abstain) {
            // No end to compare: the sample stays disputed against the committed leaf.
            emit IJobManager.ForcedEndDisputed(submissionId.jobIdOf(), f, verifier);
            return (address(0), true);
        }
        if (verdict == Verdict.Reject) {
            // SAFETY: trusted VerificationRound view, asked only when the seat's tag is not the
            // forced sample's true end.
            if (seat.endTag != trueTag && !s.round.forcedEndMatches(submissionId, verifier)) {
                emit IJobManager.ForcedEndDisputed(submissionId.jobIdOf(), f, verifier);
                return (address(0), true);
            }
            // A catch: `_settleForced` turns its verdict on f into an approval unless the job ends
            // there.
            return (verifier, false);
        }
        if (verdict == Verdict.Approve) {
            winner = sub.challengers[f][verifier];
            if (winner != address(0)) sub.challengeClosed[f][winner] = true;
        }
    }

    ////// Internal: dispute settlement //////

    /// @notice Slashes each non-voting arbiter one seat (verifierStake) into the dispute pot.
    /// @return pot Total slashed (wei).
    function _slashArbiters(Settlement memory s, uint256 jobId, address[] calldata nonVoters)
        internal
        returns (uint256 pot)
    {
        for (uint256 i; i < nonVoters.length; ++i) {
            // SAFETY: trusted StakeManager; the slashed tokens arrive at the Escrow and join the pot.
            uint256 slashed = LibPayouts.slashInto(s, nonVoters[i], Role.Verifier, Bucket.Pot);
            emit IJobManager.ArbiterSlashed(jobId, nonVoters[i], slashed);
            pot += slashed;
        }
    }

    /// @notice Valid segment. The losers are the dispute's challenger alone when it lost its own
    ///         game (`sub.disputeChallenger`, by moves or by its clock), else (a committee's ruling)
    ///         every challenger of the sample: a losing rejecter is slashed and loses its bond, a
    ///         losing whistleblower loses its bond on each approval of the sample it challenged. A
    ///         lone loser is closed on the sample in both roles (`sub.seatClosed`, `sub.challengeClosed`) and the sample stays disputed while another
    ///         of its challengers has not played: a lost or abandoned challenge costs only its owner.
    ///         The job stays Disputed until `finalize` moves on.
    /// @return pot Slashes and forfeited bonds (wei).
    /// @return winners The solver and the approvers of the sample.
    function _settleValid(
        JobRecord storage job,
        Submission storage sub,
        Settlement memory s,
        uint256 jobId,
        uint256 sampleIndex
    ) internal returns (uint256 pot, address[] memory winners) {
        address only = sub.disputeChallenger;
        winners = new address[](sub.seatCount + 1);
        uint256 count = 0;
        winners[count++] = job.solver;
        address[] memory verifiers = seatedVerifiers(sub, s);
        for (uint256 i; i < verifiers.length; ++i) {
            address verifier = verifiers[i];
            // Closed parties (earlier losers, a forced claim's approvers) were settled already.
            if (sub.seatClosed[sampleIndex][verifier]) continue;
            Verdict verdict = LibVerdict.verdictAt(sub.seats[verifier], sampleIndex);
            if (verdict == Verdict.Reject && (only == address(0) || verifier == only) && sub.expiring) {
                // The secret was never revealed: the reject may be of the forced claim, which the
                // ruling on the committed leaf does not see (P-34). Its bond back, no slash.
                LibPayouts.returnSeatBond(s, verifier);
                sub.seatClosed[sampleIndex][verifier] = true;
            } else if (verdict == Verdict.Reject && (only == address(0) || verifier == only)) {
                pot += LibPayouts.forfeitSeatBond(s, jobId, verifier);
                // A verifier already slashed on an earlier segment loses only the bond.
                if (sub.seats[verifier].status == SeatStatus.Submitted) {
                    sub.seats[verifier].status = SeatStatus.Slashed;
                    pot += LibPayouts.slashVerifier(job, sub, s, jobId, verifier, Bucket.Pot);
                }
            } else if (verdict == Verdict.Abstain && (only == address(0) || verifier == only)) {
                // The solver showed its data to the judges: the abstention forfeits its bond to the
                // pool (P-33), never to the solver or an approver (P-19); it is not slashed (P-20).
                sub.seatClosed[sampleIndex][verifier] = true;
                LibVerdict.forfeitAbstention(s, jobId, sampleIndex, verifier);
            } else if (verdict == Verdict.Approve) {
                winners[count++] = verifier;
                address challenger = sub.challengers[sampleIndex][verifier];
                if (
                    challenger != address(0) && !sub.challengeClosed[sampleIndex][challenger]
                        && (only == address(0) || challenger == only)
                ) {
                    // Expiring: the approval may be of the undisclosed forced claim (P-34).
                    if (sub.expiring) LibPayouts.returnBond(s, challenger);
                    else pot += LibPayouts.forfeitBond(s, jobId, challenger);
                }
            }
        }
        winners = LibVerdict.truncate(winners, count);
        if (only != address(0)) {
            // The game refuted the one claim both of the loser's roles make: close both.
            sub.seatClosed[sampleIndex][only] = true;
            sub.challengeClosed[sampleIndex][only] = true;
            if (LibVerdict.nextChallenger(sub, s, sampleIndex) != address(0)) {
                sub.disputedMask |= uint64(1) << sampleIndex;
            }
        }
    }

    /// @notice Invalid segment: the solver and the approvers of the sample are slashed, every bond
    ///         is returned, surviving verifiers are paid, the submitter is refunded -> Rejected.
    /// @return pot Slashes (wei); no bond is forfeited on this side.
    /// @return winners Rejecters of the sample and challengers of its approvals (one entry per bond).
    function _settleInvalid(
        JobRecord storage job,
        Submission storage sub,
        Settlement memory s,
        uint256 jobId,
        uint256 disputeId,
        uint256 sampleIndex
    ) internal returns (uint256 pot, address[] memory winners) {
        job.status = JobStatus.Rejected;
        // SAFETY: trusted StakeManager; the slashed tokens arrive at the Escrow and join the pot.
        pot = LibPayouts.slashInto(s, job.solver, Role.Solver, Bucket.Pot);
        emit IJobManager.SolverSlashed(jobId, job.solver, pot);
        uint256 verifierPot;
        (verifierPot, winners) = _judgeInvalidSample(job, sub, s, jobId, sampleIndex);
        pot += verifierPot;

        // Bonds on segments that were never adjudicated go back to whoever posted them.
        uint256 openMask = sub.disputedMask;
        sub.disputedMask = 0;
        if (openMask != 0) _returnOpenBonds(sub, s, jobId, openMask);
        _closeRejected(job, sub, s, jobId, disputeId, SeatStatus.Submitted);
    }

    /// @notice Slashes the approvers of an invalid sample (not a seat that only fetched its end,
    ///         P-39) and returns the bonds posted against it.
    /// @return pot Slashes (wei).
    /// @return winners Rejecters of the sample and challengers of its approvals.
    function _judgeInvalidSample(
        JobRecord storage job,
        Submission storage sub,
        Settlement memory s,
        uint256 jobId,
        uint256 sampleIndex
    ) internal returns (uint256 pot, address[] memory winners) {
        address[] memory verifiers = seatedVerifiers(sub, s);
        winners = new address[](2 * sub.seatCount);
        uint256 count = 0;
        for (uint256 i; i < sub.seatCount; ++i) {
            address verifier = verifiers[i];
            Seat storage seat = sub.seats[verifier];
            Verdict verdict = LibVerdict.verdictAt(seat, sampleIndex);
            // A challenger that lost its own game on this sample already forfeited its bond.
            if (verdict == Verdict.Reject) {
                if (sub.seatClosed[sampleIndex][verifier]) continue;
                winners[count++] = verifier;
                LibPayouts.returnSeatBond(s, verifier);
            } else if (verdict == Verdict.Abstain) {
                // It flagged the sample but checked nothing: no share of the pot; its bond back
                // unless another seat replayed the sample (the data was there, P-33).
                if (!sub.seatClosed[sampleIndex][verifier]) {
                    LibVerdict.settleAbstention(sub, s, jobId, sampleIndex, verifier);
                }
            } else if (verdict == Verdict.Approve) {
                address challenger = sub.challengers[sampleIndex][verifier];
                if (challenger != address(0) && !sub.challengeClosed[sampleIndex][challenger]) {
                    winners[count++] = challenger;
                    LibPayouts.returnBond(s, challenger);
                }
                // A seat that only fetched the final state vouched for its availability, not for
                // the segment (P-39): its approval is not slashed.
                if (seat.status == SeatStatus.Submitted && !fetchesOnly(sub, seat, sampleIndex)) {
                    seat.status = SeatStatus.Slashed;
                    pot += LibPayouts.slashVerifier(job, sub, s, jobId, verifier, Bucket.Pot);
                }
            }
        }
        winners = LibVerdict.truncate(winners, count);
    }

    /// @notice Releases the verifiers still standing (seat status `standing`: Submitted ones, or
    ///         Assigned ones when the solver posted no claims) with their fee, and refunds the
    ///         reward and remaining fees to the submitter.
    function _closeRejected(
        JobRecord storage job,
        Submission storage sub,
        Settlement memory s,
        uint256 jobId,
        uint256 disputeId,
        SeatStatus standing
    ) internal {
        (SeatRelease memory release, uint256 feesLeft) = _payStanding(sub, s, standing, _noCatches());
        uint256 refund = job.reward + feesLeft;
        emit IJobManager.JobRejected(jobId, disputeId, refund);
        LibPayouts.credit(s, Bucket.Escrowed, job.submitter, refund);
        LibPayouts.fundStakes(s, release.earned);
        LibPayouts.releaseSeats(sub, s, release.unlocks, release.earnings);
    }

    /// @notice No catches: every fee paid alone (`_payStanding` outside a forced error's settlement).
    function _noCatches() internal pure returns (Catches memory catches) {
        // All zero: no mask bit, no jackpot, an empty list (never indexed without a mask bit).
    }

    /// @notice Marks the job Finalized, pays the solver its reward and the verifiers their fees
    ///         (a catching seat its fee and jackpot in one transfer, `catches`) straight to their
    ///         wallets, unlocks their stakes (a catch's reject bond with it) and reports the job to
    ///         the ShareRegistry.
    function _finalizeJob(
        JobRecord storage job,
        Submission storage sub,
        Settlement memory s,
        uint256 jobId,
        Catches memory catches
    ) internal {
        job.status = JobStatus.Finalized;
        (SeatRelease memory release, uint256 feesLeft) = _payStanding(sub, s, SeatStatus.Submitted, catches);
        // INVARIANT: every fee is restaked for its seat by now, or returns to the submitter here
        // (an abstainer's, an unfilled seat's).
        LibPayouts.credit(s, Bucket.Escrowed, job.submitter, feesLeft);
        address solver = job.solver;
        uint256 reward = job.reward;
        emit IJobManager.JobFinalized(jobId, solver, reward, job.totalSteps);

        // Interactions with trusted protocol contracts, after all state changes: the reward and
        // the seats' earnings in one transfer to the StakeManager, then restaked with the unlocks.
        LibPayouts.fundStakes(s, reward + release.earned);
        LibPayouts.releaseSolver(s, solver, reward);
        LibPayouts.releaseSeats(sub, s, release.unlocks, release.earnings);
        // Shares only for a job that extends the model's lineage (P-18, P-26); the amount minted is
        // announced by the registry's own events, nothing here depends on it.
        // slither-disable-next-line unused-return
        s.shareRegistry.recordFinalized(job.modelIndex, jobId, job.kind, job.totalSteps);
    }

    /// @notice At a job's end (Finalized, Rejected or Expired): what each seat of status `standing`
    ///         gets, its stake back and its fee restaked (`LibPayouts.releaseSeats`), an abstaining
    ///         seat's fee staying with the fees left for the submitter (P-20). A seat in `catches` (a
    ///         forced error's catcher, only when the job finalizes in its settlement) earns its fee
    ///         and its jackpot (already moved into `Bucket.Escrowed`), and its reject bond comes
    ///         back with its seat's unlock.
    /// @dev Writes no seat and not the submission's word: the job's terminal status ends every path
    ///      that reads them, so a seat keeps the status and verdicts it revealed and `feesHeld` its
    ///      last value (docs/SECURITY.md, "Gas cuts": 2,900 gas per seat and 2,900 for the word).
    /// @return release Per seat (assignment order): the stake to unlock (verifierStake, plus a
    ///         catch's bond) and the earnings to restake, 0 and 0 for a seat not standing, and
    ///         their total (wei): the caller funds and releases them after the other state changes.
    /// @return feesLeft The submission's held fees not earned by a seat here (wei): the caller
    ///         returns them to the submitter.
    function _payStanding(Submission storage sub, Settlement memory s, SeatStatus standing, Catches memory catches)
        internal
        view
        returns (SeatRelease memory release, uint256 feesLeft)
    {
        address[] memory verifiers = seatedVerifiers(sub, s);
        uint256 count = sub.seatCount;
        release.unlocks = new uint256[](count);
        release.earnings = new uint256[](count);
        feesLeft = sub.feesHeld;
        for (uint256 i; i < count; ++i) {
            Seat storage seat = sub.seats[verifiers[i]];
            if (seat.status != standing) continue;
            // Its stake, with its seat's bond if no non-approval of its own took it.
            uint256 unlock = s.verifierStake + LibPayouts.idleBond(s, seat.rejectMask);
            // An abstainer's fee goes back to the submitter (P-20); a catch stands anyway.
            uint256 fee = seat.abstainMask == 0 ? s.verifierFee : 0;
            // SAFETY: feesHeld holds one verifierFee per seat not yet paid or refunded.
            feesLeft -= fee;
            if ((catches.mask >> i) & 1 == 1) {
                // The jackpot was moved into Bucket.Escrowed by `_settleForced`; the reject bond
                // was locked from the seat's stake: it rides on the seat's unlock.
                fee += catches.jackpots[i];
                unlock += s.challengeBond;
            }
            (release.unlocks[i], release.earnings[i]) = (unlock, fee);
            release.earned += fee;
        }
    }

    /// @notice Returns the reject and challenge bonds of every sample in `mask` (an abstention's only
    ///         while no seat replayed its sample, P-33).
    function _returnOpenBonds(Submission storage sub, Settlement memory s, uint256 jobId, uint256 mask) internal {
        address[] memory verifiers = seatedVerifiers(sub, s);
        uint256 samples = sub.sampleCount;
        for (uint256 t; t < samples; ++t) {
            if (mask & (uint256(1) << t) == 0) continue;
            for (uint256 i; i < sub.seatCount; ++i) {
                address verifier = verifiers[i];
                Verdict verdict = LibVerdict.verdictAt(sub.seats[verifier], t);
                if (sub.seatClosed[t][verifier]) {
                    // Settled on this sample already.
                } else if (verdict == Verdict.Reject) {
                    LibPayouts.returnSeatBond(s, verifier);
                } else if (verdict == Verdict.Abstain) {
                    LibVerdict.settleAbstention(sub, s, jobId, t, verifier);
                } else if (verdict == Verdict.Approve) {
                    address challenger = sub.challengers[t][verifier];
                    if (challenger != address(0) && !sub.challengeClosed[t][challenger]) {
                        LibPayouts.returnBond(s, challenger);
                    }
                }
            }
        }
    }
}
