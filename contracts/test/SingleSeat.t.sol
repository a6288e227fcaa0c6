// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

import {AttackHelpers} from "./Settlement.t.sol";
import {Deploy} from "../script/Deploy.sol";
import {LibSampling} from "../src/libraries/LibSampling.sol";
import {JobStatus, Verdict} from "../src/types/JobTypes.sol";
import {Role} from "../src/types/Role.sol";

/// @notice P-39 (docs/SECURITY.md): one seat per job, verification at a tenth of training. The seat
///         draws its q segments among the first M - 1 and holds the last sample too. It replays the
///         last segment only when its draw holds the one before it; otherwise it fetches the final
///         state and checks it against the claim, and its approval there vouches for the state's
///         availability only: it is not slashed when the segment is found invalid. The forced error
///         may land on either sample, so both the replay and the fetch are tested (E-3).
contract SingleSeat_Test is AttackHelpers {
    uint256 internal constant M = TOTAL_STEPS / INTERVAL;

    function setUp() public override {
        super.setUp();
        _deploySingle(0, 2e18);
    }

    /// @notice Devnet defaults with V = 1, q = 1, forced-error rate `rateBps` and `jackpot`.
    function _deploySingle(uint256 rateBps, uint256 jackpot) internal {
        Deploy.Config memory cfg = Deploy.defaultConfig();
        cfg.params.verifiersPerJob = 1;
        cfg.params.samplesPerJob = 1;
        cfg.params.jackpot = jackpot;
        cfg.forcedErrorRateBps = rateBps;
        _deploy(cfg);
        delete verifierPool;
        _setUpActors();
    }

    /// @notice A committed job assigned with randomness `blockHash` (claims not posted).
    function _assignedWith(bytes32 blockHash) internal returns (uint256 jobId) {
        jobId = _postJob();
        _claimAndCommit(jobId);
        vm.roll(block.number + 2);
        vmx.setBlockhash(_job(jobId).randomnessBlock, blockHash);
        jobManager.assignVerifiers(jobId);
    }

    /// @notice The segment the seat draws, as the contract specifies it: one of the first M - 1.
    function _ownDraw(uint256 jobId, address seat) internal view returns (uint32) {
        bytes32 seed = keccak256(abi.encode(blockhash(_job(jobId).randomnessBlock), jobId, _job(jobId).root));
        return LibSampling.drawSegments(keccak256(abi.encode(seed, "segments", seat)), M - 1, 1)[0];
    }

    /// @notice A Verifying job (claims posted) whose seat fetches the last sample.
    function _fetchingJob() internal returns (uint256 jobId, address seat) {
        for (uint256 t;; ++t) {
            jobId = _assignedWith(keccak256(abi.encode("fetching", t)));
            seat = _assigned(jobId)[0];
            if (round.fetchOnlyMaskOf(_sid(jobId), seat) != 0) break;
        }
        _postClaims(jobId);
    }

    /// @notice The seat's draw is one of the first M - 1 segments; the sample is it and the last;
    ///         the seat fetches the last unless it drew the segment before it (then it replays both).
    function testFuzz_singleSeat_drawsBeforeTheLast_fetchesTheLastUnlessItHoldsTheOneBefore(bytes32 blockHash) public {
        vm.assume(blockHash != bytes32(0));
        uint256 jobId = _assignedWith(blockHash);
        (address[] memory seats, uint32[] memory segments) = jobManager.getAssignment(jobId);
        assertEq(seats.length, 1, "one seat");
        uint32 own = _ownDraw(jobId, seats[0]);
        assertLt(uint256(own), M - 1, "drawn among the first M - 1 segments");
        assertEq(segments.length, 2, "its draw and the last segment");
        assertEq(uint256(segments[0]), own);
        assertEq(uint256(segments[1]), M - 1);
        assertEq(jobManager.sampleMaskOf(jobId, seats[0]), 3, "the seat holds both samples");
        uint256 fetchOnly = round.fetchOnlyMaskOf(_sid(jobId), seats[0]);
        assertEq(fetchOnly, own == M - 2 ? 0 : 2, "fetches the last unless it holds the segment before it");
    }

    /// @notice Over 64 draws the seat fetches the last sample on every draw but the one segment in
    ///         M - 1 that precedes it, so it replays 1 + 1/(M - 1) segments per job on average.
    function test_singleSeat_replaysAboutOneSegmentPerJob_succeeds() public {
        uint256 replayed;
        for (uint256 t; t < 64; ++t) {
            uint256 snapshot = vmx.snapshotState();
            uint256 jobId = _assignedWith(keccak256(abi.encode("replay", t)));
            address seat = _assigned(jobId)[0];
            uint256 mask = jobManager.sampleMaskOf(jobId, seat) & ~round.fetchOnlyMaskOf(_sid(jobId), seat);
            for (; mask != 0; mask >>= 1) {
                replayed += mask & 1;
            }
            vmx.revertToState(snapshot);
        }
        assertGte(replayed, 64, "at least one replayed segment per job");
        assertLt(replayed, 64 + 32, "the last is replayed only on the draws of the segment before it");
    }

    /// @notice A job (claims not posted) whose seat drew the segment before the last, so replays
    ///         the last too: tries block hashes, reverting between tries.
    function _replayingJob() internal returns (uint256 jobId, address seat) {
        for (uint256 t;; ++t) {
            uint256 snapshot = vmx.snapshotState();
            jobId = _assignedWith(keccak256(abi.encode("replays the last", t)));
            seat = _assigned(jobId)[0];
            if (round.fetchOnlyMaskOf(_sid(jobId), seat) == 0) return (jobId, seat);
            vmx.revertToState(snapshot);
        }
    }

    /// @notice A fetching job (claims not posted) whose forced error lands on sample `want` (0: the
    ///         seat's own segment, 1: the fetched last): tries secrets, reverting between tries.
    function _fetchingForcedOn(uint256 want) internal returns (uint256 jobId, address seat) {
        for (uint256 t;; ++t) {
            uint256 snapshot = vmx.snapshotState();
            _secretSalt = t + 1;
            jobId = _assignedWith(keccak256(abi.encode("forced", t)));
            seat = _assigned(jobId)[0];
            (bool forced, uint256 f) = round.drawForcedError(_sid(jobId), _secret(jobId));
            if (round.fetchOnlyMaskOf(_sid(jobId), seat) != 0 && forced && f == want) return (jobId, seat);
            vmx.revertToState(snapshot);
        }
    }

    /// @notice Every job forced (rate 10_000, no jackpot): the forced sample is one of the seat's,
    ///         and where the seat fetches the last both of its duties are tested: the forced error
    ///         lands on its replayed segment on some draws and on the fetched last on others (E-3).
    ///         Where it drew the segment before the last, only the last is eligible (it replays it).
    function test_singleSeat_forcedErrorTestsTheReplayAndTheFetch_succeeds() public {
        _deploySingle(10_000, 0);
        uint256 onLast;
        uint256 onOwn;
        for (uint256 t; t < 48; ++t) {
            uint256 snapshot = vmx.snapshotState();
            _secretSalt = t + 1;
            uint256 jobId = _assignedWith(keccak256(abi.encode("duties", t)));
            address seat = _assigned(jobId)[0];
            (bool forced, uint256 f) = round.drawForcedError(_sid(jobId), _secret(jobId));
            assertTrue(forced, "every job forced");
            assertEq((jobManager.sampleMaskOf(jobId, seat) >> f) & 1, 1, "the seat's sample");
            if (round.fetchOnlyMaskOf(_sid(jobId), seat) == 0) {
                assertEq(f, 1, "it drew the segment before the last: only the last is eligible");
            } else if (f == 1) {
                ++onLast;
            } else {
                ++onOwn;
            }
            vmx.revertToState(snapshot);
        }
        assertGt(onLast, 8, "the fetch is tested");
        assertGt(onOwn, 8, "the replay is tested");
    }

    /// @notice E-3's attack: a seat approves the last sample without fetching the final state. The
    ///         forced error lands on the fetched last: the seat approved the forced claim, so it is
    ///         slashed. Before, the forced error never landed on a fetched last and the skipped
    ///         fetch cost nothing.
    function test_attack_seatSkipsTheFetch_forcedOnTheFetchedLast_isSlashed_succeeds() public {
        _deploySingle(5000, 2e18);
        (uint256 jobId, address seat) = _fetchingForcedOn(1);
        _postClaims(jobId);
        uint256 stake = _staked(seat, Role.Verifier);
        _submit(jobId, seat, 0); // approves both samples, the forced claim on the last included
        _settle(jobId, true);
        assertEq(uint8(_job(jobId).status), uint8(JobStatus.Finalized));
        assertEq(_staked(seat, Role.Verifier), stake - params.verifierStake, "the seat that skipped the fetch");
        _assertEscrowSolvent();
    }

    /// @notice The honest fetch: the served final state does not hash to the forced claim, so the
    ///         seat seals the state's true hash; it wins the jackpot with its bond back, the jackpot
    ///         and its fee restaked on its stake.
    function test_forcedOnTheFetchedLast_fetchingSeatRejectsWithTheTrueEnd_isPaid_succeeds() public {
        _deploySingle(5000, 2e18);
        (uint256 jobId, address seat) = _fetchingForcedOn(1);
        _postClaims(jobId);
        uint256 before = _holdings(seat);
        uint256 wallet = token.balanceOf(seat);
        uint256 stake = _staked(seat, Role.Verifier);
        uint256 pool = escrow.jackpotPool();
        uint256 prize = pool < params.jackpot ? pool : params.jackpot;
        assertGt(prize, 0, "a jackpot to win");
        _submit(jobId, seat, 2); // rejects the last with the committed (true) end
        _settle(jobId, true);
        assertEq(uint8(_job(jobId).status), uint8(JobStatus.Finalized));
        assertEq(
            _staked(seat, Role.Verifier), stake + params.verifierFee + prize, "slashed, or fee and jackpot not restaked"
        );
        assertEq(token.balanceOf(seat), wallet, "no wallet payment");
        assertEq(_holdings(seat), before + params.verifierFee + prize, "fee and jackpot, bond back");
        _assertEscrowSolvent();
    }

    /// @notice The lazy seat on the worst draw it can see (it drew the segment before the last, so it
    ///         replays both) approves the forced claim of the last sample and is slashed.
    function test_singleSeat_lazySeatHoldingTheSegmentBeforeTheLast_isSlashed_succeeds() public {
        _deploySingle(10_000, 0);
        (uint256 jobId, address seat) = _replayingJob();
        (, uint256 f) = round.drawForcedError(_sid(jobId), _secret(jobId));
        assertEq(f, 1, "the forced error is on the last sample, which the seat replays");
        uint256 stake = _staked(seat, Role.Verifier);
        _submit(jobId, seat, 0);
        _settle(jobId, true);
        assertEq(_staked(seat, Role.Verifier), stake - params.verifierStake, "the lazy seat is slashed");
    }

    /// @notice The attack: the solver fakes the last segment and serves its (wrong) final state. The
    ///         seat only fetched it, so it approves; a whistleblower replays it and challenges the
    ///         approval; the adjudicator finds the segment invalid. The solver is slashed and the
    ///         whistleblower paid, and the seat, which vouched only for the state being served, keeps
    ///         its stake. Before P-39 every approval of an invalid sample was slashed.
    function test_attack_fakedLast_fetchOnlyApprovalNotSlashed_whistleblowerWins_succeeds() public {
        (uint256 jobId, address seat) = _fetchingJob();
        uint256 seatStake = _staked(seat, Role.Verifier);
        uint256 whistleBefore = _holdings(whistleblower);
        uint256 solverStake = _staked(solver, Role.Solver);
        _submit(jobId, seat, 0);
        assertEq(uint8(jobManager.verdictOf(jobId, seat)[1]), uint8(Verdict.Approve), "the seat approved the last");
        vm.prank(whistleblower);
        jobManager.challengeApproval(jobId, 1, seat);
        _settle(jobId, false);

        assertEq(uint8(_job(jobId).status), uint8(JobStatus.Rejected), "the fake is rejected");
        assertLt(_staked(solver, Role.Solver), solverStake, "the solver is slashed");
        // Not slashed: its seat stands, and its fee is restaked with the rejection.
        assertEq(_staked(seat, Role.Verifier), seatStake + params.verifierFee, "the fetch-only approval is not slashed");
        assertEq(_locked(seat, Role.Verifier), 0, "the seat is released");
        assertGt(_holdings(whistleblower), whistleBefore, "the whistleblower wins");
        _assertEscrowSolvent();
    }

    /// @notice The same fake when the seat replays the last segment (its draw holds the one before
    ///         it): its approval claims a replay, so it is slashed as before.
    function test_replayedLast_approvalOfAnInvalidLast_isSlashed_succeeds() public {
        (uint256 jobId, address seat) = _replayingJob();
        _postClaims(jobId);
        uint256 seatStake = _staked(seat, Role.Verifier);
        _submit(jobId, seat, 0);
        vm.prank(whistleblower);
        jobManager.challengeApproval(jobId, 1, seat);
        _settle(jobId, false);
        assertEq(uint8(_job(jobId).status), uint8(JobStatus.Rejected));
        assertEq(_staked(seat, Role.Verifier), seatStake - params.verifierStake, "a replayed approval is slashed");
    }

    /// @notice A reassignment (the seat stayed silent, P-8) keeps the sample and its claims: the new
    ///         seat holds both samples and fetches the last by the same rule, and the job then
    ///         finalizes and pays it.
    function test_singleSeat_reassignment_newSeatFetchesByTheSameRule_succeeds() public {
        (uint256 jobId, address first) = _fetchingJob();
        vm.warp(uint256(_job(jobId).challengeDeadline) + 1);
        jobManager.finalize(jobId);
        assertEq(uint8(_job(jobId).status), uint8(JobStatus.Committed), "reassigning");
        vm.roll(block.number + 2);
        vmx.setBlockhash(_job(jobId).randomnessBlock, keccak256("second draw"));
        jobManager.assignVerifiers(jobId);
        address seat = _assigned(jobId)[0];
        assertTrue(seat != first, "a fresh seat");
        assertEq(jobManager.sampleMaskOf(jobId, seat), 3, "it holds both samples");
        assertEq(round.fetchOnlyMaskOf(_sid(jobId), seat), 2, "and fetches the last");
        uint256 before = _holdings(seat);
        _submit(jobId, seat, 0);
        _settle(jobId, true);
        assertEq(uint8(_job(jobId).status), uint8(JobStatus.Finalized));
        assertEq(_holdings(seat), before + params.verifierFee, "the new seat is paid its fee");
    }

    /// @notice Whoever withholds loses: the solver does not serve the final state, the seat seals a
    ///         zero end on the last sample (an abstention) and replays its own segment. The abstention
    ///         alone puts the last sample before the adjudicator (nobody replayed it), which finds it
    ///         invalid without the data: the solver is slashed and the seat keeps its stake and bond.
    function test_attack_withheldFinalState_seatAbstains_solverLoses_succeeds() public {
        (uint256 jobId, address seat) = _fetchingJob();
        uint256 seatBefore = _holdings(seat);
        uint256 solverStake = _staked(solver, Role.Solver);
        bytes32[] memory ends = _ends(jobId, 0);
        ends[1] = bytes32(0);
        _submitEnds(jobId, seat, ends);
        _passChallengeWindow(jobId);
        jobManager.finalize(jobId);
        assertEq(uint8(_job(jobId).status), uint8(JobStatus.Disputed), "the withheld final state is judged");
        _arbitrate(_job(jobId).disputeId, false);
        assertEq(uint8(_job(jobId).status), uint8(JobStatus.Rejected), "the withholder loses");
        assertLt(_staked(solver, Role.Solver), solverStake, "the solver is slashed");
        assertGte(_holdings(seat), seatBefore, "the seat loses nothing");
        _assertEscrowSolvent();
    }
}
