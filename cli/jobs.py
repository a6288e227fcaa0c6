"""`veritrain job ...`: post training jobs (a preset, digits, or a spec file), cancel and reclaim
them, list and show them with their verification round.

Run: ``veritrain job submit --preset shakespeare-char --arith repro2 --dev-account 0``;
``veritrain job show 3 --json``.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Annotated, Any

import typer

from cli.dashboard import ReadDbOpt, synced_index
from cli.errors import CliError, require_balance
from noderuntime.options import (
    DEFAULT_RPC,
    UINT32_MAX,
    UINT64_MAX,
    UINT256_MAX,
    DeploymentOpt,
    DevAccountOpt,
    JsonOpt,
    KeyEnvOpt,
    KeystoreOpt,
    PasswordEnvOpt,
    RpcUrlOpt,
    connect_reader,
    connect_signer,
    emit_json,
    token_amount,
)
from veritrain.units import utc_time, vtt_number

__all__ = ["app", "round_report"]

app = typer.Typer(help="Post and inspect training jobs.", no_args_is_help=True)
JobIdArg = Annotated[int, typer.Argument(min=1, max=UINT256_MAX, help="Job id.")]


def _job_specs(
    *,
    steps: int,
    interval: int,
    seed: int,
    count: int,
    lr: float | None,
    batch_size: int,
    threads: int,
    model_id: str,
    preset: str | None = None,
    arith: str = "native",
) -> list[Any]:
    """Build (and so validate) every job's spec before anything is sent.

    With `preset`, the specs are `veritrain.presets.preset(preset, arith, ...)` with this
    command's seed, N and k, and its learning rate when given (the preset fixes the model, the
    data, the rest of the optimizer and the model id).

    Raises:
        typer.BadParameter: an invalid shape (k does not divide N, k > N, a seed past uint64,
            a learning rate that is not a finite positive number, an empty model id), or an
            unknown or retired arithmetic (`"repro"`: its hashes depend on the CPU).
        pydantic.ValidationError: any other field the spec refuses.
    """
    from veritrain.errors import SpecError
    from veritrain.spec import check_arith

    try:
        check_arith(arith)
    except SpecError as exc:
        raise typer.BadParameter(str(exc), param_hint="'--arith'") from None
    if interval > steps:
        raise typer.BadParameter(
            f"checkpoint interval {interval} is larger than --steps {steps}",
            param_hint="'--interval'",
        )
    if steps % interval != 0:
        raise typer.BadParameter(
            f"checkpoint interval {interval} does not divide --steps {steps}",
            param_hint="'--interval'",
        )
    if lr is not None and not (math.isfinite(lr) and lr > 0):
        raise typer.BadParameter(f"must be a finite number > 0, got {lr}", param_hint="'--lr'")
    if seed + count - 1 > UINT64_MAX:
        raise typer.BadParameter(
            f"seed {seed} + {count} jobs passes 2**64 - 1", param_hint="'--seed'"
        )
    if not model_id.strip():
        raise typer.BadParameter("must not be empty", param_hint="'--model-id'")
    if preset is not None:
        from veritrain.presets import preset as preset_spec

        specs = [
            preset_spec(
                preset, arith, seed=seed + i, total_steps=steps, checkpoint_interval=interval
            )
            for i in range(count)
        ]
        if lr is None:
            return specs
        return [
            s.model_copy(update={"optimizer": s.optimizer.model_copy(update={"lr": lr})})
            for s in specs
        ]
    from veritrain.spec import ExecutionProfile, default_digits_spec

    return [
        default_digits_spec(
            seed=seed + i,
            total_steps=steps,
            checkpoint_interval=interval,
            lr=3e-3 if lr is None else lr,
            batch_size=batch_size,
            model_id=model_id,
            profile=ExecutionProfile(threads=threads),
        )
        for i in range(count)
    ]


@app.command("submit")
def job_submit(
    steps: Annotated[
        int | None,
        typer.Option(
            min=1, max=UINT32_MAX, help="Total optimizer steps N (default 300, or the spec's)."
        ),
    ] = None,
    interval: Annotated[
        int | None,
        typer.Option(
            min=1,
            max=UINT32_MAX,
            help="Checkpoint interval k, dividing N (default 25, or the spec's).",
        ),
    ] = None,
    seed: Annotated[
        int | None,
        typer.Option(
            min=0,
            max=UINT64_MAX,
            help="Seed of the first job, then +1 per job (default 1, or the spec's).",
        ),
    ] = None,
    count: Annotated[int, typer.Option(min=1, max=1000, help="Number of jobs to post.")] = 1,
    reward: Annotated[
        int,
        typer.Option(parser=token_amount(positive=False), help="Solver reward per job, in tokens."),
    ] = 50 * 10**18,
    model_id: Annotated[
        str | None, typer.Option(help="Model the jobs train (default digits-mlp).")
    ] = None,
    lr: Annotated[
        float | None,
        typer.Option(help="AdamW learning rate (> 0); default 3e-3, or the preset's or spec's."),
    ] = None,
    batch_size: Annotated[
        int | None, typer.Option(min=1, help="Examples per step (default 64).")
    ] = None,
    threads: Annotated[
        int | None, typer.Option(min=1, help="Pinned CPU thread count (default 1).")
    ] = None,
    preset: Annotated[
        str | None,
        typer.Option(
            help="Job preset (veritrain.presets: digits-mlp, digits-mlp-wide, "
            "shakespeare-char, llama-char, llama-bible); sets the model, data and model id."
        ),
    ] = None,
    spec_file: Annotated[
        Path | None,
        typer.Option(
            "--spec",
            help="A job spec JSON file (`veritrain spec new`): sets the model, data, optimizer, "
            "arithmetic and model id; --steps, --interval, --seed, --lr override it.",
        ),
    ] = None,
    arith: Annotated[
        str | None, typer.Option(help="Preset arithmetic: native (default) or repro2.")
    ] = None,
    rpc_url: RpcUrlOpt = DEFAULT_RPC,
    deployment: DeploymentOpt = None,
    keystore: KeystoreOpt = None,
    password_env: PasswordEnvOpt = "VERITRAIN_KEYSTORE_PASSWORD",
    key_env: KeyEnvOpt = None,
    dev_account: DevAccountOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Post training jobs (digits MLP, a --preset or a --spec file), escrowing reward + verifier
    fees for each.

    The signing account must own the model or be authorised to post under it (`veritrain model
    register|authorize`), and every spec must train the model's registered architecture and
    family (`veritrain.lineage`). Each job records the state hash of its spec's seed-initialised
    state (initHash); a solver's commitment must start from exactly that state. Only a job that
    starts from the model's head (its seed state until a job extends the lineage) mints shares,
    the first of them to finalize; the others are paid their reward only. The same spec cannot
    be posted twice while the first job of it is live or paid.

    Every spec is built, checked against the deployment's job limits (N, k, N / k, the compute
    of one segment) and the balance checked for all COUNT escrows before any initHash is
    computed or the first job posted. If a post still fails midway, the jobs already posted are
    printed (as JSON with --json) and the command exits non-zero.
    """
    if spec_file is not None:
        from cli.spec import spec_file_jobs

        specs = spec_file_jobs(
            spec_file,
            steps=steps,
            interval=interval,
            seed=seed,
            count=count,
            lr=lr,
            others={
                "--preset": preset,
                "--arith": arith,
                "--batch-size": batch_size,
                "--threads": threads,
                "--model-id": model_id,
            },
        )
    else:
        specs = _job_specs(
            steps=300 if steps is None else steps,
            interval=25 if interval is None else interval,
            seed=1 if seed is None else seed,
            count=count,
            lr=lr,
            batch_size=64 if batch_size is None else batch_size,
            threads=1 if threads is None else threads,
            model_id="digits-mlp" if model_id is None else model_id,
            preset=preset,
            arith="native" if arith is None else arith,
        )
    from veritrain.spec import model_id_hash

    client = connect_signer(rpc_url, deployment, keystore, password_env, key_env, dev_account)
    model_id = specs[0].model_id  # a preset names its own model
    model_hash = model_id_hash(model_id)  # what `spec.model_id_hash()` posts
    if not client.shares.can_post(model_hash):
        owner = client.shares.model_owner(model_hash)
        raise CliError(
            f"model {model_id} is not registered (run `veritrain model register {model_id}`)"
            if owner is None
            else f"model {model_id} is owned by {owner}, who has not authorised {client.address}"
        )
    from veritrain.lineage import ModelCommitments, mismatches

    registered = client.shares.registered_model(model_hash)
    if registered is not None:
        commitments = ModelCommitments(**registered.model_dump())
        for spec in specs:
            wrong = mismatches(spec, commitments)
            if wrong:
                raise CliError(
                    f"job with seed {spec.seed} does not train model {model_id} as registered: "
                    f"its {', '.join(wrong)} differ (`veritrain model show {model_id}`)"
                )
    from cli.spec import check_job_limits

    check_job_limits(specs, client.jobs.job_params(), client.shares.max_segment_compute())
    head = client.shares.head_of(model_hash)
    escrow_each = client.jobs.post_cost(reward)
    require_balance(
        client,
        count * escrow_each,
        f"escrow of {count} job(s) (reward + verifier fees + forced-error premium each)",
    )
    # Checks done: now the slow part (torch, the model's seed state), said on stderr.
    if not json_out:
        typer.echo(f"computing the initHash of {count} job(s)...", err=True)
    from veritrain.training import TrainingEngine

    init_hashes = []
    for spec in specs:  # each job's initHash: the state hash of its seed-initialised state
        engine = TrainingEngine(spec)
        init_hashes.append(engine.state_hash(engine.init_state()))
    posted: list[dict[str, Any]] = []
    from chain.errors import ChainError

    for number, (spec, init_hash) in enumerate(zip(specs, init_hashes, strict=True), 1):
        if not json_out:
            typer.echo(f"posting job {number}/{count} (seed {spec.seed})...", err=True)
        try:
            receipt = client.jobs.post_job(
                spec.model_id_hash(),
                spec.spec_hash(),
                init_hash,
                spec.total_steps,
                spec.checkpoint_interval,
                reward,
                spec.to_data_uri(),
            )
        except ChainError as exc:
            if json_out:
                emit_json({"jobs": posted})
            raise CliError(
                f"posted {len(posted)} of {count} jobs; job with seed {spec.seed} failed: {exc}"
            ) from exc
        job_id = client.job_id_from(receipt)
        posted.append(
            {
                "job_id": job_id,
                "seed": spec.seed,
                "spec_hash": "0x" + spec.spec_hash().hex(),
                "init_hash": "0x" + init_hash.hex(),
                "from_head": init_hash == head,
            }
        )
        if not json_out:
            typer.echo(
                f"posted job {job_id} (seed {spec.seed}, N={spec.total_steps}, "
                f"k={spec.checkpoint_interval}, "
                f"initHash 0x{init_hash.hex()})"
            )
            if init_hash != head:
                typer.echo(
                    f"  note: job {job_id} does not start from model {model_id}'s head "
                    f"0x{head.hex()}: its solver is paid the reward but mints no shares"
                )
    if json_out:
        emit_json({"jobs": posted})


