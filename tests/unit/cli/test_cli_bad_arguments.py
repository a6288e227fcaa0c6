"""Every bad argument of every `veritrain` command ends in one clear line and a non-zero exit.

A table of (command line, a word the message must contain); each row runs through Typer's
CliRunner with ``--rpc-url`` pointing at a closed port, so a row passes only when the input is
refused before any connection is tried (the word checks it was refused for the right reason).
The chain-level table (a real Anvil) is tests/integration/test_cli_bad_chain_inputs.py.

Run: ``.venv/bin/python -m pytest tests/unit/cli/test_cli_bad_arguments.py -q``.
"""

from __future__ import annotations

import socket
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cli.app import app


def _closed_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


DOWN = f"http://127.0.0.1:{_closed_port()}"  # nothing listens there
RPC = ["--rpc-url", DOWN]
KEY = ["--dev-account", "1"]
UINT256_OVER = str(2**256)
REPO = Path(__file__).resolve().parents[3]
TEXT = str(REPO / "README.md")
EMPTY = str(REPO / "bench" / "__init__.py")  # an empty file
NEW_OUT = str(REPO / "cache" / "no-dataset-is-written-here")  # every row fails before writing
DATASET = str(REPO / "veritrain")  # a folder, not a prepared dataset
# Anvil dev account 1 with its last digit mistyped (8 -> 9): mixed case, checksum fails.
BAD_CHECKSUM = "0x70997970C51812dc3A010C7d01b50e0d17dc79C9"

