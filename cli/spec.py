"""`veritrain spec new`: the job spec of your own model on a prepared tokens dataset; and the one
reader of spec files every command's ``--spec FILE`` goes through.

`spec new` reads the manifest of a directory `veritrain data prepare` wrote, checks it (its
leaves hash to its chunks root, every chunk file is there at its size), and writes the canonical
JSON of a `veritrain.spec.JobSpec`: a GPT (`GPTConfig`) or Llama (`LlamaConfig`) of the given
shape on `DatasetConfig(name="tokens", root=<the manifest's root>, uris=...)`, whose vocabulary
is the manifest's (the spec holds no vocabulary field: the root binds it). It prints
``spec 0x<spec hash> written to FILE`` (or, with ``--json``, ``{"spec_hash", "out", "model_id",
"family", "dataset_root", "vocab_size", "uris"}``). That file is what ``veritrain train --spec``,
``veritrain model register --spec``, ``veritrain job submit --spec`` and ``veritrain run spec
--spec`` take.

Bad input (a directory that is not a prepared dataset, a shape the model refuses, a value out of
range) prints one line on stderr and exits with status 2; nothing is written.

Shared with the commands that take ``--spec FILE``: `load_spec_file` (the one reader of a spec
file), `spec_with` (the command line's overrides of a spec's fields), `spec_file_jobs` (`job
submit`'s copies of a spec file, seed + i) and `check_job_limits` (what the deployment's
JobManager and ShareRegistry would revert on, checked before any work is spent).

Run: ``veritrain spec new --family llama --data data/corpus --out my-model.json --layers 4
--heads 8 --kv-heads 2 --width 256 --block 128 --tie --steps 2000 --interval 100``.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Annotated, Any

import typer

from noderuntime.options import UINT32_MAX, UINT64_MAX, JsonOpt, emit_json

__all__ = [
    "app",
    "check_job_limits",
    "load_spec_file",
    "new",
    "read_dataset_dir",
    "spec_file_jobs",
    "spec_with",
    "tokens_spec",
]

app = typer.Typer(
    help="Job specs: write one for your own model on a prepared dataset.", no_args_is_help=True
)

FAMILIES = ("gpt", "llama")
"""The model families `spec new` writes (`GPTConfig`, `LlamaConfig`)."""
FLAGS = {
    "n_layer": "--layers",
    "n_head": "--heads",
    "n_kv_head": "--kv-heads",
    "n_embd": "--width",
    "block_size": "--block",
    "ffn_hidden": "--ffn-hidden",
    "lr": "--lr",
    "batch_size": "--batch",
    "total_steps": "--steps",
    "checkpoint_interval": "--interval",
    "seed": "--seed",
    "model_id": "--model-id",
    "micro_batches": "--micro-batches",
    "uris": "--uri",
    "arith": "--arith",
}
"""The option that sets each spec field, named after the field in a refusal."""


def _bad_file(message: str) -> typer.BadParameter:
    """The one-line refusal of a ``--spec FILE`` (exit 2)."""
    return typer.BadParameter(message, param_hint="'--spec'")


def _error_parts(exc: Any) -> tuple[str, str]:
    """(dotted field path, possibly empty; message) of a ValidationError's first error."""
    first = exc.errors()[0]
    where = ".".join(str(p) for p in first.get("loc", ()))
    msg = str(first.get("msg", "invalid")).removeprefix("Value error, ").splitlines()[0]
    return where, msg


def first_error(exc: Any) -> str:
    """`field.path: message` of a pydantic ValidationError's first error, on one line."""
    where, msg = _error_parts(exc)
    return f"{where}: {msg}" if where else msg


def load_spec_file(path: Path) -> Any:
    """The `JobSpec` in a JSON file (any key order or spacing; its canonical form is what is
    hashed and posted).

    Args:
        path: a regular file of at most `veritrain.spec.MAX_SPEC_BYTES`.

    Returns:
        The frozen `veritrain.spec.JobSpec`.

    Raises:
        typer.BadParameter: (one line naming the file; exit 2) the file is missing, unreadable
            or not a regular file, is not JSON, or is not a valid spec (its first bad field).
    """
    from pydantic import ValidationError

    from veritrain.bounded import BodyTooLarge, NotARegularFile, read_regular_file
    from veritrain.spec import MAX_SPEC_BYTES, JobSpec

    try:
        raw = read_regular_file(str(path), MAX_SPEC_BYTES)
    except OSError as exc:
        raise _bad_file(f"cannot read spec file {path}: {exc.strerror or exc}") from None
    except NotARegularFile:
        raise _bad_file(f"spec file {path} is not a regular file") from None
    except BodyTooLarge:
        raise _bad_file(f"spec file {path} is over {MAX_SPEC_BYTES:,} bytes") from None
    try:
        obj = json.loads(raw)
    except ValueError as exc:
        raise _bad_file(f"spec file {path} is not JSON: {exc}") from None
    try:
        return JobSpec.model_validate(obj)
    except ValidationError as exc:
        raise _bad_file(f"spec file {path} is not a job spec: {first_error(exc)}") from None