def _existing_job(client: Any, job_id: int) -> Any:
    """The job, or a refusal naming how many jobs exist."""
    total = client.jobs.job_count()
    if job_id > total:
        raise CliError(f"job {job_id} does not exist ({total} jobs posted)")
    return client.jobs.get_job(job_id, with_uris=False)


@app.command("cancel")
def job_cancel(
    job_id: JobIdArg,
    rpc_url: RpcUrlOpt = DEFAULT_RPC,
    deployment: DeploymentOpt = None,
    keystore: KeystoreOpt = None,
    password_env: PasswordEnvOpt = "VERITRAIN_KEYSTORE_PASSWORD",
    key_env: KeyEnvOpt = None,
    dev_account: DevAccountOpt = None,
) -> None:
    """Cancel an Open job you submitted (JobManager.cancelJob); its whole escrow becomes your
    claimable credit (``veritrain credit --claim``)."""
    from veritrain.enums import JobStatus

    client = connect_signer(rpc_url, deployment, keystore, password_env, key_env, dev_account)
    job = _existing_job(client, job_id)
    if job.status is not JobStatus.Open:
        raise CliError(f"job {job_id} is {job.status.name}: only an Open job can be cancelled")
    if job.submitter.lower() != client.address.lower():
        raise CliError(
            f"job {job_id} was posted by {job.submitter}: only its submitter can cancel it"
        )
    client.jobs.cancel_job(job_id)
    typer.echo(f"cancelled job {job_id}; its escrow is credited to {client.address}")