# (command line, a word the one-line message must contain, case-insensitive)
CASES: list[tuple[list[str], str]] = [
    # roles and token amounts
    (["stake", "pilot", "10", *RPC, *KEY], "role"),
    (["stake", "solver", "abc", *RPC, *KEY], "amount"),
    (["stake", "solver", "inf", *RPC, *KEY], "amount"),
    (["stake", "solver", "-inf", *RPC, *KEY], "amount"),
    (["stake", "solver", "nan", *RPC, *KEY], "amount"),
    (["stake", "solver", "1e100", *RPC, *KEY], "amount"),
    (["stake", "solver", "-5", *RPC, *KEY], "amount"),
    (["stake", "solver", "0", *RPC, *KEY], "amount"),
    (["stake", "solver", "0.0000000000000000001", *RPC, *KEY], "amount"),
    (["stake", "solver", "12wei3", *RPC, *KEY], "amount"),
    (["stake", "solver", f"{UINT256_OVER}wei", *RPC, *KEY], "amount"),
    (["unbond", "pilot", "1", *RPC, *KEY], "role"),
    (["unbond", "solver", "inf", *RPC, *KEY], "amount"),
    (["unbond", "solver", "-1", *RPC, *KEY], "amount"),
    (["withdraw", "pilot", *RPC, *KEY], "role"),
    (["jackpot", "fund", "inf", *RPC, *KEY], "amount"),
    (["jackpot", "fund", "-1", *RPC, *KEY], "amount"),
    (["jackpot", "fund", "0", *RPC, *KEY], "amount"),
    (["revenue", "pay", "digits-mlp", "1e100", *RPC, *KEY], "amount"),
    (["revenue", "pay", "digits-mlp", "garbage", *RPC, *KEY], "amount"),
    # model ids and addresses
    (["revenue", "pay", "0xzz", "5", *RPC, *KEY], "model"),
    (["revenue", "pay", "0x1234", "5", *RPC, *KEY], "model"),
    (["revenue", "claim", "0xnothex", *RPC, *KEY], "model"),
    (["shares", "0xzz", *RPC], "model"),
    (["shares", "digits-mlp", "0x123", *RPC], "address"),
    (["shares", "digits-mlp", "not-an-address", *RPC], "address"),
    (["deploy", "--token", "0xzz", *RPC], "address"),
    # a mixed-case address whose EIP-55 checksum fails (the last digit mistyped) names nobody
    (["model", "authorize", "digits-mlp", BAD_CHECKSUM, *RPC, *KEY], "checksum"),
    (["model", "revoke", "digits-mlp", BAD_CHECKSUM, *RPC, *KEY], "checksum"),
    (["model", "transfer", "digits-mlp", BAD_CHECKSUM, *RPC, *KEY], "checksum"),
    (["account", "show", BAD_CHECKSUM, *RPC], "checksum"),
    (["shares", "digits-mlp", BAD_CHECKSUM, *RPC], "checksum"),
    (["deploy", "--token", BAD_CHECKSUM, *RPC], "checksum"),
    # job shapes
    (["job", "submit", "--steps", "0", *RPC, *KEY], "steps"),
    (["job", "submit", "--steps", "-5", *RPC, *KEY], "steps"),
    (["job", "submit", "--steps", "4294967296", "--interval", "1", *RPC, *KEY], "steps"),
    (["job", "submit", "--interval", "0", *RPC, *KEY], "interval"),
    (["job", "submit", "--interval", "-25", *RPC, *KEY], "interval"),
    (["job", "submit", "--steps", "100", "--interval", "30", *RPC, *KEY], "interval"),
    (["job", "submit", "--steps", "300", "--interval", "600", *RPC, *KEY], "interval"),
    (["job", "submit", "--lr", "0", *RPC, *KEY], "lr"),
    (["job", "submit", "--lr", "-1", *RPC, *KEY], "lr"),
    (["job", "submit", "--lr", "nan", *RPC, *KEY], "lr"),
    (["job", "submit", "--lr", "inf", *RPC, *KEY], "lr"),
    (["job", "submit", "--batch-size", "0", *RPC, *KEY], "batch"),
    (["job", "submit", "--threads", "0", *RPC, *KEY], "threads"),
    (["job", "submit", "--count", "0", *RPC, *KEY], "count"),
    (["job", "submit", "--seed", "-1", *RPC, *KEY], "seed"),
    (["job", "submit", "--seed", str(2**64), *RPC, *KEY], "seed"),
    (["job", "submit", "--seed", str(2**64 - 2), "--count", "3", *RPC, *KEY], "seed"),
    (["job", "submit", "--reward", "inf", *RPC, *KEY], "reward"),
    (["job", "submit", "--reward", "-1", *RPC, *KEY], "reward"),
    (["job", "submit", "--model-id", "", *RPC, *KEY], "model"),
    # job ids
    (["job", "show", "0", *RPC], "job"),
    (["job", "show", "-1", *RPC], "job"),
    (["job", "show", UINT256_OVER, *RPC], "job"),
    (["job", "show", "abc", *RPC], "job"),
    (["job", "cancel", "0", *RPC, *KEY], "job"),
    (["job", "cancel", "abc", *RPC, *KEY], "job"),
    (["job", "reclaim", "-3", *RPC, *KEY], "job"),
    # endpoints
    (["job", "list", "--rpc-url", "garbage"], "rpc"),
    (["job", "list", "--rpc-url", "ftp://127.0.0.1:8545"], "rpc"),
    (["job", "list", "--rpc-url", "http://"], "rpc"),
    (["job", "list", "--rpc-url", "http://127.0.0.1:99999"], "rpc"),
    (["job", "list", *RPC], "reach"),
    (["jackpot", "show", *RPC], "reach"),
    (["credit", *RPC, *KEY], "reach"),
    (["stake", "solver", "100", *RPC, *KEY], "reach"),
    (["stake", "solver", "100", *RPC, "--dev-account", "-1"], "dev-account"),
    (["job", "submit", "--rpc-url", "garbage", *KEY], "rpc"),
    (["deploy", "--rpc-url", "garbage"], "rpc"),
    # devnet and demo arguments (refused before Anvil starts)
    (["devnet", "--port", "70000"], "port"),
    (["devnet", "--port", "0"], "port"),
    (["devnet", "--block-time", "0"], "block"),
    (["devnet", "--block-time", "-1"], "block"),
    (["devnet", "--preset", "fast"], "preset"),
    (["devnet", "--fund", "inf"], "amount"),
    (["deploy", "--preset", "fast", *RPC], "preset"),
    (["demo", "--adjudicator", "oracle"], "adjudicator"),
    (["demo", "--steps", "100", "--interval", "30"], "interval"),
    (["demo", "--timeout", "-5"], "timeout"),
    (["demo", "--run", "--rounds", "2"], "rounds"),
    (["demo", "--run", "--timeout", "0"], "timeout"),
    (["demo", "--run", "--preset", "cifar"], "unknown preset 'cifar'"),
    (["demo", "--run", "--preset", "digits-mlp"], "not a language model"),
    (["demo", "--preset", "llama-char"], "--run"),
    # spec files and `spec new` (refused before anything is written, trained or sent)
    (["spec", "new", "--family", "bert", "--data", DATASET, "--out", NEW_OUT], "family"),
    (["spec", "new", "--family", "gpt", "--data", DATASET, "--out", NEW_OUT], "prepared dataset"),
    (["spec", "new", "--data", DATASET, "--out", NEW_OUT], "--family"),
    (["train", "--spec", TEXT], "not json"),
    (["train", "--spec", NEW_OUT], "cannot read spec file"),
    (["job", "submit", "--spec", TEXT, *RPC, *KEY], "not json"),
    (["job", "submit", "--spec", EMPTY, "--batch-size", "8", *RPC, *KEY], "--batch-size"),
    (["model", "register", "digits-mlp", "--spec", TEXT, *RPC, *KEY], "not json"),
    (["run", "spec", NEW_OUT, "--spec", TEXT], "not json"),
    # node options (refused before any connection)
    (["solver", "run", "--threads", "0", *RPC, *KEY], "threads"),
    (["solver", "run", "--model", " ", *RPC, *KEY], "model"),
    (["solver", "run", "--max-jobs", "-1", *RPC, *KEY], "max-jobs"),
    (["solver", "run", "--workers", "0", *RPC, *KEY], "workers"),
    (["solver", "run", "--workers", "two", *RPC, *KEY], "workers"),
    (["solver", "run", "--workers", "1.5", *RPC, *KEY], "workers"),
    (["verifier", "run", "--threads", "-1", *RPC, *KEY], "threads"),
    (["whistleblower", "run", "--threads", "two", *RPC, *KEY], "threads"),
    (["adversary", "solver", "--mode", "perturb", "--model", "", *RPC, *KEY], "model"),
    # data prepare (refused before anything is written)
    (["data", "prepare", "no-such-corpus.txt", "--out", NEW_OUT], "no-such-corpus.txt"),
    (["data", "prepare", EMPTY, "--out", NEW_OUT], "empty"),
    (["data", "prepare", TEXT, "--out", NEW_OUT, "--tokenizer", TEXT], "tokenizer"),
    (["data", "prepare", TEXT, "--out", NEW_OUT, "--tokenizer", "no-such.json"], "tokenizer"),
    (["data", "prepare", TEXT, "--out", NEW_OUT, "--tokenizer-hash", "0x12"], "tokenizer-hash"),
    # the byte tokenizer is not the one whose hash the owner published
    (["data", "prepare", TEXT, "--out", NEW_OUT, "--tokenizer-hash", "0x" + "ab" * 32], "0xabab"),
    (["data", "prepare", TEXT, "--out", NEW_OUT, "--chunk-tokens", "1"], "chunk-tokens"),
    (["data", "prepare", TEXT, "--out", NEW_OUT, "--chunk-tokens", "1000000000"], "chunk"),
    (["data", "prepare", TEXT, "--out", NEW_OUT, "--val-fraction", "0"], "fraction"),
    (["data", "prepare", TEXT, "--out", str(REPO / "veritrain")], "not empty"),
    (["data", "prepare", TEXT], "--out"),
    (["data", "prepare", "--out", NEW_OUT], "files"),
    # unknown commands and options
    (["job", "frobnicate"], "frobnicate"),
    (["stake", "solver", "10", "--no-such-option"], "no-such-option"),
]


