"""A small protocol network for the node integration tests: real Anvil, real contracts,
nodes as threads in this process.

`Network` deploys the protocol with short windows (`FAST_PARAMS`), mines a block every
second (the session Anvil only automines on transactions, and every deadline is a block
timestamp), starts nodes in threads and waits on chain conditions.
"""

from __future__ import annotations

import logging
import socket
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from chain import DEV_PRIVATE_KEYS, Anvil, ChainClient, ProtocolParams, deploy_protocol
from veritrain.enums import JobStatus, Role
from veritrain.spec import JobSpec, default_digits_spec

E18 = 10**18

FAST_PARAMS = ProtocolParams(
    solver_stake=100 * E18,
    verifier_stake=10 * E18,
    challenge_bond=5 * E18,
    verifier_fee=1 * E18,
    arbiter_fee=1 * E18,
    jackpot=2 * E18,
    verifiers_per_job=3,
    samples_per_job=2,
    commit_window=300,
    verdict_window=30,
    reveal_window=15,
    challenge_window=12,
    claims_window=20,
    forced_error_rate_bps=0,  # deterministic by default; FORCED_UPDATES plants one every job
    jackpot_funding=50 * E18,
    unbonding_delay=60,
    min_stake_solver=100 * E18,
    min_stake_verifier=50 * E18,
    min_stake_whistleblower=50 * E18,
    committee_size=3,
    vote_commit_window=25,
    vote_reveal_window=25,
    claim_bond=10 * E18,
    claim_challenge_window=10,
    registration_window=45,  # a round posted in part waits this long before its claim
)

FORCED_UPDATES: dict[str, object] = {"forced_error_rate_bps": 10_000, "jackpot": 0}
"""Overrides that make every job carry a forced error (docs/FORCED_ERRORS.md); at that rate
every jackpot could be farmed (section 5), so none is paid."""

# dev key indices (0 deploys)
SUBMITTER, SOLVER, V1, V2, V3, WHISTLEBLOWER = 1, 2, 3, 4, 5, 6

log = logging.getLogger("tests.network")


def tiny_spec(seed: int = 5) -> JobSpec:
    """40 steps, a checkpoint every 10 (4 segments), a 64-16-10 MLP."""
    return default_digits_spec(
        seed=seed, total_steps=40, checkpoint_interval=10, hidden=(16,), batch_size=16
    )


def require_protocol_artifacts() -> None:
    """Fail when a contract artifact is missing: node tests never pass by skipping."""
    import pytest

    from chain.artifacts import out_dir

    names = ("JobManager", "ArbitrationCommittee", "BisectionGame", "ShareRegistry", "ModelShares")
    missing = [n for n in names if not list(out_dir().glob(f"*.sol/{n}.json"))]
    if missing:
        pytest.fail(f"contract artifacts missing after forge build: {missing}")


BISECTION_UPDATES: dict[str, object] = {
    "adjudicator": "bisection",
    "clock_seconds": 40,  # per side: covers ceil(log2 10) = 4 moves of a 1 s-block chain
    "move_bond": 1 * E18,
}
"""Overrides that deploy the bisection game (docs/DISPUTES.md) instead of the v0 committee."""


