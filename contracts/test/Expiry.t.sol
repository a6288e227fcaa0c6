// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

import {Deployers} from "./utils/Deployers.sol";
import {Deploy} from "../script/Deploy.sol";
import {JobStatus, Verdict} from "../src/types/JobTypes.sol";
import {Role} from "../src/types/Role.sol";
import {IJobManagerErrors} from "../src/interfaces/IJobManagerErrors.sol";

/// @notice Own-draw jobs (V = 3, q = 2, M = 12 segments) for the expiry findings: a job whose
///         samples stay uncovered, and a seat that holds samples no other seat holds.
abstract contract ExpiryHelpers is Deployers {
    uint32 internal constant WIDE_STEPS = 24;
    uint32 internal constant WIDE_INTERVAL = 2;

    /// @notice Devnet defaults with q = 2 and no forced error, and fresh actors.
    function _deployOwnDraws() internal {
        Deploy.Config memory cfg = Deploy.defaultConfig();
        cfg.params.samplesPerJob = 2;
        cfg.forcedErrorRateBps = 0;
        _deploy(cfg);
        delete verifierPool;
        _setUpActors();
    }

    /// @notice Posts, claims, commits and assigns (randomness `tag`, tries `t`) a job of 12
    ///         segments until seat 0 holds a sample no other seat holds; claims posted.
    function _wideJob(string memory tag) internal returns (uint256 jobId, address[] memory seats) {
        for (uint256 t;; ++t) {
            bytes32 specHash = keccak256(abi.encode(SPEC_HASH, "wide", _posts++));
            vm.prank(submitter);
            jobId = jobManager.postJob(MODEL_ID, specHash, INIT_HASH, WIDE_STEPS, WIDE_INTERVAL, REWARD, SPEC_URI);
            _claimAndCommit(jobId);
            _assignWith(jobId, keccak256(abi.encode(tag, t)));
            seats = _assigned(jobId);
            uint256 alone = _maskOf(jobId, seats[0]) & ~(_maskOf(jobId, seats[1]) | _maskOf(jobId, seats[2]));
            if (alone != 0) break;
        }
        _postClaims(jobId);
    }

    function _assignWith(uint256 jobId, bytes32 blockHash) internal {
        vm.roll(block.number + 2);
        vmx.setBlockhash(_job(jobId).randomnessBlock, blockHash);
        jobManager.assignVerifiers(jobId);
    }

    function _maskOf(uint256 jobId, address v) internal view returns (uint256) {
        return jobManager.sampleMaskOf(jobId, v);
    }

    /// @notice An honest seat's ends: the claimed end on its own samples, zero elsewhere (ignored).
    function _honestEnds(uint256 jobId, address v) internal view returns (bytes32[] memory ends) {
        (, bytes32[] memory claimed) = _claimsOf(_sid(jobId));
        uint256 mask = _maskOf(jobId, v);
        ends = new bytes32[](claimed.length);
        for (uint256 j; j < claimed.length; ++j) {
            if ((mask >> j) & 1 == 1) ends[j] = claimed[j];
        }
    }

    function _lowestBit(uint256 mask) internal pure returns (uint256 index) {
        while ((mask >> index) & 1 == 0) ++index;
    }
}

