"""Integration fixtures: one Anvil per session, compiled contracts, per-test EVM snapshots.

Tests here are marked ``anvil``; they start Anvil themselves on a free loopback port.
Run: ``.venv/bin/python -m pytest tests/integration -m anvil``.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from chain import (
    DEV_PRIVATE_KEYS,
    Anvil,
    AnvilError,
    ArtifactError,
    ChainClient,
    Deployment,
    ProtocolParams,
    build,
    deploy_protocol,
)
from chain.artifacts import out_dir, repo_root


def _anvil_available() -> bool:
    return bool(shutil.which("anvil")) or (repo_root() / "node_modules/.bin/anvil").exists()


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    here = Path(__file__).parent
    for item in items:
        if Path(str(item.fspath)).is_relative_to(here):
            item.add_marker(pytest.mark.anvil)


@pytest.fixture(scope="session")
def contracts_out() -> Path:
    """Compile the contracts once per session (no-op when contracts/out is fresh)."""
    try:
        return build()
    except ArtifactError as exc:
        pytest.fail(f"forge build failed: {exc}")


def require_artifacts(*names: str) -> None:
    """Fail when a contract artifact is missing: integration tests never pass by skipping."""
    missing = [n for n in names if not list(out_dir().glob(f"*.sol/{n}.json"))]
    if missing:
        pytest.fail(f"contract artifacts missing after forge build: {missing}")


@pytest.fixture(scope="session")
def protocol_artifacts(contracts_out: Path) -> Path:
    """Compiled protocol contracts (fails if any is missing)."""
    require_artifacts(
        "VeriToken",
        "StakeManager",
        "JobManager",
        "ArbitrationCommittee",
        "ShareRegistry",
        "ModelShares",
    )
    return contracts_out


@pytest.fixture(scope="session")
def anvil() -> Iterator[Anvil]:
    """A session-wide automining Anvil (chain id 31337, 10 dev accounts)."""
    if not _anvil_available():
        pytest.fail("anvil binary not found (run `npm ci` or `bash scripts/setup.sh`)")
    try:
        node = Anvil(chain_id=31337, block_time=None).start()
    except AnvilError as exc:
        pytest.fail(str(exc))
    yield node
    node.stop()


@pytest.fixture(autouse=True)
def _evm_isolation(request: pytest.FixtureRequest) -> Iterator[None]:
    """Snapshot the session chain before each test that uses it and revert after."""
    if "anvil" not in request.fixturenames:
        yield
        return
    node: Anvil = request.getfixturevalue("anvil")
    if "protocol" in request.fixturenames:
        request.getfixturevalue("protocol")  # deploy before the snapshot so it survives
    snap = node.snapshot()
    yield
    node.revert(snap)


@pytest.fixture(scope="session")
def protocol(anvil: Anvil, protocol_artifacts: Path) -> Deployment:
    """The protocol deployed once per session with the demo parameters (deployer = key 0).

    Session-scoped deployment happens before any per-test snapshot, so reverts keep it.
    """
    deployer = ChainClient(anvil.rpc_url, DEV_PRIVATE_KEYS[0])
    return deploy_protocol(deployer, ProtocolParams.demo(), build=False)


@pytest.fixture
def client_factory(anvil: Anvil, protocol: Deployment):
    """Build fresh clients (fresh nonce caches) for dev key ``i`` bound to the deployment."""

    def make(i: int = 0) -> ChainClient:
        return ChainClient(anvil.rpc_url, DEV_PRIVATE_KEYS[i], protocol)

    return make
