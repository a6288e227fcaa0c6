// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

// Testing
import {PRBTest} from "@prb/test/PRBTest.sol";
import {Bound} from "./Bound.sol";
import {ClaimsBook} from "./ClaimsBook.sol";
import {Merkle} from "./Merkle.sol";
import {VmExt} from "./VmExt.sol";
// Deployment
import {Deploy} from "../../script/Deploy.sol";
// Contracts
import {ArbitrationCommittee} from "../../src/ArbitrationCommittee.sol";
import {BisectionGame} from "../../src/BisectionGame.sol";
import {Escrow} from "../../src/Escrow.sol";
import {JobManager} from "../../src/JobManager.sol";
import {ModelShares} from "../../src/ModelShares.sol";
import {ShareRegistry} from "../../src/ShareRegistry.sol";
import {StakeManager} from "../../src/StakeManager.sol";
import {VeriToken} from "../../src/VeriToken.sol";
import {VerificationRound} from "../../src/VerificationRound.sol";
// Interfaces
import {IEscrow} from "../../src/interfaces/IEscrow.sol";
import {IStakeManager} from "../../src/interfaces/IStakeManager.sol";
// Libraries
import {LibCheckpoint} from "../../src/libraries/LibCheckpoint.sol";
// Types
import {Dispute} from "../../src/types/DisputeTypes.sol";
import {Bucket} from "../../src/types/EscrowTypes.sol";
import {Job, JobStatus, Params} from "../../src/types/JobTypes.sol";
import {Role} from "../../src/types/Role.sol";
import {Claims} from "../../src/types/RoundTypes.sol";
import {LibSubmission, SubmissionId} from "../../src/types/SubmissionId.sol";
import {roundHash} from "../../src/types/RoundWord.sol";

