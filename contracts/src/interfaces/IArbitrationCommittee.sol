// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

// Interfaces
import {IAdjudicator} from "./IAdjudicator.sol";
import {IJobManager} from "./IJobManager.sol";
import {IStakeManager} from "./IStakeManager.sol";
import {IStepAdjudicator} from "./IStepAdjudicator.sol";
// Types
import {StepClaim} from "../types/BisectionTypes.sol";
import {Dispute, DisputePhase, DisputeStatus} from "../types/DisputeTypes.sol";

/// @title IArbitrationCommittee
/// @notice v0 adjudicator: a committee of K randomly drawn staked verifiers votes commit-reveal on
///         whether a disputed segment is valid. It is also an `IStepAdjudicator`: a deployment may
///         authorize one parent game (the bisection game), whose one-step disputes the same
///         committee logic judges (the vote then says whether the claimed end hash is right) and
///         whose outcome goes back to the parent instead of the JobManager. Likewise one claim parent
///         (the RunRegistry) may open claim disputes on round claims of training runs
///         (`openClaimDispute`): the vote then says whether the claim is right, and the outcome goes
///         to the claim parent (`IClaimParent.onClaimResolved`).
interface IArbitrationCommittee is IAdjudicator, IStepAdjudicator {
    ////// Errors //////

    /// @notice Thrown when a constructor parameter is out of range.
    /// @param name Parameter name.
    /// @param value Value received.
    error InvalidParam(string name, uint256 value);

    /// @notice Thrown when an address argument is zero.
    error ZeroAddress();

    /// @notice Thrown when `openDispute` is not called by the JobManager.
    /// @param caller msg.sender.
    error NotJobManager(address caller);

    /// @notice Thrown when `setStepParent` is not called by the JobManager's admin.
    /// @param caller msg.sender.
    error NotAdmin(address caller);

    /// @notice Thrown when setting the step parent a second time.
    /// @param parent Step parent already set.
    error StepParentAlreadySet(address parent);

    /// @notice Thrown when `openStepDispute` is not called by the step parent.
    /// @param caller msg.sender.
    error NotStepParent(address caller);

    /// @notice Thrown when setting the claim parent a second time.
    /// @param parent Claim parent already set.
    error ClaimParentAlreadySet(address parent);

    /// @notice Thrown when `openClaimDispute` is not called by the claim parent.
    /// @param caller msg.sender.
    error NotClaimParent(address caller);

    /// @notice Thrown when an action is not allowed in the dispute's current phase.
    /// @param disputeId Dispute.
    /// @param phase Current phase (DisputePhase.None if the dispute does not exist).
    error UnexpectedDisputePhase(uint256 disputeId, DisputePhase phase);

    /// @notice Thrown when the randomness block has not been mined yet.
    /// @param disputeId Dispute.
    /// @param randomnessBlock Block whose hash is needed.
    /// @param blockNumber Current block number.
    error RandomnessNotReady(uint256 disputeId, uint64 randomnessBlock, uint256 blockNumber);

    /// @notice Thrown when no active verifier is eligible for the committee.
    /// @param disputeId Dispute.
    /// @param candidates Active verifiers considered.
    error NoEligibleArbiters(uint256 disputeId, uint256 candidates);

    /// @notice Thrown when the caller is not on the dispute's committee.
    /// @param disputeId Dispute.
    /// @param account Caller.
    error NotCommitteeMember(uint256 disputeId, address account);

    /// @notice Thrown when a member commits twice.
    /// @param disputeId Dispute.
    /// @param member Member.
    error VoteAlreadyCommitted(uint256 disputeId, address member);

    /// @notice Thrown when committing a zero commitment.
    /// @param disputeId Dispute.
    error ZeroCommitment(uint256 disputeId);

    /// @notice Thrown when revealing without a commitment.
    /// @param disputeId Dispute.
    /// @param member Member.
    error VoteNotCommitted(uint256 disputeId, address member);

    /// @notice Thrown when a member reveals twice.
    /// @param disputeId Dispute.
    /// @param member Member.
    error VoteAlreadyRevealed(uint256 disputeId, address member);

    /// @notice Thrown when a reveal does not match the commitment.
    /// @param disputeId Dispute.
    /// @param member Member.
    /// @param expected Commitment stored.
    /// @param actual voteHash of the revealed vote.
    error VoteMismatch(uint256 disputeId, address member, bytes32 expected, bytes32 actual);

    ////// Events //////

    /// @notice Emitted when the JobManager opened a dispute.
    /// @param disputeId Dispute.
    /// @param jobId Job.
    /// @param segment Segment under dispute.
    /// @param excluded Accounts that may not sit on the committee.
    /// @param reserve Accounts that sit only when too few verifiers with nothing at stake are eligible.
    /// @param randomnessBlock Block whose hash seeds the committee draw.
    event DisputeOpened(
        uint256 indexed disputeId,
        uint256 indexed jobId,
        uint32 segment,
        address[] excluded,
        address[] reserve,
        uint64 randomnessBlock
    );

