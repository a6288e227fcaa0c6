"""The index without a chain: migrations, the binding refusal, events derived into tables (and
again after a rollback), the dashboard's pages and JSON over them, the SVG charts. The tests
that touch a database run on SQLite and on a throwaway PostgreSQL server (`postgres_server`
in tests/conftest.py), and both must answer the dashboard's requests identically."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import delete, select

from dashboard.app import create_app
from dashboard.svg import line_plot, ownership_bars
from indexer import Binding, Index, IndexError_, IndexMismatch
from indexer.derive import apply, model_name_of_spec, rederive
from indexer.models import Earning, Event, Job, Model, ShareBalance, Stake
from veritrain.spec import model_id_hash

if TYPE_CHECKING:
    from tests.utils.postgres import PostgresServer

A = "0x" + "11" * 20
B = "0x" + "22" * 20
ZERO = "0x" + "00" * 20
MODEL = "0x" + model_id_hash("digits-mlp").hex()
TOKEN = "0x" + "33" * 20
H = "0x" + "ab" * 32
BINDING = Binding(31337, {"job_manager": "0x" + "44" * 20}, 5, "0x" + "55" * 32)


@pytest.fixture(params=["sqlite", "postgresql"])
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A fresh empty database's URL: a SQLite file, or a new database on the session's
    throwaway PostgreSQL server."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'i.sqlite'}"
    server: PostgresServer = request.getfixturevalue("postgres_server")
    return server.new_database()


@pytest.fixture
def index(db_url: str) -> Iterator[Index]:
    idx = Index.open(db_url, BINDING)
    yield idx
    idx.close()


def _add(
    index: Index, block: int, contract: str, name: str, args: dict[str, Any], **kw: Any
) -> None:
    with index.session() as s:
        ev = Event(
            block=block,
            log_index=kw.pop("log_index", 0),
            tx_hash=H,
            contract=contract,
            address=kw.pop("address", "0x" + "44" * 20),
            name=name,
            args=args,
            extra=kw.pop("extra", {}),
            timestamp=1_000 + block,
        )
        s.add(ev)
        s.flush()
        apply(s, ev)


def _history(index: Index) -> None:
    _add(index, 6, "ShareRegistry", "ModelRegistered", {
        "modelId": MODEL, "owner": A, "architecture": H, "family": H,
        "computePerStep": 7, "seedState": H,
    })  # fmt: skip
    _add(index, 7, "JobManager", "JobPosted", {
        "jobId": 1, "submitter": A, "modelId": MODEL, "specHash": H, "totalSteps": 40,
        "initHash": H, "checkpointInterval": 10, "reward": 10**19, "escrow": 2 * 10**19,
        "specURI": "data:,{}",
    }, extra={"open_deadline": 99})  # fmt: skip
    _add(index, 8, "StakeManager", "StakeLocked", {
        "account": B, "role": 0, "amount": 10**20, "locked": 10**20,
    }, extra={"staked": 10**20, "locked": 10**20, "unbonding": 0, "release_at": 0})  # fmt: skip
    _add(index, 8, "JobManager", "JobClaimed", {
        "jobId": 1, "solver": B, "submissionId": H, "commitDeadline": 123,
    }, log_index=1)  # fmt: skip
    _add(index, 9, "JobManager", "JobFinalized", {
        "jobId": 1, "solver": B, "reward": 10**19, "shares": 280,
    })  # fmt: skip
    _add(index, 9, "ShareRegistry", "ModelCreated", {"modelId": MODEL, "token": TOKEN}, log_index=1)
    _add(index, 9, "ModelShares", "Transfer", {"from": ZERO, "to": B, "value": 280},
         log_index=2, address=TOKEN)  # fmt: skip
    _add(index, 10, "ModelShares", "Transfer", {"from": B, "to": A, "value": 70}, address=TOKEN)


def test_migrated_schema_and_binding(db_url: str) -> None:
    url = db_url
    idx = Index.open(url, BINDING)
    assert {"events", "jobs", "disputes", "stakes", "models", "run_rounds"} <= set(
        idx.table_names()
    )
    assert "alembic_version" in idx.table_names() and idx.cursor() == 5
    idx.close()
    other = Binding(1, BINDING.addresses, 5, BINDING.deploy_block_hash)
    with pytest.raises(IndexMismatch, match="built for chain 31337"):
        Index.open(url, other)
    reopened = Index.open(url, other, reset=True)
    assert reopened.stored_binding() == other
    reopened.close()
    with pytest.raises(IndexError_, match="cannot use the database URL"):
        Index.open("nosuchdb://x", BINDING)


def test_events_become_tables_and_rederive_after_a_rollback(index: Index) -> None:
    _history(index)
    with index.reader() as s:
        job = s.get(Job, 1)
        assert job is not None and (job.phase, job.solver, job.shares) == ("Finalized", B, 280)
        assert (job.init_hash, job.open_deadline, job.commit_deadline) == (H, 99, 123)
        model = s.get(Model, MODEL)
        assert model is not None and model.name == "digits-mlp" and model.total_shares == 280
        assert s.get(ShareBalance, (MODEL, B)).balance == 210  # type: ignore[union-attr]
        assert s.get(ShareBalance, (MODEL, A)).balance == 70  # type: ignore[union-attr]
        assert s.get(Stake, (B, "solver")).locked == 10**20  # type: ignore[union-attr]
    with index.session() as s:  # a reorg orphans block 10: its transfer is undone
        s.execute(delete(Event).where(Event.block >= 10))
        assert rederive(s) == 7
    with index.reader() as s:
        assert s.get(ShareBalance, (MODEL, B)).balance == 280  # type: ignore[union-attr]
        assert s.get(ShareBalance, (MODEL, A)) is None


def test_dashboard_pages_and_json(index: Index) -> None:
    _history(index)
    client = TestClient(create_app(index))
    job = client.get("/api/jobs/1").json()
    assert job["phase"] == "Finalized" and job["solver"] == B and job["reward_wei"] == str(10**19)
    assert [p["phase"] for p in job["phases"]] == ["Open", "Claimed", "Finalized"]
    model = client.get("/api/models/digits-mlp").json()
    assert [(h["account"], h["bps"]) for h in model["holders"]] == [(B, 7500), (A, 2500)]
    assert client.get(f"/api/models/{MODEL}").json() == model
    page = client.get("/models/digits-mlp").text
    assert B in page and A in page and "75.00%" in page  # full addresses, never cut
    assert 'id="job-phase">Finalized<' in client.get("/jobs/1").text
    assert client.get("/jobs/2").status_code == 404
    assert client.get("/api/disputes/claim-x").status_code == 404
    assert client.get(f"/api/accounts/{B.lower()}").json()["earnings"] == {"reward": str(10**19)}
    # people read UTC times and exact VTT; the API keeps Unix seconds and wei
    job_page = client.get("/jobs/1").text
    assert "open 1970-01-01 00:01:39 UTC, commit 1970-01-01 00:02:03 UTC" in job_page
    assert job["open_deadline"] == 99
    assert '<td class="num">100</td>' in client.get(f"/accounts/{B}").text  # 10**20 wei locked


def test_dashboard_amounts_are_exact_and_times_utc() -> None:
    """No float between wei and the page: every decimal of 18 that is not a trailing zero."""
    from dashboard.app import tokens, utc

    assert tokens(10**18 + 1) == "1.000000000000000001"
    assert tokens(1_234_567 * 10**15) == "1,234.567"
    # a float would show the escrow of `run post` as 2,000,000,010.00
    assert tokens(2_000_000_010 * 10**18 + 1) == "2,000,000,010.000000000000000001"
    assert tokens(None) == "-" and tokens(0) == "0"
    assert utc(1_795_723_206) == "2026-11-26 20:00:06 UTC" and utc(0) == utc(None) == "-"


def test_svg_charts_and_spec_names() -> None:
    plot = line_plot([(0, 3.5), (1, None), (2, 3.1)], y_label="val_bpc")
    assert plot.count('class="point"') == 2 and "n/a" in plot and "val_bpc" in plot
    bars = ownership_bars([(A, 75, 7500), (B, 25, 2500)])
    assert A in bars and "75.00%" in bars and bars.count("<rect") == 2
    assert model_name_of_spec('data:,{"model_id":"digits-mlp"}', MODEL) == "digits-mlp"
    assert model_name_of_spec('data:,{"model_id":"other"}', MODEL) is None


def test_a_claim_dispute_of_a_committee_deployment_is_no_job_dispute(index: Index) -> None:
    """In a committee deployment the committee's `DisputeOpened` of a job records the job's
    dispute; a round claim's (job id 0) is recorded by its `RoundChallenged` only."""
    from indexer.models import Dispute

    committee = {"adjudicator": "committee"}
    opened = {"segment": 0, "excluded": [], "reserve": [], "randomnessBlock": 12}
    _add(index, 11, "ArbitrationCommittee", "DisputeOpened",
         {"disputeId": 1, "jobId": 3, **opened}, extra=committee)  # fmt: skip
    _add(index, 12, "ArbitrationCommittee", "DisputeOpened",
         {"disputeId": 2, "jobId": 0, **opened}, extra=committee)  # fmt: skip
    _add(index, 12, "RunRegistry", "RoundChallenged",
         {"runId": 1, "round": 0, "challenger": B, "disputeId": 2}, log_index=1)  # fmt: skip
    with index.reader() as s:
        keys = sorted((d.kind, d.dispute_id, d.job_id) for d in s.query(Dispute))
    assert keys == [("claim", 2, None), ("job", 1, 3)]


