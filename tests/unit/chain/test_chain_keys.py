"""Keystores, environment keys and Anvil's public dev keys (no node)."""

import os
import stat

import pytest

from chain.anvil import DEV_PRIVATE_KEYS, Anvil, derive_dev_key, derive_dev_keys, dev_accounts
from chain.keys import (
    KeyLoadError,
    account_from_env,
    create_keystore,
    load_account,
    load_keystore,
    new_account,
)


def test_keystore_round_trip(tmp_path, monkeypatch):
    acct = new_account()
    path = create_keystore(tmp_path / "k" / "solver.json", acct.key, "pw", iterations=2**10)
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert load_keystore(path, "pw").address == acct.address
    monkeypatch.setenv("TEST_KS_PW", "pw")
    assert load_account(keystore=path, password_env="TEST_KS_PW").address == acct.address
    with pytest.raises(KeyLoadError, match="wrong password"):
        load_keystore(path, "nope")
    with pytest.raises(KeyLoadError, match="already exists"):
        create_keystore(path, acct.key, "pw")
    create_keystore(path, acct.key, "pw2", overwrite=True, iterations=2**10)
    assert load_keystore(path, "pw2").address == acct.address


def test_keystore_without_password_or_terminal_is_one_clear_error(tmp_path, monkeypatch, capfd):
    """No password variable and stdin not a terminal: one error, no echoing prompt or warnings."""
    import io

    path = create_keystore(tmp_path / "k.json", new_account().key, "pw", iterations=2**10)
    monkeypatch.delenv("TEST_KS_PW", raising=False)
    monkeypatch.setattr("sys.stdin", io.StringIO("pw\n"))  # piped: would be read and echoed
    with pytest.raises(KeyLoadError, match="no terminal to prompt on"):
        load_account(keystore=path, password_env="TEST_KS_PW")
    out, err = capfd.readouterr()
    assert out == "" and err == ""


def test_key_from_env_never_echoes_the_value(monkeypatch):
    acct = new_account()
    monkeypatch.setenv("TEST_KEY", "0x" + bytes(acct.key).hex())
    assert account_from_env("TEST_KEY").address == acct.address
    monkeypatch.setenv("TEST_KEY", "0xnotakey-secret")
    with pytest.raises(KeyLoadError) as info:
        account_from_env("TEST_KEY")
    assert "secret" not in str(info.value)
    with pytest.raises(KeyLoadError):
        load_account()


def test_dev_keys_match_mnemonic_derivation():
    assert list(DEV_PRIVATE_KEYS) == derive_dev_keys(10)
    # one key, far out, is one derivation (`--dev-account 100000` once derived 100,001 keys)
    assert derive_dev_key(12) == derive_dev_keys(13)[12]
    assert derive_dev_key(3) == DEV_PRIVATE_KEYS[3]
    assert dev_accounts(1)[0].address == "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266"
    assert len(dev_accounts(12)) == 12


def test_anvil_argv():
    argv = Anvil(chain_id=11155111, block_time=0.5, accounts=0).argv("anvil", 9999)
    assert argv[:3] == ["anvil", "--host", "127.0.0.1"]
    joined = " ".join(argv)
    for part in (
        "--port 9999",
        "--hardfork cancun",
        "--chain-id 11155111",
        "--accounts 0",
        "--block-time 0.5",
    ):
        assert part in joined
    assert "--block-time" not in Anvil(block_time=None).argv("anvil", 1)
    assert "--block-time 2 " in " ".join(Anvil(block_time=2.0).argv("anvil", 1)) + " "
