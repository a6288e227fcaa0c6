"""`veritrain devnet` as users run it: a process that owns its Anvil and cleans it up.

Two checks: SIGTERM stops the devnet and its Anvil (nothing left in Anvil's process group, the
port free again); a devnet asked for a port another node already serves exits non-zero with one
line and deploys nothing there.

Run: ``.venv/bin/python -m pytest tests/integration/test_cli_devnet.py``.
"""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from chain import Anvil
from chain.anvil import dev_accounts
from chain.artifacts import repo_root
from chain.manifest import ContractAddresses


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def port_in_use(port: int) -> bool:
    """Whether something listens on 127.0.0.1:``port`` (a connection is accepted)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        return sock.connect_ex(("127.0.0.1", port)) == 0


def _alive(pid: int) -> bool:
    """True while ``pid`` runs (a zombie, exited but not yet reaped, counts as gone)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


def _devnet(port: int, folder: Path) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(repo_root()), "VERITRAIN_DEBUG": ""}
    return subprocess.Popen(
        [sys.executable, "-m", "cli.app", "devnet", "--port", str(port), "--block-time", "1",
         "--deployments", str(folder)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=folder,
    )  # fmt: skip


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_signal_stops_the_devnet_and_its_anvil(
    tmp_path: Path, contracts_out: Path, sig: signal.Signals
) -> None:
    """The devnet prints its Anvil's pid and the ten dev accounts (index, address); after
    SIGTERM (or SIGINT) the devnet exits 0 within 15 s, that pid is gone and nothing listens on
    the port any more."""
    port = _free_port()
    proc = _devnet(port, tmp_path)
    anvil_pid = None
    try:
        assert proc.stdout is not None
        deadline = time.monotonic() + 240
        seen = []
        while time.monotonic() < deadline:
            line = proc.stdout.readline()
            if not line:
                break
            seen.append(line)
            match = re.search(r"pid (\d+)", line)
            if match:
                anvil_pid = int(match.group(1))
            if line.startswith("Ctrl-C to stop"):
                break
        assert anvil_pid is not None and _alive(anvil_pid), "".join(seen)
        listed = [line.split()[1:] for line in seen if line.startswith("account ")]
        assert listed == [[str(i), a.address] for i, a in enumerate(dev_accounts(10))], seen
        # each contract on a line of its own: its name, then its address (or "(not deployed)")
        named = {line.split()[0]: line.split()[1:] for line in seen if line.split()}
        for name in ContractAddresses.model_fields:
            assert name in named, seen
            assert re.fullmatch(r"0x[0-9a-fA-F]{40}", named[name][0]) or named[name] == [
                "(not",
                "deployed)",
            ], named[name]
        proc.send_signal(sig)
        code = proc.wait(timeout=15)
        assert code == 0, proc.stderr.read() if proc.stderr else ""
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and (_alive(anvil_pid) or port_in_use(port)):
            time.sleep(0.1)
        assert not _alive(anvil_pid), f"anvil {anvil_pid} outlived the devnet"
        assert not port_in_use(port), f"port {port} still taken"
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        if anvil_pid is not None and _alive(anvil_pid):
            os.killpg(anvil_pid, signal.SIGKILL)  # the leak the test reports: clean it up


def test_devnet_on_a_taken_port_fails_with_one_line(tmp_path: Path, contracts_out: Path) -> None:
    """A node already serves the port: the devnet exits non-zero with one stderr line and the
    chain there sees no new block or transaction."""
    with Anvil(chain_id=31337, block_time=None) as stale:
        assert stale.port is not None
        blocks = int(stale.rpc("eth_blockNumber"), 16)
        proc = _devnet(stale.port, tmp_path)
        try:
            out, err = proc.communicate(timeout=60)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        lines = [line for line in err.splitlines() if line.strip()]
        assert proc.returncode != 0, out + err
        assert len(lines) == 1 and "Traceback" not in err, err
        assert "in use" in lines[0] and str(stale.port) in lines[0], lines[0]
        assert int(stale.rpc("eth_blockNumber"), 16) == blocks
        assert not (tmp_path / "31337.json").exists()


def test_instant_blocks_mine_each_transaction_then_interval_mining_resumes() -> None:
    """A set-up under `Anvil.instant_blocks` gets one block per transaction at once; after it
    the node is back on interval mining (no automine; blocks keep coming with no
    transaction)."""
    with Anvil(chain_id=31337, block_time=1.0) as node:
        assert node.rpc("anvil_getAutomine") is False
        sender, receiver = (a.address for a in dev_accounts(2))
        with node.instant_blocks():
            assert node.rpc("anvil_getAutomine") is True
            before = int(node.rpc("eth_blockNumber"), 16)
            tx = {"from": sender, "to": receiver, "value": hex(1)}
            # sent back to back: interval mining would put them in one block
            hashes = [node.rpc("eth_sendTransaction", [tx]) for _ in range(3)]
            blocks = [_mined_in(node, h) for h in hashes]
            assert blocks == [before + 1, before + 2, before + 3]
        assert node.rpc("anvil_getAutomine") is False
        mined = int(node.rpc("eth_blockNumber"), 16)
        deadline = time.monotonic() + 10
        while int(node.rpc("eth_blockNumber"), 16) == mined and time.monotonic() < deadline:
            time.sleep(0.2)
        assert int(node.rpc("eth_blockNumber"), 16) > mined, "interval mining did not resume"
    with Anvil(chain_id=31337, block_time=0.5) as fractional:
        with fractional.instant_blocks():  # whole seconds only: interval mining stays on
            assert fractional.rpc("anvil_getAutomine") is False


def _mined_in(node: Anvil, tx_hash: str) -> int:
    """The block number of a transaction's receipt (waits up to 10 s for it)."""
    deadline = time.monotonic() + 10
    while (receipt := node.rpc("eth_getTransactionReceipt", [tx_hash])) is None:
        assert time.monotonic() < deadline, f"{tx_hash} not mined"
        time.sleep(0.05)
    return int(receipt["blockNumber"], 16)
