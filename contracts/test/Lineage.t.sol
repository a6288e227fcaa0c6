// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

// Testing
import {Deployers} from "./utils/Deployers.sol";
import {Merkle} from "./utils/Merkle.sol";
import {Deploy} from "../script/Deploy.sol";
// Contracts
import {ModelShares} from "../src/ModelShares.sol";
// Interfaces
import {IShareRegistry} from "../src/interfaces/IShareRegistry.sol";
// Types
import {JobStatus} from "../src/types/JobTypes.sol";
import {PostKind} from "../src/types/LineageTypes.sol";
import {Role} from "../src/types/Role.sol";

/// @notice Shares bound to a model's lineage (docs/SECURITY.md P-18, P-26, P-19): only the job that
///         took its head's slot at post mints, when its final state is appended; shares count compute
///         (steps * computePerStep); the same training is posted once; a segment's replay cost is
///         bounded. Every attack measures the honest trainer's shares and tokens before and after.
contract Lineage_Test is Deployers {
    /// @notice The owner's accomplice, a staked solver.
    address internal colluder;

    function setUp() public override {
        super.setUp();
        colluder = _actor("colluder");
        _stake(colluder, Role.Solver, 1000e18);
    }

    ////// Helpers //////

    /// @notice States 0..N/k of a run from `start`: `start`, then values tagged by `tag`.
    function _statesFrom(bytes32 start, uint32 totalSteps, uint32 interval, bytes32 tag)
        internal
        pure
        returns (bytes32[] memory states)
    {
        states = new bytes32[](totalSteps / interval + 1);
        states[0] = start;
        for (uint256 i = 1; i < states.length; ++i) {
            states[i] = sha256(abi.encode(tag, i));
        }
    }

    /// @notice Posts (as the model owner, `submitter`) a job of `specHash` from `start`.
    function _post(bytes32 specHash, bytes32 start, uint32 totalSteps, uint32 interval, uint256 reward)
        internal
        returns (uint256 jobId)
    {
        vm.prank(submitter);
        jobId = jobManager.postJob(MODEL_ID, specHash, start, totalSteps, interval, reward, SPEC_URI);
    }

    /// @notice `account` claims and commits `states`, every verifier approves, the job finalizes.
    function _runApproved(uint256 jobId, address account, bytes32[] memory states) internal {
        vm.prank(account);
        jobManager.claimJob(jobId);
        _commit(jobId, account, states);
        _assign(jobId);
        _submitAll(jobId, 0);
        _passChallengeWindow(jobId);
        jobManager.finalize(jobId);
        assertEq(uint8(_job(jobId).status), uint8(JobStatus.Finalized), "not finalized");
    }

    /// @notice Proves job `jobId`'s final state (its last committed leaf) to extend the lineage.
    function _extend(uint256 jobId) internal {
        bytes32[] memory states = _committedStates[jobId];
        uint32 interval = _job(jobId).checkpointInterval;
        bytes32[] memory proof = Merkle.proof(Merkle.leaves(interval, states), states.length - 1);
        registry.extendLineage(_job(jobId).modelId, states[states.length - 1], proof);
    }

    function _slotJob(bytes32 modelId) internal view returns (uint256 jobId) {
        (jobId,) = registry.slotOf(modelId);
    }

    function _shares() internal view returns (ModelShares) {
        return ModelShares(registry.sharesOf(MODEL_ID));
    }

    /// @notice The honest first job: 16 steps from the seed state, finalized, its final state on the
    ///         lineage. The solver holds all the shares.
    function _honestFirstJob() internal returns (uint256 jobId) {
        jobId = _post(SPEC_HASH, INIT_HASH, TOTAL_STEPS, INTERVAL, REWARD);
        _runApproved(jobId, solver, _stateHashes(TOTAL_STEPS, INTERVAL));
        _extend(jobId);
        assertEq(_shares().balanceOf(solver), TOTAL_STEPS, "honest shares");
        assertEq(_shares().ownershipBps(solver), 10_000, "honest bps");
    }

    ////// P-18: dilution //////

    /// @notice The owner posts a cheap spec (a one-parameter model) with N = 1,000,000 and reward 0
    ///         from a state of its own; its accomplice runs it and every verifier approves. It is
    ///         off the lineage: nothing is minted and the honest trainer keeps 100% (it fell to 0.00%
    ///         before: 1,000,000 shares against 16).
    function test_dilution_cheapSpecOffHead_mintsNothing() public {
        _honestFirstJob();
        uint256 solverHoldings = _holdings(solver);
        bytes32 cheapInit = keccak256("one-parameter model, seed 0");
        uint256 jobId = _post(keccak256("one-parameter spec"), cheapInit, 1_000_000, 250, 0);
        _runApproved(jobId, colluder, _statesFrom(cheapInit, 1_000_000, 250, "cheap"));

        ModelShares shares = _shares();
        assertEq(shares.balanceOf(colluder), 0, "colluder minted");
        assertEq(shares.totalSupply(), TOTAL_STEPS, "supply diluted");
        assertEq(shares.ownershipBps(solver), 10_000, "honest trainer diluted");
        assertEq(_holdings(solver), solverHoldings, "honest tokens moved");
        assertEq(registry.lineageLength(MODEL_ID), 1, "lineage grew");
    }

    /// @notice From the head the same cheap job mints by the model's registered compute per step, not
    ///         by steps: a model of 1000 FLOP per step pays 1000 shares per verified step, so a job
    ///         under it earns in proportion to the model's compute it did (the spec's architecture and
    ///         compute are checked against the registered ones by every node, veritrain.lineage).
    function test_dilution_sharesCountRegisteredCompute_succeeds() public {
        bytes32 model = keccak256("compute model");
        vm.prank(submitter);
        registry.registerModel(model, ARCHITECTURE, FAMILY, 1000, INIT_HASH);
        vm.prank(submitter);
        uint256 jobId = jobManager.postJob(model, SPEC_HASH, INIT_HASH, TOTAL_STEPS, INTERVAL, REWARD, SPEC_URI);
        _runApproved(jobId, solver, _stateHashes(TOTAL_STEPS, INTERVAL));
        _extend(jobId);
        ModelShares shares = ModelShares(registry.sharesOf(model));
        assertEq(shares.balanceOf(solver), uint256(TOTAL_STEPS) * 1000, "shares != steps * compute");
    }

    ////// P-26: twin jobs //////

    /// @notice The same spec from the same start posted twice: the second post reverts while the
    ///         first is live and after it finalized; the submitter's tokens do not move and the first
    ///         solver keeps its reward and all the shares (before: the twin's solver copied the
    ///         checkpoints and was paid the reward and the same shares again).
    function test_twinJob_secondPost_reverts() public {
        uint256 solverBefore = _holdings(solver);
        uint256 colluderBefore = _holdings(colluder);
        uint256 first = _post(SPEC_HASH, INIT_HASH, TOTAL_STEPS, INTERVAL, REWARD);
        bytes32 key = registry.trainingKey(MODEL_ID, INIT_HASH, SPEC_HASH);
        assertEq(registry.trainingJobOf(key), first);
        uint256 submitterBefore = token.balanceOf(submitter);
        vm.expectRevert(abi.encodeWithSelector(IShareRegistry.TrainingAlreadyPosted.selector, MODEL_ID, key, first));
        _post(SPEC_HASH, INIT_HASH, TOTAL_STEPS, INTERVAL, REWARD);

        _runApproved(first, solver, _stateHashes(TOTAL_STEPS, INTERVAL));
        vm.expectRevert(abi.encodeWithSelector(IShareRegistry.TrainingAlreadyPosted.selector, MODEL_ID, key, first));
        _post(SPEC_HASH, INIT_HASH, TOTAL_STEPS, INTERVAL, REWARD);
        _extend(first);

        assertEq(token.balanceOf(submitter), submitterBefore, "submitter paid a twin");
        assertEq(_holdings(solver), solverBefore + REWARD, "solver reward");
        assertEq(_holdings(colluder), colluderBefore, "twin paid");
        assertEq(_shares().totalSupply(), TOTAL_STEPS, "shares minted twice");
    }

    /// @notice A job that ended without paying frees its training: cancelled, the same training can
    ///         be posted again.
    function test_twinJob_afterCancel_succeeds() public {
        uint256 first = _post(SPEC_HASH, INIT_HASH, TOTAL_STEPS, INTERVAL, REWARD);
        vm.prank(submitter);
        jobManager.cancelJob(first);
        uint256 second = _post(SPEC_HASH, INIT_HASH, TOTAL_STEPS, INTERVAL, REWARD);
        assertEq(registry.trainingJobOf(registry.trainingKey(MODEL_ID, INIT_HASH, SPEC_HASH)), second);
    }

    /// @notice The post kind lives in the job's status word: the registry writes only the training
    ///         key (and the head's slot for the lineage job) per post, the JobManager's job holds the
    ///         kind the registry gave it, and the registry's views read it back from there. A
    ///         registry that keeps a word per job for the kind writes one more at each post.
    function test_postKind_keptInTheJob_registryWritesNoWordForIt_succeeds() public {
        vm.record();
        uint256 first = _post(SPEC_HASH, INIT_HASH, TOTAL_STEPS, INTERVAL, REWARD);
        (, bytes32[] memory writes) = vm.accesses(address(registry));
        assertEq(writes.length, 2, "the lineage job: its training key and the head's slot");
        vm.record();
        uint256 twin = _post(keccak256("same training, other bytes"), INIT_HASH, TOTAL_STEPS, INTERVAL, REWARD);
        (, writes) = vm.accesses(address(registry));
        assertEq(writes.length, 1, "a paid-only job: its training key");
        assertEq(uint8(jobManager.getJob(first).kind), uint8(PostKind.LineageSlot));
        assertEq(uint8(jobManager.getJob(twin).kind), uint8(PostKind.PaidOnly));
        assertEq(uint8(registry.postKindOf(first)), uint8(PostKind.LineageSlot));
        assertEq(uint8(registry.postKindOf(twin + 1)), uint8(PostKind.None), "no such job");
    }

    /// @notice A near twin (another spec hash from the same head) that copies the first run's
    ///         checkpoints is paid only from its post (the first job holds the head's slot): paid its
    ///         reward by its own submitter, it mints no shares, even finalizing first: one head is
    ///         trained once.
    function test_twinJob_sameHeadSecondFinalize_mintsNothing() public {
        uint256 colluderBefore = _holdings(colluder);
        uint256 first = _post(SPEC_HASH, INIT_HASH, TOTAL_STEPS, INTERVAL, REWARD);
        bytes32 twinSpec = keccak256("same training, other bytes");
        vm.expectEmit(address(registry));
        emit IShareRegistry.PaidOnlyPosted(MODEL_ID, first + 1, INIT_HASH, first);
        uint256 twin = _post(twinSpec, INIT_HASH, TOTAL_STEPS, INTERVAL, REWARD);
        assertTrue(registry.isLineageJob(first));
        assertFalse(registry.isLineageJob(twin));
        assertEq(uint8(registry.postKindOf(twin)), uint8(PostKind.PaidOnly));
        bytes32[] memory states = _stateHashes(TOTAL_STEPS, INTERVAL);
        _runApproved(twin, colluder, states);
        _runApproved(first, solver, states);
        assertEq(_slotJob(MODEL_ID), first);
        _extend(first);
        assertEq(_shares().balanceOf(colluder), 0, "twin minted");
        assertEq(_shares().ownershipBps(solver), 10_000, "honest bps");
        assertEq(_holdings(colluder), colluderBefore + REWARD, "twin unpaid");
    }

    ////// Start from the head //////

    /// @notice After the lineage grew, a job from the old seed state is stale: paid, no shares, and
    ///         the head stays. A job from the new head mints and extends the lineage.
    function test_startFromHead_staleStart_mintsNothing() public {
        uint256 first = _honestFirstJob();
        bytes32 head = registry.headOf(MODEL_ID);
        assertEq(head, _committedStates[first][_committedStates[first].length - 1], "head");
        (bytes32 state, uint256 jobId) = registry.lineageAt(MODEL_ID, 0);
        assertEq(state, head);
        assertEq(jobId, first);

        uint256 colluderBefore = _holdings(colluder);
        uint256 stale = _post(keccak256("stale spec"), INIT_HASH, TOTAL_STEPS, INTERVAL, REWARD);
        _runApproved(stale, colluder, _statesFrom(INIT_HASH, TOTAL_STEPS, INTERVAL, "stale"));
        assertEq(_shares().balanceOf(colluder), 0, "stale minted");
        assertEq(_holdings(colluder), colluderBefore + REWARD, "stale job unpaid");
        assertEq(registry.headOf(MODEL_ID), head, "head moved");

        uint256 next = _post(keccak256("next spec"), head, TOTAL_STEPS, INTERVAL, REWARD);
        _runApproved(next, colluder, _statesFrom(head, TOTAL_STEPS, INTERVAL, "next"));
        assertEq(_shares().balanceOf(colluder), 0, "minted before its state is on the lineage");
        _extend(next);
        assertEq(_shares().balanceOf(colluder), TOTAL_STEPS, "head job unminted");
        assertEq(_shares().ownershipBps(solver), 5000, "honest bps");
        assertEq(registry.lineageLength(MODEL_ID), 2);
        assertEq(registry.headOf(MODEL_ID), _committedStates[next][_committedStates[next].length - 1]);
    }

    function test_extendLineage_noSlotJob_reverts() public {
        vm.expectRevert(abi.encodeWithSelector(IShareRegistry.SlotJobNotFinalized.selector, MODEL_ID, 0));
        registry.extendLineage(MODEL_ID, bytes32(uint256(1)), new bytes32[](0));
        uint256 jobId = _post(SPEC_HASH, INIT_HASH, TOTAL_STEPS, INTERVAL, REWARD);
        vm.expectRevert(abi.encodeWithSelector(IShareRegistry.SlotJobNotFinalized.selector, MODEL_ID, jobId));
        registry.extendLineage(MODEL_ID, bytes32(uint256(1)), new bytes32[](0));
    }

    function test_extendLineage_wrongState_reverts() public {
        uint256 jobId = _post(SPEC_HASH, INIT_HASH, TOTAL_STEPS, INTERVAL, REWARD);
        _runApproved(jobId, solver, _stateHashes(TOTAL_STEPS, INTERVAL));
        bytes32[] memory states = _committedStates[jobId];
        bytes32[] memory proof = Merkle.proof(Merkle.leaves(INTERVAL, states), states.length - 1);
        bytes32 wrong = states[states.length - 2];
        vm.expectRevert(abi.encodeWithSelector(IShareRegistry.FinalStateNotCommitted.selector, MODEL_ID, jobId, wrong));
        registry.extendLineage(MODEL_ID, wrong, proof);
    }

    /// @notice The head can only move to the claiming job's own final state: a second job's final
    ///         state, with a valid proof against that job's root (a splice of another training onto
    ///         the lineage), is refused; so is the claiming job's state at any other position.
    function test_extendLineage_anotherJobsProvenState_reverts() public {
        uint256 claimer = _post(SPEC_HASH, INIT_HASH, TOTAL_STEPS, INTERVAL, REWARD);
        _runApproved(claimer, solver, _stateHashes(TOTAL_STEPS, INTERVAL));
        bytes32 otherStart = keccak256("another start");
        uint256 other = _post(keccak256("other spec"), otherStart, TOTAL_STEPS, INTERVAL, REWARD);
        bytes32[] memory otherStates = _statesFrom(otherStart, TOTAL_STEPS, INTERVAL, "spliced");
        _runApproved(other, solver, otherStates);
        assertEq(_slotJob(MODEL_ID), claimer, "the first job holds the head");
        bytes32 spliced = otherStates[otherStates.length - 1];
        bytes32[] memory proof = Merkle.proof(Merkle.leaves(INTERVAL, otherStates), otherStates.length - 1);
        assertTrue(jobManager.verifyCheckpoint(other, otherStates.length - 1, spliced, proof), "valid for its job");
        vm.expectRevert(
            abi.encodeWithSelector(IShareRegistry.FinalStateNotCommitted.selector, MODEL_ID, claimer, spliced)
        );
        registry.extendLineage(MODEL_ID, spliced, proof);
        // The claimer's own mid-run state, proven at its own position, is not its final state.
        bytes32[] memory states = _committedStates[claimer];
        bytes32[] memory midProof = Merkle.proof(Merkle.leaves(INTERVAL, states), 1);
        vm.expectRevert(
            abi.encodeWithSelector(IShareRegistry.FinalStateNotCommitted.selector, MODEL_ID, claimer, states[1])
        );
        registry.extendLineage(MODEL_ID, states[1], midProof);
        assertEq(registry.lineageLength(MODEL_ID), 0, "the lineage did not move");
    }

    function test_extendLineage_emits_succeeds() public {
        uint256 jobId = _post(SPEC_HASH, INIT_HASH, TOTAL_STEPS, INTERVAL, REWARD);
        _runApproved(jobId, solver, _stateHashes(TOTAL_STEPS, INTERVAL));
        bytes32 last = _committedStates[jobId][_committedStates[jobId].length - 1];
        vm.expectEmit(address(registry));
        emit IShareRegistry.LineageExtended(MODEL_ID, 0, jobId, last);
        _extend(jobId);
        assertEq(_slotJob(MODEL_ID), 0);
    }

    ////// P-19: replay cost //////

    /// @notice A segment whose replay costs more than maxSegmentCompute (k * computePerStep) is
    ///         refused at post; the submitter's tokens do not move. The bound itself is accepted.
    function test_postJob_segmentComputeAboveMax_reverts() public {
        uint256 bound = registry.maxSegmentCompute();
        assertEq(bound, Deploy.MAX_SEGMENT_COMPUTE);
        bytes32 model = keccak256("heavy model");
        uint64 perStep = uint64(bound / INTERVAL);
        vm.prank(submitter);
        registry.registerModel(model, ARCHITECTURE, FAMILY, perStep + 1, INIT_HASH);
        uint256 before = token.balanceOf(submitter);
        vm.expectRevert(
            abi.encodeWithSelector(
                IShareRegistry.SegmentComputeAboveMax.selector, uint256(INTERVAL) * (perStep + 1), bound
            )
        );
        vm.prank(submitter);
        jobManager.postJob(model, SPEC_HASH, INIT_HASH, TOTAL_STEPS, INTERVAL, REWARD, SPEC_URI);
        assertEq(token.balanceOf(submitter), before);

        bytes32 fits = keccak256("fitting model");
        vm.prank(submitter);
        registry.registerModel(fits, ARCHITECTURE, FAMILY, perStep, INIT_HASH);
        vm.prank(submitter);
        jobManager.postJob(fits, SPEC_HASH, INIT_HASH, TOTAL_STEPS, INTERVAL, REWARD, SPEC_URI);
    }
}
