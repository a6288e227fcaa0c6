"""Run a local Anvil devnet as a context manager.

``Anvil`` finds the binary (PATH, then ``<repo>/node_modules/.bin/anvil``), picks a free
loopback port, starts ``anvil --host 127.0.0.1 --hardfork cancun ...`` with Anvil's public dev
mnemonic, logs to a file, waits until ``web3_clientVersion`` answers ``anvil/...``, and stops it
(SIGINT, then terminate, then kill) on exit::

    with Anvil(chain_id=31337, block_time=None) as anvil:   # automine
        anvil.rpc_url                                       # "http://127.0.0.1:<port>"
        keys = DEV_PRIVATE_KEYS

For a testnet-like run (no funded, unlocked dev accounts at all) use
``Anvil(chain_id=11155111, accounts=0)`` and fund locally generated keys with `Anvil.fund`.

The dev keys below are Anvil's *public* well-known devnet keys (from the mnemonic
"test test ... junk"); they hold no value anywhere. Never log any key.

Run a devnet by hand: ``.venv/bin/python -m chain.anvil --block-time 1``.
"""

from __future__ import annotations

import argparse
import atexit
import contextlib
import itertools
import json
import logging
import os
import signal
import socket
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from types import TracebackType
from typing import Any

from eth_account import Account
from eth_account.signers.local import LocalAccount

from chain.artifacts import find_binary
from chain.errors import ChainError, RpcUnavailable

logger = logging.getLogger(__name__)

__all__ = [
    "Anvil",
    "AnvilError",
    "port_in_use",
    "DEV_MNEMONIC",
    "DEV_PRIVATE_KEYS",
    "DEFAULT_HARDFORK",
    "dev_accounts",
    "derive_dev_key",
    "derive_dev_keys",
]

DEV_MNEMONIC = "test test test test test test test test test test test junk"
DEFAULT_HARDFORK = "cancun"  # must match foundry.toml evm_version

# Anvil's ten public dev keys, m/44'/60'/0'/0/{0..9} of DEV_MNEMONIC (checked by the unit tests
# against an HD-wallet derivation). Public knowledge: never use them on a chain with value.
DEV_PRIVATE_KEYS: tuple[str, ...] = (
    "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80",
    "0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d",
    "0x5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a",
    "0x7c852118294e51e653712a81e05800f419141751be58f605c371e15141b007a6",
    "0x47e179ec197488593b187f80a00eb0da91f1b9d0b13f8733639f19c30a34926a",
    "0x8b3a350cf5c34c9194ca85829a2df0ec3153be0318b5e2d3348e872092edffba",
    "0x92db14e403b83dfe3df233f83dfa3a0d7096f21ca9b0d6d6b8d88b2b4ec1564e",
    "0x4bbbf85ce3377467afe5d46f804f221813b2bb87f24d81f60f1fcdbf7cbf4356",
    "0xdbda1821b80551c9d65939329250298aa3472ba22feea921c0cf5d620ea67b97",
    "0x2a871d0798f97d79848a013d4936a73bf4cc922c825d33c1cf7073dff6d409c6",
)


class AnvilError(ChainError):
    """Anvil is missing, failed to start, or did not become ready in time."""


def derive_dev_keys(count: int, mnemonic: str = DEV_MNEMONIC) -> list[str]:
    """Derive ``count`` keys ``m/44'/60'/0'/0/i`` from a mnemonic (eth-account HD wallet).

    Args:
        count: number of keys.
        mnemonic: BIP39 mnemonic (default: Anvil's public dev mnemonic).

    Returns:
        0x-prefixed hex private keys.
    """
    Account.enable_unaudited_hdwallet_features()
    keys = []
    for i in range(count):
        acct = Account.from_mnemonic(mnemonic, account_path=f"m/44'/60'/0'/0/{i}")
        keys.append("0x" + bytes(acct.key).hex())
    return keys


