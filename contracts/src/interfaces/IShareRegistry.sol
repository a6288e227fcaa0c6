// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

// Interfaces
import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
// Types
import {PostKind} from "../types/LineageTypes.sol";

/// @title IShareRegistry
/// @notice One ModelShares token per model id. The minter (the JobManager) reports jobs as they are
///         posted and finalized; verified compute is minted as ownership shares (the model's token
///         is created on first mint).
///         Models are registered entities: the first account to register an id owns it (first come,
///         first served), may hand it over in two steps (OpenZeppelin `Ownable2Step` pattern) and
///         authorises the accounts that may post jobs under it. The owner cannot mint shares, touch
///         revenue or change past jobs: only jobs posted by the owner or an authorised poster mint.
///         A model is registered with its lineage root (docs/SECURITY.md P-18, P-26): an architecture
///         commitment, a family commitment (data, batch shape, arithmetic), the compute one optimizer
///         step of that family costs (FLOP per step) and the state hash of its seed initialisation.
///         Its lineage is the on-chain list of finalized state hashes that grew from that seed; its
///         head is the last one (the seed initialisation while the list is empty). Who extends a
///         head is decided at post, not by a race to finalize (P-18): each head has one extension
///         slot, taken by the first job posted from it while the slot is free (`LineageSlotTaken`);
///         every other job is paid only (`PaidOnlyPosted`), and a run's contribution never takes
///         it (`ContributionPosted`). The slot job's solver is minted `steps * computePerStep`
///         shares when the job's final state is appended to the lineage (`extendLineage`, anyone
///         holding the proof), which moves the head. A slot whose job ends unpaid (Cancelled,
///         Expired, Rejected), or that finalized and was not appended within the lineage window,
///         is released: no head is frozen by a withheld state. The same training (model, start
///         state, spec hash) is accepted once while an earlier post of it is live or paid.
///         A second minter, the run minter (the RunRegistry), mints the shares of the counted
///         contributions of DiLoCo training runs (`mintContribution`), outside the lineage.
interface IShareRegistry {
    ////// Errors //////

    /// @notice Thrown when the caller is not the minter.
    /// @param caller msg.sender.
    error NotMinter(address caller);

    /// @notice Thrown when the caller is not the run minter.
    /// @param caller msg.sender.
    error NotRunMinter(address caller);

    /// @notice Thrown when an address argument is zero.
    error ZeroAddress();

    /// @notice Thrown when registering the zero model id.
    error ZeroModelId();

    /// @notice Thrown when registering a model id that already has an owner.
    /// @param modelId Model id.
    /// @param owner Its owner.
    error ModelAlreadyRegistered(bytes32 modelId, address owner);

    /// @notice Thrown when an owner-only call comes from another account (or the model is unregistered).
    /// @param modelId Model id.
    /// @param caller msg.sender.
    error NotModelOwner(bytes32 modelId, address caller);

    /// @notice Thrown when `acceptModelOwnership` comes from an account other than the pending owner.
    /// @param modelId Model id.
    /// @param caller msg.sender.
    error NotPendingModelOwner(bytes32 modelId, address caller);

    /// @notice Thrown when authorising a poster that is already authorised.
    /// @param modelId Model id.
    /// @param poster Poster.
    error PosterAlreadyAuthorized(bytes32 modelId, address poster);

    /// @notice Thrown when revoking a poster that is not authorised.
    /// @param modelId Model id.
    /// @param poster Poster.
    error PosterNotAuthorized(bytes32 modelId, address poster);

    /// @notice Thrown when registering a model with a zero commitment, zero compute per step or a
    ///         zero seed state.
    /// @param field Name of the zero argument.
    error ZeroModelCommitment(string field);

    /// @notice Thrown when the same training (model, start state, spec hash) is posted again while an
    ///         earlier job of it is live or finalized (P-26).
    /// @param modelId Model id.
    /// @param trainingKey keccak256(abi.encode(modelId, initHash, specHash)).
    /// @param jobId The earlier job.
    error TrainingAlreadyPosted(bytes32 modelId, bytes32 trainingKey, uint256 jobId);

    /// @notice Thrown when a job's segment costs more to replay than the deployment allows:
    ///         checkpointInterval * computePerStep > maxSegmentCompute (P-19).
    /// @param segmentCompute checkpointInterval * computePerStep (FLOP).
    /// @param maxSegmentCompute The bound (FLOP).
    error SegmentComputeAboveMax(uint256 segmentCompute, uint256 maxSegmentCompute);

