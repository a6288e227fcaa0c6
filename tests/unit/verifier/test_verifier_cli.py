"""`veritrain verifier run` is a thin Typer command: its options are declared and documented."""

from __future__ import annotations

from typer.testing import CliRunner

from verifier.cli import app


def test_run_help_lists_the_node_options() -> None:
    result = CliRunner().invoke(app, ["run", "--help"])
    assert result.exit_code == 0, result.output
    for option in ("--rpc-url", "--deployment", "--key-env", "--keystore", "--data-dir", "--json"):
        assert option in result.output
    assert "--no-hand-off" in result.output  # hand-offs to the solver are on by default
    assert "--lazy" not in result.output  # adversaries run from `veritrain adversary`
