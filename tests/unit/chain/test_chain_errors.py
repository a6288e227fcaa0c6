"""Revert decoding without a node: synthetic revert data against a synthetic ABI.

Run: .venv/bin/python -m pytest tests/unit/chain -q
"""

import pickle

import pytest
from eth_abi import encode
from eth_utils import keccak

from chain import errors
from chain.errors import ContractRevert, ErrorDecoder

ABI = [
    {
        "type": "error",
        "name": "ChallengeWindowClosed",
        "inputs": [
            {"name": "jobId", "type": "uint256"},
            {"name": "deadline", "type": "uint64"},
            {"name": "nowTs", "type": "uint64"},
        ],
    },
    {"type": "error", "name": "ZeroMerkleRoot", "inputs": [{"name": "jobId", "type": "uint256"}]},
    {"type": "error", "name": "AdjudicatorNotSet", "inputs": []},
    {
        "type": "error",
        "name": "VerdictNotApproval",
        "inputs": [
            {"name": "jobId", "type": "uint256"},
            {"name": "sampleIndex", "type": "uint256"},
            {"name": "verifier", "type": "address"},
            {"name": "verdict", "type": "uint8"},
        ],
    },
    {"type": "function", "name": "finalize", "inputs": [], "outputs": []},
]


def _data(signature: str, types: list[str], values: list) -> bytes:
    return keccak(text=signature)[:4] + encode(types, values)


def test_decode_custom_error_with_args():
    dec = ErrorDecoder({"JobManager": ABI})
    data = _data(
        "ChallengeWindowClosed(uint256,uint64,uint64)",
        ["uint256", "uint64", "uint64"],
        [3, 1000, 1042],
    )
    err = dec.decode(data, "JobManager")
    assert isinstance(err, ContractRevert)
    assert err.name == "ChallengeWindowClosed"
    assert err.named_args == {"jobId": 3, "deadline": 1000, "nowTs": 1042}
    assert err.args == (3, 1000, 1042)
    assert (
        str(err) == "JobManager reverted: ChallengeWindowClosed(jobId=3, deadline=1000, nowTs=1042)"
    )
    assert err.message == str(err)
    # the per-name subclass can be caught precisely
    assert isinstance(err, errors.error_class("ChallengeWindowClosed"))
    assert not isinstance(err, errors.error_class("ZeroMerkleRoot"))


def test_decode_hex_string_and_no_args_and_address():
    dec = ErrorDecoder({"JobManager": ABI})
    err = dec.decode("0x" + keccak(text="AdjudicatorNotSet()")[:4].hex())
    assert err.name == "AdjudicatorNotSet" and err.named_args == {}
    assert str(err) == "JobManager reverted: AdjudicatorNotSet()"
    verifier = "0x" + "ab" * 20
    data = _data(
        "VerdictNotApproval(uint256,uint256,address,uint8)",
        ["uint256", "uint256", "address", "uint8"],
        [1, 2, verifier, 2],
    )
    err = dec.decode(data, "JobManager")
    assert err.named_args["verifier"].lower() == verifier


def test_decode_error_string_and_panic():
    dec = ErrorDecoder()
    err = dec.decode(bytes.fromhex("08c379a0") + encode(["string"], ["nope"]), "X")
    assert err.name == "Error" and err.named_args == {"reason": "nope"}
    assert "Error('nope')" in str(err)
    err = dec.decode(bytes.fromhex("4e487b71") + encode(["uint256"], [0x11]), "X")
    assert err.name == "Panic" and err.named_args == {"code": 0x11}
    assert "overflow" in str(err)


def test_decode_unknown_and_empty():
    dec = ErrorDecoder({"JobManager": ABI})
    err = dec.decode(b"\xde\xad\xbe\xef" + b"\x00" * 32, "JobManager")
    assert err.name == "Unknown" and "0xdeadbeef" in str(err)
    err = dec.decode(b"", "JobManager")
    assert err.name == "Unknown" and "without data" in str(err)
    # malformed body for a known selector never raises
    err = dec.decode(keccak(text="ZeroMerkleRoot(uint256)")[:4] + b"\x01", "JobManager")
    assert isinstance(err, ContractRevert)


def test_tuple_and_array_arguments():
    abi = [
        {
            "type": "error",
            "name": "Bad",
            "inputs": [
                {"name": "ids", "type": "uint32[]"},
                {
                    "name": "p",
                    "type": "tuple",
                    "components": [
                        {"name": "a", "type": "uint256"},
                        {"name": "b", "type": "bytes32"},
                    ],
                },
            ],
        }
    ]
    dec = ErrorDecoder({"C": abi})
    data = _data(
        "Bad(uint32[],(uint256,bytes32))",
        ["uint32[]", "(uint256,bytes32)"],
        [[1, 2], (7, b"\x01" * 32)],
    )
    err = dec.decode(data)
    assert err.name == "Bad" and err.named_args["ids"] == (1, 2)
    assert "C reverted: Bad(ids=[1, 2], p=[7, 0x0101" in str(err)


def test_pickle_round_trip():
    dec = ErrorDecoder({"JobManager": ABI})
    err = dec.decode(_data("ZeroMerkleRoot(uint256)", ["uint256"], [9]), "JobManager")
    back = pickle.loads(pickle.dumps(err))
    assert type(back) is type(err) and back.named_args == {"jobId": 9} and str(back) == str(err)


def test_module_getattr_rejects_unknown_names():
    with pytest.raises(AttributeError):
        errors.__getattr__("DefinitelyNotAnErrorName")
    with pytest.raises(AttributeError):
        errors.__getattr__("lowercase")
