"""A run's contributions are ordinary jobs: the nodes train and verify them on a real Anvil,
and the verified contributions give exactly the run's simulated global states (docs/RUNS.md).

The model's owner posts each round's contribution jobs (`noderuntime.runs.post_round`: spec URI
`<run URI>#contribution=<round>,<seat>`, specHash `keccak256(abi.encode(runHash, round, seat))`,
initHash the start it computes from the chain); the solver computes the same start itself.
Run: ``.venv/bin/python -m pytest tests/integration/test_nodes_contributions.py -m anvil``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from adversary.solver import solver_node
from adversary.verifier import verifier_node
from chain import Anvil, write_manifest
from cli.app import app
from noderuntime.runs import open_run, post_round, run_state
from solver.node import SolverNode
from tests.utils.models import register_model
from tests.utils.node_harness import (
    E18,
    FAST_PARAMS,
    SOLVER,
    SUBMITTER,
    V1,
    V2,
    V3,
    WHISTLEBLOWER,
    Network,
    free_port,
    open_network,
    tiny_spec,
)
from veritrain.diloco import OuterState, RunSpec, advance_round, contribution_init
from veritrain.enums import JobStatus, Role
from veritrain.lineage import ModelCommitments
from veritrain.runsim import pretrained_start, simulate_run
from veritrain.state import state_hash
from veritrain.training import TrainingEngine
from whistleblower.node import WhistleblowerNode

LATE = 7
"""Dev key of the solver that joins the run late."""

pytestmark = [pytest.mark.anvil, pytest.mark.slow, pytest.mark.timeout(400)]
runner = CliRunner()


@pytest.fixture
def net(anvil: Anvil, contracts_out: Path, tmp_path: Path) -> Iterator[Network]:
    yield from open_network(anvil, tmp_path)


def _open_run(net: Network, run: RunSpec) -> tuple[Any, bytes]:
    """Register the run's model as the owner (funded), open the run on chain and start the
    verifiers, each serving its mirror (`net.mirrors`: their URLs); returns the owner's client
    and the run's outer state 0."""
    owner = net.client(SUBMITTER)
    owner.token.faucet(1000 * E18)
    seeded = TrainingEngine(run.inner)
    register_model(
        owner, run.inner.model_id_hash(), seeded.state_hash(seeded.init_state()), run.inner
    )
    start = pretrained_start(run, 0)
    open_run(owner, run, start)
    net.verifiers = []  # type: ignore[attr-defined]
    for i in (V1, V2, V3):
        verifier = verifier_node(net.client(i), net.tmp / f"v{i}", poll_interval=0.5)
        verifier.serve_port = free_port()
        net.verifiers.append(verifier)  # type: ignore[attr-defined]
        net.start(verifier)
    net.wait_active(int(Role.Verifier), V1, V2, V3)
    return owner, start


def _mirrors(net: Network) -> list[str]:
    """The verifiers' mirror URLs (`_open_run`)."""
    return [f"http://127.0.0.1:{v.serve_port}" for v in net.verifiers]  # type: ignore[attr-defined]


def _wait_round(net: Network, run: RunSpec, rounds: int, timeout: float = 300.0) -> None:
    """Wait until `rounds` rounds of the run are final on chain."""
    reader = net.client(0)
    run_id = reader.runs.run_id_of(run.run_hash())
    net.wait_for(
        f"round {rounds - 1} of run {run_id} final",
        lambda: reader.runs.get_run(run_id).round >= rounds,
        timeout,
    )


def _shares(net: Network, run: RunSpec, account: str) -> int:
    reader = net.client(0)
    if reader.shares.shares_of(run.inner.model_id_hash()) is None:
        return 0
    return int(reader.shares.balance_of(run.inner.model_id_hash(), account))


