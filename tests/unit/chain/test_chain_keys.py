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


def _keys(*args: str, env: dict[str, str] | None = None, cwd=None):
    """`python -m chain.keys ...` as a user runs it: stdin not a terminal."""
    import subprocess
    import sys

    from chain.artifacts import repo_root

    return subprocess.run(
        [sys.executable, "-m", "chain.keys", *args],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(repo_root()), **(env or {})},
        cwd=cwd,
        timeout=120,
    )


def test_keys_new_without_a_terminal_is_one_line_and_writes_nothing(tmp_path):
    """It used to end in getpass's EOFError traceback."""
    done = _keys("new", str(tmp_path / "me.json"))
    assert done.returncode == 1
    assert done.stderr.startswith("error: no terminal to ask for a password on"), done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr
    assert not list(tmp_path.iterdir())


def test_keys_new_reads_the_password_from_a_variable_and_never_overwrites(tmp_path):
    path = tmp_path / "keys" / "me.json"
    done = _keys("new", str(path), "--password-env", "MY_KS_PW", env={"MY_KS_PW": "s3cret"})
    assert done.returncode == 0, done.stderr
    address = done.stdout.strip()
    assert load_keystore(path, "s3cret").address == address
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert _keys("address", str(path)).stdout.strip() == address
    before = path.read_bytes()
    again = _keys("new", str(path), "--password-env", "MY_KS_PW", env={"MY_KS_PW": "other"})
    assert again.returncode == 1 and again.stderr.startswith("error: keystore ")
    assert "already exists" in again.stderr and len(again.stderr.strip().splitlines()) == 1
    assert path.read_bytes() == before  # the key there (and its funds) is never lost


@pytest.mark.parametrize(
    ("args", "env", "words"),
    [
        (["new", "{tmp}/a.json", "--password-env", "UNSET_KS_PW"], {}, "UNSET_KS_PW is not set"),
        (["new", "{tmp}/a.json", "--password-env", "MY_KS_PW"], {"MY_KS_PW": ""}, "empty"),
        (["address", "{tmp}/missing.json"], {}, "no keystore"),
        (["address", "{tmp}/garbage.json"], {}, "not a keystore"),
    ],
)
def test_keys_bad_input_is_one_line(tmp_path, args, env, words):
    (tmp_path / "garbage.json").write_text("{not json")
    done = _keys(*[a.replace("{tmp}", str(tmp_path)) for a in args], env=env)
    assert done.returncode != 0
    assert done.stderr.startswith("error: ") and words in done.stderr, done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr
    assert not (tmp_path / "a.json").exists()


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["new"], "required: path (see 'python -m chain.keys new --help')"),
        ([], "required: {new,address} (see 'python -m chain.keys --help')"),
        (["rotate", "x.json"], "invalid choice: 'rotate'"),
        (["new", "a.json", "--colour"], "unrecognized arguments: --colour"),
    ],
)
def test_keys_malformed_command_line_is_one_line_exit_2(capsys, args, words):
    """argparse's usage block and its second line became one line naming the fix."""
    from chain.keys import main

    with pytest.raises(SystemExit) as exited:
        main(args)
    assert exited.value.code == 2
    out, err = capsys.readouterr()
    assert out == "" and err.startswith("error: ") and words in err, err
    assert len(err.strip().splitlines()) == 1


def test_keystore_is_never_written_through_a_link_planted_beside_it(tmp_path):
    """The keystore used to be written to ``<path>.tmp`` opened with O_TRUNC, through any link
    planted at that name."""
    victim = tmp_path / "victim"
    victim.write_text("precious")
    (tmp_path / "me.json.tmp").symlink_to(victim)
    path = create_keystore(tmp_path / "me.json", new_account().key, "pw", iterations=2**10)
    assert victim.read_text() == "precious"
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert load_keystore(path, "pw").address
