"""Verdicts as end state hashes (docs/FORCED_ERRORS.md) without a node: `RoundFacade`'s
``revealVerdicts`` call (rejects on the seat's own samples counted against the posted claims,
the free verifier stake topped up to their bonds, no Escrow allowance, the ``bytes32[]``
argument) on a recording client, and the unit tests' fake round, which must derive approvals
from ends as the contract does, lock the reject bonds from the free verifier stake and refuse a
zero claimed end.

Run: .venv/bin/python -m pytest tests/unit/chain/test_round_verdicts.py -q
"""

from __future__ import annotations

import os
from types import SimpleNamespace
from typing import Any

import pytest

from chain.contracts.round import RoundFacade
from chain.errors import ChainError, ContractRevert
from chain.types import revealed_approvals
from tests.utils.fake_chain import FakeChain
from tests.utils.node_fixtures import SOLVER, SUBMITTER, VERIFIERS, tiny_spec
from veritrain.commitments import claims_hash, new_salt, round_hash, verdict_commitment
from veritrain.enums import JobStatus, Role, Verdict
from veritrain.forced import UNREPLAYED_END

JOB = 3
SID = ((JOB << 160) | 0x5A5A).to_bytes(32, "big")  # LibSubmission: jobId << 160 | solver
SEAT = "0x" + "5e" * 20
BOND = 7
POSTED_BLOCK = 42
SECRET_COMMITMENT = b"\x5c" * 32


class _RecordingClient:
    """The `ChainClient` surface `RoundFacade.reveal_verdicts` uses, recording what it sends."""

    def __init__(self, claimed: list[bytes], own: int = 0b111, free: int = 0) -> None:
        self.claimed = claimed
        self.address = SEAT
        self.sent: list[tuple[str, tuple[Any, ...]]] = []
        self.allowances: list[tuple[str, int]] = []
        self.staked: list[tuple[int, int]] = []
        self.jobs = SimpleNamespace(
            job_params=lambda: SimpleNamespace(challenge_bond=BOND),
            sample_mask_of=lambda job_id, verifier: own if (job_id, verifier) == (JOB, SEAT) else 0,
        )
        self.stakes = SimpleNamespace(
            free_stake=lambda account, role: (
                free if (account, role) == (SEAT, Role.Verifier) else 0
            ),
            stake=lambda role, amount: self.staked.append((int(role), amount)),
        )
        self.token = SimpleNamespace(
            ensure_allowance=lambda spender, amount: self.allowances.append((spender, amount))
        )
        self.escrow = SimpleNamespace(address="0xE5C0")
        self.log_reads = 0

    def handle(self, name: str) -> str:
        return name

    def starts(self) -> list[bytes]:
        return [b"\x11" * 32] * len(self.claimed)

    def call(self, contract: str, fn: str, *args: Any) -> Any:
        assert (contract, fn, args) == ("verification_round", "roundOf", (SID,))
        return (
            round_hash(claims_hash(SECRET_COMMITMENT, self.starts(), self.claimed)),
            False,
            0,
            POSTED_BLOCK,
        )

    def event_logs(
        self, contract: str, names: list[str], lo: int, hi: int, first: int
    ) -> list[SimpleNamespace]:
        assert (contract, names, lo, hi) == (
            "verification_round",
            ["ClaimsPosted"],
            POSTED_BLOCK,
            POSTED_BLOCK,
        )
        assert first == int.from_bytes(SID, "big")
        self.log_reads += 1
        return [
            SimpleNamespace(
                args={
                    "secretCommitment": SECRET_COMMITMENT,
                    "startHashes": self.starts(),
                    "endHashes": list(self.claimed),
                }
            )
        ]

    def transact(self, contract: str, fn: str, *args: Any) -> dict[str, int]:
        self.sent.append((fn, args))
        return {"status": 1}


