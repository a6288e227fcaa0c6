// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

// Testing
import {VerificationRound_Init} from "./VerificationRound.t.sol";
// Deployment
import {Deploy} from "../script/Deploy.sol";
// Contracts
import {VerificationRound} from "../src/VerificationRound.sol";
// Interfaces
import {IJobManager} from "../src/interfaces/IJobManager.sol";
import {IVerificationRound} from "../src/interfaces/IVerificationRound.sol";
// Types
import {JobStatus} from "../src/types/JobTypes.sol";
import {Claims, RoundOutcome} from "../src/types/RoundTypes.sol";

contract VerificationRound_RevealSecret_Test is VerificationRound_Init {
    uint256 internal jobId;

    function setUp() public override {
        super.setUp();
        _redeployWithRate(5000);
        jobId = _forcedVerifyingJob();
        _submitAll(jobId, 0);
    }

    function _reveal(bytes32 secret, bytes32 trueEnd, bytes32[] memory proof) internal {
        vm.prank(solver);
        round.revealSecret(_sid(jobId), secret, trueEnd, proof, _claimsArg(_sid(jobId)));
    }

    /// @notice The solver of `other` posts `starts` and `ends` as its claims and every seat seals and
    ///         reveals an approval of all of them.
    function _postAndApprove(uint256 other, bytes32[] memory starts, bytes32[] memory ends) internal {
        vm.prank(solver);
        round.postClaims(_sid(other), starts, ends);
        _bookClaims(round, _sid(other), starts, ends);
        _submitAll(other, 0);
    }

    /// @notice After the challenge deadline, the solver of `other` reveals its secret with the
    ///         multiproof of its committed states and its posted claims, expecting revert `reason`.
    function _revealExpecting(uint256 other, bytes memory reason) internal {
        vm.warp(uint256(_job(other).challengeDeadline) + 1);
        bytes32[] memory proof = _claimsProofOf(other);
        bytes32 trueEnd = _forcedTrueEnd(other);
        bytes32 secret = _secret(other);
        Claims memory claims = _claimsArg(_sid(other));
        vm.expectRevert(reason);
        vm.prank(solver);
        round.revealSecret(_sid(other), secret, trueEnd, proof, claims);
    }

    function test_revealSecret_forced_succeeds() public {
        (bool forced, uint256 f) = round.drawForcedError(_sid(jobId), _secret(jobId));
        assertTrue(forced);
        vm.warp(uint256(_job(jobId).challengeDeadline) + 1);
        (,, uint32 sealedBefore, uint64 claimsBlock) = round.roundOf(_sid(jobId));
        vm.roll(block.number + 5);
        vm.expectEmit(address(round));
        emit IVerificationRound.SecretRevealed(_sid(jobId), _secret(jobId), true, f);
        _revealSecret(jobId);
        (RoundOutcome outcome, uint256 sample) = round.outcome(_sid(jobId));
        assertEq(uint8(outcome), uint8(RoundOutcome.Forced));
        assertEq(sample, f);
        // The outcome takes the claims hash's place in the round's one word; the claims' block and
        // the seal count stay (readers find the claims' event from the block after the reveal too).
        (bytes32 commitment, bool revealed, uint32 committed, uint64 keptBlock) = round.roundOf(_sid(jobId));
        assertTrue(revealed);
        assertEq(uint256(keptBlock), uint256(claimsBlock), "the claims' block kept");
        assertNotEq(uint256(claimsBlock), 0);
        assertEq(commitment, bytes32(0));
        assertEq(uint256(committed), uint256(sealedBefore), "the seal count kept");
        assertNotEq(uint256(sealedBefore), 0);
    }

    function test_revealSecret_atClose_succeeds() public {
        vm.warp(uint256(_job(jobId).challengeDeadline) + params.revealWindow);
        _revealSecret(jobId);
    }

    function test_revealSecret_atChallengeDeadline_reverts() public {
        uint64 cd = _job(jobId).challengeDeadline;
        vm.warp(cd);
        bytes32[] memory proof = _claimsProofOf(jobId);
        bytes32 trueEnd = _forcedTrueEnd(jobId);
        vm.expectRevert(
            abi.encodeWithSelector(
                IVerificationRound.OutsideWindow.selector, _sid(jobId), cd + 1, cd + params.revealWindow, cd
            )
        );
        _reveal(_secret(jobId), trueEnd, proof);
    }

    function test_revealSecret_afterClose_reverts() public {
        uint64 cd = _job(jobId).challengeDeadline;
        uint64 closes = cd + params.revealWindow;
        vm.warp(uint256(closes) + 1);
        bytes32[] memory proof = _claimsProofOf(jobId);
        bytes32 trueEnd = _forcedTrueEnd(jobId);
        vm.expectRevert(
            abi.encodeWithSelector(IVerificationRound.OutsideWindow.selector, _sid(jobId), cd + 1, closes, closes + 1)
        );
        _reveal(_secret(jobId), trueEnd, proof);
        (RoundOutcome outcome,) = round.outcome(_sid(jobId));
        assertEq(uint8(outcome), uint8(RoundOutcome.NoReveal));
    }

    function test_revealSecret_twice_reverts() public {
        vm.warp(uint256(_job(jobId).challengeDeadline) + 1);
        _revealSecret(jobId);
        bytes32[] memory proof = _claimsProofOf(jobId);
        bytes32 trueEnd = _forcedTrueEnd(jobId);
        vm.expectRevert(abi.encodeWithSelector(IVerificationRound.SecretAlreadyRevealed.selector, _sid(jobId)));
        _reveal(_secret(jobId), trueEnd, proof);
    }

    function test_revealSecret_wrongSecret_reverts() public {
        vm.warp(uint256(_job(jobId).challengeDeadline) + 1);
        bytes32[] memory proof = _claimsProofOf(jobId);
        vm.expectRevert(abi.encodeWithSelector(IVerificationRound.SecretCommitmentMismatch.selector, _sid(jobId)));
        _reveal(keccak256("another secret"), bytes32(0), proof);
    }

    /// @notice The claims hash binds the secret commitment the commit stored: a solver that hands
    ///         back its claims with the commitment of another secret (one whose draw it prefers,
    ///         chosen after seeing the verdicts) cannot reveal that secret.
    function test_revealSecret_claimsWithAnotherSecretsCommitment_reverts() public {
        vm.warp(uint256(_job(jobId).challengeDeadline) + 1);
        bytes32[] memory proof = _claimsProofOf(jobId);
        bytes32 other = keccak256("a secret chosen after the verdicts");
        Claims memory claims = _claimsArg(_sid(jobId));
        claims.secretCommitment = keccak256(abi.encode(jobId, solver, other));
        vm.expectRevert(abi.encodeWithSelector(IVerificationRound.ClaimsMismatch.selector, _sid(jobId)));
        vm.prank(solver);
        round.revealSecret(_sid(jobId), other, bytes32(0), proof, claims);
    }

    /// @notice The multiproof must carry exactly the hashes its fold consumes: one extra hash or one
    ///         missing hash is refused (a proof is never read past what the claims imply).
    function test_revealSecret_proofOneHashTooManyOrTooFew_reverts() public {
        vm.warp(uint256(_job(jobId).challengeDeadline) + 1);
        bytes32[] memory proof = _claimsProofOf(jobId);
        bytes32 trueEnd = _forcedTrueEnd(jobId);
        assertGt(proof.length, 0, "every checkpoint sampled: the test needs a proof hash");
        bytes32[] memory longer = new bytes32[](proof.length + 1);
        bytes32[] memory shorter = new bytes32[](proof.length - 1);
        for (uint256 i; i < proof.length; ++i) {
            longer[i] = proof[i];
            if (i + 1 < proof.length) shorter[i] = proof[i];
        }
        vm.expectRevert(abi.encodeWithSelector(IVerificationRound.InvalidClaimsProof.selector, _sid(jobId)));
        _reveal(_secret(jobId), trueEnd, longer);
        vm.expectRevert(abi.encodeWithSelector(IVerificationRound.InvalidClaimsProof.selector, _sid(jobId)));
        _reveal(_secret(jobId), trueEnd, shorter);
        _reveal(_secret(jobId), trueEnd, proof);
    }

    /// @notice Any one hash of the multiproof changed: the claims no longer fold to the root.
    function test_revealSecret_tamperedProofHash_reverts() public {
        vm.warp(uint256(_job(jobId).challengeDeadline) + 1);
        bytes32[] memory proof = _claimsProofOf(jobId);
        bytes32 trueEnd = _forcedTrueEnd(jobId);
        for (uint256 i; i < proof.length; ++i) {
            bytes32 kept = proof[i];
            proof[i] = keccak256(abi.encode(kept));
            vm.expectRevert(abi.encodeWithSelector(IVerificationRound.InvalidClaimsProof.selector, _sid(jobId)));
            _reveal(_secret(jobId), trueEnd, proof);
            proof[i] = kept;
        }
        _reveal(_secret(jobId), trueEnd, proof);
    }

    /// @notice The proof of another set of checkpoints (the whole tree's leaves, which needs no hash
    ///         at all) does not prove the sampled ones.
    function test_revealSecret_proofOfOtherCheckpoints_reverts() public {
        vm.warp(uint256(_job(jobId).challengeDeadline) + 1);
        bytes32 trueEnd = _forcedTrueEnd(jobId);
        vm.expectRevert(abi.encodeWithSelector(IVerificationRound.InvalidClaimsProof.selector, _sid(jobId)));
        _reveal(_secret(jobId), trueEnd, new bytes32[](0));
    }

    function test_revealSecret_wrongForcedTrueEnd_reverts() public {
        vm.warp(uint256(_job(jobId).challengeDeadline) + 1);
        bytes32[] memory proof = _claimsProofOf(jobId);
        (, uint256 f) = round.drawForcedError(_sid(jobId), _secret(jobId));
        vm.expectRevert(abi.encodeWithSelector(IVerificationRound.ForcedClaimMismatch.selector, _sid(jobId), f));
        _reveal(_secret(jobId), keccak256("not the true end"), proof);
    }

    function test_revealSecret_beforeClaims_reverts() public {
        uint256 bare = _unclaimedJob();
        vm.warp(uint256(_job(bare).challengeDeadline) + 1);
        bytes32[] memory none = new bytes32[](0);
        vm.expectRevert(abi.encodeWithSelector(IVerificationRound.ClaimsNotPosted.selector, _sid(bare)));
        vm.prank(solver);
        round.revealSecret(_sid(bare), _secret(bare), bytes32(0), none, _claimsArg(_sid(bare)));
    }

    function test_revealSecret_notVerifying_reverts() public {
        // Committed, not yet assigned: the round exists but the job is not Verifying.
        uint256 openJob = _postJob();
        _claimAndCommit(openJob);
        bytes32[] memory none = new bytes32[](0);
        vm.expectRevert(
            abi.encodeWithSelector(IVerificationRound.WrongJobStatus.selector, openJob, uint8(JobStatus.Committed))
        );
        round.revealSecret(_sid(openJob), bytes32(0), bytes32(0), none, _claimsArg(_sid(openJob)));
    }

    /// @notice A solver that posted a wrong end cannot reveal its secret by passing back the committed
    ///         ends instead (they would prove against the root): the copy must hash to the posted
    ///         claims.
    function test_revealSecret_forgedClaims_reverts() public {
        uint256 other = _forcedAssignedJob();
        (bytes32[] memory starts, bytes32[] memory ends) = _claims(other);
        (, uint256 f) = round.drawForcedError(_sid(other), _secret(other));
        uint256 wrong = (f + 1) % ends.length;
        bytes32 committedEnd = ends[wrong];
        ends[wrong] = keccak256(abi.encode("wrong end", committedEnd));
        vm.prank(solver);
        round.postClaims(_sid(other), starts, ends);
        _bookClaims(round, _sid(other), starts, ends);
        _submitAll(other, 0);
        vm.warp(uint256(_job(other).challengeDeadline) + 1);
        bytes32[] memory proof = _claimsProofOf(other);
        bytes32 trueEnd = _forcedTrueEnd(other);
        bytes32 secret = _secret(other);
        ends[wrong] = committedEnd;
        Claims memory copy =
            Claims({startHashes: starts, endHashes: ends, secretCommitment: _secretCommitmentOf(_sid(other))});
        vm.expectRevert(abi.encodeWithSelector(IVerificationRound.ClaimsMismatch.selector, _sid(other)));
        vm.prank(solver);
        round.revealSecret(_sid(other), secret, trueEnd, proof, copy);
        // The posted claims themselves fail on the wrong end's proof.
        copy = _claimsArg(_sid(other));
        vm.expectRevert(abi.encodeWithSelector(IVerificationRound.InvalidClaimsProof.selector, _sid(other)));
        vm.prank(solver);
        round.revealSecret(_sid(other), secret, trueEnd, proof, copy);
    }

    /// @notice Two adjacent samples share a checkpoint (the end of one is the start of the next): the
    ///         multiproof proves it once, so claims that disagree there are refused outright, even when
    ///         the end is the committed state (before the multiproof, the start's own proof refused it).
    function test_revealSecret_adjacentClaimsDisagree_reverts() public {
        uint256 other = _forcedAssignedJob();
        (, uint32[] memory segments) = jobManager.getAssignment(other);
        (bytes32[] memory starts, bytes32[] memory ends) = _claims(other);
        (, uint256 f) = round.drawForcedError(_sid(other), _secret(other));
        uint256 next = type(uint256).max;
        for (uint256 j = 1; j < segments.length; ++j) {
            if (segments[j] == segments[j - 1] + 1 && j - 1 != f) {
                next = j;
                break;
            }
        }
        assertTrue(next != type(uint256).max, "no two adjacent samples");
        starts[next] = keccak256(abi.encode("another start", starts[next]));
        _postAndApprove(other, starts, ends);
        _revealExpecting(other, abi.encodeWithSelector(IVerificationRound.InvalidClaimsProof.selector, _sid(other)));
    }

    /// @notice A solver that planted no forced claim where the draw asks for one cannot reveal.
    function test_revealSecret_honestClaimOnForcedSample_reverts() public {
        uint256 other = _forcedAssignedJob();
        {
            (, uint32[] memory segments) = jobManager.getAssignment(other);
            bytes32[] storage states = _committedStates[other];
            bytes32[] memory starts = new bytes32[](segments.length);
            bytes32[] memory ends = new bytes32[](segments.length);
            for (uint256 j; j < segments.length; ++j) {
                starts[j] = states[segments[j]];
                ends[j] = states[segments[j] + 1];
            }
            _postAndApprove(other, starts, ends);
        }
        (, uint256 f) = round.drawForcedError(_sid(other), _secret(other));
        _revealExpecting(other, abi.encodeWithSelector(IVerificationRound.ForcedClaimMismatch.selector, _sid(other), f));
    }
}