def derive_dev_key(index: int, mnemonic: str = DEV_MNEMONIC) -> str:
    """The one key ``m/44'/60'/0'/0/index`` of a mnemonic (Anvil's dev accounts beyond the
    first ten): one derivation, whatever the index.

    Args:
        index: account index, 0 <= index < 2**31 (a BIP-32 non-hardened index).
        mnemonic: BIP39 mnemonic (default: Anvil's public dev mnemonic).

    Returns:
        The 0x-prefixed hex private key.

    Raises:
        ValueError: `index` is out of range.
    """
    if not 0 <= index < 2**31:
        raise ValueError(f"dev account index must be in [0, 2**31), got {index}")
    if mnemonic == DEV_MNEMONIC and index < len(DEV_PRIVATE_KEYS):
        return DEV_PRIVATE_KEYS[index]
    Account.enable_unaudited_hdwallet_features()
    return (
        "0x"
        + bytes(Account.from_mnemonic(mnemonic, account_path=f"m/44'/60'/0'/0/{index}").key).hex()
    )


def dev_accounts(count: int = 10) -> list[LocalAccount]:
    """Anvil's dev accounts as local signers (the first ``count`` of DEV_PRIVATE_KEYS, or derived
    from the dev mnemonic beyond ten)."""
    keys = list(DEV_PRIVATE_KEYS[:count])
    if count > len(keys):
        keys = derive_dev_keys(count)
    return [Account.from_key(k) for k in keys]


def _group_alive(pgid: int) -> bool:
    """True while a live (non-zombie) process remains in process group ``pgid``."""
    try:
        os.killpg(pgid, 0)
    except (ProcessLookupError, PermissionError):
        return False
    for stat_file in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat_file.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        # fields: state ppid pgrp ...
        if len(fields) > 2 and int(fields[2]) == pgid and fields[0] != "Z":
            return True
    return not Path("/proc/self").exists()  # no procfs: trust killpg


def port_in_use(port: int, host: str = "127.0.0.1") -> bool:
    """True when something already listens on ``host:port`` (TCP).

    Binds a probe socket with SO_REUSEADDR, so connections of a stopped node lingering in
    TIME_WAIT do not count; a listening socket does.

    Args:
        port: TCP port.
        host: interface (Anvil binds 127.0.0.1).
    """
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError:
            return True
    return False


def _listening_inodes(port: int) -> set[str] | None:
    """Socket inodes listening on TCP ``port`` (from /proc/net/tcp{,6}); None without procfs."""
    found: set[str] = set()
    tables = [Path("/proc/net/tcp"), Path("/proc/net/tcp6")]
    if not tables[0].exists():
        return None
    for table in tables:
        try:
            rows = table.read_text().splitlines()[1:]
        except OSError:
            continue
        for row in rows:
            cols = row.split()
            # sl local_address rem_address st ... inode: state 0A is LISTEN
            if len(cols) > 9 and cols[3] == "0A" and int(cols[1].rsplit(":", 1)[1], 16) == port:
                found.add(cols[9])
    return found