    /// @notice Emitted when the JobManager's admin authorized the step parent (once).
    /// @param parent Game allowed to open step disputes.
    event StepParentSet(address indexed parent);

    /// @notice Emitted when the JobManager's admin authorized the claim parent (once).
    /// @param parent Contract allowed to open claim disputes (the RunRegistry).
    event ClaimParentSet(address indexed parent);

    /// @notice Emitted (after `DisputeOpened`, whose jobId and segment are 0) when the claim parent
    ///         opened a claim dispute. The committee judges the claim the parent records for it
    ///         (`RunRegistry.claimOf`) and votes whether it is right (`segmentValid` in the ballot).
    /// @param disputeId Dispute.
    /// @param parent Claim parent that opened it (receives the outcome).
    event ClaimDisputeOpened(uint256 indexed disputeId, address indexed parent);

    /// @notice Emitted (after `DisputeOpened`) when the step parent opened a one-step dispute. The
    ///         committee replays step `step` from the state whose hash is `startHash` and votes
    ///         whether `claimedEndHash` is right (`segmentValid` in the ballot).
    /// @param disputeId Dispute.
    /// @param parent Game that opened it (receives the outcome).
    /// @param jobId Job.
    /// @param step Step t under dispute.
    /// @param startHash Agreed state hash at t.
    /// @param claimedEndHash Defender's state hash at t + 1.
    event StepDisputeOpened(
        uint256 indexed disputeId,
        address indexed parent,
        uint256 indexed jobId,
        uint32 step,
        bytes32 startHash,
        bytes32 claimedEndHash
    );

    /// @notice Emitted when the randomness block hash had expired and a new block was chosen.
    /// @param disputeId Dispute.
    /// @param randomnessBlock New randomness block.
    event RandomnessReanchored(uint256 indexed disputeId, uint64 randomnessBlock);

    /// @notice Emitted when the committee was drawn and its seats locked.
    /// @param disputeId Dispute.
    /// @param members Committee members.
    /// @param commitDeadline Commit deadline (seconds).
    /// @param revealDeadline Reveal deadline (seconds); moves earlier if all commit early.
    event CommitteeDrawn(uint256 indexed disputeId, address[] members, uint64 commitDeadline, uint64 revealDeadline);

    /// @notice Emitted when a member committed a vote.
    /// @param disputeId Dispute.
    /// @param member Member.
    /// @param commitment voteHash(disputeId, member, segmentValid, salt).
    event VoteCommitted(uint256 indexed disputeId, address indexed member, bytes32 commitment);

    /// @notice Emitted when every member committed and the reveal phase started early.
    /// @param disputeId Dispute.
    /// @param revealDeadline Reveal deadline (seconds).
    event RevealPhaseStarted(uint256 indexed disputeId, uint64 revealDeadline);

    /// @notice Emitted when a member revealed its vote.
    /// @param disputeId Dispute.
    /// @param member Member.
    /// @param segmentValid Vote.
    event VoteRevealed(uint256 indexed disputeId, address indexed member, bool segmentValid);

    /// @notice Emitted when a dispute was resolved and reported to the JobManager (or to the parent
    ///         that opened it).
    /// @param disputeId Dispute.
    /// @param segmentValid Outcome (for a claim dispute: the claim is right).
    /// @param majority Members that voted with the outcome.
    /// @param nonVoters Members that did not reveal (slashed by the JobManager, or by the claim
    ///        parent for a claim dispute).
    event DisputeResolved(uint256 indexed disputeId, bool segmentValid, address[] majority, address[] nonVoters);

    ////// Functions //////

    /// @notice Authorizes `parent` (the bisection game) to open step disputes (JobManager admin, once).
    /// @param parent Parent game.
    function setStepParent(address parent) external;

    /// @notice Authorizes `parent` (the RunRegistry) to open claim disputes (JobManager admin, once).
    /// @param parent Claim parent.
    function setClaimParent(address parent) external;

    /// @notice Opens a dispute on a claim of the claim parent (claim parent only): drawn, voted and
    ///         resolved like a segment dispute (jobId 0, segment 0, no reserve); the outcome goes to
    ///         `IClaimParent.onClaimResolved`. The parent records what the claim is.
    /// @param excluded Accounts that must never judge it (the claim's parties).
    /// @return disputeId Non-zero id of the new dispute.
    function openClaimDispute(address[] calldata excluded) external returns (uint256 disputeId);

    /// @notice Draws the committee once the randomness block is mined (anyone). K active verifiers
    ///         with free stake >= the seat stake, not excluded, each seat locked. Fewer than K are
    ///         drawn if fewer are eligible (at least one). If the block hash has expired, re-anchors
    ///         to the next block instead and returns without drawing.
    /// @param disputeId Dispute.
    function drawCommittee(uint256 disputeId) external;