def test_reveal_counts_rejects_against_the_claims_and_sends_bytes32() -> None:
    claimed = [os.urandom(32) for _ in range(3)]
    client = _RecordingClient(claimed, free=0)
    ends = [claimed[0], UNREPLAYED_END, os.urandom(32)]  # approve, reject, reject
    salt = new_salt()
    RoundFacade(client).reveal_verdicts(SID, ends, salt)  # type: ignore[arg-type]
    # two bonds: the first is in the seat's lock since its draw, the second is locked from the
    # free verifier stake, which holds none: it is staked
    assert client.staked == [(int(Role.Verifier), BOND)]
    assert client.allowances == []  # no Escrow allowance: the bonds are stake
    # The claims go back as calldata, with the secret commitment they bind, read from their
    # ClaimsPosted event.
    assert client.sent == [
        ("revealVerdicts", (SID, ends, salt, (client.starts(), claimed, SECRET_COMMITMENT)))
    ]
    approve_all = _RecordingClient(claimed)
    RoundFacade(approve_all).reveal_verdicts(SID, claimed, salt)  # type: ignore[arg-type]
    assert approve_all.staked == [] and approve_all.allowances == []  # no reject, no bond
    # a reject outside the seat's own draw books no bond (P-27): one bond, the seat's lock's
    own_two = _RecordingClient(claimed, own=0b011, free=0)
    assert RoundFacade(own_two).cover_reveal_bonds(SID, ends) == 1  # type: ignore[arg-type]
    assert own_two.staked == []
    with pytest.raises(ValueError):
        RoundFacade(client).reveal_verdicts(SID, [b"\x01" * 31, *ends[1:]], salt)  # type: ignore[arg-type]


def test_reveal_bond_shortfall_is_the_bonds_beyond_free_verifier_stake() -> None:
    """The one computation both the facade's `cover_reveal_bonds` and a verifier node's
    `stake_reveal_bonds` stake from: the bonds the reveal locks (``challengeBond`` per reject
    but the first, which the seat's lock holds) minus free verifier stake, never negative,
    nothing for one reject or none; a given bond is used instead of reading the deployment's."""
    facade = RoundFacade(_RecordingClient([], free=BOND + 2))  # type: ignore[arg-type]
    assert facade.reveal_bond_shortfall(0) == 0
    assert facade.reveal_bond_shortfall(-1) == 0
    assert facade.reveal_bond_shortfall(1) == 0  # in the seat's lock
    assert facade.reveal_bond_shortfall(2) == 0  # covered, 2 wei to spare
    assert facade.reveal_bond_shortfall(3) == BOND - 2
    assert facade.reveal_bond_shortfall(4, challenge_bond=100) == 300 - (BOND + 2)
    assert facade.reveal_bond_shortfall(2, "0x" + "77" * 20) == BOND  # no free stake there


def _assigned_job(chain: FakeChain) -> int:
    """A job claimed by SOLVER and assigned to VERIFIERS (two samples)."""
    job_id = chain.post_job(SUBMITTER, tiny_spec(), init_hash=b"\x07" * 32)
    for v in VERIFIERS:
        chain.staked[(v, int(Role.Verifier))] = chain.params.verifier_stake
    chain.client(SOLVER).jobs.claim_job(job_id)
    chain.set_job(job_id, status=JobStatus.Committed, randomness_block=chain.block)
    chain.advance(blocks=2)
    chain.client(SOLVER).jobs.assign_verifiers(job_id)
    return job_id


def test_claims_are_read_from_their_event_checked_against_the_hash_and_cached() -> None:
    claimed = [os.urandom(32) for _ in range(3)]
    client = _RecordingClient(claimed)
    facade = RoundFacade(client)  # type: ignore[arg-type]
    first = facade.claims_of(SID)
    assert first.start_hashes == tuple(client.starts())
    assert first.end_hashes == tuple(claimed)
    assert first.secret_commitment == SECRET_COMMITMENT
    assert facade.claims_of(SID) == first
    assert client.log_reads == 1  # posted claims never change: one log read
    altered = _RecordingClient(claimed)
    altered.starts = lambda: [b"\x22" * 32] * 3  # type: ignore[method-assign]
    stored = round_hash(claims_hash(SECRET_COMMITMENT, [b"\x11" * 32] * 3, claimed))
    altered.call = lambda *_: (stored, False, 0, POSTED_BLOCK)  # type: ignore[method-assign]
    with pytest.raises(ChainError, match="claims hash"):
        RoundFacade(altered).claims_of(SID)  # type: ignore[arg-type]


