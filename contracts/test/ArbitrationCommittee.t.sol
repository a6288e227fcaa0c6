// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

// Testing
import {Deployers} from "./utils/Deployers.sol";
// Contracts
import {ArbitrationCommittee} from "../src/ArbitrationCommittee.sol";
// Interfaces
import {IArbitrationCommittee} from "../src/interfaces/IArbitrationCommittee.sol";
import {IJobManager} from "../src/interfaces/IJobManager.sol";
import {IStakeManager} from "../src/interfaces/IStakeManager.sol";
// Types
import {Dispute, DisputePhase, DisputeStatus} from "../src/types/DisputeTypes.sol";
import {JobStatus} from "../src/types/JobTypes.sol";
import {Role} from "../src/types/Role.sol";

/// @notice Shared setup: a job whose verifier 0 rejected sample 0, finalized into dispute 1.
abstract contract ArbitrationCommittee_Init is Deployers {
    uint256 internal jobId;
    uint256 internal disputeId;
    address[] internal verifiers;

    function setUp() public virtual override {
        super.setUp();
        jobId = _verifyingJob();
        verifiers = _assigned(jobId);
        _submit(jobId, verifiers[0], 1);
        _submit(jobId, verifiers[1], 0);
        _submit(jobId, verifiers[2], 0);
        _passChallengeWindow(jobId);
        jobManager.finalize(jobId);
        disputeId = _job(jobId).disputeId;
    }

    function _phase() internal view returns (DisputePhase) {
        return committee.phaseOf(disputeId);
    }
}

contract ArbitrationCommittee_Constructor_Test is ArbitrationCommittee_Init {
    function test_constructor_zeroAddress_reverts() public {
        vm.expectRevert(IArbitrationCommittee.ZeroAddress.selector);
        new ArbitrationCommittee(IJobManager(address(0)), IStakeManager(address(stakeManager)), 3, 60, 60);
    }

    function test_constructor_badSize_reverts() public {
        vm.expectRevert(abi.encodeWithSelector(IArbitrationCommittee.InvalidParam.selector, "committeeSize", 0));
        new ArbitrationCommittee(IJobManager(address(jobManager)), IStakeManager(address(stakeManager)), 0, 60, 60);
        vm.expectRevert(abi.encodeWithSelector(IArbitrationCommittee.InvalidParam.selector, "committeeSize", 65));
        new ArbitrationCommittee(IJobManager(address(jobManager)), IStakeManager(address(stakeManager)), 65, 60, 60);
    }

    function test_constructor_zeroWindow_reverts() public {
        vm.expectRevert(abi.encodeWithSelector(IArbitrationCommittee.InvalidParam.selector, "voteCommitWindow", 0));
        new ArbitrationCommittee(IJobManager(address(jobManager)), IStakeManager(address(stakeManager)), 3, 0, 60);
        vm.expectRevert(abi.encodeWithSelector(IArbitrationCommittee.InvalidParam.selector, "voteRevealWindow", 0));
        new ArbitrationCommittee(IJobManager(address(jobManager)), IStakeManager(address(stakeManager)), 3, 60, 0);
    }

    function test_constructor_setsConfig_succeeds() public {
        assertEq(address(committee.jobManager()), address(jobManager));
        assertEq(address(committee.stakeManager()), address(stakeManager));
        assertEq(uint256(committee.committeeSize()), 3);
        assertEq(uint256(committee.voteCommitWindow()), 10 minutes);
        assertEq(uint256(committee.voteRevealWindow()), 10 minutes);
    }
}

contract ArbitrationCommittee_OpenDispute_Test is ArbitrationCommittee_Init {
    function test_openDispute_recordsDispute_succeeds() public {
        Dispute memory d = _dispute(disputeId);
        (, uint32[] memory segments) = jobManager.getAssignment(jobId);
        assertEq(disputeId, 1);
        assertEq(committee.disputeCount(), 1);
        assertEq(d.jobId, jobId);
        assertEq(uint256(d.segment), uint256(segments[0]));
        assertEq(uint8(d.status), uint8(DisputeStatus.AwaitingCommittee));
        assertEq(uint256(d.randomnessBlock), block.number + 1);
        assertEq(d.seatStake, params.verifierStake);
        assertEq(uint8(_phase()), uint8(DisputePhase.AwaitingCommittee));
    }

    function test_openDispute_notJobManager_reverts() public {
        address[] memory none = new address[](0);
        vm.expectRevert(abi.encodeWithSelector(IArbitrationCommittee.NotJobManager.selector, stranger));
        vm.prank(stranger);
        committee.openDispute(jobId, 0, stranger, none, none);
    }
}