@app.command("reclaim")
def job_reclaim(
    job_id: JobIdArg,
    rpc_url: RpcUrlOpt = DEFAULT_RPC,
    deployment: DeploymentOpt = None,
    keystore: KeystoreOpt = None,
    password_env: PasswordEnvOpt = "VERITRAIN_KEYSTORE_PASSWORD",
    key_env: KeyEnvOpt = None,
    dev_account: DevAccountOpt = None,
) -> None:
    """Reopen a Claimed job whose solver missed its commit deadline
    (JobManager.reclaimExpired; anyone may call it). The solver is slashed into the jackpot
    pool and the job is Open again."""
    from veritrain.enums import JobStatus

    client = connect_signer(rpc_url, deployment, keystore, password_env, key_env, dev_account)
    job = _existing_job(client, job_id)
    if job.status is not JobStatus.Claimed:
        raise CliError(
            f"job {job_id} is {job.status.name}: only a Claimed job whose solver missed its "
            "commit deadline can be reclaimed"
        )
    now = client.timestamp()
    if now <= job.commit_deadline:
        raise CliError(
            f"job {job_id}'s commit deadline is {utc_time(job.commit_deadline)} UTC "
            f"(in {job.commit_deadline - now} s): its solver may still commit; reclaim it after"
        )
    client.jobs.reclaim_expired(job_id)
    typer.echo(f"reclaimed job {job_id}: Open again; solver {job.solver} slashed")


