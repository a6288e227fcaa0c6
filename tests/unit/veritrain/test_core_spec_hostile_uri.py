"""A job's spec URI is the submitter's to choose, and every solver, verifier and whistleblower
that looks at the job reads it: reading it is bounded in bytes and time, whatever it names."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator

import pytest

from tests.utils.hostile_http import hostile_server
from veritrain.errors import SpecUnavailable
from veritrain.spec import MAX_SPEC_BYTES, read_uri


def test_a_device_file_is_refused_without_reading_it() -> None:
    """``file:///dev/zero`` used to be read until memory ran out (MemoryError under a 1 GB
    limit, the OOM killer without one), in every node that scanned the job. Run in a child
    process held to 1 GB so that a regression fails instead of exhausting the machine."""
    probe = (
        "import resource\n"
        "resource.setrlimit(resource.RLIMIT_AS, (2**30, 2**30))\n"
        "from veritrain.errors import SpecUnavailable\n"
        "from veritrain.spec import read_uri\n"
        "try:\n"
        "    read_uri('file:///dev/zero', 5.0)\n"
        "except SpecUnavailable as exc:\n"
        "    print('refused:', exc)\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert done.stdout.startswith("refused: ") and "not a regular file" in done.stdout, (
        done.stdout + done.stderr
    )


def test_a_file_over_the_cap_is_refused(tmp_path) -> None:
    big = tmp_path / "spec.json"
    with open(big, "wb") as fh:
        fh.truncate(MAX_SPEC_BYTES + 1)  # sparse: no disk used
    with pytest.raises(SpecUnavailable, match="larger than"):
        read_uri(big.as_uri(), 5.0)
    at_cap = tmp_path / "ok.json"
    at_cap.write_bytes(b"x" * MAX_SPEC_BYTES)
    assert len(read_uri(at_cap.as_uri(), 5.0)) == MAX_SPEC_BYTES


def test_a_data_uri_over_the_cap_is_refused_before_decoding() -> None:
    with pytest.raises(SpecUnavailable, match="larger than"):
        read_uri("data:application/json;base64," + "A" * (2 * MAX_SPEC_BYTES), 5.0)
    with pytest.raises(SpecUnavailable, match="larger than"):
        read_uri("data:," + "x" * (MAX_SPEC_BYTES + 1), 5.0)


@pytest.fixture
def hostile() -> Iterator[str]:
    with hostile_server() as url:
        yield url


def test_an_endless_http_body_is_cut_at_the_cap(hostile: str) -> None:
    with pytest.raises(SpecUnavailable, match="larger than"):
        read_uri(hostile + "/endless", 10.0)


def test_a_drip_fed_http_body_is_cut_at_the_timeout(hostile: str) -> None:
    """Each byte arrives well within the read timeout: only a deadline for the whole body
    ends it (it used to hang for as long as the server kept dripping)."""
    start = time.monotonic()
    with pytest.raises(SpecUnavailable, match="within 1.0 s"):
        read_uri(hostile + "/drip", 1.0)
    assert time.monotonic() - start < 5.0
