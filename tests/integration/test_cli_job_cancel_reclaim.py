"""`veritrain job cancel` and `job reclaim` on a real chain: the state they leave behind.

Run: ``.venv/bin/python -m pytest tests/integration/test_cli_job_cancel_reclaim.py``.
"""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from chain import Anvil, Deployment, write_manifest
from cli.app import app
from tests.utils.models import register_model
from veritrain.enums import JobStatus
from veritrain.units import utc_time

E18 = 10**18


def _run(anvil: Anvil, manifest: Path, *args: str) -> str:
    argv = [*args, "--rpc-url", anvil.rpc_url, "--deployment", str(manifest)]
    result = CliRunner().invoke(app, argv)
    assert result.exit_code == 0, result.output
    return result.output


def test_job_cancel_refunds_the_whole_escrow_as_credit(
    anvil: Anvil, protocol: Deployment, client_factory, tmp_path: Path
) -> None:
    """The submitter cancels its Open job: status Cancelled, reward + V * verifierFee and the
    forced-error premium (never pooled: nobody claimed the job) credited."""
    manifest = write_manifest(protocol, tmp_path)
    submitter = client_factory(6)
    submitter.token.faucet(100 * E18)
    register_model(submitter, b"\x01" * 32, b"\x03" * 32)
    job_id = submitter.job_id_from(
        submitter.jobs.post_job(b"\x01" * 32, b"\x02" * 32, b"\x03" * 32, 40, 10, 7 * E18, "x")
    )
    p = submitter.jobs.job_params()
    premium = submitter.jobs.forced_error_premium()
    assert (
        submitter.jobs.post_cost(7 * E18)
        == 7 * E18 + p.verifiers_per_job * p.verifier_fee + premium
    )
    credit = submitter.escrow.credit_of()
    out = _run(anvil, manifest, "job", "cancel", str(job_id), "--dev-account", "6")
    assert f"cancelled job {job_id}" in out
    assert submitter.jobs.get_job(job_id).status is JobStatus.Cancelled
    assert submitter.escrow.credit_of() - credit == submitter.jobs.post_cost(7 * E18)


def test_job_reclaim_reopens_an_expired_claim_and_slashes_the_solver(
    anvil: Anvil, protocol: Deployment, client_factory, tmp_path: Path
) -> None:
    """Refused while the solver may still commit (the deadline in UTC); after the commit window
    anyone (a third account) reclaims: the job is Open again and the solver's locked stake is
    gone."""
    manifest = write_manifest(protocol, tmp_path)
    submitter, solver = client_factory(6), client_factory(7)
    submitter.token.faucet(100 * E18)
    solver.token.faucet(200 * E18)
    p = solver.jobs.job_params()
    solver.stakes.stake(0, p.solver_stake)
    register_model(submitter, b"\x01" * 32, b"\x03" * 32)
    job_id = submitter.job_id_from(
        submitter.jobs.post_job(b"\x01" * 32, b"\x02" * 32, b"\x03" * 32, 40, 10, 7 * E18, "x")
    )
    solver.jobs.claim_job(job_id)
    early = CliRunner().invoke(
        app,
        ["job", "reclaim", str(job_id), "--dev-account", "8", "--rpc-url", anvil.rpc_url,
         "--deployment", str(manifest)],
    )  # fmt: skip
    assert early.exit_code == 1 and "may still commit" in early.output, early.output
    deadline = solver.jobs.get_job(job_id).commit_deadline  # people read it in UTC
    assert f"commit deadline is {utc_time(deadline)} UTC (in " in early.stderr, early.stderr
    assert str(deadline) not in early.stderr
    staked = solver.stakes.stake_of().staked
    anvil.increase_time(p.commit_window + 1)
    out = _run(anvil, manifest, "job", "reclaim", str(job_id), "--dev-account", "8")
    assert f"reclaimed job {job_id}" in out
    assert submitter.jobs.get_job(job_id).status is JobStatus.Open
    assert solver.stakes.stake_of().staked < staked
