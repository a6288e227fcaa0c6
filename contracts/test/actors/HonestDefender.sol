// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

// Testing
import {Dissection} from "../utils/Dissection.sol";
import {Merkle} from "../utils/Merkle.sol";
// Interfaces
import {IBisectionGame} from "../../src/interfaces/IBisectionGame.sol";
// Types
import {Game, GameStatus, Side} from "../../src/types/BisectionTypes.sol";

/// @title HonestDefender
/// @notice On-chain mirror of an honest solver in a bisection game (like Optimism's
///         HonestDisputeActor): it knows the state hash of every step of its run and always plays the
///         truth: the committed endpoints with their Merkle proofs, then its hashes at each dissection's
///         points.
/// @dev The test makes this contract the job's solver (staking, claiming and committing through
///      `vm.prank(address(defender))`) and approves the game for its move bonds.
contract HonestDefender {
    IBisectionGame internal immutable _GAME;
    uint32 internal immutable _INTERVAL;
    bytes32[] internal _hashes;

    /// @param game_ Game to play.
    /// @param interval Checkpoint interval k of the job.
    /// @param hashes State hash of every step 0..N (index = step).
    constructor(IBisectionGame game_, uint32 interval, bytes32[] memory hashes) {
        _GAME = game_;
        _INTERVAL = interval;
        _hashes = hashes;
    }

    /// @notice Makes the move due, if it is the defender's turn.
    /// @param disputeId Game.
    /// @return moved True if a move was made.
    function play(uint256 disputeId) external returns (bool moved) {
        Game memory game = _GAME.getGame(disputeId);
        if (game.turn != Side.Defender) return false;
        if (game.status == GameStatus.AwaitingEndpoints) {
            bytes32[] memory leaves = Merkle.leaves(_INTERVAL, checkpoints());
            _GAME.postEndpoints(
                disputeId,
                _hashes[game.lo],
                _hashes[game.hi],
                Merkle.proof(leaves, game.segment),
                Merkle.proof(leaves, uint256(game.segment) + 1)
            );
        } else {
            bytes32[] memory hashes = Dissection.interior(_hashes, game.lo, game.hi, _GAME.DISSECTION_ARITY());
            _GAME.bisect(disputeId, game.lo, game.hi, hashes);
        }
        return true;
    }

    /// @notice State hashes of the checkpoints 0, k, 2k, ... (what the solver commits).
    /// @return out Checkpoint hashes.
    function checkpoints() public view returns (bytes32[] memory out) {
        out = new bytes32[]((_hashes.length - 1) / _INTERVAL + 1);
        for (uint256 i; i < out.length; ++i) {
            out[i] = _hashes[i * _INTERVAL];
        }
    }
}