/// @notice P-34 (docs/SECURITY.md): expiry never forgives a revealed reject. An honest seat rejects
///         the solver's wrong claim; its accomplices stay silent through every reassignment. Before:
///         the job expired, the cheating solver kept its stake, the honest rejecter got only its
///         fee and the submitter paid for a check it never got the benefit of. Now the rejected
///         sample goes to the adjudicator before the job may expire.
contract Expiry_RevealedReject_Test is ExpiryHelpers {
    function setUp() public override {
        super.setUp();
        _deployOwnDraws();
    }

    /// @notice Seals `ends` for the honest rejecter, then lets every later seat stay silent through
    ///         every reassignment; returns the silent seats (the first draw's two, two per redraw).
    function _silentThroughEveryDraw(uint256 jobId, address[] memory seats, address rejecter)
        internal
        returns (address[] memory silent)
    {
        silent = new address[](2 + 2 * params.maxReassignments);
        (silent[0], silent[1]) = (seats[0], seats[2]);
        uint256 count = 2;
        for (uint256 r; r <= params.maxReassignments; ++r) {
            _passChallengeWindow(jobId);
            jobManager.finalize(jobId);
            if (r == params.maxReassignments) break;
            _assignWith(jobId, keccak256(abi.encode("redraw", r)));
            address[] memory now_ = _assigned(jobId);
            assertEq(now_[0], rejecter, "the rejecter is kept");
            for (uint256 i = 1; i < now_.length; ++i) {
                silent[count++] = now_[i];
            }
        }
        assembly {
            mstore(silent, count)
        }
    }

    /// @notice The issue's attack, every party's tokens before and after: the cheat is judged and
    ///         caught. The solver loses its stake, the honest rejecter wins the pot (more than its
    ///         fee), the submitter gets its reward and the silent seats' fees back, each accomplice
    ///         loses one verifierStake to the pool. Before: Expired, the solver unlocked unslashed.
    function test_expiry_silentAccomplices_revealedRejectJudged_cheatCaught_succeeds() public {
        (uint256 jobId, address[] memory seats) = _wideJob("silent accomplices");
        address rejecter = seats[1];
        uint256 faked = _lowestBit(_maskOf(jobId, rejecter));
        // The submitter has paid the post cost (reward + V fees) already.
        uint256[4] memory before = [_holdings(solver), _holdings(submitter), _holdings(rejecter), escrow.jackpotPool()];
        uint256[] memory poolBefore = new uint256[](verifierPool.length);
        for (uint256 i; i < verifierPool.length; ++i) {
            poolBefore[i] = _holdings(verifierPool[i]);
        }
        bytes32[] memory ends = _honestEnds(jobId, rejecter);
        ends[faked] = keccak256("the true replay");
        _submitEnds(jobId, rejecter, ends);

        address[] memory silent = _silentThroughEveryDraw(jobId, seats, rejecter);
        assertEq(uint8(_job(jobId).status), uint8(JobStatus.Disputed), "the revealed reject is judged first");
        address[] memory arbiters = _arbitrate(_job(jobId).disputeId, false);

        assertEq(uint8(_job(jobId).status), uint8(JobStatus.Rejected), "the cheat is caught");
        assertEq(_holdings(solver), before[0] - params.solverStake, "the cheating solver loses its stake");
        assertEq(_locked(solver, Role.Solver), 0, "solver settled");
        assertEq(_holdings(submitter), before[1] + REWARD + 2 * params.verifierFee, "reward and unearned fees back");
        assertGt(_holdings(rejecter), before[2] + params.verifierFee, "the honest rejecter wins the dispute");
        assertEq(_locked(rejecter, Role.Verifier), 0, "rejecter released");
        for (uint256 i; i < verifierPool.length; ++i) {
            address v = verifierPool[i];
            if (v == rejecter) continue;
            // A seat silent in n draws loses n stakes; an arbiter of the ruling earns its fee.
            uint256 n;
            for (uint256 k; k < silent.length; ++k) {
                if (silent[k] == v) ++n;
            }
            uint256 fee = _isIn(arbiters, v) ? params.arbiterFee : 0;
            assertEq(_holdings(v), poolBefore[i] + fee - n * params.verifierStake, "silence costs a stake per draw");
            assertEq(_locked(v, Role.Verifier), 0, "every seat settled");
        }
        assertEq(escrow.jackpotPool(), before[3] + silent.length * params.verifierStake, "silent stakes join the pool");
        _assertEscrowSolvent();
    }

    /// @notice The same job whose rejected segment the adjudicator finds valid: the job then
    ///         expires with nobody slashed for the reject (the secret was never revealed, so the
    ///         reject may be of the forced claim): the rejecter gets its bond back and its fee, the
    ///         solver is unlocked unslashed, the submitter gets its reward and the silent fees back.
    function test_expiry_revealedRejectFoundValid_jobExpires_partiesWhole_succeeds() public {
        (uint256 jobId, address[] memory seats) = _wideJob("valid reject");
        address rejecter = seats[1];
        uint256 faked = _lowestBit(_maskOf(jobId, rejecter));
        uint256[3] memory before = [_holdings(solver), _holdings(submitter), _holdings(rejecter)];
        bytes32[] memory ends = _honestEnds(jobId, rejecter);
        ends[faked] = keccak256("a replay that disagrees");
        _submitEnds(jobId, rejecter, ends);
        _silentThroughEveryDraw(jobId, seats, rejecter);
        _arbitrate(_job(jobId).disputeId, true);
        assertEq(uint8(_job(jobId).status), uint8(JobStatus.Disputed), "ruled; finalize moves on");
        jobManager.finalize(jobId);

        assertEq(uint8(_job(jobId).status), uint8(JobStatus.Expired), "expired after the ruling");
        assertEq(_holdings(solver), before[0], "the solver, never proven wrong, keeps its stake");
        assertEq(_locked(solver, Role.Solver), 0, "solver unlocked");
        assertEq(_holdings(submitter), before[1] + REWARD + 2 * params.verifierFee, "reward and unearned fees back");
        assertEq(_holdings(rejecter), before[2] + params.verifierFee, "bond back and its fee");
        assertEq(_locked(rejecter, Role.Verifier), 0, "rejecter released");
        _assertEscrowSolvent();
    }
}

