"""Nodes on a real Anvil against cheaters: a cheating solver is caught by replay and slashed
through arbitration, and a lazy verifier that approves it is challenged by the whistleblower and
slashed too; with every solver honest, a lazy verifier is caught by a forced error
(docs/FORCED_ERRORS.md); a cheat inside the forced segment itself is caught, because verdicts
are the replayed end hashes (P-9); and a griefing verifier that rejects a forced sample without
replaying it loses its dispute while the replaying rejecters get their bonds back; and a solver
that takes its seats' seal and reveal hand-offs and never submits them cannot stall the round:
each seat sends its own transactions after its hand-off wait and is paid its fee.

Every segment is sampled (q = N/k = 4), so the cheat (segments 2 and 3) is always audited.
Run: ``.venv/bin/python -m pytest tests/integration/test_nodes_adversarial.py -m anvil``.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from adversary.solver import SittingAggregator, solver_node
from adversary.verifier import griefing_end, verifier_node
from chain import Anvil
from tests.utils.node_harness import (
    FAST_PARAMS,
    FORCED_UPDATES,
    SOLVER,
    V1,
    V2,
    V3,
    WHISTLEBLOWER,
    Network,
    free_port,
    open_network,
    require_protocol_artifacts,
    tiny_spec,
)
from veritrain.enums import Bucket, JobStatus, Role, RoundOutcome, Verdict
from veritrain.spec import JobSpec, default_digits_spec
from whistleblower.node import WhistleblowerNode

pytestmark = [pytest.mark.anvil, pytest.mark.slow, pytest.mark.timeout(400)]


@pytest.fixture
def net(anvil: Anvil, contracts_out: Path, tmp_path: Path) -> Iterator[Network]:
    yield from open_network(anvil, tmp_path, FAST_PARAMS.model_copy(update={"samples_per_job": 4}))


@pytest.fixture
def forced_net(anvil: Anvil, contracts_out: Path, tmp_path: Path) -> Iterator[Network]:
    require_protocol_artifacts()
    # q = 4 of the 4 segments: every seat holds the forced sample, so a lazy seat always meets
    # it (with own draws a seat meets it only if its draw holds it, docs/SECURITY.md P-27)
    updates = {**FORCED_UPDATES, "samples_per_job": 4}
    network = Network(anvil, tmp_path, FAST_PARAMS.model_copy(update=updates))
    yield network
    network.close()


def _one_segment(seed: int = 21) -> JobSpec:
    """10 steps, one checkpoint interval: 1 segment, which every seat's own draw holds."""
    return default_digits_spec(
        seed=seed, total_steps=10, checkpoint_interval=10, hidden=(16,), batch_size=16
    )


def _three_segments(seed: int = 21) -> JobSpec:
    """30 steps, a checkpoint every 10: 3 segments. With every segment sampled, the forced
    sample is always segment 2, the only one no sampled segment starts from."""
    return default_digits_spec(
        seed=seed, total_steps=30, checkpoint_interval=10, hidden=(16,), batch_size=16
    )


def _forced_net(anvil: Anvil, tmp: Path, samples: int) -> Network:
    require_protocol_artifacts()
    updates = {**FORCED_UPDATES, "samples_per_job": samples}
    return Network(anvil, tmp, FAST_PARAMS.model_copy(update=updates))


@pytest.fixture
def forced_all_net(anvil: Anvil, contracts_out: Path, tmp_path: Path) -> Iterator[Network]:
    """Every job forced and every one of its 3 segments sampled."""
    network = _forced_net(anvil, tmp_path, samples=3)
    yield network
    network.close()


@pytest.fixture
def forced_one_net(anvil: Anvil, contracts_out: Path, tmp_path: Path) -> Iterator[Network]:
    """Every job forced, one sample per seat; run with `_one_segment` jobs, every seat's own draw
    is that segment, so the sample is one segment all seats hold (always the forced one): a single
    dispute at most."""
    network = _forced_net(anvil, tmp_path, samples=1)
    yield network
    network.close()


