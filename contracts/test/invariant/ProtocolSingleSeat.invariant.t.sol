// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

// Testing
import {Protocol_Invariant_Test} from "./Protocol.invariant.t.sol";
import {ProtocolHandler} from "./handlers/ProtocolHandler.sol";
// Deployment
import {Deploy} from "../../script/Deploy.sol";
// Types
import {DisputePhase} from "../../src/types/DisputeTypes.sol";
import {JobStatus} from "../../src/types/JobTypes.sol";
import {Role} from "../../src/types/Role.sol";

/// @title ProtocolSingleSeat_Invariant_Test
/// @notice The protocol invariants of `Protocol_Invariant_Test` at the deployment's one seat per job
///         (docs/SECURITY.md P-39): V = 1, q = 1.
contract ProtocolSingleSeat_Invariant_Test is Protocol_Invariant_Test {
    function _config() internal pure override returns (Deploy.Config memory cfg) {
        cfg = super._config();
        cfg.params.verifiersPerJob = 1;
        cfg.params.samplesPerJob = 1;
    }

    /// @notice The protocol suite's actions, with `challengeApproval` drawn four times as often: one
    ///         seat's challenge window opens at its reveal and closes at the finalize, and P11 needs
    ///         a whistleblower's challenge of a fetch-only approval inside it.
    function _selectors() internal pure override returns (bytes4[] memory selectors) {
        bytes4[] memory base = super._selectors();
        selectors = new bytes4[](base.length + 3);
        for (uint256 i; i < base.length; ++i) {
            selectors[i] = base[i];
        }
        for (uint256 i = base.length; i < selectors.length; ++i) {
            selectors[i] = ProtocolHandler.challengeApproval.selector;
        }
    }

    /// @notice P11 on one job, played through the handler: the seat approves the last sample by a
    ///         fetch only, the whistleblower challenges that approval, the committee rules the
    ///         segment invalid. The solver is slashed, the seat is not, and the invariants hold.
    function test_handler_fetchOnlyApprovalRuledInvalid_seatKeepsStake_succeeds() public {
        // Three segments of one step: the seat draws one of the first two and fetches the last
        // unless it drew the second.
        handler.postJob(0, 1 | (3 << 8), 1e18);
        handler.claimAndCommit(0, 0, true);
        handler.claimAndCommit(0, 0, true);
        address seat;
        uint32[] memory segments;
        vm.roll(jobManager.getJob(1).randomnessBlock + 1);
        for (uint256 i;; ++i) {
            uint256 snapshot = vmx.snapshotState();
            vmx.setBlockhash(jobManager.getJob(1).randomnessBlock, keccak256(abi.encode("draw", i)));
            handler.assignVerifiers(1);
            address[] memory seats;
            (seats, segments) = jobManager.getAssignment(1);
            seat = seats[0];
            bool fetches = round.fetchOnlyMaskOf(_sid(1), seat) == uint256(1) << (segments.length - 1);
            (,,, uint64 claimsBlock) = round.roundOf(_sid(1));
            if (fetches && claimsBlock != 0 && seat != handler.silentSeat() && seat != handler.griefer()) break;
            vmx.revertToState(snapshot);
        }
        uint256 last = segments.length - 1;
        handler.submitVerdicts(1, 0, 1); // seals approvals of both samples
        handler.submitVerdicts(1, 0, 1); // reveals them
        handler.challengeApproval(1, last, 0); // the plain whistleblower
        assertEq(handler.ghost_calls("challengeApproval"), 1, "challenged");
        uint256 seed;
        while (uint256(keccak256(abi.encode(seed, "reveal"))) % 8 == 0) {
            ++seed;
        }
        handler.finalize(seed * jobManager.jobCount());
        assertEq(uint8(jobManager.getJob(1).status), uint8(JobStatus.Disputed), "the challenge is judged");
        uint256 disputeId = jobManager.getJob(1).disputeId;
        handler.drawCommittee(0);
        for (uint256 m; m < 3; ++m) {
            handler.vote(0, m, false);
        }
        // Every member committed: the reveal phase is open.
        for (uint256 m; m < 3; ++m) {
            handler.vote(0, m, false);
        }
        (uint256 stakedBefore,,,) = stakeManager.stakeOf(seat, Role.Verifier);
        handler.resolve(0);
        assertEq(uint8(committee.phaseOf(disputeId)), uint8(DisputePhase.Resolved), "resolved");
        assertEq(uint8(jobManager.getJob(1).status), uint8(JobStatus.Rejected), "ruled invalid");
        assertEq(handler.ghost_fetchOnlyInvalidRulings(), 1, "one fetch-only approval ruled on");
        assertEq(handler.ghost_fetchOnlyApproverSlashed(), 0, "P11");
        (uint256 stakedAfter,,,) = stakeManager.stakeOf(seat, Role.Verifier);
        // Not slashed: the seat keeps its stake, and its fee is restaked (P-41).
        assertEq(stakedAfter, stakedBefore + jobManager.params().verifierFee, "the seat keeps its stake");
        invariant_noUnjustifiedSlash();
        invariant_escrowSolvent();
        invariant_stakeConservation();
    }

    /// @custom:invariant P11 A ruling that finds a sample invalid slashes no seat whose approval of
    ///                   it was fetch-only: that approval vouched only for the final state's
    ///                   availability (docs/SECURITY.md P-39).
    /// forge-config: default.invariant.runs = 32
    /// forge-config: default.invariant.depth = 256
    /// forge-config: ci.invariant.runs = 64
    /// forge-config: ci.invariant.depth = 384
    function invariant_fetchOnlyApproverNotSlashed() public {
        assertEq(handler.ghost_fetchOnlyApproverSlashed(), 0, "P11: a fetch-only approver slashed");
    }
}