def _job_dict(client: Any, job_id: int) -> dict[str, Any]:
    job = client.jobs.get_job(job_id)
    return {
        "job_id": job_id,
        "status": job.status.name,
        "submitter": job.submitter,
        "solver": job.solver,
        "total_steps": job.total_steps,
        "checkpoint_interval": job.checkpoint_interval,
        "reward_wei": job.reward,
        "init_hash": "0x" + job.init_hash.hex(),
        "merkle_root": "0x" + job.merkle_root.hex(),
        "dispute_id": job.dispute_id,
    }


def _indexed_jobs(index: Any) -> list[dict[str, Any]]:
    """`_job_dict` of every job, read from the index (`dashboard.queries.jobs`)."""
    from dashboard.queries import jobs

    zero_address, zero_hash = "0x" + "00" * 20, "0x" + "00" * 32
    with index.reader() as session:
        return [
            {
                "job_id": j.job_id,
                "status": j.phase,
                "submitter": j.poster,
                "solver": j.solver or zero_address,
                "total_steps": j.total_steps,
                "checkpoint_interval": j.checkpoint_interval,
                "reward_wei": j.reward_wei,
                "init_hash": j.init_hash or zero_hash,
                "merkle_root": j.merkle_root or zero_hash,
                "dispute_id": j.dispute_id or 0,
            }
            for j in jobs(session)
        ]


@app.command("list")
def job_list(
    rpc_url: RpcUrlOpt = DEFAULT_RPC,
    deployment: DeploymentOpt = None,
    json_out: JsonOpt = False,
    db: ReadDbOpt = None,
) -> None:
    """List every job with its status (one view call per job; with --db, one index query)."""
    client = connect_reader(rpc_url, deployment)
    if db is not None:
        jobs = _indexed_jobs(synced_index(client, db))
    else:
        jobs = [_job_dict(client, j) for j in range(1, client.jobs.job_count() + 1)]
    if json_out:
        emit_json({"jobs": jobs})
        return
    from rich.table import Table

    from cli.console import address_column, report_console

    table = Table("job", "status")
    table.add_column(**address_column("solver"))
    for header in ("N", "k", "reward (VTT)"):
        table.add_column(header)
    for j in jobs:
        table.add_row(
            str(j["job_id"]),
            j["status"],
            "-" if int(j["solver"], 16) == 0 else j["solver"],
            str(j["total_steps"]),
            str(j["checkpoint_interval"]),
            vtt_number(j["reward_wei"]),
        )
    report_console().print(table)


