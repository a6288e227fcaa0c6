// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

// Testing
import {Deployers} from "./utils/Deployers.sol";
// Contracts
import {ModelShares} from "../src/ModelShares.sol";
import {RunRegistry} from "../src/RunRegistry.sol";
import {ShareRegistry} from "../src/ShareRegistry.sol";
// Interfaces
import {IAccessControl} from "@openzeppelin/contracts/access/IAccessControl.sol";
import {IArbitrationCommittee} from "../src/interfaces/IArbitrationCommittee.sol";
import {IJobManager} from "../src/interfaces/IJobManager.sol";
import {IRunRegistry} from "../src/interfaces/IRunRegistry.sol";
import {IShareRegistry} from "../src/interfaces/IShareRegistry.sol";
// Types
import {JobStatus} from "../src/types/JobTypes.sol";
import {Role} from "../src/types/Role.sol";
import {RunRound, RunRoundPhase} from "../src/types/RunTypes.sol";

/// @notice Shared setup of the RunRegistry suites: the deployment's registry, a model of its own
///         (1000 FLOP per step, a seed no contribution starts from, so contributions never mint on
///         the lineage), a second honest solver, an honest proposer, an honest watcher and the
///         owner's accomplice.
abstract contract RunRegistry_Base is Deployers {
    bytes32 internal constant RUN_MODEL = keccak256("diloco-mlp");
    bytes32 internal constant RUN_SEED = keccak256("run model seed");
    bytes32 internal constant RUN_HASH = keccak256("run spec json");
    bytes32 internal constant OTHER_RUN_HASH = keccak256("another run spec json");
    bytes32 internal constant START_HASH = keccak256("outer state 0");
    uint64 internal constant COMPUTE_PER_STEP = 1000;
    uint32 internal constant INNER_STEPS = TOTAL_STEPS;

    RunRegistry internal runs;
    address internal solver2;
    address internal proposer;
    address internal watcher;
    address internal colluder;

    function setUp() public virtual override {
        super.setUp();
        runs = RunRegistry(committee.claimParent());
        solver2 = _actor("solver2");
        _stake(solver2, Role.Solver, 1000e18);
        colluder = _actor("colluder");
        _stake(colluder, Role.Solver, 1000e18);
        proposer = _actor("proposer");
        watcher = _actor("watcher");
        vm.prank(submitter);
        registry.registerModel(RUN_MODEL, ARCHITECTURE, FAMILY, COMPUTE_PER_STEP, RUN_SEED);
    }

    ////// Helpers //////

    function _openRun(bytes32 runHash, uint32 seats, uint32 rounds) internal returns (uint256 runId) {
        vm.prank(submitter);
        runId = runs.openRun(RUN_MODEL, runHash, START_HASH, seats, rounds, INNER_STEPS, RUN_SPEC_URI);
    }

    /// @notice Opens a run whose round 0 has every seat registered and cancelled: registration is
    ///         closed, the round can be proposed, with nothing to count.
    function _openSettledRun(bytes32 runHash, uint32 seats, uint32 rounds) internal returns (uint256 runId) {
        runId = _openRun(runHash, seats, rounds);
        for (uint32 seat; seat < seats; ++seat) {
            uint256 jobId = _registered(runId, 0, seat);
            vm.prank(submitter);
            jobManager.cancelJob(jobId);
        }
    }

    function _spec(bytes32 runHash, uint32 t, uint32 seat) internal pure returns (bytes32) {
        return keccak256(abi.encode(runHash, uint256(t), uint256(seat)));
    }

    /// @notice Posts and registers (as the model owner) contribution `seat` of run `runId`'s current
    ///         round `t` (checked), from INIT_HASH.
    function _registered(uint256 runId, uint32 t, uint32 seat) internal returns (uint256 jobId) {
        assertEq(uint256(runs.getRun(runId).round), t, "not the current round");
        jobId = _postContribution(submitter, runId, seat);
    }

    function _postContribution(address poster, uint256 runId, uint32 seat) internal returns (uint256 jobId) {
        vm.prank(poster);
        jobId = runs.postContribution(runId, seat, INIT_HASH, INTERVAL, REWARD);
    }

    /// @notice `account` trains job `jobId` honestly; every verifier approves; it finalizes.
    function _finalizeJob(uint256 jobId, address account) internal {
        vm.prank(account);
        jobManager.claimJob(jobId);
        _commit(jobId, account, _stateHashes(TOTAL_STEPS, INTERVAL));
        _assign(jobId);
        _submitAll(jobId, 0);
        _passChallengeWindow(jobId);
        jobManager.finalize(jobId);
        assertEq(uint8(_job(jobId).status), uint8(JobStatus.Finalized), "job not finalized");
    }

    function _propose(address account, uint256 runId, bytes32 stateHash, uint256 accepted) internal {
        vm.prank(account);
        runs.proposeRound(runId, stateHash, accepted);
    }

    function _challenge(address account, uint256 runId) internal returns (uint256 disputeId) {
        vm.prank(account);
        runs.challengeRound(runId);
        disputeId = runs.getRound(runId, runs.getRun(runId).round).disputeId;
    }

    function _passClaimWindow(uint256 runId) internal {
        RunRound memory state = runs.getRound(runId, runs.getRun(runId).round);
        vm.warp(uint256(state.challengeDeadline) + 1);
    }

    /// @notice Draws the claim dispute's committee; every member but the first `absent` votes
    ///         `claimValid`; resolves once the windows allow it.
    function _arbitrateClaim(uint256 disputeId, bool claimValid, uint256 absent)
        internal
        returns (address[] memory members)
    {
        members = _voteClaim(disputeId, claimValid, absent);
        committee.resolve(disputeId);
    }

    /// @notice `_arbitrateClaim` up to the resolution: the dispute is then Resolvable.
    function _voteClaim(uint256 disputeId, bool claimValid, uint256 absent)
        internal
        returns (address[] memory members)
    {
        members = _drawCommittee(disputeId);
        for (uint256 i = absent; i < members.length; ++i) {
            _commitVote(disputeId, members[i], claimValid);
        }
        if (absent != 0) vm.warp(uint256(_dispute(disputeId).commitDeadline) + 1);
        for (uint256 i = absent; i < members.length; ++i) {
            _revealVote(disputeId, members[i], claimValid);
        }
        if (absent != 0) vm.warp(uint256(_dispute(disputeId).revealDeadline) + 1);
    }

    function _runShares(address account) internal view returns (uint256) {
        address shares = registry.sharesOf(RUN_MODEL);
        return shares == address(0) ? 0 : ModelShares(shares).balanceOf(account);
    }

    function _phase(uint256 runId, uint32 t) internal view returns (RunRoundPhase) {
        return runs.getRound(runId, t).phase;
    }

    /// @notice A run of 2 seats and `rounds` rounds whose round 0 has both contributions finalized:
    ///         seat 0 trained by `solver`, seat 1 by `seat1Solver`.
    function _settledRound(uint32 rounds, address seat1Solver) internal returns (uint256 runId) {
        runId = _openRun(RUN_HASH, 2, rounds);
        uint256 job0 = _registered(runId, 0, 0);
        uint256 job1 = _registered(runId, 0, 1);
        _finalizeJob(job0, solver);
        _finalizeJob(job1, seat1Solver);
    }

    function _shares() internal pure returns (uint256) {
        return uint256(INNER_STEPS) * COMPUTE_PER_STEP;
    }
}

