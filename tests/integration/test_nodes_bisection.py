"""Nodes on a real Anvil playing the n-way dissection game (docs/DISPUTES.md) end to end.

The protocol is deployed with `adjudicator="bisection"`; every segment is sampled (q = 4) so
the cheat (segments 2 and 3) is always audited. Scenarios: a cheating solver caught through
bisection and the one-step committee; a griefing challenger (`reject_all`) that loses its bond
and stake; a challenger that stops moving loses on its clock; the first challenger offline and
the next rejecter winning its own game (P-5); a defender that withholds its states from the
challengers alone, beaten by escalation (P-6); every node restarted mid-game finishes it.
Run: ``.venv/bin/python -m pytest tests/integration/test_nodes_bisection.py -m anvil``.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from adversary.solver import solver_node
from adversary.verifier import verifier_node
from chain import Anvil
from solver.node import SolverNode
from tests.utils.node_harness import (
    FAST_PARAMS,
    SOLVER,
    V1,
    V2,
    V3,
    WHISTLEBLOWER,
    Network,
    bisection_params,
    free_port,
    open_network,
    tiny_spec,
)
from verifier.node import VerifierNode
from veritrain.bisection import GameView
from veritrain.enums import GameStatus, JobStatus, Role, Side, Verdict
from veritrain.errors import CheckpointUnavailable
from whistleblower.node import WhistleblowerNode

pytestmark = [pytest.mark.anvil, pytest.mark.slow, pytest.mark.timeout(500)]


@pytest.fixture
def net(anvil: Anvil, contracts_out: Path, tmp_path: Path) -> Iterator[Network]:
    params = bisection_params(FAST_PARAMS.model_copy(update={"samples_per_job": 4}))
    yield from open_network(anvil, tmp_path, params)


def _verifier(net: Network, i: int, **kw) -> VerifierNode:
    return verifier_node(net.client(i), net.tmp / f"v{i}", poll_interval=0.5, **kw)


def _solver(net: Network, port: int, adversary: str | None) -> SolverNode:
    return solver_node(
        net.client(SOLVER), net.tmp / "solver", "127.0.0.1", port, mode=adversary, poll_interval=0.5
    )


def _game(net: Network, job_id: int) -> GameView | None:
    reader = net.client(0)
    dispute_id = int(reader.jobs.get_job(job_id).dispute_id)
    return reader.game.get_game(dispute_id) if dispute_id else None


def _start(net: Network, adversary: str | None, griefer: bool = False) -> tuple[int, list]:
    nodes = [_verifier(net, i, reject_all=griefer and i == V1) for i in (V1, V2, V3)]
    nodes.append(WhistleblowerNode(net.client(WHISTLEBLOWER), net.tmp / "wb", poll_interval=0.5))
    for node in nodes:
        net.start(node)
    net.wait_active(int(Role.Verifier), V1, V2, V3)
    job_id = net.post_job(tiny_spec(seed=31))
    solver = _solver(net, free_port(), adversary)
    net.start(solver)
    return job_id, [*nodes, solver]


def test_cheating_solver_is_caught_through_bisection(net: Network) -> None:
    job_id, _ = _start(net, "skip-steps")
    end = net.wait_status(job_id, JobStatus.Finalized, JobStatus.Rejected, timeout=400)
    assert end is JobStatus.Rejected
    game = _game(net, job_id)
    assert game is not None and game.status is GameStatus.ChallengerWon
    assert game.hi - game.lo == 1 and game.lo == game.segment * 10 + 1  # first skipped step
    reader = net.client(0)
    solver = net.client(SOLVER).address
    assert reader.stakes.stake_of(solver, Role.Solver).staked == 3 * net.params.solver_stake


def test_griefing_challenger_loses_its_bond(net: Network) -> None:
    job_id, _ = _start(net, None, griefer=True)
    assert net.wait_status(job_id, JobStatus.Finalized, timeout=400) is JobStatus.Finalized
    game = _game(net, job_id)
    assert game is not None and game.status is GameStatus.DefenderWon
    assert game.challenger.lower() == net.client(V1).address.lower()
    # The griefer lost its locked verifier stake and the reject bond of each sample it rejected
    # (locked from that stake; it lost the game of each), read from the StakeSlashed events
    # since the node then tops its stake back up to the role's minimum from its balance.
    griefer = net.client(V1).address
    verdicts = net.client(0).jobs.verdicts_of(job_id, griefer)
    rejects = sum(1 for v in verdicts if v in (Verdict.Reject, Verdict.Abstain))
    assert rejects > 0
    assert net.slashed(griefer, Role.Verifier) == (
        net.params.verifier_stake + rejects * net.params.challenge_bond
    )


def test_challenger_that_stops_moving_loses_on_its_clock(net: Network) -> None:
    job_id, nodes = _start(net, None, griefer=True)
    griefer = nodes[0]
    reader = net.client(0)
    net.wait_for("the griefer's rejects", lambda: griefer._job_rec(job_id).submitted)
    net.stop(griefer)  # it never plays its games (one per segment it rejected)
    lost: set[int] = set()

    def finalized() -> bool:
        # Each game's clock would run out in real time (clock_seconds per game); once a game
        # awaits the griefer's move, the chain's time jumps past its clock instead. Only the
        # side to move is charged, so the honest defender loses no time by it.
        game = _game(net, job_id)
        if game is not None and game.turn is Side.Challenger and game.dispute_id not in lost:
            lost.add(game.dispute_id)
            net.anvil.increase_time(net.params.clock_seconds + 1)
        return reader.jobs.get_job(job_id).status is JobStatus.Finalized

    net.wait_for("the job finalized", finalized, timeout=400)
    assert lost, "no game ever awaited the griefer"
    for dispute_id in lost:
        game = reader.game.get_game(dispute_id)
        assert game.status is GameStatus.DefenderWon
        assert game.step_dispute_id == 0  # decided by the clock, not by a step committee
        assert game.challenger.lower() == net.client(V1).address.lower()


def test_first_challenger_goes_offline_and_the_next_rejecter_wins(net: Network) -> None:
    """P-5: the first rejecter's game is lost on its clock (an accomplice, or honest but
    offline); only it pays, the next rejecter plays its own game and the cheat is caught.
    Before the fix every rejecter was slashed with the first and the cheating solver was paid."""
    job_id, nodes = _start(net, "skip-steps")
    for node in nodes[:3]:
        net.wait_for("every verdict revealed", lambda n=node: n._job_rec(job_id).submitted)
    for node in nodes[:3]:
        net.stop(node)  # all offline when the first game opens
    net.wait_for("the first game", lambda: _game(net, job_id) is not None, timeout=300)
    first = _game(net, job_id)
    assert first is not None
    # the others come back; the first challenger never moves in its game
    for i in (V1, V2, V3):
        if net.client(i).address.lower() != first.challenger.lower():
            net.start(_verifier(net, i))
    net.wait_for(
        "the next challenger's game",
        lambda: (g := _game(net, job_id)) is not None and g.dispute_id != first.dispute_id,
        timeout=400,
    )
    assert net.wait_status(job_id, JobStatus.Rejected, JobStatus.Finalized, timeout=400) is (
        JobStatus.Rejected
    )
    reader = net.client(0)
    lost = reader.game.get_game(first.dispute_id)
    assert lost.status is GameStatus.DefenderWon
    won = _game(net, job_id)
    assert won is not None and won.status is GameStatus.ChallengerWon
    assert won.challenger.lower() != first.challenger.lower()
    # the offline challenger alone paid for its game (its stake and its reject bond, both from
    # its verifier stake); the winner kept its stake
    assert net.slashed(first.challenger, Role.Verifier) == (
        net.params.verifier_stake + net.params.challenge_bond
    )
    assert net.slashed(won.challenger, Role.Verifier) == 0
    solver = net.client(SOLVER).address
    assert net.slashed(solver, Role.Solver) == net.params.solver_stake


class _WithheldFrom(VerifierNode):
    """A verifier the defender withholds its states from (selective withholding): it cannot
    build a segment's trajectory to play its game on. Its verdict replays and committee votes
    fetch the solver's checkpoints as usual."""

    def segment_trajectory(self, job, segment):  # type: ignore[no-untyped-def]
        raise CheckpointUnavailable("the defender serves its states to everyone but this node")