    /// @notice Thrown by `extendLineage` when no job holds the head's slot, or its job has not
    ///         finalized.
    /// @param modelId Model id.
    /// @param jobId The slot job (0 if none).
    error SlotJobNotFinalized(bytes32 modelId, uint256 jobId);

    /// @notice Thrown by `extendLineage` past the lineage window of the finalized slot job (the slot
    ///         is then free for the next post from the head).
    /// @param modelId Model id.
    /// @param jobId The slot job.
    /// @param extendBy Last timestamp at which its final state could be appended (seconds).
    error LineageWindowClosed(bytes32 modelId, uint256 jobId, uint64 extendBy);

    /// @notice Thrown by `releaseSlot` while the slot is free or its job still holds it.
    /// @param modelId Model id.
    /// @param jobId The slot job (0 if none).
    error SlotHeld(bytes32 modelId, uint256 jobId);

    /// @notice Thrown when authorising a poster beyond MAX_POSTERS.
    /// @param modelId Model id.
    /// @param max MAX_POSTERS.
    error TooManyPosters(bytes32 modelId, uint256 max);

    /// @notice Thrown by `extendLineage` when `finalState` is not the last committed checkpoint of the
    ///         slot job.
    /// @param modelId Model id.
    /// @param jobId The job holding the head.
    /// @param finalState The state hash offered.
    error FinalStateNotCommitted(bytes32 modelId, uint256 jobId, bytes32 finalState);

    ////// Events //////

    /// @notice Emitted when a model id was registered.
    /// @param modelId Model id.
    /// @param owner Its first owner (the registrant).
    /// @param architecture Architecture commitment (veritrain.lineage.architecture_commitment).
    /// @param family Family commitment (veritrain.lineage.family_commitment).
    /// @param computePerStep FLOP of one optimizer step (veritrain.lineage.compute_per_step).
    /// @param seedState State hash of the seed initialisation, the lineage's root.
    event ModelRegistered(
        bytes32 indexed modelId,
        address indexed owner,
        bytes32 architecture,
        bytes32 family,
        uint64 computePerStep,
        bytes32 seedState
    );

    /// @notice Emitted at post when a job took its head's extension slot: it is the lineage job, its
    ///         solver is minted when its final state is appended (`extendLineage`). Each post emits
    ///         exactly one of this, `PaidOnlyPosted` and `ContributionPosted`, which also announces
    ///         that the job took its training key (`trainingKey(modelId, initHash, specHash)`, the
    ///         hashes in the JobManager's `JobPosted` of the same call; docs/SECURITY.md, "Gas
    ///         cuts").
    /// @param modelId Model id.
    /// @param jobId Job.
    /// @param head The head it starts from.
    event LineageSlotTaken(bytes32 indexed modelId, uint256 indexed jobId, bytes32 head);

    /// @notice Emitted at post when a job is paid only: it does not start from the head, or the
    ///         head's slot is held by another job. It never mints, whatever happens later.
    /// @param modelId Model id.
    /// @param jobId Job.
    /// @param startState The state it starts from.
    /// @param slotJob The job holding the slot (0 if none).
    event PaidOnlyPosted(bytes32 indexed modelId, uint256 indexed jobId, bytes32 startState, uint256 slotJob);

    /// @notice Emitted at post when a job is a training run's contribution (posted through the run
    ///         minter): it never takes a slot; its run pays it shares once.
    /// @param modelId Model id.
    /// @param jobId Job.
    event ContributionPosted(bytes32 indexed modelId, uint256 indexed jobId);

    /// @notice Emitted when the slot job finalized: its final state may be appended until `extendBy`
    ///         (`extendLineage`), which mints `shares` to its solver; after that the slot is free.
    /// @param modelId Model id.
    /// @param jobId Job.
    /// @param extendBy Last timestamp for `extendLineage` (seconds).
    /// @param shares Shares minted on extension (steps * computePerStep).
    event SlotJobFinalized(bytes32 indexed modelId, uint256 indexed jobId, uint64 extendBy, uint256 shares);

    /// @notice Emitted when a head's slot was released: its job ended unpaid, or it finalized and its
    ///         final state was not appended within the lineage window.
    /// @param modelId Model id.
    /// @param jobId The job that held it.
    event SlotReleased(bytes32 indexed modelId, uint256 indexed jobId);

    /// @notice Emitted when a finalized job minted no shares: it was paid only (posted off the head or
    ///         while another job held the slot).
    /// @param modelId Model id.
    /// @param jobId Job (the state it started from is in its `PaidOnlyPosted` and `JobPosted`).
    event OffLineage(bytes32 indexed modelId, uint256 indexed jobId);

