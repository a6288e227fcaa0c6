"""`veritrain.forced`: the formulas of docs/FORCED_ERRORS.md, recomputed here from their
definitions (hand-built ABI encodings), plus the eligible-sample rule and the claims.

The Anvil test tests/integration/test_chain_forced.py checks the same functions against the
contract's own views.
"""

from __future__ import annotations

import os
from collections import Counter

import pytest

from veritrain import commitments, forced
from veritrain._keccak import keccak256
from veritrain.sampling import last_fetched

SOLVER = "0x00000000000000000000000000000000000000b1"


def _word(value: int) -> bytes:
    return value.to_bytes(32, "big")


def _addr(address: str) -> bytes:
    return bytes(12) + bytes.fromhex(address[2:])


def test_tag_is_the_keccak_of_its_name() -> None:
    assert forced.FORCED_ERROR_TAG == keccak256(b"veritrain.forced-error.v1")


def test_secret_commitment_is_abi_encode_of_its_fields() -> None:
    secret = os.urandom(32)
    expected = keccak256(_word(7) + _addr(SOLVER) + secret)
    assert commitments.secret_commitment(7, SOLVER, secret) == expected
    # checksummed or lower-case addresses give the same commitment
    assert commitments.secret_commitment(7, SOLVER.upper().replace("0X", "0x"), secret) == expected


def test_submission_id_is_the_pair_packed() -> None:
    # jobId in the upper 96 bits, the solver in the lower 160: the bytes read back as both
    sid = commitments.submission_id(7, SOLVER)
    assert sid == bytes(11) + b"\x07" + bytes.fromhex(SOLVER[2:])
    assert int.from_bytes(sid, "big") >> 160 == 7
    assert commitments.job_id_of(sid) == 7
    assert commitments.submission_id(2**96 - 1, SOLVER)[:12] == b"\xff" * 12
    assert commitments.submission_id(7, SOLVER.upper().replace("0X", "0x")) == sid
    for job_id in (-1, 2**96):
        with pytest.raises(ValueError, match="outside"):
            commitments.submission_id(job_id, SOLVER)
    with pytest.raises(ValueError):
        commitments.submission_id(7, "0x" + "zz" * 20)
    assert commitments.job_id_of(commitments.submission_id(2**96 - 1, SOLVER)) == 2**96 - 1
    with pytest.raises(ValueError, match="32 bytes"):
        commitments.job_id_of(sid[1:])


def test_verdict_commitment_encodes_the_dynamic_bytes32_array() -> None:
    salt = os.urandom(32)
    ends = [os.urandom(32), forced.UNREPLAYED_END, os.urandom(32)]
    # (uint256, address, bytes32[], bytes32): head of 4 words, the array's offset is 4 * 32,
    # then its length and one word per end hash
    body = _word(3) + b"".join(ends)
    expected = keccak256(_word(9) + _addr(SOLVER) + _word(128) + salt + body)
    assert commitments.verdict_commitment(9, SOLVER, ends, salt) == expected
    assert commitments.verdict_commitment(9, SOLVER, [ends[0], ends[2], ends[1]], salt) != expected
    assert commitments.verdict_commitment(10, SOLVER, ends, salt) != expected


def test_unreplayed_end_is_zero_and_always_a_reject() -> None:
    assert forced.UNREPLAYED_END == bytes(32)
    claimed = [os.urandom(32), os.urandom(32), forced.forced_claim(os.urandom(32))]
    ends = [claimed[0], forced.UNREPLAYED_END, os.urandom(32)]
    assert forced.verdict_approvals(ends, claimed) == [True, False, False]
    assert forced.verdict_approvals(claimed, claimed) == [True, True, True]
    with pytest.raises(ValueError):
        forced.verdict_approvals(ends[:2], claimed)
    with pytest.raises(ValueError):
        forced.verdict_approvals([b"short", *ends[1:]], claimed)


def test_a_reveal_books_a_bond_per_non_approval_of_its_own_samples_only() -> None:
    """As `recordVerdicts` counts them: a reject and an abstention on the seat's own samples
    book one bond each; a non-approval outside its draw books none (P-27)."""
    claimed = [os.urandom(32) for _ in range(4)]
    ends = [claimed[0], forced.UNREPLAYED_END, os.urandom(32), os.urandom(32)]
    assert forced.bonded_rejects(ends, claimed, 0b1111) == 3
    assert forced.bonded_rejects(ends, claimed, 0b0111) == 2
    assert forced.bonded_rejects(ends, claimed, 0b0001) == 0
    assert forced.bonded_rejects(claimed, claimed, 0b1111) == 0
    with pytest.raises(ValueError):
        forced.bonded_rejects(ends[:3], claimed, 0b1111)


def test_draw_encodes_the_segments_as_uint32_array() -> None:
    secret = os.urandom(32)
    segments = [4, 0, 9]
    body = _word(3) + b"".join(_word(s) for s in segments)
    expected = keccak256(secret + _word(5) + _word(96) + body)
    assert forced.forced_draw(secret, 5, segments) == expected