def test_defender_withholding_from_its_challenger_loses_by_escalation(net: Network) -> None:
    """P-6: the cheater's first bad step is inside segment 2, after an honest first step. Its
    challenger gets none of its states: it escalates the whole segment to the step committee,
    which fetches the checkpoint itself and replays all k steps. Before, the challenger disputed
    every first part, the game narrowed to the honest first step and the cheater won."""
    nodes = [
        _WithheldFrom(net.client(i), net.tmp / f"v{i}", poll_interval=0.5) for i in (V1, V2, V3)
    ]
    for node in nodes:
        net.start(node)
    net.wait_active(int(Role.Verifier), V1, V2, V3)
    job_id = net.post_job(tiny_spec(seed=31))
    net.start(_solver(net, free_port(), "skip-steps"))
    assert net.wait_status(job_id, JobStatus.Finalized, JobStatus.Rejected, timeout=450) is (
        JobStatus.Rejected
    )
    game = _game(net, job_id)
    assert game is not None and game.status is GameStatus.ChallengerWon
    claim = net.client(0).committee.step_claim_of(int(game.step_dispute_id))
    assert claim.is_step and claim.steps == game.hi - game.lo > 1  # escalated, not narrowed
    assert net.slashed(net.client(SOLVER).address, Role.Solver) == net.params.solver_stake
    assert net.slashed(game.challenger, Role.Verifier) == 0