def _run(
    net: Network,
    adversary: str | None,
    lazy: tuple[int, ...],
    *,
    reject_all: tuple[int, ...] = (),
    spec: JobSpec | None = None,
    hand_off_wait: float | None = None,
) -> tuple[int, str, Any]:
    """Start 3 verifiers (handing their seals and reveals to the solver, as by default) and the
    whistleblower, post the job, start the solver; returns (job id, solver address, solver node)."""
    for i in (V1, V2, V3):
        verifier = verifier_node(
            net.client(i),
            net.tmp / f"v{i}",
            lazy=i in lazy,
            reject_all=i in reject_all,
            poll_interval=0.5,
        )
        if hand_off_wait is not None:
            verifier.hand_off_wait = verifier.seal_wait = hand_off_wait
        net.start(verifier)
    net.start(WhistleblowerNode(net.client(WHISTLEBLOWER), net.tmp / "wb", poll_interval=0.5))
    net.wait_active(int(Role.Verifier), V1, V2, V3)
    job_id = net.post_job(spec or tiny_spec(seed=21))
    solver = net.client(SOLVER)
    node = solver_node(
        solver, net.tmp / "solver", "127.0.0.1", free_port(), mode=adversary, poll_interval=0.5
    )
    net.start(node)
    return job_id, solver.address, node


def test_cheating_solver_and_its_lazy_approver_are_slashed(net: Network) -> None:
    """A solver that skips steps from segment 2 on is rejected by the two replaying seats and
    slashed through arbitration; the lazy seat that approved every segment is challenged by the
    whistleblower and slashed too. (A perturbing solver is caught the same way, inside the
    forced segment, below.)"""
    job_id, solver, _ = _run(net, "skip-steps", lazy=(V1,))
    reader = net.client(0)
    lazy = net.client(V1).address
    wb = net.client(WHISTLEBLOWER).address
    net.wait_for("seats assigned", lambda: bool(reader.jobs.get_assignment(job_id).segments))
    segments = reader.jobs.get_assignment(job_id).segments
    assert sorted(segments) == [0, 1, 2, 3]  # every segment sampled: the cheat is audited
    net.wait_for(
        "whistleblower challenges of the lazy approvals",
        lambda: all(
            reader.jobs.challenger_of(job_id, i, lazy) == wb
            for i, seg in enumerate(segments)
            if seg >= 2
        ),
        timeout=240,
    )
    assert (
        net.wait_status(job_id, JobStatus.Finalized, JobStatus.Rejected, timeout=300)
        is JobStatus.Rejected
    )
    for i in (V1, V2, V3):
        verdicts = reader.jobs.verdicts_of(job_id, net.client(i).address)
        for seg, verdict in zip(segments, verdicts, strict=True):
            honest = Verdict.Reject if seg >= 2 else Verdict.Approve
            assert verdict is (Verdict.Approve if i == V1 else honest), (i, seg, verdict)
    # the node tops its stake back up after the slash, so the loss is read from the events
    assert net.slashed(lazy, Role.Verifier) == net.params.verifier_stake
    stake = reader.stakes.stake_of(solver, Role.Solver)
    assert stake.staked == 3 * net.params.solver_stake and stake.locked == 0
    for i in (V2, V3):
        assert net.slashed(net.client(i).address, Role.Verifier) == 0
    # the whistleblower won: its bond back plus a share of the pot, claimed by the node
    net.wait_for("whistleblower paid", lambda: reader.escrow.credit_of(wb) == 0)
    assert reader.token.balance_of(wb) > 0


