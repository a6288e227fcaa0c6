"""`veritrain data prepare`: writes the chunked dataset and prints the root it has.

Run: ``.venv/bin/python -m pytest tests/unit/cli/test_cli_data.py -q``.
"""

from __future__ import annotations

import json

from typer.testing import CliRunner

from cli.app import app
from veritrain.tokens import Manifest

TEXT = "Let me not to the marriage of true minds admit impediments. Love is not love\n" * 30


def test_prepare_prints_root_counts_and_sizes(tmp_path):
    src = tmp_path / "sonnet.txt"
    src.write_text(TEXT, encoding="utf-8")
    out = tmp_path / "ds"
    result = CliRunner().invoke(
        app, ["data", "prepare", str(src), "--out", str(out), "--chunk-tokens", "200"]
    )
    assert result.exit_code == 0, result.output
    m = Manifest.parse((out / "manifest.json").read_bytes())
    h = m.header
    assert h.train_chunks + h.val_chunks == len(TEXT) // 200
    lines = dict(line.split(None, 1) for line in result.output.splitlines() if line.strip())
    assert lines["root"] == h.root_hex()
    assert f"{h.train_chunks} train + {h.val_chunks} validation, 200 tokens each" in lines["chunks"]
    assert lines["tokens"].startswith(f"{h.total_tokens:,} ({len(TEXT) % 200} ")
    assert len(list((out / "chunks").iterdir())) == h.num_chunks


def test_prepare_json_gives_manifest_and_root(tmp_path):
    src = tmp_path / "sonnet.txt"
    src.write_text(TEXT, encoding="utf-8")
    out = tmp_path / "ds"
    argv = ["data", "prepare", str(src), "--out", str(out), "--chunk-tokens", "300"]
    result = CliRunner().invoke(app, [*argv, "--val-fraction", "0.3", "--json"])
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    m = Manifest.model_validate(payload["manifest"])
    assert payload["root"] == m.header.root_hex()
    assert payload["uri"] == out.resolve().as_uri()
    assert m.header.val_chunks == round(len(TEXT) // 300 * 0.3)
    assert (
        payload["text_bytes"] == len(TEXT.encode())
        and payload["chunk_bytes"] == 2 * m.header.total_tokens
    )
