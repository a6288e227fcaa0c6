// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

// Testing
import {Deployers} from "./utils/Deployers.sol";
import {Merkle} from "./utils/Merkle.sol";
// Interfaces
import {IJobManagerErrors} from "../src/interfaces/IJobManagerErrors.sol";
import {IVerificationRound} from "../src/interfaces/IVerificationRound.sol";
// Libraries
import {LibCheckpoint} from "../src/libraries/LibCheckpoint.sol";
// Types
import {JobStatus} from "../src/types/JobTypes.sol";
import {Role} from "../src/types/Role.sol";

/// @notice P-21 and P-25 (docs/SECURITY.md): a commitment must hold exactly one state per
///         checkpoint index. The attacker builds its tree over more leaves than the job has
///         checkpoints (an honest trajectory plus a second one, or its own trajectory plus the leaf
///         (0, initHash)) and proves, for each claim, whichever leaf suits it.
contract CheckpointBinding_Test is Deployers {
    /// @notice Checkpoint index from which the spliced trajectory replaces the honest one.
    uint256 internal constant SPLICE_AT = 4;

    uint256 internal jobId;
    /// @notice The attacker's tree (leaf hashes, in tree order).
    bytes32[] internal tree;
    /// @notice Tree position of the leaf the attacker proves for each checkpoint index.
    mapping(uint256 index => uint256 position) internal positionOf;
    /// @notice State hash the attacker claims for each checkpoint index.
    mapping(uint256 index => bytes32 state) internal stateOf;

    function setUp() public override {
        super.setUp();
        _redeployWithRate(0);
        jobId = _postJob();
        vm.prank(solver);
        jobManager.claimJob(jobId);
    }

    /// @notice Honest states of checkpoints 0..N/k (leaf 0 is INIT_HASH).
    function _honest() internal pure returns (bytes32[] memory) {
        return _stateHashes(TOTAL_STEPS, INTERVAL);
    }

    /// @notice A second trajectory that departs from the honest one at checkpoint `from` (a backdoor
    ///         spliced in): every state from `from` on differs.
    function _other(uint256 from) internal pure returns (bytes32[] memory states) {
        states = _stateHashes(TOTAL_STEPS, INTERVAL);
        for (uint256 i = from; i < states.length; ++i) {
            states[i] = keccak256(abi.encode("backdoored state", i));
        }
    }

    /// @notice Builds `tree`: the leaves of `base` at their positions, then the leaves of `extra`
    ///         from index `from` on appended after them; the attacker proves index i with the leaf
    ///         of `claimed[i]`.
    function _buildTree(bytes32[] memory base, bytes32[] memory extra, uint256 from, bytes32[] memory claimed)
        internal
    {
        bytes32[] memory baseLeaves = Merkle.leaves(INTERVAL, base);
        uint256 m = base.length;
        delete tree;
        for (uint256 i; i < m; ++i) {
            tree.push(baseLeaves[i]);
            positionOf[i] = i;
            stateOf[i] = claimed[i];
        }
        for (uint256 i = from; i < extra.length; ++i) {
            tree.push(LibCheckpoint.leafHash(i, i * INTERVAL, extra[i]));
            if (claimed[i] == extra[i]) positionOf[i] = tree.length - 1;
        }
    }

    /// @notice The attacker's extra leaves sit in padding positions: its proofs have the job tree's
    ///         depth, so only the position binding can refuse them.
    function _assertSameDepth() internal view {
        uint256 jobDepth = LibCheckpoint.depth(TOTAL_STEPS / INTERVAL + 1);
        require(LibCheckpoint.depth(tree.length) == jobDepth, "attacker tree deeper than the job's");
    }

    function _commitTree() internal {
        _assertSameDepth();
        bytes32 root = Merkle.root(tree);
        bytes32[] memory initProof = Merkle.proof(tree, positionOf[0]);
        bytes32 commitment = _secretCommitment(jobId, solver);
        vm.prank(solver);
        jobManager.commitCheckpoints(jobId, root, initProof, CHECKPOINT_URL, commitment);
    }

    /// @notice The attacker's claims: (state s, state s + 1) of each sampled segment s.
    function _attackClaims() internal view returns (bytes32[] memory starts, bytes32[] memory ends) {
        (, uint32[] memory segments) = jobManager.getAssignment(jobId);
        starts = new bytes32[](segments.length);
        ends = new bytes32[](segments.length);
        for (uint256 j; j < segments.length; ++j) {
            starts[j] = stateOf[segments[j]];
            ends[j] = stateOf[segments[j] + 1];
        }
    }

    /// @notice The attacker's multiproof of the claimed checkpoints over its tree. The reveal's one
    ///         multiproof places each claim at the position the contract derives from its checkpoint
    ///         index: a leaf the attacker put anywhere else (a padding position) cannot be named.
    function _attackProof() internal view returns (bytes32[] memory) {
        (, uint32[] memory segments) = jobManager.getAssignment(jobId);
        return Merkle.multiproof(tree, Merkle.claimIndices(segments));
    }

    /// @notice The attacker's single proofs, for each claim the proof of the tree leaf it chose (what
    ///         the per-claim proofs before the multiproof accepted, had the position not been bound).
    function _attackSingleProof(uint256 index) internal view returns (bytes32[] memory) {
        return Merkle.proof(tree, positionOf[index]);
    }

    /// @notice Every assigned verifier approves: each claim replays correctly from its own start.
    function _allApprove() internal {
        (bytes32[] memory starts, bytes32[] memory ends) = _attackClaims();
        vm.prank(solver);
        round.postClaims(_sid(jobId), starts, ends);
        _bookClaims(round, _sid(jobId), starts, ends);
        address[] memory verifiers = _assigned(jobId);
        for (uint256 i; i < verifiers.length; ++i) {
            bytes32 salt = _verdictSalt(jobId, verifiers[i]);
            vm.prank(verifiers[i]);
            round.commitVerdicts(_sid(jobId), _verdictCommitment(jobId, verifiers[i], ends, salt));
        }
        for (uint256 i; i < verifiers.length; ++i) {
            bytes32 salt = _verdictSalt(jobId, verifiers[i]);
            vm.prank(verifiers[i]);
            round.revealVerdicts(_sid(jobId), ends, salt, _claimsArg(_sid(jobId)));
        }
    }

    /// @notice The sum of the verifiers' stakes.
    function _verifierStakes() internal view returns (uint256 total) {
        for (uint256 i; i < verifierPool.length; ++i) {
            total += _staked(verifierPool[i], Role.Verifier);
        }
    }

    /// @notice P-21: the honest run proves the claims before the splice, the spliced trajectory the
    ///         claims from it on: both are leaves of one root. Before the fix the secret was revealed
    ///         and the job finalized and paid for a model with a backdoor from SPLICE_AT on.
    function test_revealSecret_splicedTrajectory_reverts() public {
        bytes32[] memory honest = _honest();
        bytes32[] memory other = _other(SPLICE_AT + 1);
        bytes32[] memory claimed = _other(SPLICE_AT + 1);
        _buildTree(honest, other, SPLICE_AT + 1, claimed);
        // The end of segment SPLICE_AT - 1 and the start of segment SPLICE_AT are checkpoint SPLICE_AT;
        // the attacker claims the honest state for both and swaps trajectories right after it.
        _commitTree();
        vm.roll(block.number + 2);
        jobManager.assignVerifiers(jobId);
        _allApprove();
        uint256 submitterBefore = token.balanceOf(submitter) + escrow.creditOf(submitter);
        uint256 solverStake = _staked(solver, Role.Solver);
        uint256 verifierStakes = _verifierStakes();
        vm.warp(uint256(_job(jobId).challengeDeadline) + 1);
        bytes32[] memory proof = _attackProof();
        _expectSplicedProofReverts();
        vm.prank(solver);
        round.revealSecret(_sid(jobId), _secret(jobId), bytes32(0), proof, _claimsArg(_sid(jobId)));
        // Unable to reveal, the solver is faulted: nothing is paid, the submitter is refunded.
        vm.warp(uint256(_job(jobId).challengeDeadline) + params.revealWindow + 1);
        jobManager.finalize(jobId);
        assertEq(uint8(_job(jobId).status), uint8(JobStatus.Rejected), "job not rejected");
        assertEq(_sharesMinted(MODEL_ID), 0, "shares minted");
        assertLt(_staked(solver, Role.Solver), solverStake, "solver not slashed");
        // No verifier lost stake: the seats replayed, and each seat's fee is restaked.
        assertEq(
            _verifierStakes(),
            verifierStakes + _assigned(jobId).length * params.verifierFee,
            "a verifier lost stake or went unpaid"
        );
        // The reward comes back.
        assertEq(
            token.balanceOf(submitter) + escrow.creditOf(submitter), submitterBefore + REWARD, "submitter not refunded"
        );
    }

    /// @notice Expects the reveal to revert InvalidClaimsProof, after checking that some claim is a
    ///         state of the spliced trajectory (else the test would prove nothing) and that each such
    ///         claim does fold to the attacker's root from its padding position: only the position
    ///         binding refuses it.
    function _expectSplicedProofReverts() internal {
        (, uint32[] memory segments) = jobManager.getAssignment(jobId);
        bytes32 root = Merkle.root(tree);
        bool spliced;
        for (uint256 j; j < segments.length; ++j) {
            uint256 end = uint256(segments[j]) + 1;
            if (end <= SPLICE_AT) continue;
            spliced = true;
            bytes32 leaf = LibCheckpoint.leafHash(end, end * INTERVAL, stateOf[end]);
            bytes32[] memory single = _attackSingleProof(end);
            require(Merkle.fold(single, positionOf[end], leaf) == root, "spliced leaf not in the tree");
        }
        require(spliced, "no sampled segment after the splice");
        vm.expectRevert(abi.encodeWithSelector(IVerificationRound.InvalidClaimsProof.selector, _sid(jobId)));
    }

    /// @notice P-25: the attacker's own trajectory from pre-trained weights, with the leaf
    ///         (0, initHash) smuggled in after it only to pass the commit check. Before the fix the
    ///         commit went through, and unless segment 0 was sampled the job paid.
    function test_commitCheckpoints_smuggledInitLeaf_reverts() public {
        bytes32[] memory own = _other(0);
        bytes32[] memory init = _honest();
        bytes32[] memory claimed = _other(0);
        claimed[0] = INIT_HASH;
        _buildTree(own, init, 0, claimed);
        // Only the extra leaf (0, initHash) is taken from `init`: drop the rest.
        while (tree.length > own.length + 1) {
            tree.pop();
        }
        _assertSameDepth();
        bytes32 root = Merkle.root(tree);
        bytes32[] memory initProof = Merkle.proof(tree, positionOf[0]);
        uint256 submitterBefore = token.balanceOf(submitter) + escrow.creditOf(submitter);
        uint256 verifierStakes = _verifierStakes();
        bytes32 commitment = _secretCommitment(jobId, solver);
        vm.expectRevert(
            abi.encodeWithSelector(IJobManagerErrors.InitialStateNotCommitted.selector, jobId, root, INIT_HASH)
        );
        vm.prank(solver);
        jobManager.commitCheckpoints(jobId, root, initProof, CHECKPOINT_URL, commitment);
        assertEq(uint8(_job(jobId).status), uint8(JobStatus.Claimed), "job committed");
        assertEq(token.balanceOf(submitter) + escrow.creditOf(submitter), submitterBefore, "submitter paid");
        assertEq(_verifierStakes(), verifierStakes, "a verifier lost stake");
    }
}
