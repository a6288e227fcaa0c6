"""Shared fixtures of the unit tests (no network, no GPU): a small spec, its engine, honest runs."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from veritrain.merkle import MerkleTree, checkpoint_tree
from veritrain.spec import JobSpec, default_digits_spec
from veritrain.state import state_hash
from veritrain.training import TrainingEngine

REPO_ROOT = Path(__file__).resolve().parents[2]


@dataclass
class Run:
    """An honest solver's output: checkpoint bytes at steps 0, k, ..., N and their tree."""

    spec: JobSpec
    blobs: list[bytes]
    hashes: list[bytes]
    tree: MerkleTree


@pytest.fixture(scope="session")
def small_spec() -> JobSpec:
    return default_digits_spec(seed=7, total_steps=40, checkpoint_interval=10)


@pytest.fixture(scope="session")
def engine(small_spec: JobSpec) -> TrainingEngine:
    return TrainingEngine(small_spec)


def train_with_checkpoints(engine: TrainingEngine, cheat=None) -> Run:
    """Train `engine.spec`, snapshotting every k steps; `cheat(state)` replaces a step if it
    returns True."""
    spec = engine.spec
    state = engine.init_state()
    blobs = [engine.state_bytes(state)]
    while state.step < spec.total_steps:
        if cheat is None or not cheat(state):
            engine.train_step(state)
        if state.step % spec.checkpoint_interval == 0:
            blobs.append(engine.state_bytes(state))
    hashes = [state_hash(b) for b in blobs]
    return Run(spec, blobs, hashes, checkpoint_tree(hashes, spec.checkpoint_interval))


@pytest.fixture(scope="session")
def honest_run(engine: TrainingEngine) -> Run:
    return train_with_checkpoints(engine)


@pytest.fixture(scope="session")
def train_run():
    """The `train_with_checkpoints` helper, as a fixture (test modules can't import conftest)."""
    return train_with_checkpoints


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return REPO_ROOT