/// @notice Deployment, parameters and the wiring of the committee and the ShareRegistry.
contract RunRegistry_Setup_Test is RunRegistry_Base {
    function test_deploy_wiresTheRegistry_succeeds() public {
        assertEq(address(runs.jobManager()), address(jobManager));
        assertEq(address(runs.committee()), address(committee));
        assertEq(registry.runMinter(), address(runs));
        assertTrue(escrow.isAuthorized(address(runs)));
        assertTrue(stakeManager.isProtocol(address(runs)));
        assertEq(runs.claimBond(), 100e18);
        assertEq(runs.challengeWindow(), 30 minutes);
        assertEq(runs.runCount(), 0);
    }

    function test_constructor_zeroAddress_reverts() public {
        vm.expectRevert(IRunRegistry.ZeroAddress.selector);
        new RunRegistry(IJobManager(address(0)), committee, 100e18, 1 hours, 1 hours);
        vm.expectRevert(IRunRegistry.ZeroAddress.selector);
        new RunRegistry(jobManager, IArbitrationCommittee(address(0)), 100e18, 1 hours, 1 hours);
    }

    function test_constructor_claimBondBelowCommittee_reverts() public {
        uint256 minBond = uint256(committee.committeeSize()) * params.arbiterFee;
        vm.expectRevert(abi.encodeWithSelector(IRunRegistry.InvalidParam.selector, "claimBond", minBond - 1));
        new RunRegistry(jobManager, committee, minBond - 1, 1 hours, 1 hours);
        vm.expectRevert(abi.encodeWithSelector(IRunRegistry.InvalidParam.selector, "claimBond", 0));
        new RunRegistry(jobManager, committee, 0, 1 hours, 1 hours);
        RunRegistry fresh = new RunRegistry(jobManager, committee, minBond, 1 hours, 1 hours);
        assertEq(fresh.claimBond(), minBond);
    }

    function test_constructor_challengeWindowOutOfRange_reverts() public {
        vm.expectRevert(abi.encodeWithSelector(IRunRegistry.InvalidParam.selector, "challengeWindow", 0));
        new RunRegistry(jobManager, committee, 100e18, 0, 1 hours);
        uint64 tooLong = runs.MAX_CHALLENGE_WINDOW() + 1;
        vm.expectRevert(abi.encodeWithSelector(IRunRegistry.InvalidParam.selector, "challengeWindow", tooLong));
        new RunRegistry(jobManager, committee, 100e18, tooLong, 1 hours);
        vm.expectRevert(abi.encodeWithSelector(IRunRegistry.InvalidParam.selector, "registrationWindow", 0));
        new RunRegistry(jobManager, committee, 100e18, 1 hours, 0);
        vm.expectRevert(abi.encodeWithSelector(IRunRegistry.InvalidParam.selector, "registrationWindow", tooLong));
        new RunRegistry(jobManager, committee, 100e18, 1 hours, tooLong);
    }

    function test_setClaimParent_again_reverts() public {
        vm.expectRevert(abi.encodeWithSelector(IArbitrationCommittee.ClaimParentAlreadySet.selector, address(runs)));
        committee.setClaimParent(stranger);
    }

    function test_setClaimParent_notAdmin_reverts() public {
        vm.expectRevert(abi.encodeWithSelector(IArbitrationCommittee.NotAdmin.selector, stranger));
        vm.prank(stranger);
        committee.setClaimParent(stranger);
    }

    function test_openClaimDispute_notClaimParent_reverts() public {
        address[] memory excluded = new address[](0);
        vm.expectRevert(abi.encodeWithSelector(IArbitrationCommittee.NotClaimParent.selector, stranger));
        vm.prank(stranger);
        committee.openClaimDispute(excluded);
    }

    function test_mintContribution_notRunMinter_reverts() public {
        vm.expectRevert(abi.encodeWithSelector(IShareRegistry.NotRunMinter.selector, address(jobManager)));
        vm.prank(address(jobManager));
        registry.mintContribution(RUN_MODEL, stranger, 1);
    }

    function test_mintContribution_unregisteredModel_createsTheToken_succeeds() public {
        bytes32 unregistered = keccak256("unregistered");
        assertEq(registry.sharesOf(unregistered), address(0));
        vm.prank(address(runs));
        registry.mintContribution(unregistered, stranger, 7);
        assertEq(ModelShares(registry.sharesOf(unregistered)).balanceOf(stranger), 7);
        assertEq(registry.modelAt(registry.modelCount() - 1), unregistered);
    }

    function test_mintContribution_registeredModel_mintsOnItsToken_succeeds() public {
        address shares = registry.sharesOf(RUN_MODEL);
        assertNotEq(shares, address(0), "registered model without a token");
        vm.prank(address(runs));
        registry.mintContribution(RUN_MODEL, stranger, 7);
        assertEq(registry.sharesOf(RUN_MODEL), shares, "token replaced");
        assertEq(_runShares(stranger), 7);
    }

    function test_onClaimResolved_notCommittee_reverts() public {
        address[] memory none = new address[](0);
        vm.expectRevert(abi.encodeWithSelector(IRunRegistry.NotCommittee.selector, stranger));
        vm.prank(stranger);
        runs.onClaimResolved(1, true, none, none);
    }

    function test_onClaimResolved_unknownDispute_reverts() public {
        address[] memory none = new address[](0);
        vm.expectRevert(abi.encodeWithSelector(IRunRegistry.UnknownClaimDispute.selector, 42));
        vm.prank(address(committee));
        runs.onClaimResolved(42, true, none, none);
    }
}