def test_game_moves_record_the_dissection_points_and_the_part(index: Index) -> None:
    """A dissection names its interior points (from the posted hash count, no arity needed);
    a response names the part and moves the interval."""
    from indexer.models import Dispute, DisputeMove

    _add(index, 11, "BisectionGame", "GameOpened", {
        "disputeId": 4, "jobId": 3, "segment": 2, "defender": A, "challenger": B,
        "lo": 20, "hi": 30,
    })  # fmt: skip
    _add(index, 12, "BisectionGame", "EndpointsPosted",
         {"disputeId": 4, "startHash": H, "endHash": H, "clockLeft": 50})  # fmt: skip
    _add(index, 13, "BisectionGame", "Bisected",
         {"disputeId": 4, "lo": 20, "hi": 30, "hashes": [H] * 7, "clockLeft": 49})  # fmt: skip
    _add(index, 14, "BisectionGame", "Responded",
         {"disputeId": 4, "index": 3, "lo": 23, "hi": 25, "clockLeft": 48})  # fmt: skip
    _add(index, 15, "BisectionGame", "Bisected",
         {"disputeId": 4, "lo": 23, "hi": 25, "hashes": [H], "clockLeft": 47})  # fmt: skip
    with index.reader() as s:
        game = s.get(Dispute, ("job", 4))
        assert game is not None
        assert (game.lo, game.hi, game.status, game.moves) == (23, 25, "AwaitingResponse", 5)
        details = [m.detail for m in s.query(DisputeMove).order_by(DisputeMove.block)]
    assert details[2:] == [
        "dissects [20, 30] at 7 point(s) [21, 22, 23, 25, 26, 27, 28] (clock left 49 s)",
        "picks part 3: interval now [23, 25] (clock left 48 s)",
        "dissects [23, 25] at 1 point(s) [24] (clock left 47 s)",
    ]


