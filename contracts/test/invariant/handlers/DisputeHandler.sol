// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

// Testing
import {DisputeHandlerBase} from "./DisputeHandlerBase.sol";
import {Dissection} from "../../utils/Dissection.sol";
import {Merkle} from "../../utils/Merkle.sol";
// Deployment
import {Deploy} from "../../../script/Deploy.sol";
// Contracts
import {ArbitrationCommittee} from "../../../src/ArbitrationCommittee.sol";
import {BisectionGame} from "../../../src/BisectionGame.sol";
import {JobManager} from "../../../src/JobManager.sol";
import {VeriToken} from "../../../src/VeriToken.sol";
// Types
import {Game, GameStatus, Side, StepClaim} from "../../../src/types/BisectionTypes.sol";
import {Dispute, DisputePhase} from "../../../src/types/DisputeTypes.sol";
import {Job, JobStatus} from "../../../src/types/JobTypes.sol";
import {Role} from "../../../src/types/Role.sol";

/// @title DisputeHandler
/// @notice Plays bisection disputes (docs/DISPUTES.md) with one honest side and one side whose moves
///         the fuzzer picks, and tracks the ghosts of properties D1-D4 (PROPERTIES.md).
/// @dev Deploys the protocol itself (bisection adjudicator) and opens jobs only through the
///      Deployers helpers, so the verdict flow stays theirs. Every job is played in one of two modes:
///      - HonestDefender: the solver ran the true trajectory; verifiers picked by the fuzzer reject
///        valid samples and the first rejecter (the challenger) answers bisections arbitrarily.
///      - HonestChallenger: the solver forged step `cheatStep` (chosen inside a sampled segment); the
///        verifiers reject that sample, the challenger answers honestly, and the defender posts
///        arbitrary midpoint hashes (its own, the true one or a random one) or stalls.
///      Honest parties, the step committee (K honest members, of which the fuzzer may keep all but
///      one away) and a keeper are always online but lazy: before every time advance of `horizon`
///      seconds, `_keep(horizon)` makes each move or vote that would otherwise miss its deadline,
///      claims every expired clock, draws committees and resolves what is resolvable. Time only
///      advances through `warp` (in TICK steps) and the helpers called by `openGame`, each after a
///      keeper pass, so nothing resolvable waits longer than one jump.
///      Trajectories: the solver's state hash at step t is the committed checkpoint
///      (`_stateHashes`) at even t and `keccak256("solver", t)` between; the true hash equals it up to
///      `cheatStep` and is `keccak256("truth", jobId, t)` after. The replay function the honest
///      committee computes maps the true hash at t to the true hash at t + 1 and the solver's hash
///      at t to the solver's at t + 1 (it continues from its forged state), so only step
///      `cheatStep` is invalid.
contract DisputeHandler is DisputeHandlerBase {
    ////// Modifiers //////

    /// @notice Records the action's logs for the credit ghosts and syncs the game ghosts.
    modifier tracked() {
        vm.recordLogs();
        _;
        _sync();
        _drainLogs();
    }

    ////// Constructor //////

    constructor() {
        Deploy.Config memory cfg = _testConfig();
        cfg.adjudicator = Deploy.AdjudicatorKind.Bisection;
        cfg.clockSeconds = CLOCK;
        cfg.moveBond = MOVE_BOND;
        cfg.voteCommitWindow = VOTE_COMMIT_WINDOW;
        cfg.voteRevealWindow = VOTE_REVEAL_WINDOW;
        _deploy(cfg);
        _setUpActors();
        _checkpoints = _stateHashes(TOTAL_STEPS, INTERVAL);
        _leaves = Merkle.leaves(INTERVAL, _checkpoints);
        _approveGame(solver);
        for (uint256 i; i < verifierPool.length; ++i) {
            _approveGame(verifierPool[i]);
            _know(verifierPool[i]);
        }
        _know(submitter);
        _know(solver);
        _know(whistleblower);
        _know(stranger);
        _know(address(this)); // admin and treasury: rounding dust of dispute pots
    }

    ////// Actions //////

    /// @notice Posts a job, has it verified so that a dispute opens, and finalizes it into a game.
    /// @custom:property-id D1 D2 D3 D4
    /// @param modeSeed Bit 0: the mode; the rest: who rejects (HonestDefender) or who approves the
    ///        forged sample lazily (HonestChallenger).
    /// @param sampleSeed Rejected samples (HonestDefender) or the forged sample and step.
    function openGame(uint256 modeSeed, uint256 sampleSeed) external tracked {
        _openGame(modeSeed, sampleSeed);
    }

    /// @notice The defender moves now: the honest play (HonestDefender) or the fuzzer's
    ///         (HonestChallenger: at each dissection point the solver's own, the true or an
    ///         arbitrary hash).
    /// @custom:property-id D1 D2
    function defenderMove(uint256 gameSeed, uint256 choice, bytes32 arbitrary) external tracked {
        (uint256 disputeId, Game memory g) = _pickGame(gameSeed, Side.Defender);
        if (disputeId == 0) return;
        if (_plans[g.jobId].mode == Mode.HonestDefender || g.status == GameStatus.AwaitingEndpoints) {
            if (!_defend(disputeId, g)) ++ghost_refusedHonestMoves;
            return;
        }
        uint256 parts = Dissection.parts(g.lo, g.hi, ARITY);
        bytes32[] memory hashes = new bytes32[](parts - 1);
        for (uint256 j = 1; j < parts; ++j) {
            uint256 point = Dissection.point(g.lo, g.hi, parts, j);
            uint256 pick = uint256(keccak256(abi.encode(choice, j))) % 3;
            hashes[j - 1] = pick == 0
                ? _solverHash(point)
                : pick == 1 ? _trueHash(g.jobId, point) : keccak256(abi.encode(arbitrary, j));
        }
        vm.prank(g.defender);
        game.bisect(disputeId, g.lo, g.hi, hashes);
        _posted[disputeId] = hashes;
    }

    /// @notice The challenger moves now: picks the part the fuzzer says (HonestDefender), or the
    ///         part before its first disagreement with the truth (HonestChallenger).
    /// @custom:property-id D1 D2
    function challengerMove(uint256 gameSeed, uint256 index) external tracked {
        (uint256 disputeId, Game memory g) = _pickGame(gameSeed, Side.Challenger);
        if (disputeId == 0) return;
        if (_plans[g.jobId].mode == Mode.HonestChallenger) {
            if (!_respondHonestly(disputeId, g)) ++ghost_refusedHonestMoves;
            return;
        }
        vm.prank(g.challenger);
        game.respond(disputeId, g.lo, g.hi, index % Dissection.parts(g.lo, g.hi, ARITY), _posted[disputeId]);
    }

    /// @notice The challenger hands the whole interval to the committee on its turn (what a
    ///         challenger does when the defender withholds its states, docs/SECURITY.md P-6); the
    ///         honest committee then judges every step of it.
    /// @custom:property-id D1 D2
    function challengerEscalates(uint256 gameSeed) external tracked {
        (uint256 disputeId, Game memory g) = _pickGame(gameSeed, Side.Challenger);
        if (disputeId == 0) return;
        vm.prank(g.challenger);
        game.escalate(disputeId, g.lo, g.hi);
    }

    /// @notice Anyone claims the timeout of a game whose side to move ran out of clock.
    /// @custom:property-id D1 D2
    function claimTimeout(uint256 gameSeed) external tracked {
        uint256 count = _openGames.length;
        for (uint256 i; i < count; ++i) {
            uint256 disputeId = _openGames[(gameSeed % count + i) % count];
            Game memory g = game.getGame(disputeId);
            if (g.turn == Side.None || block.timestamp <= _deadline(g)) continue;
            vm.prank(stranger);
            game.claimTimeout(disputeId);
            return;
        }
    }

    /// @notice One member of a step committee commits or reveals its honest vote now.
    /// @custom:property-id D1 D2
    function vote(uint256 gameSeed, uint256 memberSeed) external tracked {
        uint256 stepId = _pickStep(gameSeed);
        if (stepId == 0) return;
        DisputePhase phase = committee.phaseOf(stepId);
        address[] memory members = committee.committeeOf(stepId);
        bool valid = _honestVote(stepId);
        for (uint256 i; i < members.length; ++i) {
            address member = members[(memberSeed % members.length + i) % members.length];
            if (_absent[stepId][member]) continue;
            (bytes32 commitment, bool revealed,) = committee.ballotOf(stepId, member);
            if (phase == DisputePhase.Commit && commitment == bytes32(0)) return _commitVote(stepId, member, valid);
            if (phase == DisputePhase.Reveal && commitment != bytes32(0) && !revealed) {
                return _revealVote(stepId, member, valid);
            }
        }
    }

    /// @notice A member of a drawn step committee stays away from now on (it is slashed as a
    ///         non-voter); at least one member always votes, so the honest outcome stands. Absent
    ///         members make the step dispute last its full commit and reveal windows.
    /// @custom:property-id D1 D2 D3 D4
    function skipVote(uint256 gameSeed, uint256 memberSeed) external tracked {
        uint256 stepId = _pickStep(gameSeed);
        if (stepId == 0) return;
        address[] memory members = committee.committeeOf(stepId);
        if (members.length == 0 || _absentCount[stepId] + 1 >= members.length) return;
        address member = members[memberSeed % members.length];
        (, bool revealed,) = committee.ballotOf(stepId, member);
        if (_absent[stepId][member] || revealed) return;
        _absent[stepId][member] = true;
        ++_absentCount[stepId];
    }

    /// @notice Draws a step committee, or resolves a step dispute, when allowed.
    /// @custom:property-id D1 D2 D3 D4
    function driveStep(uint256 gameSeed) external tracked {
        uint256 stepId = _pickStep(gameSeed);
        if (stepId == 0) return;
        DisputePhase phase = committee.phaseOf(stepId);
        if (phase == DisputePhase.AwaitingCommittee) _draw(stepId);
        else if (phase == DisputePhase.Resolvable) _resolveStep(stepId);
    }

    /// @notice Lets time pass (the side the fuzzer plays may be stalling), after a keeper pass.
    /// @custom:property-id D1 D2
    function warp(uint256 seconds_) external tracked {
        uint256 left = bound(seconds_, 1, MAX_WARP);
        while (left != 0) {
            uint256 tick = left < TICK ? left : TICK;
            _tick(tick);
            left -= tick;
        }
    }

    /// @notice An account claims its whole credit (JobManager and game alike) at the Escrow.
    /// @custom:property-id D3 D4
    function claimCredit(uint256 accountSeed) external tracked {
        address account = _accounts[accountSeed % _accounts.length];
        uint256 amount = escrow.creditOf(account);
        if (amount == 0) return;
        uint256 before = token.balanceOf(account);
        vm.prank(account);
        escrow.claimCredit();
        if (token.balanceOf(account) - before != amount) ++ghost_claimMismatches;
    }

    ////// End of run //////

    /// @notice Plays every job in dispute to its end: time passes in ticks with keeper passes while
    ///         the fuzzer's side stalls (opens one game first if the run opened none). Called by the
    ///         test's `afterInvariant`, so that every run checks D1-D4 on resolved games.
    /// @dev Loops on the jobs in dispute, not on the open games: a game resolved by a fuzzed call
    ///      (`claimTimeout`, `driveStep`) leaves its job waiting for `finalize` to open the job's
    ///      next game, with no game open until the keeper's next pass.
    /// @custom:property-id D1 D2 D3 D4
    function settle() external tracked {
        if (ghost_games == 0) _openGame(0, 0);
        _playOut();
        // D5 progress: every run plays at least one double-role job to its end.
        if (ghost_doubleRoleJobs == 0) {
            _openGame(uint256(1) << 200, 0);
            _sync();
            _playOut();
        }
    }

    /// @notice Ticks with keeper passes until every job in dispute has ended (see `settle`).
    function _playOut() internal {
        // Each job plays at most samplesPerJob * 2 * verifiersPerJob games one after the other
        // (every challenger of a sample, a rejecter or the whistleblower of an approval, plays its
        // own game until one wins; a loser is closed on the sample in both roles). Here time only moves in TICKs, so by D1 each
        // game resolves within DISPUTE_BOUND + TICK - 1 of its opening, and the keeper pass that
        // resolves it finalizes the job, which opens the next game at once: this many ticks always
        // suffice for correct games.
        uint256 games = uint256(jobManager.params().samplesPerJob) * 2 * jobManager.params().verifiersPerJob;
        uint256 ticks = (games * (DISPUTE_BOUND + TICK - 1)) / TICK + 1;
        for (uint256 i; i < ticks && _liveJobs.length != 0; ++i) {
            _tick(TICK);
        }
        _keep(0);
    }

    ////// Views for the invariant test //////

    /// @notice The deployment under test.
    function deployment() external view returns (VeriToken, JobManager, BisectionGame, ArbitrationCommittee) {
        return (token, jobManager, game, committee);
    }

    /// @notice Games not resolved yet (D1 checks that this matches the game's statuses).
    function openGames() external view returns (uint256[] memory) {
        return _openGames;
    }

    /// @notice Jobs still in dispute (a game open, or a resolved game whose job awaits `finalize`).
    function liveJobs() external view returns (uint256[] memory) {
        return _liveJobs;
    }

    /// @notice Every account that may hold a credit or was paid.
    function accounts() external view returns (address[] memory) {
        return _accounts;
    }

    /// @notice The D1 ghosts of games 1..ghost_games in one call (index = dispute id - 1).
    function gameTimes()
        external
        view
        returns (uint256[] memory openedAt, uint256[] memory stepOpenedAt, uint256[] memory resolvedAt)
    {
        uint256 count = ghost_games;
        openedAt = new uint256[](count);
        stepOpenedAt = new uint256[](count);
        resolvedAt = new uint256[](count);
        for (uint256 i; i < count; ++i) {
            openedAt[i] = ghost_openedAt[i + 1];
            stepOpenedAt[i] = ghost_stepOpenedAt[i + 1];
            resolvedAt[i] = ghost_resolvedAt[i + 1];
        }
    }

    /// @notice The D3 ghosts of `accounts()` in one call.
    /// @return credits Per account: credited by the JobManager, credited by the game, claimed, and
    ///         paid from the Escrow by the JobManager (wei; the StakeManager's are restaked earnings).
    function creditLedger() external view returns (uint256[4][] memory credits) {
        credits = new uint256[4][](_accounts.length);
        for (uint256 i; i < _accounts.length; ++i) {
            address account = _accounts[i];
            credits[i] = [
                ghost_jobManagerCredited[account],
                ghost_gameCredited[account],
                ghost_claimed[account],
                ghost_paid[account]
            ];
        }
    }

    /// @notice D6: what the JobManager gave the solver (paid to its wallet or restaked), and what it
    ///         owes it: REWARD per job that ended Finalized (the solver is no verifier, so it is
    ///         given nothing else; wei).
    function solverPay() external view returns (uint256 paid, uint256 owed) {
        paid = ghost_paid[solver] + ghost_restaked[solver];
        owed = REWARD * ghost_finalizedJobs;
    }

    ////// Internal: opening //////

    /// @notice See `openGame`.
    function _openGame(uint256 modeSeed, uint256 sampleSeed) internal {
        if (_liveJobs.length >= MAX_LIVE_JOBS) return;
        _keep(MAX_JUMP);
        uint256 start = block.timestamp;
        _topUpStakes();
        uint256 jobId = _verifyingJob();
        _liveJobs.push(jobId);
        ghost_jobOpenedAt[jobId] = start;
        (address[] memory verifiers, uint32[] memory segments) = jobManager.getAssignment(jobId);
        uint256 samples = segments.length;
        uint256 all = (uint256(1) << samples) - 1;
        if (modeSeed & 1 == 0 && (modeSeed >> 200) % 3 == 1 && verifiers.length > 1) {
            _plans[jobId] = Plan({mode: Mode.HonestDefender, doubleRole: true, cheatStep: NO_CHEAT});
            ++ghost_doubleRoleJobs;
            address attacker = verifiers[0];
            if (_staked(attacker, Role.Whistleblower) == 0) _stake(attacker, Role.Whistleblower, 100e18);
            _submit(jobId, attacker, all);
            for (uint256 i = 1; i < verifiers.length; ++i) {
                _submit(jobId, verifiers[i], 0);
            }
            for (uint256 t; t < samples; ++t) {
                vm.prank(attacker);
                jobManager.challengeApproval(jobId, t, verifiers[1]);
            }
        } else if (modeSeed & 1 == 0) {
            _plans[jobId] = Plan({mode: Mode.HonestDefender, doubleRole: false, cheatStep: NO_CHEAT});
            // Each verifier rejects a random subset (mostly none); at least one rejects something.
            bool any;
            for (uint256 i; i < verifiers.length; ++i) {
                uint256 mask = (modeSeed >> (1 + 8 * i)) % 4 == 0 ? (sampleSeed >> (8 * i)) & all : 0;
                any = any || mask != 0;
                if (!any && i == verifiers.length - 1) mask = uint256(1) << (sampleSeed % samples);
                _submit(jobId, verifiers[i], mask);
            }
        } else {
            uint256 forged = sampleSeed % samples;
            uint256 cheatStep = uint256(segments[forged]) * INTERVAL + (sampleSeed >> 8) % INTERVAL;
            _plans[jobId] = Plan({mode: Mode.HonestChallenger, doubleRole: false, cheatStep: cheatStep});
            // Every verifier replays honestly except lazy approvers; the last one always rejects.
            for (uint256 i; i < verifiers.length; ++i) {
                bool lazy = i + 1 < verifiers.length && (modeSeed >> (1 + i)) & 3 == 0;
                _submit(jobId, verifiers[i], lazy ? 0 : uint256(1) << forged);
            }
        }
        _passChallengeWindow(jobId);
        _noteJump(start);
        jobManager.finalize(jobId);
    }

    ////// Internal: keeper //////

    /// @notice A keeper pass, then `seconds_` pass and a block is mined.
    function _tick(uint256 seconds_) internal {
        _keep(seconds_);
        uint256 start = block.timestamp;
        vm.warp(start + seconds_);
        vm.roll(block.number + 1);
        _noteJump(start);
    }

    /// @notice Everything due before `horizon` more seconds pass: honest moves and votes whose
    ///         deadline would be missed, expired clocks, committee draws, resolutions, and
    ///         `finalize` of jobs whose game ended with a valid segment (the next game or the end).
    function _keep(uint256 horizon) internal {
        bool progress = true;
        while (progress) {
            progress = false;
            for (uint256 i; i < _openGames.length; ++i) {
                if (_keepGame(_openGames[i], horizon)) progress = true;
            }
            for (uint256 i; i < _liveJobs.length; ++i) {
                Job memory job = jobManager.getJob(_liveJobs[i]);
                if (job.status != JobStatus.Disputed || !_isResolved(game.getGame(job.disputeId).status)) continue;
                jobManager.finalize(_liveJobs[i]);
                progress = true;
            }
            _sync();
        }
        _probeDeadlines();
    }

    /// @notice Counts the games still unresolved past the second by which the keeper, which has just
    ///         tried every allowed call, must have been able to end them.
    function _probeDeadlines() internal {
        for (uint256 i; i < _openGames.length; ++i) {
            uint256 disputeId = _openGames[i];
            uint256 stepOpenedAt = ghost_stepOpenedAt[disputeId];
            uint256 due = stepOpenedAt == 0
                ? ghost_openedAt[disputeId] + 2 * uint256(CLOCK) + 1
                : stepOpenedAt + VOTE_COMMIT_WINDOW + VOTE_REVEAL_WINDOW + 1;
            if (block.timestamp >= due) ++ghost_overdue;
        }
    }

    /// @return acted Whether a call was made.
    function _keepGame(uint256 disputeId, uint256 horizon) internal returns (bool acted) {
        Game memory g = game.getGame(disputeId);
        if (_isResolved(g.status)) return false;
        if (g.turn == Side.None) return _keepStep(g.stepDisputeId, horizon);
        uint256 deadline = _deadline(g);
        if (block.timestamp > deadline) {
            vm.prank(stranger);
            try game.claimTimeout(disputeId) {
                return true;
            } catch {
                ++ghost_refusedResolutions;
                return false;
            }
        }
        if (deadline >= block.timestamp + horizon) return false;
        Mode mode = _plans[g.jobId].mode;
        bool moved;
        if (g.turn == Side.Defender && mode == Mode.HonestDefender) moved = _defend(disputeId, g);
        else if (g.turn == Side.Challenger && mode == Mode.HonestChallenger) moved = _respondHonestly(disputeId, g);
        else return false;
        if (!moved) ++ghost_refusedHonestMoves;
        return moved;
    }

    /// @return acted Whether a call was made.
    function _keepStep(uint256 stepId, uint256 horizon) internal returns (bool acted) {
        DisputePhase phase = committee.phaseOf(stepId);
        if (phase == DisputePhase.AwaitingCommittee) return _draw(stepId);
        if (phase == DisputePhase.Resolvable) return _resolveStep(stepId);
        Dispute memory d = committee.getDispute(stepId);
        bool commit = phase == DisputePhase.Commit && d.commitDeadline < block.timestamp + horizon;
        bool reveal = phase == DisputePhase.Reveal && d.revealDeadline < block.timestamp + horizon;
        if (!commit && !reveal) return false;
        address[] memory members = committee.committeeOf(stepId);
        bool valid = _honestVote(stepId);
        for (uint256 i; i < members.length; ++i) {
            if (_absent[stepId][members[i]]) continue;
            (bytes32 commitment, bool revealed,) = committee.ballotOf(stepId, members[i]);
            if (commit && commitment == bytes32(0)) {
                _commitVote(stepId, members[i], valid);
                acted = true;
            }
            if (reveal && commitment != bytes32(0) && !revealed) {
                _revealVote(stepId, members[i], valid);
                acted = true;
            }
        }
    }

    /// @return resolved Whether `resolve` went through (a refusal is counted for D1).
    function _resolveStep(uint256 stepId) internal returns (bool resolved) {
        try committee.resolve(stepId) {
            resolved = true;
        } catch {
            ++ghost_refusedResolutions;
        }
    }

    /// @notice Mines past the randomness block and draws (a draw that reverts is counted, not
    ///         propagated, so that a stuck dispute shows up in D1 instead of blocking time).
    /// @return drawn Whether the draw went through (or re-anchored its randomness).
    function _draw(uint256 stepId) internal returns (bool drawn) {
        _topUpStakes();
        uint256 randomnessBlock = committee.getDispute(stepId).randomnessBlock;
        if (block.number <= randomnessBlock) vm.roll(randomnessBlock + 1);
        try committee.drawCommittee(stepId) {
            drawn = true;
        } catch {
            ++ghost_drawFailures;
        }
    }

    ////// Internal: honest play //////

    /// @notice The honest defender's move: the committed endpoints, then the solver's hashes at the
    ///         dissection points.
    /// @return moved Whether the move went through.
    function _defend(uint256 disputeId, Game memory g) internal returns (bool moved) {
        if (g.status == GameStatus.AwaitingEndpoints) {
            bytes32[] memory startProof = Merkle.proof(_leaves, g.segment);
            bytes32[] memory endProof = Merkle.proof(_leaves, uint256(g.segment) + 1);
            vm.prank(g.defender);
            try game.postEndpoints(
                disputeId, _checkpoints[g.segment], _checkpoints[g.segment + 1], startProof, endProof
            ) {
                moved = true;
            } catch {}
        } else {
            uint256 parts = Dissection.parts(g.lo, g.hi, ARITY);
            bytes32[] memory hashes = new bytes32[](parts - 1);
            for (uint256 j = 1; j < parts; ++j) {
                hashes[j - 1] = _solverHash(Dissection.point(g.lo, g.hi, parts, j));
            }
            vm.prank(g.defender);
            try game.bisect(disputeId, g.lo, g.hi, hashes) {
                moved = true;
                _posted[disputeId] = hashes;
            } catch {}
        }
    }

    /// @notice The honest challenger's move: the part before the first point whose posted hash
    ///         (the claimed one at hi) is not the true one.
    /// @return moved Whether the move went through.
    function _respondHonestly(uint256 disputeId, Game memory g) internal returns (bool moved) {
        bytes32[] memory hashes = _posted[disputeId];
        uint256 parts = Dissection.parts(g.lo, g.hi, ARITY);
        uint256 index = parts - 1;
        for (uint256 j = 1; j <= parts; ++j) {
            bytes32 theirs = j == parts ? g.claimedHash : hashes[j - 1];
            if (theirs != _trueHash(g.jobId, Dissection.point(g.lo, g.hi, parts, j))) {
                index = j - 1;
                break;
            }
        }
        vm.prank(g.challenger);
        try game.respond(disputeId, g.lo, g.hi, index, hashes) {
            moved = true;
        } catch {}
    }

    /// @notice An honest member's vote: whether replaying the claimed steps (one, or an escalated
    ///         interval) from the start hash gives the defender's end hash.
    function _honestVote(uint256 stepId) internal view returns (bool) {
        StepClaim memory claim = committee.stepClaimOf(stepId);
        uint256 jobId = committee.getDispute(stepId).jobId;
        bytes32 stateHash = claim.startHash;
        for (uint256 t = claim.step; t < uint256(claim.step) + claim.steps; ++t) {
            stateHash = _replay(jobId, stateHash, t);
        }
        return stateHash == claim.claimedEndHash;
    }

    /// @notice The solver's state hash at `step`.
    function _solverHash(uint256 step) internal view returns (bytes32) {
        if (step % INTERVAL == 0) return _checkpoints[step / INTERVAL];
        return keccak256(abi.encode("solver", step));
    }

    /// @notice The true state hash at `step` of job `jobId`.
    function _trueHash(uint256 jobId, uint256 step) internal view returns (bytes32) {
        uint256 cheatStep = _plans[jobId].cheatStep;
        if (cheatStep == NO_CHEAT || step <= cheatStep) return _solverHash(step);
        return keccak256(abi.encode("truth", jobId, step));
    }

    /// @notice The training step function: the state after `step` from the state `stateHash`.
    function _replay(uint256 jobId, bytes32 stateHash, uint256 step) internal view returns (bytes32) {
        if (stateHash == _trueHash(jobId, step)) return _trueHash(jobId, step + 1);
        // Past the forged step the solver's states differ from the true ones and follow each other.
        if (stateHash == _solverHash(step)) return _solverHash(step + 1);
        return keccak256(abi.encode(stateHash, step));
    }
}
