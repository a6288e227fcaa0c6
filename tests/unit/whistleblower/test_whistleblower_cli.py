"""`veritrain whistleblower run` is a thin Typer command with documented options."""

from __future__ import annotations

from typer.testing import CliRunner

from whistleblower.cli import app


def test_run_help_lists_the_node_options() -> None:
    result = CliRunner().invoke(app, ["run", "--help"])
    assert result.exit_code == 0, result.output
    for option in ("--rpc-url", "--deployment", "--key-env", "--keystore", "--data-dir", "--json"):
        assert option in result.output