/// @title Deployers
/// @notice Shared setup of the veritrain tests: deploys through script/Deploy.sol exactly as the
///         Python deployer does, funds and stakes a cast of actors, and scripts protocol steps.
abstract contract Deployers is PRBTest, Bound, ClaimsBook {
    ////// Constants //////

    VmExt internal constant vmx = VmExt(address(uint160(uint256(keccak256("hevm cheat code")))));

    bytes32 internal constant MODEL_ID = keccak256("digits-mlp");
    bytes32 internal constant SPEC_HASH = keccak256("canonical spec json");
    /// @notice State hash of the spec's seed-initialised state: leaf 0 of every honest run.
    bytes32 internal constant INIT_HASH = keccak256("seed-initialised state");
    /// @notice Commitments MODEL_ID is registered with (1 FLOP per step: shares = steps).
    bytes32 internal constant ARCHITECTURE = keccak256("architecture");
    bytes32 internal constant FAMILY = keccak256("family");
    string internal constant SPEC_URI = "data:application/json;base64,e30=";
    /// @notice A run's spec URI (`RunRegistry.openRun`; its contributions carry none).
    string internal constant RUN_SPEC_URI = "data:application/json;base64,eyJydW4iOnt9fQ==";
    string internal constant CHECKPOINT_URL = "http://127.0.0.1:8000/jobs/1";
    uint32 internal constant TOTAL_STEPS = 16;
    uint32 internal constant INTERVAL = 2;
    uint256 internal constant REWARD = 1000e18;
    uint256 internal constant FUNDS = 1_000_000e18;
    uint256 internal constant VERIFIER_POOL = 7;
    uint256 internal constant START_TIME = 1_700_000_000;
    uint256 internal constant START_BLOCK = 1000;

    ////// State //////

    VeriToken internal token;
    StakeManager internal stakeManager;
    ShareRegistry internal registry;
    Escrow internal escrow;
    JobManager internal jobManager;
    VerificationRound internal round;
    ArbitrationCommittee internal committee;
    BisectionGame internal game; // zero unless deployed with the bisection adjudicator
    Params internal params;

    address internal submitter;
    address internal solver;
    address internal whistleblower;
    address internal stranger;
    address[] internal verifierPool;

    /// @notice State hashes of checkpoints 0..N/k each job's solver committed.
    mapping(uint256 jobId => bytes32[] states) internal _committedStates;
    /// @notice Jobs `_postJob` has posted (each after the first gets a spec hash of its own).
    uint256 internal _posts;
    /// @notice Verifiers that sealed verdicts through `_submit` and have not revealed yet.
    mapping(uint256 jobId => address[] verifiers) internal _pendingReveals;
    /// @notice Salt of the solver's secrets (`_secret`); `_forcedVerifyingJob` searches for one.
    uint256 internal _secretSalt;
    /// @notice Reject mask each verifier sealed through `_submit`.
    mapping(uint256 jobId => mapping(address verifier => uint256 mask)) internal _sealedMasks;
    /// @notice End hashes a verifier sealed through `_submitEnds` (empty: derived from its mask).
    mapping(uint256 jobId => mapping(address verifier => bytes32[] ends)) internal _customEnds;

    ////// Setup //////

    function setUp() public virtual {
        vm.warp(START_TIME);
        vm.roll(START_BLOCK);
        _deploy(_testConfig());
        _setUpActors();
    }

    /// @notice The devnet defaults with q = N/k of the default job (8): each seat draws every
    ///         segment of a default job, so every verifier judges every sample (the settlement suites
    ///         set each verifier's verdicts freely). Own draws of fewer segments than the job has
    ///         (docs/SECURITY.md P-27) are tested in OwnDraws.t.sol.
    function _testConfig() internal pure returns (Deploy.Config memory cfg) {
        cfg = Deploy.defaultConfig();
        cfg.params.samplesPerJob = TOTAL_STEPS / INTERVAL;
    }

    function _deploy(Deploy.Config memory cfg) internal {
        Deploy.Deployment memory d = Deploy.deploy(cfg);
        token = VeriToken(address(d.token));
        stakeManager = d.stakeManager;
        registry = d.shareRegistry;
        escrow = d.escrow;
        jobManager = d.jobManager;
        round = d.verificationRound;
        committee = d.committee;
        game = d.bisectionGame;
        params = jobManager.params();
    }

    /// @notice Fresh deployment of the default config with forced-error rate `rateBps`, and actors.
    function _redeployWithRate(uint256 rateBps) internal {
        Deploy.Config memory cfg = _testConfig();
        cfg.forcedErrorRateBps = rateBps;
        _deploy(cfg);
        delete verifierPool;
        _setUpActors();
    }

    function _setUpActors() internal {
        submitter = _actor("submitter");
        solver = _actor("solver");
        whistleblower = _actor("whistleblower");
        stranger = _actor("stranger");
        _stake(solver, Role.Solver, 1000e18);
        _stake(whistleblower, Role.Whistleblower, 100e18);
        for (uint256 i; i < VERIFIER_POOL; ++i) {
            address verifier = _verifierActor(i);
            verifierPool.push(verifier);
            _stake(verifier, Role.Verifier, 500e18);
        }
        vm.prank(submitter);
        registry.registerModel(MODEL_ID, ARCHITECTURE, FAMILY, 1, INIT_HASH);
    }

    ////// Actors //////

    /// @notice A labelled, funded address that approved the Escrow and the StakeManager.
    /// @notice The pool's verifier `i` (a funded actor without a key); suites whose verifiers sign
    ///         override it with `_keyedActor`.
    function _verifierActor(uint256 i) internal virtual returns (address account) {
        account = _actor(string.concat("verifier", vm.toString(i)));
    }

    /// @notice A funded actor whose private key is `uint256(keccak256(name))`, for `vm.sign`.
    function _keyedActor(string memory name) internal returns (address account, uint256 key) {
        key = uint256(keccak256(bytes(name)));
        account = vm.addr(key);
        _fund(account, name);
    }

    function _actor(string memory name) internal returns (address account) {
        account = address(uint160(uint256(keccak256(bytes(name)))));
        _fund(account, name);
    }

    /// @notice Labels `account`, gives it FUNDS and approves the Escrow and the StakeManager.
    function _fund(address account, string memory name) internal {
        vm.label(account, name);
        vm.startPrank(account);
        token.faucet(FUNDS);
        token.approve(address(escrow), type(uint256).max);
        token.approve(address(stakeManager), type(uint256).max);
        vm.stopPrank();
    }

    function _stake(address account, Role role, uint256 amount) internal {
        vm.prank(account);
        stakeManager.stake(role, amount);
    }

    ////// Protocol steps //////

    /// @notice Posts the default job; every post after the first has a spec hash of its own, so that
    ///         no two are the same training (ShareRegistry.TrainingAlreadyPosted).
    function _postJob() internal returns (uint256 jobId) {
        bytes32 specHash = _posts == 0 ? SPEC_HASH : keccak256(abi.encode(SPEC_HASH, _posts));
        ++_posts;
        vm.prank(submitter);
        jobId = jobManager.postJob(MODEL_ID, specHash, INIT_HASH, TOTAL_STEPS, INTERVAL, REWARD, SPEC_URI);
    }

    /// @notice State hashes of checkpoints 0..N/k of an honest run: INIT_HASH, then any fixed values.
    function _stateHashes(uint32 totalSteps, uint32 interval) internal pure returns (bytes32[] memory hashes) {
        hashes = new bytes32[](totalSteps / interval + 1);
        hashes[0] = INIT_HASH;
        for (uint256 i = 1; i < hashes.length; ++i) {
            hashes[i] = sha256(abi.encode("state", i));
        }
    }

    /// @notice Proof of leaf 0 of the tree of `states` (what `commitCheckpoints` takes as `initProof`).
    function _initProof(uint32 interval, bytes32[] memory states) internal pure returns (bytes32[] memory) {
        return Merkle.proof(Merkle.leaves(interval, states), 0);
    }

    /// @notice Leaves of a tree that commits checkpoint 0 = INIT_HASH and nothing else (every other
    ///         position holds ZERO_LEAF): a commitment `commitCheckpoints` accepts for a job of
    ///         `totalSteps` / `interval`, whose other checkpoints cannot be proved.
    function _initOnlyLeaves(uint32 totalSteps, uint32 interval) internal pure returns (bytes32[] memory leaves) {
        leaves = new bytes32[](totalSteps / interval + 1);
        leaves[0] = LibCheckpoint.leafHash(0, 0, INIT_HASH);
    }

    /// @notice Root of `_initOnlyLeaves(totalSteps, interval)`.
    function _initRoot(uint32 totalSteps, uint32 interval) internal pure returns (bytes32) {
        return Merkle.root(_initOnlyLeaves(totalSteps, interval));
    }

    /// @notice Proof of checkpoint 0 in `_initOnlyLeaves(totalSteps, interval)`.
    function _initOnlyProof(uint32 totalSteps, uint32 interval) internal pure returns (bytes32[] memory) {
        return Merkle.proof(_initOnlyLeaves(totalSteps, interval), 0);
    }

    function _root(uint32 totalSteps, uint32 interval) internal pure returns (bytes32) {
        return Merkle.root(Merkle.leaves(interval, _stateHashes(totalSteps, interval)));
    }

    /// @notice The solver's forced-error secret of a job.
    function _secret(uint256 jobId) internal view returns (bytes32) {
        uint256 salt = _secretSalt;
        return salt == 0 ? keccak256(abi.encode("secret", jobId)) : keccak256(abi.encode("secret", jobId, salt));
    }

    /// @notice keccak256(abi.encode(jobId, solver, secret)), as the solver commits it.
    function _secretCommitment(uint256 jobId, address account) internal view returns (bytes32) {
        return keccak256(abi.encode(jobId, account, _secret(jobId)));
    }

    /// @inheritdoc ClaimsBook
    function _secretCommitmentOf(SubmissionId submissionId) internal view override returns (bytes32) {
        return roundHash(_secretCommitment(LibSubmission.jobIdOf(submissionId), LibSubmission.solverOf(submissionId)));
    }

    function _claimAndCommit(uint256 jobId) internal {
        vm.prank(solver);
        jobManager.claimJob(jobId);
        Job memory job = jobManager.getJob(jobId);
        _commit(jobId, solver, _stateHashes(job.totalSteps, job.checkpointInterval));
    }

    /// @notice `account` (the job's solver) commits the tree of `states` with the secret of `_secret`.
    function _commit(uint256 jobId, address account, bytes32[] memory states) internal {
        // Computed before the prank: sha256/calls would consume it.
        uint32 interval = jobManager.getJob(jobId).checkpointInterval;
        bytes32 root = Merkle.root(Merkle.leaves(interval, states));
        bytes32[] memory initProof = _initProof(interval, states);
        _committedStates[jobId] = states;
        bytes32 commitment = _secretCommitment(jobId, account);
        vm.prank(account);
        jobManager.commitCheckpoints(jobId, root, initProof, CHECKPOINT_URL, commitment);
    }

    /// @notice Assigns verifiers and, if assigned, the solver posts its claims.
    function _assign(uint256 jobId) internal {
        vm.roll(block.number + 2);
        jobManager.assignVerifiers(jobId);
        if (_job(jobId).status == JobStatus.Verifying) _postClaims(jobId);
    }

    /// @notice The solver's claims on the sampled segments: committed start and end states, with the
    ///         forced claim on the forced sample if the draw says so.
    function _claims(uint256 jobId) internal view returns (bytes32[] memory starts, bytes32[] memory ends) {
        (, uint32[] memory segments) = jobManager.getAssignment(jobId);
        bytes32[] storage states = _committedStates[jobId];
        starts = new bytes32[](segments.length);
        ends = new bytes32[](segments.length);
        for (uint256 j; j < segments.length; ++j) {
            starts[j] = states[segments[j]];
            ends[j] = states[segments[j] + 1];
        }
        (bool forced, uint256 f) = round.drawForcedError(_sid(jobId), _secret(jobId));
        if (forced) ends[f] = round.forcedClaim(ends[f]);
    }

    /// @notice The job's solver posts its claims.
    function _postClaims(uint256 jobId) internal {
        (bytes32[] memory starts, bytes32[] memory ends) = _postClaimsCall(jobId);
        _bookClaims(round, _sid(jobId), starts, ends);
    }

    /// @notice The solver's `postClaims` transaction alone, the last call made (gas snapshots
    ///         measure it); the caller books the claims afterwards (`_bookClaims`).
    function _postClaimsCall(uint256 jobId) internal returns (bytes32[] memory starts, bytes32[] memory ends) {
        (starts, ends) = _claims(jobId);
        address account = _job(jobId).solver;
        vm.prank(account);
        round.postClaims(_sid(jobId), starts, ends);
    }

    function _claimsPosted(uint256 jobId) internal view returns (bool) {
        (,,, uint64 claimsBlock) = round.roundOf(_sid(jobId));
        return claimsBlock != 0;
    }

    /// @notice The job's solver reveals its secret with proofs of every claim (inside its window).
    function _revealSecret(uint256 jobId) internal {
        _solverReveals(jobId, false);
    }

    /// @notice `_revealSecret` and the finalize in one call (`revealSecretAndFinalize`).
    function _revealSecretAndFinalize(uint256 jobId) internal {
        _solverReveals(jobId, true);
    }

    function _solverReveals(uint256 jobId, bool andFinalize) private {
        bytes32[] memory proof = _claimsProofOf(jobId);
        bytes32 trueEnd = _forcedTrueEnd(jobId);
        address account = _job(jobId).solver;
        bytes32 secret = _secret(jobId);
        Claims memory claims = _claimsArg(_sid(jobId));
        vm.prank(account);
        if (andFinalize) {
            round.revealSecretAndFinalize(_sid(jobId), secret, trueEnd, proof, claims);
        } else {
            round.revealSecret(_sid(jobId), secret, trueEnd, proof, claims);
        }
    }

    /// @notice The multiproof of the committed start and end leaf of every sample (what the secret
    ///         reveal carries).
    function _claimsProofOf(uint256 jobId) internal view returns (bytes32[] memory proof) {
        (, uint32[] memory segments) = jobManager.getAssignment(jobId);
        bytes32[] memory leaves = Merkle.leaves(_job(jobId).checkpointInterval, _committedStates[jobId]);
        proof = Merkle.multiproof(leaves, Merkle.claimIndices(segments));
    }

    /// @notice True end state of the forced sample (zero if none).
    function _forcedTrueEnd(uint256 jobId) internal view returns (bytes32) {
        (bool forced, uint256 f) = round.drawForcedError(_sid(jobId), _secret(jobId));
        if (!forced) return bytes32(0);
        (, uint32[] memory segments) = jobManager.getAssignment(jobId);
        return _committedStates[jobId][segments[f] + 1];
    }

    /// @notice A job posted, claimed, committed and assigned (status Verifying), with the claims posted.
    function _verifyingJob() internal returns (uint256 jobId) {
        jobId = _postJob();
        _claimAndCommit(jobId);
        _assign(jobId);
    }

    /// @notice A Verifying job (claims posted) whose draw carries a forced error: tries secrets until
    ///         one forces (a rate of 10_000 is refused while a jackpot is paid, docs/FORCED_ERRORS.md
    ///         section 5), reverting the state between tries.
    function _forcedVerifyingJob() internal returns (uint256 jobId) {
        jobId = _forcedAssignedJob();
        _postClaims(jobId);
    }

    /// @notice A job posted, claimed, committed and assigned (claims not posted) whose draw carries
    ///         a forced error (see `_forcedVerifyingJob`).
    function _forcedAssignedJob() internal returns (uint256 jobId) {
        for (uint256 salt = 1;; ++salt) {
            uint256 snapshot = vmx.snapshotState();
            _secretSalt = salt;
            jobId = _postJob();
            _claimAndCommit(jobId);
            vm.roll(block.number + 2);
            jobManager.assignVerifiers(jobId);
            (bool forced,) = round.drawForcedError(_sid(jobId), _secret(jobId));
            if (forced) return jobId;
            vmx.revertToState(snapshot);
        }
    }

    function _assigned(uint256 jobId) internal view returns (address[] memory verifiers) {
        (verifiers,) = jobManager.getAssignment(jobId);
    }

    function _samples(uint256 jobId) internal view returns (uint256) {
        (, uint32[] memory segments) = jobManager.getAssignment(jobId);
        return segments.length;
    }

    function _approvals(uint256 count, uint256 rejectMask) internal pure returns (bool[] memory approvals) {
        approvals = new bool[](count);
        for (uint256 i; i < count; ++i) {
            approvals[i] = (rejectMask >> i) & 1 == 0;
        }
    }

    function _verdictSalt(uint256 jobId, address verifier) internal pure returns (bytes32) {
        return keccak256(abi.encode("verdict salt", jobId, verifier));
    }

    /// @notice keccak256(abi.encode(jobId, verifier, ends, salt)), as a verifier seals it.
    function _verdictCommitment(uint256 jobId, address verifier, bytes32[] memory ends, bytes32 salt)
        internal
        pure
        returns (bytes32)
    {
        return keccak256(abi.encode(jobId, verifier, ends, salt));
    }

    /// @notice The end hashes an honest verifier seals for `rejectMask` (bit j set = reject sample
    ///         j): the claimed end for an approval; for a rejection the committed end (what a replay
    ///         of an honest solver's segment yields, so a forced claim's true end) or, where that is
    ///         the claim itself, another hash (a replay that disagrees).
    function _ends(uint256 jobId, uint256 rejectMask) internal view returns (bytes32[] memory ends) {
        (, bytes32[] memory claimed) = _claimsOf(_sid(jobId));
        (, uint32[] memory segments) = jobManager.getAssignment(jobId);
        ends = new bytes32[](claimed.length);
        for (uint256 j; j < claimed.length; ++j) {
            if ((rejectMask >> j) & 1 == 0) {
                ends[j] = claimed[j];
                continue;
            }
            bytes32[] storage states = _committedStates[jobId];
            // A test that commits its own tree keeps no states here: its rejecters replay otherwise.
            bytes32 committed = states.length > segments[j] + 1 ? states[segments[j] + 1] : claimed[j];
            ends[j] = committed != claimed[j] ? committed : keccak256(abi.encode("another replay", claimed[j]));
        }
    }

    /// @notice The ends `verifier` sealed through `_submit` or `_submitEnds`.
    function _sealedEnds(uint256 jobId, address verifier) internal view returns (bytes32[] memory) {
        bytes32[] storage custom = _customEnds[jobId][verifier];
        return custom.length != 0 ? custom : _ends(jobId, _sealedMasks[jobId][verifier]);
    }

    /// @notice `verifier` seals exactly `ends` (revealed like `_submit`'s).
    function _submitEnds(uint256 jobId, address verifier, bytes32[] memory ends) internal {
        if (!_claimsPosted(jobId)) _postClaims(jobId);
        _customEnds[jobId][verifier] = ends;
        _sealVerdicts(jobId, verifier);
    }

    /// @notice `verifier` gives its verdicts (bit i of `rejectMask` set = reject sample i): it seals
    ///         them now; they are revealed (and recorded at the JobManager) as soon as every assigned
    ///         verifier has sealed, else by `_revealPending` / `_passChallengeWindow`.
    function _submit(uint256 jobId, address verifier, uint256 rejectMask) internal {
        if (!_claimsPosted(jobId)) _postClaims(jobId);
        _sealedMasks[jobId][verifier] = rejectMask;
        _sealVerdicts(jobId, verifier);
    }

    /// @notice Seals `_sealedEnds(jobId, verifier)`; reveals every pending seal once all are in.
    function _sealVerdicts(uint256 jobId, address verifier) internal {
        bytes32[] memory ends = _sealedEnds(jobId, verifier);
        bytes32 commitment = _verdictCommitment(jobId, verifier, ends, _verdictSalt(jobId, verifier));
        vm.prank(verifier);
        round.commitVerdicts(_sid(jobId), commitment);
        _pendingReveals[jobId].push(verifier);
        (,, uint32 committed,) = round.roundOf(_sid(jobId));
        if (committed == _assigned(jobId).length) _revealPending(jobId);
    }

    /// @notice Reveals every verdict sealed through `_submit` and not revealed yet, warping past
    ///         the verdict deadline first unless every verifier has sealed.
    function _revealPending(uint256 jobId) internal {
        address[] storage pending = _pendingReveals[jobId];
        if (pending.length == 0) return;
        (,, uint32 committed,) = round.roundOf(_sid(jobId));
        uint64 verdictDeadline = _job(jobId).verdictDeadline;
        if (committed < _assigned(jobId).length && block.timestamp <= verdictDeadline) {
            vm.warp(uint256(verdictDeadline) + 1);
        }
        for (uint256 i; i < pending.length; ++i) {
            address verifier = pending[i];
            bytes32[] memory ends = _sealedEnds(jobId, verifier);
            bytes32 salt = _verdictSalt(jobId, verifier);
            vm.prank(verifier);
            round.revealVerdicts(_sid(jobId), ends, salt, _claimsArg(_sid(jobId)));
        }
        delete _pendingReveals[jobId];
    }

    function _submitAll(uint256 jobId, uint256 rejectMask) internal {
        address[] memory verifiers = _assigned(jobId);
        for (uint256 i; i < verifiers.length; ++i) {
            _submit(jobId, verifiers[i], rejectMask);
        }
    }

    /// @notice Reveals the sealed verdicts still pending, passes the challenge deadline and, if the
    ///         solver posted claims, reveals its secret (so that `finalize` can settle the round).
    function _passChallengeWindow(uint256 jobId) internal {
        _revealPending(jobId);
        vm.warp(uint256(jobManager.getJob(jobId).challengeDeadline) + 1);
        (, bool revealed,,) = round.roundOf(_sid(jobId));
        if (_claimsPosted(jobId) && !revealed && _uncovered(jobId) == 0) _revealSecret(jobId);
    }

    /// @notice Samples of `jobId` that no revealed verdict of a seat holding them covers (bit i =
    ///         sample i, docs/SECURITY.md P-27): the secret cannot be revealed while any is left.
    function _uncovered(uint256 jobId) internal view returns (uint256 open) {
        open = (uint256(1) << _samples(jobId)) - 1;
        address[] memory seats = _assigned(jobId);
        for (uint256 i; i < seats.length; ++i) {
            (, bool revealed) = round.verdictCommitmentOf(_sid(jobId), seats[i]);
            if (revealed) open &= ~jobManager.sampleMaskOf(jobId, seats[i]);
        }
    }

    /// @notice Passes the challenge window and finalizes, arbitrating every dispute the job opens with `segmentValid`.
    function _settle(uint256 jobId, bool segmentValid) internal {
        _passChallengeWindow(jobId);
        jobManager.finalize(jobId);
        for (uint256 guard; guard < 64 && _job(jobId).status == JobStatus.Disputed; ++guard) {
            _arbitrate(_job(jobId).disputeId, segmentValid);
            if (_job(jobId).status == JobStatus.Disputed) jobManager.finalize(jobId);
        }
    }

    function _drawCommittee(uint256 disputeId) internal returns (address[] memory members) {
        vm.roll(block.number + 2);
        committee.drawCommittee(disputeId);
        members = committee.committeeOf(disputeId);
    }

    function _salt(address member) internal pure returns (bytes32) {
        return keccak256(abi.encode("salt", member));
    }

    function _commitVote(uint256 disputeId, address member, bool segmentValid) internal {
        bytes32 commitment = committee.voteHash(disputeId, member, segmentValid, _salt(member));
        vm.prank(member);
        committee.commitVote(disputeId, commitment);
    }

    function _revealVote(uint256 disputeId, address member, bool segmentValid) internal {
        vm.prank(member);
        committee.revealVote(disputeId, segmentValid, _salt(member));
    }

    /// @notice Draws the committee; every member votes `segmentValid`; resolves.
    function _arbitrate(uint256 disputeId, bool segmentValid) internal returns (address[] memory members) {
        members = _drawCommittee(disputeId);
        for (uint256 i; i < members.length; ++i) {
            _commitVote(disputeId, members[i], segmentValid);
        }
        for (uint256 i; i < members.length; ++i) {
            _revealVote(disputeId, members[i], segmentValid);
        }
        committee.resolve(disputeId);
    }

    function _dispute(uint256 disputeId) internal view returns (Dispute memory) {
        return committee.getDispute(disputeId);
    }

    /// @notice The job's active submission (the id the VerificationRound keys its round by).
    /// @dev Reads the job's solver with `vm.load` (slot 1 = `JobManager._jobs`, word 1 = solver), not
    ///      with a call, so that a pending `vm.prank`/`vm.expectRevert` still applies to the next real
    ///      call. `JobManager_Views_Test.test_submissionOf_matchesStorageRead_succeeds` pins the slot.
    function _sid(uint256 jobId) internal view returns (SubmissionId) {
        bytes32 base = keccak256(abi.encode(jobId, uint256(1)));
        address current = address(uint160(uint256(vm.load(address(jobManager), bytes32(uint256(base) + 1)))));
        return current == address(0) ? SubmissionId.wrap(bytes32(0)) : LibSubmission.id(jobId, current);
    }

    /// @notice Appends finalized slot job `jobId`'s final state (its last committed leaf) to its
    ///         model's lineage, as its solver does after finalize: this mints the job's shares.
    function _appendFinalState(uint256 jobId) internal {
        bytes32[] storage states = _committedStates[jobId];
        bytes32[] memory proof = Merkle.proof(Merkle.leaves(_job(jobId).checkpointInterval, states), states.length - 1);
        registry.extendLineage(_job(jobId).modelId, states[states.length - 1], proof);
    }

    function _job(uint256 jobId) internal view returns (Job memory) {
        return jobManager.getJob(jobId);
    }

    /// @notice Everything `account` owns in the token (wei): its balance, its Escrow credit and its
    ///         stake in every role, unbonding included. Attack tests compare it before and after.
    function _holdings(address account) internal view returns (uint256 total) {
        total = token.balanceOf(account) + escrow.creditOf(account);
        for (uint256 r; r < 3; ++r) {
            (uint256 staked,, uint256 unbonding,) = stakeManager.stakeOf(account, Role(r));
            total += staked + unbonding;
        }
    }

    /// @notice Shares of `modelId` minted so far (0 while the model has no token).
    function _sharesMinted(bytes32 modelId) internal view returns (uint256 minted) {
        address shares = registry.sharesOf(modelId);
        minted = shares == address(0) ? 0 : ModelShares(shares).totalSupply();
    }

    function _staked(address account, Role role) internal view returns (uint256 staked) {
        (staked,,,) = stakeManager.stakeOf(account, role);
    }

    function _locked(address account, Role role) internal view returns (uint256 locked) {
        (, locked,,) = stakeManager.stakeOf(account, role);
    }

    /// @notice A one-entry list of `account` (a job's end restakes its solver in a call of its own).
    function _accountList(address account) internal pure returns (address[] memory list) {
        list = new address[](1);
        list[0] = account;
    }

    /// @notice A one-entry list of `amount` (a batch event's amount shared by every account).
    function _amountList(uint256 amount) internal pure returns (uint256[] memory list) {
        list = new uint256[](1);
        list[0] = amount;
    }

    /// @notice Expects a job's end to send its parties' earnings, `total` (wei: the solver's
    ///         reward and the seats' fees and jackpots), from the job's escrow to the StakeManager
    ///         in one payment (`LibPayouts.fundStakes`), which then restakes them.
    function _expectStakesFunded(uint256 total) internal {
        vm.expectEmit(address(escrow));
        emit IEscrow.Paid(address(jobManager), address(stakeManager), Bucket.Escrowed, total);
    }

    /// @notice Expects a job's end to unlock `account`'s solverStake and restake its `reward`
    ///         (wei) in one StakeManager call (`LibPayouts.releaseSolver`).
    function _expectSolverRestaked(address account, uint256 reward) internal {
        vm.expectEmit(address(stakeManager));
        emit IStakeManager.StakesRestaked(
            Role.Solver, _accountList(account), _amountList(params.solverStake), _amountList(reward)
        );
    }

    /// @notice Expects a job's end to unlock `unlocked` (wei) of each seat's verifier stake and
    ///         restake `earned` (wei) on each, the same for every seat, in one StakeManager call
    ///         (`LibPayouts.releaseSeats`).
    function _expectSeatsRestaked(address[] memory seats, uint256 unlocked, uint256 earned) internal {
        vm.expectEmit(address(stakeManager));
        emit IStakeManager.StakesRestaked(Role.Verifier, seats, _amountList(unlocked), _amountList(earned));
    }

    /// @notice Verifier stake a seat's draw locks: verifierStake and its first reject bond.
    function _seatLock() internal view returns (uint256 amount) {
        amount = params.verifierStake + params.challengeBond;
    }

    /// @notice Verifier stake a reveal with `rejects` non-approvals of the seat's own samples locks:
    ///         a challengeBond each but the first, which the seat's lock holds (`_seatLock`).
    function _revealLock(uint256 rejects) internal view returns (uint256 amount) {
        if (rejects > 1) amount = (rejects - 1) * params.challengeBond;
    }

    /// @notice Past the verdict reveals and the challenge deadline of `jobId`'s current draw,
    ///         finalize reassigns (some sample has no standing verdict), and the new randomness is
    ///         mined.
    function _reassign(uint256 jobId) internal {
        uint256 closes = uint256(_job(jobId).verdictDeadline) + params.revealWindow;
        uint256 challenge = _job(jobId).challengeDeadline;
        vm.warp((closes > challenge ? closes : challenge) + 1);
        jobManager.finalize(jobId);
        assertEq(uint8(_job(jobId).status), uint8(JobStatus.Committed), "reassigning");
        vm.roll(block.number + 2);
    }

    function _isIn(address[] memory list, address account) internal pure returns (bool) {
        for (uint256 i; i < list.length; ++i) {
            if (list[i] == account) return true;
        }
        return false;
    }

    /// @notice Token balance of the Escrow minus everything it owes (must never be negative); the
    ///         JobManager holds no tokens.
    function _assertEscrowSolvent() internal {
        (uint256 escrowed, uint256 bonds, uint256 credits, uint256 pool) = escrow.liabilities();
        assertGte(token.balanceOf(address(escrow)), escrowed + bonds + credits + pool, "Escrow insolvent");
        assertEq(token.balanceOf(address(jobManager)), 0, "JobManager holds tokens");
    }
}
