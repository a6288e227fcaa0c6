// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

// Testing
import {Merkle} from "./utils/Merkle.sol";
import {RunRegistry_Base} from "./RunRegistry.t.sol";
// Contracts
import {ModelShares} from "../src/ModelShares.sol";
// Interfaces
import {IRunRegistry} from "../src/interfaces/IRunRegistry.sol";
import {IShareRegistry} from "../src/interfaces/IShareRegistry.sol";
// Types
import {JobStatus} from "../src/types/JobTypes.sol";
import {PostKind} from "../src/types/LineageTypes.sol";
import {Role} from "../src/types/Role.sol";

/// @notice Findings of the outside attack review on the lineage and the runs (docs/SECURITY.md
///         P-18, P-28, P-29): heads are decided by a rule fixed at post, not by a race to
///         finalize; a job is a lineage job or a contribution from its post; a round's
///         registration closes by a rule; a claim's committee excludes every interested party.
///         Every attack measures the honest parties' tokens and shares before and after.
contract LineageSlot_Attack_Test is RunRegistry_Base {
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

    /// @notice Posts (as the model owner) a MODEL_ID job of `specHash` from `start`.
    function _postFrom(bytes32 specHash, bytes32 start, uint32 totalSteps) internal returns (uint256 jobId) {
        vm.prank(submitter);
        jobId = jobManager.postJob(MODEL_ID, specHash, start, totalSteps, INTERVAL, REWARD, SPEC_URI);
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

    /// @notice Proves job `jobId`'s final state (its last committed leaf) on MODEL_ID's lineage.
    function _extend(uint256 jobId) internal {
        bytes32[] memory states = _committedStates[jobId];
        bytes32[] memory proof = Merkle.proof(Merkle.leaves(INTERVAL, states), states.length - 1);
        registry.extendLineage(MODEL_ID, states[states.length - 1], proof);
    }

    function _modelShares(address account) internal view returns (uint256) {
        return ModelShares(registry.sharesOf(MODEL_ID)).balanceOf(account);
    }

    ////// Finding 3: the owner snipes the head from its trainer (P-18) //////

    /// @notice A trainer runs a 16-step job from the head; the owner then posts a 2-step job from
    ///         the same head and its accomplice finalizes it first. The trainer's job holds the
    ///         head's slot from its post: it ends with its reward and its 16 shares; the sniper's
    ///         job is paid but mints nothing (before: the trainer got 0 shares, the sniper 2).
    function test_attack_ownerSnipesTheHead_trainerKeepsItsShares() public {
        uint256 trainerBefore = _holdings(solver);
        uint256 sniperBefore = _holdings(colluder);
        uint256 honest = _postFrom(SPEC_HASH, INIT_HASH, TOTAL_STEPS);
        vm.prank(solver);
        jobManager.claimJob(honest);
        vm.expectEmit(address(registry));
        emit IShareRegistry.PaidOnlyPosted(MODEL_ID, honest + 1, INIT_HASH, honest);
        uint256 snipe = _postFrom(keccak256("10-step snipe"), INIT_HASH, INTERVAL);
        assertFalse(registry.isLineageJob(snipe), "the snipe is a lineage job");
        _runApproved(snipe, colluder, _statesFrom(INIT_HASH, INTERVAL, INTERVAL, "snipe"));
        _commit(honest, solver, _stateHashes(TOTAL_STEPS, INTERVAL));
        _assign(honest);
        _submitAll(honest, 0);
        _passChallengeWindow(honest);
        jobManager.finalize(honest);
        _extend(honest);

        assertEq(_modelShares(solver), TOTAL_STEPS, "trainer's shares");
        assertEq(_modelShares(colluder), 0, "sniper minted");
        assertEq(_holdings(solver), trainerBefore + REWARD, "trainer's tokens");
        assertEq(registry.headOf(MODEL_ID), _committedStates[honest][_committedStates[honest].length - 1]);
        assertEq(_holdings(colluder), sniperBefore + REWARD, "the snipe is paid");
    }

    ////// Finding 4: a withheld final state freezes the model //////

    /// @notice The solver holding the head never serves its final state. Once the lineage window
    ///         (the deployment's openWindow) has passed, the slot is free again: the next job from
    ///         the same head takes it and its honest trainer is minted when it extends the lineage;
    ///         the withholder is paid its reward but mints nothing (before: the withholder had its
    ///         shares at finalize and every later job from the head minted 0, forever).
    function test_attack_withheldFinalState_headMovesOn() public {
        uint256 withheld = _postFrom(keccak256("withheld spec"), INIT_HASH, TOTAL_STEPS);
        uint256 withholderBefore = _holdings(colluder);
        _runApproved(withheld, colluder, _statesFrom(INIT_HASH, TOTAL_STEPS, INTERVAL, "withheld"));
        (, uint64 extendBy) = registry.slotOf(MODEL_ID);
        assertEq(uint256(extendBy), block.timestamp + registry.lineageWindow());
        vm.warp(uint256(extendBy) + 1);
        // Too late for the withholder: its state can no longer be appended.
        bytes32[] memory states = _committedStates[withheld];
        bytes32[] memory proof = Merkle.proof(Merkle.leaves(INTERVAL, states), states.length - 1);
        vm.expectRevert(
            abi.encodeWithSelector(IShareRegistry.LineageWindowClosed.selector, MODEL_ID, withheld, extendBy)
        );
        registry.extendLineage(MODEL_ID, states[states.length - 1], proof);
        (uint256 slotJob,) = registry.slotOf(MODEL_ID);
        assertEq(slotJob, 0, "the lapsed slot still held");
        vm.expectEmit(address(registry));
        emit IShareRegistry.SlotReleased(MODEL_ID, withheld);

        uint256 trainerBefore = _holdings(solver);
        uint256 sniperBefore = _holdings(colluder);
        uint256 honest = _postFrom(SPEC_HASH, INIT_HASH, TOTAL_STEPS);
        _runApproved(honest, solver, _stateHashes(TOTAL_STEPS, INTERVAL));
        _extend(honest);

        assertEq(_modelShares(colluder), 0, "withholder minted");
        assertEq(_holdings(colluder), withholderBefore + REWARD, "withholder's reward");
        assertEq(_modelShares(solver), TOTAL_STEPS, "trainer's shares");
        assertEq(_holdings(solver), trainerBefore + REWARD, "trainer's tokens");
        assertEq(registry.lineageLength(MODEL_ID), 1);
    }

    ////// Finding 1: one contribution minted twice (P-29) //////

    /// @notice A round-0 contribution that starts from the model's head finalizes before the round
    ///         is claimed (before: it finalized before it was registered, claimed the head and
    ///         minted, then the owner registered it and the round minted it again). It is a
    ///         contribution from its post: it takes no slot, mints nothing at finalize, and its
    ///         solver ends with the shares of its 16 steps once, from the round.
    function test_attack_contributionFinalizedBeforeRegistration_mintsOnce() public {
        bytes32 model = keccak256("a model rooted at INIT_HASH");
        vm.prank(submitter);
        registry.registerModel(model, ARCHITECTURE, FAMILY, COMPUTE_PER_STEP, INIT_HASH);
        vm.prank(submitter);
        uint256 runId = runs.openRun(model, RUN_HASH, START_HASH, 1, 1, INNER_STEPS, RUN_SPEC_URI);
        uint256 solverBefore = _holdings(solver);
        uint256 ownerBefore = _holdings(submitter);
        vm.prank(submitter);
        uint256 jobId = runs.postContribution(runId, 0, INIT_HASH, INTERVAL, REWARD);
        (uint256 slotJob,) = registry.slotOf(model);
        assertEq(slotJob, 0, "the contribution holds the head");
        _finalizeJob(jobId, solver);
        assertEq(_sharesMinted(model), 0, "minted at finalize");
        _propose(proposer, runId, keccak256("outer 1"), 1);
        _passClaimWindow(runId);
        runs.finalizeRound(runId);
        ModelShares shares = ModelShares(registry.sharesOf(model));
        assertEq(shares.balanceOf(solver), _shares(), "minted twice");
        assertEq(shares.totalSupply(), _shares(), "supply");
        assertEq(_holdings(solver), solverBefore + REWARD, "solver paid once");
        assertEq(ownerBefore - _holdings(submitter), jobManager.postCost(REWARD), "owner paid one job");
    }

    ////// Finding 6: an early claim closes registration (P-28) //////

    /// @notice The seats of a 2-seat round are posted in two batches; a stranger proposes as soon as
    ///         the first settles. The proposal is refused while a seat is unregistered; the second
    ///         batch registers, and both seats' solvers end with their shares.
    function test_attack_earlyClaim_laterSeatsStillCount() public {
        uint256 runId = _openRun(RUN_HASH, 2, 1);
        uint256 job0 = _registered(runId, 0, 0);
        _finalizeJob(job0, solver);
        uint256 strangerBefore = _holdings(stranger);
        uint64 deadline = runs.registrationDeadline(runId, 0);
        vm.expectRevert(abi.encodeWithSelector(IRunRegistry.RegistrationOpen.selector, runId, uint32(0), 1, deadline));
        vm.prank(stranger);
        runs.proposeRound(runId, keccak256("early"), 1);
        assertEq(_holdings(stranger), strangerBefore, "stranger's bond moved");

        uint256 job1 = _registered(runId, 0, 1);
        _finalizeJob(job1, solver2);
        _propose(proposer, runId, keccak256("outer 1"), 3);
        _passClaimWindow(runId);
        runs.finalizeRound(runId);
        assertEq(_runShares(solver), _shares(), "first batch");
        assertEq(_runShares(solver2), _shares(), "second batch");
    }

    ////// Finding 7: a party judges its own claim //////

    /// @notice The model's owner (poster of every contribution, holder of its shares) and its
    ///         authorised poster are staked verifiers: neither may sit on the committee that judges
    ///         the round claim.
    function test_attack_ownerOnTheCommittee_excluded() public {
        address poster = _actor("poster");
        vm.prank(submitter);
        registry.authorizePoster(RUN_MODEL, poster);
        _stake(submitter, Role.Verifier, 500e18);
        _stake(poster, Role.Verifier, 500e18);
        uint256 runId = _settledRound(1, solver2);
        _propose(proposer, runId, keccak256("outer 1"), 3);
        uint256 disputeId = _challenge(watcher, runId);
        assertTrue(committee.isExcluded(disputeId, submitter), "owner may judge");
        assertTrue(committee.isExcluded(disputeId, poster), "poster may judge");
        address[] memory members = _drawCommittee(disputeId);
        assertFalse(_isIn(members, submitter), "owner drawn");
        assertFalse(_isIn(members, poster), "poster drawn");
    }

    ////// The slot's rule //////

    /// @notice A slot whose job is cancelled, expires or is rejected is released: the next post from
    ///         the head takes it (SlotReleased, then LineageSlotTaken).
    function test_slot_releasedWhenItsJobEndsUnpaid_succeeds() public {
        uint256 first = _postFrom(SPEC_HASH, INIT_HASH, TOTAL_STEPS);
        vm.prank(submitter);
        jobManager.cancelJob(first);
        (uint256 slotJob,) = registry.slotOf(MODEL_ID);
        assertEq(slotJob, 0, "a cancelled job holds the slot");
        vm.expectEmit(address(registry));
        emit IShareRegistry.SlotReleased(MODEL_ID, first);
        vm.expectEmit(address(registry));
        emit IShareRegistry.LineageSlotTaken(MODEL_ID, first + 1, INIT_HASH);
        uint256 second = _postFrom(keccak256("second spec"), INIT_HASH, TOTAL_STEPS);
        vm.warp(_job(second).openDeadline + 1);
        jobManager.expireJob(second);
        uint256 third = _postFrom(keccak256("third spec"), INIT_HASH, TOTAL_STEPS);
        assertTrue(registry.isLineageJob(third));
        (slotJob,) = registry.slotOf(MODEL_ID);
        assertEq(slotJob, third);
    }

    /// @notice `releaseSlot` frees a lapsed slot for anyone and refuses a free or live one.
    function test_releaseSlot_onlyWhenLapsed() public {
        vm.expectRevert(abi.encodeWithSelector(IShareRegistry.SlotHeld.selector, MODEL_ID, 0));
        registry.releaseSlot(MODEL_ID);
        uint256 jobId = _postFrom(SPEC_HASH, INIT_HASH, TOTAL_STEPS);
        vm.expectRevert(abi.encodeWithSelector(IShareRegistry.SlotHeld.selector, MODEL_ID, jobId));
        registry.releaseSlot(MODEL_ID);
        _runApproved(jobId, solver, _stateHashes(TOTAL_STEPS, INTERVAL));
        vm.expectRevert(abi.encodeWithSelector(IShareRegistry.SlotHeld.selector, MODEL_ID, jobId));
        registry.releaseSlot(MODEL_ID);
        vm.warp(block.timestamp + registry.lineageWindow() + 1);
        vm.expectEmit(address(registry));
        emit IShareRegistry.SlotReleased(MODEL_ID, jobId);
        vm.prank(stranger);
        registry.releaseSlot(MODEL_ID);
        assertEq(_sharesMinted(MODEL_ID), 0, "the withheld job minted");
    }

    /// @notice A job posted off the head is paid only, even once the head reaches its start: the
    ///         kind is fixed at post.
    function test_paidOnly_staysPaidOnly() public {
        bytes32 later = sha256(abi.encode(bytes32("first"), uint256(8)));
        uint256 early = _postFrom(keccak256("early spec"), later, TOTAL_STEPS);
        assertEq(uint8(registry.postKindOf(early)), uint8(PostKind.PaidOnly));
        uint256 first = _postFrom(SPEC_HASH, INIT_HASH, TOTAL_STEPS);
        _runApproved(first, solver, _statesFrom(INIT_HASH, TOTAL_STEPS, INTERVAL, "first"));
        _extend(first);
        assertEq(registry.headOf(MODEL_ID), later, "the head");
        _runApproved(early, colluder, _statesFrom(later, TOTAL_STEPS, INTERVAL, "early"));
        assertEq(_modelShares(colluder), 0, "a paid-only job minted");
        (uint256 slotJob,) = registry.slotOf(MODEL_ID);
        assertEq(slotJob, 0, "a paid-only job took the slot");
    }

    /// @notice The model's posters are listed (bounded by MAX_POSTERS): the claim committees read
    ///         them to exclude them.
    function test_postersOf_bounded() public {
        bytes32 model = keccak256("poster model");
        vm.startPrank(stranger);
        registry.registerModel(model, ARCHITECTURE, FAMILY, 1, INIT_HASH);
        uint256 max = registry.MAX_POSTERS();
        for (uint256 i; i < max; ++i) {
            registry.authorizePoster(model, address(uint160(0x1000 + i)));
        }
        vm.expectRevert(abi.encodeWithSelector(IShareRegistry.TooManyPosters.selector, model, max));
        registry.authorizePoster(model, address(0xBEEF));
        registry.revokePoster(model, address(0x1000));
        registry.authorizePoster(model, address(0xBEEF));
        vm.stopPrank();
        address[] memory posters = registry.postersOf(model);
        assertEq(posters.length, max);
        assertTrue(_isIn(posters, address(0xBEEF)));
        assertFalse(_isIn(posters, address(0x1000)));
    }
}
