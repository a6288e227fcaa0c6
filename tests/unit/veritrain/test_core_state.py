"""Canonical checkpoint encoding, state hash, cross-process determinism."""

from __future__ import annotations

import os
import struct
import subprocess
import sys
from collections import OrderedDict

import pytest
import torch

from veritrain.errors import CheckpointFormatError, CheckpointHashMismatch
from veritrain.state import (
    MAGIC,
    StateBuffer,
    decode_state,
    encode_state,
    encode_state_buffer,
    state_hash,
    verify_state_hash,
)

_CHILD = """
import sys
from veritrain.spec import default_digits_spec
from veritrain.training import TrainingEngine
engine = TrainingEngine(default_digits_spec(seed=11, total_steps=30, checkpoint_interval=10))
state = engine.init_state()
engine.run(state, 30)
sys.stdout.write(engine.state_hash(state).hex())
"""


def _tensors():
    g = torch.Generator().manual_seed(0)
    return OrderedDict(
        [
            ("w", torch.randn(3, 4, generator=g)),
            ("b", torch.randn(4, generator=g, dtype=torch.float64)),
            ("s", torch.tensor(5.0)),
            ("i", torch.arange(6, dtype=torch.int64).reshape(2, 3)),
            ("empty", torch.zeros(0, 3)),
        ]
    )


def test_round_trip():
    tensors = _tensors()
    blob = encode_state(17, tensors)
    assert blob.startswith(MAGIC)
    step, out = decode_state(blob)
    assert step == 17 and list(out) == list(tensors)
    for name, t in tensors.items():
        assert out[name].dtype == t.dtype and out[name].shape == t.shape
        assert torch.equal(out[name], t)
    assert encode_state(step, out) == blob  # canonical: decode/encode is the identity


def test_the_single_copy_buffer_is_the_canonical_bytes_and_owns_its_data():
    tensors = _tensors()
    tensors["flags"] = torch.tensor([True, False, True])
    tensors["small"] = torch.arange(5, dtype=torch.int8)
    tensors["half"] = torch.linspace(0, 1, 7, dtype=torch.float16)
    tensors["strided"] = torch.randn(4, 6).t()  # not contiguous: laid out row-major anyway
    expected = b"".join(  # the layout written out by hand, tensor by tensor
        t.contiguous().numpy().tobytes() for t in tensors.values()
    )
    buffer = encode_state_buffer(9, tensors)
    assert isinstance(buffer, bytearray) and bytes(buffer) == encode_state(9, tensors)
    assert bytes(buffer).endswith(expected)
    digest = state_hash(buffer)
    tensors["w"].add_(1.0)  # training goes on in place: the checkpoint does not move
    assert state_hash(buffer) == digest and decode_state(bytes(buffer))[0] == 9


def test_the_reused_buffer_gives_the_canonical_bytes_at_every_step_and_layout():
    """`StateBuffer` keeps the tensor data in place and writes the header before it: the
    header's length changes with the step's digits and the layout with the tensors (state 0
    has no optimizer moments yet), and the bytes are `encode_state`'s every time."""
    tensors = _tensors()
    tensors["flags"] = torch.tensor([True, False, True])
    tensors["small"] = torch.arange(5, dtype=torch.int8)
    tensors["half"] = torch.linspace(0, 1, 7, dtype=torch.float16)  # odd sizes: unaligned
    tensors["strided"] = torch.randn(4, 6).t()
    fewer = OrderedDict(list(tensors.items())[:2])
    buf = StateBuffer()
    cases = [(0, fewer), (7, tensors), (25, tensors), (300, tensors), (0, tensors)]
    cases += [(2**64 - 1, tensors), (12, fewer), (10**12, tensors)]
    for step, ts in cases:
        blob = buf.encode(step, ts)
        expected = encode_state(step, ts)
        assert bytes(blob) == expected, step
        assert blob.readonly
        tensors["w"].add_(1.0)  # training moves on in place: the bytes already made do not
        assert bytes(blob) == expected
    assert bytes(buf.encode(3, list(tensors.items()))) == encode_state(3, tensors)  # pairs too


def test_the_reused_buffer_refuses_what_encode_state_refuses():
    buf = StateBuffer()
    with pytest.raises(CheckpointFormatError, match="duplicate tensor name 'w'"):
        buf.encode(1, [("w", torch.zeros(2)), ("w", torch.ones(2))])
    with pytest.raises(CheckpointFormatError, match="uint64"):
        buf.encode(-1, _tensors())
    with pytest.raises(CheckpointFormatError, match="unsupported tensor dtype"):
        buf.encode(1, {"c": torch.zeros(2, dtype=torch.complex64)})


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_the_reused_buffer_copies_device_tensors_straight_from_the_device():
    tensors = _tensors()
    tensors["h"] = torch.randn(5, 7, dtype=torch.float16)
    on_device = OrderedDict((name, t.cuda()) for name, t in tensors.items())
    buf = StateBuffer()
    assert bytes(buf.encode(4, on_device)) == encode_state(4, tensors)
    on_device["w"].add_(1.0)
    assert bytes(buf.encode(5, on_device)) == encode_state(5, {**tensors, "w": tensors["w"] + 1.0})


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_device_tensors_encode_to_the_bytes_of_their_host_copies():
    tensors = _tensors()
    tensors["h"] = torch.randn(5, 7, dtype=torch.float16)  # odd sizes: unaligned offsets
    tensors["flags"] = torch.tensor([True, False, True])
    tensors["k"] = torch.arange(-3, 4, dtype=torch.int8)
    tensors["strided"] = torch.randn(4, 6).t()  # not contiguous: laid out row-major anyway
    on_device = OrderedDict((name, t.cuda()) for name, t in tensors.items())
    buffer = encode_state_buffer(4, on_device)  # all on the GPU: one gathered transfer
    assert bytes(buffer) == encode_state(4, tensors)
    on_device["w"].add_(1.0)  # the device copy moves on; the checkpoint does not
    assert bytes(buffer) == encode_state(4, tensors)
    mixed = OrderedDict(on_device, i=tensors["i"])  # host and device tensors: one copy each
    assert bytes(encode_state_buffer(4, mixed)) == encode_state(
        4, {**tensors, "w": tensors["w"] + 1.0}
    )


