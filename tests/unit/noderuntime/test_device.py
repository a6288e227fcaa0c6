"""Where a node runs repro jobs: `--device auto|cpu|cuda` (`veritrain.training.resolve_device`).

A solver trains on the GPU when there is one; verifiers replay on the CPU; a native job runs
on the device its profile pins whatever the node's choice.
"""

from __future__ import annotations

import pytest
import torch
from typer.testing import CliRunner

from cli.app import app
from noderuntime.node import NodeBase
from veritrain.errors import ProfileUnavailable, SpecError
from veritrain.presets import preset
from veritrain.spec import REPRO_ARITH
from veritrain.training import resolve_device

runner = CliRunner()
NO_GPU = not torch.cuda.is_available()


def test_auto_takes_the_gpu_only_when_there_is_one() -> None:
    assert resolve_device("auto") == ("cpu" if NO_GPU else "cuda")
    assert resolve_device("cpu") == "cpu"


def test_unknown_device_is_refused() -> None:
    with pytest.raises(SpecError, match="unknown device 'tpu'"):
        resolve_device("tpu")


@pytest.mark.skipif(not NO_GPU, reason="this machine has a GPU")
def test_cuda_without_a_gpu_is_refused() -> None:
    with pytest.raises(ProfileUnavailable, match="torch sees no GPU"):
        resolve_device("cuda")


class _Client:
    address = "0x" + "11" * 20


def test_repro_jobs_run_on_the_nodes_device_native_jobs_on_their_own() -> None:
    node = NodeBase(_Client(), name="t", threads=1, device="cpu")  # type: ignore[arg-type]
    assert node.compute()["device"] == "cpu"
    repro = node.engine_for(preset("digits-mlp", REPRO_ARITH, total_steps=4, checkpoint_interval=2))
    native = node.engine_for(preset("digits-mlp", "native", total_steps=4, checkpoint_interval=2))
    assert repro.device.type == "cpu" and native.device.type == "cpu"


@pytest.mark.skipif(not NO_GPU, reason="this machine has a GPU")
@pytest.mark.parametrize("role", [["solver", "run"], ["verifier", "run"], ["whistleblower", "run"]])
def test_a_node_asked_for_cuda_without_a_gpu_says_so_in_one_line(role: list[str]) -> None:
    # the RPC URL points nowhere: the device is checked before connecting
    result = runner.invoke(app, [*role, "--device", "cuda", "--rpc-url", "http://127.0.0.1:9"])
    assert result.exit_code == 1
    assert result.stderr.strip().splitlines() == [
        "error: --device cuda: torch sees no GPU on this machine"
    ]
