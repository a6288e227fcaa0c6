// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

import {Vm} from "@prb/test/Vm.sol";
import {Dissection} from "./utils/Dissection.sol";
import {Merkle} from "./utils/Merkle.sol";
import {HonestDefender} from "./actors/HonestDefender.sol";
import {BisectionGame} from "../src/BisectionGame.sol";
import {IBisectionGame} from "../src/interfaces/IBisectionGame.sol";
import {IVerificationRound} from "../src/interfaces/IVerificationRound.sol";
import {Game, GameStatus} from "../src/types/BisectionTypes.sol";
import {JobStatus} from "../src/types/JobTypes.sol";
import {Role} from "../src/types/Role.sol";
import {BisectionGame_Init} from "./utils/BisectionGameInit.sol";

/// @notice Whole games, with an honest committee judging the last step.
contract BisectionGame_FullGame_Test is BisectionGame_Init {
    function test_fullGame_cheatingDefenderLoses_succeeds() public {
        uint256 cheatStep = K + 37;
        _openDefault(cheatStep);
        uint256 solverStakeBefore = _staked(solver, Role.Solver);
        vm.roll(block.number + 1);
        _narrowHonestly();
        Game memory g = _game();
        assertEq(uint256(g.lo), cheatStep, "bisection finds the forged step");
        assertEq(uint256(g.moves), 1 + 2 * K_ROUNDS);
        uint256 solverWallet = token.balanceOf(solver);
        vm.recordLogs();
        _judgeStep();
        assertEq(uint8(_game().status), uint8(GameStatus.ChallengerWon));
        assertEq(uint8(_job(jobId).status), uint8(JobStatus.Rejected));
        assertEq(_gameCredited(challenger), uint256(g.moves) * BOND);
        assertEq(escrow.creditOf(solver), 0);
        assertEq(token.balanceOf(solver), solverWallet, "no reward for the rejected job");
        assertEq(_staked(solver, Role.Solver), solverStakeBefore - params.solverStake);
        _assertEscrowSolvent();
        assertEq(token.balanceOf(address(game)), 0);
    }

    function testFuzz_fullGame_cheatingDefenderLoses(uint256 cheatSeed, bool byWhistleblower) public {
        uint256 cheatStep = bound(cheatSeed, 0, K - 1);
        _openGame(K, _chain(2 * uint256(K), cheatStep), 0, byWhistleblower, solver);
        _narrowHonestly();
        assertEq(uint256(_game().lo), cheatStep);
        _judgeStep();
        assertEq(uint8(_game().status), uint8(GameStatus.ChallengerWon));
        assertEq(uint8(_job(jobId).status), uint8(JobStatus.Rejected));
    }

    function testFuzz_fullGame_cheatingDefenderLoses() public {
        testFuzz_fullGame_cheatingDefenderLoses(0, false);
    }

    function test_fullGame_grievingChallengerLoses_succeeds() public {
        _openDefault(NO_CHEAT);
        address griefer = challenger;
        uint256 verifierStakeBefore = _staked(griefer, Role.Verifier);
        _postEndpoints();
        // The griefer disputes every midpoint, all the way down to the first step of the segment.
        while (_game().status != GameStatus.AwaitingStep) {
            _bisect();
            _respond(false);
        }
        Game memory g = _game();
        assertEq(uint256(g.lo), K);
        vm.recordLogs();
        _judgeStep();
        assertEq(uint8(_game().status), uint8(GameStatus.DefenderWon));
        assertEq(_gameCredited(solver), uint256(g.moves) * BOND);
        // Its stake and its reject bond (locked from that stake) are slashed.
        assertEq(_staked(griefer, Role.Verifier), verifierStakeBefore - params.verifierStake - params.challengeBond);
        jobManager.finalize(jobId);
        assertEq(uint8(_job(jobId).status), uint8(JobStatus.Finalized));
        _assertEscrowSolvent();
    }
}