@pytest.mark.parametrize(
    ("length", "digest"),
    [  # the BLAKE3 team's test vectors (test_vectors.json: input bytes 0, 1, ..., 250, 0, ...)
        (0, "af1349b9f5f9a1a6a0404dea36dcc9499bcb25c9adc112b7cc9a93cae41f3262"),
        (1025, "d00278ae47eb27b34faecf67b4fe263f82d5412916c1ffd97c8cb7fb814b8444"),
        (7169, "a003fc7a51754a9b3c7fae0367ab3d782dccf28855a03d435f8cfe74605e7817"),
    ],
)
def test_the_state_hash_is_blake3_by_its_published_vectors(length: int, digest: str):
    blob = bytes(i % 251 for i in range(length))
    assert state_hash(blob).hex() == digest == state_hash(bytearray(blob)).hex()


def test_encoding_is_little_endian_raw_bytes():
    blob = encode_state(0, {"x": torch.tensor([1.0, 2.0])})
    assert blob.endswith(struct.pack("<2f", 1.0, 2.0))


def test_hash_changes_with_any_bit():
    blob = encode_state(1, _tensors())
    flipped = bytearray(blob)
    flipped[-1] ^= 1
    assert state_hash(bytes(flipped)) != state_hash(blob)
    with pytest.raises(CheckpointHashMismatch):
        verify_state_hash(bytes(flipped), state_hash(blob))
    verify_state_hash(blob, state_hash(blob))


@pytest.mark.parametrize(
    "mutate",
    [
        lambda b: b[:-1],  # truncated
        lambda b: b + b"\x00",  # trailing byte
        lambda b: b"VTCK\x02" + b[5:],  # wrong version
        lambda b: b[:5] + struct.pack("<I", 2**30) + b[9:],  # header length too big
        lambda b: b[:9] + b" " + b[9:],  # header not canonical / length off
    ],
)
def test_corrupt_checkpoint_rejected(mutate):
    blob = encode_state(3, _tensors())
    with pytest.raises(CheckpointFormatError):
        decode_state(mutate(blob))


def test_non_canonical_header_rejected():
    blob = encode_state(3, {"x": torch.zeros(2)})
    (hlen,) = struct.unpack("<I", blob[5:9])
    header = blob[9 : 9 + hlen].replace(b'{"step"', b'{ "step"')
    bad = blob[:5] + struct.pack("<I", len(header)) + header + blob[9 + hlen :]
    with pytest.raises(CheckpointFormatError):
        decode_state(bad)


def test_engine_round_trip(engine, honest_run):
    for blob in honest_run.blobs:
        state = engine.load_state(blob)
        assert engine.state_bytes(state) == blob
    with pytest.raises(CheckpointFormatError):
        engine.load_state(encode_state(0, {"w": torch.zeros(2)}))


def test_state_hash_deterministic_across_fresh_processes(repo_root):
    path = os.pathsep.join(p for p in (str(repo_root), os.environ.get("PYTHONPATH")) if p)
    env = {**os.environ, "PYTHONPATH": path}
    procs = [  # two fresh interpreters, run concurrently
        subprocess.Popen(
            [sys.executable, "-c", _CHILD],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=repo_root,
            env=env,
        )
        for _ in range(2)
    ]
    hashes = []
    for proc in procs:
        out, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err
        hashes.append(out.strip())
    assert len(hashes[0]) == 64 and hashes[0] == hashes[1]
    # and equal to this process's own run
    from veritrain.spec import default_digits_spec
    from veritrain.training import TrainingEngine

    engine = TrainingEngine(default_digits_spec(seed=11, total_steps=30, checkpoint_interval=10))
    state = engine.init_state()
    engine.run(state, 30)
    assert engine.state_hash(state).hex() == hashes[0]


@pytest.mark.parametrize("arith", ["native", "repro2"])
@pytest.mark.parametrize("name", ["digits-mlp", "shakespeare-char"])
def test_max_state_bytes_is_the_largest_state_a_spec_can_have(name: str, arith: str) -> None:
    """What a reader accepts from a solver's server at most (`CheckpointClient(max_bytes=)`):
    never less than an honest state at any step, so the cap never refuses one. (A first
    version took state 0's size, which has no optimizer moments yet: a third of a trained
    state's, so every honest checkpoint after step 0 would have been refused.)"""
    from veritrain.presets import preset
    from veritrain.state import encode_state
    from veritrain.training import TrainingEngine

    engine = TrainingEngine(preset(name, arith, total_steps=4, checkpoint_interval=2))
    state = engine.init_state()
    cap = engine.max_state_bytes()
    assert len(engine.state_bytes(state)) < cap
    for _ in range(3):
        engine.train_step(state)
        assert len(engine.state_bytes(state)) <= cap
    assert cap == len(encode_state(2**64 - 1, engine.state_tensors(state)))