    /// @notice Commits a vote (member, during the commit phase).
    /// @param disputeId Dispute.
    /// @param commitment voteHash(disputeId, msg.sender, segmentValid, salt).
    function commitVote(uint256 disputeId, bytes32 commitment) external;

    /// @notice Reveals a committed vote (member, during the reveal phase).
    /// @param disputeId Dispute.
    /// @param segmentValid Vote.
    /// @param salt Salt used in the commitment.
    function revealVote(uint256 disputeId, bool segmentValid, bytes32 salt) external;

    /// @notice Resolves the dispute (anyone) once all members revealed or the reveal deadline passed:
    ///         majority of revealed votes decides, a tie or no vote keeps the segment valid; unlocks
    ///         the voters' seats and calls `JobManager.onDisputeResolved` (a step dispute:
    ///         `IStepParent.onStepResolved` of the step parent; a claim dispute:
    ///         `IClaimParent.onClaimResolved` of the claim parent, a tie or no vote keeping the claim).
    /// @param disputeId Dispute.
    function resolve(uint256 disputeId) external;

    ////// Views //////

    /// @notice Commitment hash of a vote: keccak256(abi.encode(disputeId, voter, segmentValid, salt)).
    /// @param disputeId Dispute.
    /// @param voter Member.
    /// @param segmentValid Vote.
    /// @param salt Secret salt.
    /// @return commitment Commitment.
    function voteHash(uint256 disputeId, address voter, bool segmentValid, bytes32 salt)
        external
        pure
        returns (bytes32 commitment);

    /// @notice A dispute.
    /// @param disputeId Dispute.
    /// @return dispute The dispute (all-zero if it does not exist).
    function getDispute(uint256 disputeId) external view returns (Dispute memory dispute);

    /// @notice Current phase of a dispute.
    /// @param disputeId Dispute.
    /// @return phase Phase.
    function phaseOf(uint256 disputeId) external view returns (DisputePhase phase);

    /// @notice Committee members of a dispute (empty before the draw).
    /// @param disputeId Dispute.
    /// @return members Members.
    function committeeOf(uint256 disputeId) external view returns (address[] memory members);

    /// @notice Ballot of a member.
    /// @param disputeId Dispute.
    /// @param member Member.
    /// @return commitment Commitment (zero if none).
    /// @return revealed Whether the vote was revealed.
    /// @return segmentValid Revealed vote (false if not revealed).
    function ballotOf(uint256 disputeId, address member)
        external
        view
        returns (bytes32 commitment, bool revealed, bool segmentValid);

    /// @notice Whether `account` is excluded from the dispute's committee.
    /// @param disputeId Dispute.
    /// @param account Account.
    /// @return excluded True if excluded.
    function isExcluded(uint256 disputeId, address account) external view returns (bool excluded);

    /// @notice Whether `account` is in the dispute's reserve (drawn only when too few fresh verifiers).
    /// @param disputeId Dispute.
    /// @param account Account.
    /// @return reserved True if in the reserve.
    function isReserve(uint256 disputeId, address account) external view returns (bool reserved);

    /// @notice The step under dispute (`isStep` false for a segment dispute of the JobManager).
    /// @param disputeId Dispute.
    /// @return claim Step, agreed start hash and claimed end hash.
    function stepClaimOf(uint256 disputeId) external view returns (StepClaim memory claim);

    /// @notice Game allowed to open step disputes (zero if none).
    /// @return parent Parent.
    function stepParent() external view returns (address parent);

    /// @notice Whether `disputeId` was opened by the claim parent (`openClaimDispute`).
    /// @param disputeId Dispute.
    /// @return isClaim True for a claim dispute.
    function isClaimDispute(uint256 disputeId) external view returns (bool isClaim);

    /// @notice Contract allowed to open claim disputes (zero if none).
    /// @return parent Claim parent.
    function claimParent() external view returns (address parent);

    /// @notice Number of disputes opened (the last dispute id).
    /// @return count Disputes.
    function disputeCount() external view returns (uint256 count);

    /// @notice JobManager served.
    /// @return jobManager JobManager.
    function jobManager() external view returns (IJobManager jobManager);

    /// @notice StakeManager holding the arbiters' stakes.
    /// @return stakeManager StakeManager.
    function stakeManager() external view returns (IStakeManager stakeManager);

    /// @notice K: members drawn per dispute.
    /// @return size Committee size.
    function committeeSize() external view returns (uint32 size);

    /// @notice Length of the commit phase (seconds).
    /// @return window Seconds.
    function voteCommitWindow() external view returns (uint64 window);

    /// @notice Length of the reveal phase (seconds).
    /// @return window Seconds.
    function voteRevealWindow() external view returns (uint64 window);
}