/// @notice An honest defender (the HonestDefender actor) never loses, whatever the challenger does.
contract BisectionGame_HonestDefender_Test is BisectionGame_Init {
    /// @param kSeed Segment length k (bounded to 1..200).
    /// @param responses Seeds the challenger's part in each round (bit 0: the segment; bit 255:
    ///        whistleblower).
    /// @param quitRound Round at which the challenger stops answering (bounded; past the end: never).
    /// @param thinkSeed Seconds each side thinks per move (bounded within the clock).
    function testFuzz_honestDefender_neverLoses(uint256 kSeed, uint256 responses, uint256 quitRound, uint256 thinkSeed)
        public
    {
        uint32 k = uint32(bound(kSeed, 1, 200));
        uint256 rounds = Dissection.rounds(k, ARITY);
        quitRound = bound(quitRound, 0, rounds + 1);
        uint256 think = bound(thinkSeed, 0, CLOCK / (rounds + 2));
        bytes32[] memory hashes = _chain(2 * uint256(k), NO_CHEAT);
        HonestDefender actor = new HonestDefender(game, k, hashes);
        _enrollSolver(address(actor));
        _openGame(k, hashes, responses & 1 == 1 ? 1 : 0, (responses >> 255) == 1, address(actor));
        vm.recordLogs();
        uint256 actorBefore = token.balanceOf(address(actor));
        uint256 challengerMoves;

        for (uint256 round; _game().status != GameStatus.AwaitingStep && !_resolved(); ++round) {
            vm.warp(block.timestamp + think);
            assertTrue(actor.play(disputeId));
            if (_game().status == GameStatus.AwaitingStep) break;
            if (_game().status == GameStatus.AwaitingBisection) {
                vm.warp(block.timestamp + think);
                assertTrue(actor.play(disputeId));
            }
            if (round == quitRound) {
                vm.warp(block.timestamp + CLOCK + 1);
                game.claimTimeout(disputeId);
                break;
            }
            vm.warp(block.timestamp + think);
            // The actor's hashes, as a node reads them: from its Bisected log.
            posted = _postedFromLog();
            // Any part, honest or not.
            _respond(uint256(keccak256(abi.encode(responses, round))) % _parts());
            ++challengerMoves;
        }
        if (_game().status == GameStatus.AwaitingStep) _judgeStep();
        assertEq(uint8(_game().status), uint8(GameStatus.DefenderWon), "honest defender lost");
        assertTrue(_job(jobId).status != JobStatus.Rejected);
        // The honest defender gets back every token it put in and wins the challenger's moves.
        uint256 paidIn = actorBefore - token.balanceOf(address(actor));
        assertEq(_gameCredited(address(actor)), paidIn + challengerMoves * BOND, "defender's net != challenger's moves");
    }

    /// @notice The hashes of this game's latest `Bisected` log among those recorded since the
    ///         last read (the actor's bisections have no return value).
    function _postedFromLog() internal returns (bytes32[] memory hashes) {
        Vm.Log[] memory logs = vm.getRecordedLogs();
        for (uint256 i; i < logs.length; ++i) {
            Vm.Log memory log = logs[i];
            if (log.emitter != address(game) || log.topics[0] != IBisectionGame.Bisected.selector) continue;
            if (uint256(log.topics[1]) != disputeId) continue;
            (,, hashes,) = abi.decode(log.data, (uint32, uint32, bytes32[], uint64));
        }
        assertGt(hashes.length, 0, "no Bisected log");
    }

    function testFuzz_honestDefender_neverLoses() public {
        testFuzz_honestDefender_neverLoses(64, 0xA5A5, 99, 60);
    }

    function _resolved() internal view returns (bool) {
        GameStatus status = _game().status;
        return status == GameStatus.DefenderWon || status == GameStatus.ChallengerWon;
    }
}

