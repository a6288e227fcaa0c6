"""`noderuntime.runs.contribution_jobs`: which contribution jobs count, from chain facts alone."""

from __future__ import annotations

from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

from noderuntime.runs import contribution_jobs
from veritrain.diloco import RunSpec, contribution_uri
from veritrain.enums import JobStatus
from veritrain.presets import preset

RUN = RunSpec(inner=preset("digits-mlp", "native", total_steps=4, checkpoint_interval=2), seats=3)
URI = RUN.to_data_uri()


@dataclass
class Event:
    event: str
    args: dict[str, Any]
    position: tuple[int, int]


class FakeChain:
    """Jobs and their JobPosted / JobFinalized events, in the order the test adds them."""

    def __init__(self) -> None:
        self.views: list[SimpleNamespace] = []
        self.events: list[Event] = []
        self.block = 0
        self.jobs = SimpleNamespace(
            contract="JobManager",
            job_count=lambda: len(self.views),
            get_job=lambda job_id: self.views[job_id - 1],
        )

    def post(
        self,
        round_index: int,
        seat: int,
        *,
        run: RunSpec = RUN,
        model: bytes | None = None,
        spec_hash: bytes | None = None,
    ) -> int:
        self.views.append(
            SimpleNamespace(
                status=JobStatus.Open,
                model_id=model if model is not None else run.inner.model_id_hash(),
                spec_uri=contribution_uri(run.to_data_uri(), round_index, seat),
                spec_hash=spec_hash or run.contribution_spec_hash(round_index, seat),
            )
        )
        return self._emit("JobPosted", len(self.views))

    def finalize(self, job_id: int) -> None:
        self.views[job_id - 1].status = JobStatus.Finalized
        self._emit("JobFinalized", job_id)

    def _emit(self, name: str, job_id: int) -> int:
        self.block += 1
        self.events.append(Event(name, {"jobId": job_id}, (self.block, 0)))
        return job_id

    def event_logs(self, contract: Any, names: list[str], start: int, end: int) -> list[Event]:
        return [e for e in self.events if e.event in names and start <= e.position[0] <= end]

    def block_number(self) -> int:
        return self.block


def test_a_round_is_closed_by_the_next_rounds_first_post() -> None:
    chain = FakeChain()
    a, b, c = chain.post(0, 0), chain.post(0, 1), chain.post(0, 2)
    chain.finalize(a)
    chain.finalize(b)
    assert contribution_jobs(chain, RUN, 1) == {0: {0: a, 1: b}}
    d = chain.post(1, 0)  # round 1 opens: round 0 is closed
    chain.finalize(c)  # too late: every party already built round 1 without it
    chain.finalize(d)
    assert contribution_jobs(chain, RUN, 2) == {0: {0: a, 1: b}, 1: {0: d}}
    assert contribution_jobs(chain, RUN, 1) == {0: {0: a, 1: b}}


def test_only_this_runs_finalized_jobs_count_and_the_first_per_seat() -> None:
    chain = FakeChain()
    other = RUN.model_copy(update={"seats": 2})
    first = chain.post(0, 0)
    second = chain.post(0, 0)  # a second job for the same seat: the lower id counts
    foreign = chain.post(0, 1, run=other)  # another run's contribution
    wrong_model = chain.post(0, 1, model=b"\x01" * 32)
    forged = chain.post(0, 2, spec_hash=RUN.contribution_spec_hash(0, 1))  # hash of seat 1
    open_job = chain.post(0, 1)  # never finalized
    for job in (second, first, foreign, wrong_model, forged):
        chain.finalize(job)
    assert open_job and contribution_jobs(chain, RUN, 1) == {0: {0: first}}


def test_posting_a_later_round_closes_every_earlier_one() -> None:
    chain = FakeChain()
    a, b = chain.post(0, 0), chain.post(0, 1)
    chain.finalize(a)
    chain.post(2, 0)  # round 1 skipped: round 2's post closes rounds 0 and 1
    chain.finalize(b)
    assert contribution_jobs(chain, RUN, 3) == {0: {0: a}}
