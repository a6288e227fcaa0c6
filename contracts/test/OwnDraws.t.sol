// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

import {Deployers} from "./utils/Deployers.sol";
import {Deploy} from "../script/Deploy.sol";
import {LibSampling} from "../src/libraries/LibSampling.sol";
import {JobStatus, Verdict} from "../src/types/JobTypes.sol";
import {Role} from "../src/types/Role.sol";
import {IJobManager} from "../src/interfaces/IJobManager.sol";
import {IVerificationRound} from "../src/interfaces/IVerificationRound.sol";
import {Vm} from "@prb/test/Vm.sol";

/// @notice P-27 (docs/SECURITY.md): each verifier draws its own segments. Before, every verifier of
///         a job replayed the same q segments, so two verifiers of one operator needed one replay
///         (the twin sealed the copied ends) and the job got one verifier's coverage. Now each seat
///         draws q segments seeded by the round's randomness and the verifier; the sample is their
///         union, and a seat's sealed ends outside its own draw are ignored.
contract OwnDraws_Test is Deployers {
    /// @notice The issue's numbers: V = 3, q = 2, M = 12 segments.
    uint32 internal constant WIDE_STEPS = 24;
    uint32 internal constant WIDE_INTERVAL = 2;
    uint256 internal constant Q = 2;

    function setUp() public override {
        super.setUp();
        _deployOwn(0);
    }

    /// @notice Devnet defaults with V = 3, q = 2 and forced-error rate `rateBps`, and fresh actors.
    function _deployOwn(uint256 rateBps) internal {
        Deploy.Config memory cfg = Deploy.defaultConfig();
        cfg.params.samplesPerJob = uint32(Q);
        cfg.forcedErrorRateBps = rateBps;
        _deploy(cfg);
        delete verifierPool;
        _setUpActors();
    }

    /// @notice Posts, claims and commits a job of M = 12 segments (a spec of its own, P-26).
    function _committedWideJob() internal returns (uint256 jobId) {
        bytes32 specHash = keccak256(abi.encode(SPEC_HASH, "wide", _posts++));
        vm.prank(submitter);
        jobId = jobManager.postJob(MODEL_ID, specHash, INIT_HASH, WIDE_STEPS, WIDE_INTERVAL, REWARD, SPEC_URI);
        _claimAndCommit(jobId);
    }

    /// @notice Assigns `jobId` with randomness block hash `blockHash` (unless zero).
    function _assignWith(uint256 jobId, bytes32 blockHash) internal {
        vm.roll(block.number + 2);
        if (blockHash != bytes32(0)) vmx.setBlockhash(_job(jobId).randomnessBlock, blockHash);
        jobManager.assignVerifiers(jobId);
    }

    /// @notice The segments verifier `v` draws at the first assignment of `jobId`, as the contract
    ///         specifies them: LibSampling.drawSegments(keccak256(abi.encode(seed, "segments", v))).
    function _ownDraw(uint256 jobId, address v) internal view returns (uint32[] memory) {
        bytes32 seed = keccak256(abi.encode(blockhash(_job(jobId).randomnessBlock), jobId, _job(jobId).root));
        return LibSampling.drawSegments(keccak256(abi.encode(seed, "segments", v)), WIDE_STEPS / WIDE_INTERVAL, Q);
    }

    function _maskOf(uint256 jobId, address v) internal view returns (uint256) {
        return jobManager.sampleMaskOf(jobId, v);
    }

    function _popCount(uint256 mask) internal pure returns (uint256 count) {
        for (; mask != 0; mask >>= 1) {
            count += mask & 1;
        }
    }

    /// @notice What an honest verifier seals: the claimed end (its replay of an honest segment) on
    ///         its own samples, a zero end (nothing replayed) on the others.
    function _honestEnds(uint256 jobId, address v) internal view returns (bytes32[] memory ends) {
        (, bytes32[] memory claimed) = _claimsOf(_sid(jobId));
        uint256 mask = _maskOf(jobId, v);
        ends = new bytes32[](claimed.length);
        for (uint256 j; j < claimed.length; ++j) {
            if ((mask >> j) & 1 == 1) ends[j] = claimed[j];
        }
    }

    /// @notice Each seat holds exactly its own seeded draw and the last segment (P-36); the sample is
    ///         the union of the draws and the last segment in increasing segment order, every sample
    ///         of it has claims and at least one seat; and
    ///         unless the three draws coincide (probability 1/66^2) the job checks more than q = 2 of
    ///         its 12 segments. Before: every seat held the same 2 segments.
    function testFuzz_ownDraws_eachSeatItsOwnSegments_succeeds(bytes32 blockHash) public {
        vm.assume(blockHash != bytes32(0));
        uint256 jobId = _committedWideJob();
        _assignWith(jobId, blockHash);
        _postClaims(jobId);
        (address[] memory verifiers, uint32[] memory segments) = jobManager.getAssignment(jobId);
        assertEq(verifiers.length, 3);
        (bytes32[] memory starts,) = _claimsOf(_sid(jobId));
        assertEq(starts.length, segments.length, "a claim per sample of the union");
        for (uint256 i = 1; i < segments.length; ++i) {
            assertGt(uint256(segments[i]), uint256(segments[i - 1]), "increasing segment order");
        }
        uint256 covered;
        bool allSame = true;
        for (uint256 v; v < verifiers.length; ++v) {
            uint32[] memory own = _ownDraw(jobId, verifiers[v]);
            uint256 mask = _maskOf(jobId, verifiers[v]);
            bool drewLast;
            for (uint256 j; j < own.length; ++j) {
                if (own[j] == WIDE_STEPS / WIDE_INTERVAL - 1) drewLast = true;
            }
            assertEq(_popCount(mask), drewLast ? Q : Q + 1, "q samples per seat, and the last segment");
            assertEq((mask >> (segments.length - 1)) & 1, 1, "every seat holds the last segment (P-36)");
            for (uint256 j; j < own.length; ++j) {
                bool found;
                for (uint256 i; i < segments.length; ++i) {
                    if (segments[i] == own[j]) {
                        assertEq((mask >> i) & 1, 1, "the seat's mask holds its own draw");
                        found = true;
                    }
                }
                assertTrue(found, "its draw is in the union");
            }
            if (mask != _maskOf(jobId, verifiers[0])) allSame = false;
            covered |= mask;
        }
        assertEq(covered, (uint256(1) << segments.length) - 1, "every sample has a seat");
        assertEq(uint256(segments[segments.length - 1]), WIDE_STEPS / WIDE_INTERVAL - 1, "the last segment");
        if (!allSame) assertGt(segments.length, Q, "coverage grows with V");
    }

    /// @notice Over 32 draws the union averages about 12 * (1 - (10/12)^3) = 5.06 segments (one
    ///         verifier's draw: 2), and two seats seldom share their whole draw (1 in 66).
    function test_ownDraws_coverageGrowsWithV_succeeds() public {
        uint256 total;
        uint256 twins;
        for (uint256 t; t < 32; ++t) {
            // Each draw from the same state (stakes are not used up).
            uint256 snapshot = vmx.snapshotState();
            uint256 jobId = _committedWideJob();
            _assignWith(jobId, keccak256(abi.encode("draw", t)));
            (address[] memory verifiers, uint32[] memory segments) = jobManager.getAssignment(jobId);
            total += segments.length;
            for (uint256 a; a < verifiers.length; ++a) {
                for (uint256 b; b < a; ++b) {
                    if (_maskOf(jobId, verifiers[a]) == _maskOf(jobId, verifiers[b])) ++twins;
                }
            }
            vmx.revertToState(snapshot);
            ++_posts;
        }
        assertGte(total, 32 * 4, "about 5 segments checked per job, not 2");
        assertLte(twins, 8, "twin seats rarely hold the same samples (96 pairs, ~1.5 expected)");
    }

    /// @notice A twin seat seals its partner's ends instead of replaying: on its own samples that
    ///         its partner did not draw it copied zero ends (nothing was replayed there), so it
    ///         abstained: it earns no fee and forfeits the bond of each such abstention to the pool
    ///         (the third seat replayed the sample or the committee found it valid: the data was
    ///         there, docs/SECURITY.md P-33); the copied ends on the partner's samples are ignored
    ///         (Verdict.None, no bond). The partner and the third verifier, which replayed their own
    ///         samples, are paid; the solver gets its reward.
    function test_ownDraws_copierSeat_gainsNothing_succeeds() public {
        uint256 jobId;
        address copier;
        address partner;
        address third;
        for (uint256 t;; ++t) {
            jobId = _committedWideJob();
            _assignWith(jobId, keccak256(abi.encode("copier", t)));
            address[] memory seated = _assigned(jobId);
            (copier, partner, third) = (seated[0], seated[1], seated[2]);
            if (_maskOf(jobId, copier) & ~_maskOf(jobId, partner) != 0) break;
        }
        _postClaims(jobId);
        uint256 copierBefore = _holdings(copier);
        uint256 partnerBefore = _holdings(partner);
        uint256 thirdBefore = _holdings(third);
        uint256 solverBefore = _holdings(solver);

        bytes32[] memory partnerEnds = _honestEnds(jobId, partner);
        _submitEnds(jobId, partner, partnerEnds);
        _submitEnds(jobId, third, _honestEnds(jobId, third));
        _submitEnds(jobId, copier, partnerEnds);

        uint256 own = _maskOf(jobId, copier);
        Verdict[] memory verdicts = jobManager.verdictOf(jobId, copier);
        for (uint256 i; i < verdicts.length; ++i) {
            if ((own >> i) & 1 == 0) {
                assertEq(uint8(verdicts[i]), uint8(Verdict.None), "outside its draw: ignored");
            } else if ((_maskOf(jobId, partner) >> i) & 1 == 0) {
                assertEq(uint8(verdicts[i]), uint8(Verdict.Abstain), "nothing to copy: an abstention");
            } else {
                assertEq(uint8(verdicts[i]), uint8(Verdict.Approve), "the partner replayed it");
            }
        }
        _settle(jobId, true);

        assertEq(uint8(_job(jobId).status), uint8(JobStatus.Finalized), "finalized");
        uint256 abstained = _popCount(own & ~_maskOf(jobId, partner));
        assertEq(_holdings(copier), copierBefore - abstained * params.challengeBond, "the copier: no fee, bonds lost");
        assertEq(_holdings(partner), partnerBefore + params.verifierFee, "the partner is paid");
        assertEq(_holdings(third), thirdBefore + params.verifierFee, "the third verifier is paid");
        assertEq(_holdings(solver), solverBefore + REWARD, "the solver is paid its reward");
        _assertEscrowSolvent();
    }

    /// @notice A seat's ends outside its own draw never cost it a bond or open a dispute: made-up
    ///         ends there are ignored and the seat is paid for its own (approved) samples.
    function test_ownDraws_endsOutsideOwnDraw_ignored_succeeds() public {
        uint256 jobId = _committedWideJob();
        _assignWith(jobId, keccak256("ignored"));
        _postClaims(jobId);
        address[] memory verifiers = _assigned(jobId);
        uint256 before = _holdings(verifiers[0]);
        bytes32[] memory ends = _honestEnds(jobId, verifiers[0]);
        uint256 own = _maskOf(jobId, verifiers[0]);
        for (uint256 j; j < ends.length; ++j) {
            if ((own >> j) & 1 == 0) ends[j] = keccak256(abi.encode("made up", j));
        }
        uint256 balance = token.balanceOf(verifiers[0]);
        _submitEnds(jobId, verifiers[0], ends);
        _submitEnds(jobId, verifiers[1], _honestEnds(jobId, verifiers[1]));
        _submitEnds(jobId, verifiers[2], _honestEnds(jobId, verifiers[2]));
        assertEq(token.balanceOf(verifiers[0]), balance, "no bond pulled");
        assertEq(jobManager.disputedMaskOf(jobId), 0, "nothing disputed");
        _settle(jobId, true);
        assertEq(uint8(_job(jobId).status), uint8(JobStatus.Finalized), "finalized");
        assertEq(_holdings(verifiers[0]), before + params.verifierFee, "paid for its own samples");
    }

    /// @notice A solver that fakes a segment of one seat's draw is caught by that seat alone: its
    ///         rejection disputes the sample, the committee finds it invalid, the solver is slashed
    ///         and the rejecter wins; seats that did not draw it are neither slashed nor blamed.
    function test_ownDraws_cheatInOneSeatsDraw_caught_succeeds() public {
        uint256 jobId = _committedWideJob();
        _assignWith(jobId, keccak256("cheat"));
        _postClaims(jobId);
        address[] memory verifiers = _assigned(jobId);
        // The sample only verifiers[0] holds (searching seats in turn if it holds none alone).
        uint256 sample = type(uint256).max;
        address catcher;
        for (uint256 v; v < verifiers.length && sample == type(uint256).max; ++v) {
            uint256 others;
            for (uint256 w; w < verifiers.length; ++w) {
                if (w != v) others |= _maskOf(jobId, verifiers[w]);
            }
            uint256 alone = _maskOf(jobId, verifiers[v]) & ~others;
            for (uint256 i; alone != 0 && i < 64; ++i) {
                if ((alone >> i) & 1 == 1) {
                    (sample, catcher) = (i, verifiers[v]);
                    break;
                }
            }
        }
        assertTrue(catcher != address(0), "some sample is held by one seat alone");
        uint256 catcherBefore = _holdings(catcher);
        for (uint256 v; v < verifiers.length; ++v) {
            bytes32[] memory ends = _honestEnds(jobId, verifiers[v]);
            // Its replay of the faked segment disagrees with the claim.
            if (verifiers[v] == catcher) ends[sample] = keccak256("true replay");
            _submitEnds(jobId, verifiers[v], ends);
        }
        assertEq(jobManager.disputedMaskOf(jobId), uint256(1) << sample, "only the faked sample is disputed");
        _settle(jobId, false);
        assertEq(uint8(_job(jobId).status), uint8(JobStatus.Rejected), "rejected");
        assertGt(_holdings(catcher), catcherBefore, "the catcher wins a share of the solver's stake");
        for (uint256 v; v < verifiers.length; ++v) {
            assertEq(_locked(verifiers[v], Role.Verifier), 0, "every seat released");
        }
        _assertEscrowSolvent();
    }

    /// @notice The forced sample is always in some seat's draw, and only the seats that drew it
    ///         are judged on it: its holders that replayed win the jackpot, the other seats' (ignored)
    ///         approvals of the forced claim cost them nothing.
    function test_ownDraws_forcedSample_inSomeSeat_holdersJudged_succeeds() public {
        _deployOwn(3000);
        for (uint256 round_; round_ < 4; ++round_) {
            uint256 jobId = _forcedAssignedJob();
            (bool forced, uint256 f) = round.drawForcedError(_sid(jobId), _secret(jobId));
            assertTrue(forced);
            address[] memory verifiers = _assigned(jobId);
            uint256 covered;
            for (uint256 v; v < verifiers.length; ++v) {
                covered |= _maskOf(jobId, verifiers[v]);
            }
            assertEq((covered >> f) & 1, 1, "the forced sample is some seat's");
        }
        uint256 job = _forcedVerifyingJob();
        (, uint256 forcedSample) = round.drawForcedError(_sid(job), _secret(job));
        address[] memory seats = _assigned(job);
        uint256[] memory before = new uint256[](seats.length);
        for (uint256 v; v < seats.length; ++v) {
            before[v] = _holdings(seats[v]);
            bool holds = (_maskOf(job, seats[v]) >> forcedSample) & 1 == 1;
            // Holders replay (their end is the true end); the others approve every claim, the forced
            // one included: outside their draw that approval is ignored.
            _submit(job, seats[v], holds ? uint256(1) << forcedSample : 0);
        }
        _passChallengeWindow(job);
        jobManager.finalize(job);
        assertEq(uint8(_job(job).status), uint8(JobStatus.Finalized), "finalized");
        for (uint256 v; v < seats.length; ++v) {
            bool holds = (_maskOf(job, seats[v]) >> forcedSample) & 1 == 1;
            uint256 expected = before[v] + params.verifierFee + (holds ? params.jackpot : 0);
            assertEq(_holdings(seats[v]), expected, holds ? "holder: fee + jackpot" : "other seat: fee");
        }
        _assertEscrowSolvent();
    }

    /// @notice A reassignment (nobody revealed, P-8) keeps the sample and its claims; the new seats
    ///         draw among it and every sample keeps a seat.
    function test_ownDraws_reassignment_everySampleKeepsASeat_succeeds() public {
        uint256 jobId = _committedWideJob();
        _assignWith(jobId, keccak256("first"));
        _postClaims(jobId);
        (, uint32[] memory segments) = jobManager.getAssignment(jobId);
        // Nobody reveals: the round ends without verdicts.
        vm.warp(uint256(_job(jobId).challengeDeadline) + 1);
        jobManager.finalize(jobId);
        assertEq(uint8(_job(jobId).status), uint8(JobStatus.Committed), "reassigning");
        _assignWith(jobId, keccak256("second"));
        (address[] memory verifiers, uint32[] memory kept) = jobManager.getAssignment(jobId);
        assertEq(keccak256(abi.encode(kept)), keccak256(abi.encode(segments)), "the sample is kept");
        assertEq(keccak256(abi.encode(jobManager.segmentsOf(jobId))), keccak256(abi.encode(kept)), "segmentsOf");
        uint256 covered;
        for (uint256 v; v < verifiers.length; ++v) {
            uint256 mask = _maskOf(jobId, verifiers[v]);
            assertGte(_popCount(mask), Q, "q samples at least");
            assertEq(mask >> segments.length, 0, "within the sample");
            covered |= mask;
        }
        assertEq(covered, (uint256(1) << segments.length) - 1, "every sample has a seat");
    }

    /// @notice After a reassignment the silent seats of the previous draw (Missed, their sample masks
    ///         kept) are no verifiers of the job: they cannot seal, and `seatOf` names exactly the
    ///         current verifiers as assigned (the round's membership check).
    function test_ownDraws_reassignment_silentSeatsCannotSeal_reverts() public {
        uint256 jobId = _committedWideJob();
        _assignWith(jobId, keccak256("first"));
        _postClaims(jobId);
        address[] memory silent = _assigned(jobId);
        vm.warp(uint256(_job(jobId).challengeDeadline) + 1);
        jobManager.finalize(jobId);
        _assignWith(jobId, keccak256("second"));
        address[] memory current = _assigned(jobId);
        for (uint256 v; v < current.length; ++v) {
            (bool assigned,,,,) = jobManager.seatOf(_sid(jobId), current[v]);
            assertTrue(assigned, "a current verifier is assigned");
        }
        for (uint256 v; v < silent.length; ++v) {
            (bool assigned, uint64 mask,,,) = jobManager.seatOf(_sid(jobId), silent[v]);
            assertFalse(assigned, "a silent seat is no longer assigned");
            assertTrue(mask != 0, "its sample mask stays");
            vm.expectRevert(
                abi.encodeWithSelector(IVerificationRound.NotAssignedVerifier.selector, _sid(jobId), silent[v])
            );
            vm.prank(silent[v]);
            round.commitVerdicts(_sid(jobId), keccak256("late seal"));
        }
    }

    /// @notice A job of M = 12 segments assigned so that seat 0 holds samples no other seat holds;
    ///         returns them (bit i = sample i) with the seats, claims posted.
    function _jobWithSoleHolder(string memory tag)
        internal
        returns (uint256 jobId, address[] memory seats, uint256 alone)
    {
        for (uint256 t;; ++t) {
            jobId = _committedWideJob();
            _assignWith(jobId, keccak256(abi.encode(tag, t)));
            seats = _assigned(jobId);
            alone = _maskOf(jobId, seats[0]) & ~(_maskOf(jobId, seats[1]) | _maskOf(jobId, seats[2]));
            if (alone != 0) break;
        }
        _postClaims(jobId);
    }

    /// @notice The verifiers of the last `VerifiersAssigned` event in the recorded logs, with each
    ///         seat's sample mask: the kept seats must be named too, so that their nodes watch the
    ///         job again (a kept rejecter plays its dispute).
    function _assignedWithMasksInLogs() internal returns (address[] memory verifiers, uint64[] memory masks) {
        Vm.Log[] memory logs = vm.getRecordedLogs();
        for (uint256 i; i < logs.length; ++i) {
            if (logs[i].topics[0] == IJobManager.VerifiersAssigned.selector) {
                (verifiers, masks,,,) = abi.decode(logs[i].data, (address[], uint64[], uint32[], uint64, uint64));
            }
        }
    }

    /// @notice `VerifiersAssigned` names every seat with its own sample mask, in seat order: each
    ///         equal to the seat's `sampleMaskOf`, at the first assignment and on a reassignment
    ///         (the kept seats' masks read back from their seats).
    function _assertEventMasks(uint256 jobId, address[] memory verifiers, uint64[] memory masks) internal {
        address[] memory seats = _assigned(jobId);
        assertEq(keccak256(abi.encode(verifiers)), keccak256(abi.encode(seats)), "every seat, in seat order");
        assertEq(masks.length, seats.length, "one mask per seat");
        for (uint256 v; v < seats.length; ++v) {
            assertEq(uint256(masks[v]), _maskOf(jobId, seats[v]), "the seat's own samples");
            assertGt(uint256(masks[v]), 0, "a seat verifies some sample");
        }
    }

    function test_assign_eventCarriesEverySeatsSampleMask_succeeds() public {
        uint256 jobId = _committedWideJob();
        vm.recordLogs();
        _assignWith(jobId, keccak256("first"));
        (address[] memory verifiers, uint64[] memory masks) = _assignedWithMasksInLogs();
        _assertEventMasks(jobId, verifiers, masks);
    }

    function _lowestBit(uint256 mask) internal pure returns (uint256 index) {
        while ((mask >> index) & 1 == 0) ++index;
    }

    /// @notice The hole own draws opened, closed: the solver fakes a segment that only its
    ///         accomplice's seat drew, and the accomplice stays silent. Before, the other seats'
    ///         verdicts let the secret be revealed and the job finalized with the faked segment never
    ///         checked (the cheat cost one verifier stake). Now the secret reveal waits until every
    ///         sample has a revealed verdict (SamplesUncovered), the round is reassigned keeping the
    ///         two seats that revealed, and one new verifier (none of the previous seats) draws the
    ///         uncovered samples, rejects the fake and wins: the solver and the accomplice are
    ///         slashed, every honest party keeps or gains.
    function test_ownDraws_silentSoleHolder_cheatReassignedAndCaught_succeeds() public {
        (uint256 jobId, address[] memory seats, uint256 alone) = _jobWithSoleHolder("sole");
        uint256 faked = _lowestBit(alone);
        // Holdings of: the two honest seats, the submitter, the solver, the accomplice (seat 0).
        address[5] memory parties = [seats[1], seats[2], submitter, solver, seats[0]];
        uint256[5] memory before;
        for (uint256 i; i < 5; ++i) {
            before[i] = _holdings(parties[i]);
        }

        _submitEnds(jobId, seats[1], _honestEnds(jobId, seats[1]));
        _submitEnds(jobId, seats[2], _honestEnds(jobId, seats[2]));
        _revealPending(jobId);
        uint256 uncovered = _maskOf(jobId, seats[0]) & ~(_maskOf(jobId, seats[1]) | _maskOf(jobId, seats[2]));
        assertEq(_uncovered(jobId), uncovered, "the accomplice's own samples are uncovered");
        _expectSecretRevealUncovered(jobId, uncovered);

        jobManager.finalize(jobId);
        assertEq(uint8(_job(jobId).status), uint8(JobStatus.Committed), "reassigning the uncovered samples");
        vm.recordLogs();
        _assignWith(jobId, keccak256("second draw"));
        address[] memory now_ = _assigned(jobId);
        (address[] memory named, uint64[] memory masks) = _assignedWithMasksInLogs();
        _assertEventMasks(jobId, named, masks);
        assertEq(now_.length, 3, "two kept seats and one new one");
        assertEq(now_[0], seats[1], "kept: it revealed");
        assertEq(now_[1], seats[2], "kept: it revealed");
        address newcomer = now_[2];
        assertTrue(!_isIn(seats, newcomer), "no previous seat is drawn again");
        assertEq(_maskOf(jobId, newcomer), uncovered, "the new seat holds exactly the uncovered samples");

        bytes32[] memory ends = _honestEnds(jobId, newcomer);
        ends[faked] = keccak256("true replay"); // its replay disagrees with the faked claim
        uint256 newcomerBefore = _holdings(newcomer);
        _submitEnds(jobId, newcomer, ends);
        _settle(jobId, false);

        assertEq(uint8(_job(jobId).status), uint8(JobStatus.Rejected), "the fake is caught");
        assertEq(_holdings(parties[0]), before[0] + params.verifierFee, "honest seat: its fee");
        assertEq(_holdings(parties[1]), before[1] + params.verifierFee, "honest seat: its fee");
        assertGt(_holdings(newcomer), newcomerBefore + params.verifierFee, "the new seat wins the dispute");
        assertGte(_holdings(submitter), before[2] + REWARD, "the submitter gets its reward back");
        assertLt(_holdings(solver), before[3], "the cheating solver is slashed");
        assertEq(_holdings(parties[4]), before[4] - params.verifierStake, "silence costs the accomplice its stake");
        _assertEscrowSolvent();
    }

    /// @notice Past the challenge deadline, the solver's secret reveal reverts SamplesUncovered with
    ///         exactly `uncovered`.
    function _expectSecretRevealUncovered(uint256 jobId, uint256 uncovered) internal {
        vm.warp(uint256(_job(jobId).challengeDeadline) + 1);
        bytes32[] memory proof = _claimsProofOf(jobId);
        bytes32 secret = _secret(jobId);
        vm.expectRevert(
            abi.encodeWithSelector(IVerificationRound.SamplesUncovered.selector, _sid(jobId), uint64(uncovered))
        );
        vm.prank(solver);
        round.revealSecret(_sid(jobId), secret, bytes32(0), proof, _claimsArg(_sid(jobId)));
    }

    /// @notice When the uncovered samples stay silent through every reassignment the job expires
    ///         without a loss to any honest party: the silent seats are slashed, the seats that
    ///         revealed are paid their fee and released, the submitter gets its reward and the
    ///         remaining fees back, and the solver, never proven wrong, is unlocked unslashed.
    function test_ownDraws_uncoveredThroughEveryReassignment_expires_succeeds() public {
        (uint256 jobId, address[] memory seats,) = _jobWithSoleHolder("expire");
        uint256[3] memory before = [_holdings(seats[1]), _holdings(seats[2]), _holdings(submitter)];
        uint256 solverBefore = _holdings(solver);
        _submitEnds(jobId, seats[1], _honestEnds(jobId, seats[1]));
        _submitEnds(jobId, seats[2], _honestEnds(jobId, seats[2]));
        address[] memory silent = new address[](1 + params.maxReassignments);
        silent[0] = seats[0];
        for (uint256 r; r <= params.maxReassignments; ++r) {
            _passChallengeWindow(jobId);
            jobManager.finalize(jobId);
            if (r == params.maxReassignments) break;
            _assignWith(jobId, keccak256(abi.encode("again", r)));
            address[] memory now_ = _assigned(jobId);
            assertEq(now_.length, 3, "kept seats and one new one");
            silent[r + 1] = now_[2];
        }
        assertEq(uint8(_job(jobId).status), uint8(JobStatus.Expired), "expired");
        assertEq(_holdings(seats[1]), before[0] + params.verifierFee, "revealed: paid its fee");
        assertEq(_holdings(seats[2]), before[1] + params.verifierFee, "revealed: paid its fee");
        assertEq(_holdings(submitter), before[2] + REWARD + params.verifierFee, "reward and the unearned fee back");
        assertEq(_holdings(solver), solverBefore, "the solver keeps its stake");
        assertEq(_locked(solver, Role.Solver), 0, "solver unlocked");
        for (uint256 i; i < silent.length; ++i) {
            assertEq(_locked(silent[i], Role.Verifier), 0, "silent seat settled");
        }
        assertEq(_locked(seats[1], Role.Verifier), 0, "released");
        assertEq(_locked(seats[2], Role.Verifier), 0, "released");
        _assertEscrowSolvent();
    }
}