def _group_socket_inodes(pgid: int) -> set[str]:
    """Socket inodes held open by the processes of process group ``pgid``."""
    inodes: set[str] = set()
    for stat_file in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat_file.read_text().rsplit(")", 1)[1].split()
            if len(fields) <= 2 or int(fields[2]) != pgid:
                continue
            for fd in (stat_file.parent / "fd").iterdir():
                target = os.readlink(fd)
                if target.startswith("socket:["):
                    inodes.add(target[8:-1])
        except (OSError, IndexError, ValueError):
            continue
    return inodes


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _fmt_seconds(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else repr(float(value))


class Anvil:
    """A local Anvil process, bound to 127.0.0.1 on a free port.

    Args:
        chain_id: EIP-155 chain id (31337 for a devnet; e.g. 11155111 to mimic Sepolia).
        block_time: seconds between blocks for interval mining (fractions such as 0.5 work
            with anvil 1.7.1); None for automine (one block per transaction).
        port: TCP port; None picks a free one.
        accounts: number of funded, unlocked dev accounts (0 for a testnet-like node where
            every transaction must be signed locally by a key funded with `fund`).
        balance: balance of each dev account, in ether.
        mnemonic: mnemonic for the dev accounts.
        hardfork: EVM hardfork (must match foundry.toml ``evm_version``).
        log_path: file receiving Anvil's stdout and stderr (default: a temp file).
        startup_timeout: seconds to wait for readiness.
        extra_args: further argv entries passed verbatim.
        binary: explicit path to the anvil binary.
    """

    def __init__(
        self,
        chain_id: int = 31337,
        block_time: float | None = 1.0,
        port: int | None = None,
        *,
        accounts: int = 10,
        balance: int = 10_000,
        mnemonic: str = DEV_MNEMONIC,
        hardfork: str = DEFAULT_HARDFORK,
        log_path: str | Path | None = None,
        startup_timeout: float = 30.0,
        extra_args: tuple[str, ...] = (),
        binary: str | Path | None = None,
    ) -> None:
        if block_time is not None and block_time <= 0:
            raise ValueError("block_time must be positive seconds or None (automine)")
        self.chain_id = chain_id
        self.block_time = block_time
        self.port = port
        self.accounts = accounts
        self.balance = balance
        self.mnemonic = mnemonic
        self.hardfork = hardfork
        self.startup_timeout = startup_timeout
        self.extra_args = tuple(extra_args)
        self._binary = Path(binary) if binary else None
        self._requested_log = Path(log_path) if log_path else None
        self.log_path: Path | None = None
        self._proc: subprocess.Popen[bytes] | None = None
        self._log_file: Any = None
        self._ids = itertools.count(1)

    # ------------------------------------------------------------------ lifecycle

    @property
    def rpc_url(self) -> str:
        """HTTP JSON-RPC URL, ``http://127.0.0.1:<port>``.

        Raises:
            AnvilError: the node has not been started.
        """
        if self.port is None:
            raise AnvilError("Anvil is not started")
        return f"http://127.0.0.1:{self.port}"

    @property
    def pid(self) -> int | None:
        """Process id of the spawned process (also its process group id), None when stopped."""
        return self._proc.pid if self._proc is not None else None

    @property
    def running(self) -> bool:
        """True while the process is alive."""
        return self._proc is not None and self._proc.poll() is None

    def argv(self, binary: str | Path, port: int) -> list[str]:
        """The command line for a given binary and port."""
        args = [
            str(binary),
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--hardfork",
            self.hardfork,
            "--chain-id",
            str(self.chain_id),
            "--mnemonic",
            self.mnemonic,
            "--accounts",
            str(self.accounts),
            "--balance",
            str(self.balance),
        ]
        if self.block_time is not None:
            args += ["--block-time", _fmt_seconds(self.block_time)]
        args += list(self.extra_args)
        return args

    def start(self) -> Anvil:
        """Start the process and wait until it answers JSON-RPC.

        Returns:
            self.

        Raises:
            AnvilError: binary missing, a fixed ``port`` already in use, process exited early,
                another process answering on its port, or not ready within
                ``startup_timeout`` seconds (one line; the log tail is logged at DEBUG).
        """
        if self.running:
            return self
        try:
            binary = self._binary or find_binary("anvil")
        except ChainError as exc:
            raise AnvilError(str(exc)) from exc
        if self._requested_log is not None:
            self.log_path = self._requested_log
            self.log_path.parent.mkdir(parents=True, exist_ok=True)
        else:
            fd, name = tempfile.mkstemp(prefix="anvil-", suffix=".log")
            os.close(fd)
            self.log_path = Path(name)
        fixed_port = self.port is not None
        if self.port is not None and port_in_use(self.port):
            raise AnvilError(
                f"port {self.port} on 127.0.0.1 is already in use (another node listens there); "
                "stop it or pick another port"
            )
        last_error: Exception | None = None
        for _attempt in range(1 if fixed_port else 3):
            port = self.port if fixed_port and self.port is not None else _free_port()
            try:
                self._spawn(binary, port)
                self._wait_ready()
                logger.info("anvil ready at %s (chain id %d)", self.rpc_url, self.chain_id)
                atexit.register(self.stop)
                return self
            except AnvilError as exc:  # port race or slow start: retry on a new port
                last_error = exc
                self.stop()
                if not fixed_port:
                    self.port = None
        raise AnvilError(str(last_error))

    def _spawn(self, binary: Path, port: int) -> None:
        if self.log_path is None:  # start() sets it first
            raise AnvilError("log path not set")
        self.port = port
        self._log_file = open(self.log_path, "ab")  # noqa: SIM115 - closed in stop()
        self._proc = subprocess.Popen(
            self.argv(binary, port),
            stdout=self._log_file,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,  # our stop() handles shutdown, not the terminal's ^C
        )

    def _log_tail(self, n: int = 2000) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-n:] if self.log_path else ""
        except OSError:
            return ""

    def _last_log_line(self) -> str:
        tail = self._log_tail()
        logger.debug("anvil log tail:\n%s", tail)
        lines = [line.strip() for line in tail.splitlines() if line.strip()]
        return f": {lines[-1]}" if lines else ""

    def _answered_by_us(self) -> bool:
        """Whether the socket listening on our port belongs to the process group we spawned
        (True when procfs cannot tell)."""
        if self._proc is None or self.port is None:
            return False
        listening = _listening_inodes(self.port)
        if listening is None:
            return True
        return bool(listening & _group_socket_inodes(self._proc.pid))

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + self.startup_timeout
        while time.monotonic() < deadline:
            if self._proc is None or self._proc.poll() is not None:
                code = None if self._proc is None else self._proc.returncode
                raise AnvilError(
                    f"anvil exited early (code {code}, log {self.log_path}){self._last_log_line()}"
                )
            try:
                version = self.rpc("web3_clientVersion", timeout=1.0)
            except (RpcUnavailable, ChainError):
                time.sleep(0.05)
                continue
            if "anvil" not in str(version).lower():
                raise AnvilError(f"node on port {self.port} is not anvil: {version}")
            if not self._answered_by_us():
                raise AnvilError(
                    f"port {self.port} is answered by another process, not the anvil started "
                    f"here (pid {self._proc.pid})"
                )
            return
        raise AnvilError(
            f"anvil not ready after {self.startup_timeout:.0f} s (log {self.log_path})"
            f"{self._last_log_line()}"
        )

    def stop(self, timeout: float = 5.0) -> None:
        """Stop the process: SIGINT, then SIGTERM, then SIGKILL (each waits ``timeout`` s).

        Signals go to the process group Anvil was started in (its own session), so the real
        binary behind the npm ``anvil`` node wrapper stops too.
        """
        proc, self._proc = self._proc, None
        if proc is not None and proc.poll() is None:
            for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGKILL):
                try:
                    os.killpg(proc.pid, sig)  # pgid == pid: start_new_session=True
                except ProcessLookupError:
                    break
                try:
                    proc.wait(timeout=timeout)
                    break
                except subprocess.TimeoutExpired:
                    continue
        if proc is not None:
            # The npm node wrapper may exit before the real binary: give the group a moment
            # to finish its graceful shutdown, then kill whatever is left of it.
            deadline = time.monotonic() + timeout
            while time.monotonic() < deadline and _group_alive(proc.pid):
                time.sleep(0.05)
            if _group_alive(proc.pid):
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(proc.pid, signal.SIGKILL)
        if self._log_file is not None:
            self._log_file.close()
            self._log_file = None
        try:
            atexit.unregister(self.stop)
        except Exception:  # pragma: no cover - atexit never raises here
            pass

    def __enter__(self) -> Anvil:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    # ------------------------------------------------------------------ JSON-RPC helpers

    def rpc(self, method: str, params: list[Any] | None = None, timeout: float = 10.0) -> Any:
        """Send one raw JSON-RPC request and return its ``result``.

        Raises:
            RpcUnavailable: the node cannot be reached.
            ChainError: the node answered with an error.
        """
        body = json.dumps(
            {"jsonrpc": "2.0", "id": next(self._ids), "method": method, "params": params or []}
        ).encode()
        req = urllib.request.Request(
            self.rpc_url, data=body, headers={"Content-Type": "application/json"}
        )
        try:
            with urllib.request.urlopen(req, timeout=timeout) as resp:
                reply = json.loads(resp.read())
        except (urllib.error.URLError, OSError, TimeoutError) as exc:
            raise RpcUnavailable(f"{self.rpc_url}: {exc}") from exc
        if "error" in reply:
            raise ChainError(f"{method} failed: {reply['error']}")
        return reply.get("result")

    def snapshot(self) -> str:
        """Take an EVM snapshot (``evm_snapshot``); returns its id for `revert`."""
        return str(self.rpc("evm_snapshot"))

    def revert(self, snapshot_id: str) -> bool:
        """Revert to a snapshot (``evm_revert``); the snapshot is consumed."""
        return bool(self.rpc("evm_revert", [snapshot_id]))

    def mine(self, blocks: int = 1) -> None:
        """Mine ``blocks`` empty blocks (``anvil_mine``)."""
        self.rpc("anvil_mine", [hex(blocks)])

    def increase_time(self, seconds: int) -> None:
        """Advance the next block's timestamp by ``seconds`` and mine it."""
        self.rpc("evm_increaseTime", [int(seconds)])
        self.mine(1)

    @contextlib.contextmanager
    def instant_blocks(self) -> Iterator[None]:
        """Mine one block per transaction inside the block, then go back to interval mining.

        A set-up of many transactions (deploying, funding, staking) under interval mining waits
        about one block per transaction (45 transactions: 45 s at 1 s blocks); here it waits
        for none (``evm_setAutomine``, then ``evm_setIntervalMining``). Chain time stays the
        wall clock's (blocks mined within one second share its timestamp). A no-op under
        automine, or when ``block_time`` is a fraction of a second (``evm_setIntervalMining``
        takes whole seconds): the set-up then waits as before.

        Raises:
            RpcUnavailable, ChainError: the node did not take the mining mode.
        """
        seconds = self.block_time
        if seconds is None or not float(seconds).is_integer():
            yield
            return
        self.rpc("evm_setAutomine", [True])
        try:
            yield
        finally:
            self.rpc("evm_setIntervalMining", [int(seconds)])

    def fund(self, address: str, wei: int) -> None:
        """Set an account's ether balance (``anvil_setBalance``), in wei."""
        self.rpc("anvil_setBalance", [address, hex(wei)])


def _main() -> None:  # pragma: no cover - manual entry point
    parser = argparse.ArgumentParser(description="run a local anvil devnet until ^C")
    parser.add_argument("--chain-id", type=int, default=31337)
    parser.add_argument("--block-time", type=float, default=None)
    parser.add_argument("--port", type=int, default=8545)
    ns = parser.parse_args()
    logging.basicConfig(level=logging.INFO)
    with Anvil(chain_id=ns.chain_id, block_time=ns.block_time, port=ns.port) as anvil:
        logger.info("rpc url %s, log %s", anvil.rpc_url, anvil.log_path)
        try:
            while anvil.running:
                time.sleep(1)
        except KeyboardInterrupt:
            pass


if __name__ == "__main__":  # pragma: no cover
    _main()