def spec_with(
    spec: Any,
    *,
    total_steps: int | None = None,
    checkpoint_interval: int | None = None,
    seed: int | None = None,
    batch_size: int | None = None,
    lr: float | None = None,
    arith: str | None = None,
    threads: int | None = None,
    model_id: str | None = None,
    micro_batches: int | None = None,
) -> Any:
    """`spec` with the fields a command line overrides (None: keep the spec's).

    Args:
        spec: a `JobSpec`.
        total_steps, checkpoint_interval, seed, batch_size, model_id, micro_batches: the
            `JobSpec` fields.
        lr: the AdamW learning rate (finite, > 0).
        arith: `"native"` or `"repro2"`. A repro2 spec made native pins the CPU and `threads`
            (or 1) threads; a native spec made repro2 pins nothing. The same arithmetic as the
            spec's changes nothing.
        threads: the thread count a native spec pins (refused for a repro2 spec, which pins
            none: a command that runs it picks its own).

    Returns:
        The new, validated `JobSpec` (`spec` itself when nothing is overridden).

    Raises:
        SpecError: one line naming the first field refused (a retired or unknown arithmetic,
            an interval that does not divide the steps, a bad learning rate, ...).
    """
    from pydantic import ValidationError

    from veritrain.errors import SpecError
    from veritrain.spec import NATIVE_ARITH, ExecutionProfile, JobSpec, check_arith

    data: dict[str, Any] = spec.model_dump()
    fields = {
        "total_steps": total_steps,
        "checkpoint_interval": checkpoint_interval,
        "seed": seed,
        "batch_size": batch_size,
        "model_id": model_id,
        "micro_batches": micro_batches,
    }
    data.update({k: v for k, v in fields.items() if v is not None})
    if lr is not None:
        if not (math.isfinite(lr) and lr > 0):
            raise SpecError(f"optimizer.lr: must be a finite number > 0, got {lr} (--lr)")
        data["optimizer"] = {**data["optimizer"], "lr": lr}
    target = spec.profile.arith if arith is None else check_arith(arith)
    was_native = spec.profile.arith == NATIVE_ARITH
    if target != NATIVE_ARITH and threads is not None:
        raise SpecError(
            f"arith {target!r} pins no thread count (every machine picks its own); "
            "--threads pins native specs only"
        )
    if target == NATIVE_ARITH and was_native and threads is not None:
        data["profile"] = {**data["profile"], "threads": threads}  # its device stays pinned
    elif target == NATIVE_ARITH and not was_native:
        data["profile"] = ExecutionProfile(threads=threads or 1).model_dump()  # CPU
    elif target != NATIVE_ARITH and target != spec.profile.arith:
        data["profile"] = ExecutionProfile.repro().model_dump()
    try:
        out = JobSpec.model_validate(data)
    except ValidationError as exc:
        where, msg = _error_parts(exc)
        flag = FLAGS.get(where.rsplit(".", 1)[-1])
        line = f"{where}: {msg}" if where else msg
        raise SpecError(line + (f" ({flag})" if flag else "")) from exc
    return spec if out == spec else out


def spec_file_jobs(
    path: Path,
    *,
    steps: int | None,
    interval: int | None,
    seed: int | None,
    count: int,
    lr: float | None,
    others: dict[str, Any],
) -> list[Any]:
    """COUNT jobs of the spec in `path`: its seed (or `seed`) + i for job i, with `steps`,
    `interval` and `lr` replacing its own when given.

    Args:
        others: options that the spec file fixes itself (preset, arithmetic, batch size,
            threads, model id), by flag; any given one is refused.

    Raises:
        typer.BadParameter: a spec file that is missing, not JSON or not a valid spec; an
            option the spec fixes; a seed range past uint64; overrides that make an invalid
            spec (the first field refused).
    """
    from veritrain.errors import SpecError

    given = [flag for flag, value in others.items() if value is not None]
    if given:
        raise typer.BadParameter(
            f"{', '.join(given)}: the spec file sets these itself (edit it, or write another "
            "with `veritrain spec new`)",
            param_hint="'--spec'",
        )
    base = load_spec_file(path)
    first = base.seed if seed is None else seed
    if first + count - 1 > UINT64_MAX:
        raise typer.BadParameter(
            f"seed {first} + {count} jobs passes 2**64 - 1", param_hint="'--seed'"
        )
    try:
        return [
            spec_with(
                base,
                total_steps=steps,
                checkpoint_interval=interval,
                seed=first + i,
                lr=lr,
            )
            for i in range(count)
        ]
    except SpecError as exc:
        raise typer.BadParameter(f"{path}: {exc}", param_hint="'--spec'") from None


