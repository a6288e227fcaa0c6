"""Job spec: canonical JSON, spec hash binding, URIs."""

from __future__ import annotations

import base64
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from veritrain._keccak import keccak256
from veritrain.errors import RetiredArithmetic, SpecError, SpecHashMismatch, SpecUnavailable
from veritrain.spec import (
    ARITHS,
    REPRO_ARITH,
    ExecutionProfile,
    JobSpec,
    check_arith,
    default_digits_spec,
    load_spec,
    model_id_hash,
)

BASE = default_digits_spec()


def _leaf_paths(obj, prefix=()):
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield from _leaf_paths(v, (*prefix, k))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            yield from _leaf_paths(v, (*prefix, i))
    else:
        yield prefix, obj


def _set(obj, path, value):
    obj = json.loads(json.dumps(obj))
    cur = obj
    for p in path[:-1]:
        cur = cur[p]
    cur[path[-1]] = value
    return obj


def _mutate(value):
    """A different value of the same kind that keeps the spec valid."""
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return value + 1
    if isinstance(value, float):
        return value / 2
    if isinstance(value, str) and value.startswith("0x"):
        return "0x" + ("0" if value[2] != "0" else "1") + value[3:]
    if isinstance(value, str):
        return {"cpu": "cuda", "float32": "float64", "mlp": "mlp"}.get(value, value + "x")
    return value


def test_canonical_json_is_sorted_and_compact():
    raw = BASE.canonical_json()
    assert (
        raw
        == json.dumps(
            json.loads(raw), sort_keys=True, separators=(",", ":"), ensure_ascii=False
        ).encode()
    )
    assert b" " not in raw
    assert BASE.spec_hash() == keccak256(raw)
    assert len(BASE.spec_hash()) == 32


def test_spec_hash_binds_every_field():
    """Changing any leaf field of the spec (that keeps it valid) changes the hash."""
    dumped = BASE.model_dump(mode="json")
    checked = 0
    for path, value in _leaf_paths(dumped):
        if path[-1] in ("arch", "name"):  # single-valued literals
            continue
        if path == ("checkpoint_interval",):
            new = _set(dumped, path, 50)
        elif path == ("total_steps",):
            new = _set(dumped, path, 325)
        elif path == ("dataset", "path"):
            continue  # must stay None for sklearn-digits; covered below with a tensor file
        elif path == ("profile", "arith"):
            continue  # repro also unpins device and threads: test_arith_is_bound_by_the_hash
        else:
            new = _set(dumped, path, _mutate(value))
        spec = JobSpec.model_validate(new)
        assert spec.spec_hash() != BASE.spec_hash(), path
        checked += 1
    assert checked >= 15
    tensor = JobSpec.model_validate(
        _set(_set(dumped, ("dataset", "name"), "tensor-file"), ("dataset", "path"), "a.npz")
    )
    other = JobSpec.model_validate(
        _set(_set(dumped, ("dataset", "name"), "tensor-file"), ("dataset", "path"), "b.npz")
    )
    assert len({tensor.spec_hash(), other.spec_hash(), BASE.spec_hash()}) == 3


def test_arith_is_bound_by_the_hash_and_native_keeps_its_bytes():
    """Native specs keep their pre-arith canonical JSON (no `arith` key); repro changes it."""
    assert b'"arith"' not in BASE.canonical_json()
    assert JobSpec.model_validate_json(BASE.canonical_json()).profile.arith == "native"
    repro = BASE.model_copy(update={"profile": ExecutionProfile.repro()})
    assert b'"arith":"repro2"' in repro.canonical_json()
    assert repro.spec_hash() != BASE.spec_hash()
    assert JobSpec.model_validate_json(repro.canonical_json()) == repro


