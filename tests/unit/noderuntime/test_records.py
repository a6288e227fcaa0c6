"""`noderuntime.records`: typed records persisted atomically, bytes in memory and 0x-hex on disk,
rolled back on error, refused when corrupt (they replace the core's untyped JsonState)."""

from __future__ import annotations

import json

import pytest
from pydantic import ValidationError

from noderuntime.records import (
    GameMove,
    GameRecord,
    Phase,
    RecordStore,
    SolverJob,
    SolverRecords,
    VerifierRecords,
    Vote,
)
from veritrain.errors import NodeStateError

H = bytes(range(32))


def _job() -> SolverJob:
    return SolverJob(
        phase=Phase.TRAINING, spec_uri="data:,{}", spec_hash=H, total_steps=40, interval=10
    )


def test_records_persist_and_resume(tmp_path):
    path = tmp_path / "node" / "state.json"
    st = RecordStore(path, SolverRecords)
    assert not path.exists() and st.read().jobs == {}
    with st.transaction() as records:
        records.jobs[1] = _job()
        records.skip.append(3)
    with st.transaction() as records:
        records.jobs[1].phase = Phase.TRAINED
        records.jobs[1].hashes.append(H)
    again = RecordStore(path, SolverRecords)
    rec = again.read().jobs[1]
    assert rec.phase == Phase.TRAINED and rec.hashes == [H] and again.read().skip == [3]
    on_disk = json.loads(path.read_text())
    assert on_disk["jobs"]["1"]["spec_hash"] == "0x" + H.hex()  # 0x-hex on disk
    assert on_disk["jobs"]["1"]["hashes"] == ["0x" + H.hex()]
    assert isinstance(rec.spec_hash, bytes)  # bytes in memory


def test_read_is_a_copy(tmp_path):
    st = RecordStore(tmp_path / "s.json", SolverRecords)
    st.read().skip.append(1)
    assert st.read().skip == []


def test_records_rollback(tmp_path):
    st = RecordStore(tmp_path / "s.json", VerifierRecords)
    with pytest.raises(RuntimeError), st.transaction() as records:
        records.done_jobs.append(2)
        raise RuntimeError
    assert st.read().done_jobs == [] and not (tmp_path / "s.json").exists()
    with pytest.raises(ValidationError), st.transaction() as records:
        records.votes[1] = Vote(valid=True, salt=H)
        records.votes[1].salt = b"short"  # not 32 bytes: refused on assignment
    assert st.read().votes == {}
    assert list(tmp_path.iterdir()) == []


def test_games_record_moves(tmp_path):
    st = RecordStore(tmp_path / "s.json", SolverRecords)
    with st.transaction() as records:
        game = records.games.setdefault(4, GameRecord(job_id=1, segment=2))
        game.moves.append(GameMove(kind="bisect", lo=20, hi=30, steps=[21, 22], hashes=[H, H]))
    moves = RecordStore(tmp_path / "s.json", SolverRecords).read().games[4].moves
    assert moves[0].hashes == [H, H] and moves[0].steps == [21, 22] and moves[0].index is None


def test_binary_game_moves_load_as_one_point_dissections() -> None:
    """A record written by the binary game keeps its meaning: agree was part 1, [mid, hi]."""
    old = {"kind": "respond", "lo": 20, "hi": 30, "step": 25, "hash": "0x" + "ab" * 32}
    agreed = GameMove.model_validate({**old, "agree": True})
    assert (agreed.steps, agreed.hashes, agreed.index) == ([25], [b"\xab" * 32], 1)
    assert GameMove.model_validate({**old, "agree": False}).index == 0
    assert GameMove.model_validate({**old, "kind": "bisect", "agree": None}).index is None


def test_records_corrupt_file(tmp_path):
    p = tmp_path / "s.json"
    p.write_text("[1, 2]")
    with pytest.raises(NodeStateError):
        RecordStore(p, SolverRecords)
    p.write_text("{not json")
    with pytest.raises(NodeStateError):
        RecordStore(p, SolverRecords)