C = "0x" + "66" * 20
SID = "0x" + "77" * 32


def _equivocation_history(index: Index) -> None:
    """Job 1 (of `_history`) verified by seats B and C; C signed two seals and A proved it: one
    transaction at block 40 (the proof, C's slash, an unrelated slash of B, the JobManager's
    event), and a slash of C at block 41 that names no job."""
    _add(index, 30, "JobManager", "VerifiersAssigned", {
        "jobId": 1, "verifiers": [B, C], "sampleMasks": [3, 3], "segments": [0, 1],
        "verdictDeadline": 150, "challengeDeadline": 0,
    })  # fmt: skip
    _add(index, 40, "VerificationRound", "EquivocationProven", {
        "submissionId": SID, "verifier": C, "prover": A, "commitment": H,
        "otherCommitment": "0x" + "cd" * 32,
    }, extra={"job_id": 1})  # fmt: skip
    stake = {"staked": 4 * 10**19, "locked": 0, "unbonding": 0, "release_at": 0}
    for log_index, who in ((1, C), (2, B)):
        _add(index, 40, "StakeManager", "StakeSlashed", {
            "account": who, "role": 1, "requested": 10**19, "slashed": 10**19, "recipient": TOKEN,
        }, extra=stake, log_index=log_index)  # fmt: skip
    _add(index, 40, "JobManager", "VerifierEquivocated",
         {"jobId": 1, "verifier": C, "slashed": 10**19, "bonds": 5 * 10**18},
         log_index=3)  # fmt: skip
    _add(index, 41, "StakeManager", "StakeSlashed", {
        "account": C, "role": 1, "requested": 10**18, "slashed": 10**18, "recipient": TOKEN,
    }, extra=stake)  # fmt: skip


