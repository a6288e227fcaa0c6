"""The dashboard names each address's roles on its pages (from the index rows) and its search box
sends a job id, address, model, run or dispute to its page, anything else to a 404 sentence."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient
from test_index_tables import BINDING, MODEL, A, B, H, _add, _history

from dashboard.app import create_app
from dashboard.roles import account_roles
from indexer import Index
from veritrain.hexutil import checksum_address

C = checksum_address("0x" + "ab" * 20)  # letters: its checksummed form differs from lowercase
D = checksum_address("0x" + "dd" * 20)
RUN_HASH = "0x" + "cd" * 32


@pytest.fixture
def client() -> Iterator[tuple[TestClient, Index]]:
    """Job 1 (posted by A, solved by B, seat 2 of run 1 round 0) with verifiers D (seat 0) and
    C (seat 1), C paid the forced-error jackpot and challenging B in dispute 4; run 1 opened by
    A, whose round 0 B proposes and C challenges (claim dispute 2, committee D and A)."""
    idx = Index.open("sqlite://", BINDING)
    _history(idx)
    _add(idx, 11, "StakeManager", "StakeLocked", {
        "account": C, "role": 1, "amount": 10**18, "locked": 10**18,
    }, extra={"staked": 10**18, "locked": 10**18, "unbonding": 0, "release_at": 0})  # fmt: skip
    _add(idx, 11, "JobManager", "VerifiersAssigned", {
        "jobId": 1, "verifiers": [D, C], "sampleMasks": [2, 5], "segments": [0, 2, 3],
        "verdictDeadline": 200, "challengeDeadline": 300,
    }, log_index=1)  # fmt: skip
    _add(idx, 12, "JobManager", "JackpotPaid", {"jobId": 1, "account": C, "amount": 10**18})
    _add(idx, 13, "BisectionGame", "GameOpened", {
        "disputeId": 4, "jobId": 1, "segment": 2, "defender": B, "challenger": C,
        "lo": 20, "hi": 30,
    })  # fmt: skip
    _add(idx, 14, "RunRegistry", "RunOpened", {
        "runId": 1, "modelId": MODEL, "runHash": RUN_HASH, "opener": A, "startHash": H,
        "seats": 4, "rounds": 2, "innerSteps": 10,
    })  # fmt: skip
    _add(idx, 15, "RunRegistry", "ContributionAdded",
         {"runId": 1, "round": 0, "seat": 2, "jobId": 1})  # fmt: skip
    _add(idx, 16, "RunRegistry", "RoundProposed", {
        "runId": 1, "round": 0, "stateHash": H, "accepted": 4, "proposer": B,
        "challengeDeadline": 900,
    })  # fmt: skip
    _add(idx, 17, "RunRegistry", "RoundChallenged",
         {"runId": 1, "round": 0, "challenger": C, "disputeId": 2})  # fmt: skip
    _add(idx, 18, "ArbitrationCommittee", "CommitteeDrawn", {"disputeId": 2, "members": [D, A]})
    yield TestClient(create_app(idx), raise_server_exceptions=False), idx
    idx.close()


def _labels(html: str) -> dict[str, list[str]]:
    """Address -> the role labels printed after it (the same at each place it is shown)."""
    out: dict[str, list[str]] = {}
    for m in re.finditer(
        r'<a class="addr" href="/accounts/(0x\w+)">\1</a>((?: <span class="role">[^<]*</span>)*)',
        html,
    ):
        labels = re.findall(r'<span class="role">([^<]*)</span>', m.group(2))
        assert out.setdefault(m.group(1), labels) == labels, m.group(1)
    return out


def test_the_job_page_labels_every_address_with_its_roles(
    client: tuple[TestClient, Index],
) -> None:
    c, idx = client
    assert _labels(c.get("/jobs/1").text) == {
        A: ["job poster", "model owner (model digits-mlp)"],
        B: ["solver", "solver seat 2 (run 1 round 0)", "defender (dispute 4)"],
        C: ["verifier seat 1", "whistleblower", "challenger (dispute 4)"],
        D: ["verifier seat 0"],
    }
    # a reassignment keeps C, first: the latest draw numbers the seats, D has none in it
    _add(idx, 19, "JobManager", "VerifiersAssigned", {
        "jobId": 1, "verifiers": [C], "sampleMasks": [5], "segments": [0, 2, 3],
        "verdictDeadline": 400, "challengeDeadline": 500,
    })  # fmt: skip
    labels = _labels(c.get("/jobs/1").text)
    assert (labels[C][0], labels[D]) == ("verifier seat 0", ["verifier"])


def test_run_dispute_and_model_pages_label_in_their_own_scope(
    client: tuple[TestClient, Index],
) -> None:
    c, _ = client
    assert _labels(c.get("/runs/1").text) == {
        A: ["run owner", "committee member (dispute claim-2)"],
        B: [
            "solver seat 2 (run 1 round 0)",
            "proposer (run 1 round 0)",
            "defender (dispute claim-2)",
        ],
    }
    assert _labels(c.get("/disputes/4").text) == {B: ["defender"], C: ["challenger"]}
    assert _labels(c.get("/disputes/claim-2").text) == {
        B: ["defender"],
        C: ["challenger"],
        D: ["committee member"],
        A: ["committee member"],
    }
    model = _labels(c.get("/models/digits-mlp").text)
    assert model[A] == ["model owner", "shareholder"] and model[B] == ["shareholder"]


def test_the_account_page_lists_every_role_linked(client: tuple[TestClient, Index]) -> None:
    c, idx = client
    with idx.reader() as s:
        assert [(r.role, r.scope, r.href) for r in account_roles(s, B)] == [
            ("solver", "job 1", "/jobs/1"),
            ("solver seat 2", "run 1 round 0", "/runs/1"),
            ("proposer", "run 1 round 0", "/runs/1"),
            ("defender", "dispute claim-2", "/disputes/claim-2"),
            ("defender", "dispute 4", "/disputes/4"),
            ("shareholder", "model digits-mlp", "/models/digits-mlp"),
        ]
    assert c.get(f"/api/accounts/{B.lower()}/roles").json()[0] == {
        "address": B,
        "role": "solver",
        "scope": "job 1",
        "href": "/jobs/1",
    }
    assert c.get("/api/accounts/0x12/roles").status_code == 404
    page = c.get(f"/accounts/{C}").text
    for role, href, scope in [
        ("verifier seat 1", "/jobs/1", "job 1"),
        ("whistleblower", "/jobs/1", "job 1"),
        ("challenger", "/disputes/4", "dispute 4"),
    ]:
        assert f'<span class="role">{role}</span> of <a href="{href}">{scope}</a>' in page


@pytest.mark.parametrize(
    ("q", "target"),
    [
        ("1", "/jobs/1"),
        (" 1 ", "/jobs/1"),
        ("run 1", "/runs/1"),
        ("Run-1", "/runs/1"),
        ("dispute 4", "/disputes/4"),
        (C.lower(), f"/accounts/{C}"),
        (C, f"/accounts/{C}"),
        ("digits-mlp", "/models/digits-mlp"),
        (MODEL.upper().replace("0X", "0x"), f"/models/{MODEL}"),
        (RUN_HASH, "/runs/1"),
    ],
)
def test_search_redirects_to_the_page(
    client: tuple[TestClient, Index], q: str, target: str
) -> None:
    c, _ = client
    r = c.get("/search", params={"q": q}, follow_redirects=False)
    assert (r.status_code, r.headers["location"]) == (303, target)
    assert c.get(target).status_code == 200


@pytest.mark.parametrize(
    ("q", "sentence"),
    [
        ("2", "no job 2 in the index"),
        ("99999999999999999999999", "no job 99999999999999999999999 in the index"),
        ("run 7", "no run 7 in the index"),
        ("claim-3", "no dispute claim-3 in the index"),
        ("0x" + "ef" * 20, "the index has seen no account"),
        (C[:3] + C[3:].swapcase(), "is not a valid address"),
        ("0x" + "01" * 32, "no model id or run hash"),
        ("no such model", "nothing in the index matches &#39;no such model&#39;"),
        ("", "type a job id, an address"),
        ("x" * 201, "longer than 200 characters"),
    ],
)
def test_search_misses_are_a_404_sentence(
    client: tuple[TestClient, Index], q: str, sentence: str
) -> None:
    c, _ = client
    r = c.get("/search", params={"q": q})
    assert r.status_code == 404 and sentence in r.text
    assert len(re.findall(r'<p id="error">([^<]*)</p>', r.text)) == 1


def test_search_text_is_escaped_on_the_page(client: tuple[TestClient, Index]) -> None:
    c, _ = client
    r = c.get("/search", params={"q": "<script>alert(1)</script>"})
    assert r.status_code == 404
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in r.text and "<script>alert" not in r.text
    assert 'name="q" maxlength="200"' in c.get("/").text  # the box in every page's header