/// @notice proposeRound, challengeRound and finalizeRound: reverts and the honest path.
contract RunRegistry_Rounds_Test is RunRegistry_Base {
    function test_proposeRound_zeroStateHash_reverts() public {
        uint256 runId = _openRun(RUN_HASH, 2, 2);
        vm.expectRevert(IRunRegistry.ZeroStateHash.selector);
        _propose(proposer, runId, bytes32(0), 0);
    }

    function test_proposeRound_jobNotTerminal_reverts() public {
        uint256 runId = _openRun(RUN_HASH, 2, 2);
        uint256 job0 = _registered(runId, 0, 0);
        uint256 job1 = _registered(runId, 0, 1);
        _finalizeJob(job0, solver);
        vm.expectRevert(abi.encodeWithSelector(IRunRegistry.RoundNotSettled.selector, runId, 0, job1, JobStatus.Open));
        _propose(proposer, runId, keccak256("outer 1"), 1);
    }

    function test_proposeRound_seatNotFinalized_reverts() public {
        uint256 runId = _openRun(RUN_HASH, 4, 2);
        uint256 job0 = _registered(runId, 0, 0);
        for (uint32 seat = 1; seat < 4; ++seat) {
            uint256 jobId = _registered(runId, 0, seat);
            vm.prank(submitter);
            jobManager.cancelJob(jobId);
        }
        _finalizeJob(job0, solver);
        // Registered jobs that ended without finalizing, a seat past M.
        vm.expectRevert(abi.encodeWithSelector(IRunRegistry.SeatNotFinalized.selector, runId, 0, 1));
        _propose(proposer, runId, keccak256("outer 1"), 3);
        vm.expectRevert(abi.encodeWithSelector(IRunRegistry.SeatNotFinalized.selector, runId, 0, 2));
        _propose(proposer, runId, keccak256("outer 1"), 5);
        vm.expectRevert(abi.encodeWithSelector(IRunRegistry.SeatNotFinalized.selector, runId, 0, 255));
        _propose(proposer, runId, keccak256("outer 1"), 1 | (uint256(1) << 255));
        // The cancelled seat is settled: not counting it is fine.
        _propose(proposer, runId, keccak256("outer 1"), 1);
    }

    function test_proposeRound_alreadyProposed_reverts() public {
        uint256 runId = _openSettledRun(RUN_HASH, 2, 2);
        _propose(proposer, runId, keccak256("outer 1"), 0);
        vm.expectRevert(
            abi.encodeWithSelector(IRunRegistry.UnexpectedRoundPhase.selector, runId, 0, RunRoundPhase.Proposed)
        );
        _propose(watcher, runId, keccak256("another outer 1"), 0);
    }

    function test_proposeRound_runEnded_reverts() public {
        uint256 runId = _openSettledRun(RUN_HASH, 2, 1);
        _propose(proposer, runId, keccak256("outer 1"), 0);
        _passClaimWindow(runId);
        runs.finalizeRound(runId);
        vm.expectRevert(abi.encodeWithSelector(IRunRegistry.RunEnded.selector, runId));
        _propose(proposer, runId, keccak256("outer 2"), 0);
        vm.expectRevert(abi.encodeWithSelector(IRunRegistry.RunEnded.selector, runId));
        runs.finalizeRound(runId);
        vm.expectRevert(abi.encodeWithSelector(IRunRegistry.RunEnded.selector, runId));
        _challenge(watcher, runId);
    }

    function test_proposeRound_pullsTheBond_succeeds() public {
        uint256 runId = _openSettledRun(RUN_HASH, 2, 2);
        uint256 before = token.balanceOf(proposer);
        uint64 deadline = uint64(block.timestamp) + runs.challengeWindow();
        vm.expectEmit(address(runs));
        emit IRunRegistry.RoundProposed(runId, 0, proposer, keccak256("outer 1"), 0, deadline);
        _propose(proposer, runId, keccak256("outer 1"), 0);
        assertEq(before - token.balanceOf(proposer), runs.claimBond());
        RunRound memory state = runs.getRound(runId, 0);
        assertEq(uint8(state.phase), uint8(RunRoundPhase.Proposed));
        assertEq(state.stateHash, keccak256("outer 1"));
        assertEq(state.proposer, proposer);
        assertEq(uint256(state.challengeDeadline), deadline);
    }

    function test_challengeRound_noClaim_reverts() public {
        uint256 runId = _openRun(RUN_HASH, 2, 2);
        vm.expectRevert(
            abi.encodeWithSelector(IRunRegistry.UnexpectedRoundPhase.selector, runId, 0, RunRoundPhase.Open)
        );
        _challenge(watcher, runId);
    }

    function test_challengeRound_afterWindow_reverts() public {
        uint256 runId = _openSettledRun(RUN_HASH, 2, 2);
        _propose(proposer, runId, keccak256("outer 1"), 0);
        uint64 deadline = runs.getRound(runId, 0).challengeDeadline;
        vm.warp(deadline);
        vm.prank(watcher);
        runs.challengeRound(runId); // still inside at the deadline itself
        uint256 runId2 = _openSettledRun(OTHER_RUN_HASH, 2, 2);
        _propose(proposer, runId2, keccak256("outer 1"), 0);
        uint64 deadline2 = runs.getRound(runId2, 0).challengeDeadline;
        vm.warp(uint256(deadline2) + 1);
        vm.expectRevert(abi.encodeWithSelector(IRunRegistry.ChallengeWindowClosed.selector, runId2, 0, deadline2));
        _challenge(watcher, runId2);
    }

    function test_challengeRound_self_reverts() public {
        uint256 runId = _openSettledRun(RUN_HASH, 2, 2);
        _propose(proposer, runId, keccak256("outer 1"), 0);
        vm.expectRevert(abi.encodeWithSelector(IRunRegistry.SelfChallenge.selector, runId, proposer));
        _challenge(proposer, runId);
    }

    function test_challengeRound_twice_reverts() public {
        uint256 runId = _openSettledRun(RUN_HASH, 2, 2);
        _propose(proposer, runId, keccak256("outer 1"), 0);
        _challenge(watcher, runId);
        vm.expectRevert(
            abi.encodeWithSelector(IRunRegistry.UnexpectedRoundPhase.selector, runId, 0, RunRoundPhase.Disputed)
        );
        _challenge(stranger, runId);
        vm.expectRevert(
            abi.encodeWithSelector(IRunRegistry.UnexpectedRoundPhase.selector, runId, 0, RunRoundPhase.Disputed)
        );
        runs.finalizeRound(runId);
    }

    /// @notice The dispute excludes the proposer, the challenger and every registered job's solver
    ///         (a job never claimed has none).
    function test_challengeRound_opensAClaimDispute_succeeds() public {
        uint256 runId = _openRun(RUN_HASH, 3, 2);
        uint256 job0 = _registered(runId, 0, 0);
        uint256 job1 = _registered(runId, 0, 1);
        uint256 job2 = _registered(runId, 0, 2);
        _finalizeJob(job0, solver);
        _finalizeJob(job1, solver2);
        vm.warp(_job(job2).openDeadline + 1);
        jobManager.expireJob(job2);
        _propose(proposer, runId, keccak256("outer 1"), 3);
        uint256 expectedId = committee.disputeCount() + 1;
        vm.expectEmit(address(runs));
        emit IRunRegistry.RoundChallenged(runId, 0, watcher, expectedId);
        uint256 disputeId = _challenge(watcher, runId);
        assertEq(disputeId, expectedId);
        assertTrue(committee.isClaimDispute(disputeId));
        assertEq(_dispute(disputeId).jobId, 0);
        (uint256 claimRun, uint32 claimRound) = runs.claimOf(disputeId);
        assertEq(claimRun, runId);
        assertEq(uint256(claimRound), 0);
        assertTrue(committee.isExcluded(disputeId, proposer));
        assertTrue(committee.isExcluded(disputeId, watcher));
        assertTrue(committee.isExcluded(disputeId, solver));
        assertTrue(committee.isExcluded(disputeId, solver2));
        assertFalse(committee.isExcluded(disputeId, address(0)));
        assertEq(uint8(_phase(runId, 0)), uint8(RunRoundPhase.Disputed));
        assertEq(runs.getRound(runId, 0).challenger, watcher);
    }

    function test_finalizeRound_beforeWindow_reverts() public {
        uint256 runId = _openSettledRun(RUN_HASH, 2, 2);
        _propose(proposer, runId, keccak256("outer 1"), 0);
        uint64 deadline = runs.getRound(runId, 0).challengeDeadline;
        vm.warp(deadline);
        vm.expectRevert(abi.encodeWithSelector(IRunRegistry.ChallengeWindowOpen.selector, runId, 0, deadline));
        runs.finalizeRound(runId);
    }

    function test_finalizeRound_noClaim_reverts() public {
        uint256 runId = _openRun(RUN_HASH, 2, 2);
        vm.expectRevert(
            abi.encodeWithSelector(IRunRegistry.UnexpectedRoundPhase.selector, runId, 0, RunRoundPhase.Open)
        );
        runs.finalizeRound(runId);
    }

    /// @notice Two rounds of two seats, one counted each round: each counted seat's solver is
    ///         minted exactly innerSteps * computePerStep shares, the other seat's nothing; the
    ///         proposer gets its bond back; the run ends after round 1.
    function test_twoRounds_mintsCountedSeatsOnly_succeeds() public {
        uint256 runId = _settledRound(2, solver2);
        uint256 proposerBefore = _holdings(proposer);
        _propose(proposer, runId, keccak256("outer 1"), 1);
        _passClaimWindow(runId);
        uint256 counted = runs.contributionOf(runId, 0, 0);
        vm.expectEmit(address(runs));
        emit IRunRegistry.ContributionRewarded(runId, 0, 0, counted, solver, _shares());
        vm.expectEmit(address(runs));
        emit IRunRegistry.RoundFinalized(runId, 0, keccak256("outer 1"), 1, _shares());
        runs.finalizeRound(runId);
        assertEq(_runShares(solver), _shares(), "round 0 counted seat");
        assertEq(_runShares(solver2), 0, "round 0 uncounted seat");
        assertEq(_holdings(proposer), proposerBefore, "proposer bond back");
        // Straight to the wallet (docs/SECURITY.md P-41): no credit, no claimCredit to send.
        assertEq(escrow.creditOf(proposer), 0, "no credit");
        assertEq(uint8(_phase(runId, 0)), uint8(RunRoundPhase.Final));
        assertEq(uint8(_phase(runId, 1)), uint8(RunRoundPhase.Open));
        assertEq(uint256(runs.getRun(runId).round), 1);

        // Round 1: seat 0 by solver2 (not counted), seat 1 by solver (counted).
        uint256 job0 = _registered(runId, 1, 0);
        uint256 job1 = _registered(runId, 1, 1);
        _finalizeJob(job0, solver2);
        _finalizeJob(job1, solver);
        _propose(proposer, runId, keccak256("outer 2"), 2);
        _passClaimWindow(runId);
        runs.finalizeRound(runId);
        assertEq(_runShares(solver), 2 * _shares(), "round 1 counted seat");
        assertEq(_runShares(solver2), 0, "round 1 uncounted seat");
        assertEq(ModelShares(registry.sharesOf(RUN_MODEL)).totalSupply(), 2 * _shares());
        assertEq(uint256(runs.getRun(runId).round), 2);
        assertEq(uint8(_phase(runId, 1)), uint8(RunRoundPhase.Final));
        assertEq(uint8(_phase(runId, 2)), uint8(RunRoundPhase.None));
        assertEq(runs.getRound(runId, 1).stateHash, keccak256("outer 2"));
        assertEq(runs.getRound(runId, 1).accepted, 2);
        _assertEscrowSolvent();
    }

    /// @notice A registered contribution that starts from the model's head (round 0 of a run from
    ///         the seed state) is paid once, by the run: its finalization claims no lineage head and
    ///         mints nothing, so the same work is not minted twice.
    function test_contributionFromTheHead_mintsOnlyThroughTheRun() public {
        bytes32 model = keccak256("a model rooted at INIT_HASH");
        vm.prank(submitter);
        registry.registerModel(model, ARCHITECTURE, FAMILY, COMPUTE_PER_STEP, INIT_HASH);
        assertEq(registry.headOf(model), INIT_HASH);
        vm.prank(submitter);
        uint256 runId = runs.openRun(model, RUN_HASH, START_HASH, 1, 1, INNER_STEPS, RUN_SPEC_URI);
        uint256 jobId = _postContribution(submitter, runId, 0);
        assertTrue(runs.isContribution(jobId));
        (uint256 slotJob,) = registry.slotOf(model);
        assertEq(slotJob, 0, "a contribution took the head's slot");
        _finalizeJob(jobId, solver);
        assertEq(_sharesMinted(model), 0, "minted at finalization");
        _propose(proposer, runId, keccak256("outer 1"), 1);
        _passClaimWindow(runId);
        runs.finalizeRound(runId);
        assertEq(ModelShares(registry.sharesOf(model)).balanceOf(solver), _shares(), "not minted once by the run");
        assertEq(ModelShares(registry.sharesOf(model)).totalSupply(), _shares());
    }

    /// @notice A round whose seats are not all registered cannot be proposed: else anyone could
    ///         close each round's registration the moment it opens (with a claim that is right:
    ///         nothing counted) and burn the run's rounds for the price of a bond it gets back.
    function test_emptyRound_propose_reverts() public {
        uint256 runId = _openRun(RUN_HASH, 2, 2);
        vm.startPrank(proposer);
        uint64 deadline = runs.registrationDeadline(runId, 0);
        assertEq(uint256(deadline), block.timestamp + runs.registrationWindow());
        vm.expectRevert(abi.encodeWithSelector(IRunRegistry.RegistrationOpen.selector, runId, uint32(0), 0, deadline));
        runs.proposeRound(runId, START_HASH, 0);
        vm.stopPrank();
        assertEq(uint8(_phase(runId, 0)), uint8(RunRoundPhase.Open));
    }
}