/// @title BisectionGame_Gas_Test
/// @notice Gas per move and of a whole dispute (k = 64 and k = 1024, every round played: 2 and 4
///         dissections and responses at arity 8, then the step committee). Isolation mode: every call is its own
///         transaction with cold storage, so figures include the 21,000 intrinsic gas and calldata.
///         Recorded in contracts/snapshots/bisection.json.
/// forge-config: default.isolate = true
/// forge-config: ci.isolate = true
contract BisectionGame_Gas_Test is BisectionGame_Init {
    string internal constant GROUP = "bisection";
    /// @notice Most gas a whole dispute may cost (docs/GAS.md, docs/DISPUTES.md: the figures
    ///         reached, rounded up), so that a regression fails here.
    uint256 internal constant K64_DISPUTE_MAX_GAS = 1_711_000;
    uint256 internal constant K1024_DISPUTE_MAX_GAS = 1_911_000;

    struct Tally {
        uint256 endpoints;
        uint256 bisectMax;
        uint256 respondMax;
        uint256 lastRespond;
        uint256 moves;
        uint256 committee;
    }

    function test_fullDispute_k64_gas() public {
        _measure(64, "k64");
        vmx.snapshotValue(GROUP, "size BisectionGame", address(game).code.length);
    }

    function test_fullDispute_k1024_gas() public {
        _measure(1024, "k1024");
    }

    /// @notice An escalation at the first response: one move opens the step dispute on all k steps.
    function test_escalate_k64_gas() public {
        _openGame(K, _chain(2 * uint256(K), K + K / 3), 1, false, solver);
        _postEndpoints();
        _bisect();
        Game memory g = _game();
        vm.prank(challenger);
        game.escalate(disputeId, g.lo, g.hi);
        uint256 used = vmx.snapshotGasLastCall(GROUP, "k64 escalate (opens step on all k)");
        emit LogNamedUint256("k64 escalate", used);
        assertEq(uint8(_game().status), uint8(GameStatus.AwaitingStep));
    }

    function _measure(uint32 k, string memory tag) internal {
        _openGame(k, _chain(2 * uint256(k), k + k / 3), 1, false, solver);
        Tally memory t;
        _postEndpoints();
        t.endpoints = vmx.snapshotGasLastCall(GROUP, string.concat(tag, " postEndpoints"));
        t.moves = t.endpoints;
        while (_game().status != GameStatus.AwaitingStep) {
            _bisect();
            uint256 used = vmx.snapshotGasLastCall(GROUP, string.concat(tag, " bisect"));
            if (used > t.bisectMax) t.bisectMax = used;
            t.moves += used;
            _respondHonestly();
            used = vmx.snapshotGasLastCall(GROUP, string.concat(tag, " respond"));
            if (_game().status == GameStatus.AwaitingStep) t.lastRespond = used;
            else if (used > t.respondMax) t.respondMax = used;
            t.moves += used;
        }
        uint256 stepId = _game().stepDisputeId;
        bool valid = _stepValid(stepId);
        vm.roll(block.number + 2);
        committee.drawCommittee(stepId);
        t.committee += vmx.snapshotGasLastCall(GROUP, string.concat(tag, " step drawCommittee"));
        address[] memory members = committee.committeeOf(stepId);
        for (uint256 i; i < members.length; ++i) {
            _commitVote(stepId, members[i], valid);
            t.committee += vmx.snapshotGasLastCall(GROUP, string.concat(tag, " step commitVote"));
        }
        for (uint256 i; i < members.length; ++i) {
            _revealVote(stepId, members[i], valid);
            t.committee += vmx.snapshotGasLastCall(GROUP, string.concat(tag, " step revealVote"));
        }
        committee.resolve(stepId);
        t.committee += vmx.snapshotGasLastCall(GROUP, string.concat(tag, " step resolve (+ game + settlement)"));
        assertEq(uint8(_game().status), uint8(GameStatus.ChallengerWon));

        vmx.snapshotValue(GROUP, string.concat(tag, " bisect (max)"), t.bisectMax);
        vmx.snapshotValue(GROUP, string.concat(tag, " respond (max, not last)"), t.respondMax);
        vmx.snapshotValue(GROUP, string.concat(tag, " respond (last, opens step)"), t.lastRespond);
        vmx.snapshotValue(GROUP, string.concat(tag, " game moves total"), t.moves);
        vmx.snapshotValue(GROUP, string.concat(tag, " dispute total (moves + step committee)"), t.moves + t.committee);
        assertLte(t.moves + t.committee, k == 64 ? K64_DISPUTE_MAX_GAS : K1024_DISPUTE_MAX_GAS, "dispute gas bound");
        emit LogNamedUint256(string.concat(tag, " postEndpoints"), t.endpoints);
        emit LogNamedUint256(string.concat(tag, " bisect (max)"), t.bisectMax);
        emit LogNamedUint256(string.concat(tag, " respond (max, not last)"), t.respondMax);
        emit LogNamedUint256(string.concat(tag, " respond (last, opens step)"), t.lastRespond);
        emit LogNamedUint256(string.concat(tag, " moves"), uint256(_game().moves));
        emit LogNamedUint256(string.concat(tag, " game moves total"), t.moves);
        emit LogNamedUint256(string.concat(tag, " step committee total"), t.committee);
        emit LogNamedUint256(string.concat(tag, " dispute total"), t.moves + t.committee);
    }
}