def check_job_limits(specs: list[Any], params: Any, max_segment_compute: int) -> None:
    """Refuse, before any work is spent, a job the JobManager would revert on (`checkPost`:
    TotalStepsAboveMax, SegmentStepsAboveMax, SegmentsAboveMax; `ShareRegistry.recordPost`:
    SegmentComputeAboveMax, docs/SECURITY.md P-19).

    Args:
        specs: the jobs' `JobSpec`s.
        params: the deployment's `chain.types.JobParamsView` (`client.jobs.job_params()`).
        max_segment_compute: the most FLOP one segment may cost (`checkpoint_interval *
            compute_per_step`, `client.shares.max_segment_compute()`).

    Raises:
        CliError: the first limit a spec passes, naming it and the option to change.
    """
    from cli.errors import CliError
    from veritrain.lineage import compute_per_step

    for spec in specs:
        n, k = spec.total_steps, spec.checkpoint_interval
        if params.max_total_steps and n > params.max_total_steps:
            raise CliError(
                f"--steps {n} is above this deployment's most steps per job, "
                f"{params.max_total_steps}"
            )
        if params.max_segment_steps and k > params.max_segment_steps:
            raise CliError(
                f"--interval {k} is above this deployment's most steps per segment, "
                f"{params.max_segment_steps}"
            )
        if params.max_segments and n // k > params.max_segments:
            raise CliError(
                f"{n // k} segments (--steps {n} / --interval {k}) is above this deployment's "
                f"most segments per job, {params.max_segments}"
            )
        segment = k * compute_per_step(spec)
        if segment > max_segment_compute:
            raise CliError(
                f"one segment costs {segment:,} FLOP to replay (--interval {k} x "
                f"{compute_per_step(spec):,} per step), above this deployment's "
                f"{max_segment_compute:,}: use a smaller --interval or batch"
            )


def read_dataset_dir(path: Path) -> Any:
    """The checked `veritrain.tokens.Manifest` of a directory `veritrain data prepare` wrote.

    The manifest must parse and its leaves hash to its chunks root (`Manifest.parse`), and every
    chunk file `chunks/NNNNNN.bin` must be there with `chunk_bytes` bytes. The chunks' contents
    are not hashed here: every node that trains from the dataset checks each chunk it reads
    against the root (`veritrain.chunkstore.ChunkStore`).

    Raises:
        DatasetError: one line: not a directory, no readable manifest, a manifest that does
            not hold, or a chunk file missing or of the wrong size.
    """
    from veritrain.bounded import BodyTooLarge, NotARegularFile, read_regular_file
    from veritrain.chunkstore import MAX_MANIFEST_BYTES
    from veritrain.errors import DatasetError
    from veritrain.tokens import CHUNKS_DIR, MANIFEST_NAME, Manifest, chunk_name

    what = f"{path} is not a prepared dataset (`veritrain data prepare ... --out {path}`)"
    if not path.is_dir():
        raise DatasetError(f"{what}: not a directory")
    try:
        raw = read_regular_file(str(path / MANIFEST_NAME), MAX_MANIFEST_BYTES)
    except OSError as exc:
        raise DatasetError(f"{what}: no {MANIFEST_NAME} ({exc.strerror or exc})") from None
    except (NotARegularFile, BodyTooLarge):
        raise DatasetError(f"{what}: {MANIFEST_NAME} is not a manifest file") from None
    try:
        manifest = Manifest.parse(raw)
    except DatasetError as exc:
        raise DatasetError(f"{what}: {exc}") from None
    header = manifest.header
    for i in range(header.num_chunks):
        chunk = path / CHUNKS_DIR / chunk_name(i)
        size = chunk.stat().st_size if chunk.is_file() else None
        if size != header.chunk_bytes:
            found = "missing" if size is None else f"{size} bytes, not {header.chunk_bytes}"
            raise DatasetError(f"{what}: chunk file {CHUNKS_DIR}/{chunk_name(i)} {found}")
    return manifest