def bisection_params(params: ProtocolParams = FAST_PARAMS) -> ProtocolParams:
    """`params` deployed with `adjudicator="bisection"`."""
    require_protocol_artifacts()
    return params.model_copy(update=BISECTION_UPDATES)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Network:
    """Deployment + miner + node threads for one test."""

    def __init__(self, anvil: Anvil, tmp: Path, params: ProtocolParams = FAST_PARAMS) -> None:
        self.anvil = anvil
        self.tmp = tmp
        self.params = params
        deployer = ChainClient(anvil.rpc_url, DEV_PRIVATE_KEYS[0])
        self.deployment = deploy_protocol(deployer, params, build=False)
        self._stop_miner = threading.Event()
        self._miner = threading.Thread(target=self._mine, name="miner", daemon=True)
        self._miner.start()
        self._nodes: list[tuple[Any, threading.Event, threading.Thread]] = []

    def _mine(self) -> None:
        while not self._stop_miner.wait(1.0):
            try:
                self.anvil.mine(1)
            except Exception as exc:  # noqa: BLE001 - keep mining through hiccups
                log.warning("miner: %s", exc)

    def client(self, i: int) -> ChainClient:
        return ChainClient(self.anvil.rpc_url, DEV_PRIVATE_KEYS[i], self.deployment)

    def start(self, node: Any) -> threading.Event:
        """Run `node.run(stop)` in a thread; returns the stop event."""
        stop = threading.Event()
        thread = threading.Thread(target=node.run, args=(stop,), name=node.name, daemon=True)
        thread.start()
        self._nodes.append((node, stop, thread))
        return stop

    def stop(self, node: Any, timeout: float = 30.0) -> None:
        for n, stop, thread in self._nodes:
            if n is node:
                stop.set()
                thread.join(timeout)
                if thread.is_alive():
                    raise RuntimeError(f"{node.name} did not stop within {timeout}s")

    def close(self) -> None:
        for _, stop, _ in self._nodes:
            stop.set()
        for _, _, thread in self._nodes:
            thread.join(30)
        self._stop_miner.set()
        self._miner.join(5)

    def post_job(self, spec: JobSpec, reward: int = 50 * E18) -> int:
        """Post ``spec`` as the submitter (registering its model first if nobody has), with the
        initHash of the spec's seed-initialised state; returns the job id."""
        from veritrain.training import TrainingEngine

        sub = self.client(SUBMITTER)
        sub.token.faucet(1000 * E18)
        engine = TrainingEngine(spec)
        if sub.shares.model_owner(spec.model_id_hash()) is None:
            from tests.utils.models import register_model

            register_model(sub, spec.model_id_hash(), engine.state_hash(engine.init_state()), spec)
        receipt = sub.jobs.post_job(
            spec.model_id_hash(),
            spec.spec_hash(),
            engine.state_hash(engine.init_state()),
            spec.total_steps,
            spec.checkpoint_interval,
            reward,
            spec.to_data_uri(),
        )
        return sub.job_id_from(receipt)

    def wait_for(self, what: str, predicate: Callable[[], bool], timeout: float = 180.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if predicate():
                return
            time.sleep(0.5)
        raise AssertionError(f"timed out after {timeout:.0f}s waiting for {what}")

    def wait_status(self, job_id: int, *statuses: JobStatus, timeout: float = 180.0) -> JobStatus:
        reader = self.client(0)
        self.wait_for(
            f"job {job_id} in {[s.name for s in statuses]}",
            lambda: reader.jobs.get_job(job_id).status in statuses,
            timeout,
        )
        return reader.jobs.get_job(job_id).status

    def slashed(self, account: str, role: int) -> int:
        """Total stake (wei) slashed from ``account`` in ``role``, summed over StakeSlashed events.

        Nodes top their stake back up to the role's minimum after a slash, so a test that wants
        the loss reads it from the events rather than from the stake's current balance.
        """
        reader = self.client(0)
        logs = reader.event_logs(reader.stakes.contract, ["StakeSlashed"], 0, reader.block_number())
        return sum(
            int(ev.args["slashed"])
            for ev in logs
            if str(ev.args["account"]).lower() == account.lower() and int(ev.args["role"]) == role
        )

    def holdings(self, account: str) -> int:
        """Everything ``account`` owns in the protocol's token (wei): its balance, its Escrow
        credit and its stake (staked plus unbonding) in every role. An honest party's holdings
        after a job, minus what it paid in, is what the job cost or earned it."""
        reader = self.client(0)
        total = reader.token.balance_of(account) + reader.escrow.credit_of(account)
        for role in Role:
            view = reader.stakes.stake_of(account, role)
            total += view.staked + view.unbonding
        return total

    def wait_active(self, role: int, *indices: int, timeout: float = 180.0) -> None:
        reader = self.client(0)
        for i in indices:
            address = self.client(i).address
            self.wait_for(
                f"account {i} staked as role {role}",
                lambda a=address: reader.stakes.is_active(a, role),
                timeout,
            )


def open_network(
    anvil: Anvil, tmp: Path, params: ProtocolParams = FAST_PARAMS
) -> Iterator[Network]:
    """A `Network` on ``anvil`` for one test, closed after it: the body of the node tests'
    ``net`` fixtures (``yield from open_network(...)``). Skips when the protocol's artifacts
    are not built."""
    require_protocol_artifacts()
    network = Network(anvil, tmp, params)
    yield network
    network.close()
