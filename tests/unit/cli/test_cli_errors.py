"""The shared one-line error handler (`cli.errors`): what each kind of failure prints.

Run: ``.venv/bin/python -m pytest tests/unit/cli/test_cli_errors.py -q``.
"""

from __future__ import annotations

import errno

import pytest
from eth_abi.abi import encode
from eth_utils.crypto import keccak
from pydantic import BaseModel, Field, ValidationError

from chain.errors import ErrorDecoder, RpcUnavailable
from cli.errors import describe
from veritrain.errors import NodeStateError

ADDRESS = "0x9965507D1a55bcC2695C58ba16FB37d819B0A4dc"
NOTHING_UNBONDING = {
    "type": "error",
    "name": "NothingUnbonding",
    "inputs": [{"name": "account", "type": "address"}, {"name": "role", "type": "uint8"}],
}


def test_a_decoded_revert_is_one_line_naming_the_custom_error() -> None:
    data = keccak(text="NothingUnbonding(address,uint8)")[:4] + encode(
        ["address", "uint8"], [ADDRESS, 1]
    )
    revert = ErrorDecoder({"StakeManager": [NOTHING_UNBONDING]}).decode(data, "StakeManager")
    assert describe(revert) == (
        f"StakeManager reverted: NothingUnbonding(account={ADDRESS}, role=1)"
    )


class _Spec(BaseModel):
    steps: int = Field(ge=1)
    lr: float = Field(gt=0)


def test_a_validation_error_lists_each_field_on_one_line() -> None:
    with pytest.raises(ValidationError) as info:
        _Spec(steps=0, lr=-1.0)
    line = describe(info.value)
    assert "\n" not in line
    assert line.startswith("steps: Input should be greater than or equal to 1; lr: ")


def test_multi_line_messages_keep_their_first_line() -> None:
    err = NodeStateError("cannot read node state s.json: 1 validation error\n  jobs: bad")
    assert describe(err) == "cannot read node state s.json: 1 validation error"
    assert describe(RpcUnavailable("cannot reach x (connection refused)")) == (
        "cannot reach x (connection refused)"
    )


def test_os_errors_name_the_file_or_the_taken_address() -> None:
    assert describe(FileNotFoundError(errno.ENOENT, "No such file", "m.json")) == (
        "No such file: m.json"
    )
    assert describe(OSError(errno.EADDRINUSE, "Address already in use")).startswith(
        "address already in use"
    )


def test_an_unexpected_error_names_its_type_and_the_debug_switch() -> None:
    assert describe(KeyError("x")) == "KeyError: 'x' (VERITRAIN_DEBUG=1 shows the traceback)"
