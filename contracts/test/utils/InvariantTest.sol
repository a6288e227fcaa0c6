// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

/// @title InvariantTest
/// @notice The target-selection hooks forge's invariant runner calls (forge-std's StdInvariant
///         subset), for PRBTest-based invariant suites.
abstract contract InvariantTest {
    /// @notice A contract and the selectors the fuzzer may call on it.
    struct FuzzSelector {
        address addr;
        bytes4[] selectors;
    }

    address[] private _targetedContracts;
    FuzzSelector[] private _targetedSelectors;
    address[] private _targetedSenders;

    /// @notice Lets the fuzzer call `target`.
    function targetContract(address target) internal {
        _targetedContracts.push(target);
    }

    /// @notice Restricts the calls on `selector.addr` to `selector.selectors`.
    function targetSelector(FuzzSelector memory selector) internal {
        _targetedSelectors.push(selector);
    }

    /// @notice Lets the fuzzer use `sender` as msg.sender.
    function targetSender(address sender) internal {
        _targetedSenders.push(sender);
    }

    /// @notice Read by forge: contracts to call.
    function targetContracts() public view returns (address[] memory) {
        return _targetedContracts;
    }

    /// @notice Read by forge: selectors to call.
    function targetSelectors() public view returns (FuzzSelector[] memory) {
        return _targetedSelectors;
    }

    /// @notice Read by forge: senders to use.
    function targetSenders() public view returns (address[] memory) {
        return _targetedSenders;
    }
}
