"""`veritrain run`: training runs (DiLoCo, docs/RUNS.md).

`veritrain run simulate` previews a run on this machine, with no chain: M seats, R rounds of H
inner steps, every contribution and outer step computed exactly as the protocol defines them
(`veritrain.runsim`). It prints each round as it ends (accepted seats, the global model's metric,
bytes uploaded, the global state hash) and, with `--json`, one JSON object instead:
`{"device", "run_hash", "rounds": [{"round", "accepted", "excluded", "metric", "bytes_uploaded",
"global_hash", "delta_hashes", "seconds"}], "metric_name", "start_metric"}`. Under repro2 every
hash is the one any machine computes.

Bad input (unknown preset, arithmetic or delta format, a count or rate out of range, missing
data, `--device cuda` without a GPU or with a native preset) prints one line on stderr and
exits with status 2.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer

from cli.train import bad_input, check_preset
from noderuntime.options import (
    DEFAULT_RPC,
    DeploymentOpt,
    DevAccountOpt,
    JsonOpt,
    KeyEnvOpt,
    KeystoreOpt,
    MirrorOpt,
    PasswordEnvOpt,
    RpcUrlOpt,
    connect_reader,
    connect_signer,
    emit_json,
    token_amount,
)
from veritrain.errors import VeritrainError

__all__ = [
    "app",
    "challenge",
    "finalize",
    "list_runs",
    "open_run",
    "post",
    "propose",
    "show",
    "simulate",
    "spec",
]

app = typer.Typer(help="Training runs: one model, many solvers (DiLoCo).", no_args_is_help=True)


def _run_spec(
    inner: Any,
    *,
    seats: int,
    rounds: int | None,
    outer_lr: float,
    momentum: float,
    delta_format: str,
) -> Any:
    """The RunSpec of an inner job spec and the run's own fields.

    Raises:
        pydantic.ValidationError: a field out of range.
    """
    from veritrain.diloco import RunSpec

    return RunSpec(
        inner=inner,
        seats=seats,
        rounds=rounds,
        outer={"lr": outer_lr, "momentum": momentum},
        delta_format=delta_format,  # type: ignore[arg-type]
    )


@app.command("simulate")
def simulate(
    preset: Annotated[
        str, typer.Option(help="digits-mlp, digits-mlp-wide or shakespeare-char.")
    ] = "shakespeare-char",
    arith: Annotated[str, typer.Option(help="Arithmetic: 'native' or 'repro2'.")] = "native",
    seats: Annotated[int, typer.Option(help="M, solver seats per round (1-256).")] = 4,
    inner_steps: Annotated[int, typer.Option(help="H, inner AdamW steps per round.")] = 50,
    rounds: Annotated[int, typer.Option(help="R, rounds to simulate.")] = 10,
    outer_lr: Annotated[float, typer.Option(help="Outer Nesterov learning rate, (0, 10].")] = 0.7,
    momentum: Annotated[float, typer.Option(help="Outer Nesterov momentum, [0, 1).")] = 0.9,
    delta_format: Annotated[
        str, typer.Option(help="How pseudo-gradients travel: 'float32' or 'int8'.")
    ] = "float32",
    pretrain: Annotated[
        int, typer.Option(help="Single-solver steps before the run (its start state).")
    ] = 0,
    batch: Annotated[int | None, typer.Option(help="Batch size B (default: preset's).")] = None,
    seed: Annotated[int | None, typer.Option(help="Run seed (default: preset's).")] = None,
    device: Annotated[
        str, typer.Option(help="auto, cpu or cuda: where repro2 contributions train.")
    ] = "auto",
    json_out: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """Simulate a training run on this machine (no chain): the metric round by round."""
    from pydantic import ValidationError

    from veritrain.diloco import DELTA_FORMATS
    from veritrain.spec import NATIVE_ARITH
    from veritrain.training import DEVICES, resolve_device

    check_preset(preset, arith)
    if delta_format not in DELTA_FORMATS:
        raise bad_input(
            f"--delta-format must be one of {', '.join(DELTA_FORMATS)}, got {delta_format!r}"
        )
    for flag, value, low, high in (
        ("--seats", seats, 1, 256),
        ("--inner-steps", inner_steps, 1, 2**32 - 1),
        ("--rounds", rounds, 1, 2**24 - 1),  # R as the RunRegistry stores it
        ("--pretrain", pretrain, 0, 2**32 - 1),
    ):
        if not low <= value <= high:
            raise bad_input(f"{flag} must be in [{low}, {high}], got {value}")
    if batch is not None and batch < 1:
        raise bad_input(f"--batch must be >= 1, got {batch}")
    if seed is not None and not 0 <= seed < 2**64:
        raise bad_input(f"--seed must be in [0, 2^64), got {seed}")
    if device not in DEVICES:
        raise bad_input(f"unknown device {device!r} (choose from {', '.join(DEVICES)})")
    if arith == NATIVE_ARITH and device == "cuda":
        raise bad_input("native presets pin device 'cpu'; use --arith repro2 to pick a device")
    try:
        where = "cpu" if arith == NATIVE_ARITH else resolve_device(device)
    except VeritrainError as exc:
        raise bad_input(str(exc)) from None
    if not 0.0 < outer_lr <= 10.0:
        raise bad_input(f"--outer-lr must be in (0, 10], got {outer_lr}")
    if not 0.0 <= momentum < 1.0:
        raise bad_input(f"--momentum must be in [0, 1), got {momentum}")
    overrides: dict[str, Any] = {"total_steps": inner_steps, "checkpoint_interval": inner_steps}
    if batch is not None:
        overrides["batch_size"] = batch
    if seed is not None:
        overrides["seed"] = seed
    try:
        from veritrain.presets import preset as preset_spec

        run = _run_spec(
            preset_spec(preset, arith, **overrides),
            seats=seats,
            rounds=rounds,
            outer_lr=outer_lr,
            momentum=momentum,
            delta_format=delta_format,
        )
        report = _simulate(run, rounds, pretrain, json_out, where)
    except ValidationError as exc:
        raise bad_input(f"invalid run: {exc.errors()[0]['msg']}") from None
    except (VeritrainError, ValueError) as exc:
        raise bad_input(str(exc).splitlines()[0]) from None
    if json_out:
        typer.echo(json.dumps(report, sort_keys=True))


def _simulate(run: Any, rounds: int, pretrain: int, quiet: bool, device: str) -> dict[str, Any]:
    """Run the simulation, printing each round unless `quiet`; return the JSON report."""
    from rich.console import Console
    from rich.table import Table

    from veritrain.runsim import RoundReport, evaluate_global, pretrained_start, simulate_run
    from veritrain.training import TrainingEngine

    console = Console()
    start = pretrained_start(run, pretrain, device)
    engine = TrainingEngine(run.inner, device=device)
    start_metric = evaluate_global(engine, start)
    name = engine.metric_name
    if not quiet:
        console.print(
            f"run 0x{run.run_hash().hex()}: {run.seats} seats, {rounds} rounds of "
            f"{run.inner_steps} steps, {run.delta_format} pseudo-gradients; start {name} "
            f"{start_metric:.4f}"
        )
        console.print(f"{'round':>5}  {'accepted':<12} {name:>9}  {'uploaded':>12}  global state")

    def show(rep: RoundReport) -> None:
        if not quiet:
            seats = ",".join(str(j) for j in rep.accepted) or "-"
            console.print(
                f"{rep.round:>5}  {seats:<12} {rep.metric:>9.4f}  {rep.bytes_uploaded:>12,}  "
                f"0x{rep.global_hash.hex()[:16]}..."
            )

    reports = simulate_run(run, start, rounds, on_round=show, device=device)
    if not quiet:
        table = Table(title="run summary")
        for col in ("start", "end", "bytes uploaded in all", "seconds"):
            table.add_column(col, justify="right")
        table.add_row(
            f"{start_metric:.4f}",
            f"{reports[-1].metric:.4f}",
            f"{sum(r.bytes_uploaded for r in reports):,}",
            f"{sum(r.seconds for r in reports):.1f}",
        )
        console.print(table)
    return {
        "device": device,
        "run_hash": "0x" + run.run_hash().hex(),
        "metric_name": name,
        "start_metric": start_metric,
        "rounds": [
            {
                "round": r.round,
                "accepted": r.accepted,
                "excluded": r.excluded,
                "metric": r.metric,
                "bytes_uploaded": r.bytes_uploaded,
                "global_hash": "0x" + r.global_hash.hex(),
                "delta_hashes": {str(j): "0x" + h.hex() for j, h in r.delta_hashes.items()},
                "seconds": round(r.seconds, 3),
            }
            for r in reports
        ],
    }


def _load_run(path: Path) -> Any:
    """The RunSpec in a JSON file (one line of error otherwise)."""
    from pydantic import ValidationError

    from cli.errors import CliError
    from veritrain.diloco import RunSpec

    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise CliError(f"cannot read run file {path}: {exc.strerror or exc}") from None
    try:
        return RunSpec.model_validate_json(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(x) for x in first["loc"]) or "run"
        raise CliError(f"{path} is not a run spec: {where}: {first['msg']}") from None


@app.command("spec")
def spec(
    out: Annotated[Path, typer.Argument(help="Where to write the run's canonical JSON.")],
    preset: Annotated[
        str | None,
        typer.Option(help="digits-mlp (default), digits-mlp-wide, shakespeare-char or llama-char."),
    ] = None,
    spec_file: Annotated[
        Path | None,
        typer.Option(
            "--spec",
            help="A job spec JSON file (`veritrain spec new`) as the inner job instead of a "
            "preset; --inner-steps, --interval, --seed and --arith replace its own.",
        ),
    ] = None,
    arith: Annotated[
        str | None,
        typer.Option(help="Arithmetic: 'native' or 'repro2' (default: repro2, or the spec's)."),
    ] = None,
    seats: Annotated[int, typer.Option(min=1, max=256, help="M, solver seats per round.")] = 4,
    # H = 60, k = 5: 12 segments per contribution, so one seat replays 9.85% of it at the
    # default forced-error rate (docs/SECURITY.md P-39; 27% at the former H = 50, k = 10)
    inner_steps: Annotated[int, typer.Option(min=1, help="H, inner steps per round.")] = 60,
    interval: Annotated[int, typer.Option(min=1, help="k, checkpoint interval (divides H).")] = 5,
    rounds: Annotated[int | None, typer.Option(min=1, help="R (default: open-ended).")] = None,
    outer_lr: Annotated[float, typer.Option(help="Outer Nesterov learning rate.")] = 0.7,
    momentum: Annotated[float, typer.Option(help="Outer Nesterov momentum.")] = 0.9,
    delta_format: Annotated[str, typer.Option(help="'float32' or 'int8'.")] = "float32",
    seed: Annotated[
        int | None, typer.Option(min=0, help="Run seed (default: the preset's or spec's).")
    ] = None,
) -> None:
    """Write a run spec (docs/RUNS.md) of a preset or a spec file and print its run hash."""
    from pydantic import ValidationError

    from cli.errors import CliError
    from cli.spec import load_spec_file, spec_with

    if preset is not None and spec_file is not None:
        raise CliError("give --preset or --spec, not both")
    if inner_steps % interval:
        raise CliError(
            f"--inner-steps {inner_steps} must be a multiple of --interval {interval} (the "
            "checkpoint interval k: every round's job is checkpointed every k steps)"
        )
    try:
        if spec_file is not None:
            inner = spec_with(
                load_spec_file(spec_file),
                total_steps=inner_steps,
                checkpoint_interval=interval,
                seed=seed,
                arith=arith,
            )
        else:
            from veritrain.presets import preset as preset_spec

            overrides: dict[str, Any] = {
                "total_steps": inner_steps,
                "checkpoint_interval": interval,
            }
            if seed is not None:
                overrides["seed"] = seed
            inner = preset_spec(preset or "digits-mlp", arith or "repro2", **overrides)
        run = _run_spec(
            inner,
            seats=seats,
            rounds=rounds,
            outer_lr=outer_lr,
            momentum=momentum,
            delta_format=delta_format,
        )
    except ValidationError as exc:
        first = exc.errors()[0]
        raise CliError(f"invalid run: {'.'.join(map(str, first['loc']))}: {first['msg']}") from None
    except VeritrainError as exc:
        raise CliError(str(exc).splitlines()[0]) from None
    try:
        out.write_bytes(run.canonical_json())
    except OSError as exc:
        raise CliError(f"cannot write {out}: {exc.strerror or exc}") from None
    typer.echo(f"run 0x{run.run_hash().hex()} written to {out}")


def _opened(client: Any, run: Any) -> Any:
    """The run's on-chain view (one line of error when it is not opened or differs)."""
    from cli.errors import CliError
    from noderuntime.runs import find_run

    try:
        return find_run(client, run)
    except VeritrainError as exc:
        raise CliError(f"{exc} (open it with `veritrain run open`)") from None


