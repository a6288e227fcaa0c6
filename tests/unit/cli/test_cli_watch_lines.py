"""`job watch`'s line for the two events that carry per-sample masks: the draw's
`VerifiersAssigned` (each seat with the samples of its own draw, in seat order) and a seat's
`VerdictsRevealed` (one verdict per sample, unpacked from the approve mask, one per end)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from cli import watch as cli_watch

A = "0x" + "a1" * 20
B = "0x" + "b2" * 20


def _event(name: str, **args: object) -> SimpleNamespace:
    return SimpleNamespace(event=name, args=args)


def test_verifiers_assigned_names_each_seat_with_its_own_samples() -> None:
    line = cli_watch._event_text(
        _event(
            "VerifiersAssigned",
            jobId=1,
            verifiers=[A, B],
            sampleMasks=[0b011, 0b110],
            segments=[0, 4, 7],
            verdictDeadline=0,
            challengeDeadline=0,
        )
    )
    assert line.index(A) < line.index(B)
    assert f"{A} judges samples [0, 1]" in line and f"{B} judges samples [1, 2]" in line
    assert "sampled segments [0, 4, 7]" in line


def test_verifiers_assigned_with_a_mask_missing_is_refused() -> None:
    """One mask per seat: an event that is short of one is not printed as if it were whole."""
    with pytest.raises(ValueError):
        cli_watch._event_text(
            _event(
                "VerifiersAssigned",
                jobId=1,
                verifiers=[A, B],
                sampleMasks=[1],
                segments=[0],
                verdictDeadline=0,
                challengeDeadline=0,
            )
        )


def test_verdicts_revealed_lists_one_verdict_per_sample_from_the_mask() -> None:
    sid = b"\x00" * 32
    line = cli_watch._event_text(
        _event(
            "VerdictsRevealed",
            submissionId=sid,
            verifier=A,
            ends=[b"\x01" * 32] * 3,
            approveMask=0b01,
        )
    )
    assert line == f"verdict revealed by {A}: 0: approve, 1: reject, 2: reject"
