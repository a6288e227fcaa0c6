"""The chunked commitment of a run's outer state, and one chunk recomputed by a referee.

An outer step (`veritrain.diloco.outer_step`) is elementwise, so any slice of it is the outer
step of the same slice of its inputs (`veritrain.diloco.outer_step_slice`). `outer_state_tree`
commits an `OuterState` as a positional Merkle tree of chunks of `OUTER_CHUNK` float32 elements
of its flat parameters and momentum; a dispute over a posted outer step can bisect to one leaf,
which `recompute_leaf` recomputes from the same chunk of the previous state and of the accepted
pseudo-gradients (docs/RUNS.md section 7). It imports no web3.

Run: not a script; `from veritrain.outer_tree import outer_state_tree, recompute_leaf`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from veritrain._keccak import keccak256
from veritrain.diloco import OuterState, outer_step_slice
from veritrain.merkle import MerkleTree

if TYPE_CHECKING:
    import torch

__all__ = [
    "OUTER_CHUNK",
    "outer_chunk_leaf",
    "outer_state_chunks",
    "outer_state_tree",
    "recompute_leaf",
]

OUTER_CHUNK = 4096
"""float32 elements per leaf of `outer_state_tree` (16,384 bytes)."""


def _flat(tensors: Mapping[str, torch.Tensor]) -> torch.Tensor:
    import torch

    if not tensors:
        return torch.zeros(0, dtype=torch.float32)
    return torch.cat([t.detach().to("cpu", torch.float32).reshape(-1) for t in tensors.values()])


def outer_chunk_leaf(index: int, params_chunk: bytes, momentum_chunk: bytes) -> bytes:
    """Leaf of `outer_state_tree`: `keccak256(keccak256(abi.encode(uint256 index,
    keccak256(params_chunk ++ momentum_chunk))))`, double-hashed like the checkpoint leaves.

    Args:
        index: the leaf's position i.
        params_chunk: little-endian float32 bytes of flat parameters [i*C, (i+1)*C).
        momentum_chunk: the momentum's bytes over the same range.
    """
    inner = keccak256(index.to_bytes(32, "big") + keccak256(params_chunk + momentum_chunk))
    return keccak256(inner)


def outer_state_chunks(state: OuterState, chunk: int = OUTER_CHUNK) -> list[tuple[bytes, bytes]]:
    """The `(params bytes, momentum bytes)` of every leaf of `outer_state_tree`.

    Leaf i covers flat elements [i * chunk, min((i + 1) * chunk, P)) of the parameters (all
    tensors flattened in order, P elements) and of the momentum: exactly what `outer_step_slice`
    needs to recompute that range. The last leaf may be shorter.

    Raises:
        ValueError: chunk < 1.
    """
    if chunk < 1:
        raise ValueError(f"chunk must be >= 1, got {chunk}")
    p = _flat(state.params).numpy().astype("<f4").tobytes()
    m = _flat(state.momentum).numpy().astype("<f4").tobytes()
    width = 4 * chunk
    return [(p[off : off + width], m[off : off + width]) for off in range(0, max(len(p), 1), width)]


def outer_state_tree(state: OuterState, chunk: int = OUTER_CHUNK) -> MerkleTree:
    """Merkle tree over an outer state, for disputes over a posted outer step.

    Its root is committed with the result; a dispute bisects to one leaf
    (`outer_state_chunks`), which a referee recomputes with `outer_step_slice` from the same
    range of the previous state and of the accepted Deltas.

    Args:
        state: the outer state.
        chunk: float32 elements per leaf (>= 1).

    Returns:
        The positional `veritrain.merkle.MerkleTree` of `outer_chunk_leaf`s.

    Raises:
        ValueError: chunk < 1.
    """
    return MerkleTree(
        [outer_chunk_leaf(i, p, m) for i, (p, m) in enumerate(outer_state_chunks(state, chunk))]
    )


def recompute_leaf(
    prev: OuterState,
    deltas: Sequence[Mapping[str, torch.Tensor]],
    index: int,
    lr: float,
    momentum: float,
    chunk: int = OUTER_CHUNK,
) -> bytes:
    """The leaf `index` that the honest outer step from `prev` gives: what a referee computes
    to settle a dispute that bisected to that leaf, from one chunk of every input.

    Args:
        prev: the outer state the step starts from (its hash is on chain).
        deltas: the round's accepted Deltas in seat order (none: the leaf of `prev` itself).
        index: the disputed leaf, in [0, ceil(P / chunk)).
        lr: outer learning rate; momentum: mu.
        chunk: elements per leaf, as in `outer_state_tree`.

    Returns:
        The 32-byte `outer_chunk_leaf` to compare with the posted tree's leaf.

    Raises:
        ValueError: index out of range or chunk < 1.
    """
    if chunk < 1:
        raise ValueError(f"chunk must be >= 1, got {chunk}")
    p, m = _flat(prev.params), _flat(prev.momentum)
    count = max(-(-p.numel() // chunk), 1)
    if not 0 <= index < count:
        raise ValueError(f"leaf {index} out of range [0, {count})")
    sl = slice(index * chunk, (index + 1) * chunk)
    if deltas:
        p_new, m_new = outer_step_slice(
            prev.step == 0, p[sl], m[sl], [_flat(d)[sl] for d in deltas], lr, momentum
        )
    else:
        p_new, m_new = p[sl], m[sl]
    return outer_chunk_leaf(
        index,
        p_new.numpy().astype("<f4").tobytes(),
        m_new.numpy().astype("<f4").tobytes(),
    )
