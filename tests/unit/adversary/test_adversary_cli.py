"""`veritrain adversary ...` (testing only): the cheating solver and the lazy, griefing or
equivocating verifier commands are declared and documented, and refuse bad modes."""

from __future__ import annotations

from typer.testing import CliRunner

from adversary.cli import app


def test_solver_help_lists_the_mode_and_node_options() -> None:
    result = CliRunner().invoke(app, ["solver", "--help"])
    assert result.exit_code == 0, result.output
    for option in ("--mode", "--port", "--rpc-url", "--data-dir", "--claims"):
        assert option in result.output


def test_unknown_adversary_is_a_usage_error() -> None:
    result = CliRunner().invoke(app, ["solver", "--mode", "nap", "--dev-account", "1"])
    assert result.exit_code != 0


def test_a_negative_claim_limit_is_a_usage_error() -> None:
    argv = ["solver", "--mode", "perturb", "--claims", "-1", "--dev-account", "1"]
    result = CliRunner().invoke(app, argv)
    assert result.exit_code == 2 and "--claims" in result.output


def test_verifier_help_lists_lazy_reject_all_and_equivocate() -> None:
    result = CliRunner().invoke(app, ["verifier", "--help"])
    assert result.exit_code == 0, result.output
    for option in ("--lazy", "--reject-all", "--equivocate"):
        assert option in result.output


def test_a_verifier_of_two_kinds_is_a_usage_error() -> None:
    argv = ["verifier", "--lazy", "--equivocate", "--dev-account", "1"]
    result = CliRunner().invoke(app, argv)
    assert result.exit_code == 2 and "exactly one of" in result.output
