"""`bench.bench_models` at tiny settings: both arithmetics trained on the Bible corpus, the row's
numbers and the printed table; bad step counts refused.

Run: ``.venv/bin/python -m pytest tests/unit/bench/test_bench_models.py -q``.
"""

from __future__ import annotations

import math

import pytest

from bench.bench_models import CONFIGS, bench_config, main, table_of
from tests.utils.preset_data import have_preset_data

needs_bible = pytest.mark.skipif(
    not have_preset_data("llama-bible"), reason="Bible sdists absent: run scripts/setup.sh"
)


def _llama_params(v: int, d: int, layers: int, heads: int, kv: int, ffn: int) -> int:
    kv_width = d // heads * kv
    per_layer = 2 * d * d + 2 * d * kv_width + 3 * d * ffn + 2 * d  # attention, SwiGLU, norms
    return v * d + layers * per_layer + d  # tied head, final norm


@pytest.mark.slow
@needs_bible
def test_bench_models_at_tiny_settings(capsys: pytest.CaptureFixture[str]) -> None:
    row = bench_config("llama-bible", steps=2, repeats=2, batch=2, device="cpu")
    assert row["params"] == _llama_params(256, 128, 4, 4, 2, 352) == 771_200
    assert row["metric_name"] == "val_bpt"
    for arith in ("native", "repro2"):
        r = row[arith]
        assert 0 < r["ms_min"] <= r["ms_median"]
        assert math.isfinite(r["loss"]) and 0 < r["metric"] < 9  # bits per byte, fresh model
    assert row["native"]["hash"] != row["repro2"]["hash"]
    assert row["val_rel"] == pytest.approx(
        (row["repro2"]["metric"] - row["native"]["metric"]) / row["native"]["metric"]
    )
    assert abs(row["val_rel"]) < 0.01  # two steps from the same state 0 barely diverge
    from rich.console import Console

    Console(width=170).print(table_of({"llama-bible": row}, 2, 2, "cpu"))
    out = capsys.readouterr().out
    assert "llama-bible" in out and "0.77 M" in out and " ok" in out


def test_the_10m_config_has_about_ten_million_parameters() -> None:
    m = CONFIGS["llama-10m"]["model"]
    n = _llama_params(256, m["n_embd"], m["n_layer"], m["n_head"], m["n_kv_head"], m["ffn_hidden"])
    assert 9_000_000 < n < 11_000_000


@pytest.mark.parametrize(("steps", "repeats"), [(3, 2), (1, 2), (4, 0)])
def test_step_counts_that_do_not_split_are_refused(steps: int, repeats: int) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["--steps", str(steps), "--repeats", str(repeats)])
    assert exc.value.code == 2
    with pytest.raises(ValueError, match="positive multiple of --repeats"):
        bench_config("llama-bible", steps, repeats, None, "cpu")
