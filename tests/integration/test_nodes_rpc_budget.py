"""A node's RPC cost per poll does not grow with open jobs it cannot act on (spam), counted
as real HTTP requests to Anvil.

Run: ``.venv/bin/python -m pytest tests/integration/test_nodes_rpc_budget.py -m anvil``.
"""

from __future__ import annotations

import collections
from pathlib import Path
from typing import Any

import pytest
from eth_utils.crypto import keccak
from web3 import Web3
from web3.providers.rpc import HTTPProvider
from web3.types import RPCEndpoint

from chain import DEV_PRIVATE_KEYS, Anvil, ChainClient
from solver.node import SolverNode
from tests.utils.models import register_model
from tests.utils.node_harness import (
    E18,
    SOLVER,
    SUBMITTER,
    V1,
    WHISTLEBLOWER,
    Network,
    require_protocol_artifacts,
)
from verifier.node import VerifierNode
from veritrain.enums import Role
from veritrain.spec import default_digits_spec
from whistleblower.node import WhistleblowerNode

pytestmark = [pytest.mark.anvil, pytest.mark.slow, pytest.mark.timeout(400)]


class CountingHTTPProvider(HTTPProvider):
    """An `HTTPProvider` counting the requests that actually go over HTTP, per method (the
    provider's own cache answers the others)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.calls: collections.Counter[str] = collections.Counter()

    def _make_request(self, method: RPCEndpoint, request_data: bytes) -> bytes:
        self.calls[str(method)] += 1
        return super()._make_request(method, request_data)


def _post_unclaimable(net: Network, count: int) -> None:
    """`count` open jobs nobody will ever claim (their spec URI leads nowhere)."""
    sub = net.client(SUBMITTER)
    sub.token.faucet(count * 10 * E18)
    spec = default_digits_spec(seed=9, total_steps=40, checkpoint_interval=10)
    init = b"\x03" * 32  # never read: nobody claims these jobs
    if sub.shares.model_owner(spec.model_id_hash()) is None:
        register_model(sub, spec.model_id_hash(), init, spec)
    for _ in range(count):  # a spec hash of its own each: the same training is posted once
        nonce = sub.jobs.job_count().to_bytes(32, "big")
        sub.jobs.post_job(
            spec.model_id_hash(),
            keccak(spec.spec_hash() + nonce),
            init,
            40,
            10,
            E18,
            "file:///nowhere",
        )


def _poll_cost(node: Any, provider: CountingHTTPProvider) -> dict[str, int]:
    provider.calls.clear()
    node.step()
    return dict(provider.calls)


def _counted(net: Network, key: int) -> tuple[ChainClient, CountingHTTPProvider]:
    provider = CountingHTTPProvider(net.anvil.rpc_url)
    client = ChainClient(
        net.anvil.rpc_url, DEV_PRIVATE_KEYS[key], net.deployment, w3=Web3(provider)
    )
    return client, provider


def test_poll_cost_does_not_grow_with_spam(
    anvil: Anvil, contracts_out: Path, tmp_path: Path
) -> None:
    require_protocol_artifacts()
    net = Network(anvil, tmp_path)
    try:
        v_client, v_rpc = _counted(net, V1)
        w_client, w_rpc = _counted(net, WHISTLEBLOWER)
        s_client, s_rpc = _counted(net, SOLVER)
        nodes = {
            "verifier": (VerifierNode(v_client, tmp_path / "v"), v_rpc),
            "whistleblower": (WhistleblowerNode(w_client, tmp_path / "w"), w_rpc),
            "solver": (SolverNode(s_client, tmp_path / "s", "127.0.0.1", 1, serve=False), s_rpc),
        }
        for node, _ in nodes.values():
            node.bind_chain()  # what run() does first
        _post_unclaimable(net, 10)
        for node, _ in nodes.values():
            node.step()  # stake, catch up (the solver reads each new job once and skips it)
            node.step()
        assert v_client.stakes.is_active(v_client.address, int(Role.Verifier))
        with_10 = {name: _poll_cost(node, rpc) for name, (node, rpc) in nodes.items()}
        _post_unclaimable(net, 90)
        for node, _ in nodes.values():
            node.step()  # sees the new blocks (and jobs) once
        with_100 = {name: _poll_cost(node, rpc) for name, (node, rpc) in nodes.items()}
        print(
            "RPC requests per poll, 10 -> 100 open jobs: "
            + "; ".join(
                f"{n} {sum(with_10[n].values())} -> {sum(with_100[n].values())}" for n in nodes
            )
        )
        for name in nodes:
            # a block mined between the polls may add one event query; spam may not add more
            assert sum(with_100[name].values()) <= sum(with_10[name].values()) + 2, (
                name,
                with_10[name],
                with_100[name],
            )
            assert with_100[name].get("eth_chainId", 0) == 0, name
    finally:
        net.close()
