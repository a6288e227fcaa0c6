// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

import {AttackHelpers} from "./Settlement.t.sol";
import {JobStatus, Verdict} from "../src/types/JobTypes.sol";
import {Role} from "../src/types/Role.sol";

/// @notice P-20 (docs/SECURITY.md): a verifier that cannot obtain a sampled segment's data seals a
///         zero end, an abstention. It still puts the sample before the adjudicator (a cheat that
///         withholds its data from the verifiers is judged), but an abstainer is never slashed
///         when the segment is ruled valid, and is never paid for a check it did not make: no fee,
///         no share of a pot. So a solver that is offline during the verdict window, and serves
///         its data again for the dispute, collects nothing from the verifiers it withheld from.
///         P-33: where the data was there (another seat replayed the sample, or the adjudicator
///         found it valid) the abstention's bond goes to the jackpot pool, never to a party.
contract Availability_Test is AttackHelpers {
    function setUp() public override {
        super.setUp();
        _redeployWithRate(0);
    }

    function _zeros(uint256 jobId) internal view returns (bytes32[] memory) {
        return new bytes32[](_samples(jobId));
    }

    /// @notice The issue's attack: the solver's server is down for the verdict window, every
    ///         verifier seals "not replayed", the solver comes back and the committee, which can now
    ///         fetch the data, rules every sample valid. Before: each verifier lost its stake
    ///         (-20 VTT each) to the solver (+54 VTT on top of its reward). Now the solver gains
    ///         nothing but its reward; each abstainer forfeits one bond per sample to the jackpot
    ///         pool (the judges found the data there, P-33), never to the solver.
    function test_offlineSolver_everyVerifierAbstains_solverGainsNothingFromThem_succeeds() public {
        uint256 jobId = _verifyingJob();
        address[] memory verifiers = _assigned(jobId);
        uint256[] memory before = new uint256[](verifiers.length);
        for (uint256 i; i < verifiers.length; ++i) {
            before[i] = _holdings(verifiers[i]);
        }
        uint256 solverBefore = _holdings(solver);
        uint256 pool = escrow.jackpotPool();
        for (uint256 i; i < verifiers.length; ++i) {
            _submitEnds(jobId, verifiers[i], _zeros(jobId));
        }
        assertEq(uint8(jobManager.verdictOf(jobId, verifiers[0])[0]), uint8(Verdict.Abstain), "abstention");
        _settle(jobId, true);

        assertEq(uint8(_job(jobId).status), uint8(JobStatus.Finalized), "finalized: the segments were valid");
        for (uint256 i; i < verifiers.length; ++i) {
            assertEq(
                _holdings(verifiers[i]), before[i] - _samples(jobId) * params.challengeBond, "bonds forfeited, no fee"
            );
            assertEq(_locked(verifiers[i], Role.Verifier), 0, "unlocked");
        }
        assertEq(_holdings(solver), solverBefore + _job(jobId).reward, "the solver is paid its reward, no more");
        assertEq(
            escrow.jackpotPool(),
            pool + verifiers.length * _samples(jobId) * params.challengeBond,
            "the forfeited bonds join the pool"
        );
        _assertEscrowSolvent();
    }

    /// @notice A solver that withholds a cheat's data from the verifiers is still judged: the
    ///         abstentions put the sample before the committee, which finds it invalid. The solver
    ///         is slashed; abstainers get their bonds back but no share of the pot.
    function test_withheldCheat_abstentionsStillDisputeIt_solverSlashed_succeeds() public {
        uint256 jobId = _verifyingJob();
        address[] memory verifiers = _assigned(jobId);
        uint256[] memory before = new uint256[](verifiers.length);
        for (uint256 i; i < verifiers.length; ++i) {
            before[i] = _holdings(verifiers[i]);
            _submitEnds(jobId, verifiers[i], _zeros(jobId));
        }
        _settle(jobId, false);

        assertEq(uint8(_job(jobId).status), uint8(JobStatus.Rejected), "rejected");
        assertGt(_slashedSolver(), 0, "solver slashed");
        for (uint256 i; i < verifiers.length; ++i) {
            assertEq(_holdings(verifiers[i]), before[i], "abstainers: bond back, no pot share, no fee");
        }
        _assertEscrowSolvent();
    }

    /// @notice One verifier abstains, the others replay and approve a valid segment: the approvers
    ///         are paid their fee, the abstainer is not (abstaining is never a way to earn a fee
    ///         without replaying) and forfeits its bonds (the data was there, P-33); nobody is
    ///         slashed.
    function test_oneAbstainer_validSegment_approversPaidAbstainerNot_succeeds() public {
        uint256 jobId = _verifyingJob();
        address[] memory verifiers = _assigned(jobId);
        uint256[] memory before = new uint256[](verifiers.length);
        for (uint256 i; i < verifiers.length; ++i) {
            before[i] = _holdings(verifiers[i]);
        }
        _submitEnds(jobId, verifiers[0], _zeros(jobId));
        for (uint256 i = 1; i < verifiers.length; ++i) {
            _submit(jobId, verifiers[i], 0);
        }
        _settle(jobId, true);

        assertEq(uint8(_job(jobId).status), uint8(JobStatus.Finalized), "finalized");
        assertEq(
            _holdings(verifiers[0]), before[0] - _samples(jobId) * params.challengeBond, "the abstainer: bonds lost"
        );
        for (uint256 i = 1; i < verifiers.length; ++i) {
            assertEq(_holdings(verifiers[i]), before[i] + params.verifierFee, "approvers paid their fee");
        }
        _assertEscrowSolvent();
    }

    /// @notice A verifier that claims a replay it did not make (a made-up end, not zero) is a
    ///         rejecter, not an abstainer: it loses its dispute and its stake, as before.
    function test_madeUpEnd_isARejection_losesItsStake_succeeds() public {
        uint256 jobId = _verifyingJob();
        address[] memory verifiers = _assigned(jobId);
        uint256 griefer = _holdings(verifiers[0]);
        bytes32[] memory madeUp = _zeros(jobId);
        for (uint256 j; j < madeUp.length; ++j) {
            madeUp[j] = keccak256(abi.encode("made up", j));
        }
        _submitEnds(jobId, verifiers[0], madeUp);
        for (uint256 i = 1; i < verifiers.length; ++i) {
            _submit(jobId, verifiers[i], 0);
        }
        _settle(jobId, true);

        assertEq(uint8(_job(jobId).status), uint8(JobStatus.Finalized), "finalized");
        assertEq(uint8(jobManager.verdictOf(jobId, verifiers[0])[0]), uint8(Verdict.Reject), "a rejection");
        assertLt(_holdings(verifiers[0]), griefer, "the griefer lost");
    }

    function _slashedSolver() internal view returns (uint256) {
        (uint256 staked,,,) = stakeManager.stakeOf(solver, Role.Solver);
        return 1000e18 - staked;
    }
}