def test_lazy_verifier_is_caught_by_a_forced_error(forced_net: Network) -> None:
    net = forced_net
    job_id, solver, _ = _run(net, None, lazy=(V1,))  # an honest solver: only the forced error
    reader = net.client(0)
    pool = reader.escrow.jackpot_pool()
    assert (
        net.wait_status(job_id, JobStatus.Finalized, JobStatus.Rejected, timeout=300)
        is JobStatus.Finalized
    )
    outcome, f = reader.round.outcome(reader.jobs.submission_of(job_id))
    assert outcome is RoundOutcome.Forced
    lazy, wb = net.client(V1).address, net.client(WHISTLEBLOWER).address
    honest = [net.client(i).address for i in (V2, V3)]
    sid = reader.jobs.submission_of(job_id)
    assert reader.jobs.verdicts_of(job_id, lazy)[f] is Verdict.Approve
    for a in honest:  # rejected with the solver's true end: now an approval of that end
        assert reader.round.forced_end_matches(sid, a)
        assert reader.jobs.verdicts_of(job_id, a)[f] is Verdict.Approve
    assert reader.jobs.challenger_of(job_id, f, lazy) == wb
    p = net.params
    # the lazy approver is slashed into the pool; two rejecters and the whistleblower are paid
    paid = [
        e
        for e in reader.contract_by_name("JobManager")
        .events.JackpotPaid()
        .get_logs(from_block=net.deployment.block)
        if int(e["args"]["jobId"]) == job_id
    ]
    jackpots = {e["args"]["account"]: int(e["args"]["amount"]) for e in paid}
    assert net.slashed(lazy, Role.Verifier) == p.verifier_stake
    for a in honest:  # its fee and jackpot restaked: added to its stake, not its wallet
        assert net.slashed(a, Role.Verifier) == 0
        assert reader.stakes.stake_of(a, Role.Verifier).staked == (
            p.min_stake_verifier + p.verifier_fee + jackpots[a]
        )
    assert sorted(e["args"]["account"] for e in paid) == sorted([*honest, wb])
    assert reader.escrow.jackpot_pool() == pool + p.verifier_stake - 3 * p.jackpot
    # the solver is not penalised: stake intact and its reward restaked, shares minted (when it
    # appends its final state)
    (finalized,) = _job_events(net, reader.jobs.contract, "JobFinalized", job_id)
    reward = int(finalized["reward"])
    assert reader.stakes.stake_of(solver, Role.Solver).staked == 4 * p.solver_stake + reward
    model = tiny_spec(seed=21).model_id_hash()
    net.wait_for("shares minted", lambda: reader.shares.balance_of(model, solver) > 0)


def _job_events(net: Network, contract: object, name: str, job_id: int) -> list[dict[str, object]]:
    """The args of every ``name`` event of ``contract`` about ``job_id``."""
    reader = net.client(0)
    logs = reader.event_logs(contract, [name], net.deployment.block, reader.block_number())
    return [dict(ev.args) for ev in logs if int(ev.args.get("jobId", job_id)) == job_id]


def test_a_cheat_inside_the_forced_segment_is_caught(forced_all_net: Network) -> None:
    """P-9: the forced claim used to hide the solver's own end of the forced segment (its
    rejecters were paid and the sample left the disputed set), so a cheat there was paid. Now
    the honest verifiers seal the end they replayed, which is not the perturbed end the solver
    reveals with its secret: the sample stays disputed and the solver is slashed."""
    net = forced_all_net
    job_id, solver, _ = _run(net, "perturb", lazy=(), spec=_three_segments())
    reader = net.client(0)
    assert (
        net.wait_status(job_id, JobStatus.Finalized, JobStatus.Rejected, timeout=300)
        is JobStatus.Rejected
    )
    sid = reader.jobs.submission_of(job_id)
    outcome, f = reader.round.outcome(sid)
    assert outcome is RoundOutcome.Forced
    assert reader.jobs.get_assignment(job_id).segments[f] == 2  # the cheating segment
    verifiers = [net.client(i).address for i in (V1, V2, V3)]
    replayed = set()
    for v in verifiers:
        assert reader.jobs.verdicts_of(job_id, v)[f] is Verdict.Reject
        assert not reader.round.forced_end_matches(sid, v)
        replayed.add(reader.round.replayed_end_of(sid, v, f))
    assert len(replayed) == 1 and bytes(32) not in replayed  # one honest replay, not zero
    disputed = _job_events(net, reader.jobs.contract, "ForcedEndDisputed", job_id)
    assert sorted(str(e["verifier"]) for e in disputed) == sorted(verifiers)
    p = net.params
    assert net.slashed(solver, Role.Solver) == p.solver_stake
    (slashed,) = _job_events(net, reader.jobs.contract, "SolverSlashed", job_id)
    assert slashed["solver"] == solver
    assert not _job_events(net, reader.jobs.contract, "JobFinalized", job_id)
    model = _three_segments().model_id_hash()
    assert reader.shares.total_supply(model) == 0  # no shares were ever minted for the model
    for v in verifiers:
        assert net.slashed(v, Role.Verifier) == 0