/// @notice P-35 (docs/SECURITY.md): nothing waits forever. A Committed job that cannot seat
///         verifiers (none eligible) sat in Committed for good: the solver's stake and the
///         submitter's reward stayed locked. Now anyone may expire it past its assign deadline
///         (`commitDeadline` + openWindow), with every party made whole.
contract Expiry_Unassigned_Test is ExpiryHelpers {
    function setUp() public override {
        super.setUp();
        _deployOwnDraws();
    }

    /// @notice `assignVerifiers` reverts NoEligibleVerifiers: the job cannot leave Committed by itself.
    function _expectNoEligibleVerifiers(uint256 jobId) internal {
        vm.roll(block.number + 2);
        try jobManager.assignVerifiers(jobId) {
            revert("a verifier was seated");
        } catch (bytes memory reason) {
            assertEq(bytes4(reason), IJobManagerErrors.NoEligibleVerifiers.selector, "nobody eligible");
        }
        assertEq(uint8(_job(jobId).status), uint8(JobStatus.Committed), "stuck in Committed");
    }

    /// @notice No verifier is eligible at the first assignment. Every party's tokens: the submitter
    ///         gets its reward and every fee back (the premium, 0 here, was pooled at the claim), the
    ///         solver keeps its stake and is unlocked, the pool is unchanged.
    function test_expireUnassigned_noEligibleVerifiers_everyPartyWhole_succeeds() public {
        for (uint256 i; i < verifierPool.length; ++i) {
            vm.prank(verifierPool[i]);
            stakeManager.requestUnbond(Role.Verifier, 500e18);
        }
        uint256[3] memory before = [_holdings(solver), _holdings(submitter), escrow.jackpotPool()];
        uint256 jobId = _postJob();
        _claimAndCommit(jobId);
        _expectNoEligibleVerifiers(jobId);

        uint256 deadline = uint256(_job(jobId).commitDeadline) + params.openWindow;
        vm.warp(deadline);
        vm.expectRevert(
            abi.encodeWithSelector(
                IJobManagerErrors.AssignDeadlineNotPassed.selector, jobId, uint64(deadline), uint64(deadline)
            )
        );
        jobManager.expireUnassigned(jobId);
        vm.warp(deadline + 1);
        vm.prank(stranger);
        jobManager.expireUnassigned(jobId);

        assertEq(uint8(_job(jobId).status), uint8(JobStatus.Expired), "expired");
        assertEq(_holdings(solver), before[0], "solver keeps its stake");
        assertEq(_locked(solver, Role.Solver), 0, "solver unlocked");
        assertEq(_holdings(submitter), before[1], "reward and every fee back");
        assertEq(escrow.jackpotPool(), before[2], "pool unchanged");
        _assertEscrowSolvent();
    }

    /// @notice The issue's case: a reassignment finds nobody eligible (the rest of the pool left).
    ///         The kept seats approved: the job expires past the assign deadline counted from the
    ///         reassignment; they are paid their fee, the silent seat lost its stake to the pool, the
    ///         submitter gets the reward and the silent seat's fee back, the solver is unlocked.
    function test_expireUnassigned_afterReassignment_keptSeatsPaid_succeeds() public {
        (uint256 jobId, address[] memory seats) = _wideJob("no one left");
        uint256[5] memory before =
            [_holdings(solver), _holdings(submitter), _holdings(seats[1]), _holdings(seats[2]), _holdings(seats[0])];
        _submitEnds(jobId, seats[1], _honestEnds(jobId, seats[1]));
        _submitEnds(jobId, seats[2], _honestEnds(jobId, seats[2]));
        _passChallengeWindow(jobId);
        jobManager.finalize(jobId);
        assertEq(uint8(_job(jobId).status), uint8(JobStatus.Committed), "reassigning");
        for (uint256 i; i < verifierPool.length; ++i) {
            address v = verifierPool[i];
            if (_isIn(seats, v)) continue;
            vm.prank(v);
            stakeManager.requestUnbond(Role.Verifier, 500e18);
        }
        _expectNoEligibleVerifiers(jobId);
        vm.warp(block.timestamp + params.openWindow + 1);
        jobManager.expireUnassigned(jobId);

        assertEq(uint8(_job(jobId).status), uint8(JobStatus.Expired), "expired");
        assertEq(_holdings(solver), before[0], "solver keeps its stake");
        assertEq(_locked(solver, Role.Solver), 0, "solver unlocked");
        assertEq(_holdings(submitter), before[1] + REWARD + params.verifierFee, "reward and the silent fee back");
        assertEq(_holdings(seats[1]), before[2] + params.verifierFee, "kept seat paid");
        assertEq(_holdings(seats[2]), before[3] + params.verifierFee, "kept seat paid");
        assertEq(_holdings(seats[0]), before[4] - params.verifierStake, "silence costs a stake");
        for (uint256 i; i < 3; ++i) {
            assertEq(_locked(seats[i], Role.Verifier), 0, "seat settled");
        }
        _assertEscrowSolvent();
    }
}

