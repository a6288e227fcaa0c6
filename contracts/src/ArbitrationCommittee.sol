// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

// Contracts
import {ReentrancyGuardTransient} from "@openzeppelin/contracts/utils/ReentrancyGuardTransient.sol";
// Interfaces
import {IAdjudicator} from "./interfaces/IAdjudicator.sol";
import {IArbitrationCommittee} from "./interfaces/IArbitrationCommittee.sol";
import {IClaimParent} from "./interfaces/IClaimParent.sol";
import {IJobManager} from "./interfaces/IJobManager.sol";
import {IStakeManager} from "./interfaces/IStakeManager.sol";
import {IStepAdjudicator, IStepParent} from "./interfaces/IStepAdjudicator.sol";
// Types
import {StepClaim} from "./types/BisectionTypes.sol";
import {Dispute, DisputePhase, DisputeStatus} from "./types/DisputeTypes.sol";
import {Role} from "./types/Role.sol";

/// @title ArbitrationCommittee
/// @notice v0 `IAdjudicator`: K staked verifiers, drawn with the hash of a block mined after the
///         dispute opened, vote commit-reveal on whether a segment is valid. Voters' seats are
///         unlocked on resolution; members that did not reveal keep their seat locked and are
///         slashed by the JobManager (`nonVoters`). Also the v0 `IStepAdjudicator`: one parent game
///         (the bisection game), authorized once by the JobManager's admin, opens one-step disputes
///         that the same draw / commit / reveal / resolve logic judges; their outcome goes to the
///         parent (`onStepResolved`), which forwards it to the JobManager. And one claim parent (the
///         RunRegistry), authorized once the same way, opens claim disputes on round claims of
///         training runs; their outcome goes to the claim parent (`onClaimResolved`), which slashes
///         the non-voters and pays the majority itself.
/// @dev Deployment: `constructor(jobManager, stakeManager, committeeSize, voteCommitWindow,
///      voteRevealWindow)` after the JobManager, at the address the StakeManager was given as a
///      protocol contract (it locks and slashes arbiter stake); must be set as the JobManager's
///      adjudicator. The seat stake is the JobManager's `verifierStake`.
contract ArbitrationCommittee is ReentrancyGuardTransient, IArbitrationCommittee {
    ////// Types //////

    /// @notice A member's seat and vote. `member` is set by the draw in the same word that the
    ///         reveal rewrites, so a reveal updates a live word instead of creating one.
    struct Ballot {
        bytes32 commitment;
        bool member;
        bool revealed;
        bool segmentValid;
    }

    /// @notice A step claim as stored: its three small fields in one word. The two hashes stay
    ///         with the parent game, which fixed them before opening the dispute
    ///         (`IStepParent.stepHashesOf`); `stepClaimOf` joins them.
    struct StoredStepClaim {
        bool isStep;
        uint32 step;
        uint32 steps;
    }

    ////// Constants / Immutables //////

    /// @notice Largest committee.
    uint256 public constant MAX_COMMITTEE_SIZE = 64;

    IJobManager internal immutable _JOB_MANAGER;
    IStakeManager internal immutable _STAKE_MANAGER;
    /// @notice Verifier stake locked per seat (wei): the JobManager's `verifierStake`, fixed at its
    ///         construction, so it is read once here instead of stored per dispute.
    uint256 internal immutable _SEAT_STAKE;
    uint32 internal immutable _COMMITTEE_SIZE;
    uint64 internal immutable _VOTE_COMMIT_WINDOW;
    uint64 internal immutable _VOTE_REVEAL_WINDOW;

    ////// State //////

    uint256 internal _disputeCount;
    mapping(uint256 disputeId => Dispute dispute) internal _disputes;
    /// @notice Members by seat index, `Dispute.size` of them (no list length word to write).
    mapping(uint256 disputeId => mapping(uint256 index => address member)) internal _members;
    /// @notice Excluded accounts of claim disputes only: a segment or step dispute's excluded
    ///         accounts and reserve are re-derived from the JobManager's views (`_drawSets`).
    mapping(uint256 disputeId => address[] accounts) internal _excluded;
    mapping(uint256 disputeId => mapping(address member => Ballot ballot)) internal _ballots;
    address internal _stepParent;
    mapping(uint256 disputeId => StoredStepClaim claim) internal _stepClaims;
    address internal _claimParent;
    mapping(uint256 disputeId => bool isClaim) internal _claimDisputes;

    ////// Constructor //////

    /// @param jobManager_ JobManager served (the only caller of `openDispute`).
    /// @param stakeManager_ StakeManager (must name this contract as its committee).
    /// @param committeeSize_ K: members per dispute (odd avoids ties), 1..64.
    /// @param voteCommitWindow_ Length of the commit phase (seconds), > 0.
    /// @param voteRevealWindow_ Length of the reveal phase (seconds), > 0.
    constructor(
        IJobManager jobManager_,
        IStakeManager stakeManager_,
        uint32 committeeSize_,
        uint64 voteCommitWindow_,
        uint64 voteRevealWindow_
    ) {
        if (address(jobManager_) == address(0) || address(stakeManager_) == address(0)) {
            revert ZeroAddress();
        }
        if (committeeSize_ == 0 || committeeSize_ > MAX_COMMITTEE_SIZE) {
            revert InvalidParam("committeeSize", committeeSize_);
        }
        if (voteCommitWindow_ == 0) revert InvalidParam("voteCommitWindow", 0);
        if (voteRevealWindow_ == 0) revert InvalidParam("voteRevealWindow", 0);
        _JOB_MANAGER = jobManager_;
        _STAKE_MANAGER = stakeManager_;
        _COMMITTEE_SIZE = committeeSize_;
        _VOTE_COMMIT_WINDOW = voteCommitWindow_;
        _VOTE_REVEAL_WINDOW = voteRevealWindow_;
        // SAFETY: trusted JobManager, deployed first; params() is a view over immutables.
        _SEAT_STAKE = jobManager_.params().verifierStake;
    }

    ////// External //////

    /// @inheritdoc IAdjudicator
    /// @dev The committee replays the segment itself: its ruling binds every challenger of the sample
    ///      (`challengerOnly = false`), so `challenger` is not needed.
    function openDispute(
        uint256 jobId,
        uint32 segment,
        address,
        address[] calldata excluded,
        address[] calldata reserve
    ) external returns (uint256 disputeId, bool challengerOnly) {
        if (msg.sender != address(_JOB_MANAGER)) revert NotJobManager(msg.sender);
        disputeId = _open(jobId, segment, excluded, reserve);
        challengerOnly = false;
    }

    /// @inheritdoc IArbitrationCommittee
    function setStepParent(address parent) external {
        // SAFETY: trusted JobManager view; its admin is the deployment's admin.
        if (msg.sender != _JOB_MANAGER.admin()) revert NotAdmin(msg.sender);
        if (parent == address(0)) revert ZeroAddress();
        if (_stepParent != address(0)) revert StepParentAlreadySet(_stepParent);
        _stepParent = parent;
        emit StepParentSet(parent);
    }

    /// @inheritdoc IArbitrationCommittee
    function setClaimParent(address parent) external {
        // SAFETY: trusted JobManager view; its admin is the deployment's admin.
        if (msg.sender != _JOB_MANAGER.admin()) revert NotAdmin(msg.sender);
        if (parent == address(0)) revert ZeroAddress();
        if (_claimParent != address(0)) revert ClaimParentAlreadySet(_claimParent);
        _claimParent = parent;
        emit ClaimParentSet(parent);
    }

    /// @inheritdoc IArbitrationCommittee
    /// @dev No job is judged: jobId and segment are 0 and the reserve is empty (the draw seed still
    ///      differs per dispute, it includes the dispute id).
    function openClaimDispute(address[] calldata excluded) external returns (uint256 disputeId) {
        address parent = _claimParent;
        if (msg.sender != parent || parent == address(0)) revert NotClaimParent(msg.sender);
        disputeId = _open(0, 0, excluded, excluded[0:0]);
        _excluded[disputeId] = excluded;
        _claimDisputes[disputeId] = true;
        emit ClaimDisputeOpened(disputeId, parent);
    }

    /// @inheritdoc IStepAdjudicator
    /// @dev The dispute's `segment` is the segment holding the step (t / k), so a node that only
    ///      reads `getDispute` still knows which checkpoint to replay from; `stepClaimOf` is the
    ///      authoritative question.
    function openStepDispute(
        uint256 jobId,
        uint32 step,
        uint32 steps,
        bytes32 startHash,
        bytes32 claimedEndHash,
        address[] calldata excluded,
        address[] calldata reserve
    ) external returns (uint256 disputeId) {
        address parent = _stepParent;
        if (msg.sender != parent || parent == address(0)) revert NotStepParent(msg.sender);
        // SAFETY: trusted JobManager view; k >= 1 for every committed job.
        uint32 segment = step / _JOB_MANAGER.getJob(jobId).checkpointInterval;
        disputeId = _open(jobId, segment, excluded, reserve);
        _stepClaims[disputeId] = StoredStepClaim({isStep: true, step: step, steps: steps});
        emit StepDisputeOpened(disputeId, parent, jobId, step, startHash, claimedEndHash);
    }

    /// @inheritdoc IArbitrationCommittee
    function drawCommittee(uint256 disputeId) external nonReentrant {
        Dispute storage dispute = _disputes[disputeId];
        DisputePhase phase = phaseOf(disputeId);
        if (phase != DisputePhase.AwaitingCommittee) revert UnexpectedDisputePhase(disputeId, phase);
        uint64 randomnessBlock = dispute.randomnessBlock;
        if (block.number <= randomnessBlock) revert RandomnessNotReady(disputeId, randomnessBlock, block.number);
        bytes32 blockHash = blockhash(randomnessBlock);
        if (blockHash == bytes32(0)) {
            // The hash is only available for the last 256 blocks: anchor to the next block instead.
            uint64 next = uint64(block.number + 1);
            dispute.randomnessBlock = next;
            emit RandomnessReanchored(disputeId, next);
            return;
        }
        bytes32 seed = keccak256(abi.encode(blockHash, disputeId, dispute.jobId, dispute.segment));
        (address[] memory members, uint256 candidates) = _drawMembers(disputeId, seed, dispute.jobId);
        // An empty draw, not a balance: the length counts the members drawn from the stake set.
        // slither-disable-next-line incorrect-equality
        if (members.length == 0) revert NoEligibleArbiters(disputeId, candidates);

        uint64 commitDeadline = uint64(block.timestamp) + _VOTE_COMMIT_WINDOW;
        uint64 revealDeadline = commitDeadline + _VOTE_REVEAL_WINDOW;
        dispute.status = DisputeStatus.Voting;
        dispute.commitDeadline = commitDeadline;
        dispute.revealDeadline = revealDeadline;
        // SAFETY: at most K <= MAX_COMMITTEE_SIZE = 64 members.
        // forge-lint: disable-next-line(unsafe-typecast)
        dispute.size = uint32(members.length);
        for (uint256 i; i < members.length; ++i) {
            _members[disputeId][i] = members[i];
            _ballots[disputeId][members[i]].member = true;
        }
        emit CommitteeDrawn(disputeId, members, commitDeadline, revealDeadline);
        _STAKE_MANAGER.lockEach(members, Role.Verifier, _SEAT_STAKE);
    }

    /// @inheritdoc IArbitrationCommittee
    function commitVote(uint256 disputeId, bytes32 commitment) external {
        DisputePhase phase = phaseOf(disputeId);
        if (phase != DisputePhase.Commit) revert UnexpectedDisputePhase(disputeId, phase);
        Ballot storage ballot = _ballots[disputeId][msg.sender];
        if (!ballot.member) revert NotCommitteeMember(disputeId, msg.sender);
        if (commitment == bytes32(0)) revert ZeroCommitment(disputeId);
        if (ballot.commitment != bytes32(0)) revert VoteAlreadyCommitted(disputeId, msg.sender);
        Dispute storage dispute = _disputes[disputeId];
        ballot.commitment = commitment;
        uint32 committed = ++dispute.committed;
        emit VoteCommitted(disputeId, msg.sender, commitment);
        if (committed == dispute.size) {
            // Everyone committed: the reveal phase starts now.
            uint64 revealDeadline = uint64(block.timestamp) + _VOTE_REVEAL_WINDOW;
            dispute.revealDeadline = revealDeadline;
            emit RevealPhaseStarted(disputeId, revealDeadline);
        }
    }

    /// @inheritdoc IArbitrationCommittee
    function revealVote(uint256 disputeId, bool segmentValid, bytes32 salt) external {
        DisputePhase phase = phaseOf(disputeId);
        if (phase != DisputePhase.Reveal) revert UnexpectedDisputePhase(disputeId, phase);
        Ballot storage ballot = _ballots[disputeId][msg.sender];
        if (!ballot.member) revert NotCommitteeMember(disputeId, msg.sender);
        if (ballot.commitment == bytes32(0)) revert VoteNotCommitted(disputeId, msg.sender);
        if (ballot.revealed) revert VoteAlreadyRevealed(disputeId, msg.sender);
        bytes32 actual = voteHash(disputeId, msg.sender, segmentValid, salt);
        if (actual != ballot.commitment) revert VoteMismatch(disputeId, msg.sender, ballot.commitment, actual);
        Dispute storage dispute = _disputes[disputeId];
        ballot.revealed = true;
        ballot.segmentValid = segmentValid;
        ++dispute.revealed;
        if (segmentValid) ++dispute.validVotes;
        else ++dispute.invalidVotes;
        emit VoteRevealed(disputeId, msg.sender, segmentValid);
    }

    /// @inheritdoc IArbitrationCommittee
    function resolve(uint256 disputeId) external nonReentrant {
        DisputePhase phase = phaseOf(disputeId);
        if (phase != DisputePhase.Resolvable) revert UnexpectedDisputePhase(disputeId, phase);
        Dispute storage dispute = _disputes[disputeId];
        // A tie, or no vote at all, keeps the solver's commitment (a claim dispute: the claim) valid.
        bool segmentValid = dispute.invalidVotes <= dispute.validVotes;
        (address[] memory majority, address[] memory nonVoters, address[] memory voters) =
            _tally(disputeId, segmentValid);
        dispute.status = DisputeStatus.Resolved;
        dispute.segmentValid = segmentValid;
        emit DisputeResolved(disputeId, segmentValid, majority, nonVoters);

        // Interactions with trusted protocol contracts, after all state changes. Non-voters' seats
        // stay locked: the JobManager slashes them (a step parent forwards them to it; a claim
        // parent slashes them itself).
        _STAKE_MANAGER.unlockEach(voters, Role.Verifier, _SEAT_STAKE);
        if (_claimDisputes[disputeId]) {
            // SAFETY: the claim parent was authorized by the admin.
            IClaimParent(_claimParent).onClaimResolved(disputeId, segmentValid, majority, nonVoters);
        } else if (_stepClaims[disputeId].isStep) {
            // SAFETY: the parent was authorized by the admin and reports to the JobManager itself.
            IStepParent(_stepParent).onStepResolved(disputeId, segmentValid, majority, nonVoters);
        } else {
            _JOB_MANAGER.onDisputeResolved(disputeId, segmentValid, majority, nonVoters);
        }
    }

    ////// External: views //////

    /// @inheritdoc IArbitrationCommittee
    function getDispute(uint256 disputeId) external view returns (Dispute memory dispute) {
        dispute = _disputes[disputeId];
        if (dispute.status != DisputeStatus.None) dispute.seatStake = _SEAT_STAKE;
    }

    /// @inheritdoc IArbitrationCommittee
    function committeeOf(uint256 disputeId) external view returns (address[] memory members) {
        uint256 size = _disputes[disputeId].size;
        members = new address[](size);
        for (uint256 i; i < size; ++i) {
            members[i] = _members[disputeId][i];
        }
    }

    /// @inheritdoc IArbitrationCommittee
    function ballotOf(uint256 disputeId, address member)
        external
        view
        returns (bytes32 commitment, bool revealed, bool segmentValid)
    {
        Ballot storage ballot = _ballots[disputeId][member];
        return (ballot.commitment, ballot.revealed, ballot.segmentValid);
    }

    /// @inheritdoc IArbitrationCommittee
    function isExcluded(uint256 disputeId, address account) external view returns (bool excluded) {
        // The unset sentinel of a dispute that does not exist (no sets to read).
        // slither-disable-next-line incorrect-equality
        if (_disputes[disputeId].status == DisputeStatus.None) return false;
        (address[] memory list,) = _drawSets(disputeId, _disputes[disputeId].jobId);
        excluded = _contains(list, account);
    }

    /// @inheritdoc IArbitrationCommittee
    function isReserve(uint256 disputeId, address account) external view returns (bool reserved) {
        // The unset sentinel of a dispute that does not exist (no sets to read).
        // slither-disable-next-line incorrect-equality
        if (_disputes[disputeId].status == DisputeStatus.None) return false;
        (, address[] memory list) = _drawSets(disputeId, _disputes[disputeId].jobId);
        reserved = _contains(list, account);
    }

    /// @inheritdoc IArbitrationCommittee
    function stepClaimOf(uint256 disputeId) external view returns (StepClaim memory claim) {
        StoredStepClaim storage stored = _stepClaims[disputeId];
        if (!stored.isStep) return claim;
        // SAFETY: the step parent was authorized by the admin; a view.
        (bytes32 startHash, bytes32 claimedEndHash) = IStepParent(_stepParent).stepHashesOf(disputeId);
        claim = StepClaim({
            isStep: true, step: stored.step, startHash: startHash, claimedEndHash: claimedEndHash, steps: stored.steps
        });
    }

    /// @inheritdoc IArbitrationCommittee
    function stepParent() external view returns (address parent) {
        parent = _stepParent;
    }

    /// @inheritdoc IArbitrationCommittee
    function isClaimDispute(uint256 disputeId) external view returns (bool isClaim) {
        isClaim = _claimDisputes[disputeId];
    }

    /// @inheritdoc IArbitrationCommittee
    function claimParent() external view returns (address parent) {
        parent = _claimParent;
    }

    /// @inheritdoc IArbitrationCommittee
    function disputeCount() external view returns (uint256 count) {
        count = _disputeCount;
    }

    /// @inheritdoc IArbitrationCommittee
    function jobManager() external view returns (IJobManager) {
        return _JOB_MANAGER;
    }

    /// @inheritdoc IArbitrationCommittee
    function stakeManager() external view returns (IStakeManager) {
        return _STAKE_MANAGER;
    }

    /// @inheritdoc IArbitrationCommittee
    function committeeSize() external view returns (uint32) {
        return _COMMITTEE_SIZE;
    }

    /// @inheritdoc IArbitrationCommittee
    function voteCommitWindow() external view returns (uint64) {
        return _VOTE_COMMIT_WINDOW;
    }

    /// @inheritdoc IArbitrationCommittee
    function voteRevealWindow() external view returns (uint64) {
        return _VOTE_REVEAL_WINDOW;
    }

    ////// Public //////

    /// @inheritdoc IArbitrationCommittee
    function voteHash(uint256 disputeId, address voter, bool segmentValid, bytes32 salt)
        public
        pure
        returns (bytes32 commitment)
    {
        commitment = keccak256(abi.encode(disputeId, voter, segmentValid, salt));
    }

    /// @inheritdoc IArbitrationCommittee
    function phaseOf(uint256 disputeId) public view returns (DisputePhase phase) {
        Dispute storage dispute = _disputes[disputeId];
        DisputeStatus status = dispute.status;
        if (status == DisputeStatus.None) return DisputePhase.None;
        if (status == DisputeStatus.AwaitingCommittee) return DisputePhase.AwaitingCommittee;
        if (status == DisputeStatus.Resolved) return DisputePhase.Resolved;
        uint256 size = dispute.size;
        if (dispute.committed < size && block.timestamp <= dispute.commitDeadline) return DisputePhase.Commit;
        if (dispute.revealed < size && block.timestamp <= dispute.revealDeadline) return DisputePhase.Reveal;
        return DisputePhase.Resolvable;
    }

    ////// Internal //////

    /// @notice Records a new dispute awaiting its committee (segment, step and claim disputes alike).
    /// @return disputeId Fresh id.
    function _open(uint256 jobId, uint32 segment, address[] calldata excluded, address[] calldata reserve)
        internal
        returns (uint256 disputeId)
    {
        disputeId = ++_disputeCount;
        Dispute storage dispute = _disputes[disputeId];
        uint64 randomnessBlock = uint64(block.number + 1);
        dispute.jobId = jobId;
        dispute.segment = segment;
        dispute.status = DisputeStatus.AwaitingCommittee;
        dispute.randomnessBlock = randomnessBlock;
        // The seat stake is `_SEAT_STAKE`; the excluded accounts and the reserve are announced in
        // the event and re-derived at the draw (`_drawSets`) instead of stored.
        emit DisputeOpened(disputeId, jobId, segment, excluded, reserve, randomnessBlock);
    }

    /// @notice Up to K distinct active verifiers with free stake >= `seatStake`, never excluded ones:
    ///         first among verifiers with nothing at stake in the job, then, only if fewer than K
    ///         were found, among the reserve (the job's own verifiers), each pass in random order.
    ///         The draw is the StakeManager's (`IStakeManager.drawVerifiers`), shared with the
    ///         JobManager's verifier assignment.
    /// @return members Drawn members.
    /// @return candidates Size of the active verifier set.
    function _drawMembers(uint256 disputeId, bytes32 seed, uint256 jobId)
        internal
        view
        returns (address[] memory members, uint256 candidates)
    {
        (address[] memory excluded, address[] memory reserve) = _drawSets(disputeId, jobId);
        // SAFETY: trusted StakeManager view. The members' verifier ids are not needed: a committee
        // keeps its members' accounts.
        // slither-disable-next-line unused-return
        (members,, candidates) = _STAKE_MANAGER.drawVerifiers(seed, _COMMITTEE_SIZE, _SEAT_STAKE, excluded, reserve);
    }

    /// @notice The accounts a dispute's committee never draws and its reserve. A claim dispute: its
    ///         stored excluded accounts and no reserve. A segment or step dispute: the job's solver
    ///         and submitter, and the job's verifiers as reserve, read from the JobManager; these are
    ///         exactly the arrays `LibSettlement.openDispute` and `BisectionGame._openStep` pass at
    ///         opening (and `DisputeOpened` announces), and neither changes while the job is
    ///         Disputed (verifiers are only drawn again from Verifying).
    /// @return excluded Accounts never drawn.
    /// @return reserve Accounts drawn only when too few others are eligible.
    function _drawSets(uint256 disputeId, uint256 jobId)
        internal
        view
        returns (address[] memory excluded, address[] memory reserve)
    {
        if (_claimDisputes[disputeId]) return (_excluded[disputeId], reserve);
        excluded = new address[](2);
        // SAFETY: trusted JobManager view.
        (excluded[1], excluded[0], reserve) = _JOB_MANAGER.partiesOf(jobId);
    }

    /// @notice Whether `account` is in `list`.
    function _contains(address[] memory list, address account) internal pure returns (bool) {
        for (uint256 i; i < list.length; ++i) {
            if (list[i] == account) return true;
        }
        return false;
    }

    /// @notice Splits the committee by ballot.
    /// @return majority Members that revealed the outcome `segmentValid`.
    /// @return nonVoters Members that did not reveal.
    /// @return voters Members that revealed (either way).
    function _tally(uint256 disputeId, bool segmentValid)
        internal
        view
        returns (address[] memory majority, address[] memory nonVoters, address[] memory voters)
    {
        mapping(uint256 index => address member) storage members = _members[disputeId];
        uint256 count = _disputes[disputeId].size;
        majority = new address[](count);
        nonVoters = new address[](count);
        voters = new address[](count);
        uint256 majorityCount = 0;
        uint256 nonVoterCount = 0;
        uint256 voterCount = 0;
        for (uint256 i; i < count; ++i) {
            address member = members[i];
            Ballot storage ballot = _ballots[disputeId][member];
            if (!ballot.revealed) {
                nonVoters[nonVoterCount++] = member;
            } else {
                voters[voterCount++] = member;
                if (ballot.segmentValid == segmentValid) majority[majorityCount++] = member;
            }
        }
        majority = _truncate(majority, majorityCount);
        nonVoters = _truncate(nonVoters, nonVoterCount);
        voters = _truncate(voters, voterCount);
    }

    /// @notice First `count` entries of `values`.
    function _truncate(address[] memory values, uint256 count) internal pure returns (address[] memory out) {
        out = new address[](count);
        for (uint256 i; i < count; ++i) {
            out[i] = values[i];
        }
    }
}