/// @notice P-5 (docs/SECURITY.md): every challenger of a sample plays its own game against the
///         solver, one after the other, and a lost or abandoned game costs only its owner, so any one
///         honest challenger wins (Arbitrum BoLD's guarantee), whoever plays first.
contract BisectionGame_EveryChallenger_Test is BisectionGame_Init {
    address internal accomplice;
    address internal honest;
    address internal approver;

    /// @notice A k = K job on segment 1 (the solver forged the step after `cheatStep`): verifiers 0
    ///         and 1 reject the sample, verifier 2 approves it; finalize opens verifier 0's game.
    function _openTwoRejecters(uint256 cheatStep) internal {
        address[] memory verifiers = _assignedJob(K, _chain(2 * uint256(K), cheatStep), 1, solver);
        assertEq(verifiers.length, 3, "three seats");
        (accomplice, honest, approver) = (verifiers[0], verifiers[1], verifiers[2]);
        _submit(jobId, accomplice, uint256(1) << 1);
        _submit(jobId, honest, uint256(1) << 1);
        _submit(jobId, approver, 0);
        _passChallengeWindow(jobId);
        jobManager.finalize(jobId);
        disputeId = _job(jobId).disputeId;
        challenger = _game().challenger;
    }

    /// @notice The current challenger lets its clock run out after the defender's first bisection.
    function _abandon() internal {
        _postEndpoints();
        _bisect();
        vm.warp(block.timestamp + CLOCK + 1);
        game.claimTimeout(disputeId);
        assertEq(uint8(_game().status), uint8(GameStatus.DefenderWon), "abandoned game not lost");
    }

    /// @notice The solver's accomplice rejects first and abandons its game: before the fix every
    ///         rejecter was slashed with it and the cheating solver was paid. Now only the accomplice
    ///         loses, the honest rejecter plays next and wins, and the solver is slashed.
    function test_firstChallengerAbandons_nextRejecterWins_succeeds() public {
        _openTwoRejecters(K + 10);
        assertEq(challenger, accomplice, "first rejecter plays first");
        uint256 accompliceStake = _staked(accomplice, Role.Verifier);
        uint256 honestStake = _staked(honest, Role.Verifier);
        uint256 solverStake = _staked(solver, Role.Solver);
        _abandon();

        // Only the accomplice paid for its abandoned game; the honest rejecter is still in it.
        // (A reject bond is locked from the rejecter's stake: the loser's is slashed with it.)
        assertEq(
            _staked(accomplice, Role.Verifier),
            accompliceStake - params.verifierStake - params.challengeBond,
            "accomplice kept stake"
        );
        assertEq(_staked(honest, Role.Verifier), honestStake, "honest rejecter slashed for another's game");
        assertEq(
            _locked(honest, Role.Verifier),
            params.verifierStake + params.challengeBond,
            "honest rejecter released early"
        );
        assertEq(uint8(_job(jobId).status), uint8(JobStatus.Disputed), "job left its dispute");
        assertEq(jobManager.disputedMaskOf(jobId), uint256(1) << 1, "sample no longer disputed");

        // The next finalize opens the honest rejecter's own game, which it wins.
        jobManager.finalize(jobId);
        assertTrue(_job(jobId).disputeId != disputeId, "no second game");
        disputeId = _job(jobId).disputeId;
        challenger = _game().challenger;
        assertEq(challenger, honest, "second game not the next rejecter's");
        _narrowHonestly();
        _judgeStep();
        assertEq(uint8(_game().status), uint8(GameStatus.ChallengerWon), "honest challenger lost");
        assertEq(uint8(_job(jobId).status), uint8(JobStatus.Rejected), "cheat not rejected");
        assertEq(_staked(solver, Role.Solver), solverStake - params.solverStake, "solver not slashed");
        // The winner keeps its stake and its seat's fee is restaked with the rejection.
        assertEq(_staked(honest, Role.Verifier), honestStake + params.verifierFee, "winner slashed or unpaid");
        assertEq(_locked(honest, Role.Verifier), 0, "winner still locked");
        // The accomplice is not repaid by the honest win: it lost its own game.
        assertEq(
            _staked(accomplice, Role.Verifier),
            accompliceStake - params.verifierStake - params.challengeBond,
            "loser refunded"
        );
        _assertEscrowSolvent();
    }

    /// @notice Against an honest solver every griefing rejecter loses its own game, each pays once,
    ///         and the job then finalizes; the approver is paid.
    function test_everyChallengerLoses_eachPaysOnce_jobFinalizes_succeeds() public {
        _openTwoRejecters(NO_CHEAT);
        uint256 accompliceStake = _staked(accomplice, Role.Verifier);
        uint256 honestStake = _staked(honest, Role.Verifier);
        _abandon();
        jobManager.finalize(jobId);
        disputeId = _job(jobId).disputeId;
        challenger = _game().challenger;
        assertEq(challenger, honest, "second rejecter did not play");
        _abandon();
        assertEq(jobManager.disputedMaskOf(jobId), 0, "sample still disputed after its last challenger");
        jobManager.finalize(jobId);
        assertEq(uint8(_job(jobId).status), uint8(JobStatus.Finalized), "honest job not finalized");
        assertEq(
            _staked(accomplice, Role.Verifier),
            accompliceStake - params.verifierStake - params.challengeBond,
            "first loser"
        );
        assertEq(
            _staked(honest, Role.Verifier), honestStake - params.verifierStake - params.challengeBond, "second loser"
        );
        assertEq(_locked(approver, Role.Verifier), 0, "approver still locked");
        _assertEscrowSolvent();
    }

    /// @notice A loser cannot be drawn again: a third finalize has nothing left to open.
    function test_lostChallenger_neverPlaysTwice_succeeds() public {
        _openTwoRejecters(NO_CHEAT);
        _abandon();
        jobManager.finalize(jobId);
        disputeId = _job(jobId).disputeId;
        assertEq(_game().challenger, honest, "loser drawn again");
        _abandon();
        jobManager.finalize(jobId);
        assertEq(_job(jobId).disputeId, disputeId, "a third game opened");
    }
}