def tokens_spec(
    family: str,
    root: str,
    uris: tuple[str, ...],
    *,
    layers: int,
    heads: int,
    width: int,
    block: int,
    kv_heads: int | None = None,
    ffn_hidden: int | None = None,
    tie: bool | None = None,
    lr: float = 1e-3,
    batch: int = 32,
    steps: int = 1000,
    interval: int = 50,
    seed: int = 0,
    model_id: str,
    arith: str = "repro2",
) -> Any:
    """The `JobSpec` of a GPT or Llama on a tokens dataset.

    The optimizer is the character presets' AdamW (betas 0.9, 0.99; weight decay 0.1) at `lr`.

    Args:
        family: `"gpt"` or `"llama"`.
        root: the dataset root (`0x` + 64 hex, `Manifest.header.root_hex()`).
        uris: 1 to `MAX_DATASET_URIS` `file://` or `http(s)://` base URIs serving the dataset.
        layers, heads, width, block: n_layer, n_head, n_embd D, block_size T.
        kv_heads: Llama's key/value heads (default `heads`: plain multi-head attention).
        ffn_hidden: Llama's SwiGLU width F (default `16 * ceil(8 D / 48)`, 8 D / 3 rounded up to
            a multiple of 16, as Meta's reference model rounds it: 176 for D = 64).
        tie: Llama's output head reuses the token embedding (default False).
        lr, batch, steps, interval, seed, model_id: the job's fields (`JobSpec`).
        arith: `"repro2"` (the same bytes on every machine) or `"native"` (CPU, one thread).

    Returns:
        The validated, frozen `JobSpec`.

    Raises:
        SpecError: one line: a Llama-only option given for a GPT, or the first field a config
            refuses, with the option that sets it.
    """
    from veritrain.errors import SpecError
    from veritrain.spec import (
        DatasetConfig,
        GPTConfig,
        JobSpec,
        LlamaConfig,
        OptimizerConfig,
        check_arith,
    )

    if family not in FAMILIES:
        raise SpecError(f"unknown family {family!r} (choose from {', '.join(FAMILIES)}) (--family)")
    llama_only = {"--kv-heads": kv_heads, "--ffn-hidden": ffn_hidden, "--tie/--no-tie": tie}
    given = [flag for flag, v in llama_only.items() if v is not None]
    if family == "gpt" and given:
        raise SpecError(f"{', '.join(given)}: Llama options; family 'gpt' has none of them")
    check_arith(arith)
    shape: dict[str, Any] = {"n_layer": layers, "n_head": heads, "n_embd": width}
    shape["block_size"] = block
    if family == "llama":
        shape["n_kv_head"] = heads if kv_heads is None else kv_heads
        shape["ffn_hidden"] = 16 * math.ceil(8 * width / 48) if ffn_hidden is None else ffn_hidden
        shape["tie_embeddings"] = bool(tie)
    from pydantic import ValidationError

    try:
        model = GPTConfig(**shape) if family == "gpt" else LlamaConfig(**shape)
    except ValidationError as exc:
        where, msg = _error_parts(exc)
        flag = FLAGS.get(where)
        field = f"model.{where}" if where else "model"
        raise SpecError(f"{field}: {msg}" + (f" ({flag})" if flag else "")) from None
    try:
        dataset = DatasetConfig(name="tokens", root=root, uris=uris)
    except ValidationError as exc:
        raise SpecError(f"dataset: {first_error(exc)} (--uri)") from None
    base = JobSpec(
        model=model,
        dataset=dataset,
        optimizer=OptimizerConfig(lr=1e-3, betas=(0.9, 0.99), weight_decay=0.1),
        model_id="unnamed",
    )
    return spec_with(
        base,
        total_steps=steps,
        checkpoint_interval=interval,
        seed=seed,
        batch_size=batch,
        lr=lr,
        arith=arith,
        model_id=model_id,
    )