@app.command("show")
def job_show(
    job_id: JobIdArg,
    rpc_url: RpcUrlOpt = DEFAULT_RPC,
    deployment: DeploymentOpt = None,
) -> None:
    """Print one job as JSON, with its verifier assignment and verification round."""
    client = connect_reader(rpc_url, deployment)
    _existing_job(client, job_id)
    data = _job_dict(client, job_id)
    assignment = client.jobs.get_assignment(job_id)
    data["verifiers"] = list(assignment.verifiers)
    data["segments"] = list(assignment.segments)
    data["round"] = round_report(client, job_id)
    emit_json(data)


def round_report(client: Any, job_id: int) -> dict[str, Any]:
    """A job's verification round (docs/FORCED_ERRORS.md) as JSON-able data.

    Returns:
        ``{"claims_posted", "start_hashes", "end_hashes", "verdicts": [{"verifier", "samples"
        (its own draw: sample indices, docs/SECURITY.md P-27), "sealed", "revealed", "approvals",
        "abstentions"}], "secret_revealed", "outcome", "forced_sample",
        "forced_segment", "windows"}``; the forced sample is None until the secret is revealed
        (or when the job carries no forced error).
    """
    from veritrain.enums import JobStatus, RoundOutcome, Verdict

    job = client.jobs.get_job(job_id, with_uris=False)
    if job.status < JobStatus.Verifying or job.status is JobStatus.Cancelled:
        return {"claims_posted": False, "outcome": None}  # no sample drawn yet
    assignment = client.jobs.get_assignment(job_id)
    submission = client.jobs.submission_of(job_id)
    claims = client.round.claims_of(submission)
    round_view = client.round.round_of(submission)
    outcome, sample = client.round.outcome(submission)
    verdicts = []
    # As revealed (events): a forced-error settlement clears the forced reject in the view.
    submitted = client.round.revealed_verdicts(submission)
    for v in assignment.verifiers:
        commitment, revealed = client.round.verdict_commitment_of(submission, v)
        recorded = client.jobs.verdicts_of(job_id, v)
        mask = client.jobs.sample_mask_of(job_id, v)
        as_revealed = submitted.get(v, [])
        verdicts.append(
            {
                "verifier": v,
                # its own draw (P-27): it is judged on these sample indices only
                "samples": [i for i in range(len(assignment.segments)) if mask >> i & 1],
                "sealed": commitment != b"\x00" * 32,
                "revealed": revealed,
                "approvals": [
                    bool(mask >> i & 1)
                    and i < len(as_revealed)
                    and as_revealed[i]
                    and Verdict(int(x)) is not Verdict.Abstain
                    for i, x in enumerate(recorded)
                ]
                if revealed
                else None,
                "abstentions": [Verdict(int(x)) is Verdict.Abstain for x in recorded]
                if revealed
                else None,
            }
        )
    forced = outcome is RoundOutcome.Forced
    windows = client.round.windows_of(submission)
    return {
        "claims_posted": claims.posted,
        "start_hashes": ["0x" + h.hex() for h in claims.start_hashes],
        "end_hashes": ["0x" + h.hex() for h in claims.end_hashes],
        "verdicts": verdicts,
        "verdicts_sealed": round_view.committed,
        "secret_revealed": round_view.revealed,
        "outcome": outcome.name,
        "forced_sample": sample if forced else None,
        "forced_segment": assignment.segments[sample] if forced else None,
        "windows": {
            "verdict_reveal_opens": windows.verdict_reveal_opens,
            "verdict_reveal_closes": windows.verdict_reveal_closes,
            "secret_reveal_opens": windows.secret_reveal_opens,
            "secret_reveal_closes": windows.secret_reveal_closes,
        },
    }
