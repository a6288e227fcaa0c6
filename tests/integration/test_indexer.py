"""The indexer on a real Anvil: every event once, a cursor that survives a restart, a
reorganisation of a few blocks rolled back, an RPC outage survived, an index of another
deployment refused, a seat's equivocation (docs/SECURITY.md P-40) indexed as a slash of its
job with its cause and listed on the job.

Run: ``.venv/bin/python -m pytest tests/integration/test_indexer.py -m anvil``.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from eth_utils.crypto import keccak
from sqlalchemy import func, select

from chain import Anvil, ChainClient, Deployment
from indexer import Index, Indexer, IndexMismatch, binding_of
from indexer.models import Event, Job, JobPhase, Model, Stake
from tests.utils.models import register_model
from tests.utils.rpc_proxy import RpcProxy
from veritrain.commitments import new_salt, verdict_commitment
from veritrain.enums import Role

E18 = 10**18
HASHES = [keccak(text=f"state {i}") for i in range(5)]


def _events(index: Index) -> list[tuple[int, int, str]]:
    with index.reader() as s:
        return [
            (e.block, e.log_index, e.name)
            for e in s.scalars(select(Event).order_by(Event.block, Event.log_index))
        ]


def _chain_events(client: ChainClient, dep: Deployment) -> list[tuple[int, int, str]]:
    """Every protocol log since the deployment, straight from eth_getLogs."""
    addresses = [a for a in dep.addresses.model_dump().values() if a]
    logs = client.w3.eth.get_logs(
        {"address": addresses, "fromBlock": dep.block, "toBlock": "latest"}
    )
    out = []
    for log in logs:
        ev = client.decode_log(log)
        assert ev is not None, log
        out.append((ev.block_number, ev.log_index, ev.event))
    return sorted(out)


def _post(submitter: ChainClient, model: str, uri: str = "data:,{}") -> int:
    receipt = submitter.jobs.post_job(
        keccak(text=model), keccak(text=uri), HASHES[0], 40, 10, 10 * E18, uri
    )
    return submitter.job_id_from(receipt)


def test_index_resumes_after_restart_and_refuses_another_deployment(
    tmp_path: Path, anvil: Anvil, protocol: Deployment, client_factory
) -> None:
    submitter, solver = client_factory(1), client_factory(2)
    submitter.token.faucet(1_000 * E18)
    solver.token.faucet(1_000 * E18)
    solver.stakes.stake(Role.Solver, protocol.params.min_stake_solver)
    register_model(submitter, keccak(text="m"), HASHES[0])
    _post(submitter, "m")

    url = f"sqlite:///{tmp_path / 'index.sqlite'}"
    binding = binding_of(submitter)
    index = Index.open(url, binding)
    assert Indexer(index, submitter).sync() > 0
    first = _events(index)
    assert first == _chain_events(submitter, protocol)
    index.close()

    # more happens while the indexer is down; a new process resumes at the cursor
    solver.jobs.claim_job(1)
    _post(submitter, "m", 'data:,{"x":1}')
    index = Index.open(url, binding)
    indexer = Indexer(index, submitter)
    added = indexer.sync()
    assert added == len(_chain_events(submitter, protocol)) - len(first) > 0
    assert _events(index) == _chain_events(submitter, protocol)  # nothing twice
    assert indexer.sync() == 0
    with index.reader() as s:
        job = s.get(Job, 1)
        assert job is not None and job.phase == "Claimed" and job.solver == solver.address
        assert [p.phase for p in s.scalars(select(JobPhase).where(JobPhase.job_id == 1))] == [
            "Open",
            "Claimed",
        ]
        stake = s.get(Stake, (solver.address, "solver"))
        view = solver.stakes.stake_of(role=Role.Solver)
        assert stake is not None and (stake.staked, stake.locked) == (view.staked, view.locked)
        assert view.locked == protocol.params.solver_stake
        model = s.get(Model, "0x" + keccak(text="m").hex())
        assert model is not None and model.owner == submitter.address
    index.close()

    other = binding.__class__(
        chain_id=binding.chain_id,
        addresses=binding.addresses,
        deploy_block=binding.deploy_block,
        deploy_block_hash="0x" + "ab" * 32,
    )
    with pytest.raises(IndexMismatch, match="was built for chain 31337"):
        Index.open(url, other)
    reset = Index.open(url, other, reset=True)
    assert _events(reset) == [] and reset.cursor() == binding.deploy_block


def test_reorg_of_a_few_blocks_is_rolled_back(
    anvil: Anvil, protocol: Deployment, client_factory
) -> None:
    submitter = client_factory(1)
    submitter.token.faucet(1_000 * E18)
    register_model(submitter, keccak(text="m"), HASHES[0])
    index = Index.open("sqlite://", binding_of(submitter))
    indexer = Indexer(index, submitter, reorg_depth=16)
    indexer.sync()
    fork = anvil.snapshot()
    _post(submitter, "m", 'data:,{"orphan":1}')  # 2 blocks that will be orphaned
    _post(submitter, "m", 'data:,{"orphan":2}')
    indexer.sync()
    with index.reader() as s:
        assert s.scalar(select(func.count()).select_from(Job)) == 2

    anvil.revert(fork)  # the chain forgets them; a different history replaces them
    submitter = ChainClient(anvil.rpc_url, submitter.account, protocol)
    anvil.mine(1)
    _post(submitter, "m", 'data:,{"canonical":1}')
    indexer.sync()
    assert indexer.reorgs == 1
    assert _events(index) == _chain_events(submitter, protocol)
    with index.reader() as s:
        jobs = list(s.scalars(select(Job)))
        assert [(j.job_id, j.spec_uri) for j in jobs] == [(1, 'data:,{"canonical":1}')]


def test_an_equivocation_is_indexed_as_a_slash_of_its_job(
    anvil: Anvil, protocol: Deployment, client_factory
) -> None:
    """A seat signs a seal, stores another with its own ``commitVerdicts`` and reveals it;
    another seat proves both (`tests/integration/test_chain_equivocation.py`'s flow). The index
    holds the equivocation (prover, both commitments, one verifierStake, no bonds), names the
    job and the cause on the seat's slash, and the dashboard's job and account views,
    ``account show`` (with and without ``--db``) and ``job watch`` list it."""
    from dashboard.queries import account, job
    from indexer.models import Equivocation, Slash
    from tests.integration.test_chain_equivocation import _claimed_job

    job_id, sid, claimed, seats, _solver, p = _claimed_job(client_factory)
    copier, honest = seats[0], seats[1]
    first = copier.round.sign_seal(
        sid, verdict_commitment(job_id, copier.address, claimed, new_salt())
    )
    salts = {s.address: new_salt() for s in seats}
    for seat in seats:
        seat.round.commit_verdicts(
            sid, verdict_commitment(job_id, seat.address, claimed, salts[seat.address])
        )
    for seat in seats:
        seat.round.reveal_verdicts(sid, claimed, salts[seat.address])
    stored = honest.round.seals_on_chain(sid)[copier.address.lower()]
    receipt = honest.round.prove_equivocation(
        sid, copier.address, (first.commitment, first.signature), stored
    )
    block = int(receipt["blockNumber"])

    index = Index.open("sqlite://", binding_of(honest))
    Indexer(index, honest).sync()
    with index.reader() as s:
        row = s.get(Equivocation, (job_id, copier.address, block))
        assert row is not None
        assert (row.prover, row.commitment, row.other_commitment) == (
            honest.address,
            "0x" + first.commitment.hex(),
            "0x" + stored[0].hex(),
        )
        assert (row.slashed, row.bonds) == (p.verifier_stake, 0)
        slashes = list(s.scalars(select(Slash).where(Slash.account == copier.address)))
        assert [(x.block, x.job_id, x.cause, x.slashed) for x in slashes] == [
            (block, job_id, "equivocation", p.verifier_stake)
        ]
        view = job(s, job_id)
        assert view is not None
        assert [(e.verifier, e.prover, e.slashed_wei) for e in view.equivocations] == [
            (copier.address, honest.address, p.verifier_stake)
        ]
        assert {a.verifier for a in view.assignments if a.voided} == {copier.address}
        shown = account(s, copier.address)
        assert shown is not None
        assert [(x.job_id, x.cause) for x in shown.slashes] == [(job_id, "equivocation")]
    from cli.accounts import account_report

    report = account_report(honest, copier.address, index=index)
    assert [(x["job_id"], x["cause"], x["amount_wei"]) for x in report["slashes"]] == [
        (job_id, "equivocation", p.verifier_stake)
    ]
    assert account_report(honest, copier.address)["slashes"] == report["slashes"]  # over RPC
    index.close()
    # `job watch`: the job's history names the proof and the slash, in VTT
    from cli.watch import Watcher
    from veritrain.units import vtt

    lines: list[dict[str, object]] = []
    Watcher(honest, job_id, lines.append).poll()
    texts = [line["text"] for line in lines]
    assert f"{honest.address} proved that {copier.address} signed two seals" in texts
    assert (
        f"verifier {copier.address} signed two seals: slashed {vtt(p.verifier_stake)} and bonds "
        f"{vtt(0)} to the jackpot pool; its verdicts voided"
    ) in texts


def test_a_signed_reveal_marks_every_seat_sealed(
    anvil: Anvil, protocol: Deployment, client_factory
) -> None:
    """``revealVerdictsSigned`` emits no ``VerdictsCommitted`` (its seals are only in its
    calldata): the index still marks each of its seats sealed, from its ``VerdictsRevealed``, with
    its approvals and no bond (every seat approved)."""
    from chain.seals import SignedReveal
    from indexer.models import Assignment
    from tests.integration.test_chain_equivocation import _claimed_job

    job_id, sid, claimed, seats, solver, _p = _claimed_job(client_factory)
    reveals = []
    for seat in seats:
        salt = new_salt()
        seal = seat.round.sign_seal(sid, verdict_commitment(job_id, seat.address, claimed, salt))
        reveals.append(SignedReveal(seat.address, tuple(claimed), salt, seal.signature))
    solver.round.reveal_verdicts_signed(sid, reveals)
    index = Index.open("sqlite://", binding_of(solver))
    Indexer(index, solver).sync()
    with index.reader() as s:
        rows = list(s.scalars(select(Assignment).where(Assignment.job_id == job_id)))
        assert {(r.verifier, r.sealed) for r in rows} == {(x.address, True) for x in seats}
        assert all(r.approvals == [True] * len(claimed) and int(r.bond) == 0 for r in rows)
        assert not any(e.name == "VerdictsCommitted" for e in s.scalars(select(Event)))
    index.close()


def test_rpc_outage_is_survived(anvil: Anvil, protocol: Deployment, client_factory) -> None:
    proxy = RpcProxy(anvil.rpc_url)
    proxy.start()
    submitter = client_factory(1)
    submitter.token.faucet(1_000 * E18)
    register_model(submitter, keccak(text="m"), HASHES[0])
    reader = ChainClient(proxy.url, submitter.account, protocol, request_timeout=5)
    index = Index.open("sqlite://", binding_of(reader))
    waits: list[float] = []

    def sleep(seconds: float) -> None:  # the endpoint comes back after two failed tries
        waits.append(seconds)
        if len(waits) == 2:
            proxy.start()

    indexer = Indexer(index, reader, sleep=sleep, max_retries=5)
    proxy.stop()
    try:
        indexer.sync()
    finally:
        proxy.stop()
    assert indexer.failures == 2 and waits == [0.25, 0.5]  # exponential backoff
    assert _events(index) == _chain_events(submitter, protocol)


def test_cli_index_then_bad_inputs_get_one_line(
    tmp_path: Path, anvil: Anvil, protocol: Deployment, client_factory
) -> None:
    import socket

    from typer.testing import CliRunner

    from chain import write_manifest
    from cli.app import app

    manifest = write_manifest(protocol, tmp_path)
    common = ["--rpc-url", anvil.rpc_url, "--deployment", str(manifest)]
    db = f"sqlite:///{tmp_path / 'cli.sqlite'}"
    runner = CliRunner()
    ok = runner.invoke(app, ["index", "--db", db, *common])
    assert ok.exit_code == 0 and "events/s" in ok.output, ok.output

    def one_line_error(args: list[str], needle: str) -> None:
        res = runner.invoke(app, args)
        assert res.exit_code != 0, res.output
        lines = [line for line in res.output.splitlines() if line.strip()]
        assert len(lines) == 1 and needle in lines[0] and "Traceback" not in res.output, lines

    one_line_error(["index", "--db", "nosuchdb://x", *common], "cannot use the database URL")
    # the same file, bound to this deployment, opened for another deployment block hash
    other = protocol.model_copy(update={"block": protocol.block + 1})
    one_line_error(
        [
            "index",
            "--db",
            db,
            "--rpc-url",
            anvil.rpc_url,
            "--deployment",
            str(write_manifest(other, tmp_path / "o")),
        ],
        "was built for chain 31337",
    )
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        port = taken.getsockname()[1]
        one_line_error(
            ["dashboard", "--db", db, "--port", str(port), *common],
            f"cannot listen on 127.0.0.1:{port}",
        )
