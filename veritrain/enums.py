"""The Solidity enums of the protocol, mirrored once for every Python layer.

Pure Python (no RPC): the chain bindings decode contract values into these, the core's game
logic and the nodes compare them. Values are the Solidity ordinals.

Run: not a script; ``from veritrain.enums import JobStatus``.
"""

from __future__ import annotations

from enum import IntEnum

__all__ = [
    "Bucket",
    "DisputePhase",
    "DisputeStatus",
    "GameStatus",
    "JobStatus",
    "Role",
    "RoundOutcome",
    "RunRoundPhase",
    "Side",
    "Verdict",
]


class Role(IntEnum):
    """``StakeManager.Role``."""

    Solver = 0
    Verifier = 1
    Whistleblower = 2


class JobStatus(IntEnum):
    """``JobManager.JobStatus``."""

    None_ = 0
    Open = 1
    Claimed = 2
    Committed = 3
    Verifying = 4
    Disputed = 5
    Finalized = 6
    Rejected = 7
    Cancelled = 8
    Expired = 9


class Verdict(IntEnum):
    """``JobManager.Verdict``."""

    None_ = 0
    Approve = 1
    Reject = 2
    Abstain = 3
    """Sealed a zero end: could not obtain the data (docs/SECURITY.md P-20)."""


class DisputeStatus(IntEnum):
    """``DisputeStatus`` (contracts/src/types/DisputeTypes.sol)."""

    None_ = 0
    AwaitingCommittee = 1
    Voting = 2
    Resolved = 3


class DisputePhase(IntEnum):
    """``DisputePhase`` (contracts/src/types/DisputeTypes.sol): the phase derived from time."""

    None_ = 0
    AwaitingCommittee = 1
    Commit = 2
    Reveal = 3
    Resolvable = 4
    Resolved = 5


class GameStatus(IntEnum):
    """``GameStatus`` of the bisection game (contracts/src/types/BisectionTypes.sol)."""

    None_ = 0
    AwaitingEndpoints = 1
    AwaitingBisection = 2
    AwaitingResponse = 3
    AwaitingStep = 4
    DefenderWon = 5
    ChallengerWon = 6


class Side(IntEnum):
    """``Side`` of a bisection game: who is to move (None_ while the step is adjudicated)."""

    None_ = 0
    Defender = 1
    Challenger = 2


class RoundOutcome(IntEnum):
    """``RoundOutcome`` of a job's verification round (contracts/src/types/RoundTypes.sol;
    docs/FORCED_ERRORS.md section 3)."""

    Pending = 0
    Clean = 1
    Forced = 2
    NoClaims = 3
    NoReveal = 4
    NoVerdicts = 5


class Bucket(IntEnum):
    """``Bucket`` of the Escrow's balance sheet (contracts/src/types/EscrowTypes.sol)."""

    Unbooked = 0
    Escrowed = 1
    Bonds = 2
    Jackpot = 3
    Pot = 4


class RunRoundPhase(IntEnum):
    """Phase of one round of a training run (`RunRegistry`, docs/RUNS.md)."""

    None_ = 0
    Open = 1
    Proposed = 2
    Disputed = 3
    Final = 4