/// @notice Challenged claims: the committee's ruling, the pot and the attacks.
contract RunRegistry_Claims_Test is RunRegistry_Base {
    /// @notice The owner colludes with a proposer: the accomplice's contribution (seat 1, which the
    ///         honest rule excludes, e.g. it did not start from the prescribed state) is counted and
    ///         the outer state is wrong. An honest watcher challenges, the committee strikes the
    ///         claim: the watcher gains the pot less the arbiters' fees, the proposer loses its bond,
    ///         each arbiter earns arbiterFee, nothing is minted. Registration stays closed; the
    ///         honest claim is then proposed and finalized and only the honest solver is paid.
    function test_attack_ownerColludesWithProposer_struckAndCorrected() public {
        uint256 runId = _settledRound(2, colluder);
        uint256 bond = runs.claimBond();
        uint256 fee = params.arbiterFee;
        uint256 watcherBefore = _holdings(watcher);
        uint256 colluderBefore = _holdings(colluder);
        _propose(colluder, runId, keccak256("wrong outer 1"), 3);
        uint256 disputeId = _challenge(watcher, runId);
        address[] memory members = _drawCommittee(disputeId);
        uint256[] memory memberBefore = new uint256[](members.length);
        for (uint256 i; i < members.length; ++i) {
            assertFalse(members[i] == colluder || members[i] == watcher || members[i] == solver, "excluded drawn");
            memberBefore[i] = _holdings(members[i]);
            _commitVote(disputeId, members[i], false);
        }
        for (uint256 i; i < members.length; ++i) {
            _revealVote(disputeId, members[i], false);
        }
        uint256 pot = bond;
        vm.expectEmit(address(runs));
        emit IRunRegistry.ClaimRuled(runId, 0, disputeId, false, watcher, pot);
        committee.resolve(disputeId);

        uint256 fees = members.length * fee;
        assertEq(_holdings(watcher), watcherBefore + pot - fees, "watcher: + pot - arbiter fees");
        assertEq(_holdings(colluder), colluderBefore - bond, "proposer loses its bond");
        for (uint256 i; i < members.length; ++i) {
            assertEq(_holdings(members[i]), memberBefore[i] + fee, "arbiter paid");
            assertEq(_locked(members[i], Role.Verifier), 0, "arbiter unlocked");
        }
        assertEq(_sharesMinted(RUN_MODEL), 0, "nothing minted");
        RunRound memory state = runs.getRound(runId, 0);
        assertEq(uint8(state.phase), uint8(RunRoundPhase.Open));
        assertEq(state.proposer, address(0));
        assertEq(state.challenger, address(0));
        assertEq(state.stateHash, bytes32(0));
        assertEq(state.accepted, 0);
        assertEq(state.disputeId, disputeId);
        assertEq(state.registered, 3);

        // Registration stays closed: the accomplice cannot swap in another seat now.
        vm.expectRevert(
            abi.encodeWithSelector(IRunRegistry.UnexpectedRoundPhase.selector, runId, 0, RunRoundPhase.Open)
        );
        _postContribution(submitter, runId, 1);

        // The honest claim.
        _propose(proposer, runId, keccak256("outer 1"), 1);
        _passClaimWindow(runId);
        runs.finalizeRound(runId);
        assertEq(_runShares(solver), _shares(), "honest solver paid");
        assertEq(_runShares(colluder), 0, "accomplice unpaid");
        assertEq(uint256(runs.getRun(runId).round), 1);
        _assertEscrowSolvent();
    }

    /// @notice A challenge of a correct claim fails: the claim is final at once, the proposer gains
    ///         the challenger's bond less the arbiters' fees, the challenger loses its bond.
    function test_challenge_ofCorrectClaim_paysTheProposer() public {
        uint256 runId = _settledRound(2, solver2);
        uint256 bond = runs.claimBond();
        uint256 proposerBefore = _holdings(proposer);
        uint256 griefBefore = _holdings(stranger);
        _propose(proposer, runId, keccak256("outer 1"), 3);
        uint256 disputeId = _challenge(stranger, runId);
        address[] memory members = _voteClaim(disputeId, true, 0);
        vm.expectEmit(address(runs));
        emit IRunRegistry.RoundFinalized(runId, 0, keccak256("outer 1"), 3, _shares());
        vm.expectEmit(address(runs));
        emit IRunRegistry.ClaimRuled(runId, 0, disputeId, true, proposer, bond);
        committee.resolve(disputeId);
        uint256 fees = members.length * params.arbiterFee;
        assertEq(_holdings(proposer), proposerBefore + bond - fees, "proposer: + pot - fees");
        assertEq(_holdings(stranger), griefBefore - bond, "challenger loses its bond");
        assertEq(_runShares(solver), _shares());
        assertEq(_runShares(solver2), _shares());
        assertEq(uint8(_phase(runId, 0)), uint8(RunRoundPhase.Final));
        assertEq(uint8(_phase(runId, 1)), uint8(RunRoundPhase.Open));
        assertEq(runs.getRound(runId, 0).challenger, stranger);
        _assertEscrowSolvent();
    }

    /// @notice An arbiter that does not vote is slashed its seat stake into the pot; the majority is
    ///         paid, the winner takes the rest.
    function test_nonVotingArbiter_isSlashed_succeeds() public {
        uint256 runId = _settledRound(2, colluder);
        uint256 bond = runs.claimBond();
        _propose(colluder, runId, keccak256("wrong outer 1"), 3);
        uint256 disputeId = _challenge(watcher, runId);
        uint256 watcherBefore = _holdings(watcher);
        // Every member but the first votes the claim wrong.
        address[] memory members = _voteClaim(disputeId, false, 1);
        address absent = members[0];
        uint256 absentBefore = _holdings(absent);
        uint256 seatStake = _dispute(disputeId).seatStake;
        assertEq(seatStake, params.verifierStake);
        vm.expectEmit(address(runs));
        emit IRunRegistry.ClaimArbiterSlashed(disputeId, absent, seatStake);
        vm.expectEmit(address(runs));
        emit IRunRegistry.ClaimRuled(runId, 0, disputeId, false, watcher, bond + seatStake);
        committee.resolve(disputeId);
        uint256 fees = (members.length - 1) * params.arbiterFee;
        assertEq(_holdings(absent), absentBefore - seatStake, "non-voter slashed");
        assertEq(_locked(absent, Role.Verifier), 0, "slashed seat no longer locked");
        assertEq(_holdings(watcher), watcherBefore + bond + bond + seatStake - fees, "watcher: bond back + pot - fees");
        _assertEscrowSolvent();
    }

    /// @notice Nobody votes: the claim stands (as a segment does) and every member is slashed.
    function test_noVote_keepsTheClaim_succeeds() public {
        uint256 runId = _settledRound(2, solver2);
        _propose(proposer, runId, keccak256("outer 1"), 1);
        uint256 disputeId = _challenge(watcher, runId);
        uint256 proposerBefore = _holdings(proposer);
        address[] memory members = _arbitrateClaim(disputeId, true, 3);
        uint256 pot = runs.claimBond() + members.length * params.verifierStake;
        assertEq(_holdings(proposer), proposerBefore + runs.claimBond() + pot, "proposer: bond back + pot");
        assertEq(uint8(_phase(runId, 0)), uint8(RunRoundPhase.Final));
        assertEq(_runShares(solver), _shares());
        _assertEscrowSolvent();
    }

    function test_onClaimResolved_afterRuling_reverts() public {
        uint256 runId = _settledRound(2, solver2);
        _propose(proposer, runId, keccak256("outer 1"), 1);
        uint256 disputeId = _challenge(watcher, runId);
        _arbitrateClaim(disputeId, true, 0);
        address[] memory none = new address[](0);
        vm.expectRevert(abi.encodeWithSelector(IRunRegistry.UnknownClaimDispute.selector, disputeId));
        vm.prank(address(committee));
        runs.onClaimResolved(disputeId, false, none, none);
    }
}