def test_a_reveal_records_its_approvals_and_the_bonds_of_its_own_rejects(index: Index) -> None:
    """A seat's ``VerdictsRevealed`` is the one record of its reveal (the JobManager emits
    none): the row takes its approvals from the approve mask, one per end, and its bonds as
    challengeBond per non-approval of the seat's own samples only (B holds samples 0 and 1 and
    rejects 1 and the foreign 2: one bond; C approves all of its own: none)."""
    from indexer.models import Assignment

    _history(index)
    _add(index, 30, "JobManager", "VerifiersAssigned", {
        "jobId": 1, "verifiers": [B, C], "sampleMasks": [3, 4], "segments": [0, 1, 2],
        "verdictDeadline": 150, "challengeDeadline": 0,
    })  # fmt: skip
    ends = [H, "0x" + "ab" * 32, "0x" + "cd" * 32]
    for log_index, (who, mask) in enumerate(((B, 0b001), (C, 0b100))):
        _add(index, 31, "VerificationRound", "VerdictsRevealed",
             {"submissionId": SID, "verifier": who, "ends": ends, "approveMask": mask},
             extra={"job_id": 1, "challenge_bond": 5 * 10**18},
             log_index=log_index)  # fmt: skip
    with index.reader() as s:
        b, c = s.get(Assignment, (1, B)), s.get(Assignment, (1, C))
        assert b is not None and c is not None
        assert (b.sealed, b.approvals, int(b.bond)) == (True, [True, False, False], 5 * 10**18)
        assert (c.sealed, c.approvals, int(c.bond)) == (True, [False, False, True], 0)


def test_an_equivocation_is_a_slash_of_its_job_with_its_cause(index: Index) -> None:
    """docs/SECURITY.md P-40: the proof and the JobManager's slash make one equivocation row;
    the seat's `StakeSlashed` of that transaction names the job and the cause (not another
    account's in the same transaction, nor the seat's other slashes); the job page lists it
    and marks the seat voided, the account page names the job and the cause."""
    from indexer.models import Equivocation, Slash

    _history(index)
    _equivocation_history(index)

    def check() -> None:
        with index.reader() as s:
            row = s.get(Equivocation, (1, C, 40))
            assert row is not None
            assert (row.prover, row.commitment, row.other_commitment, row.submission_id) == (
                A, H, "0x" + "cd" * 32, SID,
            )  # fmt: skip
            assert (row.slashed, row.bonds, row.timestamp) == (10**19, 5 * 10**18, 1_040)
            causes = {(x.account, x.block): (x.job_id, x.cause) for x in s.query(Slash)}
        assert causes == {(C, 40): (1, "equivocation"), (B, 40): (None, None),
                          (C, 41): (None, None)}  # fmt: skip

    check()
    with index.session() as s:  # derived again from the stored events: the same rows
        rederive(s)
    check()
    client = TestClient(create_app(index))
    job = client.get("/api/jobs/1").json()
    assert job["equivocations"] == [{
        "verifier": C, "prover": A, "commitment": H, "other_commitment": "0x" + "cd" * 32,
        "slashed_wei": str(10**19), "bonds_wei": str(5 * 10**18), "block": 40,
        "timestamp": 1_040,
    }]  # fmt: skip
    assert {a["verifier"]: a["voided"] for a in job["assignments"]} == {B: False, C: True}
    page = client.get("/jobs/1").text
    assert 'id="equivocations"' in page and "1970-01-01 00:17:20 UTC" in page
    assert '<td class="num">10</td><td class="num">5</td>' in page  # VTT, not wei
    slashes = client.get(f"/api/accounts/{C}").json()["slashes"]
    assert [(x["block"], x["job_id"], x["cause"], x["slashed_wei"]) for x in slashes] == [
        (40, 1, "equivocation", str(10**19)),
        (41, None, None, str(10**18)),
    ]
    assert '<a href="/jobs/1">1</a></td><td>equivocation</td>' in client.get(f"/accounts/{C}").text