/// @notice P-33 (docs/SECURITY.md): abstention has a price when the data was there. A griefer that
///         abstained on every sample of an honest job cost nothing (bond back, P-20) and held the job
///         in one dispute per sample. Now an abstention on a sample another seat replayed holds
///         nothing and forfeits its bond to the pool; so does one on a sample the adjudicator finds
///         valid; it stays free where nobody could fetch the data and the segment is invalid.
contract Expiry_Abstention_Test is Deployers {
    function _zeros(uint256 jobId) internal view returns (bytes32[] memory) {
        return new bytes32[](_samples(jobId));
    }

    /// @notice The griefer abstains on every sample, the two other seats replay and approve. Every
    ///         party's tokens: the job finalizes at once (no dispute), the griefer loses its fee
    ///         and one bond per sample to the pool, the approvers are paid, the solver its reward.
    ///         Before: one dispute per sample, the griefer's holdings unchanged.
    function test_griefingAbstainer_othersReplayed_forfeitsNoDispute_succeeds() public {
        uint256 jobId = _verifyingJob();
        address[] memory seats = _assigned(jobId);
        uint256 samples = _samples(jobId);
        uint256[5] memory before =
            [_holdings(seats[0]), _holdings(seats[1]), _holdings(seats[2]), _holdings(solver), _holdings(submitter)];
        uint256 pool = escrow.jackpotPool();
        _submitEnds(jobId, seats[0], _zeros(jobId));
        _submit(jobId, seats[1], 0);
        _submit(jobId, seats[2], 0);
        assertEq(uint8(jobManager.verdictOf(jobId, seats[0])[0]), uint8(Verdict.Abstain), "abstention");
        _passChallengeWindow(jobId);
        jobManager.finalize(jobId);

        assertEq(uint8(_job(jobId).status), uint8(JobStatus.Finalized), "no dispute: the others replayed");
        assertEq(_holdings(seats[0]), before[0] - samples * params.challengeBond, "the griefer forfeits its bonds");
        assertEq(_locked(seats[0], Role.Verifier), 0, "griefer unlocked");
        assertEq(_holdings(seats[1]), before[1] + params.verifierFee, "approver paid");
        assertEq(_holdings(seats[2]), before[2] + params.verifierFee, "approver paid");
        assertEq(_holdings(solver), before[3] + REWARD, "solver paid its reward");
        assertEq(_holdings(submitter), before[4] + params.verifierFee, "submitter: the griefer's fee back");
        assertEq(escrow.jackpotPool(), pool + samples * params.challengeBond, "bonds to the pool, no party");
        _assertEscrowSolvent();
    }

    /// @notice Every seat abstains on sample 0 (nobody replayed it); the adjudicator finds it valid
    ///         (the solver showed its data): each abstainer forfeits that bond to the pool.
    function test_abstentionsOnValidSegment_forfeitToPool_succeeds() public {
        uint256 jobId = _verifyingJob();
        address[] memory seats = _assigned(jobId);
        uint256[] memory before = new uint256[](seats.length);
        uint256 pool = escrow.jackpotPool();
        uint256 solverBefore = _holdings(solver);
        for (uint256 i; i < seats.length; ++i) {
            before[i] = _holdings(seats[i]);
            bytes32[] memory ends = _ends(jobId, 0);
            ends[0] = bytes32(0);
            _submitEnds(jobId, seats[i], ends);
        }
        _settle(jobId, true);

        assertEq(uint8(_job(jobId).status), uint8(JobStatus.Finalized), "finalized");
        for (uint256 i; i < seats.length; ++i) {
            assertEq(_holdings(seats[i]), before[i] - params.challengeBond, "bond forfeited, no fee");
        }
        assertEq(_holdings(solver), solverBefore + REWARD, "solver paid its reward, nothing from them");
        assertEq(escrow.jackpotPool(), pool + seats.length * params.challengeBond, "bonds to the pool");
        _assertEscrowSolvent();
    }
}