@pytest.mark.parametrize(
    "fields, message",
    [
        ({"arith": "repro2"}, "pins neither device nor threads"),
        ({"arith": "repro2", "device": None}, "pins neither device nor threads"),
        ({"arith": "repro2", "device": None, "threads": None, "dtype": "float64"}, "float32"),
        ({"arith": "repro", "device": None, "threads": None}, "cannot be replayed exactly"),
        ({"arith": "fast"}, "unknown arithmetic 'fast'"),
        ({"threads": None}, "must pin device and threads"),
        ({"device": None}, "must pin device and threads"),
    ],
)
def test_profile_rejects_arith_combinations(fields, message):
    with pytest.raises(ValidationError, match=message):
        ExecutionProfile(**fields)


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 2**64 - 1),
    lr=st.floats(1e-6, 1.0, allow_nan=False),
    batch=st.integers(1, 512),
    k=st.integers(1, 50),
    segments=st.integers(1, 40),
    model_id=st.text(min_size=1, max_size=20),
)
def test_spec_hash_injective_on_random_fields(seed, lr, batch, k, segments, model_id):
    spec = BASE.model_copy(
        update=dict(
            seed=seed,
            batch_size=batch,
            checkpoint_interval=k,
            total_steps=k * segments,
            model_id=model_id,
            optimizer=BASE.optimizer.model_copy(update={"lr": lr}),
        )
    )
    # the canonical JSON parses back to an equal spec with the same hash
    again = JobSpec.model_validate_json(spec.canonical_json())
    assert again == spec and again.spec_hash() == spec.spec_hash()
    for field, value in [
        ("seed", (seed + 1) % 2**64),
        ("batch_size", batch + 1),
        ("model_id", model_id + "!"),
    ]:
        assert spec.model_copy(update={field: value}).spec_hash() != spec.spec_hash()


def test_data_uri_round_trip():
    uri = BASE.to_data_uri()
    assert uri.startswith("data:application/json;base64,")
    assert base64.b64decode(uri.split(",", 1)[1]) == BASE.canonical_json()
    assert load_spec(uri, BASE.spec_hash()) == BASE


def test_load_spec_rejects_wrong_hash():
    with pytest.raises(SpecHashMismatch):
        load_spec(BASE.to_data_uri(), b"\x00" * 32)


def test_load_spec_file_uri(tmp_path):
    p = tmp_path / "spec.json"
    p.write_bytes(BASE.canonical_json())
    assert load_spec(p.as_uri(), BASE.spec_hash()) == BASE
    with pytest.raises(SpecUnavailable):
        load_spec((tmp_path / "missing.json").as_uri(), BASE.spec_hash())
    with pytest.raises(SpecUnavailable):
        load_spec("ftp://x/spec.json", BASE.spec_hash())


def test_load_spec_valid_hash_but_not_a_spec():
    raw = b'{"hello": 1}'
    uri = "data:application/json;base64," + base64.b64encode(raw).decode()
    with pytest.raises(SpecError):
        load_spec(uri, keccak256(raw))


def retired_repro_spec_bytes() -> bytes:
    """Canonical bytes of a spec in the retired arithmetic "repro" (as posted before repro2)."""
    obj = json.loads(BASE.model_copy(update={"profile": ExecutionProfile.repro()}).canonical_json())
    obj["profile"]["arith"] = "repro"
    return json.dumps(obj, sort_keys=True, separators=(",", ":")).encode()


def test_load_spec_refuses_the_retired_repro_arithmetic_in_one_line():
    """A job posted in the first repro arithmetic (its sqrt depended on the CPU vendor) is
    refused by name with one line that says what to post instead; an unknown name is not."""
    raw = retired_repro_spec_bytes()
    uri = "data:application/json;base64," + base64.b64encode(raw).decode()
    with pytest.raises(RetiredArithmetic) as info:
        load_spec(uri, keccak256(raw))
    message = str(info.value)
    assert "\n" not in message
    assert message == (
        "arith 'repro' cannot be replayed exactly on other machines: its square root (AdamW, "
        "layer_norm, clip_grad_norm_, normal_) was not correctly rounded, so its state hashes "
        "depend on the CPU vendor; post the job again with arith 'repro2'"
    )
    with pytest.raises(RetiredArithmetic):
        check_arith("repro")
    assert check_arith(REPRO_ARITH) == "repro2" and ARITHS == ("native", REPRO_ARITH)
    unknown = raw.replace(b'"arith":"repro"', b'"arith":"repro9"')
    uri = "data:application/json;base64," + base64.b64encode(unknown).decode()
    with pytest.raises(SpecError, match="unknown arithmetic 'repro9'") as other:
        load_spec(uri, keccak256(unknown))
    assert not isinstance(other.value, RetiredArithmetic)


def test_interval_must_divide_total():
    with pytest.raises(ValueError):
        default_digits_spec(total_steps=100, checkpoint_interval=30)


def test_spec_is_frozen():
    with pytest.raises(ValueError):
        BASE.seed = 3  # type: ignore[misc]


def test_model_id_hash():
    assert model_id_hash("digits-mlp") == keccak256(b"digits-mlp")
    assert BASE.model_id_hash() == model_id_hash(BASE.model_id)


def test_import_veritrain_is_light(repo_root):
    import subprocess
    import sys

    code = "import sys, veritrain; print('torch' in sys.modules, veritrain.TrainingEngine.__name__)"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=repo_root
    )
    assert out.stdout.split() == ["False", "TrainingEngine"]