def test_a_forfeited_reject_bond_is_a_slash_of_its_job(index: Index) -> None:
    """A seat's reject bonds are locked from its verifier stake, so their forfeit is a
    `StakeSlashed` right after the JobManager's announcement in the same transaction: a lost
    dispute's `BondForfeited`, an abstention's `AbstentionForfeited`, an equivocation's
    `VerifierEquivocated` (its bonds after its stake). Each names its job and cause; a slash after
    an announcement for another account does not."""
    from indexer.models import Slash

    _history(index)
    stake = {"staked": 4 * 10**19, "locked": 0, "unbonding": 0, "release_at": 0}
    slash = {"role": 1, "requested": 10**19, "slashed": 10**19, "recipient": TOKEN}
    _add(index, 50, "JobManager", "BondForfeited", {"jobId": 1, "account": B, "amount": 10**19})
    _add(index, 50, "StakeManager", "StakeSlashed", {"account": B, **slash}, extra=stake,
         log_index=1)  # fmt: skip
    _add(index, 51, "JobManager", "AbstentionForfeited",
         {"jobId": 1, "sampleIndex": 0, "verifier": C, "bond": 10**19})  # fmt: skip
    _add(index, 51, "StakeManager", "StakeSlashed", {"account": C, **slash}, extra=stake,
         log_index=1)  # fmt: skip
    _add(index, 52, "JobManager", "VerifierEquivocated",
         {"jobId": 1, "verifier": C, "slashed": 10**19, "bonds": 10**19})  # fmt: skip
    _add(index, 52, "StakeManager", "StakeSlashed", {"account": C, **slash}, extra=stake,
         log_index=1)  # fmt: skip
    _add(index, 53, "JobManager", "BondForfeited", {"jobId": 1, "account": C, "amount": 10**19})
    _add(index, 53, "StakeManager", "StakeSlashed", {"account": B, **slash}, extra=stake,
         log_index=1)  # fmt: skip
    with index.reader() as s:
        causes = {x.block: (x.account, x.job_id, x.cause) for x in s.query(Slash)}
    assert causes == {
        50: (B, 1, "reject bond"),
        51: (C, 1, "abstention bond"),
        52: (C, 1, "equivocation"),
        53: (B, None, None),
    }


@pytest.mark.parametrize(
    "path",
    [
        "/jobs/99999999999999999999999",
        "/api/jobs/99999999999999999999999",
        "/runs/9223372036854775808",
        "/api/runs/99999999999999999999999",
        "/disputes/99999999999999999999999",
        "/api/disputes/claim-99999999999999999999999",
        "/jobs/-1",
    ],
)
def test_an_id_past_any_the_index_holds_is_not_found_never_a_server_error(
    index: Index, path: str
) -> None:
    """An id beyond SQLite's 64-bit integers used to end in OverflowError and a 500."""
    _history(index)
    client = TestClient(create_app(index), raise_server_exceptions=False)
    assert client.get(path).status_code == 404


def test_uint32_fields_at_their_maximum_are_stored(index: Index) -> None:
    """Event fields typed uint32 (steps, intervals, rounds, game intervals) fit no signed 32-bit
    SQL integer at their top half: PostgreSQL's INTEGER refused them (SQLite's is 64-bit)."""
    from indexer.models import Dispute, Run

    top = 2**32 - 1
    _add(index, 7, "JobManager", "JobPosted", {
        "jobId": 1, "submitter": A, "modelId": MODEL, "specHash": H, "totalSteps": top,
        "initHash": H, "checkpointInterval": 2**31, "reward": 1, "escrow": 2, "specURI": "data:,{}",
    }, extra={"open_deadline": 99})  # fmt: skip
    _add(index, 8, "BisectionGame", "GameOpened", {
        "disputeId": 4, "jobId": 1, "segment": top, "defender": A, "challenger": B,
        "lo": top - 1, "hi": top,
    })  # fmt: skip
    _add(index, 9, "RunRegistry", "RunOpened", {
        "runId": 1, "modelId": MODEL, "runHash": H, "opener": A, "startHash": H,
        "seats": 256, "rounds": top, "innerSteps": top,
    })  # fmt: skip
    with index.reader() as s:
        job, game, run = s.get(Job, 1), s.get(Dispute, ("job", 4)), s.get(Run, 1)
        assert job is not None and (job.total_steps, job.checkpoint_interval) == (top, 2**31)
        assert game is not None and (game.segment, game.lo, game.hi) == (top, top - 1, top)
        assert run is not None and (run.rounds, run.inner_steps) == (top, top)


