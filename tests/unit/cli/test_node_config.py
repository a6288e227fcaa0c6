"""``--config node.toml`` of the node commands (`noderuntime.config`): the file's values are
applied, a flag on the command line overrides the file, and an unknown key, a wrong type, a
secret, a file that is not TOML or cannot be read are refused in one line with a non-zero exit,
before any connection (``--rpc-url`` points at a closed port).

Run: ``.venv/bin/python -m pytest tests/unit/cli/test_node_config.py -q``.
"""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner, Result

from cli.app import app
from noderuntime.config import ConfigOpt
from noderuntime.options import (
    AutoStakeOpt,
    MetricsBindOpt,
    MetricsPortOpt,
    MirrorOpt,
    StakeOpt,
    VerboseOpt,
)

ROLES = ["solver", "verifier", "whistleblower"]
ENV = {"VERITRAIN_DEBUG": "", "VERITRAIN_DEVICE": None, "VERITRAIN_RPC_URL": None}


def _closed_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


DOWN = f"http://127.0.0.1:{_closed_port()}"  # nothing listens there


def _write(tmp: Path, text: str) -> str:
    path = tmp / "node.toml"
    path.write_text(text)
    return str(path)


def _one_line(result: Result) -> str:
    """The single stderr line of a refused command (and nothing on stdout)."""
    assert result.exit_code != 0, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert "Traceback" not in result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1, result.output
    assert result.stdout.strip() == "", result.stdout
    return lines[0]


def _run(role: str, config: str, *flags: str) -> Result:
    argv = [role, "run", "--config", config, "--dev-account", "1", *flags]
    return CliRunner().invoke(app, argv, env=ENV)


# ---------------------------------------------------------------- the real node commands
@pytest.mark.parametrize("role", ROLES)
def test_a_file_value_is_applied(tmp_path: Path, role: str) -> None:
    """``device = "tpu"`` in the file is refused exactly as ``--device tpu`` is."""
    config = _write(tmp_path, f'rpc-url = "{DOWN}"\ndevice = "tpu"\n')
    line = _one_line(_run(role, config))
    assert "unknown device 'tpu'" in line


@pytest.mark.parametrize("role", ROLES)
def test_a_flag_overrides_the_file(tmp_path: Path, role: str) -> None:
    """With ``--device cpu`` the file's bad device is never seen: the command goes on to
    connect, to the file's (closed) RPC endpoint."""
    config = _write(tmp_path, f'rpc_url = "{DOWN}"\ndevice = "tpu"\n')
    line = _one_line(_run(role, config, "--device", "cpu"))
    assert "tpu" not in line and DOWN in line


def test_file_values_pass_the_options_own_checks(tmp_path: Path) -> None:
    config = _write(tmp_path, 'rpc-url = "ftp://example.org"\n')
    assert "http(s)://host" in _one_line(_run("solver", config))
    config = _write(tmp_path, f'rpc-url = "{DOWN}"\nmetrics-port = 70000\n')
    assert "--metrics-port" in _one_line(_run("verifier", config))


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("colour = 1\n", ["unknown key 'colour'", "metrics-port"]),
        ("[solver]\nport = 1\n", ["unknown key 'solver'"]),
        ('port = "8701"\n', ["'port' must be an integer, got a string"]),
        ("max-jobs = 1.5\n", ["'max-jobs' must be an integer, got a float"]),
        ('auto-stake = "no"\n', ["'auto-stake' must be true or false, got a string"]),
        ('mirror = "http://a:1"\nmodel = [1]\n', ["'model' must be a list of strings"]),
        ("stake = true\n", ["'stake' must be a string or a number, got a boolean"]),
        ('private-key = "0x01"\n', ["'private-key' refused", "--keystore"]),
        ('private_key = "0x01"\n', ["'private_key' refused"]),
        ('password = "hunter2"\n', ["'password' refused"]),
        ("port = \n", ["not valid TOML"]),
    ],
)
def test_a_bad_file_is_refused_in_one_line(tmp_path: Path, text: str, words: list[str]) -> None:
    line = _one_line(_run("solver", _write(tmp_path, f'rpc-url = "{DOWN}"\n' + text)))
    assert "--config" in line
    for word in words:
        assert word in line, line
    assert "0x01" not in line and "hunter2" not in line  # a secret is never echoed


def test_an_unreadable_file_is_refused_in_one_line(tmp_path: Path) -> None:
    line = _one_line(_run("whistleblower", str(tmp_path / "missing.toml")))
    assert "cannot read" in line and "missing.toml" in line
    line = _one_line(_run("whistleblower", str(tmp_path)))  # a directory
    assert "cannot read" in line


# ------------------------------------------------- every value type, through the shared options
probe = typer.Typer()


@probe.command()
def show(
    config: ConfigOpt = None,
    stake: StakeOpt = None,
    mirror: MirrorOpt = None,
    auto_stake: AutoStakeOpt = True,
    metrics_port: MetricsPortOpt = 0,
    metrics_bind: MetricsBindOpt = "127.0.0.1",
    verbose: VerboseOpt = 0,
) -> None:
    """Print the values the shared node options took."""
    typer.echo(
        json.dumps(
            {
                "stake": stake,
                "mirror": mirror,
                "auto_stake": auto_stake,
                "metrics_port": metrics_port,
                "metrics_bind": metrics_bind,
                "verbose": verbose,
            }
        )
    )


def _show(*argv: str) -> dict[str, object]:
    result = CliRunner().invoke(probe, list(argv), env=ENV)
    assert result.exit_code == 0, result.output
    values: dict[str, object] = json.loads(result.stdout)
    return values


def test_every_value_type_is_taken_and_flags_win(tmp_path: Path) -> None:
    config = _write(
        tmp_path,
        'stake = "2.5"\nmirror = ["http://a:1", "http://b:2"]\nauto_stake = false\n'
        'metrics-port = 9101\nmetrics-bind = "0.0.0.0"\nverbose = 2\n',
    )
    assert _show("--config", config) == {
        "stake": 25 * 10**17,  # VTT, as on the command line
        "mirror": ["http://a:1", "http://b:2"],
        "auto_stake": False,
        "metrics_port": 9101,
        "metrics_bind": "0.0.0.0",
        "verbose": 2,
    }
    flags = _show(
        "--config", config, "--metrics-port", "9200", "--auto-stake", "--mirror", "http://c:3"
    )
    assert flags["metrics_port"] == 9200 and flags["auto_stake"] is True
    assert flags["mirror"] == ["http://c:3"] and flags["metrics_bind"] == "0.0.0.0"
    # a number of VTT is read as VTT, never as wei
    assert _show("--config", _write(tmp_path, "stake = 3\n"))["stake"] == 3 * 10**18
    assert _show()["metrics_port"] == 0  # no file: the defaults


def test_the_sample_file_is_accepted(tmp_path: Path) -> None:
    """docs/node.toml.example passes every check: the solver goes on to connect."""
    sample = str(Path(__file__).resolve().parents[3] / "docs" / "node.toml.example")
    result = CliRunner().invoke(
        app, ["solver", "run", "--config", sample, "--rpc-url", DOWN], env=ENV
    )
    assert DOWN in _one_line(result)