def test_forced_sample_pick_follows_the_spec() -> None:
    secret = os.urandom(32)
    segments = [3, 4, 8, 0]
    draw = forced.forced_draw(secret, 2, segments)
    result = forced.draw_forced_error(secret, 2, segments, 10_000)
    eligible = forced.eligible_samples(segments)
    assert eligible == [1, 2, 3]  # segment 3 ends where the sampled segment 4 starts
    pick = int.from_bytes(keccak256(draw + _word(1)), "big") % len(eligible)
    assert result == forced.ForcedDraw(True, eligible[pick], draw)


@pytest.mark.parametrize(
    ("segments", "eligible"),
    [([0, 1, 2], [2]), ([5], [0]), ([2, 7, 1, 8], [0, 3]), ([11, 10, 0], [0, 2])],
)
def test_eligible_samples(segments: list[int], eligible: list[int]) -> None:
    assert forced.eligible_samples(segments) == eligible
    largest = segments.index(max(segments))
    assert largest in eligible  # always eligible


@pytest.mark.parametrize(
    ("segments", "fetched"),
    [
        ([3, 11], True),  # one seat drew 3 of the first 11: it fetches the final state
        ([10, 11], False),  # it drew 10, the segment before the last: it replays both
        ([0], False),  # a one-segment job: its only segment is replayed
        ([0, 1], False),  # two segments: the draw is segment 0, so it replays the last too
        ([2, 5, 9], True),  # q = 2 of the first 9
    ],
)
def test_a_single_seat_fetches_the_last_unless_it_holds_the_one_before(
    segments: list[int], fetched: bool
) -> None:
    """VerificationRound.fetchOnlyMaskOf of the one seat (P-39); with several seats every seat
    replays the last. The fetched last stays eligible for the forced error (E-3)."""
    assert last_fetched(segments, single_seat=True) is fetched
    assert last_fetched(segments, single_seat=False) is False
    assert len(segments) - 1 in forced.eligible_samples(segments)


def test_rate_decides_how_often_a_job_is_forced() -> None:
    segments = [1, 5, 9]
    assert not any(
        forced.draw_forced_error(os.urandom(32), 1, segments, 0).forced for _ in range(50)
    )
    assert all(
        forced.draw_forced_error(os.urandom(32), 1, segments, 10_000).forced for _ in range(50)
    )
    share = sum(
        forced.draw_forced_error(os.urandom(32), 1, segments, 2_500).forced for _ in range(2000)
    )
    assert 400 < share < 600
    picks = Counter(
        forced.draw_forced_error(os.urandom(32), 1, segments, 10_000).sample for _ in range(900)
    )
    assert set(picks) == {0, 1, 2} and min(picks.values()) > 200
    with pytest.raises(ValueError):
        forced.draw_forced_error(os.urandom(32), 1, segments, 10_001)


def test_forced_claim_and_build_claims() -> None:
    hashes = [os.urandom(32) for _ in range(6)]  # 5 segments
    segments = [4, 1, 2]
    draw = forced.draw_forced_error(os.urandom(32), 3, segments, 10_000)
    claims = forced.build_claims(segments, hashes, draw)
    f = draw.sample
    assert claims.start_hashes == tuple(hashes[s] for s in segments)
    for j, s in enumerate(segments):
        if j == f:
            assert claims.end_hashes[j] == keccak256(forced.FORCED_ERROR_TAG + hashes[s + 1])
            assert claims.end_hashes[j] == forced.forced_claim(hashes[s + 1])
        else:
            assert claims.end_hashes[j] == hashes[s + 1]
    assert (claims.forced_sample, claims.forced_true_end) == (f, hashes[segments[f] + 1])
    clean = forced.build_claims(segments, hashes, forced.ForcedDraw(False, 0, b""))
    assert clean.forced_sample is None and clean.forced_true_end == bytes(32)
    with pytest.raises(ValueError):
        forced.build_claims([5], hashes, draw)


def test_malformed_inputs_are_refused() -> None:
    with pytest.raises(ValueError):
        commitments.secret_commitment(1, "0x1234", os.urandom(32))
    with pytest.raises(ValueError):
        commitments.verdict_commitment(1, SOLVER, [bytes(32)], b"short")
    with pytest.raises(ValueError):
        commitments.verdict_commitment(1, SOLVER, [b"\x01" * 31], os.urandom(32))
    assert len(commitments.new_secret()) == len(commitments.new_salt()) == 32


def test_a_reveal_locks_every_bond_but_the_first_which_the_seat_holds() -> None:
    """As `LibAssignment.recordVerdicts` locks them: the seat's draw locked its stake with one
    challengeBond, so a reveal with one bonded non-approval locks nothing more and one with n
    locks n - 1 bonds."""
    assert [forced.reveal_bond(n, 5) for n in range(4)] == [0, 0, 5, 10]
    assert forced.reveal_bond(3, 0) == 0