contract ArbitrationCommittee_DrawCommittee_Test is ArbitrationCommittee_Init {
    function test_drawCommittee_locksSeats_succeeds() public {
        address[] memory members = _drawCommittee(disputeId);
        assertEq(members.length, 3);
        for (uint256 i; i < members.length; ++i) {
            assertFalse(committee.isExcluded(disputeId, members[i]));
            assertFalse(_isIn(verifiers, members[i]));
            assertEq(_locked(members[i], Role.Verifier), params.verifierStake);
        }
        Dispute memory d = _dispute(disputeId);
        assertEq(uint8(d.status), uint8(DisputeStatus.Voting));
        assertEq(uint256(d.commitDeadline), block.timestamp + 10 minutes);
        assertEq(uint256(d.revealDeadline), block.timestamp + 20 minutes);
        assertEq(uint8(_phase()), uint8(DisputePhase.Commit));
    }

    function test_drawCommittee_randomnessNotReady_reverts() public {
        uint64 randomnessBlock = _dispute(disputeId).randomnessBlock;
        vm.expectRevert(
            abi.encodeWithSelector(
                IArbitrationCommittee.RandomnessNotReady.selector, disputeId, randomnessBlock, block.number
            )
        );
        committee.drawCommittee(disputeId);
    }

    function test_drawCommittee_expiredBlockhash_reanchors_succeeds() public {
        vm.roll(block.number + 300);
        vmx.setBlockhash(_dispute(disputeId).randomnessBlock, bytes32(0));
        vm.expectEmit(address(committee));
        emit IArbitrationCommittee.RandomnessReanchored(disputeId, uint64(block.number + 1));
        committee.drawCommittee(disputeId);
        assertEq(uint8(_phase()), uint8(DisputePhase.AwaitingCommittee));
        _drawCommittee(disputeId);
        assertEq(uint8(_phase()), uint8(DisputePhase.Commit));
    }

    function test_drawCommittee_twice_reverts() public {
        _drawCommittee(disputeId);
        vm.expectRevert(
            abi.encodeWithSelector(
                IArbitrationCommittee.UnexpectedDisputePhase.selector, disputeId, DisputePhase.Commit
            )
        );
        committee.drawCommittee(disputeId);
    }

    function test_drawCommittee_unknown_reverts() public {
        vm.expectRevert(
            abi.encodeWithSelector(IArbitrationCommittee.UnexpectedDisputePhase.selector, 9, DisputePhase.None)
        );
        committee.drawCommittee(9);
    }

    function test_drawCommittee_prefersVerifiersWithNothingAtStake_succeeds() public {
        address[] memory members = _drawCommittee(disputeId);
        assertEq(members.length, 3);
        for (uint256 i; i < members.length; ++i) {
            assertFalse(_isIn(verifiers, members[i]));
        }
    }

    function test_drawCommittee_reserveFillsSmallNetwork_succeeds() public {
        // Only the job's own verifiers remain eligible: they fill the seats as the reserve.
        for (uint256 i; i < verifierPool.length; ++i) {
            if (_isIn(verifiers, verifierPool[i])) continue;
            vm.prank(verifierPool[i]);
            stakeManager.requestUnbond(Role.Verifier, 500e18);
        }
        address[] memory members = _drawCommittee(disputeId);
        assertEq(members.length, 3);
        for (uint256 i; i < members.length; ++i) {
            assertTrue(_isIn(verifiers, members[i]));
            assertFalse(members[i] == solver || members[i] == submitter);
        }
    }

    function test_drawCommittee_noEligible_reverts() public {
        for (uint256 i; i < verifierPool.length; ++i) {
            uint256 free = stakeManager.freeStake(verifierPool[i], Role.Verifier);
            vm.prank(verifierPool[i]);
            stakeManager.requestUnbond(Role.Verifier, free);
        }
        vm.roll(block.number + 2);
        uint256 candidates = stakeManager.verifierCount();
        vm.expectRevert(
            abi.encodeWithSelector(IArbitrationCommittee.NoEligibleArbiters.selector, disputeId, candidates)
        );
        committee.drawCommittee(disputeId);
    }
}