def test_all_nodes_restarted_mid_dispute_finish_the_game(net: Network) -> None:
    job_id, nodes = _start(net, "skip-steps")
    net.wait_for(
        "the game under way",
        lambda: (
            (g := _game(net, job_id)) is not None
            # endpoints posted; with k = 10 and arity 8 the first response may already end it
            and g.status in (GameStatus.AwaitingBisection, GameStatus.AwaitingResponse)
        ),
        timeout=300,
    )
    port = nodes[-1].port
    for node in nodes:
        net.stop(node)
    for i in (V1, V2, V3):
        net.start(_verifier(net, i))
    net.start(WhistleblowerNode(net.client(WHISTLEBLOWER), net.tmp / "wb", poll_interval=0.5))
    net.start(_solver(net, port, "skip-steps"))
    end = net.wait_status(job_id, JobStatus.Finalized, JobStatus.Rejected, timeout=400)
    assert end is JobStatus.Rejected
    game = _game(net, job_id)
    assert game is not None and game.status is GameStatus.ChallengerWon


def test_solver_serving_corrupt_bytes_loses_by_escalation(net: Network) -> None:
    """N-24: the solver trains and commits honestly but serves, from segment 2 on, bytes that do
    not hash to its commitment, to everyone. The verifiers reject (no usable data); in the game
    its challenger cannot compute a response from such bytes and escalates (before: it kept
    failing on the hash mismatch and lost on its clock, 6 games in a row, and the cheater was
    paid); the step committee cannot fetch usable bytes either and votes the claim wrong. Every
    honest verifier keeps its stake, the solver is slashed."""
    verifiers = [net.client(i).address for i in (V1, V2, V3)]
    before = {a: net.holdings(a) for a in verifiers}
    job_id, _nodes = _start(net, "corrupt-serve")
    assert net.wait_status(job_id, JobStatus.Finalized, JobStatus.Rejected, timeout=450) is (
        JobStatus.Rejected
    )
    game = _game(net, job_id)
    assert game is not None and game.status is GameStatus.ChallengerWon
    claim = net.client(0).committee.step_claim_of(int(game.step_dispute_id))
    assert claim.is_step and claim.steps == game.hi - game.lo > 1  # escalated, not timed out
    assert net.slashed(net.client(SOLVER).address, Role.Solver) == net.params.solver_stake
    for address in verifiers:
        assert net.slashed(address, Role.Verifier) == 0
        assert net.holdings(address) >= before[address]  # fees earned, nothing lost
