// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

// Testing
import {Deployers} from "../../utils/Deployers.sol";
import {Merkle} from "../../utils/Merkle.sol";
// Contracts
import {ModelShares} from "../../../src/ModelShares.sol";
// Types
import {JobStatus} from "../../../src/types/JobTypes.sol";
import {Role} from "../../../src/types/Role.sol";

/// @title LineageSlotHandler
/// @notice Multi-role actors on one model's head slot (docs/SECURITY.md P-18): the model's owner,
///         who is also its poster and a staked solver and posts every job; an honest trainer that
///         trains the slot job and appends its final state; the owner's sniper, which trains short
///         jobs the owner posts from the same head and races to finalize first; a withholder that
///         trains the slot job and never serves its final state. Time moves. The deployment is the
///         handler's own (`setUp`, called once by the invariant test).
contract LineageSlotHandler is Deployers {
    ////// Actors //////

    address public owner;
    address public trainer;
    address public sniper;
    address public withholder;

    ////// Ghosts //////

    /// @notice Steps of the slot jobs the honest trainer finalized and appended (1 FLOP per step).
    uint256 public ghost_trainerSteps;
    /// @notice Steps of the slot jobs the owner trained itself and appended.
    uint256 public ghost_ownerSteps;
    /// @notice Holdings (tokens, credit, stake) of the trainer and each verifier at the start.
    mapping(address account => uint256 holdings) public startHoldings;
    /// @notice Successful actions, to check the run reached deep states.
    mapping(bytes32 action => uint256 count) public ghost_calls;

    uint256 internal _specs;

    function setUp() public override {
        super.setUp();
        owner = submitter;
        trainer = solver;
        sniper = _actor("sniper");
        withholder = _actor("withholder");
        _stake(owner, Role.Solver, 1000e18);
        _stake(sniper, Role.Solver, 1000e18);
        _stake(withholder, Role.Solver, 1000e18);
        startHoldings[trainer] = _holdings(trainer);
        for (uint256 i; i < verifierPool.length; ++i) {
            startHoldings[verifierPool[i]] = _holdings(verifierPool[i]);
        }
    }

    ////// Actions //////

    /// @notice The owner posts a job from the current head (it takes the slot if the slot is free).
    function post(uint256 stepsSeed) external {
        _post(registry.headOf(MODEL_ID), uint32(bound(stepsSeed, 1, 8)) * INTERVAL);
        ++ghost_calls["post"];
    }

    /// @notice The honest trainer trains the slot job if it is Open, finalizes it and appends its
    ///         final state.
    function trainSlot() external {
        uint256 jobId = _openSlotJob();
        if (jobId == 0) return;
        _train(jobId, trainer, "trainer");
        _appendFinalState(jobId);
        ghost_trainerSteps += _job(jobId).totalSteps;
        ++ghost_calls["trainSlot"];
    }

    /// @notice The owner, as a solver, trains its own slot job and appends it.
    function ownerTrainsSlot() external {
        uint256 jobId = _openSlotJob();
        if (jobId == 0) return;
        _train(jobId, owner, "owner");
        _appendFinalState(jobId);
        ghost_ownerSteps += _job(jobId).totalSteps;
        ++ghost_calls["ownerTrainsSlot"];
    }

    /// @notice While another job holds the head's slot, the owner posts a one-segment job from the
    ///         same head and the sniper finalizes it at once, then tries to append its state.
    function snipe() external {
        (uint256 held,) = registry.slotOf(MODEL_ID);
        if (held == 0) return;
        uint256 jobId = _post(registry.headOf(MODEL_ID), INTERVAL);
        if (jobId == 0) return;
        _train(jobId, sniper, "snipe");
        bytes32[] memory states = _committedStates[jobId];
        bytes32[] memory proof = Merkle.proof(Merkle.leaves(INTERVAL, states), states.length - 1);
        try registry.extendLineage(MODEL_ID, states[states.length - 1], proof) {} catch {}
        ++ghost_calls["snipe"];
    }

    /// @notice The withholder trains the slot job if it is Open and never serves its final state.
    function withhold() external {
        uint256 jobId = _openSlotJob();
        if (jobId == 0) return;
        _train(jobId, withholder, "withheld");
        ++ghost_calls["withhold"];
    }

    /// @notice The owner cancels the slot job while it is Open.
    function cancelSlot() external {
        uint256 jobId = _openSlotJob();
        if (jobId == 0) return;
        vm.prank(owner);
        jobManager.cancelJob(jobId);
        ++ghost_calls["cancelSlot"];
    }

    function warp(uint256 seconds_) external {
        vm.warp(block.timestamp + bound(seconds_, 1 hours, 2 days));
        vm.roll(block.number + 1);
    }

    /// @notice Ends a run with the three attacks in a row, whatever came before: the slot is freed
    ///         (its Open job expired or cancelled, a withheld one lapsed), then a withholder holds a
    ///         new slot job and lets it lapse, then the owner snipes the next slot job while the
    ///         honest trainer trains it.
    function finish() external {
        vm.warp(block.timestamp + 2 days);
        (uint256 held,) = registry.slotOf(MODEL_ID);
        if (held != 0 && _job(held).status == JobStatus.Open) {
            jobManager.expireJob(held);
        }
        this.post(0);
        this.withhold();
        vm.warp(block.timestamp + 2 days);
        this.post(4);
        this.snipe();
        this.trainSlot();
    }

    ////// Views //////

    function shares() public view returns (ModelShares) {
        return ModelShares(registry.sharesOf(MODEL_ID));
    }

    function holdings(address account) external view returns (uint256) {
        return _holdings(account);
    }

    function verifierCount() external view returns (uint256) {
        return verifierPool.length;
    }

    function verifierAt(uint256 i) external view returns (address) {
        return verifierPool[i];
    }

    ////// Internal //////

    /// @notice Posts (as the owner) a fresh job of `steps` steps from `start`; 0 if the post fails.
    function _post(bytes32 start, uint32 steps) internal returns (uint256 jobId) {
        bytes32 specHash = keccak256(abi.encode("handler spec", ++_specs));
        vm.prank(owner);
        try jobManager.postJob(MODEL_ID, specHash, start, steps, INTERVAL, REWARD, SPEC_URI) returns (uint256 id) {
            jobId = id;
        } catch {}
    }

    /// @notice The slot job if it is Open (claimable now), else 0.
    function _openSlotJob() internal view returns (uint256 jobId) {
        (jobId,) = registry.slotOf(MODEL_ID);
        if (jobId != 0 && (_job(jobId).status != JobStatus.Open || block.timestamp > _job(jobId).openDeadline)) {
            jobId = 0;
        }
    }

    /// @notice `account` claims job `jobId`, commits states of its own from the job's start, every
    ///         verifier approves and the job finalizes.
    function _train(uint256 jobId, address account, bytes32 tag) internal {
        uint32 steps = _job(jobId).totalSteps;
        bytes32[] memory states = new bytes32[](steps / INTERVAL + 1);
        states[0] = _job(jobId).root; // initHash until the commit
        for (uint256 i = 1; i < states.length; ++i) {
            states[i] = sha256(abi.encode(tag, jobId, i));
        }
        vm.prank(account);
        jobManager.claimJob(jobId);
        _commit(jobId, account, states);
        _assign(jobId);
        _submitAll(jobId, 0);
        _passChallengeWindow(jobId);
        jobManager.finalize(jobId);
        require(_job(jobId).status == JobStatus.Finalized, "handler: not finalized");
    }
}