def test_seat_masks_of_a_256_seat_run_are_stored(index: Index) -> None:
    """A run has up to 256 seats (RunRegistry.MAX_SEATS): the registered and accepted masks are
    uint256 bit masks, past any 64-bit SQL integer."""
    from indexer.models import RunRound

    _add(index, 9, "RunRegistry", "RunOpened", {
        "runId": 1, "modelId": MODEL, "runHash": H, "opener": A, "startHash": H,
        "seats": 256, "rounds": 2, "innerSteps": 10,
    })  # fmt: skip
    for seat in (0, 63, 255):
        _add(index, 10, "RunRegistry", "ContributionAdded",
             {"runId": 1, "round": 0, "seat": seat, "jobId": 7}, log_index=seat)  # fmt: skip
    _add(index, 11, "RunRegistry", "RoundFinalized", {
        "runId": 1, "round": 0, "stateHash": H, "accepted": 2**256 - 1, "sharesPerSeat": 3,
    })  # fmt: skip
    with index.reader() as s:
        rnd = s.get(RunRound, (1, 0))
        assert rnd is not None and rnd.registered == 1 | 1 << 63 | 1 << 255
        assert rnd.accepted == 2**256 - 1


def test_a_contribution_job_gets_its_runs_spec_uri_with_its_seats_fragment(index: Index) -> None:
    """A contribution is posted without a spec URI (its JobPosted has ""): the job row gets the
    run's URI, published at RunOpened, with the fragment of its (round, seat); a run URI with a
    fragment names no spec and leaves the job without one."""
    from indexer.models import Run

    for job_id in (5, 6):
        _add(index, 7, "JobManager", "JobPosted", {
            "jobId": job_id, "submitter": A, "modelId": MODEL, "specHash": H, "totalSteps": 10,
            "initHash": H, "checkpointInterval": 5, "reward": 1, "escrow": 2, "specURI": "",
        }, extra={"open_deadline": 99}, log_index=job_id)  # fmt: skip
    for run_id, uri in ((1, "https://runs.example/r.json"), (2, "https://runs.example/r#x")):
        _add(index, 8, "RunRegistry", "RunOpened", {
            "runId": run_id, "modelId": MODEL, "runHash": H, "opener": A, "startHash": H,
            "seats": 2, "rounds": 2, "innerSteps": 10, "specURI": uri,
        }, log_index=run_id)  # fmt: skip
    _add(index, 9, "RunRegistry", "ContributionAdded",
         {"runId": 1, "round": 0, "seat": 1, "jobId": 5})  # fmt: skip
    _add(index, 9, "RunRegistry", "ContributionAdded",
         {"runId": 2, "round": 0, "seat": 0, "jobId": 6}, log_index=1)  # fmt: skip
    with index.reader() as s:
        run, good, bad = s.get(Run, 1), s.get(Job, 5), s.get(Job, 6)
        assert run is not None and run.spec_uri == "https://runs.example/r.json"
        assert good is not None and good.spec_uri == "https://runs.example/r.json#contribution=0,1"
        assert bad is not None and bad.spec_uri == ""


def test_an_index_at_the_first_revision_keeps_its_rows_through_the_upgrade(db_url: str) -> None:
    """Migration 0002 (wider integers, masks as decimal strings) converts the stored rows."""
    from alembic import command
    from alembic.config import Config
    from sqlalchemy import create_engine, text

    from indexer.models import RunRound
    from indexer.store import MIGRATIONS_DIR

    engine = create_engine(db_url)
    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS_DIR))
    with engine.begin() as conn:
        cfg.attributes["connection"] = conn
        command.upgrade(cfg, "0001")
        conn.execute(text(
            "INSERT INTO run_rounds (run_id, round, phase, registered, accepted, shares_per_seat,"
            " proposals, challenges) VALUES (1, 0, 'Open', 5, 4, '0', 0, 0)"
        ))  # fmt: skip
    engine.dispose()
    idx = Index.open(db_url, BINDING)
    with idx.reader() as s:
        rnd = s.get(RunRound, (1, 0))
        assert rnd is not None and (rnd.registered, rnd.accepted) == (5, 4)
    with idx.session() as s:  # the migrated column takes a 256-seat mask
        s.merge(RunRound(run_id=1, round=0, registered=1 << 255 | 5))
    with idx.reader() as s:
        assert s.get(RunRound, (1, 0)).registered == 1 << 255 | 5  # type: ignore[union-attr]
    idx.close()


