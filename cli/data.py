"""`veritrain data prepare`: tokenize text files into a chunked dataset bound by one root.

Writes `OUT/manifest.json` and `OUT/chunks/NNNNNN.bin` (`veritrain.tokens`), then prints the
dataset root a "tokens" job spec names, the chunk counts and the sizes. Serve `OUT` from any
static file server (or a solver's, `noderuntime.serving.mount_datasets`) and name its URL (or
`file://OUT`) in the spec's `dataset.uris`.

Run: ``veritrain data prepare corpus/*.txt --tokenizer byte --out data/corpus``;
``veritrain data prepare a.txt --tokenizer tokenizer.json --tokenizer-hash 0x... --out ds --json``.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated

import typer

from noderuntime.options import JsonOpt, emit_json

__all__ = ["app", "prepare"]

app = typer.Typer(help="Prepare tokenized datasets bound by a Merkle root.", no_args_is_help=True)


def _size(n: int) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024  # type: ignore[assignment]
    return f"{n} B"


@app.command("prepare")
def prepare(
    files: Annotated[list[Path], typer.Argument(help="UTF-8 text files, one document each.")],
    out: Annotated[
        Path, typer.Option("--out", help="Output directory (absent or empty).", show_default=False)
    ],
    tokenizer: Annotated[
        str, typer.Option("--tokenizer", help="'byte', or the path of a local tokenizer.json.")
    ] = "byte",
    chunk_tokens: Annotated[
        int, typer.Option("--chunk-tokens", min=2, help="Token ids per chunk file.")
    ] = 1 << 16,
    val_fraction: Annotated[
        float,
        typer.Option(
            "--val-fraction",
            help="Share of chunks held out for validation (the last ones; at least one).",
        ),
    ] = 0.1,
    tokenizer_hash: Annotated[
        str | None,
        typer.Option(
            "--tokenizer-hash",
            help="0x + 64 hex: the tokenizer hash its owner published; a tokenizer that "
            "hashes otherwise is refused.",
            show_default=False,
        ),
    ] = None,
    json_out: JsonOpt = False,
) -> None:
    """Tokenize FILES (in order) into OUT: chunk files, manifest.json and the dataset root."""
    from cli.errors import CliError
    from veritrain.tokens import load_tokenizer
    from veritrain.tokens import prepare as prepare_dataset

    expected = None
    if tokenizer_hash is not None:
        if not re.fullmatch(r"0x[0-9a-fA-F]{64}", tokenizer_hash):
            raise CliError(f"--tokenizer-hash {tokenizer_hash[:80]!r} is not 0x + 64 hex digits")
        expected = bytes.fromhex(tokenizer_hash[2:])
    tok = load_tokenizer(tokenizer, expected)
    report = prepare_dataset(files, tok, out, chunk_tokens=chunk_tokens, val_fraction=val_fraction)
    m = report.manifest
    h = m.header
    if json_out:
        emit_json(
            {
                "root": h.root_hex(),
                "uri": out.resolve().as_uri(),
                "manifest": m.model_dump(mode="json"),
                "text_bytes": report.text_bytes,
                "dropped_tokens": report.dropped,
                "chunk_bytes": report.chunk_bytes,
            }
        )
        return
    ratio = report.text_bytes / max(1, h.total_tokens + report.dropped)
    typer.echo(f"root          {h.root_hex()}")
    typer.echo(f"tokenizer     {h.tokenizer} {h.tokenizer_hash} (vocab {h.vocab_size:,})")
    typer.echo(
        f"chunks        {h.train_chunks:,} train + {h.val_chunks:,} validation, "
        f"{h.chunk_tokens:,} tokens each ({h.dtype}, {_size(h.chunk_bytes)})"
    )
    typer.echo(
        f"tokens        {h.total_tokens:,} ({report.dropped:,} in a short last chunk dropped)"
    )
    typer.echo(
        f"sizes         text {_size(report.text_bytes)}, chunks {_size(report.chunk_bytes)}, "
        f"{ratio:.2f} text bytes per token"
    )
    typer.echo(f"written to    {out} (spec uri {out.resolve().as_uri()})")