    /// @notice Emitted when a finalized job is a contribution of a training run (posted through the
    ///         RunRegistry): it mints nothing here and never holds a head, whatever its start; its
    ///         run pays it when a round claim counting it becomes final.
    /// @param modelId Model id.
    /// @param jobId Job.
    event RunContributionFinalized(bytes32 indexed modelId, uint256 indexed jobId);

    /// @notice Emitted when the head advanced: `finalState` was appended to the lineage (the job's
    ///         shares are minted in the same call, `SharesMinted`).
    /// @param modelId Model id.
    /// @param index Position in the lineage (0 = first finalized state after the seed).
    /// @param jobId Job whose final state it is.
    /// @param finalState State hash of its last checkpoint (step N).
    event LineageExtended(bytes32 indexed modelId, uint256 indexed index, uint256 indexed jobId, bytes32 finalState);

    /// @notice Emitted when an owner started a hand-over (zero `pendingOwner` cancels one).
    /// @param modelId Model id.
    /// @param owner Current owner.
    /// @param pendingOwner Account that may accept.
    event ModelOwnershipTransferStarted(bytes32 indexed modelId, address indexed owner, address indexed pendingOwner);

    /// @notice Emitted when a pending owner accepted; every poster authorisation of the previous
    ///         owner lapses.
    /// @param modelId Model id.
    /// @param previousOwner Previous owner.
    /// @param newOwner New owner.
    event ModelOwnershipTransferred(bytes32 indexed modelId, address indexed previousOwner, address indexed newOwner);

    /// @notice Emitted when the owner authorised an account to post jobs under the model.
    /// @param modelId Model id.
    /// @param poster Poster.
    event PosterAuthorized(bytes32 indexed modelId, address indexed poster);

    /// @notice Emitted when the owner revoked a poster.
    /// @param modelId Model id.
    /// @param poster Poster.
    event PosterRevoked(bytes32 indexed modelId, address indexed poster);

    /// @notice Emitted when a model's share token was created: at `registerModel` (once per model).
    /// @param modelId Model id.
    /// @param token ModelShares token.
    event ModelCreated(bytes32 indexed modelId, address indexed token);

    /// @notice Emitted when shares were minted.
    /// @param modelId Model id.
    /// @param to Receiver.
    /// @param shares Shares minted (1 share = 1 FLOP of verified compute: steps * computePerStep).
    event SharesMinted(bytes32 indexed modelId, address indexed to, uint256 shares);

    ////// Functions //////

    /// @notice Registers `modelId` with the caller as its owner (first come, first served), bound to
    ///         an architecture, a family and the compute per step they imply, with `seedState` as the
    ///         root of its lineage, and creates the model's ModelShares token (`ModelCreated`), so that
    ///         no job's finalize pays for it. All arguments non-zero (else ZeroModelId /
    ///         ZeroModelCommitment).
    /// @param modelId Model id (keccak256 of the model name), non-zero.
    /// @param architecture Architecture commitment (veritrain.lineage.architecture_commitment).
    /// @param family Family commitment: data set, batch shape, arithmetic
    ///        (veritrain.lineage.family_commitment).
    /// @param computePerStep FLOP of one optimizer step of the family (veritrain.lineage.compute_per_step).
    /// @param seedState State hash of the seed-initialised state the first job starts from.
    function registerModel(
        bytes32 modelId,
        bytes32 architecture,
        bytes32 family,
        uint64 computePerStep,
        bytes32 seedState
    ) external;

    /// @notice Starts handing `modelId` to `newOwner`, who must accept (owner only). A zero
    ///         `newOwner` cancels a pending hand-over.
    /// @param modelId Model id.
    /// @param newOwner Account that may accept.
    function transferModelOwnership(bytes32 modelId, address newOwner) external;

    /// @notice Accepts a pending hand-over of `modelId` (pending owner only). Posters authorised by
    ///         the previous owner lapse.
    /// @param modelId Model id.
    function acceptModelOwnership(bytes32 modelId) external;

    /// @notice Authorises `poster` to post jobs under `modelId` (owner only).
    /// @param modelId Model id.
    /// @param poster Account, non-zero.
    function authorizePoster(bytes32 modelId, address poster) external;

    /// @notice Revokes `poster` (owner only). Jobs it already posted are unaffected.
    /// @param modelId Model id.
    /// @param poster Account.
    function revokePoster(bytes32 modelId, address poster) external;