@app.command("new")
def new(
    family: Annotated[str, typer.Option(help="Model family: 'gpt' or 'llama'.")],
    data: Annotated[
        Path, typer.Option(help="A directory `veritrain data prepare` wrote.", show_default=False)
    ],
    out: Annotated[Path, typer.Option(help="Where to write the spec's canonical JSON.")],
    uri: Annotated[
        list[str] | None,
        typer.Option(
            help="Base URI serving the dataset (file:// or http(s)://; repeat for mirrors); "
            "default file:// + DATA's absolute path."
        ),
    ] = None,
    layers: Annotated[int, typer.Option(help="Transformer blocks n_layer.")] = 2,
    heads: Annotated[int, typer.Option(help="Attention (query) heads per block.")] = 4,
    kv_heads: Annotated[
        int | None, typer.Option(help="Llama: key/value heads (divide --heads); default --heads.")
    ] = None,
    width: Annotated[int, typer.Option(help="Embedding width D (a multiple of --heads).")] = 64,
    block: Annotated[int, typer.Option(help="Context length T in tokens.")] = 64,
    ffn_hidden: Annotated[
        int | None,
        typer.Option(help="Llama: SwiGLU width; default 8 D / 3 rounded up to a multiple of 16."),
    ] = None,
    tie: Annotated[
        bool | None,
        typer.Option("--tie/--no-tie", help="Llama: tie the output head to the embedding."),
    ] = None,
    lr: Annotated[float, typer.Option(help="AdamW learning rate (> 0).")] = 1e-3,
    batch: Annotated[int, typer.Option(help="Windows per optimizer step.")] = 32,
    steps: Annotated[int, typer.Option(help="Total optimizer steps N.")] = 1000,
    interval: Annotated[int, typer.Option(help="Checkpoint interval k (divides N).")] = 50,
    seed: Annotated[int, typer.Option(help="Job seed (initial weights and batches).")] = 0,
    model_id: Annotated[
        str | None, typer.Option(help="Model name; default <family>-<DATA's folder name>.")
    ] = None,
    arith: Annotated[str, typer.Option(help="'repro2' (any machine) or 'native'.")] = "repro2",
    json_out: JsonOpt = False,
) -> None:
    """Write the job spec of a GPT or Llama on a prepared tokens dataset; print its hash."""
    from cli.train import bad_input
    from veritrain.errors import VeritrainError
    from veritrain.spec import MAX_DATASET_URIS

    if family not in FAMILIES:
        raise bad_input(f"--family must be one of {', '.join(FAMILIES)}, got {family!r}")
    for flag, value, low, high in (
        ("--layers", layers, 1, None),
        ("--heads", heads, 1, None),
        ("--kv-heads", kv_heads, 1, None),
        ("--width", width, 1, None),
        ("--block", block, 1, None),
        ("--ffn-hidden", ffn_hidden, 1, None),
        ("--batch", batch, 1, None),
        ("--steps", steps, 1, UINT32_MAX),
        ("--interval", interval, 1, UINT32_MAX),
        ("--seed", seed, 0, UINT64_MAX),
    ):
        if value is not None and (value < low or (high is not None and value > high)):
            bound = f">= {low}" if high is None else f"in [{low}, {high}]"
            raise bad_input(f"{flag} must be {bound}, got {value}")
    if not (math.isfinite(lr) and lr > 0):
        raise bad_input(f"--lr must be a finite number > 0, got {lr}")
    if model_id is not None and not model_id.strip():
        raise bad_input("--model-id must not be empty")
    if uri is not None and len(uri) > MAX_DATASET_URIS:
        raise bad_input(f"--uri: at most {MAX_DATASET_URIS} URIs, got {len(uri)}")
    if out.is_dir():
        raise bad_input(f"--out {out} is a directory")
    try:
        manifest = read_dataset_dir(data)
        header = manifest.header
        if header.chunk_tokens <= block:
            raise bad_input(
                f"--block {block} does not fit the dataset's chunks of {header.chunk_tokens} "
                "tokens (a window is T + 1 tokens of one chunk)"
            )
        spec = tokens_spec(
            family,
            header.root_hex(),
            tuple(uri) if uri else (data.resolve().as_uri(),),
            layers=layers,
            heads=heads,
            width=width,
            block=block,
            kv_heads=kv_heads,
            ffn_hidden=ffn_hidden,
            tie=tie,
            lr=lr,
            batch=batch,
            steps=steps,
            interval=interval,
            seed=seed,
            model_id=model_id if model_id is not None else f"{family}-{data.resolve().name}",
            arith=arith,
        )
    except VeritrainError as exc:
        raise bad_input(str(exc).splitlines()[0]) from None
    from veritrain.store import atomic_write_bytes

    try:
        atomic_write_bytes(out, spec.canonical_json())
    except OSError as exc:
        raise bad_input(f"cannot write {out}: {exc.strerror or exc}") from None
    digest = "0x" + spec.spec_hash().hex()
    if json_out:
        emit_json(
            {
                "spec_hash": digest,
                "out": str(out),
                "model_id": spec.model_id,
                "family": family,
                "dataset_root": spec.dataset.root,
                "vocab_size": header.vocab_size,
                "uris": list(spec.dataset.uris or ()),
            }
        )
        return
    typer.echo(f"spec {digest} written to {out}")
