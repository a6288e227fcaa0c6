// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

// Testing
import {Vm} from "@prb/test/Vm.sol";
import {Merkle} from "../../utils/Merkle.sol";
import {VmExt} from "../../utils/VmExt.sol";
import {ProtocolHandlerSigned} from "./ProtocolHandlerSigned.sol";
// Contracts
import {ArbitrationCommittee} from "../../../src/ArbitrationCommittee.sol";
import {Escrow} from "../../../src/Escrow.sol";
import {JobManager} from "../../../src/JobManager.sol";
import {ShareRegistry} from "../../../src/ShareRegistry.sol";
import {StakeManager} from "../../../src/StakeManager.sol";
import {VeriToken} from "../../../src/VeriToken.sol";
import {VerificationRound} from "../../../src/VerificationRound.sol";
// Types
import {Dispute, DisputePhase} from "../../../src/types/DisputeTypes.sol";
import {Job, JobStatus, Verdict} from "../../../src/types/JobTypes.sol";
import {Role} from "../../../src/types/Role.sol";
import {Claims, RoundOutcome} from "../../../src/types/RoundTypes.sol";
import {SubmissionId} from "../../../src/types/SubmissionId.sol";

/// @title ProtocolHandler
/// @notice Drives the whole protocol with bounded random actions from a fixed cast of actors, and
///         tracks ghost variables for the protocol invariants.
/// @dev Each action picks a job/dispute/actor from its seeds and does the next sensible step for
///      it, returning early (not reverting) when there is nothing to do. Slashes are checked
///      against the reason expected before the call (@custom:property-id P2), and forced errors
///      against their settlement (@custom:property-id P5). Solvers commit real checkpoint trees,
///      post their claims (forced claims included) and usually reveal their secret; verifiers seal
///      and reveal verdicts through the VerificationRound, one seat at a time, in signed batches or
///      in one signed call, and seats are proven to have signed two seals (`ProtocolHandlerSigned`).
contract ProtocolHandler is ProtocolHandlerSigned {
    /// @notice A `commitVerdictsFor` being built (`_sealBatch`): its seats, their commitments and
    ///         signatures, each seat's seal before it (zero if none), how many, and whether a fresh
    ///         or a stale seal is in.
    struct SealBatch {
        address[] seats;
        bytes32[] commitments;
        bytes[] signatures;
        bytes32[] before;
        uint256 count;
        bool fresh;
        bool stale;
    }

    /// @notice What a finalize may slash and must pay, read just before it (`_expected`).
    struct Expected {
        RoundOutcome outcome;
        uint256 f;
        address[] assigned;
        bool solverSlashable;
        bool[] seatSlashable;
        uint256[] ownedBefore;
        Verdict[] verdictsBefore;
        uint256 poolBefore;
        address[] winners;
    }

    ////// Constructor //////

    constructor(
        VeriToken token_,
        StakeManager stakeManager_,
        JobManager jobManager_,
        VerificationRound round_,
        ArbitrationCommittee committee_
    ) {
        token = token_;
        round = round_;
        stakeManager = stakeManager_;
        jobManager = jobManager_;
        escrow = Escrow(address(jobManager_.escrow()));
        committee = committee_;
        for (uint256 i; i < 2; ++i) {
            submitters.push(_newActor(string.concat("submitter", vm.toString(i))));
            solvers.push(_newActor(string.concat("solver", vm.toString(i))));
            _stakeAs(solvers[i], Role.Solver, 300e18);
        }
        _authorizeSubmitters();
        for (uint256 i; i < 7; ++i) {
            verifiers.push(_newActor(string.concat("verifier", vm.toString(i))));
            _stakeAs(verifiers[i], Role.Verifier, 200e18);
        }
        (silentSeat, griefer) = (verifiers[5], verifiers[6]);
        whistleblowers.push(_newActor("whistleblower"));
        _stakeAs(whistleblowers[0], Role.Whistleblower, 50e18);
        secondKey = _newActor("second key");
        // Two verifiers also hold the whistleblower role: they challenge other verifiers'
        // approvals on the jobs they verify (P-22, P-23).
        _stakeAs(verifiers[0], Role.Whistleblower, 50e18);
        _stakeAs(verifiers[1], Role.Whistleblower, 50e18);
        // Both submitters (one of them the model's owner when this handler registers it) also
        // solve: they claim and settle jobs they posted themselves, so every invariant also holds
        // for a key that is submitter and solver, or owner, poster and solver, of one job.
        for (uint256 i; i < 2; ++i) {
            _stakeAs(submitters[i], Role.Solver, 300e18);
            solvers.push(submitters[i]);
        }
    }

    /// @notice Registers MODEL_ID (or, if the test setup already did, acts as its owner) and
    ///         authorises every submitter to post under it.
    function _authorizeSubmitters() internal {
        ShareRegistry registry = ShareRegistry(address(jobManager.shareRegistry()));
        address owner = registry.modelOwner(MODEL_ID);
        if (owner == address(0)) {
            owner = submitters[0];
            vm.prank(owner);
            registry.registerModel(MODEL_ID, keccak256("architecture"), keccak256("family"), 1, INIT_HASH);
        }
        for (uint256 i; i < submitters.length; ++i) {
            if (submitters[i] == owner || registry.isPoster(MODEL_ID, submitters[i])) continue;
            vm.prank(owner);
            registry.authorizePoster(MODEL_ID, submitters[i]);
        }
    }

    ////// Actions //////

    function postJob(uint256 actorSeed, uint256 shapeSeed, uint256 reward) external {
        _postJob(actorSeed, shapeSeed, reward);
    }

    function _postJob(uint256 actorSeed, uint256 shapeSeed, uint256 reward) internal {
        if (_liveJobs() >= 3) return;
        address submitter = submitters[actorSeed % submitters.length];
        uint32 interval = uint32(bound(shapeSeed, 1, 5));
        uint32 totalSteps = interval * uint32(bound(shapeSeed >> 8, 1, 12));
        reward = bound(reward, 0, 1000e18);
        // A spec of its own per post: the same training is posted once (P-26).
        bytes32 specHash = keccak256(abi.encode("spec", jobManager.jobCount()));
        vm.prank(submitter);
        jobManager.postJob(MODEL_ID, specHash, INIT_HASH, totalSteps, interval, reward, "data:,");
        ++ghost_calls["postJob"];
    }

    function cancelJob(uint256 jobSeed) external {
        _cancelJob(jobSeed);
    }

    function _cancelJob(uint256 jobSeed) internal {
        (uint256 jobId, Job memory job) = _pick(jobSeed);
        if (job.status != JobStatus.Open) return;
        vm.prank(job.submitter);
        jobManager.cancelJob(jobId);
        ++ghost_calls["cancelJob"];
    }

    function claimAndCommit(uint256 jobSeed, uint256 actorSeed, bool commit) external {
        _claimAndCommit(jobSeed, actorSeed, commit);
    }

    function _claimAndCommit(uint256 jobSeed, uint256 actorSeed, bool commit) internal {
        (uint256 jobId, Job memory job) = _pick(jobSeed);
        if (job.status == JobStatus.Open) {
            address solver = solvers[actorSeed % solvers.length];
            if (stakeManager.freeStake(solver, Role.Solver) < jobManager.params().solverStake) return;
            vm.prank(solver);
            jobManager.claimJob(jobId);
            ++ghost_calls["claimJob"];
            if (solver == job.submitter) ++ghost_selfDealtClaims;
        } else if (job.status == JobStatus.Claimed && commit && block.timestamp <= job.commitDeadline) {
            bytes32[] storage states = _states[jobId];
            for (uint256 i; i <= job.totalSteps / job.checkpointInterval; ++i) {
                states.push(i == 0 ? job.root : keccak256(abi.encode("state", jobId, i)));
            }
            bytes32[] memory leaves = Merkle.leaves(job.checkpointInterval, states);
            bytes32 root = Merkle.root(leaves);
            bytes32[] memory initProof = Merkle.proof(leaves, 0);
            bytes32 commitment = keccak256(abi.encode(jobId, job.solver, _secret(jobId)));
            vm.prank(job.solver);
            jobManager.commitCheckpoints(jobId, root, initProof, "http://solver", commitment);
            ++ghost_calls["commitCheckpoints"];
        }
    }

    function reclaimExpired(uint256 jobSeed) external {
        _reclaimExpired(jobSeed);
    }

    function _reclaimExpired(uint256 jobSeed) internal {
        (uint256 jobId, Job memory job) = _pick(jobSeed);
        if (job.status != JobStatus.Claimed) return;
        if (block.timestamp <= job.commitDeadline) vm.warp(job.commitDeadline + 1);
        _allow(job.solver, Role.Solver);
        vm.recordLogs();
        jobManager.reclaimExpired(jobId);
        _checkSlashes();
        ++ghost_calls["reclaimExpired"];
    }

    function assignVerifiers(uint256 jobSeed) external {
        _assignVerifiers(jobSeed);
    }

    function _assignVerifiers(uint256 jobSeed) internal {
        (uint256 jobId, Job memory job) = _pick(jobSeed);
        if (job.status != JobStatus.Committed) return;
        if (block.number <= job.randomnessBlock) vm.roll(job.randomnessBlock + 1);
        jobManager.assignVerifiers(jobId);
        ++ghost_calls["assignVerifiers"];
        // The solver posts its claims at once, except in one job in ten (outcome NoClaims) outside
        // `settle`, which must reach a forced-error settlement and so never withholds them.
        bool withhold = !_settling && _roll(jobSeed, "claims") % 10 == 0;
        // A reassignment (every verifier stayed silent) keeps the claims already posted.
        (bytes32[] memory posted,) = _claimsOf(_sid(jobId));
        if (jobManager.getJob(jobId).status == JobStatus.Verifying && !withhold && posted.length == 0) {
            _postClaims(jobId);
        }
    }

    /// @notice The job's solver posts its claims: committed states, with the forced claim if drawn.
    function _postClaims(uint256 jobId) internal {
        (, uint32[] memory segments) = jobManager.getAssignment(jobId);
        bytes32[] storage states = _states[jobId];
        bytes32[] memory starts = new bytes32[](segments.length);
        bytes32[] memory ends = new bytes32[](segments.length);
        for (uint256 j; j < segments.length; ++j) {
            starts[j] = states[segments[j]];
            ends[j] = states[segments[j] + 1];
        }
        (bool forced, uint256 f) = round.drawForcedError(_sid(jobId), _secret(jobId));
        if (forced) ends[f] = round.forcedClaim(ends[f]);
        vm.prank(jobManager.getJob(jobId).solver);
        round.postClaims(_sid(jobId), starts, ends);
        _bookClaims(round, _sid(jobId), starts, ends);
        ++ghost_calls["postClaims"];
    }

    function submitVerdicts(uint256 jobSeed, uint256 verifierSeed, uint256 rejectMask) external {
        _submitVerdicts(jobSeed, verifierSeed, rejectMask);
    }

    /// @notice Seals a verifier's verdicts before the verdict deadline, or reveals a sealed one
    ///         while the reveal window is open.
    function _submitVerdicts(uint256 jobSeed, uint256 verifierSeed, uint256 rejectMask) internal {
        (uint256 jobId, Job memory job) = _pick(jobSeed);
        if (job.status != JobStatus.Verifying) return;
        (address[] memory assigned, uint32[] memory segments) = jobManager.getAssignment(jobId);
        address verifier = assigned[verifierSeed % assigned.length];
        // The silent seat never seals: its job is reassigned, then expires (P-34).
        if (verifier == silentSeat) return;
        (bytes32 commitment, bool revealed) = round.verdictCommitmentOf(_sid(jobId), verifier);
        if (revealed) return;
        if (commitment == bytes32(0)) {
            (bytes32[] memory starts,) = _claimsOf(_sid(jobId));
            if (block.timestamp > job.verdictDeadline || starts.length == 0) return;
            bytes32 hash = _sealOf(jobId, verifier, segments, rejectMask);
            vm.prank(verifier);
            round.commitVerdicts(_sid(jobId), hash);
            ++ghost_calls["commitVerdicts"];
        } else {
            if (!_inRevealWindow(_sid(jobId), assigned.length)) return;
            _reveal(jobId, verifier, segments);
            ++ghost_calls["revealVerdicts"];
        }
    }

    /// @notice Whether verdicts of `sid` can be revealed now: warps to the window's opening while a
    ///         seat of `seats` has not sealed (it opens at once when all have), false once closed.
    function _inRevealWindow(SubmissionId sid, uint256 seats) internal returns (bool) {
        (uint64 opens, uint64 closes,,) = jobManager.windowsOf(sid);
        (,, uint32 committed,) = round.roundOf(sid);
        if (committed < seats && block.timestamp < opens) vm.warp(opens);
        return block.timestamp <= closes;
    }

    /// @notice Verdicts handed to an aggregator (docs/SECURITY.md P-37): while seats may seal, the
    ///         job's solver sends one `commitVerdictsFor` with every unsealed seat's seal under the
    ///         seat's EIP-712 signature, plus one seat that sealed already (skipped, not refused);
    ///         once the reveal window is open, a stranger (the whistleblower) sends one
    ///         `revealVerdictsFor` for every sealed seat, one that revealed already included. Neither
    ///         sender's tokens nor credit may move, and every seat ends as it signed (P10).
    function batchVerdicts(uint256 jobSeed, uint256 maskSeed) external {
        _batchVerdicts(jobSeed, maskSeed);
    }

    function _batchVerdicts(uint256 jobSeed, uint256 maskSeed) internal {
        (uint256 jobId, Job memory job) = _pick(jobSeed);
        if (job.status != JobStatus.Verifying) return;
        (bytes32[] memory starts,) = _claimsOf(_sid(jobId));
        if (starts.length == 0) return;
        if (block.timestamp <= job.verdictDeadline && _sealBatch(jobId, job.solver, maskSeed)) return;
        _revealBatch(jobId, maskSeed);
    }

    /// @notice `sender` submits the seals of every seat of `jobId` that has not sealed (the silent
    ///         seat aside), each signed by the seat, and one seat's stale seal; false when no seat
    ///         was left to seal.
    function _sealBatch(uint256 jobId, address sender, uint256 maskSeed) internal returns (bool sent) {
        SubmissionId sid = _sid(jobId);
        (address[] memory assigned,) = jobManager.getAssignment(jobId);
        SealBatch memory b = SealBatch({
            seats: new address[](assigned.length),
            commitments: new bytes32[](assigned.length),
            signatures: new bytes[](assigned.length),
            before: new bytes32[](assigned.length),
            count: 0,
            fresh: false,
            stale: false
        });
        for (uint256 i; i < assigned.length; ++i) {
            _addSeal(jobId, assigned[i], maskSeed, b);
        }
        if (!b.fresh) return false;
        (address[] memory seats, bytes32[] memory commitments, bytes[] memory signatures) =
            (b.seats, b.commitments, b.signatures);
        uint256 count = b.count;
        assembly ("memory-safe") {
            mstore(seats, count)
            mstore(commitments, count)
            mstore(signatures, count)
        }
        (uint256 balance, uint256 credit) = (token.balanceOf(sender), escrow.creditOf(sender));
        vm.prank(sender);
        round.commitVerdictsFor(sid, seats, commitments, signatures);
        if (token.balanceOf(sender) != balance || escrow.creditOf(sender) != credit) ++ghost_batchSenderCharged;
        for (uint256 i; i < count; ++i) {
            (bytes32 sealed_,) = round.verdictCommitmentOf(sid, seats[i]);
            if (sealed_ != (b.before[i] == bytes32(0) ? commitments[i] : b.before[i])) ++ghost_batchSeatMisrecorded;
        }
        ++ghost_calls["commitVerdictsFor"];
        return true;
    }

    /// @notice Adds `seat`'s signed seal to `b`: a fresh one (`_sealOf`) where it has not sealed, a
    ///         stale one for the first seat that has; the silent seat never.
    function _addSeal(uint256 jobId, address seat, uint256 maskSeed, SealBatch memory b) internal {
        SubmissionId sid = _sid(jobId);
        (bytes32 sealed_, bool revealed) = round.verdictCommitmentOf(sid, seat);
        // A seat revealed in one shot (P13) stored no seal, and can seal no more.
        if (seat == silentSeat || (sealed_ == bytes32(0) && revealed) || (sealed_ != bytes32(0) && b.stale)) return;
        bytes32 commitment = keccak256(abi.encode("stale seal", jobId, seat));
        if (sealed_ == bytes32(0)) {
            (, uint32[] memory segments) = jobManager.getAssignment(jobId);
            commitment = _sealOf(jobId, seat, segments, uint256(keccak256(abi.encode(maskSeed, seat))));
            b.fresh = true;
        } else {
            b.stale = true;
        }
        (uint8 v, bytes32 r, bytes32 s) = vm.sign(_keyOf[seat], round.sealDigest(sid, commitment));
        (b.seats[b.count], b.commitments[b.count], b.before[b.count]) = (seat, commitment, sealed_);
        b.signatures[b.count++] = abi.encodePacked(r, s, v);
    }

    /// @notice The whistleblower submits the reveals of every sealed seat of `jobId` (one that
    ///         revealed already included, and skipped) once the reveal window is open. In one batch
    ///         in three a rejecting seat first loses its free verifier stake (P-38,
    ///         `_hideFreeStake`): it is skipped, the others are recorded, and it gets it back after.
    function _revealBatch(uint256 jobId, uint256 seed) internal {
        SubmissionId sid = _sid(jobId);
        (address[] memory assigned, uint32[] memory segments) = jobManager.getAssignment(jobId);
        if (!_inRevealWindow(sid, assigned.length)) return;
        (address[] memory seats, uint256 count) = _toReveal(sid, assigned);
        if (count == 0) return;
        bytes32[][] memory ends = new bytes32[][](count);
        bytes32[] memory salts = new bytes32[](count);
        for (uint256 i; i < count; ++i) {
            ends[i] = _ends(jobId, segments, _sealed[jobId][seats[i]]);
            salts[i] = _verdictSalt(jobId, seats[i]);
            _coverBonds(seats[i], segments.length);
        }
        _sendRevealBatch(jobId, seats, ends, salts, _roll(seed, "uncovered") % 3 == 0);
    }

    /// @notice Sends one `revealVerdictsFor` from the whistleblower and checks P10; with `revoke`,
    ///         a rejecting seat of the batch first loses its free verifier stake (P-38).
    function _sendRevealBatch(
        uint256 jobId,
        address[] memory seats,
        bytes32[][] memory ends,
        bytes32[] memory salts,
        bool revoke
    ) internal {
        SubmissionId sid = _sid(jobId);
        address uncovered = revoke ? _rejectingSeat(jobId, seats, ends) : address(0);
        uint256 hidden = uncovered != address(0) ? _hideFreeStake(uncovered) : 0;
        address sender = whistleblowers[0];
        (uint256 balance, uint256 credit) = (token.balanceOf(sender), escrow.creditOf(sender));
        Claims memory claims = _claimsArg(sid);
        vm.prank(sender);
        round.revealVerdictsFor(sid, seats, ends, salts, claims);
        if (token.balanceOf(sender) != balance || escrow.creditOf(sender) != credit) ++ghost_batchSenderCharged;
        for (uint256 i; i < seats.length; ++i) {
            if (_revealed(jobId, seats[i]) == (seats[i] == uncovered)) ++ghost_batchSeatMisrecorded;
        }
        if (uncovered != address(0)) {
            _restoreFreeStake(uncovered, hidden);
            ++ghost_calls["revealVerdictsFor skipped"];
        }
        ++ghost_calls["revealVerdictsFor"];
    }

    /// @notice `verifier` reveals the verdicts it sealed, passing back the posted claims.
    function _reveal(uint256 jobId, address verifier, uint32[] memory segments) internal {
        bytes32[] memory ends = _ends(jobId, segments, _sealed[jobId][verifier]);
        Claims memory claims = _claimsArg(_sid(jobId));
        bytes32 salt = _verdictSalt(jobId, verifier);
        _coverBonds(verifier, segments.length);
        vm.prank(verifier);
        round.revealVerdicts(_sid(jobId), ends, salt, claims);
    }

    function challengeApproval(uint256 jobSeed, uint256 sampleSeed, uint256 verifierSeed) external {
        _challengeApproval(jobSeed, sampleSeed, verifierSeed);
    }

    function _challengeApproval(uint256 jobSeed, uint256 sampleSeed, uint256 verifierSeed) internal {
        (uint256 jobId, Job memory job) = _pick(jobSeed);
        if (job.status != JobStatus.Verifying || block.timestamp > job.challengeDeadline) return;
        (address[] memory assigned, uint32[] memory segments) = jobManager.getAssignment(jobId);
        address verifier = assigned[verifierSeed % assigned.length];
        uint256 sampleIndex = sampleSeed % segments.length;
        if (jobManager.verdictOf(jobId, verifier)[sampleIndex] != Verdict.Approve) return;
        if (jobManager.challengerOf(jobId, sampleIndex, verifier) != address(0)) return;
        // Half the challenges come from a double-role verifier of the pool (one of the job's own
        // verifiers when drawn), the rest from the plain whistleblower.
        address challenger = whistleblowers[0];
        address other = verifiers[(verifierSeed >> 136) % 2];
        if ((verifierSeed >> 128) & 1 == 1 && other != verifier) challenger = other;
        vm.prank(challenger);
        jobManager.challengeApproval(jobId, sampleIndex, verifier);
        _challengedOn[jobId][challenger] = true;
        if (challenger != whistleblowers[0]) ++ghost_doubleRoleChallenges;
        ++ghost_calls["challengeApproval"];
    }

    function finalize(uint256 jobSeed) external {
        _finalize(jobSeed);
    }

    function _finalize(uint256 jobSeed) internal {
        (uint256 jobId, Job memory job) = _pick(jobSeed);
        if (job.status == JobStatus.Verifying) {
            if (block.timestamp <= job.challengeDeadline) vm.warp(job.challengeDeadline + 1);
            _waitForUncovered(jobId);
            job = jobManager.getJob(jobId);
            // The solver reveals its secret, except in one job in eight (outcome NoReveal).
            (bytes32[] memory starts,) = _claimsOf(_sid(jobId));
            (, bool revealed,,) = round.roundOf(_sid(jobId));
            // Past its window the secret can no longer be revealed (outcome NoReveal).
            bool open = block.timestamp <= uint256(job.challengeDeadline) + _revealWindow();
            // With a sample no revealed verdict covers the secret stays hidden (outcome NoVerdicts:
            // verifiers are drawn again for the uncovered samples, P-27).
            if (starts.length != 0 && !revealed && open && _covered(jobId)) {
                // Never skipped inside `settle` (a NoReveal job cannot settle a forced error).
                if (!_settling && _roll(jobSeed, "reveal") % 8 == 0) {
                    vm.warp(uint256(job.challengeDeadline) + _revealWindow() + 1);
                } else if (_roll(jobSeed, "reveal and finalize") % 2 == 0) {
                    // Half the reveals come with the finalize, in one call (the solver node's way).
                    return _finalizeVerifying(jobId, job, true);
                } else {
                    _revealSecret(jobId, job, false);
                }
            }
            return _finalizeVerifying(jobId, job, false);
        } else if (job.status != JobStatus.Disputed) {
            return;
        } else if (committee.phaseOf(job.disputeId) != DisputePhase.Resolved) {
            return;
        }
        vm.recordLogs();
        jobManager.finalize(jobId);
        Vm.Log[] memory logs = vm.getRecordedLogs();
        _checkSlashesIn(logs);
        // P12: a Disputed job's finalize settles no forced error (that was its first finalize).
        _checkPayouts(jobId, logs, new address[](0));
        _checkVoidedUnpaid(jobId, logs, new address[](0));
        _countMint(jobId);
        _checkExpired(jobId);
        ++ghost_calls["finalize"];
    }

    /// @notice Expires a Committed job past its assign deadline (P-35): nobody is slashed.
    function _expireUnassigned(uint256 jobId) internal {
        vm.recordLogs();
        jobManager.expireUnassigned(jobId);
        Vm.Log[] memory logs = vm.getRecordedLogs();
        _checkSlashesIn(logs);
        _checkVoidedUnpaid(jobId, logs, new address[](0));
        _checkExpired(jobId);
        ++ghost_calls["expireUnassigned"];
    }

    /// @notice Finalize of a Verifying job once its round is settled: only the solver (NoClaims,
    ///         NoReveal), verifiers that never revealed and approvers of a forced error may be
    ///         slashed (P2); every approver of a forced error is, no rejecter is, and its rejecters and
    ///         whistleblowers are paid bond + jackpot (P5).
    function _finalizeVerifying(uint256 jobId, Job memory job, bool withSecret) internal {
        Expected memory e;
        if (withSecret) {
            // `revealSecretAndFinalize`: what the finalize will settle is read after the reveal, in
            // a snapshot thrown away before the one call that does both.
            uint256 snapshot = VmExt(address(vm)).snapshotState();
            _revealSecret(jobId, job, false);
            e = _expected(jobId);
            VmExt(address(vm)).revertToState(snapshot);
        } else {
            e = _expected(jobId);
        }
        if (e.outcome == RoundOutcome.Pending) return;
        if (e.solverSlashable) _allow(job.solver, Role.Solver);
        for (uint256 i; i < e.assigned.length; ++i) {
            if (e.seatSlashable[i]) _allow(e.assigned[i], Role.Verifier);
        }
        vm.recordLogs();
        if (withSecret) _revealSecret(jobId, job, true);
        else jobManager.finalize(jobId);
        Vm.Log[] memory logs = vm.getRecordedLogs();
        if (e.outcome == RoundOutcome.Forced) {
            _checkForced(jobId, e.f, e.assigned, e.verdictsBefore, logs, e.ownedBefore, e.poolBefore);
        }
        _checkSlashesIn(logs);
        _checkPayouts(jobId, logs, e.winners);
        _checkVoidedUnpaid(jobId, logs, new address[](0));
        _countMint(jobId);
        _checkExpired(jobId);
        ++ghost_calls["finalize"];
    }

    /// @notice What a finalize of `jobId` now may slash and must pay: its round's outcome, who may be
    ///         slashed (P2), and what the seats own outside the StakeManager (wallet plus credit), the
    ///         pool and the verdicts on the forced sample before it (P5).
    function _expected(uint256 jobId) internal view returns (Expected memory e) {
        (e.outcome, e.f) = round.outcome(_sid(jobId));
        (e.assigned,) = jobManager.getAssignment(jobId);
        e.solverSlashable = e.outcome == RoundOutcome.NoClaims || e.outcome == RoundOutcome.NoReveal;
        e.seatSlashable = new bool[](e.assigned.length);
        e.ownedBefore = new uint256[](e.assigned.length);
        e.verdictsBefore = new Verdict[](e.assigned.length);
        for (uint256 i; i < e.assigned.length; ++i) {
            Verdict[] memory verdicts = jobManager.verdictOf(jobId, e.assigned[i]);
            // A voided seat (P14) is never slashed again.
            e.seatSlashable[i] = !_voided[_sid(jobId)][e.assigned[i]]
                && ((!_revealed(jobId, e.assigned[i]) && e.outcome != RoundOutcome.NoClaims)
                    || (e.outcome == RoundOutcome.Forced && verdicts[e.f] == Verdict.Approve));
            e.ownedBefore[i] = _worth(e.assigned[i]);
            // Verdicts on f before the settlement turns matching rejections into approvals of the true end.
            if (e.outcome == RoundOutcome.Forced) e.verdictsBefore[i] = verdicts[e.f];
        }
        e.poolBefore = escrow.jackpotPool();
        if (e.outcome == RoundOutcome.Forced) e.winners = _forcedWinners(jobId, e.f, e.assigned, e.verdictsBefore);
    }

    /// @notice The job's solver reveals its secret with proofs of every claim; with `andFinalize`,
    ///         in one `revealSecretAndFinalize`.
    function _revealSecret(uint256 jobId, Job memory job, bool andFinalize) internal {
        (, uint32[] memory segments) = jobManager.getAssignment(jobId);
        bytes32[] memory leaves = Merkle.leaves(job.checkpointInterval, _states[jobId]);
        bytes32[] memory proof = Merkle.multiproof(leaves, Merkle.claimIndices(segments));
        bytes32 trueEnd;
        {
            (bool forced, uint256 f) = round.drawForcedError(_sid(jobId), _secret(jobId));
            if (forced) trueEnd = _states[jobId][segments[f] + 1];
        }
        Claims memory claims = _claimsArg(_sid(jobId));
        vm.prank(job.solver);
        if (andFinalize) {
            round.revealSecretAndFinalize(_sid(jobId), _secret(jobId), trueEnd, proof, claims);
            ++ghost_calls["revealSecretAndFinalize"];
        } else {
            round.revealSecret(_sid(jobId), _secret(jobId), trueEnd, proof, claims);
            ++ghost_calls["revealSecret"];
        }
    }

    function drawCommittee(uint256 disputeSeed) external {
        _drawCommittee(disputeSeed);
    }

    function _drawCommittee(uint256 disputeSeed) internal {
        uint256 disputeId = _pickDispute(disputeSeed);
        if (disputeId == 0 || committee.phaseOf(disputeId) != DisputePhase.AwaitingCommittee) return;
        Dispute memory d = committee.getDispute(disputeId);
        if (block.number <= d.randomnessBlock) vm.roll(d.randomnessBlock + 1);
        committee.drawCommittee(disputeId);
        ++ghost_calls["drawCommittee"];
    }

    function vote(uint256 disputeSeed, uint256 memberSeed, bool segmentValid) external {
        _vote(disputeSeed, memberSeed, segmentValid);
    }

    function _vote(uint256 disputeSeed, uint256 memberSeed, bool segmentValid) internal {
        uint256 disputeId = _pickDispute(disputeSeed);
        if (disputeId == 0) return;
        DisputePhase phase = committee.phaseOf(disputeId);
        address[] memory members = committee.committeeOf(disputeId);
        // Start at a random member and act with the first one that still can.
        for (uint256 i; i < members.length; ++i) {
            address member = members[(memberSeed % members.length + i) % members.length];
            (bytes32 commitment, bool revealed,) = committee.ballotOf(disputeId, member);
            if (phase == DisputePhase.Commit && commitment == bytes32(0)) {
                _votes[disputeId][member] = segmentValid;
                bytes32 hash = committee.voteHash(disputeId, member, segmentValid, _salt(disputeId, member));
                vm.prank(member);
                committee.commitVote(disputeId, hash);
                ++ghost_calls["commitVote"];
                return;
            }
            if (phase == DisputePhase.Reveal && commitment != bytes32(0) && !revealed) {
                vm.prank(member);
                committee.revealVote(disputeId, _votes[disputeId][member], _salt(disputeId, member));
                ++ghost_calls["revealVote"];
                return;
            }
        }
    }

    function resolve(uint256 disputeSeed) external {
        _resolve(disputeSeed);
    }

    function _resolve(uint256 disputeSeed) internal {
        uint256 disputeId = _pickDispute(disputeSeed);
        if (disputeId == 0) return;
        DisputePhase phase = committee.phaseOf(disputeId);
        // Skipping the reveal phase (warping past it) is allowed; skipping the commit phase is not,
        // so that committees get to vote in most runs.
        if (phase != DisputePhase.Reveal && phase != DisputePhase.Resolvable) return;
        Dispute memory d = committee.getDispute(disputeId);
        if (phase != DisputePhase.Resolvable) vm.warp(d.revealDeadline + 1);
        _allowDisputeLosers(disputeId, d);
        uint256 sampleIndex = jobManager.disputedSampleOf(d.jobId);
        address[] memory rejecters = _rejectersOf(d.jobId, sampleIndex);
        address[] memory fetchOnly = _fetchOnlyApprovers(d.jobId, sampleIndex, disputeId);
        _ruled[d.jobId][sampleIndex] = true;
        // An expiring job's secret was never revealed: a valid ruling returns its rejecters' bonds
        // (the reject may be of the undisclosed forced claim, P-34), so P6 does not apply.
        (, bool secretRevealed,,) = round.roundOf(_sid(d.jobId));
        vm.recordLogs();
        committee.resolve(disputeId);
        Vm.Log[] memory logs = vm.getRecordedLogs();
        // P6: a valid ruling binds every rejecter of the sample: each forfeits its bond.
        if (secretRevealed && jobManager.getJob(d.jobId).status != JobStatus.Rejected) {
            for (uint256 i; i < rejecters.length; ++i) {
                if (!_bondForfeitedIn(logs, d.jobId, rejecters[i])) ++ghost_validRejecterKeptBond;
            }
        }
        _checkFetchOnly(fetchOnly, jobManager.getJob(d.jobId).status == JobStatus.Rejected, logs);
        _checkSlashesIn(logs);
        // P12: a rejection pays the seats' fees straight to their wallets, never a reward, and no
        // forced-error winner (a forced error is settled at the finalize that opened the dispute).
        _checkPayouts(d.jobId, logs, new address[](0));
        _checkVoidedUnpaid(d.jobId, logs, committee.committeeOf(disputeId));
        ++ghost_calls["resolve"];
    }

    /// @notice Does the next lifecycle step of a live job (or posts one), so runs reach disputes.
    function advance(uint256 jobSeed, uint256 choice) external {
        (uint256 jobId, Job memory job) = _pick(jobSeed);
        if (jobId == 0 || !_isLive(job.status)) return _postJob(choice, choice >> 16, choice >> 32);
        if (job.status == JobStatus.Open) {
            // Nobody claimed it in time: anyone expires it (the submitter is refunded).
            if (block.timestamp > job.openDeadline) {
                jobManager.expireJob(jobId);
                ++ghost_calls["expireJob"];
                return;
            }
            return _claimAndCommit(jobSeed, choice, true);
        }
        if (job.status == JobStatus.Claimed) {
            if (choice % 8 == 0) return _reclaimExpired(jobSeed);
            return _claimAndCommit(jobSeed, choice, true);
        }
        if (job.status == JobStatus.Committed) {
            // Nobody seated it by its assign deadline (one call in six waits it out, as when no
            // verifier is eligible): anyone expires it (P-35).
            uint256 deadline = uint256(job.commitDeadline) + jobManager.params().openWindow;
            if (block.timestamp <= deadline && _roll(choice, "unassigned") % 6 == 0) vm.warp(deadline + 1);
            if (block.timestamp > deadline) return _expireUnassigned(jobId);
            return _assignVerifiers(jobSeed);
        }
        if (job.status == JobStatus.Verifying) {
            // Mostly the next verifier seals or reveals, or an aggregator does it for every seat
            // (one call in eight; half of those while no seat has sealed: in one signed call, P13);
            // finalize once everyone has revealed (or, one call in eight, early: missed verdicts); a
            // challenge one call in eight.
            uint256 step = _roll(choice, "verifying") % 8;
            if (step == 0) return _challengeApproval(jobSeed, choice >> 8, choice >> 16);
            (bool done, uint256 next) = _nextVerifier(jobId);
            if (step == 1 || done) return _finalize(jobSeed);
            if (step == 2 && _roll(choice, "one shot") % 2 == 0 && _signable(jobId)) {
                return _signedVerdicts(jobSeed, _roll(choice, "masks"));
            }
            if (step == 2) return _batchVerdicts(jobSeed, _roll(choice, "masks"));
            return _submitVerdicts(jobSeed, next, _roll(choice, "mask"));
        }
        // Disputed.
        DisputePhase phase = committee.phaseOf(job.disputeId);
        if (phase == DisputePhase.AwaitingCommittee) return _drawCommittee(job.disputeId - 1);
        if (phase == DisputePhase.Commit || phase == DisputePhase.Reveal) {
            if (phase == DisputePhase.Reveal && _roll(choice, "resolve") % 6 == 0) return _resolve(job.disputeId - 1);
            return _vote(job.disputeId - 1, choice >> 8, _roll(choice, "vote") % 3 != 0);
        }
        if (phase == DisputePhase.Resolvable) return _resolve(job.disputeId - 1);
        return _finalize(jobSeed);
    }

    function fundJackpot(uint256 actorSeed, uint256 amount) external {
        address account = actors[actorSeed % actors.length];
        amount = bound(amount, 0, 100e18);
        vm.prank(account);
        escrow.fundJackpot(amount);
        ++ghost_calls["fundJackpot"];
    }

    function claimCredit(uint256 actorSeed) external {
        address account = actors[actorSeed % actors.length];
        if (escrow.creditOf(account) == 0) return;
        vm.prank(account);
        escrow.claimCredit();
        ++ghost_calls["claimCredit"];
    }

    function stakeOrUnbond(uint256 actorSeed, uint256 action, uint256 amount) external {
        address account = actors[actorSeed % actors.length];
        Role role = Role(action % 3);
        action = (action >> 8) % 3;
        if (action == 0) {
            amount = bound(amount, 1, 100e18);
            _stakeAs(account, role, amount);
        } else if (action == 1) {
            uint256 free = stakeManager.freeStake(account, role);
            if (free == 0) return;
            amount = bound(amount, 1, free);
            vm.prank(account);
            stakeManager.requestUnbond(role, amount);
        } else {
            (,, uint256 unbonding, uint64 releaseAt) = stakeManager.stakeOf(account, role);
            if (unbonding == 0) return;
            if (block.timestamp < releaseAt) vm.warp(releaseAt);
            vm.prank(account);
            stakeManager.withdraw(role);
        }
        ++ghost_calls["stakeOrUnbond"];
    }

    /// @notice End of a run: keeps advancing jobs (deterministic choices, at most `MAX_SETTLE_STEPS`
    ///         calls) until the run has seen a slash (P2), a finalized mint (P3), a forced-error
    ///         settlement (P5) and a reward paid straight to a solver's wallet (P12), so that
    ///         `afterInvariant` can require all four.
    /// @custom:property-id P2 P3 P5 P12
    function settle() external {
        if (ghost_selfDealtClaims == 0) _selfDeal();
        if (progressed()) return;
        _settling = true;
        for (uint256 i; i < MAX_SETTLE_STEPS && !progressed(); ++i) {
            // Fresh stake for every solver, verifier and whistleblower, now and every 16 steps, so that
            // slashes (abandonments cost the solver its stake) and unbonds earlier in the run or in the
            // drive itself cannot keep it from claiming jobs, filling seats and challenging.
            if (i % 16 == 0) _topUpAll();
            uint256 choice = uint256(keccak256(abi.encode("settle", i)));
            // A step that cannot go through now (no eligible arbiters or verifiers while their stakes
            // are locked in other jobs) is skipped: time passes and later steps free them.
            try this.advance(i, choice) {} catch {}
            if (i % 4 == 3) this.warp(choice >> 128);
        }
    }

    /// @notice A job posted and claimed by the same key (submitters[0]: the model's owner or a poster,
    ///         and a solver), for runs whose fuzzed calls made none, so that every run checks the
    ///         invariants with a self-dealt job in play.
    function _selfDeal() internal {
        address actor = submitters[0];
        _topUp(actor, Role.Solver, 300e18);
        bytes32 specHash = keccak256(abi.encode("spec", jobManager.jobCount()));
        vm.prank(actor);
        try jobManager.postJob(MODEL_ID, specHash, INIT_HASH, 4, 2, 0, "data:,") returns (uint256 jobId) {
            vm.prank(actor);
            jobManager.claimJob(jobId);
            ++ghost_calls["postJob"];
            ++ghost_calls["claimJob"];
            ++ghost_selfDealtClaims;
        } catch {}
    }

    function warp(uint256 seconds_) external {
        vm.warp(block.timestamp + bound(seconds_, 1, 10 minutes));
        vm.roll(block.number + 1);
    }
}