contract ArbitrationCommittee_CommitVote_Test is ArbitrationCommittee_Init {
    address[] internal members;

    function setUp() public override {
        super.setUp();
        members = _drawCommittee(disputeId);
    }

    function test_commitVote_records_succeeds() public {
        bytes32 commitment = committee.voteHash(disputeId, members[0], true, _salt(members[0]));
        vm.expectEmit(address(committee));
        emit IArbitrationCommittee.VoteCommitted(disputeId, members[0], commitment);
        vm.prank(members[0]);
        committee.commitVote(disputeId, commitment);
        (bytes32 stored, bool revealed,) = committee.ballotOf(disputeId, members[0]);
        assertEq(stored, commitment);
        assertFalse(revealed);
        assertEq(uint256(_dispute(disputeId).committed), 1);
    }

    function test_commitVote_allCommitted_startsReveal_succeeds() public {
        _commitVote(disputeId, members[0], true);
        _commitVote(disputeId, members[1], true);
        vm.expectEmit(address(committee));
        emit IArbitrationCommittee.RevealPhaseStarted(disputeId, uint64(block.timestamp + 10 minutes));
        _commitVote(disputeId, members[2], true);
        assertEq(uint8(_phase()), uint8(DisputePhase.Reveal));
    }

    function test_commitVote_notMember_reverts() public {
        vm.expectRevert(abi.encodeWithSelector(IArbitrationCommittee.NotCommitteeMember.selector, disputeId, stranger));
        vm.prank(stranger);
        committee.commitVote(disputeId, bytes32(uint256(1)));
    }

    function test_commitVote_zero_reverts() public {
        vm.expectRevert(abi.encodeWithSelector(IArbitrationCommittee.ZeroCommitment.selector, disputeId));
        vm.prank(members[0]);
        committee.commitVote(disputeId, bytes32(0));
    }

    function test_commitVote_twice_reverts() public {
        _commitVote(disputeId, members[0], true);
        vm.expectRevert(
            abi.encodeWithSelector(IArbitrationCommittee.VoteAlreadyCommitted.selector, disputeId, members[0])
        );
        vm.prank(members[0]);
        committee.commitVote(disputeId, bytes32(uint256(1)));
    }

    function test_commitVote_afterDeadline_reverts() public {
        vm.warp(_dispute(disputeId).commitDeadline + 1);
        vm.expectRevert(
            abi.encodeWithSelector(
                IArbitrationCommittee.UnexpectedDisputePhase.selector, disputeId, DisputePhase.Reveal
            )
        );
        vm.prank(members[0]);
        committee.commitVote(disputeId, bytes32(uint256(1)));
    }
}

contract ArbitrationCommittee_RevealVote_Test is ArbitrationCommittee_Init {
    address[] internal members;

    function setUp() public override {
        super.setUp();
        members = _drawCommittee(disputeId);
        _commitVote(disputeId, members[0], false);
        _commitVote(disputeId, members[1], false);
    }

    function test_revealVote_duringCommit_reverts() public {
        vm.expectRevert(
            abi.encodeWithSelector(
                IArbitrationCommittee.UnexpectedDisputePhase.selector, disputeId, DisputePhase.Commit
            )
        );
        _revealVote(disputeId, members[0], false);
    }

    function test_revealVote_records_succeeds() public {
        vm.warp(_dispute(disputeId).commitDeadline + 1);
        vm.expectEmit(address(committee));
        emit IArbitrationCommittee.VoteRevealed(disputeId, members[0], false);
        _revealVote(disputeId, members[0], false);
        (, bool revealed, bool segmentValid) = committee.ballotOf(disputeId, members[0]);
        assertTrue(revealed);
        assertFalse(segmentValid);
        Dispute memory d = _dispute(disputeId);
        assertEq(uint256(d.revealed), 1);
        assertEq(uint256(d.invalidVotes), 1);
    }

    function test_revealVote_mismatch_reverts() public {
        vm.warp(_dispute(disputeId).commitDeadline + 1);
        bytes32 expected = committee.voteHash(disputeId, members[0], false, _salt(members[0]));
        bytes32 actual = committee.voteHash(disputeId, members[0], true, _salt(members[0]));
        vm.expectRevert(
            abi.encodeWithSelector(IArbitrationCommittee.VoteMismatch.selector, disputeId, members[0], expected, actual)
        );
        _revealVote(disputeId, members[0], true);
    }

    function test_revealVote_notCommitted_reverts() public {
        vm.warp(_dispute(disputeId).commitDeadline + 1);
        vm.expectRevert(abi.encodeWithSelector(IArbitrationCommittee.VoteNotCommitted.selector, disputeId, members[2]));
        _revealVote(disputeId, members[2], false);
    }

    function test_revealVote_twice_reverts() public {
        vm.warp(_dispute(disputeId).commitDeadline + 1);
        _revealVote(disputeId, members[0], false);
        vm.expectRevert(
            abi.encodeWithSelector(IArbitrationCommittee.VoteAlreadyRevealed.selector, disputeId, members[0])
        );
        _revealVote(disputeId, members[0], false);
    }

    function test_revealVote_notMember_reverts() public {
        vm.warp(_dispute(disputeId).commitDeadline + 1);
        vm.expectRevert(abi.encodeWithSelector(IArbitrationCommittee.NotCommitteeMember.selector, disputeId, stranger));
        vm.prank(stranger);
        committee.revealVote(disputeId, false, bytes32(0));
    }

    function test_revealVote_afterDeadline_reverts() public {
        vm.warp(_dispute(disputeId).revealDeadline + 1);
        vm.expectRevert(
            abi.encodeWithSelector(
                IArbitrationCommittee.UnexpectedDisputePhase.selector, disputeId, DisputePhase.Resolvable
            )
        );
        _revealVote(disputeId, members[0], false);
    }
}

