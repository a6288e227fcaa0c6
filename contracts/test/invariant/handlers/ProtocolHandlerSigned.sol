// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

// Testing
import {Vm} from "@prb/test/Vm.sol";
import {VmExt} from "../../utils/VmExt.sol";
import {ProtocolHandlerPayouts} from "./ProtocolHandlerPayouts.sol";
// Interfaces
import {IEscrow} from "../../../src/interfaces/IEscrow.sol";
import {IStakeManager} from "../../../src/interfaces/IStakeManager.sol";
// Types
import {Bucket} from "../../../src/types/EscrowTypes.sol";
import {Job, JobStatus, Verdict} from "../../../src/types/JobTypes.sol";
import {Role} from "../../../src/types/Role.sol";
import {Claims, SignedReveal} from "../../../src/types/RoundTypes.sol";
import {SubmissionId} from "../../../src/types/SubmissionId.sol";

/// @title ProtocolHandlerSigned
/// @notice `ProtocolHandler`'s actions on a seat's EIP-712 seal beyond the batches of P10
///         (docs/SECURITY.md P-40): every seat sealed and revealed in one `revealVerdictsSigned`
///         (P13), and proofs that a seat signed two seals for one submission (`proveEquivocation`,
///         P14), with the ghosts that check them and the check that a voided seat is never paid.
abstract contract ProtocolHandlerSigned is ProtocolHandlerPayouts {
    /// @notice What a proof of equivocation must book, read just before it (`_proofBefore`): the
    ///         seat and the prover, the seat's reject bonds (from the handler's records), the
    ///         whistleblowers of its approvals with an open challenge (one entry per challenge) and
    ///         their credits, the samples they challenged, the prover's holdings, the seat's
    ///         verifier stake and the Escrow's liabilities.
    struct Proof {
        address seat;
        address prover;
        uint256 rejectBonds;
        address[] challengers;
        uint256[] creditsBefore;
        uint256 challenged;
        uint256 proverBefore;
        uint256 stakedBefore;
        uint256 lockedBefore;
        uint256 escrowed;
        uint256 bonds;
        uint256 credits;
        uint256 pool;
    }

    /// @notice A seat's two signed seals for one submission (`_twoSeals`).
    struct Seals {
        bytes32 own;
        bytes ownSignature;
        bytes32 second;
        bytes secondSignature;
        bool againstStored;
    }

    ////// State //////

    /// @notice A key of no role: the equivocating seat's own second account, which proves the
    ///         seat's equivocation itself (P14: it gains nothing by it).
    address public secondKey;
    /// @notice Seats voided per submission (`_voided`), so that later settlements are checked.
    mapping(SubmissionId submissionId => uint256 count) internal _voidedCount;
    /// @notice Accounts that challenged an approval of the job as whistleblowers: a voided seat that
    ///         did may still be paid in that role (its bond back, a jackpot, a pot share).
    mapping(uint256 jobId => mapping(address account => bool challenged)) internal _challengedOn;

    /// @custom:property-id P13 One-shot signed reveals that went through (progress).
    uint256 public ghost_signedReveals;
    /// @custom:property-id P13 Seats a `revealVerdictsSigned` did not leave as they signed: a seal
    ///                      stored, a seat unrevealed, a verdict on a sample of its own draw other
    ///                      than its signed end implies (approve the claim, abstain a zero end,
    ///                      reject any other), a verdict on another sample, bonds other than one
    ///                      `challengeBond` per non-approval locked from its own verifier stake
    ///                      (its wallet and the Escrow's bonds untouched), or the
    ///                      round not counting every seat as sealed.
    uint256 public ghost_signedSeatMisrecorded;
    /// @custom:property-id P13 One-shot reveals with a seat that could not cover its bonds that went
    ///                      through, or left any seat revealed (no seat may be skipped, P-40).
    uint256 public ghost_signedRevealNotWhole;
    /// @custom:property-id P13 Draws of a Verifying job, its round counting no seal, with a seat whose
    ///                      seal of an earlier draw of the submission is still stored: a verifier
    ///                      seated on the submission twice (docs/SECURITY.md P-42).
    uint256 public ghost_staleSeals;
    /// @custom:property-id P13 One-shot reveals accepted while a seat of the draw had a seal on chain
    ///                      from an earlier draw of the submission (it must revert `SealsOnChain`,
    ///                      docs/SECURITY.md P-40), tried in a snapshot thrown away after
    ///                      (`_probeSealOnChain`).
    uint256 public ghost_signedOverSealOnChain;
    /// @custom:property-id P13 One-shot reveals whose sender stripped the ends of every entry (an
    ///                      entry without ends opens the claimed ends) that went through or left a
    ///                      seat revealed although a seat had signed ends other than the claims: a
    ///                      reject turned into an approval by its aggregator.
    uint256 public ghost_strippedRejectRecorded;
    /// @custom:property-id P14 Proven equivocations (progress).
    uint256 public ghost_equivocations;
    /// @custom:property-id P14 Proofs that did not move exactly one verifierStake of the seat plus its
    ///                      reject bonds into the jackpot pool, return each open challenge of its
    ///                      approvals to its whistleblower as credit, and leave the escrowed fees.
    uint256 public ghost_equivocationMisbooked;
    /// @custom:property-id P14 Provers whose wallet + credit + stake a proof changed by anything but
    ///                      the return of their own challenge bonds (the seat proving itself: by
    ///                      exactly minus one verifierStake and its reject bonds).
    uint256 public ghost_proverPaid;
    /// @custom:property-id P14 Proven seats left with a verdict, a sample, their seat, or a challenge
    ///                      of their approvals.
    uint256 public ghost_voidedSeatStanding;
    /// @custom:property-id P14 Payments, credits or stake unlocks to a voided seat in a later finalize,
    ///                      resolve or expiry of its job: a fee (Escrowed bucket) ever, anything else
    ///                      unless the account also challenged an approval of the job or sits on the
    ///                      resolving committee.
    uint256 public ghost_voidedSeatPaid;
    /// @custom:property-id P14 Voided seats whose job a checked call ended (progress).
    uint256 public ghost_voidedSettled;

    ////// Actions //////

    /// @notice One-shot signed reveal (docs/SECURITY.md P-40): while no seat of a Verifying job with
    ///         claims has a seal on chain (never with the silent seat, which never seals), each seat
    ///         seals its ends as in `batchVerdicts` (`_sealOf`), signs the seal and hands over its
    ///         opening; the job's solver or a stranger (the whistleblower) sends every opening in one
    ///         `revealVerdictsSigned`. In one call in four a rejecting seat first revokes its Escrow
    ///         allowance: the whole call must revert with no seat recorded, and goes through once
    ///         the seat allows the Escrow again (P13).
    function signedVerdicts(uint256 jobSeed, uint256 maskSeed) external {
        _signedVerdicts(jobSeed, maskSeed);
    }

    function _signedVerdicts(uint256 jobSeed, uint256 maskSeed) internal {
        uint256 jobId = _pickWhere(jobSeed, _signable);
        if (jobId == 0) return;
        if (_sealOnChain(jobId)) return _probeSealOnChain(jobId, maskSeed);
        (SignedReveal[] memory reveals, address sender) = _openings(jobId, maskSeed);
        // A refused call that recorded anything is counted, and then sent no more.
        if (_roll(maskSeed, "signed uncovered") % 4 == 0 && _sendSignedUncovered(jobId, reveals, sender)) return;
        if (_roll(maskSeed, "signed stripped") % 3 == 0 && _sendStripped(jobId, reveals, sender)) return;
        _sendSigned(jobId, reveals, sender, _roll(maskSeed, "signed short") % 2 == 0);
    }

    /// @notice ATTACK: the sender strips the ends of every entry, so that each opens the claimed
    ///         ends, as if every seat had approved every sample. When some seat signed other ends
    ///         the call must revert whole (its signature does not check over the claims, P13),
    ///         leaving no seat revealed; the honest entries are then sent (by the caller). When
    ///         every seat did approve, it is the honest shortcut: not tried here (`_sendSigned`).
    /// @return recorded Whether the call went through or left a seat revealed.
    function _sendStripped(uint256 jobId, SignedReveal[] memory reveals, address sender)
        internal
        returns (bool recorded)
    {
        SubmissionId sid = _sid(jobId);
        (, bytes32[] memory claimed) = _claimsOf(sid);
        bool rejects;
        SignedReveal[] memory stripped = new SignedReveal[](reveals.length);
        for (uint256 i; i < reveals.length; ++i) {
            if (keccak256(abi.encode(reveals[i].ends)) != keccak256(abi.encode(claimed))) rejects = true;
            stripped[i] = SignedReveal({
                verifier: reveals[i].verifier,
                ends: new bytes32[](0),
                salt: reveals[i].salt,
                signature: reveals[i].signature
            });
        }
        if (!rejects) return false;
        recorded = _trySigned(jobId, stripped, sender);
        if (recorded) ++ghost_strippedRejectRecorded;
        ++ghost_calls["revealVerdictsSigned stripped"];
    }

    /// @notice Every seat of `jobId` seals its ends as in `batchVerdicts` (`_sealOf`) and hands over
    ///         its signed opening; the sender is the job's solver or a stranger (the whistleblower).
    function _openings(uint256 jobId, uint256 maskSeed)
        internal
        returns (SignedReveal[] memory reveals, address sender)
    {
        (address[] memory seats, uint32[] memory segments) = jobManager.getAssignment(jobId);
        reveals = new SignedReveal[](seats.length);
        for (uint256 i; i < seats.length; ++i) {
            _sealOf(jobId, seats[i], segments, uint256(keccak256(abi.encode(maskSeed, seats[i]))));
            reveals[i] = _opening(jobId, seats[i], segments);
            _coverBonds(seats[i], segments.length);
        }
        address solver = jobManager.getJob(jobId).solver;
        sender = _roll(maskSeed, "signed sender") % 2 == 0 ? solver : whistleblowers[0];
    }

    /// @notice Whether a seat of `jobId`'s draw has a seal on chain although the round counts none
    ///         (`_signable`): a seat that sealed in an earlier draw of the submission, never revealed
    ///         (Missed), and was drawn again, which a reassignment must never do (P-42).
    function _sealOnChain(uint256 jobId) internal view returns (bool) {
        (address[] memory seats,) = jobManager.getAssignment(jobId);
        for (uint256 i; i < seats.length; ++i) {
            (bytes32 stored,) = round.verdictCommitmentOf(_sid(jobId), seats[i]);
            if (stored != bytes32(0)) return true;
        }
        return false;
    }

    /// @notice With a seal of an earlier draw on chain (`_sealOnChain`, counted in `ghost_staleSeals`),
    ///         tries the one-shot reveal in a snapshot thrown away after: `ghost_signedOverSealOnChain`
    ///         counts it going through although a seat of the draw has a seal on chain (P13; the
    ///         handler's seats then keep to their two-call path and reveal the seal they stored).
    function _probeSealOnChain(uint256 jobId, uint256 maskSeed) internal {
        ++ghost_staleSeals;
        uint256 snapshot = VmExt(address(vm)).snapshotState();
        (SignedReveal[] memory reveals, address sender) = _openings(jobId, maskSeed);
        SubmissionId sid = _sid(jobId);
        Claims memory claims = _claimsArg(sid);
        bool accepted;
        vm.prank(sender);
        try round.revealVerdictsSigned(sid, reveals, claims) {
            accepted = true;
        } catch {}
        VmExt(address(vm)).revertToState(snapshot);
        if (accepted) ++ghost_signedOverSealOnChain;
        ++ghost_calls["revealVerdictsSigned probed"];
    }

    /// @notice Whether `jobId`'s seats can all be revealed in one shot now: Verifying with its claims
    ///         posted, before the verdict deadline, no seal counted by the round (a seal left from an
    ///         earlier draw is `_sealOnChain`'s case), and no silent seat (it never seals).
    function _signable(uint256 jobId) internal view returns (bool) {
        Job memory job = jobManager.getJob(jobId);
        if (job.status != JobStatus.Verifying || block.timestamp > job.verdictDeadline) return false;
        SubmissionId sid = _sid(jobId);
        (bytes32[] memory starts,) = _claimsOf(sid);
        (,, uint32 committed,) = round.roundOf(sid);
        (address[] memory seats,) = jobManager.getAssignment(jobId);
        return starts.length != 0 && committed == 0 && !_contains(seats, silentSeat);
    }

    /// @notice The first job from `seed` (in `_pick`'s order, over every job) that is `eligible`;
    ///         0 if none is.
    function _pickWhere(uint256 seed, function(uint256) internal view returns (bool) eligible)
        internal
        view
        returns (uint256 jobId)
    {
        uint256 count = jobManager.jobCount();
        for (uint256 i; i < count; ++i) {
            jobId = (seed % count + i) % count + 1;
            if (eligible(jobId)) return jobId;
        }
        return 0;
    }

    /// @notice `seat`'s opening of the seal it made (`_sealed`, usual salt), with its signature.
    function _opening(uint256 jobId, address seat, uint32[] memory segments)
        internal
        view
        returns (SignedReveal memory reveal)
    {
        bytes32[] memory ends = _ends(jobId, segments, _sealed[jobId][seat]);
        bytes32 salt = _verdictSalt(jobId, seat);
        bytes32 commitment = keccak256(abi.encode(jobId, seat, ends, salt));
        reveal = SignedReveal({
            verifier: seat, ends: ends, salt: salt, signature: _sealSignature(seat, _sid(jobId), commitment)
        });
    }

    /// @notice `seat`'s EIP-712 signature of the seal `commitment` of `sid`.
    function _sealSignature(address seat, SubmissionId sid, bytes32 commitment) internal view returns (bytes memory) {
        (uint8 v, bytes32 r, bytes32 s) = vm.sign(_keyOf[seat], round.sealDigest(sid, commitment));
        return abi.encodePacked(r, s, v);
    }

    /// @notice The first seat of `reveals` whose reveal locks a bond (two non-approvals of its own
    ///         samples or more: the first bond is in its seat's lock) loses its free verifier stake (locked
    ///         as if by other seats, `_hideFreeStake`), and `sender`'s one-shot reveal must revert
    ///         whole (P13); the seat then gets it back.
    /// @return recorded Whether the call went through or left a seat revealed.
    function _sendSignedUncovered(uint256 jobId, SignedReveal[] memory reveals, address sender)
        internal
        returns (bool recorded)
    {
        address uncovered;
        for (uint256 i; i < reveals.length && uncovered == address(0); ++i) {
            // Two rejects: the second bond is the first its free stake must cover.
            if (_ownNonApprovals(jobId, reveals[i].verifier, reveals[i].ends) > 1) uncovered = reveals[i].verifier;
        }
        if (uncovered == address(0)) return false;
        uint256 hidden = _hideFreeStake(uncovered);
        recorded = _trySigned(jobId, reveals, sender);
        if (recorded) ++ghost_signedRevealNotWhole;
        _restoreFreeStake(uncovered, hidden);
        ++ghost_calls["revealVerdictsSigned reverted"];
    }

    /// @notice `sender` tries `reveals` in one `revealVerdictsSigned` that must revert whole.
    /// @return recorded Whether the call went through or left a seat of `reveals` revealed.
    function _trySigned(uint256 jobId, SignedReveal[] memory reveals, address sender) internal returns (bool recorded) {
        SubmissionId sid = _sid(jobId);
        Claims memory claims = _claimsArg(sid);
        vm.prank(sender);
        try round.revealVerdictsSigned(sid, reveals, claims) {
            recorded = true;
        } catch {}
        for (uint256 i; i < reveals.length; ++i) {
            if (_revealed(jobId, reveals[i].verifier)) recorded = true;
        }
    }

    /// @notice `sender` sends `reveals` in one `revealVerdictsSigned` and checks P10 (the sender pays
    ///         nothing) and P13 (every seat recorded as it signed, each locking its own bonds from
    ///         its verifier stake: its wallet and the Escrow's bonds untouched). With `short`, an
    ///         entry whose ends are the claimed ends goes without them, as the client sends it.
    function _sendSigned(uint256 jobId, SignedReveal[] memory reveals, address sender, bool short) internal {
        SubmissionId sid = _sid(jobId);
        // Per seat: its wallet, and its locked verifier stake plus the bonds its reveal books.
        uint256[] memory balances = new uint256[](reveals.length);
        uint256[] memory lockedAfter = new uint256[](reveals.length);
        for (uint256 i; i < reveals.length; ++i) {
            balances[i] = token.balanceOf(reveals[i].verifier);
            (, uint256 locked,,) = stakeManager.stakeOf(reveals[i].verifier, Role.Verifier);
            lockedAfter[i] = locked + _revealLock(_ownNonApprovals(jobId, reveals[i].verifier, reveals[i].ends));
        }
        uint256 bonds = escrow.bucketOf(Bucket.Bonds);
        (uint256 balance, uint256 credit) = (token.balanceOf(sender), escrow.creditOf(sender));
        _submitSigned(sid, reveals, sender, short);
        if (token.balanceOf(sender) != balance || escrow.creditOf(sender) != credit) ++ghost_batchSenderCharged;
        (,, uint32 committed,) = round.roundOf(sid);
        if (committed != reveals.length || escrow.bucketOf(Bucket.Bonds) != bonds) ++ghost_signedSeatMisrecorded;
        for (uint256 i; i < reveals.length; ++i) {
            address seat = reveals[i].verifier;
            (, uint256 locked,,) = stakeManager.stakeOf(seat, Role.Verifier);
            if (token.balanceOf(seat) != balances[i] || locked != lockedAfter[i]) ++ghost_signedSeatMisrecorded;
            if (!_recordedAsSigned(jobId, seat, reveals[i].ends)) ++ghost_signedSeatMisrecorded;
        }
        ++ghost_signedReveals;
        ++ghost_calls["revealVerdictsSigned"];
    }

    /// @notice `sender` sends `reveals` in one `revealVerdictsSigned`, shortened (`_shortened`) when
    ///         `short`.
    function _submitSigned(SubmissionId sid, SignedReveal[] memory reveals, address sender, bool short) internal {
        Claims memory claims = _claimsArg(sid);
        SignedReveal[] memory sent = short ? _shortened(reveals, claims.endHashes) : reveals;
        vm.prank(sender);
        round.revealVerdictsSigned(sid, sent, claims);
    }

    /// @notice `reveals` with the ends of every entry whose ends are exactly `claimed` left out.
    function _shortened(SignedReveal[] memory reveals, bytes32[] memory claimed)
        internal
        pure
        returns (SignedReveal[] memory sent)
    {
        sent = new SignedReveal[](reveals.length);
        for (uint256 i; i < reveals.length; ++i) {
            sent[i] = reveals[i];
            if (keccak256(abi.encode(reveals[i].ends)) != keccak256(abi.encode(claimed))) continue;
            sent[i] = SignedReveal({
                verifier: reveals[i].verifier,
                ends: new bytes32[](0),
                salt: reveals[i].salt,
                signature: reveals[i].signature
            });
        }
    }

    /// @notice Whether `seat` is revealed with no seal stored and the verdicts its signed `ends`
    ///         imply on its own samples (none elsewhere).
    function _recordedAsSigned(uint256 jobId, address seat, bytes32[] memory ends) internal view returns (bool) {
        SubmissionId sid = _sid(jobId);
        (bytes32 stored, bool revealed) = round.verdictCommitmentOf(sid, seat);
        if (stored != bytes32(0) || !revealed) return false;
        (, bytes32[] memory claimed) = _claimsOf(sid);
        Verdict[] memory verdicts = jobManager.verdictOf(jobId, seat);
        uint256 own = jobManager.sampleMaskOf(jobId, seat);
        if (verdicts.length != ends.length) return false;
        for (uint256 j; j < ends.length; ++j) {
            Verdict expected = Verdict.None;
            if ((own >> j) & 1 == 1) {
                expected =
                    ends[j] == claimed[j] ? Verdict.Approve : ends[j] == bytes32(0) ? Verdict.Abstain : Verdict.Reject;
            }
            if (verdicts[j] != expected) return false;
        }
        return true;
    }

    /// @notice A standing seat of a Verifying job that revealed (by any path) signs a second seal for
    ///         the submission (another seat's ends under a salt of its own), and a prover (the
    ///         whistleblower, the seat's own second key, the seat itself, the job's solver or a pool
    ///         verifier) proves it before the challenge deadline: with both signatures or, for a seat
    ///         whose seal is on chain, half the time with an empty second signature against the
    ///         stored seal (P14).
    function equivocate(uint256 jobSeed, uint256 verifierSeed) external {
        _equivocate(jobSeed, verifierSeed);
    }

    function _equivocate(uint256 jobSeed, uint256 verifierSeed) internal {
        uint256 jobId = _pickWhere(jobSeed, _provable);
        if (jobId == 0) return;
        SubmissionId sid = _sid(jobId);
        (address[] memory seats,) = jobManager.getAssignment(jobId);
        uint256 index = verifierSeed % seats.length;
        while (!_standing(sid, seats[index])) {
            index = (index + 1) % seats.length;
        }
        address seat = seats[index];
        Seals memory seals = _twoSeals(jobId, seat, seats[(index + 1) % seats.length], verifierSeed);
        Proof memory p = _proofBefore(jobId, seat, _prover(jobId, seat, verifierSeed));
        _allow(seat, Role.Verifier);
        vm.recordLogs();
        vm.prank(p.prover);
        if (seals.againstStored) {
            round.proveEquivocation(sid, seat, seals.second, seals.secondSignature, seals.own, "");
            ++ghost_calls["proveEquivocation stored"];
        } else if (_roll(verifierSeed, "order") % 2 == 0) {
            round.proveEquivocation(sid, seat, seals.own, seals.ownSignature, seals.second, seals.secondSignature);
        } else {
            round.proveEquivocation(sid, seat, seals.second, seals.secondSignature, seals.own, seals.ownSignature);
        }
        _checkSlashesIn(vm.getRecordedLogs());
        _checkProof(jobId, p);
        _voided[sid][seat] = true;
        ++_voidedCount[sid];
        ++ghost_equivocations;
        ++ghost_calls["proveEquivocation"];
    }

    /// @notice Whether a seat of `jobId` can be proven now: Verifying, by its challenge deadline, with
    ///         a seat that revealed and stands.
    function _provable(uint256 jobId) internal view returns (bool) {
        Job memory job = jobManager.getJob(jobId);
        if (job.status != JobStatus.Verifying || block.timestamp > job.challengeDeadline) return false;
        (address[] memory seats,) = jobManager.getAssignment(jobId);
        for (uint256 i; i < seats.length; ++i) {
            if (_standing(_sid(jobId), seats[i])) return true;
        }
        return false;
    }

    /// @notice Whether `seat` revealed its verdicts on `sid` and still stands (never settled).
    function _standing(SubmissionId sid, address seat) internal view returns (bool) {
        (bool assigned,, bool revealed,,) = jobManager.seatOf(sid, seat);
        return assigned && revealed;
    }

    /// @notice `seat`'s two seals of `jobId`'s submission, each signed: its own (on chain when it
    ///         sealed there, else the seal of its one-shot opening) and a second one that copies
    ///         `copied`'s ends under a salt of its own. Against a stored seal, half the time
    ///         (`seed`), the proof leaves the second signature empty (`againstStored`).
    function _twoSeals(uint256 jobId, address seat, address copied, uint256 seed)
        internal
        view
        returns (Seals memory seals)
    {
        SubmissionId sid = _sid(jobId);
        (, uint32[] memory segments) = jobManager.getAssignment(jobId);
        (bytes32 stored,) = round.verdictCommitmentOf(sid, seat);
        seals.own = stored;
        if (stored == bytes32(0)) {
            bytes32[] memory ends = _ends(jobId, segments, _sealed[jobId][seat]);
            seals.own = keccak256(abi.encode(jobId, seat, ends, _verdictSalt(jobId, seat)));
        }
        bytes32 salt = keccak256(abi.encode("second salt", jobId, seat));
        seals.second = keccak256(abi.encode(jobId, seat, _ends(jobId, segments, _sealed[jobId][copied]), salt));
        seals.secondSignature = _sealSignature(seat, sid, seals.second);
        seals.againstStored = stored != bytes32(0) && _roll(seed, "stored") % 2 == 0;
        if (!seals.againstStored) seals.ownSignature = _sealSignature(seat, sid, seals.own);
    }

    /// @notice Who proves `seat`'s equivocation on `jobId`.
    function _prover(uint256 jobId, address seat, uint256 seed) internal view returns (address) {
        uint256 pick = _roll(seed, "prover") % 5;
        if (pick == 0) return whistleblowers[0];
        if (pick == 1) return secondKey;
        if (pick == 2) return seat;
        if (pick == 3) return jobManager.getJob(jobId).solver;
        return verifiers[(seed >> 8) % verifiers.length];
    }

    /// @notice What a proof of `seat`'s equivocation by `prover` must book (`Proof`).
    function _proofBefore(uint256 jobId, address seat, address prover) internal view returns (Proof memory p) {
        (p.seat, p.prover) = (seat, prover);
        (, uint32[] memory segments) = jobManager.getAssignment(jobId);
        p.rejectBonds = _ownNonApprovals(jobId, seat, _ends(jobId, segments, _sealed[jobId][seat]))
            * jobManager.params().challengeBond;
        Verdict[] memory verdicts = jobManager.verdictOf(jobId, seat);
        p.challengers = new address[](verdicts.length);
        p.creditsBefore = new uint256[](verdicts.length);
        uint256 count;
        for (uint256 t; t < verdicts.length; ++t) {
            if (verdicts[t] != Verdict.Approve) continue;
            address challenger = jobManager.challengerOf(jobId, t, seat);
            if (challenger == address(0)) continue;
            p.challenged |= uint256(1) << t;
            p.creditsBefore[count] = escrow.creditOf(challenger);
            p.challengers[count++] = challenger;
        }
        (address[] memory challengers, uint256[] memory creditsBefore) = (p.challengers, p.creditsBefore);
        assembly ("memory-safe") {
            mstore(challengers, count)
            mstore(creditsBefore, count)
        }
        p.proverBefore = _held(prover);
        (p.stakedBefore, p.lockedBefore,,) = stakeManager.stakeOf(seat, Role.Verifier);
        (p.escrowed, p.bonds, p.credits, p.pool) = escrow.liabilities();
    }

    /// @notice P14 after a proof: exactly one verifierStake of the seat and its reject bonds joined the
    ///         jackpot pool, each open challenge of its approvals went back to its whistleblower as
    ///         credit, nothing else moved in the Escrow; the prover gained nothing but its own bonds
    ///         back; the seat stands no more.
    function _checkProof(uint256 jobId, Proof memory p) internal {
        uint256 stake = jobManager.params().verifierStake;
        uint256 bond = jobManager.params().challengeBond;
        uint256 returned = p.challengers.length * bond;
        (uint256 escrowed, uint256 bonds, uint256 credits, uint256 pool) = escrow.liabilities();
        if (
            pool != p.pool + stake + p.rejectBonds || bonds + returned != p.bonds || credits != p.credits + returned
                || escrowed != p.escrowed
        ) ++ghost_equivocationMisbooked;
        (uint256 staked, uint256 locked,,) = stakeManager.stakeOf(p.seat, Role.Verifier);
        // Its seat's stake and its reject bonds, both locked from its verifier stake, are slashed.
        // A seat without a reject gets its seat's idle bond back (unlocked, not slashed).
        uint256 idle = p.rejectBonds == 0 ? bond : 0;
        if (staked + stake + p.rejectBonds != p.stakedBefore || locked + stake + p.rejectBonds + idle != p.lockedBefore)
        {
            ++ghost_equivocationMisbooked;
        }
        for (uint256 i; i < p.challengers.length; ++i) {
            uint256 expected = p.creditsBefore[i] + _occurrences(p.challengers, p.challengers[i]) * bond;
            if (escrow.creditOf(p.challengers[i]) != expected) ++ghost_equivocationMisbooked;
        }
        uint256 proverAfter = _held(p.prover) + (p.prover == p.seat ? stake + p.rejectBonds : 0);
        if (proverAfter != p.proverBefore + _occurrences(p.challengers, p.prover) * bond) ++ghost_proverPaid;
        _checkVoided(jobId, p);
    }

    /// @notice P14: the proven seat has no verdict, sample or seat left, and no challenge of its
    ///         approvals stands.
    function _checkVoided(uint256 jobId, Proof memory p) internal {
        Verdict[] memory verdicts = jobManager.verdictOf(jobId, p.seat);
        for (uint256 t; t < verdicts.length; ++t) {
            if (verdicts[t] != Verdict.None) ++ghost_voidedSeatStanding;
            if ((p.challenged >> t) & 1 == 1 && jobManager.challengerOf(jobId, t, p.seat) != address(0)) {
                ++ghost_voidedSeatStanding;
            }
        }
        (bool assigned, uint64 sampleMask,,,) = jobManager.seatOf(_sid(jobId), p.seat);
        if (assigned || sampleMask != 0) ++ghost_voidedSeatStanding;
    }

    /// @notice P14 on the logs of a finalize, resolve or expiry of `jobId`, where `members` sit on the
    ///         resolving committee (empty otherwise): no fee is paid or credited to a voided seat of
    ///         the job, nor any bond, jackpot or pot share, nor its verifier stake unlocked, unless the
    ///         account holds another role in the call (a whistleblower of the job, a member).
    function _checkVoidedUnpaid(uint256 jobId, Vm.Log[] memory logs, address[] memory members) internal {
        SubmissionId sid = _sid(jobId);
        if (_voidedCount[sid] == 0) return;
        for (uint256 i; i < logs.length; ++i) {
            Vm.Log memory log = logs[i];
            bytes32 topic = log.topics.length == 0 ? bytes32(0) : log.topics[0];
            if (log.emitter == address(stakeManager) && topic == IStakeManager.StakesUnlocked.selector) {
                // A batch release (the settlement's seats): every account it names.
                (address[] memory released,) = abi.decode(log.data, (address[], uint256[]));
                bool verifierRole = uint256(log.topics[1]) == uint8(Role.Verifier);
                for (uint256 j; j < released.length; ++j) {
                    address account = released[j];
                    if (_voided[sid][account] && verifierRole && !_contains(members, account)) ++ghost_voidedSeatPaid;
                }
                continue;
            }
            if (log.topics.length < 3) continue;
            if (
                log.emitter == address(escrow) && (topic == IEscrow.Paid.selector || topic == IEscrow.Credited.selector)
            ) {
                address account = address(uint160(uint256(log.topics[2])));
                if (!_voided[sid][account]) continue;
                (Bucket from,) = abi.decode(log.data, (Bucket, uint256));
                bool otherRole = _challengedOn[jobId][account] || _contains(members, account);
                if (from == Bucket.Escrowed || !otherRole) ++ghost_voidedSeatPaid;
            } else if (log.emitter == address(stakeManager) && topic == IStakeManager.StakeUnlocked.selector) {
                address account = address(uint160(uint256(log.topics[1])));
                bool verifierRole = uint256(log.topics[2]) == uint8(Role.Verifier);
                if (_voided[sid][account] && verifierRole && !_contains(members, account)) ++ghost_voidedSeatPaid;
            }
        }
        if (!_isLive(jobManager.getJob(jobId).status)) ghost_voidedSettled += _voidedCount[sid];
    }

    /// @notice Before a finalize of `jobId`: while a sample has no standing verdict (the only seat
    ///         that held it was voided, P14), the round settles it (NoVerdicts: drawn again) only once
    ///         the verdict reveals close, so the finalize waits that long.
    function _waitForUncovered(uint256 jobId) internal {
        if (_voidedCount[_sid(jobId)] == 0 || _covered(jobId)) return;
        (, uint64 closes,,) = jobManager.windowsOf(_sid(jobId));
        if (block.timestamp <= closes) vm.warp(uint256(closes) + 1);
    }

    /// @notice What `account` holds: wallet, Escrow credit, and stake (staked + unbonding) of every role.
    function _held(address account) internal view returns (uint256 total) {
        total = _owned(account);
        for (uint256 r; r < 3; ++r) {
            (uint256 staked,, uint256 unbonding,) = stakeManager.stakeOf(account, Role(r));
            total += staked + unbonding;
        }
    }

    function _occurrences(address[] memory list, address account) internal pure returns (uint256 count) {
        for (uint256 i; i < list.length; ++i) {
            if (list[i] == account) ++count;
        }
    }
}