def test_a_run_over_two_rounds_makes_the_simulated_global_states(net: Network) -> None:
    """Round 0: two seats, both trained by one solver that never serves its final states, to
    anyone (a Sybil paid for a round, docs/SECURITY.md P-36), and then leaves (N-27): every
    verifier seat replayed each job's last segment, so the verifiers' mirrors hold both final
    states and their proofs; round 1: seat 1 is not posted, and a solver that joined late
    trains seat 0, its start rebuilt from the verifiers' mirrors. The owner posts and registers
    each round's jobs with the starts it computes from the chain (`post_round`); the solvers
    rebuild the same starts themselves, propose each round's claim once its jobs are final and
    finalize it after the challenge window; the final claims are the simulated run's global
    states bit for bit, and each counted contribution minted H x computePerStep shares to its
    solver."""
    run = RunSpec(inner=tiny_spec(seed=21), seats=2, rounds=3)
    owner, start = _open_run(net, run)
    round0 = post_round(owner, run, 0, start, reward=20 * E18)
    solver = solver_node(
        net.client(SOLVER),
        net.tmp / "solver",
        "127.0.0.1",
        free_port(),
        mode="withhold-final",
        poll_interval=0.5,
    )
    # it withholds from itself too: its own claim fetches its finals from the seats' mirrors
    solver.mirrors.extend(_mirrors(net))
    net.start(solver)
    for job_id in round0:
        assert net.wait_status(job_id, JobStatus.Finalized, JobStatus.Rejected) is (
            JobStatus.Finalized
        )
    _wait_round(net, run, 1)
    reader = net.client(0)
    per_contribution = (
        run.inner_steps * ModelCommitments.of(run.inner, b"\x00" * 32).compute_per_step
    )
    assert _shares(net, run, solver.client.address) == 2 * per_contribution
    simulated = simulate_run(run, start, 2, absent=lambda t, j: (t, j) == (1, 1))
    # the solver never served a final state, yet each job's every seat holds it, proven
    # against the job's root (P-36): the round is usable without the solver
    mirrors = _mirrors(net)
    for job_id in round0:
        seats = reader.jobs.get_assignment(job_id).verifiers
        job = reader.jobs.get_job(job_id)
        net.wait_for(
            f"job {job_id}'s final state and proof in every seat's mirror",
            lambda job=job, seats=seats: all(
                v.mirror.proof_of(job.merkle_root, job.total_steps // job.checkpoint_interval)
                is not None
                for v in net.verifiers  # type: ignore[attr-defined]
                if v.client.address in seats
            ),
            60,
        )
    state1 = run_state(reader, run, 1, mirrors=mirrors)
    assert state1.state.state_hash() == simulated[0].global_hash
    assert state1.rounds[0].accepted == [0, 1] and state1.jobs == {0: {0: round0[0], 1: round0[1]}}
    finals = [state1.seat_finals[0], state1.seat_finals[1]]
    assert all(
        v.mirror.has(state_hash(f))  # type: ignore[attr-defined]
        for f in finals
        for v in net.verifiers
        if v.client.address in reader.jobs.get_assignment(round0[0]).verifiers
    )

    # the solver leaves, server and all (docs/SECURITY.md N-27). A solver that joins late
    # takes round 1: it rebuilds the run from the chain, fetching the round-0 finals from the
    # verifiers' mirrors (the owner's post does the same)
    net.stop(solver)
    late = SolverNode(
        net.client(LATE), net.tmp / "late", "127.0.0.1", free_port(), poll_interval=0.5
    )
    late.mirrors.extend(mirrors)
    net.start(late)
    # round 1 through the command line, as an owner posts it
    run_file = net.tmp / "run.json"
    run_file.write_bytes(run.canonical_json())
    chain_args = [
        "--rpc-url",
        net.anvil.rpc_url,
        "--deployment",
        str(write_manifest(net.deployment, net.tmp)),
    ]
    posted = runner.invoke(
        app,
        [
            "run",
            "post",
            str(run_file),
            "--seat",
            "0",
            "--dev-account",
            str(SUBMITTER),
            *chain_args,
            *[arg for url in mirrors for arg in ("--mirror", url)],
            "--json",
        ],
    )
    assert posted.exit_code == 0, posted.output
    (round1,) = json.loads(posted.stdout)["jobs"]
    assert net.wait_status(round1, JobStatus.Finalized, JobStatus.Rejected) is JobStatus.Finalized
    assert reader.jobs.get_job(round1).solver.lower() == late.client.address.lower()
    _wait_round(net, run, 2)
    assert _shares(net, run, late.client.address) == per_contribution
    # the leaver keeps what its counted round-0 work minted (finding N-27: left as is)
    assert _shares(net, run, solver.client.address) == 2 * per_contribution
    state2 = run_state(reader, run, 2, mirrors=mirrors)
    assert state2.state.state_hash() == simulated[1].global_hash
    assert state2.rounds[1].accepted == [0]
    shown = runner.invoke(
        app,
        ["run", "show", str(run_file), "--metric", "--mirror", mirrors[0], *chain_args, "--json"],
    )
    assert shown.exit_code == 0, shown.output
    report = json.loads(shown.stdout)
    assert report["global_hash"] == "0x" + simulated[1].global_hash.hex()
    assert [r["accepted"] for r in report["rounds"]] == [[0, 1], [0]]
    assert report["rounds"][1]["jobs"] == {"0": round1}
    assert [r["metric"] for r in report["rounds"]] == [r.metric for r in simulated]
    owners = runner.invoke(app, ["shares", run.inner.model_id, *chain_args, "--json"])
    assert owners.exit_code == 0, owners.output
    (history,) = [r["history"] for r in json.loads(owners.stdout)["runs"]]
    assert [[c["job_id"] for c in r["contributions"]] for r in history] == [round0, [round1]]
    assert [r["state"] for r in history] == ["0x" + r.global_hash.hex() for r in simulated]
    # seat 0 carried its AdamW into round 1; seat 1 keeps its round-0 state for a return
    assert state2.seat_finals[1] == state1.seat_finals[1]
    assert state2.seat_finals[0] != state1.seat_finals[0]
    _revenue_splits_exactly_across_a_transfer(net, run, per_contribution)


def _revenue_splits_exactly_across_a_transfer(net: Network, run: RunSpec, share: int) -> None:
    """Revenue paid into the run's model splits pro rata to the wei, before and after a holder
    transfers half its run shares (ModelShares' magnified revenue per share, recomputed here)."""
    model = run.inner.model_id_hash()
    owner, early, late = net.client(SUBMITTER), net.client(SOLVER), net.client(LATE)
    assert early.shares.balance_of(model) == 2 * share and late.shares.balance_of(model) == share
    first, second, magnitude, supply = 7 * E18 + 3, 5 * E18 + 1, 2**64, 3 * share
    owner.shares.pay_revenue(model, first)
    early.transact(early.shares.model_shares(model), "transfer", late.address, share)
    owner.shares.pay_revenue(model, second)
    m1 = first * magnitude // supply
    m2 = m1 + second * magnitude // supply
    expected = {
        early.address: (m2 * share + m1 * share) // magnitude,
        late.address: (m2 * 2 * share - m1 * share) // magnitude,
    }
    for holder in (early, late):
        due = holder.shares.revenue_of(model)
        assert due == expected[holder.address]
        before = holder.token.balance_of()
        holder.shares.claim_revenue(model)
        assert holder.token.balance_of() - before == due and holder.shares.revenue_of(model) == 0
    assert 0 <= first + second - sum(expected.values()) <= 2  # at most a wei lost per payment


def test_a_wrong_round_claim_is_challenged_struck_and_replaced(net: Network) -> None:
    """The model's owner, colluding with nobody but its own key, proposes a wrong result for a
    round: it leaves out an honest contribution (so that its solver mints nothing). A
    whistleblower computes the round itself, challenges, and the committee (the verifiers)
    rules the claim wrong: the owner loses its bond to the challenger and the arbiters, the
    whistleblower then proposes the right claim, which becomes final and mints the honest
    solver's shares."""
    run = RunSpec(inner=tiny_spec(seed=23), seats=1, rounds=1)
    owner, start = _open_run(net, run)
    (job_id,) = post_round(owner, run, 0, start, reward=20 * E18)
    solver = SolverNode(
        net.client(SOLVER), net.tmp / "solver", "127.0.0.1", free_port(), poll_interval=0.5
    )
    solver.run_keeper.propose = solver.run_keeper.challenge = False  # the attack's window
    net.start(solver)
    assert net.wait_status(job_id, JobStatus.Finalized, JobStatus.Rejected) is JobStatus.Finalized
    run_id = owner.runs.run_id_of(run.run_hash())
    bond = owner.runs.claim_bond()
    watcher = net.client(WHISTLEBLOWER)
    watcher.token.faucet(1000 * E18)  # minted before the count starts
    watcher.stakes.stake(int(Role.Whistleblower), 100 * E18)
    whistleblower = WhistleblowerNode(watcher, net.tmp / "wb", poll_interval=0.5)
    before = {a: net.holdings(a) for a in (owner.address, whistleblower.client.address)}
    right = advance_round(run, OuterState.from_bytes(start), {}, {})  # nothing counted
    owner.runs.propose_round(run_id, right.state.state_hash(), 0)  # leaves seat 0 out
    net.start(whistleblower)
    _wait_round(net, run, 1)
    reader = net.client(0)
    claim = reader.runs.get_round(run_id, 0)
    assert claim.seats(claim.accepted) == [0] and claim.proposer == whistleblower.client.address
    assert (
        claim.dispute_id != 0 and not reader.committee.get_dispute(claim.dispute_id).segment_valid
    )
    assert _shares(net, run, solver.client.address) > 0
    assert _shares(net, run, owner.address) == 0
    lost = before[owner.address] - net.holdings(owner.address)
    won = net.holdings(whistleblower.client.address) - before[whistleblower.client.address]
    arbiters = net.params.committee_size * net.params.arbiter_fee
    assert lost == bond  # and nothing else: its post's escrow was paid before `before`
    assert won == bond - arbiters  # the liar's bond, less the arbiters' fees


@pytest.fixture
def audited_net(anvil: Anvil, contracts_out: Path, tmp_path: Path) -> Iterator[Network]:
    """Every seat draws all 4 segments, so a cheat in any segment is always replayed."""
    yield from open_network(anvil, tmp_path, FAST_PARAMS.model_copy(update={"samples_per_job": 4}))


@pytest.mark.parametrize("adversary", ["perturb", "copy-seat"])
def test_a_wrong_or_copied_pseudo_gradient_is_rejected_and_slashed(
    audited_net: Network, adversary: str
) -> None:
    """A contribution whose states are tampered with (a wrong Delta), or which trained another
    seat's shard (a copied Delta), is rejected and its solver slashed: it never reaches the
    outer step."""
    net = audited_net
    run = RunSpec(inner=tiny_spec(seed=22), seats=2, rounds=1)
    owner, start = _open_run(net, run)
    (job_id,) = post_round(owner, run, 0, start, reward=20 * E18, seats=[1])
    init = contribution_init(start, None)
    cheater = solver_node(
        net.client(SOLVER),
        net.tmp / "solver",
        "127.0.0.1",
        free_port(),
        mode=adversary,
        poll_interval=0.5,
    )
    net.start(cheater)
    assert (
        net.wait_status(job_id, JobStatus.Finalized, JobStatus.Rejected, timeout=300)
        is JobStatus.Rejected
    )
    assert net.slashed(cheater.client.address, int(Role.Solver)) == net.params.solver_stake
    record = cheater.job_record(job_id)
    assert record is not None
    if adversary == "copy-seat":
        # what it handed in is exactly seat 0's honest work
        honest = TrainingEngine(run.contribution_spec(0, 0), initial=init)
        state = honest.run(honest.init_state(), run.inner_steps)
        assert record.hashes[-1] == honest.state_hash(state)