contract ArbitrationCommittee_Resolve_Test is ArbitrationCommittee_Init {
    address[] internal members;

    function setUp() public override {
        super.setUp();
        members = _drawCommittee(disputeId);
    }

    function test_resolve_beforeDeadline_reverts() public {
        vm.expectRevert(
            abi.encodeWithSelector(
                IArbitrationCommittee.UnexpectedDisputePhase.selector, disputeId, DisputePhase.Commit
            )
        );
        committee.resolve(disputeId);
    }

    function test_resolve_majorityInvalid_succeeds() public {
        _commitVote(disputeId, members[0], false);
        _commitVote(disputeId, members[1], false);
        _commitVote(disputeId, members[2], true);
        _revealVote(disputeId, members[0], false);
        _revealVote(disputeId, members[1], false);
        _revealVote(disputeId, members[2], true);
        assertEq(uint8(_phase()), uint8(DisputePhase.Resolvable));
        address[] memory majority = new address[](2);
        majority[0] = members[0];
        majority[1] = members[1];
        vm.expectEmit(address(committee));
        emit IArbitrationCommittee.DisputeResolved(disputeId, false, majority, new address[](0));
        committee.resolve(disputeId);
        Dispute memory d = _dispute(disputeId);
        assertEq(uint8(d.status), uint8(DisputeStatus.Resolved));
        assertFalse(d.segmentValid);
        assertEq(uint8(_job(jobId).status), uint8(JobStatus.Rejected));
        for (uint256 i; i < 3; ++i) {
            assertEq(_locked(members[i], Role.Verifier), 0);
        }
        assertEq(escrow.creditOf(members[0]), params.arbiterFee);
        assertEq(escrow.creditOf(members[2]), 0);
    }

    /// @notice One vote each way and one missing reveal: a tie keeps the segment valid and the
    ///         silent member is slashed.
    function test_resolve_tieKeepsValid_slashesNonVoter_succeeds() public {
        _commitVote(disputeId, members[0], false);
        _commitVote(disputeId, members[1], true);
        _commitVote(disputeId, members[2], true);
        _revealVote(disputeId, members[0], false);
        _revealVote(disputeId, members[1], true);
        vm.warp(_dispute(disputeId).revealDeadline + 1);
        committee.resolve(disputeId);
        assertTrue(_dispute(disputeId).segmentValid);
        assertEq(_staked(members[2], Role.Verifier), 500e18 - params.verifierStake);
        assertEq(_locked(members[2], Role.Verifier), 0);
        assertEq(uint8(_job(jobId).status), uint8(JobStatus.Disputed));
        _assertEscrowSolvent();
    }

    function test_resolve_noVotes_keepsValid_succeeds() public {
        vm.warp(_dispute(disputeId).revealDeadline + 1);
        committee.resolve(disputeId);
        assertTrue(_dispute(disputeId).segmentValid);
        for (uint256 i; i < 3; ++i) {
            assertEq(_staked(members[i], Role.Verifier), 500e18 - params.verifierStake);
        }
    }

    function test_resolve_twice_reverts() public {
        vm.warp(_dispute(disputeId).revealDeadline + 1);
        committee.resolve(disputeId);
        vm.expectRevert(
            abi.encodeWithSelector(
                IArbitrationCommittee.UnexpectedDisputePhase.selector, disputeId, DisputePhase.Resolved
            )
        );
        committee.resolve(disputeId);
    }

    function testFuzz_voteHash_matchesEncoding_succeeds(uint256 id, address voter, bool valid, bytes32 salt) public {
        assertEq(committee.voteHash(id, voter, valid, salt), keccak256(abi.encode(id, voter, valid, salt)));
    }

    function test_voteHash_matchesEncoding_succeeds() public {
        testFuzz_voteHash_matchesEncoding_succeeds(1, address(0xA), true, bytes32(uint256(7)));
    }
}
