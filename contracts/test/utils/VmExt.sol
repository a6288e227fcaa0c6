// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

// Interfaces
import {Vm} from "@prb/test/Vm.sol";

/// @title VmExt
/// @notice Cheatcodes forge 1.7 has and @prb/test's `Vm` interface lacks.
interface VmExt is Vm {
    /// @notice Records the gas of the last call in snapshots/<group>.json under `name`.
    function snapshotGasLastCall(string calldata group, string calldata name) external returns (uint256 gasUsed);

    /// @notice Records `value` in snapshots/<group>.json under `name`.
    function snapshotValue(string calldata group, string calldata name, uint256 value) external;

    /// @notice Sets the hash `blockhash(blockNumber)` returns.
    function setBlockhash(uint256 blockNumber, bytes32 blockHash) external;

    /// @notice Current block number, unaffected by the compiler caching `block.number`.
    function getBlockNumber() external view returns (uint256 height);

    /// @notice Current timestamp, unaffected by the compiler caching `block.timestamp`.
    function getBlockTimestamp() external view returns (uint256 timestamp);

    /// @notice The address `deployer` creates at `nonce` with CREATE.
    function computeCreateAddress(address deployer, uint256 nonce) external pure returns (address);

    /// @notice Whether `key` (a JSONPath) exists in `json`.
    function keyExistsJson(string calldata json, string calldata key) external view returns (bool exists);

    /// @notice Snapshot of the whole EVM state (forge-std `Vm.snapshotState`).
    function snapshotState() external returns (uint256 snapshotId);

    /// @notice Reverts the EVM state to a snapshot (forge-std `Vm.revertToState`).
    function revertToState(uint256 snapshotId) external returns (bool success);
}