/// @notice The new surface under random play: each verifier of the pool is honest, silent (never
///         seals: P-34's accomplice), a griefer (abstains on its samples: P-33) or a liar (rejects
///         its samples with made-up ends); the solver cheats on one sample or not; the committee
///         rules the truth; the job runs through every reassignment, expiry or a stuck redraw
///         (P-35). Whatever the mix, no honest party ends below its start: an honest verifier, an
///         honest solver, and the submitter never pays more than the job's post cost.
contract Expiry_HonestNeverLoses_Test is ExpiryHelpers {
    uint256 internal constant HONEST = 0;
    uint256 internal constant SILENT = 1;
    uint256 internal constant GRIEFER = 2;
    uint256 internal constant LIAR = 3;

    uint256 internal _seed;

    function setUp() public override {
        super.setUp();
        _deployOwnDraws();
    }

    function _role(address v) internal view returns (uint256) {
        return uint256(keccak256(abi.encode(_seed, v))) % 4;
    }

    /// @notice Every seat of the current draw that has not sealed acts out its role.
    function _play(uint256 jobId, bool cheat, uint256 faked) internal {
        address[] memory seats = _assigned(jobId);
        for (uint256 i; i < seats.length; ++i) {
            address v = seats[i];
            (bytes32 sealedHash,) = round.verdictCommitmentOf(_sid(jobId), v);
            uint256 role = _role(v);
            if (sealedHash != bytes32(0) || role == SILENT) continue;
            bytes32[] memory ends = _honestEnds(jobId, v);
            uint256 mask = _maskOf(jobId, v);
            for (uint256 j; j < ends.length; ++j) {
                if ((mask >> j) & 1 == 0) continue;
                if (role == GRIEFER) ends[j] = bytes32(0);
                else if (role == LIAR) ends[j] = keccak256(abi.encode("made up", j));
                else if (cheat && j == faked) ends[j] = keccak256("the true replay");
            }
            _submitEnds(jobId, v, ends);
        }
    }

    /// @notice Arbitrates every dispute the job opens with the truth, finalizing in between.
    function _judge(uint256 jobId, bool cheat, uint256 faked) internal {
        for (uint256 guard; guard < 64 && _job(jobId).status == JobStatus.Disputed; ++guard) {
            bool valid = !(cheat && jobManager.disputedSampleOf(jobId) == faked);
            _arbitrate(_job(jobId).disputeId, valid);
            if (_job(jobId).status == JobStatus.Disputed) jobManager.finalize(jobId);
        }
    }

    function testFuzz_expiry_honestPartiesNeverLose_succeeds(uint256 seed) public {
        _seed = seed;
        bool cheat = seed & 1 == 1;
        (uint256 jobId,) = _wideJob(string(abi.encode("mix", seed)));
        uint256 faked = (seed >> 8) % _samples(jobId);
        uint256[] memory start = new uint256[](verifierPool.length);
        for (uint256 i; i < verifierPool.length; ++i) {
            start[i] = _holdings(verifierPool[i]);
        }
        uint256 solverStart = _holdings(solver);
        // The submitter paid the post cost already: it never loses more than that.
        uint256 submitterStart = _holdings(submitter);

        for (uint256 r; r <= params.maxReassignments + 1; ++r) {
            _play(jobId, cheat, faked);
            _passChallengeWindow(jobId);
            jobManager.finalize(jobId);
            _judge(jobId, cheat, faked);
            if (_job(jobId).status != JobStatus.Committed) break;
            vm.roll(block.number + 2);
            vmx.setBlockhash(_job(jobId).randomnessBlock, keccak256(abi.encode(seed, r)));
            try jobManager.assignVerifiers(jobId) {}
            catch {
                vm.warp(uint256(_job(jobId).commitDeadline) + params.openWindow + 1);
                jobManager.expireUnassigned(jobId);
                _judge(jobId, cheat, faked);
                break;
            }
        }

        // (Earlier attempts of `_wideJob` stay live and lock stakes: holdings are what counts.)
        JobStatus status = _job(jobId).status;
        assertTrue(
            status == JobStatus.Finalized || status == JobStatus.Rejected || status == JobStatus.Expired, "terminal"
        );
        for (uint256 i; i < verifierPool.length; ++i) {
            if (_role(verifierPool[i]) != HONEST) continue;
            assertGte(_holdings(verifierPool[i]), start[i], "an honest verifier lost");
        }
        if (!cheat) assertGte(_holdings(solver), solverStart, "the honest solver lost");
        assertGte(_holdings(submitter), submitterStart, "the submitter paid more than the post cost");
        _assertEscrowSolvent();
    }

    /// @notice A pinned mix (seed 7: the solver cheats).
    function test_expiry_honestPartiesNeverLose_succeeds() public {
        testFuzz_expiry_honestPartiesNeverLose_succeeds(7);
    }
}
