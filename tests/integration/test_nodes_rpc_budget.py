"""A node's RPC cost per poll does not grow with open jobs it cannot act on (spam), counted
as real HTTP requests to Anvil.

Run: ``.venv/bin/python -m pytest tests/integration/test_nodes_rpc_budget.py -m anvil``.
"""

from __future__ import annotations

import collections
from pathlib import Path
from typing import Any

import pytest
from web3 import Web3
from web3.providers.rpc import HTTPProvider
from web3.types import RPCEndpoint

from chain import DEV_PRIVATE_KEYS, Anvil, ChainClient
from tests.utils.node_harness import E18, SUBMITTER, V1, Network, require_protocol_artifacts
from verifier.node import VerifierNode
from veritrain.enums import Role
from veritrain.spec import default_digits_spec

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
    for _ in range(count):
        sub.jobs.post_job(spec.model_id_hash(), spec.spec_hash(), 40, 10, E18, "file:///nowhere")


def _poll_cost(node: VerifierNode, provider: CountingHTTPProvider) -> dict[str, int]:
    provider.calls.clear()
    node.step()
    return dict(provider.calls)


def test_verifier_poll_cost_does_not_grow_with_spam(
    anvil: Anvil, contracts_out: Path, tmp_path: Path
) -> None:
    require_protocol_artifacts()
    net = Network(anvil, tmp_path)
    try:
        provider = CountingHTTPProvider(anvil.rpc_url)
        client = ChainClient(anvil.rpc_url, DEV_PRIVATE_KEYS[V1], net.deployment, w3=Web3(provider))
        node = VerifierNode(client, tmp_path / "v")
        _post_unclaimable(net, 10)
        node.step()  # stake, catch up
        node.step()
        assert client.stakes.is_active(client.address, int(Role.Verifier))
        with_10 = _poll_cost(node, provider)
        _post_unclaimable(net, 290)
        node.step()  # sees the new blocks once
        with_300 = _poll_cost(node, provider)
        print(f"RPC requests per poll: N=10 {with_10}; N=300 {with_300}")
        # a block mined between the polls may add one event query; spam may not add more
        assert sum(with_300.values()) <= sum(with_10.values()) + 2, (with_10, with_300)
        assert with_300.get("eth_chainId", 0) == 0
    finally:
        net.close()