def _run_history(index: Index) -> None:
    _add(index, 11, "RunRegistry", "RunOpened", {
        "runId": 1, "modelId": MODEL, "runHash": H, "opener": A, "startHash": H,
        "seats": 2, "rounds": 3, "innerSteps": 10,
    })  # fmt: skip
    for seat in (0, 1):
        _add(index, 12, "RunRegistry", "ContributionAdded",
             {"runId": 1, "round": 0, "seat": seat, "jobId": 1}, log_index=seat)  # fmt: skip
    _add(index, 13, "RunRegistry", "RoundProposed", {
        "runId": 1, "round": 0, "proposer": B, "stateHash": H, "accepted": 3,
        "challengeDeadline": 200,
    })  # fmt: skip
    _add(index, 14, "RunRegistry", "RoundChallenged",
         {"runId": 1, "round": 0, "challenger": A, "disputeId": 2})  # fmt: skip
    _add(index, 15, "RunRegistry", "ClaimRuled", {
        "runId": 1, "round": 0, "disputeId": 2, "claimValid": True, "winner": B, "pot": 9,
    })  # fmt: skip
    _add(index, 16, "RunRegistry", "RoundFinalized", {
        "runId": 1, "round": 0, "stateHash": H, "accepted": 3, "sharesPerSeat": 5,
    })  # fmt: skip
    _add(index, 17, "BisectionGame", "GameOpened", {
        "disputeId": 4, "jobId": 1, "segment": 2, "defender": B, "challenger": A,
        "lo": 20, "hi": 30,
    })  # fmt: skip
    _add(index, 18, "BisectionGame", "Bisected",
         {"disputeId": 4, "lo": 20, "hi": 30, "hashes": [H] * 3, "clockLeft": 49})  # fmt: skip


def test_sqlite_and_postgresql_answer_alike(tmp_path: Path, postgres_server: Any) -> None:
    """The same events indexed into SQLite and into PostgreSQL: every JSON answer and page of
    the dashboard is the same on both (orderings, amounts, masks, times)."""
    urls = [f"sqlite:///{tmp_path / 'i.sqlite'}", postgres_server.new_database()]
    paths = [
        "/api/status", "/api/overview", "/api/jobs/1", "/api/runs/1", "/api/disputes/job-4",
        "/api/disputes/claim-2", "/api/models/digits-mlp", f"/api/accounts/{A}",
        f"/api/accounts/{B}", "/", "/jobs/1", "/runs/1", "/disputes/job-4", "/models/digits-mlp",
        f"/accounts/{B}", f"/api/accounts/{C}", f"/accounts/{C}",
    ]  # fmt: skip
    answers = []
    for url in urls:
        idx = Index.open(url, BINDING)
        _history(idx)
        _run_history(idx)
        _equivocation_history(idx)
        client = TestClient(create_app(idx))
        responses = [client.get(p) for p in paths]
        assert [r.status_code for r in responses] == [200] * len(paths)
        answers.append([r.text for r in responses])
        idx.close()
    for path, on_sqlite, on_postgresql in zip(paths, *answers, strict=True):
        assert on_sqlite == on_postgresql, path


