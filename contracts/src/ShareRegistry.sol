// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

// Contracts
import {ModelShares} from "./ModelShares.sol";
// Libraries
import {Arrays} from "@openzeppelin/contracts/utils/Arrays.sol";
import {Clones} from "@openzeppelin/contracts/proxy/Clones.sol";
import {EnumerableSet} from "@openzeppelin/contracts/utils/structs/EnumerableSet.sol";
import {SafeCast} from "@openzeppelin/contracts/utils/math/SafeCast.sol";
// Interfaces
import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {IJobManager} from "./interfaces/IJobManager.sol";
import {IShareRegistry} from "./interfaces/IShareRegistry.sol";
// Types
import {JobStatus, RoundJob} from "./types/JobTypes.sol";
import {PostKind} from "./types/LineageTypes.sol";

/// @title ShareRegistry
/// @notice Registers models (owner, poster authorisations, architecture/family/compute commitments,
///         lineage), creates one ModelShares token per model id and mints verified compute as shares.
/// @dev Deployment: `constructor(paymentToken, maxSegmentCompute, minter, runMinter)` before
///      the JobManager (the minter) and the RunRegistry (the run minter), with the addresses the
///      deployer's account will give them (their CREATE addresses at the nonces of their steps;
///      the deployer checks each landed there). Until they exist, every call that needs them
///      reverts.
contract ShareRegistry is IShareRegistry {
    using EnumerableSet for EnumerableSet.AddressSet;
    using SafeCast for uint256;

    ////// Types //////

    /// @notice What a model was registered with (see `registerModel`).
    struct ModelSpec {
        bytes32 architecture;
        bytes32 family;
        uint64 computePerStep;
        uint32 modelIndex;
        bytes32 seedState;
    }

    /// @notice One finalized state of a lineage and the job that produced it.
    struct LineageEntry {
        bytes32 state;
        uint256 jobId;
    }

    /// @notice The extension slot of a model's current head: the job that took it at post, and
    ///         when that job finalized (0 while it has not). One storage word.
    struct Slot {
        uint192 jobId;
        uint64 finalizedAt;
    }

    ////// Constants //////

    /// @notice Most posters one owner may authorise at a time (bounds the claim committees'
    ///         exclusion list, `postersOf`).
    uint256 public constant MAX_POSTERS = 16;

    /// @notice `finalizedAt` of a free slot's word (`jobId` 0): nonzero, so the word stays live
    ///         from the model's registration on and the post that takes the slot rewrites it
    ///         (2,900 gas, EIP-2200) instead of creating it (20,000). Only read behind a jobId.
    uint64 internal constant _FREE_SLOT_LIVE = 1;

    ////// Constants / Immutables //////

    /// @notice Payment token for model revenue.
    IERC20 internal immutable _PAYMENT_TOKEN;

    /// @notice Most FLOP one segment may cost to replay (checkpointInterval * computePerStep).
    uint256 internal immutable _MAX_SEGMENT_COMPUTE;

    /// @notice ModelShares implementation, deployed by the constructor; each model's token is an
    ///         EIP-1167 clone of it with the model id as immutable argument.
    address internal immutable _SHARES_IMPLEMENTATION;

    /// @notice Minter (the JobManager), given at construction: an immutable, so the minter's calls
    ///         read no cold storage word to be let in (docs/SECURITY.md, "Gas cuts").
    address internal immutable _MINTER;

    /// @notice Run minter (the RunRegistry): mints the shares of counted run contributions; given
    ///         at construction like the minter.
    address internal immutable _RUN_MINTER;

    ////// State //////

    /// @notice Share token per model.
    mapping(bytes32 modelId => address token) internal _shares;

    /// @notice Models in creation order.
    bytes32[] internal _models;

    /// @notice Owner per registered model (zero if unregistered).
    mapping(bytes32 modelId => address owner) internal _owners;

    /// @notice Account that may accept a pending hand-over.
    mapping(bytes32 modelId => address pendingOwner) internal _pendingOwners;

    /// @notice Ownership epoch: incremented on every hand-over, so authorisations lapse with it.
    mapping(bytes32 modelId => uint256 epoch) internal _epochs;

    /// @notice Posters authorised per model and ownership epoch (at most MAX_POSTERS).
    mapping(bytes32 modelId => mapping(uint256 epoch => EnumerableSet.AddressSet posters)) internal _posters;

    /// @notice Commitments per registered model.
    mapping(bytes32 modelId => ModelSpec spec) internal _specs;

    /// @notice Finalized states per model, in order (appended by `extendLineage` through a storage
    ///         pointer, which Slither does not see as a write).
    // slither-disable-next-line uninitialized-state
    mapping(bytes32 modelId => LineageEntry[] entries) internal _lineages;

    /// @notice Extension slot of each model's current head (P-18): taken at post, released when
    ///         its job ends unpaid or misses the lineage window, cleared when the lineage grows. A
    ///         free slot is jobId 0 with `_FREE_SLOT_LIVE`, written at registration (`_freeSlotWord`).
    mapping(bytes32 modelId => Slot slot) internal _slots;

    /// @notice Latest job per training key keccak256(abi.encode(modelId, initHash, specHash)).
    mapping(bytes32 trainingKey => uint256 jobId) internal _trainings;

    ////// Modifiers //////

    modifier onlyMinter() {
        if (msg.sender != _MINTER) revert NotMinter(msg.sender);
        _;
    }

    modifier onlyRunMinter() {
        if (msg.sender != _RUN_MINTER) revert NotRunMinter(msg.sender);
        _;
    }

    modifier onlyModelOwner(bytes32 modelId) {
        if (msg.sender != _owners[modelId] || msg.sender == address(0)) revert NotModelOwner(modelId, msg.sender);
        _;
    }

    ////// Constructor //////

    /// @param paymentToken_ Token in which model revenue is paid.
    /// @param maxSegmentCompute_ Most FLOP one segment may cost to replay (checkpointInterval *
    ///        computePerStep), > 0: the reference replay speed (FLOP/s) times the verdict window
    ///        (s), with the margin the deployment wants (chain/manifest.py checks the relation).
    /// @param minter_ Minter: the JobManager, deployed later by the same account (the deployer
    ///        passes the address it will get and checks it landed there).
    /// @param runMinter_ Run minter: the RunRegistry, given the same way.
    constructor(IERC20 paymentToken_, uint256 maxSegmentCompute_, address minter_, address runMinter_) {
        if (address(paymentToken_) == address(0) || minter_ == address(0) || runMinter_ == address(0)) {
            revert ZeroAddress();
        }
        if (maxSegmentCompute_ == 0) revert ZeroModelCommitment("maxSegmentCompute");
        _PAYMENT_TOKEN = paymentToken_;
        _MAX_SEGMENT_COMPUTE = maxSegmentCompute_;
        _SHARES_IMPLEMENTATION = address(new ModelShares(paymentToken_, address(this)));
        _MINTER = minter_;
        _RUN_MINTER = runMinter_;
    }

    ////// External //////

    /// @inheritdoc IShareRegistry
    function registerModel(
        bytes32 modelId,
        bytes32 architecture,
        bytes32 family,
        uint64 computePerStep,
        bytes32 seedState
    ) external {
        if (modelId == bytes32(0)) revert ZeroModelId();
        if (architecture == bytes32(0)) revert ZeroModelCommitment("architecture");
        if (family == bytes32(0)) revert ZeroModelCommitment("family");
        if (computePerStep == 0) revert ZeroModelCommitment("computePerStep");
        if (seedState == bytes32(0)) revert ZeroModelCommitment("seedState");
        address owner = _owners[modelId];
        if (owner != address(0)) revert ModelAlreadyRegistered(modelId, owner);
        _owners[modelId] = msg.sender;
        ModelSpec storage spec = _specs[modelId];
        (spec.architecture, spec.family, spec.computePerStep, spec.seedState) =
        (architecture, family, computePerStep, seedState);
        emit ModelRegistered(modelId, msg.sender, architecture, family, computePerStep, seedState);
        // The share token is made once per model here, not by the first job to finalize: a job's
        // finalize pays only for its own mint (docs/PROTOCOL.md, "ShareRegistry").
        if (_shares[modelId] == address(0)) _createShares(modelId);
        _freeSlotWord(modelId);
    }

    /// @inheritdoc IShareRegistry
    function transferModelOwnership(bytes32 modelId, address newOwner) external onlyModelOwner(modelId) {
        _pendingOwners[modelId] = newOwner;
        emit ModelOwnershipTransferStarted(modelId, msg.sender, newOwner);
    }

    /// @inheritdoc IShareRegistry
    function acceptModelOwnership(bytes32 modelId) external {
        if (msg.sender != _pendingOwners[modelId] || msg.sender == address(0)) {
            revert NotPendingModelOwner(modelId, msg.sender);
        }
        address previous = _owners[modelId];
        _owners[modelId] = msg.sender;
        delete _pendingOwners[modelId];
        ++_epochs[modelId];
        emit ModelOwnershipTransferred(modelId, previous, msg.sender);
    }

    /// @inheritdoc IShareRegistry
    function authorizePoster(bytes32 modelId, address poster) external onlyModelOwner(modelId) {
        if (poster == address(0)) revert ZeroAddress();
        EnumerableSet.AddressSet storage posters = _posters[modelId][_epochs[modelId]];
        if (posters.contains(poster)) revert PosterAlreadyAuthorized(modelId, poster);
        if (posters.length() >= MAX_POSTERS) revert TooManyPosters(modelId, MAX_POSTERS);
        // SAFETY: `contains` was false just above, so add returns true.
        // slither-disable-next-line unused-return
        posters.add(poster);
        emit PosterAuthorized(modelId, poster);
    }

    /// @inheritdoc IShareRegistry
    function revokePoster(bytes32 modelId, address poster) external onlyModelOwner(modelId) {
        if (!_posters[modelId][_epochs[modelId]].remove(poster)) revert PosterNotAuthorized(modelId, poster);
        emit PosterRevoked(modelId, poster);
    }

    /// @inheritdoc IShareRegistry
    function recordPost(
        bytes32 modelId,
        uint256 jobId,
        bytes32 specHash,
        bytes32 initHash,
        uint32 checkpointInterval,
        bool contribution
    ) external onlyMinter returns (PostKind kind, uint32 modelIndex) {
        modelIndex = _checkedIndex(modelId, checkpointInterval);
        _takeTrainingKey(modelId, jobId, trainingKey(modelId, initHash, specHash));
        if (contribution) {
            // A run's contribution never holds a head: its run pays it, once (P-29).
            emit ContributionPosted(modelId, jobId);
            return (PostKind.Contribution, modelIndex);
        }
        bytes32 head = headOf(modelId);
        if (initHash == head && _freeSlot(modelId)) {
            _slots[modelId] = Slot({jobId: jobId.toUint192(), finalizedAt: 0});
            kind = PostKind.LineageSlot;
            emit LineageSlotTaken(modelId, jobId, head);
        } else {
            kind = PostKind.PaidOnly;
            emit PaidOnlyPosted(modelId, jobId, initHash, _slots[modelId].jobId);
        }
    }

    /// @inheritdoc IShareRegistry
    function recordFinalized(uint32 modelIndex, uint256 jobId, PostKind kind, uint256 steps)
        external
        onlyMinter
        returns (uint256 shares)
    {
        // In bounds: the index was listed for the job's model at its post, and models are never
        // unlisted (one read, no length check).
        bytes32 modelId = Arrays.unsafeAccess(_models, modelIndex).value;
        if (kind == PostKind.Contribution) {
            emit RunContributionFinalized(modelId, jobId);
            return 0;
        }
        Slot storage slot = _slots[modelId];
        if (kind != PostKind.LineageSlot || slot.jobId != jobId) {
            emit OffLineage(modelId, jobId);
            return 0;
        }
        uint64 finalizedAt = uint64(block.timestamp);
        slot.finalizedAt = finalizedAt;
        shares = steps * _specs[modelId].computePerStep;
        emit SlotJobFinalized(modelId, jobId, finalizedAt + _lineageWindow(), shares);
    }

    /// @inheritdoc IShareRegistry
    function mintContribution(bytes32 modelId, address solver, uint256 shares) external onlyRunMinter {
        _mintShares(modelId, solver, shares);
    }

    /// @inheritdoc IShareRegistry
    function extendLineage(bytes32 modelId, bytes32 finalState, bytes32[] calldata proof) external {
        Slot memory slot = _slots[modelId];
        uint256 jobId = slot.jobId;
        // 0 is the unset sentinel of both fields (no slot job; not finalized yet)
        // slither-disable-next-line incorrect-equality
        if (jobId == 0 || slot.finalizedAt == 0) revert SlotJobNotFinalized(modelId, jobId);
        uint64 extendBy = slot.finalizedAt + _lineageWindow();
        if (block.timestamp > extendBy) revert LineageWindowClosed(modelId, jobId, extendBy);
        IJobManager jobManager = IJobManager(_MINTER);
        // SAFETY: trusted minter views; the slot job is Finalized, so its commitment is final. The
        // round's view has the solver and the steps, without `getJob`'s call back for the model id.
        RoundJob memory job = jobManager.roundJobOf(jobId);
        if (!jobManager.verifyCheckpoint(jobId, job.totalSteps / job.checkpointInterval, finalState, proof)) {
            revert FinalStateNotCommitted(modelId, jobId, finalState);
        }
        LineageEntry[] storage lineage = _lineages[modelId];
        uint256 index = lineage.length;
        lineage.push(LineageEntry(finalState, jobId));
        _freeSlotWord(modelId);
        emit LineageExtended(modelId, index, jobId, finalState);
        // The slot job's shares are minted here, not at finalize: a solver that withholds its
        // final state mints nothing and the slot frees after the window.
        _mintShares(modelId, job.solver, uint256(job.totalSteps) * _specs[modelId].computePerStep);
    }

    /// @inheritdoc IShareRegistry
    function releaseSlot(bytes32 modelId) external {
        uint256 jobId = _slots[modelId].jobId;
        // 0 is the unset sentinel (no job holds the slot)
        // slither-disable-next-line incorrect-equality
        if (jobId == 0 || !_freeSlot(modelId)) revert SlotHeld(modelId, jobId);
    }

    /// @inheritdoc IShareRegistry
    function modelSpecOf(bytes32 modelId)
        external
        view
        returns (bytes32 architecture, bytes32 family, uint64 computePerStep, bytes32 seedState)
    {
        ModelSpec storage spec = _specs[modelId];
        (architecture, family, computePerStep, seedState) =
        (spec.architecture, spec.family, spec.computePerStep, spec.seedState);
    }

    /// @inheritdoc IShareRegistry
    function slotOf(bytes32 modelId) external view returns (uint256 jobId, uint64 extendBy) {
        Slot memory slot = _slots[modelId];
        // 0 is the unset sentinel (no job holds the slot)
        // slither-disable-next-line incorrect-equality
        if (slot.jobId == 0 || _slotLapsed(slot)) return (0, 0);
        jobId = slot.jobId;
        if (slot.finalizedAt != 0) extendBy = slot.finalizedAt + _lineageWindow();
    }

    /// @inheritdoc IShareRegistry
    function postKindOf(uint256 jobId) public view returns (PostKind kind) {
        // The minter keeps each job's kind in the job (`Job.kind`).
        // SAFETY: trusted minter view.
        kind = IJobManager(_MINTER).getJob(jobId).kind;
    }

    /// @inheritdoc IShareRegistry
    function isLineageJob(uint256 jobId) external view returns (bool lineageJob) {
        lineageJob = postKindOf(jobId) == PostKind.LineageSlot;
    }

    /// @inheritdoc IShareRegistry
    function lineageWindow() external view returns (uint64 window) {
        window = _lineageWindow();
    }

    /// @inheritdoc IShareRegistry
    function postersOf(bytes32 modelId) external view returns (address[] memory posters) {
        posters = _posters[modelId][_epochs[modelId]].values();
    }

    /// @inheritdoc IShareRegistry
    function lineageLength(bytes32 modelId) external view returns (uint256 length) {
        length = _lineages[modelId].length;
    }

    /// @inheritdoc IShareRegistry
    function lineageAt(bytes32 modelId, uint256 index) external view returns (bytes32 state, uint256 jobId) {
        LineageEntry storage entry = _lineages[modelId][index];
        (state, jobId) = (entry.state, entry.jobId);
    }

    /// @inheritdoc IShareRegistry
    function trainingJobOf(bytes32 key) external view returns (uint256 jobId) {
        jobId = _trainings[key];
    }

    /// @inheritdoc IShareRegistry
    function maxSegmentCompute() external view returns (uint256 maxCompute) {
        maxCompute = _MAX_SEGMENT_COMPUTE;
    }

    /// @inheritdoc IShareRegistry
    function modelOwner(bytes32 modelId) external view returns (address owner) {
        owner = _owners[modelId];
    }

    /// @inheritdoc IShareRegistry
    function pendingModelOwner(bytes32 modelId) external view returns (address pendingOwner) {
        pendingOwner = _pendingOwners[modelId];
    }

    /// @inheritdoc IShareRegistry
    function isPoster(bytes32 modelId, address account) external view returns (bool authorized) {
        authorized = _posters[modelId][_epochs[modelId]].contains(account);
    }

    /// @inheritdoc IShareRegistry
    function canPost(bytes32 modelId, address account) external view returns (bool allowed) {
        address owner = _owners[modelId];
        allowed = owner != address(0) && (account == owner || _posters[modelId][_epochs[modelId]].contains(account));
    }

    /// @inheritdoc IShareRegistry
    function sharesOf(bytes32 modelId) external view returns (address token) {
        token = _shares[modelId];
    }

    /// @inheritdoc IShareRegistry
    function modelCount() external view returns (uint256 count) {
        count = _models.length;
    }

    /// @inheritdoc IShareRegistry
    function modelAt(uint256 index) external view returns (bytes32 modelId) {
        modelId = _models[index];
    }

    /// @inheritdoc IShareRegistry
    function minter() external view returns (address) {
        return _MINTER;
    }

    /// @inheritdoc IShareRegistry
    function runMinter() external view returns (address) {
        return _RUN_MINTER;
    }

    /// @inheritdoc IShareRegistry
    function sharesImplementation() external view returns (address implementation) {
        implementation = _SHARES_IMPLEMENTATION;
    }

    /// @inheritdoc IShareRegistry
    function paymentToken() external view returns (IERC20) {
        return _PAYMENT_TOKEN;
    }

    ////// Public //////

    /// @inheritdoc IShareRegistry
    function headOf(bytes32 modelId) public view returns (bytes32 head) {
        LineageEntry[] storage lineage = _lineages[modelId];
        uint256 length = lineage.length;
        head = length == 0 ? _specs[modelId].seedState : lineage[length - 1].state;
    }

    /// @notice Training key of a job: keccak256(abi.encode(modelId, initHash, specHash)).
    /// @param modelId Model id.
    /// @param initHash Start state.
    /// @param specHash Spec hash.
    /// @return key The key.
    function trainingKey(bytes32 modelId, bytes32 initHash, bytes32 specHash) public pure returns (bytes32 key) {
        key = keccak256(abi.encode(modelId, initHash, specHash));
    }

    ////// Internal //////

    /// @notice Reverts SegmentComputeAboveMax unless a segment of `checkpointInterval` steps of
    ///         `modelId` is within the replay bound (P-19); returns the model's index, which the
    ///         spec keeps in the word of the compute per step (one read for both).
    /// @return modelIndex The model's index in the model list (`modelAt`).
    function _checkedIndex(bytes32 modelId, uint32 checkpointInterval) internal view returns (uint32 modelIndex) {
        ModelSpec storage spec = _specs[modelId];
        modelIndex = spec.modelIndex;
        uint256 segmentCompute = uint256(checkpointInterval) * spec.computePerStep;
        if (segmentCompute > _MAX_SEGMENT_COMPUTE) revert SegmentComputeAboveMax(segmentCompute, _MAX_SEGMENT_COMPUTE);
    }

    /// @notice Gives the training `key` to `jobId` unless an earlier job of the same training holds
    ///         it (reverts TrainingAlreadyPosted): only a job that ended without paying anyone for
    ///         the training frees its key (P-26).
    function _takeTrainingKey(bytes32 modelId, uint256 jobId, bytes32 key) internal {
        uint256 previous = _trainings[key];
        if (previous != 0) {
            // SAFETY: trusted minter view.
            JobStatus status = IJobManager(_MINTER).statusOf(previous);
            if (!_endedUnpaid(status)) revert TrainingAlreadyPosted(modelId, key, previous);
        }
        // Announced by the post's kind event (LineageSlotTaken, PaidOnlyPosted, ContributionPosted).
        _trainings[key] = jobId;
    }

    /// @notice Whether `modelId`'s head slot is free, releasing a lapsed one (`SlotReleased`).
    /// @param modelId Model id.
    /// @return free True if no job holds the slot now.
    function _freeSlot(bytes32 modelId) internal returns (bool free) {
        Slot memory slot = _slots[modelId];
        // 0 is the unset sentinel (no job holds the slot)
        // slither-disable-next-line incorrect-equality
        if (slot.jobId == 0) return true;
        if (!_slotLapsed(slot)) return false;
        _freeSlotWord(modelId);
        emit SlotReleased(modelId, slot.jobId);
        free = true;
    }

    /// @notice Frees `modelId`'s slot, keeping its word live (`_FREE_SLOT_LIVE`): the next post from
    ///         the head rewrites it instead of creating it (docs/SECURITY.md, "Gas cuts").
    function _freeSlotWord(bytes32 modelId) internal {
        _slots[modelId] = Slot({jobId: 0, finalizedAt: _FREE_SLOT_LIVE});
    }

    /// @notice Whether a held slot has lapsed: its job ended unpaid (Cancelled, Expired, Rejected),
    ///         or it finalized and its final state was not appended within the lineage window.
    /// @param slot A slot with a job.
    /// @return lapsed True if the slot is free for the next post from the head.
    function _slotLapsed(Slot memory slot) internal view returns (bool lapsed) {
        if (slot.finalizedAt != 0) return block.timestamp > uint256(slot.finalizedAt) + _lineageWindow();
        // SAFETY: trusted minter view.
        lapsed = _endedUnpaid(IJobManager(_MINTER).statusOf(slot.jobId));
    }

    /// @notice How long a finalized slot job's final state may wait to be appended (seconds): the
    ///         minter's openWindow, the deployment's bound on how long a posted job may hold its
    ///         place without a solver (docs/SECURITY.md P-18).
    /// @return window Seconds.
    function _lineageWindow() internal view returns (uint64 window) {
        // SAFETY: trusted minter view over immutables.
        window = IJobManager(_MINTER).openWindow();
    }

    /// @notice Whether a job in `status` ended without paying anyone for its training.
    function _endedUnpaid(JobStatus status) internal pure returns (bool) {
        // enum values: exact equality is the meaning, no balance or time is compared
        // slither-disable-next-line incorrect-equality
        return status == JobStatus.Cancelled || status == JobStatus.Expired || status == JobStatus.Rejected;
    }

    /// @notice Mints `shares` of `modelId` to `to`. A registered model's token exists since
    ///         `registerModel`; a model minted without registration gets its token here.
    /// @param modelId Model id.
    /// @param to Receiver.
    /// @param shares Shares minted.
    function _mintShares(bytes32 modelId, address to, uint256 shares) internal {
        address token = _shares[modelId];
        if (token == address(0)) token = _createShares(modelId);
        emit SharesMinted(modelId, to, shares);
        // SAFETY: `token` was created by this registry; ModelShares.mint has no external calls.
        ModelShares(token).mint(to, shares);
    }

    /// @notice Creates `modelId`'s ModelShares token and lists the model (`ModelCreated`).
    /// @dev A minimal proxy of the implementation carrying abi.encode(modelId) (EIP-1167 with
    ///      immutable arguments, OpenZeppelin Clones): ~60k gas instead of deploying a whole
    ///      token. CREATE (not CREATE2): the address is recorded here.
    /// @param modelId Model id (no token yet).
    /// @return token The new token.
    function _createShares(bytes32 modelId) internal returns (address token) {
        token = Clones.cloneWithImmutableArgs(_SHARES_IMPLEMENTATION, abi.encode(modelId));
        _shares[modelId] = token;
        // The spec keeps the index (in the word of computePerStep): jobs store it, not the id.
        _specs[modelId].modelIndex = _models.length.toUint32();
        _models.push(modelId);
        emit ModelCreated(modelId, token);
    }
}
