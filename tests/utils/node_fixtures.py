"""Helpers shared by the node unit tests: a tiny spec and a fake protocol (no Anvil)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fastapi.testclient import TestClient

from adversary.solver import solver_node
from solver.node import SolverNode
from solver.server import create_app
from tests.utils.fake_chain import FakeChain
from veritrain.enums import Verdict
from veritrain.spec import JobSpec, default_digits_spec

SUBMITTER = "0x00000000000000000000000000000000000000a1"
SOLVER = "0x00000000000000000000000000000000000000b1"
VERIFIERS = (
    "0x00000000000000000000000000000000000000c1",
    "0x00000000000000000000000000000000000000c2",
)
WHISTLEBLOWER = "0x00000000000000000000000000000000000000d1"


def tiny_spec(seed: int = 3) -> JobSpec:
    """40 steps, a checkpoint every 10 (4 segments), a 64-16-10 MLP: ~1 s on a CPU."""
    return default_digits_spec(
        seed=seed, total_steps=40, checkpoint_interval=10, hidden=(16,), batch_size=16
    )


def run_solver_to_commit(chain: FakeChain, tmp: Path, adversary: Any = None) -> SolverNode:
    """Post a job, let a solver claim, train and commit it, assign verifiers and post its
    claims on the sampled segments (docs/FORCED_ERRORS.md)."""
    job_id = chain.post_job(SUBMITTER, tiny_spec())
    node = solver_node(chain.client(SOLVER), tmp / "solver", mode=adversary, serve=False)
    for _ in range(4):
        node.step()
        chain.advance(blocks=2)
    assert chain.jobs[job_id].status.name == "Verifying", chain.jobs[job_id]
    assert job_id in chain.claims, "the solver posts its claims once assigned"
    return node


def verifiers_approve(chain: FakeChain, job_id: int = 1) -> None:
    """Record revealed approve verdicts of every assigned verifier on its own samples (P-27:
    the secret can only be revealed once every sample has a revealed verdict)."""
    assignment = chain.assignments[job_id]
    for verifier in assignment.verifiers:
        own = chain.sample_masks.get((job_id, verifier), 0)
        chain.verdicts[(job_id, verifier)] = [
            Verdict.Approve if (own >> i) & 1 else Verdict.None_
            for i in range(len(assignment.segments))
        ]
        chain.revealed.add((job_id, verifier))


def past_challenge_deadline(chain: FakeChain, job_id: int = 1) -> None:
    """Move the clock into the secret-reveal window (just past the challenge deadline)."""
    chain.now = chain.jobs[job_id].challenge_deadline + 1


def http_for(node: SolverNode) -> TestClient:
    """An httpx client routed to the solver's checkpoint app (any host name works)."""
    return TestClient(create_app(node.catalog))


def seat_accounts(chain: FakeChain) -> list[Any]:
    """Two verifier accounts with real keys, known to the chain (`FakeChain.keys`), so their
    seals are real EIP-712 signatures (hand-off tests); their addresses are checksummed."""
    from eth_account import Account

    accounts = [Account.from_key(bytes([0xC0 + i]) * 32) for i in (1, 2)]
    for account in accounts:
        chain.keys[account.address] = account
    return accounts


def aggregating_http(node: SolverNode) -> TestClient:
    """An httpx client routed to the solver's checkpoint app with its hand-off routes
    (`solver.aggregation`)."""
    from solver.aggregation import mount_aggregation

    return TestClient(mount_aggregation(create_app(node.catalog), node.aggregator))
