// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

// Testing
import {Vm} from "@prb/test/Vm.sol";
import {Bound} from "../../utils/Bound.sol";
import {ClaimsBook} from "../../utils/ClaimsBook.sol";
// Contracts
import {ArbitrationCommittee} from "../../../src/ArbitrationCommittee.sol";
import {Escrow} from "../../../src/Escrow.sol";
import {JobManager} from "../../../src/JobManager.sol";
import {StakeManager} from "../../../src/StakeManager.sol";
import {VeriToken} from "../../../src/VeriToken.sol";
import {VerificationRound} from "../../../src/VerificationRound.sol";
// Interfaces
import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {IJobManager} from "../../../src/interfaces/IJobManager.sol";
// Types
import {Dispute, DisputePhase} from "../../../src/types/DisputeTypes.sol";
import {Job, JobStatus, Verdict} from "../../../src/types/JobTypes.sol";
import {Role} from "../../../src/types/Role.sol";
import {LibSubmission, SubmissionId} from "../../../src/types/SubmissionId.sol";
import {roundHash} from "../../../src/types/RoundWord.sol";

/// @title ProtocolHandlerBase
/// @notice What `ProtocolHandler`'s actions share: the deployment, the cast of actors (each with a
///         private key, so a seat can sign its EIP-712 seal for a batch), the ghost variables of the
///         protocol invariants, and the checks that update them (P2 slashes, P5 forced errors, P9
///         expiries) from the logs of each call; P12's payout check is `ProtocolHandlerPayouts`.
abstract contract ProtocolHandlerBase is Bound, ClaimsBook {
    ////// Constants //////

    Vm internal constant vm = Vm(address(uint160(uint256(keccak256("hevm cheat code")))));
    bytes32 internal constant STAKE_SLASHED = keccak256("StakeSlashed(address,uint8,uint256,uint256,address)");
    bytes32 internal constant MODEL_ID = keccak256("digits-mlp");
    /// @notice State hash of the spec's seed-initialised state of every job the handler posts.
    bytes32 internal constant INIT_HASH = keccak256("handler initial state");
    /// @notice Most `advance` calls `settle` makes.
    uint256 internal constant MAX_SETTLE_STEPS = 1500;
    /// @notice The griefer's sealed "mask": a zero end on every sample (an abstention, P-20, P-33).
    uint256 internal constant ABSTAIN_ALL = type(uint256).max;

    ////// State //////

    VeriToken public token;
    StakeManager public stakeManager;
    JobManager public jobManager;
    Escrow public escrow;
    ArbitrationCommittee public committee;
    VerificationRound public round;
    /// @notice True inside `settle`: solvers always post claims and reveal their secret there.
    bool internal _settling;

    address[] public actors;
    address[] public submitters;
    address[] public solvers;
    address[] public verifiers;
    address[] public whistleblowers;

    /// @notice Accounts allowed to be slashed by the call in progress (role-qualified).
    mapping(address account => mapping(Role role => bool allowed)) internal _slashable;
    address[] internal _slashableList;

    /// @notice State hashes of checkpoints 0..N/k each job's solver committed.
    mapping(uint256 jobId => bytes32[] states) internal _states;
    /// @notice Reject mask each verifier sealed, for its reveal.
    mapping(uint256 jobId => mapping(address verifier => uint256 mask)) internal _sealed;
    /// @notice Seats proven to have signed two seals for the submission (`proveEquivocation`): never
    ///         slashed again, paid or a forced-error winner on it (P14).
    mapping(SubmissionId submissionId => mapping(address verifier => bool voided)) internal _voided;

    /// @notice A seat that never seals (P-34: a silent accomplice) and one that abstains on every
    ///         sample it draws (P-33: a griefer); both are verifiers of the pool.
    address public silentSeat;
    address public griefer;
    /// @notice Samples of a job a committee ruled on (P9).
    mapping(uint256 jobId => mapping(uint256 sampleIndex => bool ruled)) internal _ruled;

    /// @notice Vote each member chose, for its reveal.
    mapping(uint256 disputeId => mapping(address member => bool segmentValid)) internal _votes;

    /// @custom:property-id P2 Slashes not explained by a lost verdict, challenge, commit or vote.
    uint256 public ghost_unjustifiedSlashes;
    /// @custom:property-id P2 Slashes seen.
    uint256 public ghost_slashes;
    /// @custom:property-id P5 Forced errors settled (finalize with outcome Forced).
    uint256 public ghost_forcedErrors;
    /// @custom:property-id P5 Approvers of a forced error that kept their stake.
    uint256 public ghost_forcedApproverNotSlashed;
    /// @custom:property-id P5 Rejecters of a forced error that lost stake in its settlement.
    uint256 public ghost_forcedRejecterSlashed;
    /// @custom:property-id P5 Rejecters and whistleblowers of a forced error not paid bond + jackpot
    ///                     (capped by the pool).
    uint256 public ghost_forcedWinnerUnpaid;
    /// @custom:property-id P5 Rejecters of a forced error whose sealed end was not the solver's
    ///                     true end, left without a dispute on the sample.
    uint256 public ghost_forcedMismatchUndisputed;
    /// @custom:property-id P6 Rejecters of a sample a committee ruled valid that kept their reject
    ///                     bond (settlement state keyed by address let a rejecter that was also a
    ///                     paid whistleblower of the sample escape, P-22).
    uint256 public ghost_validRejecterKeptBond;
    /// @custom:property-id P6 Challenges by a verifier of the job (a double role).
    uint256 public ghost_doubleRoleChallenges;
    /// @notice Jobs claimed by their own submitter (a key that is submitter and solver, or owner,
    ///         poster and solver); progress: the invariants held on such jobs too.
    uint256 public ghost_selfDealtClaims;
    /// @custom:property-id P3 Finalize calls that finalized a job (and minted its shares).
    uint256 public ghost_finalizedMints;
    /// @custom:property-id P12 Finalize calls that finalized a job without restaking its solver's
    ///                      reward exactly once (`IStakeManager.StakesRestaked` of the solver,
    ///                      funded by the call's one `IEscrow.Paid` to the StakeManager), and
    ///                      finalize or resolve calls that gave the solver anything else.
    uint256 public ghost_rewardNotPaid;
    /// @custom:property-id P12 Payouts that are neither the job end's one transfer to the
    ///                      StakeManager (from the Escrowed bucket, of exactly the earnings the call
    ///                      restakes: the solver's reward, each seat's fee, a catching seat's fee
    ///                      and jackpot when the settlement finalizes the job) nor a forced-error
    ///                      winner's bond and jackpot (from the Bonds and Jackpot buckets, in a
    ///                      finalize that settled the job's forced error, to one of its winners,
    ///                      right after the `JackpotPaid` for that account and of exactly the bond
    ///                      and that jackpot), restakes to an account that is no party of the job or
    ///                      of another amount, or payments not carried by the token transfer of
    ///                      exactly that amount just before.
    uint256 public ghost_payoutMisrouted;
    /// @custom:property-id P12 Forced-error winners (a rejecter of the forced claim whose sealed end
    ///                      is the true end, a whistleblower of an approval of it) that the finalize
    ///                      settling the forced error did not pay (`JackpotPaid`): a whistleblower
    ///                      its bond and jackpot to its wallet, a catching seat its jackpot
    ///                      (restaked with its fee when the job finalizes there).
    uint256 public ghost_winnerNotPaid;
    /// @custom:property-id P12 Forced-error winners paid (a whistleblower's bond to its wallet, a
    ///                      catch's jackpot; progress of the path).
    uint256 public ghost_winnersPaid;
    /// @custom:property-id P12 Rewards restaked for a solver (progress).
    uint256 public ghost_rewardsPaid;
    /// @custom:property-id P9 Jobs that expired with a seat's revealed reject of a sample no ruling
    ///                     judged (P-34: expiry never forgives a revealed reject).
    uint256 public ghost_unjudgedRejectExpired;
    /// @custom:property-id P9 Jobs expired after verifiers were drawn (progress of the new surface).
    uint256 public ghost_expiredAfterDraw;
    /// @custom:property-id P10 Batch senders (`commitVerdictsFor`, `revealVerdictsFor`) whose tokens or
    ///                      Escrow credit moved in the call (each rejecting seat's bond is its own).
    uint256 public ghost_batchSenderCharged;
    /// @custom:property-id P10 Seats whose seal or reveal a batch did not leave as the seat signed
    ///                      or sealed it: a fresh seal other than the signed commitment, a seal
    ///                      that was already there replaced, a batch-revealed seat left unrevealed,
    ///                      or a seat that could not cover its bonds revealed (P-38).
    uint256 public ghost_batchSeatMisrecorded;
    /// @custom:property-id P11 Seats slashed by a ruling that found their sample invalid, where their
    ///                      approval of it was fetch-only (docs/SECURITY.md P-39: one seat fetches the
    ///                      last sample's final state, vouching for its availability only).
    uint256 public ghost_fetchOnlyApproverSlashed;
    /// @custom:property-id P11 Fetch-only approvals of a sample a ruling found invalid (progress).
    uint256 public ghost_fetchOnlyInvalidRulings;
    /// @notice Each actor's private key (`vm.addr(key)` is the actor), for its EIP-712 seals.
    mapping(address account => uint256 key) internal _keyOf;
    /// @notice Successful calls per action, to check the handler reaches deep states.
    mapping(bytes32 action => uint256 count) public ghost_calls;

    ////// Helpers //////

    /// @notice P5 on the logs of a finalize that settled a forced error on sample `f`: every approver
    ///         of the forced claim is slashed; no rejecter is; a rejecter that sealed the true end (a
    ///         replay) is paid bond + jackpot; one that sealed another end keeps `f` disputed.
    function _checkForced(
        uint256 jobId,
        uint256 f,
        address[] memory assigned,
        Verdict[] memory verdictsBefore,
        Vm.Log[] memory logs,
        uint256[] memory ownedBefore,
        uint256 poolBefore
    ) internal {
        ++ghost_forcedErrors;
        uint256 jackpot = jobManager.params().jackpot;
        // Every rejecter is owed a full jackpot when the pool held one per verifier before (its
        // reject bond is stake: unlocked, not paid).
        if (poolBefore < jackpot * assigned.length) jackpot = 0;
        for (uint256 i; i < assigned.length; ++i) {
            bool slashed = _slashedIn(logs, assigned[i], Role.Verifier);
            if (verdictsBefore[i] == Verdict.Approve && !slashed) ++ghost_forcedApproverNotSlashed;
            if (verdictsBefore[i] != Verdict.Reject) continue;
            if (slashed) ++ghost_forcedRejecterSlashed;
            uint256 owned = _worth(assigned[i]);
            uint256 gained = owned > ownedBefore[i] ? owned - ownedBefore[i] : 0;
            _checkForcedRejecter(jobId, f, assigned[i], gained, jackpot);
        }
    }

    /// @notice Locks all of `seat`'s free verifier stake, as if other seats of it had taken it, so
    ///         that it cannot cover a reject bond (P-38); `_restoreFreeStake` undoes it.
    /// @return hidden The stake locked (wei).
    function _hideFreeStake(address seat) internal returns (uint256 hidden) {
        hidden = stakeManager.freeStake(seat, Role.Verifier);
        vm.prank(address(jobManager));
        stakeManager.lock(seat, Role.Verifier, hidden);
    }

    /// @notice Unlocks what `_hideFreeStake` locked.
    function _restoreFreeStake(address seat, uint256 hidden) internal {
        vm.prank(address(jobManager));
        stakeManager.unlock(seat, Role.Verifier, hidden);
    }

    /// @notice What `account` owns outside the StakeManager (wei): its wallet plus its Escrow credit.
    function _owned(address account) internal view returns (uint256) {
        return token.balanceOf(account) + escrow.creditOf(account);
    }

    /// @notice What a seat `account` has gained in (wei): its wallet, its Escrow credit and its
    ///         verifier stake (staked + unbonding). P5 measures a rejecter's gain in it: its fee and
    ///         its jackpot are restaked when the job finalizes in the settlement (P12 checks how),
    ///         paid to the wallet when a sample stays disputed, and its bond is stake, unlocked.
    function _worth(address account) internal view returns (uint256) {
        (uint256 staked,, uint256 unbonding,) = stakeManager.stakeOf(account, Role.Verifier);
        return _owned(account) + staked + unbonding;
    }

    /// @notice P5 for a rejecter of forced sample `f` paid `paid` (wallet plus credit) at its
    ///         settlement: one that sealed the true end (a replay) is paid `owed`; one that sealed
    ///         another end keeps `f` disputed.
    function _checkForcedRejecter(uint256 jobId, uint256 f, address verifier, uint256 paid, uint256 owed) internal {
        (, uint32[] memory segments) = jobManager.getAssignment(jobId);
        bytes32 trueEnd = _states[jobId][segments[f] + 1];
        if (_ends(jobId, segments, _sealed[jobId][verifier])[f] != trueEnd) {
            // Its end challenges the solver's: the sample must stay disputed.
            if ((jobManager.disputedMaskOf(jobId) >> f) & 1 == 0) ++ghost_forcedMismatchUndisputed;
        } else if (paid < owed) {
            ++ghost_forcedWinnerUnpaid;
        }
    }

    /// @notice The job's verifiers that reject sample `sampleIndex` (before the ruling).
    function _rejectersOf(uint256 jobId, uint256 sampleIndex) internal view returns (address[] memory out) {
        (address[] memory assigned,) = jobManager.getAssignment(jobId);
        out = new address[](assigned.length);
        uint256 count;
        for (uint256 i; i < assigned.length; ++i) {
            Verdict[] memory verdicts = jobManager.verdictOf(jobId, assigned[i]);
            if (verdicts.length > sampleIndex && verdicts[sampleIndex] == Verdict.Reject) out[count++] = assigned[i];
        }
        assembly ("memory-safe") {
            mstore(out, count)
        }
    }

    /// @notice The seats of `jobId` whose approval of `sampleIndex` is fetch-only (P-39), leaving out
    ///         the members of `disputeId`'s committee that did not reveal a vote (slashed for that).
    function _fetchOnlyApprovers(uint256 jobId, uint256 sampleIndex, uint256 disputeId)
        internal
        view
        returns (address[] memory out)
    {
        (address[] memory assigned,) = jobManager.getAssignment(jobId);
        address[] memory members = committee.committeeOf(disputeId);
        out = new address[](assigned.length);
        uint256 count;
        for (uint256 i; i < assigned.length; ++i) {
            address seat = assigned[i];
            if (jobManager.verdictOf(jobId, seat)[sampleIndex] != Verdict.Approve) continue;
            if ((round.fetchOnlyMaskOf(_sid(jobId), seat) >> sampleIndex) & 1 == 0) continue;
            if (_silentMember(disputeId, members, seat)) continue;
            out[count++] = seat;
        }
        assembly ("memory-safe") {
            mstore(out, count)
        }
    }

    /// @notice Whether `account` is one of `members` of `disputeId`'s committee and revealed no vote.
    function _silentMember(uint256 disputeId, address[] memory members, address account) internal view returns (bool) {
        for (uint256 i; i < members.length; ++i) {
            if (members[i] != account) continue;
            (, bool revealed,) = committee.ballotOf(disputeId, account);
            return !revealed;
        }
        return false;
    }

    /// @notice P11 on the logs of a resolve: when it ruled the sample invalid (`invalid`), no
    ///         fetch-only approver of it (`approvers`, `_fetchOnlyApprovers`) was slashed.
    function _checkFetchOnly(address[] memory approvers, bool invalid, Vm.Log[] memory logs) internal {
        if (!invalid) return;
        for (uint256 i; i < approvers.length; ++i) {
            ++ghost_fetchOnlyInvalidRulings;
            if (_slashedIn(logs, approvers[i], Role.Verifier)) ++ghost_fetchOnlyApproverSlashed;
        }
    }

    /// @notice Whether `logs` hold a `BondForfeited(jobId, account, _)` of the JobManager.
    function _bondForfeitedIn(Vm.Log[] memory logs, uint256 jobId, address account) internal view returns (bool) {
        for (uint256 i; i < logs.length; ++i) {
            Vm.Log memory log = logs[i];
            if (log.emitter != address(jobManager) || log.topics.length < 3) continue;
            if (log.topics[0] != IJobManager.BondForfeited.selector) continue;
            if (uint256(log.topics[1]) == jobId && address(uint160(uint256(log.topics[2]))) == account) return true;
        }
        return false;
    }

    function _slashedIn(Vm.Log[] memory logs, address account, Role role) internal view returns (bool) {
        for (uint256 i; i < logs.length; ++i) {
            if (logs[i].topics.length < 3 || logs[i].topics[0] != STAKE_SLASHED) continue;
            if (_isBondSlash(logs, i)) continue;
            if (address(uint160(uint256(logs[i].topics[1]))) == account && uint256(logs[i].topics[2]) == uint8(role)) {
                return true;
            }
        }
        return false;
    }

    /// @notice Whether every sample has a revealed verdict of a seat whose own draw holds it (the
    ///         secret can be revealed only then, docs/SECURITY.md P-27).
    function _covered(uint256 jobId) internal view returns (bool) {
        (address[] memory assigned, uint32[] memory segments) = jobManager.getAssignment(jobId);
        uint256 covered;
        for (uint256 i; i < assigned.length; ++i) {
            if (_revealed(jobId, assigned[i])) covered |= jobManager.sampleMaskOf(jobId, assigned[i]);
        }
        return covered == (uint256(1) << segments.length) - 1;
    }

    /// @notice Index of the first assigned verifier that has not sealed its verdicts, else of the
    ///         first that has not revealed them (sealing first, so that no reveal cuts the sealing
    ///         phase short); `done` when every one has revealed.
    function _nextVerifier(uint256 jobId) internal view returns (bool done, uint256 index) {
        (address[] memory assigned,) = jobManager.getAssignment(jobId);
        uint256 unrevealed = type(uint256).max;
        for (uint256 i; i < assigned.length; ++i) {
            if (assigned[i] == silentSeat) continue;
            (bytes32 commitment, bool revealed) = round.verdictCommitmentOf(_sid(jobId), assigned[i]);
            if (commitment == bytes32(0) && !revealed && block.timestamp <= jobManager.getJob(jobId).verdictDeadline) {
                return (false, i);
            }
            if (!revealed && commitment != bytes32(0) && unrevealed == type(uint256).max) unrevealed = i;
        }
        if (unrevealed == type(uint256).max) return (true, 0);
        return (false, unrevealed);
    }

    /// @notice Whether `verifier` revealed its sealed verdicts on the job's active submission.
    function _revealed(uint256 jobId, address verifier) internal view returns (bool revealed) {
        (, revealed) = round.verdictCommitmentOf(_sid(jobId), verifier);
    }

    /// @notice The seats of a batch reveal: every sealed seat that has not revealed, and the first
    ///         that has; `count` 0 when none is left to reveal.
    function _toReveal(SubmissionId sid, address[] memory assigned)
        internal
        view
        returns (address[] memory seats, uint256 count)
    {
        seats = new address[](assigned.length);
        bool fresh;
        bool again;
        for (uint256 i; i < assigned.length; ++i) {
            (bytes32 sealed_, bool revealed) = round.verdictCommitmentOf(sid, assigned[i]);
            if (sealed_ == bytes32(0) || (revealed && again)) continue;
            if (revealed) again = true;
            else fresh = true;
            seats[count++] = assigned[i];
        }
        if (!fresh) return (seats, 0);
        assembly ("memory-safe") {
            mstore(seats, count)
        }
    }

    /// @notice The first seat of a batch that has not revealed and whose `ends` reject two of its
    ///         own samples (its reveal locks a bond from free stake); zero if none.
    function _rejectingSeat(uint256 jobId, address[] memory seats, bytes32[][] memory ends)
        internal
        view
        returns (address seat)
    {
        for (uint256 i; i < seats.length; ++i) {
            (,, bool revealed,,) = jobManager.seatOf(_sid(jobId), seats[i]);
            // The first reject's bond is in the seat's lock: only a second one needs free stake.
            if (!revealed && _ownNonApprovals(jobId, seats[i], ends[i]) > 1) return seats[i];
        }
    }

    /// @notice Samples of `seat`'s own draw whose end in `ends` is not the claim: each bonds one
    ///         `challengeBond` (an abstention's zero end too), the first in the seat's lock.
    function _ownNonApprovals(uint256 jobId, address seat, bytes32[] memory ends)
        internal
        view
        returns (uint256 count)
    {
        (, bytes32[] memory claimed) = _claimsOf(_sid(jobId));
        uint256 own = jobManager.sampleMaskOf(jobId, seat);
        for (uint256 j; j < ends.length; ++j) {
            if ((own >> j) & 1 == 1 && ends[j] != claimed[j]) ++count;
        }
    }

    /// @notice Verifier stake a reveal with `rejects` non-approvals of the seat's own samples locks:
    ///         a challengeBond each but the first, which the seat's lock holds since its draw.
    function _revealLock(uint256 rejects) internal view returns (uint256 amount) {
        if (rejects > 1) amount = (rejects - 1) * jobManager.params().challengeBond;
    }

    /// @notice A die roll derived from a fuzzer seed: seeds are often small numbers, so their own
    ///         bits would always pick the same branch.
    function _roll(uint256 seed, string memory what) internal pure returns (uint256) {
        return uint256(keccak256(abi.encode(seed, what)));
    }

    function _revealWindow() internal view returns (uint256) {
        return jobManager.params().revealWindow;
    }

    function _verdictSalt(uint256 jobId, address verifier) internal pure returns (bytes32) {
        return keccak256(abi.encode("verdict salt", jobId, verifier));
    }

    function _secret(uint256 jobId) internal pure returns (bytes32) {
        return keccak256(abi.encode("secret", jobId));
    }

    /// @inheritdoc ClaimsBook
    function _secretCommitmentOf(SubmissionId submissionId) internal pure override returns (bytes32) {
        uint256 jobId = LibSubmission.jobIdOf(submissionId);
        return roundHash(keccak256(abi.encode(jobId, LibSubmission.solverOf(submissionId), _secret(jobId))));
    }

    /// @notice The commitment `verifier` seals, its reject mask recorded for its reveal: mostly
    ///         approvals (a reject on every sample would make every job a dispute), so `rejectMask`
    ///         counts only when divisible by 3; the griefer abstains on everything (P-33).
    function _sealOf(uint256 jobId, address verifier, uint32[] memory segments, uint256 rejectMask)
        internal
        returns (bytes32 commitment)
    {
        if (rejectMask % 3 != 0) rejectMask = 0;
        if (verifier == griefer) rejectMask = ABSTAIN_ALL;
        _sealed[jobId][verifier] = rejectMask;
        commitment =
            keccak256(abi.encode(jobId, verifier, _ends(jobId, segments, rejectMask), _verdictSalt(jobId, verifier)));
    }

    /// @notice The end hashes a verifier seals: the claim where bit j + 8 of `rejectMask` is clear
    ///         (approve); else the committed end (a replay; the true end of a forced claim) or,
    ///         where that is the claim or bit 7 is set (a rejecter that did not replay), a hash of
    ///         its own.
    function _ends(uint256 jobId, uint32[] memory segments, uint256 rejectMask)
        internal
        view
        returns (bytes32[] memory ends)
    {
        (, bytes32[] memory claimed) = _claimsOf(_sid(jobId));
        ends = new bytes32[](segments.length);
        if (rejectMask == ABSTAIN_ALL) return ends;
        for (uint256 j; j < segments.length; ++j) {
            if ((rejectMask >> (j + 8)) & 1 == 0) {
                ends[j] = claimed[j];
                continue;
            }
            bytes32 committed = _states[jobId][segments[j] + 1];
            bool replayed = (rejectMask >> 7) & 1 == 0 && committed != claimed[j];
            ends[j] = replayed ? committed : keccak256(abi.encode("own end", jobId, j));
        }
    }

    /// @notice P9 after a call that may have expired `jobId`: no seat's revealed reject of a sample
    ///         is left unjudged (P-34).
    function _checkExpired(uint256 jobId) internal {
        if (jobManager.getJob(jobId).status != JobStatus.Expired) return;
        (address[] memory assigned,) = jobManager.getAssignment(jobId);
        if (assigned.length != 0) ++ghost_expiredAfterDraw;
        for (uint256 i; i < assigned.length; ++i) {
            Verdict[] memory verdicts = jobManager.verdictOf(jobId, assigned[i]);
            for (uint256 t; t < verdicts.length; ++t) {
                if (verdicts[t] == Verdict.Reject && !_ruled[jobId][t]) ++ghost_unjudgedRejectExpired;
            }
        }
    }

    /// @notice Tops every solver, verifier and whistleblower up to a free stake that covers a few jobs.
    function _topUpAll() internal {
        for (uint256 i; i < solvers.length; ++i) {
            _topUp(solvers[i], Role.Solver, 300e18);
        }
        for (uint256 i; i < verifiers.length; ++i) {
            _topUp(verifiers[i], Role.Verifier, 200e18);
        }
        for (uint256 i; i < whistleblowers.length; ++i) {
            _topUp(whistleblowers[i], Role.Whistleblower, 50e18);
        }
    }

    /// @notice Whether the run has reached a slash, a finalized mint, a forced-error settlement and
    ///         a reward paid straight to a solver's wallet.
    function progressed() public view returns (bool) {
        return ghost_slashes != 0 && ghost_finalizedMints != 0 && ghost_forcedErrors != 0 && ghost_rewardsPaid != 0;
    }

    function actorCount() external view returns (uint256) {
        return actors.length;
    }

    /// @notice Whether nothing of the protocol is in flight: every job has ended (finalized,
    ///         rejected, cancelled or expired) and every dispute is resolved, so no seat, claim or
    ///         arbiter seat should hold a lock.
    function quiescent() external view returns (bool) {
        if (_liveJobs() != 0) return false;
        uint256 disputes = committee.disputeCount();
        for (uint256 id = 1; id <= disputes; ++id) {
            if (committee.phaseOf(id) != DisputePhase.Resolved) return false;
        }
        return true;
    }

    function _newActor(string memory name) internal returns (address account) {
        // secp256k1's group order n: a key is any integer in [1, n - 1].
        uint256 key = uint256(keccak256(bytes(name)))
            % (0xFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFEBAAEDCE6AF48A03BBFD25E8CD0364141 - 1) + 1;
        account = vm.addr(key);
        _keyOf[account] = key;
        vm.label(account, name);
        vm.startPrank(account);
        token.faucet(1_000_000e18);
        token.approve(address(escrow), type(uint256).max);
        token.approve(address(stakeManager), type(uint256).max);
        vm.stopPrank();
        actors.push(account);
    }

    function _stakeAs(address account, Role role, uint256 amount) internal {
        vm.prank(account);
        stakeManager.stake(role, amount);
    }

    /// @notice A job from `seed`, preferring live (non-terminal) jobs so that runs reach deep states.
    function _pick(uint256 seed) internal view returns (uint256 jobId, Job memory job) {
        uint256 count = jobManager.jobCount();
        if (count == 0) return (0, job);
        uint256 start = seed % count;
        for (uint256 i; i < count; ++i) {
            jobId = (start + i) % count + 1;
            job = jobManager.getJob(jobId);
            if (_isLive(job.status)) return (jobId, job);
        }
    }

    function _isLive(JobStatus status) internal pure returns (bool) {
        return status != JobStatus.Finalized && status != JobStatus.Rejected && status != JobStatus.Cancelled
            && status != JobStatus.Expired;
    }

    function _liveJobs() internal view returns (uint256 live) {
        uint256 count = jobManager.jobCount();
        for (uint256 jobId = 1; jobId <= count; ++jobId) {
            if (_isLive(jobManager.getJob(jobId).status)) ++live;
        }
    }

    /// @notice A dispute from `seed`, preferring unresolved ones.
    function _pickDispute(uint256 seed) internal view returns (uint256 disputeId) {
        uint256 count = committee.disputeCount();
        if (count == 0) return 0;
        uint256 start = seed % count;
        for (uint256 i; i < count; ++i) {
            disputeId = (start + i) % count + 1;
            if (committee.phaseOf(disputeId) != DisputePhase.Resolved) return disputeId;
        }
    }

    function _salt(uint256 disputeId, address member) internal pure returns (bytes32) {
        return keccak256(abi.encode("salt", disputeId, member));
    }

    function _allow(address account, Role role) internal {
        _slashable[account][role] = true;
        _slashableList.push(account);
    }

    /// @notice Who may lose stake when `disputeId` resolves, computed from the votes before the call.
    function _allowDisputeLosers(uint256 disputeId, Dispute memory d) internal {
        address[] memory members = committee.committeeOf(disputeId);
        uint256 valid;
        uint256 invalid;
        for (uint256 i; i < members.length; ++i) {
            (, bool revealed, bool v) = committee.ballotOf(disputeId, members[i]);
            if (!revealed) _allow(members[i], Role.Verifier);
            else if (v) ++valid;
            else ++invalid;
        }
        bool segmentValid = invalid <= valid;
        Job memory job = jobManager.getJob(d.jobId);
        uint256 sampleIndex = jobManager.disputedSampleOf(d.jobId);
        (address[] memory assigned,) = jobManager.getAssignment(d.jobId);
        if (!segmentValid) _allow(job.solver, Role.Solver);
        for (uint256 i; i < assigned.length; ++i) {
            Verdict verdict = jobManager.verdictOf(d.jobId, assigned[i])[sampleIndex];
            if (segmentValid ? verdict == Verdict.Reject : verdict == Verdict.Approve) {
                _allow(assigned[i], Role.Verifier);
            }
        }
    }

    /// @notice Whether the StakeSlashed `logs[i]` forfeits a seat's reject bonds (locked from its
    ///         verifier stake at its reveal), not its seat: the JobManager's event right before it
    ///         announces exactly that forfeit for that account (`BondForfeited`,
    ///         `AbstentionForfeited`, or the bonds of `VerifierEquivocated`).
    function _isBondSlash(Vm.Log[] memory logs, uint256 i) internal view returns (bool) {
        if (i == 0 || logs[i].topics.length < 3 || logs[i].topics[0] != STAKE_SLASHED) return false;
        Vm.Log memory prev = logs[i - 1];
        if (prev.emitter != address(jobManager) || prev.topics.length < 3) return false;
        if (prev.topics[2] != logs[i].topics[1] || uint256(logs[i].topics[2]) != uint8(Role.Verifier)) return false;
        (uint256 amount,) = abi.decode(logs[i].data, (uint256, uint256));
        bytes32 topic = prev.topics[0];
        if (topic == IJobManager.BondForfeited.selector) return abi.decode(prev.data, (uint256)) == amount;
        if (topic == IJobManager.AbstentionForfeited.selector) {
            (, uint256 bond) = abi.decode(prev.data, (uint256, uint256));
            return bond == amount;
        }
        if (topic == IJobManager.VerifierEquivocated.selector) {
            (, uint256 bonds) = abi.decode(prev.data, (uint256, uint256));
            return bonds == amount;
        }
        return false;
    }

    /// @notice Counts every StakeSlashed of the last call that hits an account not allowed.
    function _checkSlashes() internal {
        _checkSlashesIn(vm.getRecordedLogs());
    }

    /// @notice Counts every StakeSlashed in `logs` that hits an account not allowed, then clears
    ///         the allowances.
    function _checkSlashesIn(Vm.Log[] memory logs) internal {
        for (uint256 i; i < logs.length; ++i) {
            if (logs[i].topics.length == 0 || logs[i].topics[0] != STAKE_SLASHED) continue;
            // A forfeit of reject bonds, checked by P6, P14 and the abstention rules, is no slash of
            // a seat.
            if (_isBondSlash(logs, i)) continue;
            address account = address(uint160(uint256(logs[i].topics[1])));
            Role role = Role(uint8(uint256(logs[i].topics[2])));
            ++ghost_slashes;
            if (!_slashable[account][role]) ++ghost_unjustifiedSlashes;
        }
        for (uint256 i; i < _slashableList.length; ++i) {
            delete _slashable[_slashableList[i]][Role.Solver];
            delete _slashable[_slashableList[i]][Role.Verifier];
            delete _slashable[_slashableList[i]][Role.Whistleblower];
        }
        delete _slashableList;
    }

    /// @notice An honest seat's cover before it reveals, as its node keeps it: free verifier stake
    ///         for a reject bond on each of the job's `samples` (the bonds are locked from it).
    function _coverBonds(address seat, uint256 samples) internal {
        _topUp(seat, Role.Verifier, samples * jobManager.params().challengeBond);
    }

    /// @notice Stakes `account` up to `amount` of free stake in `role`.
    function _topUp(address account, Role role, uint256 amount) internal {
        uint256 free = stakeManager.freeStake(account, role);
        if (free < amount) _stakeAs(account, role, amount - free);
    }

    /// @notice Counts a finalize that finalized `jobId` (P3: its steps were minted).
    function _countMint(uint256 jobId) internal {
        if (jobManager.getJob(jobId).status == JobStatus.Finalized) ++ghost_finalizedMints;
    }

    /// @notice The winners of forced sample `f` of `jobId` that its settlement must pay, read before
    ///         it from the handler's own records (one entry per jackpot: an account may win twice):
    ///         each seat that rejected `f` (`verdictsBefore`) and sealed the solver's true end (a
    ///         replay), and the whistleblower of each seat's approval of `f`; never a seat proven to
    ///         have equivocated, nor the whistleblower of its voided approval (P14).
    function _forcedWinners(uint256 jobId, uint256 f, address[] memory assigned, Verdict[] memory verdictsBefore)
        internal
        view
        returns (address[] memory winners)
    {
        (, uint32[] memory segments) = jobManager.getAssignment(jobId);
        bytes32 trueEnd = _states[jobId][segments[f] + 1];
        winners = new address[](assigned.length);
        uint256 count;
        for (uint256 i; i < assigned.length; ++i) {
            if (_voided[_sid(jobId)][assigned[i]]) continue;
            address winner;
            if (verdictsBefore[i] == Verdict.Reject) {
                if (_ends(jobId, segments, _sealed[jobId][assigned[i]])[f] == trueEnd) winner = assigned[i];
            } else if (verdictsBefore[i] == Verdict.Approve) {
                winner = jobManager.challengerOf(jobId, f, assigned[i]);
            }
            if (winner != address(0)) winners[count++] = winner;
        }
        assembly ("memory-safe") {
            mstore(winners, count)
        }
    }

    function _contains(address[] memory list, address account) internal pure returns (bool) {
        for (uint256 i; i < list.length; ++i) {
            if (list[i] == account) return true;
        }
        return false;
    }

    /// @notice Whether `log` is the token's transfer of `amount` from `from` to `to`.
    function _isTransfer(Vm.Log memory log, address from, address to, uint256 amount) internal view returns (bool) {
        return log.emitter == address(token) && log.topics.length == 3 && log.topics[0] == IERC20.Transfer.selector
            && address(uint160(uint256(log.topics[1]))) == from && address(uint160(uint256(log.topics[2]))) == to
            && abi.decode(log.data, (uint256)) == amount;
    }

    /// @notice The job's active submission.
    /// @dev Reads the job's solver with `vm.load` (slot 1 = `JobManager._jobs`, word 1 = solver), not
    ///      with a call, so that a pending `vm.prank`/`vm.expectRevert` still applies to the next real
    ///      call. `JobManager_Views_Test.test_submissionOf_matchesStorageRead_succeeds` pins the slot.
    function _sid(uint256 jobId) internal view returns (SubmissionId) {
        bytes32 base = keccak256(abi.encode(jobId, uint256(1)));
        address solver = address(uint160(uint256(vm.load(address(jobManager), bytes32(uint256(base) + 1)))));
        return solver == address(0) ? SubmissionId.wrap(bytes32(0)) : LibSubmission.id(jobId, solver);
    }
}