def _id(case: tuple[list[str], str]) -> str:
    return " ".join(a for a in case[0] if a not in (DOWN, "--rpc-url", "--dev-account", "1"))[:60]


@pytest.mark.parametrize(("argv", "word"), CASES, ids=[_id(c) for c in CASES])
def test_bad_argument_gives_one_line_and_a_non_zero_exit(argv: list[str], word: str) -> None:
    """Exit code != 0; exactly one line, on stderr, naming the problem; no traceback, no
    exception escaping the command (CliRunner would swallow a traceback otherwise)."""
    result = CliRunner().invoke(app, argv, env={"VERITRAIN_DEBUG": ""})
    assert result.exit_code != 0, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(
        result.exception
    )
    assert "Traceback" not in result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1, result.output
    assert result.stdout.strip() == "", result.stdout
    assert word.lower() in lines[0].lower(), lines[0]


def test_the_table_covers_every_command_that_takes_input() -> None:
    """Each command with arguments or options has at least one bad-input row."""
    covered = {
        " ".join(argv[:2]) if argv[0] in ("job", "jackpot", "revenue") else argv[0]
        for argv, _ in CASES
    }
    expected = {
        "stake", "unbond", "withdraw", "credit", "shares", "deploy", "devnet", "demo",
        "job submit", "job show", "job list", "job cancel", "job reclaim",
        "jackpot fund", "jackpot show", "revenue pay", "revenue claim", "data", "spec", "train",
    }  # fmt: skip
    assert expected <= covered, expected - covered


@pytest.mark.parametrize(
    ("argv", "env"),
    [(["--debug", "job", "list", *RPC], {}), (["job", "list", *RPC], {"VERITRAIN_DEBUG": "1"})],
    ids=["--debug", "VERITRAIN_DEBUG=1"],
)
def test_the_debug_switch_lets_the_traceback_through(argv: list[str], env: dict[str, str]) -> None:
    """With --debug or VERITRAIN_DEBUG=1 the error propagates (its traceback is shown)."""
    from chain.errors import RpcUnavailable

    result = CliRunner().invoke(app, argv, env={"VERITRAIN_DEBUG": "", **env})
    assert isinstance(result.exception, RpcUnavailable), result.output