/// @notice P-7 and P-25 (docs/SECURITY.md): a solver that trained from its own weights (pre-trained,
///         backdoored) cannot commit them as checkpoint 0, and the positional tree holds no second
///         state for index 0 (CheckpointBinding_Test tries the smuggled leaf). What it can commit is
///         initHash at index 0 followed by its own trajectory; segment 0 must then start from
///         initHash, in the claims and in the game's endpoints, and its own trajectory is what it
///         defends from there.
contract BisectionGame_InitialState_Test is BisectionGame_Init {
    bytes32 internal constant OWN_START = keccak256("pretrained weights");
    bytes32 internal init;
    /// @notice The committed tree: (0, initHash), (K, own1), (2K, own2).
    bytes32[] internal tree;
    bytes32[] internal own;

    function setUp() public override {
        super.setUp();
        interval = K;
        segment = 0;
        defender = solver;
        init = keccak256("genesis");
        own = new bytes32[](3);
        own[0] = OWN_START;
        own[1] = keccak256(abi.encode(OWN_START, "after K steps"));
        own[2] = keccak256(abi.encode(own[1], "after 2K steps"));
        bytes32[] memory committedStates = new bytes32[](3);
        committedStates[0] = init;
        committedStates[1] = own[1];
        committedStates[2] = own[2];
        tree = Merkle.leaves(K, committedStates);
        vm.prank(submitter);
        jobId = jobManager.postJob(MODEL_ID, SPEC_HASH, init, 2 * K, K, REWARD, SPEC_URI);
        vm.prank(solver);
        jobManager.claimJob(jobId);
        bytes32[] memory initProof = Merkle.proof(tree, 0);
        bytes32 commitment = _secretCommitment(jobId, solver);
        vm.prank(solver);
        jobManager.commitCheckpoints(jobId, Merkle.root(tree), initProof, CHECKPOINT_URL, commitment);
        vm.roll(block.number + 2);
        jobManager.assignVerifiers(jobId);
    }

    /// @notice Claims (start, end) per sample in sample order; segment 0 starts from `start0`.
    function _claimsFrom(bytes32 start0) internal view returns (bytes32[] memory starts, bytes32[] memory ends) {
        (, uint32[] memory segments) = jobManager.getAssignment(jobId);
        starts = new bytes32[](segments.length);
        ends = new bytes32[](segments.length);
        for (uint256 j; j < segments.length; ++j) {
            starts[j] = segments[j] == 0 ? start0 : own[segments[j]];
            ends[j] = own[segments[j] + 1];
        }
    }

    /// @notice Claims whose segment 0 starts from the solver's own weights are taken when posted
    ///         (the job keeps no initHash after the commit: the root takes its word, `Job.root`),
    ///         but the secret reveal proves every claimed start at its index of the tree, and index
    ///         0 is initHash: the solver can never reveal, and is slashed for it.
    function test_revealSecret_segmentZeroFromOwnWeights_reverts() public {
        (bytes32[] memory starts, bytes32[] memory ends) = _claimsFrom(OWN_START);
        vm.prank(solver);
        round.postClaims(_sid(jobId), starts, ends);
        _bookClaims(round, _sid(jobId), starts, ends);
        (address[] memory verifiers, uint32[] memory segments) = jobManager.getAssignment(jobId);
        for (uint256 i; i < verifiers.length; ++i) {
            _submit(jobId, verifiers[i], 0);
        }
        _revealPending(jobId);
        vm.warp(uint256(_job(jobId).challengeDeadline) + 1);
        bytes32[] memory proof = Merkle.multiproof(tree, Merkle.claimIndices(segments));
        bytes32 secret = _secret(jobId);
        vm.expectRevert(abi.encodeWithSelector(IVerificationRound.InvalidClaimsProof.selector, _sid(jobId)));
        vm.prank(solver);
        round.revealSecret(_sid(jobId), secret, bytes32(0), proof, _claimsArg(_sid(jobId)));
        uint256 stakeBefore = _staked(solver, Role.Solver);
        vm.warp(uint256(_job(jobId).challengeDeadline) + params.revealWindow + 1);
        jobManager.finalize(jobId);
        assertEq(_staked(solver, Role.Solver), stakeBefore - params.solverStake, "solver not slashed");
        assertEq(uint8(_job(jobId).status), uint8(JobStatus.Rejected), "job not rejected");
    }

    /// @notice With claims that must start from initHash, a verifier's replay of segment 0 from the
    ///         true initial state rejects it; in the game the solver cannot post its own weights as
    ///         the start, only initHash, from which its committed end is then disputed.
    function test_postEndpoints_segmentZeroFromOwnWeights_reverts() public {
        (bytes32[] memory starts, bytes32[] memory ends) = _claimsFrom(init);
        vm.prank(solver);
        round.postClaims(_sid(jobId), starts, ends);
        _bookClaims(round, _sid(jobId), starts, ends);
        (address[] memory verifiers, uint32[] memory segments) = jobManager.getAssignment(jobId);
        uint256 mask;
        for (uint256 j; j < segments.length; ++j) {
            if (segments[j] == 0) mask = uint256(1) << j;
        }
        assertTrue(mask != 0, "segment 0 not sampled");
        _submit(jobId, verifiers[0], mask);
        for (uint256 i = 1; i < verifiers.length; ++i) {
            _submit(jobId, verifiers[i], 0);
        }
        _revealPending(jobId);
        vm.warp(uint256(_job(jobId).challengeDeadline) + 1);
        bytes32[] memory proof = Merkle.multiproof(tree, Merkle.claimIndices(segments));
        bytes32 secret = _secret(jobId);
        vm.prank(solver);
        round.revealSecret(_sid(jobId), secret, bytes32(0), proof, _claimsArg(_sid(jobId)));
        jobManager.finalize(jobId);
        disputeId = _job(jobId).disputeId;
        assertEq(uint256(_game().segment), 0, "game not on segment 0");

        // Checkpoint 0 has one state, initHash: the proof of index 0 does not prove OWN_START.
        bytes32[] memory startProof = Merkle.proof(tree, 0);
        bytes32[] memory endProof = Merkle.proof(tree, 1);
        vm.expectRevert(abi.encodeWithSelector(IBisectionGame.InvalidEndpointProof.selector, disputeId, 0, OWN_START));
        vm.prank(solver);
        game.postEndpoints(disputeId, OWN_START, own[1], startProof, endProof);
        // From initHash the game goes on, and the solver's own trajectory is what it must defend.
        vm.prank(solver);
        game.postEndpoints(disputeId, init, own[1], startProof, endProof);
        assertEq(_game().agreedHash, init, "game does not start from initHash");
    }
}