contract VerificationRound_Draw_Test is VerificationRound_Init {
    /// @notice Without a jackpot nothing can be farmed, so every rate up to 10_000 deploys.
    function setUp() public override {
        super.setUp();
        Deploy.Config memory cfg = _testConfig();
        cfg.params.jackpot = 0;
        _deploy(cfg);
        delete verifierPool;
        _setUpActors();
    }

    /// @notice The contract's draw is the formula of docs/FORCED_ERRORS.md section 1, for any secret
    ///         and rate, and the forced sample is always eligible.
    function testFuzz_drawForcedError_matchesSpec_succeeds(bytes32 secret, uint256 rateBps) public {
        rateBps = bound(rateBps, 0, 10_000);
        VerificationRound r = new VerificationRound(IJobManager(address(jobManager)), rateBps);
        uint256 jobId = _verifyingJob();
        uint32[] memory segments = _segments(jobId);
        (bool forced, uint256 f) = r.drawForcedError(_sid(jobId), secret);
        (bool expectedForced, uint256 expectedSample) = _referenceDraw(secret, jobId, segments, rateBps);
        assertEq(forced, expectedForced);
        assertEq(f, expectedSample);
        if (forced) {
            assertLt(f, segments.length);
            for (uint256 i; i < segments.length; ++i) {
                assertNotEq(uint256(segments[i]), uint256(segments[f]) + 1, "forced sample not eligible");
            }
        }
        if (rateBps == 0) assertFalse(forced);
        if (rateBps == 10_000) assertTrue(forced);
    }

    function test_drawForcedError_matchesSpec_succeeds() public {
        testFuzz_drawForcedError_matchesSpec_succeeds(keccak256("secret"), 5000);
    }

    /// @notice With every segment sampled (N/k = q), only the last segment is eligible.
    function testFuzz_drawForcedError_allSampled_picksLast_succeeds(bytes32 secret) public {
        VerificationRound r = new VerificationRound(IJobManager(address(jobManager)), 10_000);
        vm.prank(submitter);
        uint256 jobId = jobManager.postJob(MODEL_ID, SPEC_HASH, INIT_HASH, 8, 2, REWARD, SPEC_URI);
        _claimAndCommit(jobId);
        _assign(jobId);
        uint32[] memory segments = _segments(jobId);
        (bool forced, uint256 f) = r.drawForcedError(_sid(jobId), secret);
        assertTrue(forced);
        assertEq(uint256(segments[f]), 3);
    }

    function test_drawForcedError_allSampled_picksLast_succeeds() public {
        testFuzz_drawForcedError_allSampled_picksLast_succeeds(bytes32(uint256(1)));
    }

    function test_drawForcedError_beforeAssignment_succeeds() public {
        VerificationRound r = new VerificationRound(IJobManager(address(jobManager)), 10_000);
        (bool forced, uint256 f) = r.drawForcedError(_sid(_postJob()), bytes32(uint256(1)));
        assertFalse(forced);
        assertEq(f, 0);
    }

    function testFuzz_forcedClaim_matchesSpec_succeeds(bytes32 trueEnd) public {
        bytes32 claim = round.forcedClaim(trueEnd);
        assertEq(claim, keccak256(abi.encodePacked(keccak256("veritrain.forced-error.v1"), trueEnd)));
        assertNotEq(claim, trueEnd);
    }

    function test_forcedClaim_matchesSpec_succeeds() public {
        testFuzz_forcedClaim_matchesSpec_succeeds(sha256("checkpoint"));
    }
}
