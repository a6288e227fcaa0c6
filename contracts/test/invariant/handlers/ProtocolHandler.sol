// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

// Testing
import {Vm} from "@prb/test/Vm.sol";
import {Bound} from "../../utils/Bound.sol";
import {ClaimsBook} from "../../utils/ClaimsBook.sol";
import {Merkle} from "../../utils/Merkle.sol";
// Contracts
import {ArbitrationCommittee} from "../../../src/ArbitrationCommittee.sol";
import {Escrow} from "../../../src/Escrow.sol";
import {JobManager} from "../../../src/JobManager.sol";
import {ShareRegistry} from "../../../src/ShareRegistry.sol";
import {StakeManager} from "../../../src/StakeManager.sol";
import {VeriToken} from "../../../src/VeriToken.sol";
import {VerificationRound} from "../../../src/VerificationRound.sol";
// Interfaces
import {IJobManager} from "../../../src/interfaces/IJobManager.sol";
import {IStakeManager} from "../../../src/interfaces/IStakeManager.sol";
// Types
import {Dispute, DisputePhase} from "../../../src/types/DisputeTypes.sol";
import {Job, JobStatus, Verdict} from "../../../src/types/JobTypes.sol";
import {Role} from "../../../src/types/Role.sol";
import {Claims, RoundOutcome} from "../../../src/types/RoundTypes.sol";
import {LibSubmission, SubmissionId} from "../../../src/types/SubmissionId.sol";