def test_fake_round_derives_approvals_from_ends_and_refuses_a_zero_claim() -> None:
    chain = FakeChain()
    job_id = _assigned_job(chain)
    solver = chain.client(SOLVER)
    sid = solver.jobs.submission_of(job_id)
    starts = [os.urandom(32), os.urandom(32)]
    with pytest.raises(ContractRevert) as zero:
        solver.round.post_claims(sid, starts, [os.urandom(32), UNREPLAYED_END])
    assert zero.value.name == "ZeroClaim" and zero.value.named_args["sampleIndex"] == 1
    claimed = [os.urandom(32), os.urandom(32)]
    solver.round.post_claims(sid, starts, claimed)
    replayed = os.urandom(32)
    other = os.urandom(32)
    ends = {VERIFIERS[0]: [claimed[0], replayed], VERIFIERS[1]: [UNREPLAYED_END, other]}
    salts = {v: new_salt() for v in VERIFIERS}
    for v in VERIFIERS:
        chain.client(v).round.commit_verdicts(sid, verdict_commitment(job_id, v, ends[v], salts[v]))
    with pytest.raises(ContractRevert, match="VerdictCommitmentMismatch"):
        chain.client(VERIFIERS[0]).round.reveal_verdicts(sid, claimed, salts[VERIFIERS[0]])
    # a seat's first bond is in its seat's lock since the draw: one reject locks nothing more;
    # two lock one bond from the free verifier stake, and a seat one wei short of it stakes the
    # shortfall from its wallet first, as the real facade does (an empty wallet: the top-up
    # reverts and nothing is revealed)
    bond, short = chain.params.challenge_bond, VERIFIERS[1]
    short_stake = (short, int(Role.Verifier))
    other_locked = chain.params.verifier_stake - bond + 1  # another job's lock
    chain.locked[short_stake] = other_locked
    with pytest.raises(ContractRevert, match="ERC20InsufficientBalance"):
        chain.client(short).round.reveal_verdicts(sid, ends[short], salts[short])
    assert (job_id, short) not in chain.revealed
    chain.balances[short] = 1
    for v in VERIFIERS:
        chain.client(v).round.reveal_verdicts(sid, ends[v], salts[v])
    assert chain.locked.get((VERIFIERS[0], int(Role.Verifier)), 0) == 0
    assert chain.locked[short_stake] == other_locked + bond
    assert chain.staked[short_stake] == chain.params.verifier_stake + 1
    assert chain.balances[short] == 0
    assert chain.verdicts[(job_id, VERIFIERS[0])] == [Verdict.Approve, Verdict.Reject]
    # a zero end is an abstention (P-20): disputed like a rejection
    assert chain.verdicts[(job_id, VERIFIERS[1])] == [Verdict.Abstain, Verdict.Reject]
    assert chain.disputed[job_id] == {0, 1}
    rnd = chain.client(SUBMITTER).round
    assert rnd.replayed_end_of(sid, VERIFIERS[0], 1) == replayed
    assert rnd.replayed_end_of(sid, VERIFIERS[0], 0) == bytes(32)  # an approval
    assert rnd.replayed_end_of(sid, VERIFIERS[1], 0) == UNREPLAYED_END
    assert rnd.forced_end_matches(sid, VERIFIERS[0]) is False  # no forced error revealed


def test_revealed_approvals_unpacks_the_event_mask_to_one_verdict_per_sample() -> None:
    """``VerdictsRevealed`` carries an approve mask beside one end per sample: bit i is sample
    i, a clear bit a rejection, and the list is as long as the ends even where the high samples
    were all rejected (their bits are zero)."""
    end = b"\x01" * 32
    assert revealed_approvals({"approveMask": 0b101, "ends": [end] * 5}) == [
        True,
        False,
        True,
        False,
        False,
    ]
    assert revealed_approvals({"approveMask": 0, "ends": [end] * 3}) == [False, False, False]
    # a signed entry that opened the claimed ends: no ends logged, one approve bit per sample
    assert revealed_approvals({"approveMask": 0b111, "ends": []}) == [True, True, True]
    assert revealed_approvals({"approveMask": 0, "ends": []}) == []