def test_a_griefer_rejecting_a_forced_sample_without_replay_loses(
    forced_one_net: Network,
) -> None:
    """An honest solver's forced job: the griefer seals a made-up end for the forced sample (a
    replay it never ran; a zero end would be an abstention, P-20), the honest verifiers the true
    end. Their reject bonds, locked from their verifier stake, are unlocked at the settlement; the
    sample stays disputed against the griefer alone, which loses its bond and stake (both slashed
    from its verifier stake) to the committee."""
    net = forced_one_net
    job_id, solver, _ = _run(net, None, lazy=(), reject_all=(V1,), spec=_one_segment())
    reader = net.client(0)
    assert (
        net.wait_status(job_id, JobStatus.Finalized, JobStatus.Rejected, timeout=300)
        is JobStatus.Finalized
    )
    sid = reader.jobs.submission_of(job_id)
    assert reader.round.outcome(sid) == (RoundOutcome.Forced, 0)
    griefer = net.client(V1).address
    honest = [net.client(i).address for i in (V2, V3)]
    assert not reader.round.forced_end_matches(sid, griefer)
    (segment,) = reader.jobs.get_assignment(job_id).segments
    assert reader.round.replayed_end_of(sid, griefer, 0) == griefing_end(job_id, int(segment))
    for a in honest:
        assert reader.round.forced_end_matches(sid, a)
    disputed = _job_events(net, reader.jobs.contract, "ForcedEndDisputed", job_id)
    assert [e["verifier"] for e in disputed] == [griefer]
    p = net.params
    assert net.slashed(griefer, Role.Verifier) == p.verifier_stake + p.challenge_bond
    forfeited = _job_events(net, reader.jobs.contract, "BondForfeited", job_id)
    assert [e["account"] for e in forfeited] == [griefer]
    bonds_paid = [  # a seat's reject bond is stake: unlocked, never paid from the Escrow
        e["account"]
        for e in _job_events(net, reader.escrow.contract, "Paid", job_id)
        if int(e["from"]) == int(Bucket.Bonds)
    ]
    assert bonds_paid == []
    for a in honest:
        assert net.slashed(a, Role.Verifier) == 0
    # the solver is not penalised: stake intact, its reward restaked
    (finalized,) = _job_events(net, reader.jobs.contract, "JobFinalized", job_id)
    reward = int(finalized["reward"])
    assert reader.stakes.stake_of(solver, Role.Solver).staked == 4 * p.solver_stake + reward


def test_an_aggregator_sitting_on_the_hand_offs_cannot_stall_the_seats(net: Network) -> None:
    """docs/SECURITY.md P-37: the seats hand their seals and reveals to the solver (the default),
    which takes every one and submits none. Each seat falls back to its own transaction after its
    wait: the job is finalized, every seal and reveal on chain was sent by its own seat, and each
    seat ends with its fee restaked (added to its whole stake; its wallet unchanged) as with an
    honest aggregator."""
    reader = net.client(0)
    seats = [net.client(i).address for i in (V1, V2, V3)]
    # a short wait (seconds of chain time): the fallback is the same at any length
    job_id, solver, node = _run(net, "sit-on-batches", lazy=(), hand_off_wait=4.0)
    before = {a: reader.token.balance_of(a) for a in seats}  # staked; the job just posted
    staked = {a: reader.stakes.stake_of(a, Role.Verifier).staked for a in seats}
    assert (
        net.wait_status(job_id, JobStatus.Finalized, JobStatus.Rejected, JobStatus.Disputed)
        is JobStatus.Finalized
    )
    assert isinstance(node.aggregator, SittingAggregator)
    assert node.aggregator.taken >= len(seats)  # the seats did hand off, and it sat on them
    rnd = reader.round.contract
    for event, function in (
        ("VerdictsCommitted", "commitVerdicts"),
        ("VerdictsRevealed", "revealVerdicts"),
    ):
        events = reader.event_logs(rnd, [event], 0, reader.block_number())
        assert sorted(e.args["verifier"] for e in events) == sorted(seats), events
        for e in events:
            _, data = reader.transaction_call(e.tx_hash)
            assert rnd.decode_function_input(data)[0].fn_name == function
            assert reader.w3.eth.get_transaction(e.tx_hash)["from"] == e.args["verifier"]
    # every seat keeps its whole stake and earns its fee, restaked: its wallet unchanged
    fee = net.params.verifier_fee
    for a in seats:
        net.wait_for(
            f"{a} paid",
            lambda a=a: reader.stakes.stake_of(a, Role.Verifier).staked == staked[a] + fee,
        )
        assert reader.token.balance_of(a) == before[a]
        assert net.slashed(a, Role.Verifier) == 0
    assert reader.stakes.stake_of(solver, Role.Solver).locked == 0