def test_a_postgresql_url_without_its_driver_names_the_extra(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Without psycopg a ``postgresql+psycopg://`` URL is refused in one line naming the extra."""
    import sys

    monkeypatch.setitem(sys.modules, "psycopg", None)  # `import psycopg` raises ImportError
    with pytest.raises(IndexError_, match=r"driver is missing: .*pip install 'veritrain\[postgres"):
        Index.open("postgresql+psycopg://u@/d?host=/nowhere", BINDING)


def test_a_batch_lock_and_unlock_update_every_account_they_name(index: Index) -> None:
    """`StakesLocked` / `StakesUnlocked` (one event for a call on several accounts) update each
    named account's stake from what was read at the block, and list each as a verifier."""
    held = {"staked": 5 * 10**19, "unbonding": 0, "release_at": 0}
    read = {B: {**held, "locked": 10**19}, C: {**held, "locked": 2 * 10**19}}
    _add(index, 11, "StakeManager", "StakesLocked", {
        "role": 1, "accounts": [B, C], "amounts": [10**19, 10**19],
    }, extra={"stakes": read})  # fmt: skip
    with index.reader() as s:
        assert s.get(Stake, (B, "verifier")).locked == 10**19  # type: ignore[union-attr]
        assert s.get(Stake, (C, "verifier")).locked == 2 * 10**19  # type: ignore[union-attr]
        assert s.get(Stake, (C, "verifier")).staked == 5 * 10**19  # type: ignore[union-attr]
    _add(index, 12, "StakeManager", "StakesUnlocked", {
        "role": 1, "accounts": [C], "amounts": [10**19],
    }, extra={"stakes": {C: {**held, "locked": 10**19}}})  # fmt: skip
    with index.reader() as s:
        assert s.get(Stake, (B, "verifier")).locked == 10**19  # type: ignore[union-attr]
        assert s.get(Stake, (C, "verifier")).locked == 10**19  # type: ignore[union-attr]


def test_a_jobs_end_restakes_each_partys_earnings(db_url: str) -> None:
    """A job's end pays the reward and the fees to the StakeManager (one `Paid`), which adds
    each party's part to its stake (`StakesRestaked`, a single ``earned`` entry shared by every
    account): each account's stake is what was read at the block, each earns a ``restaked``
    earning of the job, and the StakeManager itself earns nothing."""
    stake_manager = "0x" + "77" * 20
    d = "0x" + "88" * 20
    idx = Index.open(db_url, Binding(31337, {**BINDING.addresses,
                                             "stake_manager": stake_manager}, 5, H))  # fmt: skip
    reward, fee, jackpot = 10**19, 10**18, 3 * 10**18
    _add(idx, 20, "JobManager", "JobFinalized",
         {"jobId": 3, "solver": B, "reward": reward, "shares": 0})  # fmt: skip
    _add(idx, 20, "Escrow", "Paid", {
        "protocol": BINDING.addresses["job_manager"], "from": 0, "account": stake_manager,
        "amount": reward + 2 * fee,
    }, log_index=1)  # fmt: skip
    _add(idx, 20, "StakeManager", "StakesRestaked", {
        "role": 0, "accounts": [B], "unlocked": [10**20], "earned": [reward],
    }, log_index=2, extra={"stakes": {B: {
        "staked": 10**20 + reward, "locked": 0, "unbonding": 0, "release_at": 0,
    }}})  # fmt: skip
    _add(idx, 20, "StakeManager", "StakesRestaked", {
        "role": 1, "accounts": [C, d], "unlocked": [5 * 10**19], "earned": [fee],
    }, log_index=3, extra={"stakes": {a: {
        "staked": 10**20 + fee, "locked": 0, "unbonding": 0, "release_at": 0,
    } for a in (C, d)}})  # fmt: skip
    # another job's end: one catch (its fee and jackpot), one seat with its stake back only
    _add(idx, 21, "JobManager", "JobRejected", {"jobId": 4, "disputeId": 1, "refund": 0})
    _add(idx, 21, "StakeManager", "StakesRestaked", {
        "role": 1, "accounts": [C, d], "unlocked": [6 * 10**19, 5 * 10**19],
        "earned": [fee + jackpot, 0],
    }, log_index=1)  # fmt: skip
    with idx.reader() as s:
        solver = s.get(Stake, (B, "solver"))
        assert solver is not None and (solver.staked, solver.locked) == (10**20 + reward, 0)
        seat = s.get(Stake, (d, "verifier"))
        assert seat is not None and (seat.staked, seat.locked) == (10**20 + fee, 0)
        earned = sorted(
            (e.account, e.kind, e.amount, e.job_id)
            for e in s.scalars(select(Earning).where(Earning.kind == "restaked"))
        )
        assert not list(s.scalars(select(Earning).where(Earning.account == stake_manager)))
    assert earned == sorted([
        (B, "restaked", reward, 3), (C, "restaked", fee, 3), (d, "restaked", fee, 3),
        (C, "restaked", fee + jackpot, 4),
    ])  # fmt: skip
    client = TestClient(create_app(idx))
    assert client.get(f"/api/accounts/{C}").json()["earnings"] == {
        "restaked": str(2 * fee + jackpot)
    }
    overview = {a["address"]: a for a in client.get("/api/overview").json()["accounts"]}
    assert overview[d]["earned_wei"] == str(fee)
    assert stake_manager not in overview
    idx.close()