def _require_poster(client: Any, run: Any) -> None:
    """Refuse, in one line, a signer that may not post jobs of the run's model."""
    from cli.errors import CliError

    if not client.shares.can_post(run.inner.model_id_hash()):
        raise CliError(
            f"{client.address} may not post jobs of model {run.inner.model_id} "
            "(register it or ask its owner to authorise you)"
        )


@app.command("open")
def open_run(
    run_file: Annotated[Path, typer.Argument(help="The run spec (`veritrain run spec`).")],
    run_uri: Annotated[
        str | None,
        typer.Option(help="Where nodes read the run spec (default: a data: URI of the file)."),
    ] = None,
    rpc_url: RpcUrlOpt = DEFAULT_RPC,
    deployment: DeploymentOpt = None,
    keystore: KeystoreOpt = None,
    password_env: PasswordEnvOpt = "VERITRAIN_KEYSTORE_PASSWORD",
    key_env: KeyEnvOpt = None,
    dev_account: DevAccountOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Open a run on chain (the model's owner or an authorised poster).

    The run starts from the model's seed-initialised weights with a fresh outer momentum; its
    runHash binds every field of the spec, so each run spec can be opened once. Its spec URI is
    published once, here: every contribution's spec is read from it by (round, seat).
    """
    from cli.errors import CliError
    from noderuntime.runs import open_run as open_on_chain
    from veritrain.runsim import pretrained_start

    run = _load_run(run_file)
    uri = run_uri if run_uri is not None else run.to_data_uri()
    if "#" in uri:
        raise CliError("--run-uri must not have a fragment")
    client = connect_signer(rpc_url, deployment, keystore, password_env, key_env, dev_account)
    _require_poster(client, run)
    taken = client.runs.run_id_of(run.run_hash())
    if taken:
        raise CliError(f"run 0x{run.run_hash().hex()} is already open as run {taken}")
    run_id = open_on_chain(client, run, pretrained_start(run, 0), uri)
    if json_out:
        emit_json({"run_id": run_id, "run_hash": "0x" + run.run_hash().hex()})
        return
    typer.echo(f"run {run_id} opened: 0x{run.run_hash().hex()}")


@app.command("list")
def list_runs(
    rpc_url: RpcUrlOpt = DEFAULT_RPC,
    deployment: DeploymentOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Every run on chain: its model, seats, current round and the phase of that round."""
    from rich.console import Console
    from rich.table import Table

    client = connect_reader(rpc_url, deployment)
    rows = []
    for run_id in range(1, client.runs.run_count() + 1):
        view = client.runs.get_run(run_id)
        phase = (
            "ended" if view.ended else client.runs.get_round(run_id, view.round).phase.name.lower()
        )
        rows.append(
            {
                "run_id": run_id,
                "run_hash": "0x" + view.run_hash.hex(),
                "model_id": "0x" + view.model_id.hex(),
                "seats": view.seats,
                "rounds": view.rounds,
                "inner_steps": view.inner_steps,
                "round": view.round,
                "phase": phase,
            }
        )
    if json_out:
        emit_json({"runs": rows})
        return
    table = Table(title="runs")
    for col in ("run", "model", "seats", "H", "round", "phase"):
        table.add_column(col)
    for r in rows:
        table.add_row(
            str(r["run_id"]),
            str(r["model_id"]),
            str(r["seats"]),
            str(r["inner_steps"]),
            f"{r['round']}/{r['rounds']}",
            str(r["phase"]),
        )
    Console(width=200).print(table)


@app.command("post")
def post(
    run_file: Annotated[Path, typer.Argument(help="The run spec (`veritrain run spec`).")],
    round_index: Annotated[
        int | None, typer.Option("--round", min=0, help="The round t (default: the current).")
    ] = None,
    seat: Annotated[
        list[int] | None, typer.Option(help="A seat to post (repeat; default: every seat).")
    ] = None,
    reward: Annotated[
        int, typer.Option(parser=token_amount(positive=False), help="Reward per contribution.")
    ] = 20 * 10**18,
    mirror: MirrorOpt = None,
    data_dir: Annotated[
        Path | None,
        typer.Option(
            "--data-dir",
            help="Keep the states proved here (counted finals, outer states) in "
            "DIR/checkpoints, as a node's mirror does, and look there first.",
        ),
    ] = None,
    rpc_url: RpcUrlOpt = DEFAULT_RPC,
    deployment: DeploymentOpt = None,
    keystore: KeystoreOpt = None,
    password_env: PasswordEnvOpt = "VERITRAIN_KEYSTORE_PASSWORD",
    key_env: KeyEnvOpt = None,
    dev_account: DevAccountOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Post and register the current round's contribution jobs, each starting where the chain's
    final claims say the run is (`noderuntime.runs.post_round`), exactly as the seated solvers
    rebuild it. A counted final state its solver no longer serves is asked of each --mirror; a
    seat whose final nobody serves is left out (docs/RUNS.md)."""
    from cli.errors import CliError, require_balance
    from noderuntime.mirror import StateMirror
    from noderuntime.options import check_mirrors
    from noderuntime.runs import post_round
    from veritrain.units import utc_time

    run = _load_run(run_file)
    try:
        for s in seat or range(run.seats):
            run.contribution_spec(round_index or 0, s)
    except VeritrainError as exc:
        raise CliError(str(exc)) from None
    client = connect_signer(rpc_url, deployment, keystore, password_env, key_env, dev_account)
    _require_poster(client, run)
    view = _opened(client, run)
    t = view.round if round_index is None else round_index
    if view.ended:
        raise CliError(f"run {view.run_id} has ended")
    if t != view.round:
        raise CliError(f"run {view.run_id} is at round {view.round}: round {t} cannot be posted")
    phase = client.runs.get_round(view.run_id, t).phase.name
    if phase != "Open":
        raise CliError(f"round {t} of run {view.run_id} is {phase}: its registration is closed")
    closes = int(client.runs.registration_deadline(view.run_id, t))
    if client.timestamp() >= closes:  # the next block is later still
        raise CliError(
            f"the registration of round {t} of run {view.run_id} closed at {utc_time(closes)} "
            "UTC: propose the round with the seats it has (`veritrain run propose`)"
        )
    count = len(seat) if seat else run.seats
    require_balance(client, count * client.jobs.post_cost(reward), f"escrow of {count} job(s)")
    try:
        jobs = post_round(
            client,
            run,
            t,
            reward=reward,
            seats=seat,
            store=None if data_dir is None else StateMirror(data_dir / "checkpoints"),
            mirrors=check_mirrors(mirror),
        )
    except VeritrainError as exc:
        raise CliError(str(exc).splitlines()[0]) from None
    if json_out:
        emit_json({"run_id": view.run_id, "round": t, "jobs": jobs})
        return
    typer.echo(f"round {t} of run {view.run_id}: posted and registered jobs {jobs}")


def _claim(client: Any, run: Any, *, settled: bool) -> tuple[Any, Any, Any]:
    """(run view, the chain's round view, this machine's `RoundResult`) of the current round."""
    from cli.errors import CliError
    from noderuntime.runs import round_claim

    view = _opened(client, run)
    if view.ended:
        raise CliError(f"run {view.run_id} has ended")
    try:
        _, result = round_claim(client, run, view.round, settled=settled)
    except VeritrainError as exc:
        raise CliError(str(exc).splitlines()[0]) from None
    return view, client.runs.get_round(view.run_id, view.round), result


@app.command("propose")
def propose(
    run_file: Annotated[Path, typer.Argument(help="The run spec (`veritrain run spec`).")],
    rpc_url: RpcUrlOpt = DEFAULT_RPC,
    deployment: DeploymentOpt = None,
    keystore: KeystoreOpt = None,
    password_env: PasswordEnvOpt = "VERITRAIN_KEYSTORE_PASSWORD",
    key_env: KeyEnvOpt = None,
    dev_account: DevAccountOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Compute the current round's result and propose it with a bond (`claimBond`): the seats
    that count and the next global state. Needs every registered job of the round settled."""
    from chain.contracts.runs import seat_mask
    from cli.errors import CliError, require_balance

    run = _load_run(run_file)
    client = connect_signer(rpc_url, deployment, keystore, password_env, key_env, dev_account)
    view, claim, result = _claim(client, run, settled=True)
    if claim.phase.name != "Open":
        raise CliError(f"round {view.round} of run {view.run_id} already has a claim")
    require_balance(client, client.runs.claim_bond(), "claim bond")
    state = result.state.state_hash()
    client.runs.propose_round(view.run_id, state, seat_mask(result.accepted))
    out = {
        "run_id": view.run_id,
        "round": view.round,
        "accepted": result.accepted,
        "excluded": {str(s): why for s, why in result.excluded.items()},
        "state_hash": "0x" + state.hex(),
    }
    if json_out:
        emit_json(out)
        return
    typer.echo(
        f"round {view.round} of run {view.run_id}: proposed seats {result.accepted}, "
        f"state {out['state_hash']}"
    )
    for s, why in result.excluded.items():
        typer.echo(f"  seat {s} left out: {why}")


@app.command("challenge")
def challenge(
    run_file: Annotated[Path, typer.Argument(help="The run spec (`veritrain run spec`).")],
    force: Annotated[
        bool, typer.Option("--force", help="Challenge even when the claim is what we compute.")
    ] = False,
    rpc_url: RpcUrlOpt = DEFAULT_RPC,
    deployment: DeploymentOpt = None,
    keystore: KeystoreOpt = None,
    password_env: PasswordEnvOpt = "VERITRAIN_KEYSTORE_PASSWORD",
    key_env: KeyEnvOpt = None,
    dev_account: DevAccountOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Challenge the current round's standing claim when it is not what this machine computes
    (posts `claimBond`; the arbitration committee recomputes the round and rules)."""
    from chain.contracts.runs import seat_mask
    from cli.errors import CliError, require_balance
    from veritrain.units import utc_time

    run = _load_run(run_file)
    client = connect_signer(rpc_url, deployment, keystore, password_env, key_env, dev_account)
    view, claim, result = _claim(client, run, settled=False)
    if claim.phase.name != "Proposed":
        raise CliError(f"round {view.round} of run {view.run_id} has no standing claim")
    if client.timestamp() > claim.challenge_deadline:
        raise CliError(
            f"the challenge window of round {view.round} of run {view.run_id} closed at "
            f"{utc_time(claim.challenge_deadline)} UTC (`veritrain run finalize` makes it final)"
        )
    if claim.proposer.lower() == client.address.lower():
        raise CliError(
            f"{client.address} proposed this claim and cannot challenge it: use another account"
        )
    right = (
        claim.accepted == seat_mask(result.accepted)
        and claim.state_hash == result.state.state_hash()
    )
    if right and not force:
        raise CliError(
            f"the claim of round {view.round} is what this machine computes: not challenging "
            "(--force to challenge anyway and lose the bond)"
        )
    require_balance(client, client.runs.claim_bond(), "claim bond a challenge posts")
    receipt = client.runs.challenge_round(view.run_id)
    disputes = [int(e.args["disputeId"]) for e in client.decode_receipt(receipt, "RoundChallenged")]
    out = {"run_id": view.run_id, "round": view.round, "dispute_id": disputes[0] if disputes else 0}
    if json_out:
        emit_json(out)
        return
    typer.echo(
        f"round {view.round} of run {view.run_id}: claim challenged, dispute {out['dispute_id']}"
    )


@app.command("finalize")
def finalize(
    run_file: Annotated[Path, typer.Argument(help="The run spec (`veritrain run spec`).")],
    rpc_url: RpcUrlOpt = DEFAULT_RPC,
    deployment: DeploymentOpt = None,
    keystore: KeystoreOpt = None,
    password_env: PasswordEnvOpt = "VERITRAIN_KEYSTORE_PASSWORD",
    key_env: KeyEnvOpt = None,
    dev_account: DevAccountOpt = None,
) -> None:
    """Make the current round's unchallenged claim final once its window is over: the counted
    seats' solvers are minted shares and the next round opens (anyone may)."""
    from cli.errors import CliError
    from veritrain.units import utc_time

    run = _load_run(run_file)
    client = connect_signer(rpc_url, deployment, keystore, password_env, key_env, dev_account)
    view = _opened(client, run)
    claim = client.runs.get_round(view.run_id, view.round) if not view.ended else None
    if claim is None or claim.phase.name != "Proposed":
        raise CliError(f"run {view.run_id} has no standing claim to finalize")
    now = client.timestamp()
    if now <= claim.challenge_deadline:
        raise CliError(
            f"the claim can be challenged until {utc_time(claim.challenge_deadline)} UTC "
            f"({claim.challenge_deadline - now} s from now): finalize it after that"
        )
    client.runs.finalize_round(view.run_id)
    typer.echo(f"round {view.round} of run {view.run_id} is final")


@app.command("show")
def show(
    run_file: Annotated[Path, typer.Argument(help="The run spec (`veritrain run spec`).")],
    metric: Annotated[
        bool, typer.Option("--metric", help="Also evaluate each round's global state.")
    ] = False,
    mirror: MirrorOpt = None,
    rpc_url: RpcUrlOpt = DEFAULT_RPC,
    deployment: DeploymentOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """A run as the chain records it: each final round's jobs, the seats its claim counted and
    the global state, rebuilt and checked here (`noderuntime.runs.run_state`), then the
    current round's registered jobs and claim. With `--metric`, each round's global state is
    evaluated too (validation bits per character for GPT models, test accuracy for MLPs)."""
    from cli.errors import CliError
    from noderuntime.options import check_mirrors
    from noderuntime.runs import run_state
    from veritrain.runsim import evaluate_global
    from veritrain.training import TrainingEngine

    run = _load_run(run_file)
    client = connect_reader(rpc_url, deployment)
    view = _opened(client, run)
    try:
        state = run_state(client, run, view.round, mirrors=check_mirrors(mirror))
    except VeritrainError as exc:
        raise CliError(str(exc).splitlines()[0]) from None
    engine = TrainingEngine(run.inner) if metric else None

    def score(result: Any) -> float | None:
        return None if engine is None else evaluate_global(engine, result.state.to_bytes())

    rounds = []
    for t, result in enumerate(state.rounds):
        jobs = state.jobs.get(t, {})
        rounds.append(
            {
                "round": t,
                "phase": "final",
                "metric": score(result),
                "jobs": {str(s): j for s, j in sorted(jobs.items())},
                "accepted": result.accepted,
                "not_counted": sorted(set(jobs) - set(result.accepted)),
                "delta_hashes": {str(s): "0x" + h.hex() for s, h in result.delta_hashes.items()},
                "bytes_uploaded": sum(result.delta_bytes.values()),
                "global_hash": "0x" + result.state.state_hash().hex(),
            }
        )
    current = None
    if not view.ended:
        claim = client.runs.get_round(view.run_id, view.round)
        current = {
            "round": view.round,
            "phase": claim.phase.name.lower(),
            "jobs": {
                str(s): j for s, j in client.runs.contributions(view.run_id, view.round).items()
            },
            "claimed_seats": claim.seats(claim.accepted) if claim.phase.name != "Open" else None,
            "claimed_state": "0x" + claim.state_hash.hex() if claim.phase.name != "Open" else None,
            "proposer": claim.proposer if claim.phase.name != "Open" else None,
            "challenge_deadline": claim.challenge_deadline or None,
        }
    report = {
        "run_id": view.run_id,
        "run_hash": "0x" + run.run_hash().hex(),
        "metric_name": run.inner.metric_name,
        "rounds": rounds,
        "current": current,
        "global_hash": "0x" + state.state.state_hash().hex(),
    }
    if json_out:
        emit_json(report)
        return
    typer.echo(
        f"run {view.run_id} ({report['run_hash']}): {run.seats} seats, H = {run.inner_steps}, "
        f"round {view.round} of {view.rounds}"
    )
    for r in rounds:
        shown = "" if r["metric"] is None else f", {report['metric_name']} {r['metric']:.4f}"
        typer.echo(
            f"round {r['round']}: jobs {r['jobs']}, counted seats {r['accepted']}{shown}, "
            f"global state {r['global_hash']}"
        )
    if current is not None:
        typer.echo(f"round {current['round']} ({current['phase']}): jobs {current['jobs']}")
        if current["claimed_state"] is not None:
            typer.echo(
                f"  claim by {current['proposer']}: seats {current['claimed_seats']}, "
                f"state {current['claimed_state']}"
            )
    typer.echo(f"current global state {report['global_hash']}")


app.command("drive")(__import__("cli.run_drive", fromlist=["drive"]).drive)