    /// @notice Records a job posted under `modelId` (minter only): takes its training key
    ///         keccak256(abi.encode(modelId, initHash, specHash)), which an earlier job of the same
    ///         training holds unless that job ended without paying (Cancelled, Expired, Rejected);
    ///         else TrainingAlreadyPosted. Bounds its replay cost: checkpointInterval *
    ///         computePerStep <= maxSegmentCompute (else SegmentComputeAboveMax). Fixes what the job
    ///         is to the shares (`postKindOf`): a contribution (ContributionPosted); else the head's
    ///         lineage job if it starts from the head and the slot is free, releasing a lapsed slot
    ///         first (SlotReleased, LineageSlotTaken); else paid only (PaidOnlyPosted). The poster's
    ///         right to post is checked by the minter before (`canPost`).
    /// @param modelId Model id (registered).
    /// @param jobId The new job.
    /// @param specHash Its spec hash.
    /// @param initHash Its start state.
    /// @param checkpointInterval k: steps per segment.
    /// @param contribution True for a run contribution (posted through the run minter).
    /// @return kind What the job is to the shares; the minter keeps it with the job and hands it
    ///         back to `recordFinalized` (this contract keeps no word per job for it).
    /// @return modelIndex The model's index in the model list (`modelAt`), which the minter keeps
    ///         with the job instead of the 32-byte id and hands back to `recordFinalized`.
    function recordPost(
        bytes32 modelId,
        uint256 jobId,
        bytes32 specHash,
        bytes32 initHash,
        uint32 checkpointInterval,
        bool contribution
    ) external returns (PostKind kind, uint32 modelIndex);

    /// @notice Records a finalized job (minter only); mints nothing. A contribution emits
    ///         RunContributionFinalized (its run pays it once); the slot job starts its lineage
    ///         window (SlotJobFinalized: its shares are minted by `extendLineage`); any other job
    ///         emits OffLineage.
    /// @param modelIndex The model's index, as `recordPost` returned it (the minter's copy).
    /// @param jobId Job.
    /// @param kind What `recordPost` made the job (the minter's copy).
    /// @param steps Verified steps N.
    /// @return shares Shares the job earns once its final state is appended (0 unless it holds the
    ///         slot).
    function recordFinalized(uint32 modelIndex, uint256 jobId, PostKind kind, uint256 steps)
        external
        returns (uint256 shares);

    /// @notice Mints `shares` of `modelId` to `solver` for a counted contribution of a training run
    ///         (run minter only): the model's token is created on first use, exactly as for
    ///         `recordFinalized`. Not tied to the lineage: the run minter decides what counts.
    /// @param modelId Model id (registered; the run minter only mints for runs of registered models).
    /// @param solver Receiver (the contribution job's solver).
    /// @param shares Shares minted (the RunRegistry mints innerSteps * computePerStep).
    function mintContribution(bytes32 modelId, address solver, uint256 shares) external;

    /// @notice Advances `modelId`'s head to the final state of its finalized slot job and mints that
    ///         job's solver `totalSteps * computePerStep` shares: anyone may call with that state
    ///         hash and its Merkle proof (the last leaf of the job's committed tree, checked by the
    ///         minter's `verifyCheckpoint`), until the lineage window after its finalization ends.
    ///         The slot is then free for the next post from the new head. Reverts
    ///         SlotJobNotFinalized without a finalized slot job, LineageWindowClosed after the
    ///         window, FinalStateNotCommitted on a wrong state or proof.
    /// @param modelId Model id.
    /// @param finalState State hash at step N of the slot job.
    /// @param proof Merkle proof of leaf N / k.
    function extendLineage(bytes32 modelId, bytes32 finalState, bytes32[] calldata proof) external;

    /// @notice Releases `modelId`'s slot when it has lapsed (its job ended unpaid, or missed the
    ///         lineage window): anyone may call; a post from the head releases it as well. Reverts
    ///         SlotHeld while no job or a live one holds it.
    /// @param modelId Model id.
    function releaseSlot(bytes32 modelId) external;

    /// @notice Commitments a model was registered with (all zero if unregistered).
    /// @param modelId Model id.
    /// @return architecture Architecture commitment.
    /// @return family Family commitment.
    /// @return computePerStep FLOP per optimizer step.
    /// @return seedState Lineage root.
    function modelSpecOf(bytes32 modelId)
        external
        view
        returns (bytes32 architecture, bytes32 family, uint64 computePerStep, bytes32 seedState);

    /// @notice Current head of `modelId`: its last lineage state, or its seed state while the lineage
    ///         is empty (zero if unregistered).
    /// @param modelId Model id.
    /// @return head State hash.
    function headOf(bytes32 modelId) external view returns (bytes32 head);