/// @title ProtocolHandler
/// @notice Drives the whole protocol with bounded random actions from a fixed cast of actors, and
///         tracks ghost variables for the protocol invariants.
/// @dev Each action picks a job/dispute/actor from its seeds and does the next sensible step for
///      it, returning early (not reverting) when there is nothing to do. Slashes are checked
///      against the reason expected before the call (@custom:property-id P2), and forced errors
///      against their settlement (@custom:property-id P5). Solvers commit real checkpoint trees,
///      post their claims (forced claims included) and usually reveal their secret; verifiers seal
///      and reveal verdicts through the VerificationRound.
contract ProtocolHandler is Bound, ClaimsBook {
    ////// Constants //////

    Vm internal constant vm = Vm(address(uint160(uint256(keccak256("hevm cheat code")))));
    bytes32 internal constant STAKE_SLASHED = keccak256("StakeSlashed(address,uint8,uint256,uint256,address)");
    bytes32 internal constant MODEL_ID = keccak256("digits-mlp");
    /// @notice State hash of the spec's seed-initialised state of every job the handler posts.
    bytes32 internal constant INIT_HASH = keccak256("handler initial state");
    /// @notice Most `advance` calls `settle` makes.
    uint256 internal constant MAX_SETTLE_STEPS = 1500;
    /// @notice The griefer's sealed "mask": a zero end on every sample (an abstention, P-20, P-33).
    uint256 internal constant ABSTAIN_ALL = type(uint256).max;

    ////// State //////

    VeriToken public token;
    StakeManager public stakeManager;
    JobManager public jobManager;
    Escrow public escrow;
    ArbitrationCommittee public committee;
    VerificationRound public round;
    /// @notice True inside `settle`: solvers always post claims and reveal their secret there.
    bool internal _settling;

    address[] public actors;
    address[] public submitters;
    address[] public solvers;
    address[] public verifiers;
    address[] public whistleblowers;

    /// @notice Accounts allowed to be slashed by the call in progress (role-qualified).
    mapping(address account => mapping(Role role => bool allowed)) internal _slashable;
    address[] internal _slashableList;

    /// @notice State hashes of checkpoints 0..N/k each job's solver committed.
    mapping(uint256 jobId => bytes32[] states) internal _states;
    /// @notice Reject mask each verifier sealed, for its reveal.
    mapping(uint256 jobId => mapping(address verifier => uint256 mask)) internal _sealed;

    /// @notice A seat that never seals (P-34: a silent accomplice) and one that abstains on every
    ///         sample it draws (P-33: a griefer); both are verifiers of the pool.
    address public silentSeat;
    address public griefer;
    /// @notice Samples of a job a committee ruled on (P9).
    mapping(uint256 jobId => mapping(uint256 sampleIndex => bool ruled)) internal _ruled;

    /// @notice Vote each member chose, for its reveal.
    mapping(uint256 disputeId => mapping(address member => bool segmentValid)) internal _votes;

    /// @custom:property-id P2 Slashes not explained by a lost verdict, challenge, commit or vote.
    uint256 public ghost_unjustifiedSlashes;
    /// @custom:property-id P2 Slashes seen.
    uint256 public ghost_slashes;
    /// @custom:property-id P5 Forced errors settled (finalize with outcome Forced).
    uint256 public ghost_forcedErrors;
    /// @custom:property-id P5 Approvers of a forced error that kept their stake.
    uint256 public ghost_forcedApproverNotSlashed;
    /// @custom:property-id P5 Rejecters of a forced error that lost stake in its settlement.
    uint256 public ghost_forcedRejecterSlashed;
    /// @custom:property-id P5 Rejecters and whistleblowers of a forced error not paid bond + jackpot
    ///                     (capped by the pool).
    uint256 public ghost_forcedWinnerUnpaid;
    /// @custom:property-id P5 Rejecters of a forced error whose sealed end was not the solver's
    ///                     true end, left without a dispute on the sample.
    uint256 public ghost_forcedMismatchUndisputed;
    /// @custom:property-id P6 Rejecters of a sample a committee ruled valid that kept their reject
    ///                     bond (settlement state keyed by address let a rejecter that was also a
    ///                     paid whistleblower of the sample escape, P-22).
    uint256 public ghost_validRejecterKeptBond;
    /// @custom:property-id P6 Challenges by a verifier of the job (a double role).
    uint256 public ghost_doubleRoleChallenges;
    /// @notice Jobs claimed by their own submitter (a key that is submitter and solver, or owner,
    ///         poster and solver); progress: the invariants held on such jobs too.
    uint256 public ghost_selfDealtClaims;
    /// @custom:property-id P3 Finalize calls that finalized a job (and minted its shares).
    uint256 public ghost_finalizedMints;
    /// @custom:property-id P9 Jobs that expired with a seat's revealed reject of a sample no ruling
    ///                     judged (P-34: expiry never forgives a revealed reject).
    uint256 public ghost_unjudgedRejectExpired;
    /// @custom:property-id P9 Jobs expired after verifiers were drawn (progress of the new surface).
    uint256 public ghost_expiredAfterDraw;
    /// @notice Successful calls per action, to check the handler reaches deep states.
    mapping(bytes32 action => uint256 count) public ghost_calls;

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
                states.push(i == 0 ? job.initHash : keccak256(abi.encode("state", jobId, i)));
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
        if (commitment == bytes32(0)) {
            (bytes32[] memory starts,) = _claimsOf(_sid(jobId));
            if (block.timestamp > job.verdictDeadline || starts.length == 0) return;
            // Mostly approvals: a reject on every sample would make every job a dispute.
            if (rejectMask % 3 != 0) rejectMask = 0;
            // The griefer abstains on everything (P-33).
            if (verifier == griefer) rejectMask = ABSTAIN_ALL;
            _sealed[jobId][verifier] = rejectMask;
            bytes32 hash = keccak256(
                abi.encode(jobId, verifier, _ends(jobId, segments, rejectMask), _verdictSalt(jobId, verifier))
            );
            vm.prank(verifier);
            round.commitVerdicts(_sid(jobId), hash);
            ++ghost_calls["commitVerdicts"];
        } else if (!revealed) {
            (uint64 opens, uint64 closes,,) = round.windowsOf(_sid(jobId));
            (,, uint32 committed) = round.roundOf(_sid(jobId));
            if (committed < assigned.length && block.timestamp < opens) vm.warp(opens);
            if (block.timestamp > closes) return;
            _reveal(jobId, verifier, segments);
            ++ghost_calls["revealVerdicts"];
        }
    }

    /// @notice `verifier` reveals the verdicts it sealed, passing back the posted claims.
    function _reveal(uint256 jobId, address verifier, uint32[] memory segments) internal {
        bytes32[] memory ends = _ends(jobId, segments, _sealed[jobId][verifier]);
        Claims memory claims = _claimsArg(_sid(jobId));
        bytes32 salt = _verdictSalt(jobId, verifier);
        vm.prank(verifier);
        round.revealVerdicts(_sid(jobId), ends, salt, claims);
    }

    /// @notice The end hashes a verifier seals: the claim where bit j + 8 of `rejectMask` is clear
    ///         (approve); else the committed end (a replay; the true end of a forced claim) or,
    ///         where that is the claim or bit 7 is set (a rejecter that did not replay), a hash of
    ///         its own.
    function _ends(uint256 jobId, uint32[] memory segments, uint256 rejectMask)
        internal
        view
        returns (bytes32[] memory ends)
    {
        (, bytes32[] memory claimed) = _claimsOf(_sid(jobId));
        ends = new bytes32[](segments.length);
        if (rejectMask == ABSTAIN_ALL) return ends;
        for (uint256 j; j < segments.length; ++j) {
            if ((rejectMask >> (j + 8)) & 1 == 0) {
                ends[j] = claimed[j];
                continue;
            }
            bytes32 committed = _states[jobId][segments[j] + 1];
            bool replayed = (rejectMask >> 7) & 1 == 0 && committed != claimed[j];
            ends[j] = replayed ? committed : keccak256(abi.encode("own end", jobId, j));
        }
    }

    function _verdictSalt(uint256 jobId, address verifier) internal pure returns (bytes32) {
        return keccak256(abi.encode("verdict salt", jobId, verifier));
    }

    function _secret(uint256 jobId) internal pure returns (bytes32) {
        return keccak256(abi.encode("secret", jobId));
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
            job = jobManager.getJob(jobId);
            // The solver reveals its secret, except in one job in eight (outcome NoReveal).
            (bytes32[] memory starts,) = _claimsOf(_sid(jobId));
            (, bool revealed,) = round.roundOf(_sid(jobId));
            // Past its window the secret can no longer be revealed (outcome NoReveal).
            bool open = block.timestamp <= uint256(job.challengeDeadline) + _revealWindow();
            // With a sample no revealed verdict covers the secret stays hidden (outcome NoVerdicts:
            // verifiers are drawn again for the uncovered samples, P-27).
            if (starts.length != 0 && !revealed && open && _covered(jobId)) {
                // Never skipped inside `settle` (a NoReveal job cannot settle a forced error).
                if (!_settling && _roll(jobSeed, "reveal") % 8 == 0) {
                    vm.warp(uint256(job.challengeDeadline) + _revealWindow() + 1);
                } else {
                    _revealSecret(jobId, job);
                }
            }
            return _finalizeVerifying(jobId, job);
        } else if (job.status != JobStatus.Disputed) {
            return;
        } else if (committee.phaseOf(job.disputeId) != DisputePhase.Resolved) {
            return;
        }
        vm.recordLogs();
        jobManager.finalize(jobId);
        _checkSlashes();
        _countMint(jobId);
        _checkExpired(jobId);
        ++ghost_calls["finalize"];
    }

    /// @notice Expires a Committed job past its assign deadline (P-35): nobody is slashed.
    function _expireUnassigned(uint256 jobId) internal {
        vm.recordLogs();
        jobManager.expireUnassigned(jobId);
        _checkSlashes();
        _checkExpired(jobId);
        ++ghost_calls["expireUnassigned"];
    }

    /// @notice P9 after a call that may have expired `jobId`: no seat's revealed reject of a sample
    ///         is left unjudged (P-34).
    function _checkExpired(uint256 jobId) internal {
        if (jobManager.getJob(jobId).status != JobStatus.Expired) return;
        (address[] memory assigned,) = jobManager.getAssignment(jobId);
        if (assigned.length != 0) ++ghost_expiredAfterDraw;
        for (uint256 i; i < assigned.length; ++i) {
            Verdict[] memory verdicts = jobManager.verdictOf(jobId, assigned[i]);
            for (uint256 t; t < verdicts.length; ++t) {
                if (verdicts[t] == Verdict.Reject && !_ruled[jobId][t]) ++ghost_unjudgedRejectExpired;
            }
        }
    }

    /// @notice Finalize of a Verifying job once its round is settled: only the solver (NoClaims,
    ///         NoReveal), verifiers that never revealed and approvers of a forced error may be
    ///         slashed (P2); every approver of a forced error is, no rejecter is, and its rejecters and
    ///         whistleblowers are paid bond + jackpot (P5).
    function _finalizeVerifying(uint256 jobId, Job memory job) internal {
        (RoundOutcome outcome, uint256 f) = round.outcome(_sid(jobId));
        if (outcome == RoundOutcome.Pending) return;
        (address[] memory assigned,) = jobManager.getAssignment(jobId);
        if (outcome == RoundOutcome.NoClaims || outcome == RoundOutcome.NoReveal) _allow(job.solver, Role.Solver);
        for (uint256 i; i < assigned.length; ++i) {
            Verdict[] memory verdicts = jobManager.verdictOf(jobId, assigned[i]);
            if (!_revealed(jobId, assigned[i]) && outcome != RoundOutcome.NoClaims) _allow(assigned[i], Role.Verifier);
            if (outcome == RoundOutcome.Forced && verdicts[f] == Verdict.Approve) _allow(assigned[i], Role.Verifier);
        }
        uint256[] memory creditsBefore = new uint256[](assigned.length);
        // Verdicts on f before the settlement turns matching rejections into approvals of the true end.
        Verdict[] memory verdictsBefore = new Verdict[](assigned.length);
        for (uint256 i; i < assigned.length; ++i) {
            creditsBefore[i] = escrow.creditOf(assigned[i]);
            if (outcome == RoundOutcome.Forced) verdictsBefore[i] = jobManager.verdictOf(jobId, assigned[i])[f];
        }
        uint256 poolBefore = escrow.jackpotPool();
        vm.recordLogs();
        jobManager.finalize(jobId);
        Vm.Log[] memory logs = vm.getRecordedLogs();
        if (outcome == RoundOutcome.Forced) {
            _checkForced(jobId, f, assigned, verdictsBefore, logs, creditsBefore, poolBefore);
        }
        _checkSlashesIn(logs);
        _countMint(jobId);
        _checkExpired(jobId);
        ++ghost_calls["finalize"];
    }

    /// @notice P5 on the logs of a finalize that settled a forced error on sample `f`: every approver
    ///         of the forced claim is slashed; no rejecter is; a rejecter that sealed the true end (a
    ///         replay) is paid bond + jackpot; one that sealed another end keeps `f` disputed.
    function _checkForced(
        uint256 jobId,
        uint256 f,
        address[] memory assigned,
        Verdict[] memory verdictsBefore,
        Vm.Log[] memory logs,
        uint256[] memory creditsBefore,
        uint256 poolBefore
    ) internal {
        ++ghost_forcedErrors;
        uint256 jackpot = jobManager.params().jackpot;
        uint256 bond = jobManager.params().challengeBond;
        // Every rejecter is owed a full jackpot when the pool held one per verifier before.
        if (poolBefore < jackpot * assigned.length) jackpot = 0;
        for (uint256 i; i < assigned.length; ++i) {
            bool slashed = _slashedIn(logs, assigned[i], Role.Verifier);
            if (verdictsBefore[i] == Verdict.Approve && !slashed) ++ghost_forcedApproverNotSlashed;
            if (verdictsBefore[i] != Verdict.Reject) continue;
            if (slashed) ++ghost_forcedRejecterSlashed;
            _checkForcedRejecter(jobId, f, assigned[i], escrow.creditOf(assigned[i]) - creditsBefore[i], bond + jackpot);
        }
    }

    /// @notice P5 for a rejecter of forced sample `f` credited `paid` at its settlement: one that
    ///         sealed the true end (a replay) is paid `owed`; one that sealed another end keeps `f`
    ///         disputed.
    function _checkForcedRejecter(uint256 jobId, uint256 f, address verifier, uint256 paid, uint256 owed) internal {
        (, uint32[] memory segments) = jobManager.getAssignment(jobId);
        bytes32 trueEnd = _states[jobId][segments[f] + 1];
        if (_ends(jobId, segments, _sealed[jobId][verifier])[f] != trueEnd) {
            // Its end challenges the solver's: the sample must stay disputed.
            if ((jobManager.disputedMaskOf(jobId) >> f) & 1 == 0) ++ghost_forcedMismatchUndisputed;
        } else if (paid < owed) {
            ++ghost_forcedWinnerUnpaid;
        }
    }

    /// @notice The job's verifiers that reject sample `sampleIndex` (before the ruling).
    function _rejectersOf(uint256 jobId, uint256 sampleIndex) internal view returns (address[] memory out) {
        (address[] memory assigned,) = jobManager.getAssignment(jobId);
        out = new address[](assigned.length);
        uint256 count;
        for (uint256 i; i < assigned.length; ++i) {
            Verdict[] memory verdicts = jobManager.verdictOf(jobId, assigned[i]);
            if (verdicts.length > sampleIndex && verdicts[sampleIndex] == Verdict.Reject) out[count++] = assigned[i];
        }
        assembly ("memory-safe") {
            mstore(out, count)
        }
    }

    /// @notice Whether `logs` hold a `BondForfeited(jobId, account, _)` of the JobManager.
    function _bondForfeitedIn(Vm.Log[] memory logs, uint256 jobId, address account) internal view returns (bool) {
        for (uint256 i; i < logs.length; ++i) {
            Vm.Log memory log = logs[i];
            if (log.emitter != address(jobManager) || log.topics.length < 3) continue;
            if (log.topics[0] != IJobManager.BondForfeited.selector) continue;
            if (uint256(log.topics[1]) == jobId && address(uint160(uint256(log.topics[2]))) == account) return true;
        }
        return false;
    }

    function _slashedIn(Vm.Log[] memory logs, address account, Role role) internal pure returns (bool) {
        for (uint256 i; i < logs.length; ++i) {
            if (logs[i].topics.length < 3 || logs[i].topics[0] != STAKE_SLASHED) continue;
            if (address(uint160(uint256(logs[i].topics[1]))) == account && uint256(logs[i].topics[2]) == uint8(role)) {
                return true;
            }
        }
        return false;
    }

    /// @notice Whether every sample has a revealed verdict of a seat whose own draw holds it (the
    ///         secret can be revealed only then, docs/SECURITY.md P-27).
    function _covered(uint256 jobId) internal view returns (bool) {
        (address[] memory assigned, uint32[] memory segments) = jobManager.getAssignment(jobId);
        uint256 covered;
        for (uint256 i; i < assigned.length; ++i) {
            if (_revealed(jobId, assigned[i])) covered |= jobManager.sampleMaskOf(jobId, assigned[i]);
        }
        return covered == (uint256(1) << segments.length) - 1;
    }

    /// @notice Whether `verifier` revealed its sealed verdicts on the job's active submission.
    function _revealed(uint256 jobId, address verifier) internal view returns (bool revealed) {
        (, revealed) = round.verdictCommitmentOf(_sid(jobId), verifier);
    }

    /// @notice The job's solver reveals its secret with proofs of every claim.
    function _revealSecret(uint256 jobId, Job memory job) internal {
        (, uint32[] memory segments) = jobManager.getAssignment(jobId);
        bytes32[] memory leaves = Merkle.leaves(job.checkpointInterval, _states[jobId]);
        bytes32[][] memory startProofs = new bytes32[][](segments.length);
        bytes32[][] memory endProofs = new bytes32[][](segments.length);
        for (uint256 j; j < segments.length; ++j) {
            startProofs[j] = Merkle.proof(leaves, segments[j]);
            endProofs[j] = Merkle.proof(leaves, segments[j] + 1);
        }
        bytes32 trueEnd;
        {
            (bool forced, uint256 f) = round.drawForcedError(_sid(jobId), _secret(jobId));
            if (forced) trueEnd = _states[jobId][segments[f] + 1];
        }
        Claims memory claims = _claimsArg(_sid(jobId));
        vm.prank(job.solver);
        round.revealSecret(_sid(jobId), _secret(jobId), trueEnd, startProofs, endProofs, claims);
        ++ghost_calls["revealSecret"];
    }

    /// @notice A die roll derived from a fuzzer seed: seeds are often small numbers, so their own
    ///         bits would always pick the same branch.
    function _roll(uint256 seed, string memory what) internal pure returns (uint256) {
        return uint256(keccak256(abi.encode(seed, what)));
    }

    function _revealWindow() internal view returns (uint256) {
        return jobManager.params().revealWindow;
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
        _ruled[d.jobId][sampleIndex] = true;
        // An expiring job's secret was never revealed: a valid ruling returns its rejecters' bonds
        // (the reject may be of the undisclosed forced claim, P-34), so P6 does not apply.
        (, bool secretRevealed,) = round.roundOf(_sid(d.jobId));
        vm.recordLogs();
        committee.resolve(disputeId);
        Vm.Log[] memory logs = vm.getRecordedLogs();
        // P6: a valid ruling binds every rejecter of the sample: each forfeits its bond.
        if (secretRevealed && jobManager.getJob(d.jobId).status != JobStatus.Rejected) {
            for (uint256 i; i < rejecters.length; ++i) {
                if (!_bondForfeitedIn(logs, d.jobId, rejecters[i])) ++ghost_validRejecterKeptBond;
            }
        }
        _checkSlashesIn(logs);
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
            // Mostly the next verifier seals or reveals; finalize once everyone has revealed (or,
            // one call in eight, early: missed verdicts); a challenge one call in eight.
            uint256 step = _roll(choice, "verifying") % 8;
            if (step == 0) return _challengeApproval(jobSeed, choice >> 8, choice >> 16);
            (bool done, uint256 next) = _nextVerifier(jobId);
            if (step == 1 || done) return _finalize(jobSeed);
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

    /// @notice Index of the first assigned verifier that has not sealed its verdicts, else of the
    ///         first that has not revealed them (sealing first, so that no reveal cuts the sealing
    ///         phase short); `done` when every one has revealed.
    function _nextVerifier(uint256 jobId) internal view returns (bool done, uint256 index) {
        (address[] memory assigned,) = jobManager.getAssignment(jobId);
        uint256 unrevealed = type(uint256).max;
        for (uint256 i; i < assigned.length; ++i) {
            if (assigned[i] == silentSeat) continue;
            (bytes32 commitment, bool revealed) = round.verdictCommitmentOf(_sid(jobId), assigned[i]);
            if (commitment == bytes32(0) && block.timestamp <= jobManager.getJob(jobId).verdictDeadline) {
                return (false, i);
            }
            if (!revealed && commitment != bytes32(0) && unrevealed == type(uint256).max) unrevealed = i;
        }
        if (unrevealed == type(uint256).max) return (true, 0);
        return (false, unrevealed);
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
    ///         calls) until the run has seen a slash (P2), a finalized mint (P3) and a forced-error
    ///         settlement (P5), so that `afterInvariant` can require all three.
    /// @custom:property-id P2 P3 P5
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

    /// @notice Tops every solver, verifier and whistleblower up to a free stake that covers a few jobs.
    function _topUpAll() internal {
        for (uint256 i; i < solvers.length; ++i) {
            _topUp(solvers[i], Role.Solver, 300e18);
        }
        for (uint256 i; i < verifiers.length; ++i) {
            _topUp(verifiers[i], Role.Verifier, 200e18);
        }
        for (uint256 i; i < whistleblowers.length; ++i) {
            _topUp(whistleblowers[i], Role.Whistleblower, 50e18);
        }
    }

    /// @notice Whether the run has reached a slash, a finalized mint and a forced-error settlement.
    function progressed() public view returns (bool) {
        return ghost_slashes != 0 && ghost_finalizedMints != 0 && ghost_forcedErrors != 0;
    }

    function warp(uint256 seconds_) external {
        vm.warp(block.timestamp + bound(seconds_, 1, 10 minutes));
        vm.roll(block.number + 1);
    }

    ////// Views for the invariant test //////

    function actorCount() external view returns (uint256) {
        return actors.length;
    }

    ////// Internal //////

    function _newActor(string memory name) internal returns (address account) {
        account = address(uint160(uint256(keccak256(bytes(name)))));
        vm.label(account, name);
        vm.startPrank(account);
        token.faucet(1_000_000e18);
        token.approve(address(escrow), type(uint256).max);
        token.approve(address(stakeManager), type(uint256).max);
        vm.stopPrank();
        actors.push(account);
    }

    function _stakeAs(address account, Role role, uint256 amount) internal {
        vm.prank(account);
        stakeManager.stake(role, amount);
    }

    /// @notice A job from `seed`, preferring live (non-terminal) jobs so that runs reach deep states.
    function _pick(uint256 seed) internal view returns (uint256 jobId, Job memory job) {
        uint256 count = jobManager.jobCount();
        if (count == 0) return (0, job);
        uint256 start = seed % count;
        for (uint256 i; i < count; ++i) {
            jobId = (start + i) % count + 1;
            job = jobManager.getJob(jobId);
            if (_isLive(job.status)) return (jobId, job);
        }
    }

    function _isLive(JobStatus status) internal pure returns (bool) {
        return status != JobStatus.Finalized && status != JobStatus.Rejected && status != JobStatus.Cancelled
            && status != JobStatus.Expired;
    }

    function _liveJobs() internal view returns (uint256 live) {
        uint256 count = jobManager.jobCount();
        for (uint256 jobId = 1; jobId <= count; ++jobId) {
            if (_isLive(jobManager.getJob(jobId).status)) ++live;
        }
    }

    /// @notice A dispute from `seed`, preferring unresolved ones.
    function _pickDispute(uint256 seed) internal view returns (uint256 disputeId) {
        uint256 count = committee.disputeCount();
        if (count == 0) return 0;
        uint256 start = seed % count;
        for (uint256 i; i < count; ++i) {
            disputeId = (start + i) % count + 1;
            if (committee.phaseOf(disputeId) != DisputePhase.Resolved) return disputeId;
        }
    }

    function _salt(uint256 disputeId, address member) internal pure returns (bytes32) {
        return keccak256(abi.encode("salt", disputeId, member));
    }

    function _allow(address account, Role role) internal {
        _slashable[account][role] = true;
        _slashableList.push(account);
    }

    /// @notice Who may lose stake when `disputeId` resolves, computed from the votes before the call.
    function _allowDisputeLosers(uint256 disputeId, Dispute memory d) internal {
        address[] memory members = committee.committeeOf(disputeId);
        uint256 valid;
        uint256 invalid;
        for (uint256 i; i < members.length; ++i) {
            (, bool revealed, bool v) = committee.ballotOf(disputeId, members[i]);
            if (!revealed) _allow(members[i], Role.Verifier);
            else if (v) ++valid;
            else ++invalid;
        }
        bool segmentValid = invalid <= valid;
        Job memory job = jobManager.getJob(d.jobId);
        uint256 sampleIndex = jobManager.disputedSampleOf(d.jobId);
        (address[] memory assigned,) = jobManager.getAssignment(d.jobId);
        if (!segmentValid) _allow(job.solver, Role.Solver);
        for (uint256 i; i < assigned.length; ++i) {
            Verdict verdict = jobManager.verdictOf(d.jobId, assigned[i])[sampleIndex];
            if (segmentValid ? verdict == Verdict.Reject : verdict == Verdict.Approve) {
                _allow(assigned[i], Role.Verifier);
            }
        }
    }

    /// @notice Counts every StakeSlashed of the last call that hits an account not allowed.
    function _checkSlashes() internal {
        _checkSlashesIn(vm.getRecordedLogs());
    }

    /// @notice Counts every StakeSlashed in `logs` that hits an account not allowed, then clears
    ///         the allowances.
    function _checkSlashesIn(Vm.Log[] memory logs) internal {
        for (uint256 i; i < logs.length; ++i) {
            if (logs[i].topics.length == 0 || logs[i].topics[0] != STAKE_SLASHED) continue;
            address account = address(uint160(uint256(logs[i].topics[1])));
            Role role = Role(uint8(uint256(logs[i].topics[2])));
            ++ghost_slashes;
            if (!_slashable[account][role]) ++ghost_unjustifiedSlashes;
        }
        for (uint256 i; i < _slashableList.length; ++i) {
            delete _slashable[_slashableList[i]][Role.Solver];
            delete _slashable[_slashableList[i]][Role.Verifier];
            delete _slashable[_slashableList[i]][Role.Whistleblower];
        }
        delete _slashableList;
    }

    /// @notice Stakes `account` up to `amount` of free stake in `role`.
    function _topUp(address account, Role role, uint256 amount) internal {
        uint256 free = stakeManager.freeStake(account, role);
        if (free < amount) _stakeAs(account, role, amount - free);
    }

    /// @notice Counts a finalize that finalized `jobId` (P3: its steps were minted).
    function _countMint(uint256 jobId) internal {
        if (jobManager.getJob(jobId).status == JobStatus.Finalized) ++ghost_finalizedMints;
    }

    /// @notice The job's active submission.
    /// @dev Reads the job's solver with `vm.load` (slot 3 = `JobManager._jobs`, word 1 = solver), not
    ///      with a call, so that a pending `vm.prank`/`vm.expectRevert` still applies to the next real
    ///      call. `JobManager_Views_Test.test_submissionOf_matchesStorageRead_succeeds` pins the slot.
    function _sid(uint256 jobId) internal view returns (SubmissionId) {
        bytes32 base = keccak256(abi.encode(jobId, uint256(3)));
        address solver = address(uint160(uint256(vm.load(address(jobManager), bytes32(uint256(base) + 1)))));
        return solver == address(0) ? SubmissionId.wrap(bytes32(0)) : LibSubmission.id(jobId, solver);
    }
}
