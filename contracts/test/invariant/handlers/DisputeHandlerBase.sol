// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

// Testing
import {Vm} from "@prb/test/Vm.sol";
import {Deployers} from "../../utils/Deployers.sol";
// Contracts
import {BisectionGame} from "../../../src/BisectionGame.sol";
// Interfaces
import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {IBisectionGame} from "../../../src/interfaces/IBisectionGame.sol";
import {IEscrow} from "../../../src/interfaces/IEscrow.sol";
import {IStakeManager} from "../../../src/interfaces/IStakeManager.sol";
// Types
import {Bucket} from "../../../src/types/EscrowTypes.sol";
import {Game, GameStatus, Side} from "../../../src/types/BisectionTypes.sol";
import {JobStatus} from "../../../src/types/JobTypes.sol";
import {Role} from "../../../src/types/Role.sol";

/// @title DisputeHandlerBase
/// @notice The state, ghosts and helpers of `DisputeHandler` (its actions, keeper and honest play
///         live there): the modes, the game and job bookkeeping, the ghosts of properties D1-D6
///         (PROPERTIES.md) and how they are synced from the chain and its logs.
abstract contract DisputeHandlerBase is Deployers {
    ////// Types //////

    /// @notice Which side of a job's disputes plays honestly.
    enum Mode {
        HonestDefender,
        HonestChallenger
    }

    /// @notice How the handler plays a job.
    /// @param doubleRole HonestDefender only: the job's first verifier is also a whistleblower; it
    ///        rejects every sample and challenges the second verifier's approval of every sample
    ///        (P-22, P-23), then plays (or throws) its games as the fuzzer picks.
    struct Plan {
        Mode mode;
        bool doubleRole;
        uint256 cheatStep;
    }

    ////// Constants //////

    /// @notice Chess clock per side (seconds).
    uint64 public constant CLOCK = 4 hours;
    /// @notice Step committee commit and reveal windows (seconds).
    uint64 public constant VOTE_COMMIT_WINDOW = 1 hours;
    uint64 public constant VOTE_REVEAL_WINDOW = 1 hours;
    /// @notice Bond per move (wei).
    uint256 public constant MOVE_BOND = 1e18;
    /// @notice Longest `warp` the fuzzer may ask for (seconds).
    uint256 public constant MAX_WARP = 3 hours;
    /// @notice `warp` advances time in ticks of at most this many seconds with a keeper pass before
    ///         each, so that lazy honest parties act close to their deadlines.
    uint256 public constant TICK = 30 minutes;
    /// @notice Longest single time advance between two keeper passes (seconds): a `warp` tick, or
    ///         the verdict and challenge windows that `openGame` passes with the Deployers helpers.
    uint256 public constant MAX_JUMP = 6 hours;
    /// @notice Latest second, counted from `openDispute`, at which a call that resolves the game
    ///         (`claimTimeout` or the step committee's `resolve`) must succeed, from the contracts:
    ///         - clocks: only the side to move spends time and a move at `turnStartedAt + clock` is
    ///           still on time, so the bisection phase lasts at most 2 * CLOCK; a timeout is
    ///           claimable from the next second (`block.timestamp > deadline`);
    ///         - the step dispute opens in the same transaction as the last move; its committee can
    ///           be drawn once one block is mined (`block.number > randomnessBlock`, no time);
    ///           `drawCommittee` sets commitDeadline = now + VOTE_COMMIT_WINDOW and revealDeadline =
    ///           commitDeadline + VOTE_REVEAL_WINDOW (or sooner once everyone committed); `resolve`
    ///           succeeds once every member revealed or from revealDeadline + 1.
    uint256 public constant DISPUTE_BOUND = 2 * uint256(CLOCK) + VOTE_COMMIT_WINDOW + VOTE_REVEAL_WINDOW + 1;
    uint256 internal constant NO_CHEAT = type(uint256).max;
    /// @notice The game's dissection arity (`BisectionGame.DISSECTION_ARITY`).
    uint256 internal constant ARITY = 8;
    /// @notice Jobs in dispute at once (enough for overlapping games, few enough for free stakes).
    uint256 internal constant MAX_LIVE_JOBS = 3;

    ////// State //////

    /// @notice Solver's committed checkpoints (state hashes at steps 0, k, 2k, ...) and their leaves.
    bytes32[] internal _checkpoints;
    bytes32[] internal _leaves;
    /// @notice Jobs opened by the handler and still in dispute.
    uint256[] internal _liveJobs;
    mapping(uint256 jobId => Plan plan) internal _plans;
    /// @notice The hashes of each game's last bisection (what its `Bisected` log carries).
    mapping(uint256 disputeId => bytes32[] hashes) internal _posted;
    /// @notice Games not resolved yet.
    uint256[] internal _openGames;
    /// @notice Step committee members that stay away (never commit or reveal).
    mapping(uint256 stepId => mapping(address member => bool absent)) internal _absent;
    mapping(uint256 stepId => uint256 count) internal _absentCount;
    /// @notice Every account that can hold a credit or be paid (the cast, the admin and any account
    ///         credited or paid).
    address[] internal _accounts;
    mapping(address account => bool known) internal _known;

    /// @custom:property-id D1 Timestamp at which each game was opened and resolved (0: not yet).
    mapping(uint256 disputeId => uint256 timestamp) public ghost_openedAt;
    mapping(uint256 disputeId => uint256 timestamp) public ghost_resolvedAt;
    /// @custom:property-id D1 Games seen (ids 1..ghost_games).
    uint256 public ghost_games;
    /// @custom:property-id D1 Timestamp at which each game handed its last step to the committee.
    mapping(uint256 disputeId => uint256 timestamp) public ghost_stepOpenedAt;
    /// @custom:property-id D1 Longest single time advance between two keeper passes.
    uint256 public ghost_maxJump;
    /// @custom:property-id D1 Games whose bisection phase (open to step dispute) outlasted 2 * CLOCK.
    uint256 public ghost_slowBisections;
    /// @custom:property-id D1 Games found unresolved by a keeper pass, after it tried everything,
    ///         at or after the second the contracts must let them end: openedAt + 2 * CLOCK + 1 in
    ///         the bisection phase, stepOpenedAt + VOTE_COMMIT_WINDOW + VOTE_REVEAL_WINDOW + 1 after.
    uint256 public ghost_overdue;
    /// @custom:property-id D1 Committee draws that reverted (a step dispute that cannot be drawn).
    uint256 public ghost_drawFailures;
    /// @custom:property-id D1 Resolving calls (`claimTimeout` on an expired clock, `resolve` of a
    ///         Resolvable step dispute) that reverted.
    uint256 public ghost_refusedResolutions;
    /// @custom:property-id D2 Honest moves made in time that reverted.
    uint256 public ghost_refusedHonestMoves;
    /// @notice Resolved games, by timeout and by the step committee.
    uint256 public ghost_resolved;
    uint256 public ghost_resolvedByTimeout;
    uint256 public ghost_resolvedByStep;
    /// @custom:property-id D2 Games played per mode, and games the honest side lost.
    uint256 public ghost_honestDefenderGames;
    uint256 public ghost_honestChallengerGames;
    uint256 public ghost_honestDefenderLosses;
    uint256 public ghost_honestChallengerLosses;
    /// @custom:property-id D3 Credits booked at the Escrow (its `Credited` events) per protocol
    ///                     contract and account, and claimed (`CreditClaimed`) per account.
    mapping(address account => uint256 amount) public ghost_jobManagerCredited;
    mapping(address account => uint256 amount) public ghost_gameCredited;
    mapping(address account => uint256 amount) public ghost_claimed;
    /// @custom:property-id D3 Move bonds the game announced (`GameResolved`) and the bonds it
    ///                     credited at the Escrow; they must match.
    uint256 public ghost_gameAnnouncedBonds;
    /// @custom:property-id D3 Claims whose token transfer differed from the credit claimed.
    uint256 public ghost_claimMismatches;
    /// @custom:property-id D3 Amounts the JobManager paid from the Escrow (its `Paid` events: a job
    ///                     end's earnings to the StakeManager; a forced-error winner's bond and
    ///                     jackpot to a wallet, but this suite draws no forced error).
    mapping(address account => uint256 amount) public ghost_paid;
    /// @custom:property-id D3 Earnings restaked per account (the StakeManager's `StakesRestaked`: a
    ///                     solver's reward, a seat's fee), and their total, which must equal what the
    ///                     Escrow paid the StakeManager.
    mapping(address account => uint256 amount) public ghost_restaked;
    uint256 public ghost_restakedTotal;
    /// @custom:property-id D3 `Paid` events not made by the JobManager (the game only credits), or
    ///                     not carried by the token transfer of exactly that amount from the Escrow
    ///                     to that account just before it.
    uint256 public ghost_payMismatches;
    /// @custom:property-id D4 Tokens that left the Escrow (the token's `Transfer` events from it):
    ///                     they must be exactly the claims plus the payments.
    uint256 public ghost_escrowOutflow;
    /// @custom:property-id D5 When each job was opened (before its verdicts).
    mapping(uint256 jobId => uint256 timestamp) public ghost_jobOpenedAt;
    /// @custom:property-id D5 Jobs that left their dispute for a terminal state, and those of them
    ///                     that did so later than `jobBound()` after opening.
    uint256 public ghost_terminalJobs;
    uint256 public ghost_lateJobs;
    /// @custom:property-id D5 Jobs opened with a double-role attacker (verifier and whistleblower),
    ///                     and those of them that reached a terminal state.
    uint256 public ghost_doubleRoleJobs;
    uint256 public ghost_doubleRoleTerminal;
    /// @custom:property-id D6 Jobs of an honest solver (HonestDefender) that did not end Finalized.
    uint256 public ghost_honestSolverNotPaid;
    /// @custom:property-id D6 Jobs that ended Finalized (each restakes REWARD for its solver).
    uint256 public ghost_finalizedJobs;

    ////// Bounds //////

    /// @notice The longest a job of the handler may take from opening to a terminal state (D5):
    ///         the opening (one jump), then at most samplesPerJob * 2 * verifiersPerJob games one
    ///         after the other (each game closes its loser on its sample in both roles, so a sample
    ///         sees one game per distinct challenger: V rejecters and V whistleblowers at most),
    ///         each resolved within DISPUTE_BOUND + MAX_JUMP - 1 (D1), the next one opened by the
    ///         keeper pass that finalizes the job, before time moves.
    function jobBound() public view returns (uint256) {
        uint256 games = uint256(jobManager.params().samplesPerJob) * 2 * jobManager.params().verifiersPerJob;
        return MAX_JUMP + games * (DISPUTE_BOUND + MAX_JUMP);
    }

    ////// Internal: ghosts //////

    /// @notice Records newly opened and newly resolved games at the current timestamp. Called after
    ///         every call that can open or resolve one and before every time advance.
    function _sync() internal {
        uint256 count = game.gameCount();
        for (uint256 disputeId = ghost_games + 1; disputeId <= count; ++disputeId) {
            ghost_openedAt[disputeId] = block.timestamp;
            _openGames.push(disputeId);
            if (_plans[game.getGame(disputeId).jobId].mode == Mode.HonestDefender) ++ghost_honestDefenderGames;
            else ++ghost_honestChallengerGames;
        }
        ghost_games = count;
        for (uint256 i; i < _liveJobs.length;) {
            uint256 jobId = _liveJobs[i];
            JobStatus status = jobManager.getJob(jobId).status;
            if (status == JobStatus.Disputed) {
                ++i;
                continue;
            }
            ++ghost_terminalJobs;
            if (block.timestamp - ghost_jobOpenedAt[jobId] > jobBound()) ++ghost_lateJobs;
            Plan storage plan = _plans[jobId];
            if (plan.doubleRole) ++ghost_doubleRoleTerminal;
            if (status == JobStatus.Finalized) ++ghost_finalizedJobs;
            if (plan.mode == Mode.HonestDefender && status != JobStatus.Finalized) ++ghost_honestSolverNotPaid;
            _liveJobs[i] = _liveJobs[_liveJobs.length - 1];
            _liveJobs.pop();
        }
        for (uint256 i; i < _openGames.length;) {
            uint256 disputeId = _openGames[i];
            Game memory g = game.getGame(disputeId);
            if (g.stepDisputeId != 0 && ghost_stepOpenedAt[disputeId] == 0) {
                ghost_stepOpenedAt[disputeId] = block.timestamp;
                if (block.timestamp - ghost_openedAt[disputeId] > 2 * uint256(CLOCK)) ++ghost_slowBisections;
            }
            if (!_isResolved(g.status)) {
                ++i;
                continue;
            }
            ghost_resolvedAt[disputeId] = block.timestamp;
            ++ghost_resolved;
            if (g.stepDisputeId == 0) ++ghost_resolvedByTimeout;
            else ++ghost_resolvedByStep;
            bool defenderWon = g.status == GameStatus.DefenderWon;
            Mode mode = _plans[g.jobId].mode;
            if (mode == Mode.HonestDefender && !defenderWon) ++ghost_honestDefenderLosses;
            if (mode == Mode.HonestChallenger && defenderWon) ++ghost_honestChallengerLosses;
            _openGames[i] = _openGames[_openGames.length - 1];
            _openGames.pop();
        }
    }

    /// @notice Books the credits, claims and payments of the action's events: Escrow `Credited`
    ///         (per protocol contract), `CreditClaimed` and `Paid` (each checked against the token
    ///         transfer just before it), the token's transfers out of the Escrow, and
    ///         BisectionGame `GameResolved` (the winner is credited `bonds`) and `MoveBondsRefunded`
    ///         (each side its unplayed prepaid bonds), which the Escrow's `Credited` from the game
    ///         must match.
    function _drainLogs() internal {
        Vm.Log[] memory logs = vm.getRecordedLogs();
        for (uint256 i; i < logs.length; ++i) {
            Vm.Log memory log = logs[i];
            if (log.topics.length == 0) continue;
            bytes32 topic = log.topics[0];
            if (log.emitter == address(token) && topic == IERC20.Transfer.selector) {
                if (_topicAddress(log.topics[1]) == address(escrow)) {
                    ghost_escrowOutflow += abi.decode(log.data, (uint256));
                }
            } else if (log.emitter == address(escrow) && topic == IEscrow.Paid.selector) {
                address account = _topicAddress(log.topics[2]);
                (, uint256 amount) = abi.decode(log.data, (Bucket, uint256));
                ghost_paid[account] += amount;
                _know(account);
                if (_topicAddress(log.topics[1]) != address(jobManager) || !_isTransferOut(logs, i, account, amount)) {
                    ++ghost_payMismatches;
                }
            } else if (log.emitter == address(stakeManager) && topic == IStakeManager.StakesRestaked.selector) {
                (address[] memory accounts,, uint256[] memory earned) =
                    abi.decode(log.data, (address[], uint256[], uint256[]));
                for (uint256 j; j < accounts.length; ++j) {
                    uint256 amount = earned.length == 1 ? earned[0] : earned[j];
                    ghost_restaked[accounts[j]] += amount;
                    ghost_restakedTotal += amount;
                }
            } else if (log.emitter == address(escrow)) {
                if (topic == IEscrow.Credited.selector) {
                    address protocol = _topicAddress(log.topics[1]);
                    address account = _topicAddress(log.topics[2]);
                    (, uint256 amount) = abi.decode(log.data, (Bucket, uint256));
                    if (protocol == address(game)) ghost_gameCredited[account] += amount;
                    else ghost_jobManagerCredited[account] += amount;
                    _know(account);
                } else if (topic == IEscrow.CreditClaimed.selector) {
                    ghost_claimed[_topicAddress(log.topics[1])] += abi.decode(log.data, (uint256));
                }
            } else if (log.emitter == address(game) && topic == IBisectionGame.GameResolved.selector) {
                (,, uint256 bonds) = abi.decode(log.data, (bool, address, uint256));
                ghost_gameAnnouncedBonds += bonds;
            } else if (log.emitter == address(game) && topic == IBisectionGame.MoveBondsRefunded.selector) {
                (uint256 defenderRefund, uint256 challengerRefund) = abi.decode(log.data, (uint256, uint256));
                ghost_gameAnnouncedBonds += defenderRefund + challengerRefund;
            }
        }
    }

    function _noteJump(uint256 start) internal {
        uint256 jump = block.timestamp - start;
        if (jump > ghost_maxJump) ghost_maxJump = jump;
    }

    ////// Internal: helpers //////

    function _approveGame(address account) internal {
        vm.prank(account);
        token.approve(address(escrow), type(uint256).max);
    }

    /// @notice Keeps the solver and the verifiers able to take jobs and committee seats (losers are
    ///         slashed; an empty verifier set would stall the step committee, which is not what D1
    ///         is about).
    function _topUpStakes() internal {
        if (stakeManager.freeStake(solver, Role.Solver) < 300e18) _stake(solver, Role.Solver, 500e18);
        for (uint256 i; i < verifierPool.length; ++i) {
            if (stakeManager.freeStake(verifierPool[i], Role.Verifier) < 300e18) {
                _stake(verifierPool[i], Role.Verifier, 500e18);
            }
        }
    }

    function _know(address account) internal {
        if (_known[account]) return;
        _known[account] = true;
        _accounts.push(account);
    }

    /// @notice An open game whose side to move is `side` with clock left, starting at `seed`.
    function _pickGame(uint256 seed, Side side) internal view returns (uint256 disputeId, Game memory g) {
        uint256 count = _openGames.length;
        for (uint256 i; i < count; ++i) {
            disputeId = _openGames[(seed % count + i) % count];
            g = game.getGame(disputeId);
            if (g.turn == side && block.timestamp <= _deadline(g)) return (disputeId, g);
        }
        return (0, g);
    }

    /// @notice The step dispute of an open game waiting for it, starting at `seed` (0 if none).
    function _pickStep(uint256 seed) internal view returns (uint256 stepId) {
        uint256 count = _openGames.length;
        for (uint256 i; i < count; ++i) {
            Game memory g = game.getGame(_openGames[(seed % count + i) % count]);
            if (g.status == GameStatus.AwaitingStep) return g.stepDisputeId;
        }
    }

    /// @notice Last second the side to move may move at.
    function _deadline(Game memory g) internal pure returns (uint256) {
        return uint256(g.turnStartedAt) + (g.turn == Side.Defender ? g.defenderClock : g.challengerClock);
    }

    function _isResolved(GameStatus status) internal pure returns (bool) {
        return status == GameStatus.DefenderWon || status == GameStatus.ChallengerWon;
    }

    /// @notice Whether the log just before `logs[index]` is the token's transfer of `amount` from
    ///         the Escrow to `account` (what `Escrow.pay` does right before it emits `Paid`).
    function _isTransferOut(Vm.Log[] memory logs, uint256 index, address account, uint256 amount)
        internal
        view
        returns (bool)
    {
        if (index == 0) return false;
        Vm.Log memory log = logs[index - 1];
        return log.emitter == address(token) && log.topics.length == 3 && log.topics[0] == IERC20.Transfer.selector
            && _topicAddress(log.topics[1]) == address(escrow) && _topicAddress(log.topics[2]) == account
            && abi.decode(log.data, (uint256)) == amount;
    }

    function _topicAddress(bytes32 topic) internal pure returns (address) {
        return address(uint160(uint256(topic)));
    }
}