    /// @notice The job holding `modelId`'s head slot now (0 if the slot is free or has lapsed) and,
    ///         once it finalized, the last timestamp at which its final state may be appended.
    /// @param modelId Model id.
    /// @return jobId Slot job.
    /// @return extendBy Seconds; 0 while the job has not finalized.
    function slotOf(bytes32 modelId) external view returns (uint256 jobId, uint64 extendBy);

    /// @notice What `jobId` is to its model's shares, fixed at its post (None for an unknown job).
    /// @param jobId Job.
    /// @return kind LineageSlot, PaidOnly or Contribution.
    function postKindOf(uint256 jobId) external view returns (PostKind kind);

    /// @notice Whether `jobId` took its head's slot at post (it mints when its final state is
    ///         appended, if that happens within the lineage window).
    /// @param jobId Job.
    /// @return lineageJob True for a slot job.
    function isLineageJob(uint256 jobId) external view returns (bool lineageJob);

    /// @notice How long a finalized slot job's final state may wait to be appended (seconds): the
    ///         minter's openWindow.
    /// @return window Seconds.
    function lineageWindow() external view returns (uint64 window);

    /// @notice Posters the current owner of `modelId` has authorised (at most MAX_POSTERS).
    /// @param modelId Model id.
    /// @return posters Accounts, in no particular order.
    function postersOf(bytes32 modelId) external view returns (address[] memory posters);

    /// @notice Number of finalized states on `modelId`'s lineage.
    /// @param modelId Model id.
    /// @return length States.
    function lineageLength(bytes32 modelId) external view returns (uint256 length);

    /// @notice Lineage entry `index` of `modelId`.
    /// @param modelId Model id.
    /// @param index In [0, lineageLength).
    /// @return state Final state hash.
    /// @return jobId Job that produced it.
    function lineageAt(bytes32 modelId, uint256 index) external view returns (bytes32 state, uint256 jobId);

    /// @notice Job holding a training key (0 if none).
    /// @param trainingKey keccak256(abi.encode(modelId, initHash, specHash)).
    /// @return jobId Latest job posted with that key.
    function trainingJobOf(bytes32 trainingKey) external view returns (uint256 jobId);

    /// @notice Bound on one segment's replay cost, checkpointInterval * computePerStep (FLOP).
    /// @return maxCompute FLOP.
    function maxSegmentCompute() external view returns (uint256 maxCompute);

    /// @notice Owner of `modelId` (zero if unregistered).
    /// @param modelId Model id.
    /// @return owner Owner.
    function modelOwner(bytes32 modelId) external view returns (address owner);

    /// @notice Account that may accept `modelId` (zero if no hand-over is pending).
    /// @param modelId Model id.
    /// @return pendingOwner Pending owner.
    function pendingModelOwner(bytes32 modelId) external view returns (address pendingOwner);

    /// @notice Whether the current owner of `modelId` has authorised `account` as a poster.
    /// @param modelId Model id.
    /// @param account Account.
    /// @return authorized True if authorised.
    function isPoster(bytes32 modelId, address account) external view returns (bool authorized);

    /// @notice Whether `account` may post jobs under `modelId`: it is the owner or an authorised poster.
    /// @param modelId Model id.
    /// @param account Account.
    /// @return allowed False for an unregistered model.
    function canPost(bytes32 modelId, address account) external view returns (bool allowed);

    /// @notice Share token of `modelId`: made by `registerModel` (or by the first mint of a model
    ///         never registered); zero before either.
    /// @param modelId Model id.
    /// @return token ModelShares token.
    function sharesOf(bytes32 modelId) external view returns (address token);

    /// @notice Number of models with a share token.
    /// @return count Models.
    function modelCount() external view returns (uint256 count);

    /// @notice Model id at `index` in creation order.
    /// @param index Index in [0, modelCount()).
    /// @return modelId Model id.
    function modelAt(uint256 index) external view returns (bytes32 modelId);

    /// @notice Minter (the JobManager), given at construction.
    /// @return minter Minter.
    function minter() external view returns (address minter);

    /// @notice Run minter (the RunRegistry), given at construction.
    /// @return runMinter Run minter.
    function runMinter() external view returns (address runMinter);

    /// @notice ModelShares implementation every model's token is an EIP-1167 clone of (the model id
    ///         is the clone's immutable argument).
    /// @return implementation The implementation (never minted into).
    function sharesImplementation() external view returns (address implementation);

    /// @notice Payment token in which model revenue is paid.
    /// @return token ERC-20.
    function paymentToken() external view returns (IERC20 token);
}
