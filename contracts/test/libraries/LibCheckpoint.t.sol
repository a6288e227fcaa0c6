// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

// Testing
import {PRBTest} from "@prb/test/PRBTest.sol";
import {Bound} from "../utils/Bound.sol";
import {Merkle} from "../utils/Merkle.sol";
// Libraries
import {Hashes} from "@openzeppelin/contracts/utils/cryptography/Hashes.sol";
import {LibCheckpoint} from "../../src/libraries/LibCheckpoint.sol";

/// @notice Exposes LibCheckpoint.verify with calldata proofs.
contract LibCheckpointHarness {
    /// @notice LibCheckpoint.verify.
    function verify(
        bytes32[] calldata proof,
        bytes32 root,
        uint256 totalSteps,
        uint256 interval,
        uint256 index,
        bytes32 stateHash
    ) external pure returns (bool) {
        return LibCheckpoint.verify(proof, root, totalSteps, interval, index, stateHash);
    }

    /// @notice LibCheckpoint.verifyMulti.
    function verifyMulti(
        bytes32[] calldata proof,
        bytes32 root,
        uint256 totalSteps,
        uint256 interval,
        uint256[] memory indices,
        bytes32[] memory stateHashes
    ) external pure returns (bool) {
        return LibCheckpoint.verifyMulti(proof, root, totalSteps, interval, indices, stateHashes);
    }
}

/// @notice The positional checkpoint tree (docs/SECURITY.md P-21, P-25): every index has exactly
///         one provable state.
contract LibCheckpoint_Test is PRBTest, Bound {
    LibCheckpointHarness internal lib;

    function setUp() public {
        lib = new LibCheckpointHarness();
    }

    function _states(uint256 count, bytes32 salt) internal pure returns (bytes32[] memory states) {
        states = new bytes32[](count);
        for (uint256 i; i < count; ++i) {
            states[i] = keccak256(abi.encode(salt, i));
        }
    }

    function test_depth_powersOfTwo_succeeds() public {
        assertEq(LibCheckpoint.depth(1), 0);
        assertEq(LibCheckpoint.depth(2), 1);
        assertEq(LibCheckpoint.depth(3), 2);
        assertEq(LibCheckpoint.depth(4), 2);
        assertEq(LibCheckpoint.depth(5), 3);
        assertEq(LibCheckpoint.depth(4097), 13);
    }

    /// @notice Pins the tree of PROTOCOL.md 2.3 on three checkpoints to an explicit formula:
    ///         ((l0, l1), (l2, ZERO_LEAF)), ordered pairs.
    function test_root_matchesSpec_succeeds() public {
        bytes32[] memory states = _states(3, "spec");
        bytes32[] memory leaves = Merkle.leaves(7, states);
        bytes32 l0 = keccak256(bytes.concat(keccak256(abi.encode(uint256(0), uint256(0), states[0]))));
        bytes32 l1 = keccak256(bytes.concat(keccak256(abi.encode(uint256(1), uint256(7), states[1]))));
        bytes32 l2 = keccak256(bytes.concat(keccak256(abi.encode(uint256(2), uint256(14), states[2]))));
        assertEq(leaves[0], l0);
        assertEq(leaves[2], l2);
        bytes32 expected = keccak256(
            abi.encodePacked(keccak256(abi.encodePacked(l0, l1)), keccak256(abi.encodePacked(l2, bytes32(0))))
        );
        assertEq(Merkle.root(leaves), expected);
        assertTrue(Hashes.efficientKeccak256(l0, l1) == keccak256(abi.encodePacked(l0, l1)));
    }

    /// @notice Every checkpoint of an honest tree verifies at its index, and only there, only with
    ///         its own state and a proof of exactly the tree depth.
    function testFuzz_verify_everyIndex_succeeds(uint256 segments, uint256 interval, uint256 index, bytes32 salt)
        public
    {
        segments = bound(segments, 1, 70);
        interval = bound(interval, 1, 1000);
        index = bound(index, 0, segments);
        bytes32[] memory states = _states(segments + 1, salt);
        bytes32[] memory leaves = Merkle.leaves(interval, states);
        bytes32 root = Merkle.root(leaves);
        bytes32[] memory proof = Merkle.proof(leaves, index);
        assertEq(proof.length, LibCheckpoint.depth(segments + 1));
        assertTrue(lib.verify(proof, root, segments * interval, interval, index, states[index]));
        for (uint256 i; i <= segments; ++i) {
            if (i != index) {
                assertFalse(lib.verify(proof, root, segments * interval, interval, i, states[index]), "other index");
                assertFalse(lib.verify(proof, root, segments * interval, interval, index, states[i]), "other state");
            }
        }
        _assertShapeBound(proof, root, segments, interval, index, states[index]);
    }

    /// @notice Indices past M, another job shape, interval 0 and a longer proof never verify.
    function _assertShapeBound(
        bytes32[] memory proof,
        bytes32 root,
        uint256 segments,
        uint256 interval,
        uint256 index,
        bytes32 stateHash
    ) internal {
        uint256 totalSteps = segments * interval;
        // Padding positions and indices past M are never provable.
        assertFalse(lib.verify(proof, root, totalSteps, interval, segments + 1, stateHash));
        assertFalse(lib.verify(proof, root, totalSteps, interval, index + (uint256(1) << proof.length), stateHash));
        // Another interval changes the step bound into every leaf but leaf 0.
        if (index != 0) assertFalse(lib.verify(proof, root, totalSteps * 2, interval * 2, index, stateHash));
        assertFalse(lib.verify(proof, root, totalSteps, 0, index, stateHash));
        bytes32[] memory longer = new bytes32[](proof.length + 1);
        for (uint256 i; i < proof.length; ++i) {
            longer[i] = proof[i];
        }
        assertFalse(lib.verify(longer, root, totalSteps, interval, index, stateHash));
    }

    function test_verify_everyIndex_succeeds() public {
        testFuzz_verify_everyIndex_succeeds(8, 2, 5, "fixed");
    }

    /// @notice An attacker's tree: leaf hashes in tree order, and for each position the checkpoint
    ///         index and state the attacker would prove with it.
    struct AttackTree {
        bytes32[] leaves;
        uint256[] indexOf;
        bytes32[] stateAt;
    }

    /// @notice The job's M + 1 honest leaves at their positions, then `extra` leaves of another
    ///         trajectory for indices from..M (with their own index and step: the only leaves a
    ///         claim at that index could use), cycled.
    function _attackTree(uint256 segments, uint256 extra, uint256 from, uint256 interval, bytes32 salt)
        internal
        pure
        returns (AttackTree memory t)
    {
        bytes32[] memory honest = _states(segments + 1, salt);
        bytes32[] memory other = _states(segments + 1, keccak256(abi.encode(salt, "other")));
        bytes32[] memory honestLeaves = Merkle.leaves(interval, honest);
        uint256 size = segments + 1 + extra;
        t.leaves = new bytes32[](size);
        t.indexOf = new uint256[](size);
        t.stateAt = new bytes32[](size);
        for (uint256 p; p < size; ++p) {
            uint256 i = p <= segments ? p : from + (p - segments - 1) % (segments + 1 - from);
            t.indexOf[p] = i;
            t.stateAt[p] = p <= segments ? honest[i] : other[i];
            t.leaves[p] = p <= segments ? honestLeaves[p] : LibCheckpoint.leafHash(i, i * interval, other[i]);
        }
    }

    /// @notice The attacker's tree holds the job's M + 1 leaves and `extra` more (a second
    ///         trajectory, a smuggled (0, initHash)) after them, in a tree of the job's depth or
    ///         deeper. With any proof that tree yields, a state verifies only at its own position
    ///         i <= M (and only when the tree has the job's depth): one state per index.
    function testFuzz_verify_extraLeafNeverProvable_succeeds(
        uint256 segments,
        uint256 extra,
        uint256 from,
        bytes32 salt
    ) public {
        segments = bound(segments, 1, 20);
        extra = bound(extra, 1, 24);
        from = bound(from, 0, segments);
        AttackTree memory t = _attackTree(segments, extra, from, 3, salt);
        bytes32 root = Merkle.root(t.leaves);
        bool sameDepth = LibCheckpoint.depth(t.leaves.length) == LibCheckpoint.depth(segments + 1);
        for (uint256 p; p < t.leaves.length; ++p) {
            bool provable = lib.verify(Merkle.proof(t.leaves, p), root, segments * 3, 3, t.indexOf[p], t.stateAt[p]);
            if (p <= segments && sameDepth) {
                assertTrue(provable, "honest leaf of a same-depth tree not provable");
            } else {
                assertFalse(provable, "extra leaf provable");
            }
        }
    }

    /// @notice The splice of P-21 on a fixed tree: the attacker's tree holds both the honest state
    ///         and a backdoored one for checkpoint 5 (same depth as the job's tree); only the honest
    ///         one is provable at index 5.
    function test_verify_twoStatesForOneStep_succeeds() public {
        uint256 segments = 8;
        uint256 interval = 2;
        bytes32[] memory honest = _states(segments + 1, "honest");
        bytes32 backdoor = keccak256("backdoored checkpoint 5");
        bytes32[] memory tree = new bytes32[](segments + 2);
        bytes32[] memory leaves = Merkle.leaves(interval, honest);
        for (uint256 i; i <= segments; ++i) {
            tree[i] = leaves[i];
        }
        tree[segments + 1] = LibCheckpoint.leafHash(5, 5 * interval, backdoor);
        bytes32 root = Merkle.root(tree);
        assertTrue(lib.verify(Merkle.proof(tree, 5), root, segments * interval, interval, 5, honest[5]));
        assertFalse(lib.verify(Merkle.proof(tree, segments + 1), root, segments * interval, interval, 5, backdoor));
        assertFalse(lib.verify(Merkle.proof(tree, 5), root, segments * interval, interval, 5, backdoor));
    }

    /// @notice The checkpoints picked by `bits` (bit i = checkpoint i), at least one, and their states.
    function _picked(bytes32[] memory states, uint256 bits)
        internal
        pure
        returns (uint256[] memory indices, bytes32[] memory hashes)
    {
        uint256 count;
        for (uint256 i; i < states.length; ++i) {
            if ((bits >> i) & 1 == 1) ++count;
        }
        indices = new uint256[](count);
        hashes = new bytes32[](count);
        count = 0;
        for (uint256 i; i < states.length; ++i) {
            if ((bits >> i) & 1 == 1) (indices[count], hashes[count++]) = (i, states[i]);
        }
    }

    /// @notice A job tree and the checkpoints a multiproof proves.
    struct MultiCase {
        bytes32 root;
        uint256 steps;
        uint256 interval;
        uint256[] indices;
        bytes32[] hashes;
    }

    function _verifies(MultiCase memory c, bytes32[] memory proof) internal view returns (bool) {
        return lib.verifyMulti(proof, c.root, c.steps, c.interval, c.indices, c.hashes);
    }

    /// @notice Any set of an honest tree's checkpoints verifies by its multiproof, which carries no
    ///         more hashes than their single proofs; any one state changed, any one proof hash changed,
    ///         or a hash dropped or added, and it does not.
    function testFuzz_verifyMulti_anySubset_succeeds(uint256 segments, uint256 interval, uint256 bits, bytes32 salt)
        public
    {
        segments = bound(segments, 0, 70);
        MultiCase memory c;
        c.interval = bound(interval, 1, 1000);
        c.steps = segments * c.interval;
        bits = bound(bits, 1, (uint256(1) << (segments + 1)) - 1);
        bytes32[] memory states = _states(segments + 1, salt);
        bytes32[] memory leaves = Merkle.leaves(c.interval, states);
        c.root = Merkle.root(leaves);
        (c.indices, c.hashes) = _picked(states, bits);
        bytes32[] memory proof = Merkle.multiproof(leaves, c.indices);
        assertLte(proof.length, c.indices.length * LibCheckpoint.depth(segments + 1), "longer than single proofs");
        assertTrue(_verifies(c, proof), "honest multiproof refused");

        uint256 which = uint256(salt) % c.indices.length;
        c.hashes[which] = keccak256(abi.encode(c.hashes[which]));
        assertFalse(_verifies(c, proof), "changed state accepted");
        c.hashes[which] = states[c.indices[which]];
        bytes32[] memory longer = new bytes32[](proof.length + 1);
        for (uint256 i; i < proof.length; ++i) {
            longer[i] = proof[i];
        }
        assertFalse(_verifies(c, longer), "extra hash accepted");
        if (proof.length == 0) return;
        uint256 changed = uint256(keccak256(abi.encode(salt))) % proof.length;
        proof[changed] = keccak256(abi.encode(proof[changed]));
        assertFalse(_verifies(c, proof), "changed proof hash accepted");
        assertFalse(_verifies(c, new bytes32[](proof.length - 1)), "short proof accepted");
    }

    /// @notice The positions come from the indices the caller derives, so they must be real
    ///         checkpoints, each once, in order: a repeated, decreasing or padding index is refused
    ///         even with the tree's own hashes.
    function test_verifyMulti_badIndicesRefused_succeeds() public {
        uint256 interval = 3;
        bytes32[] memory states = _states(6, "indices"); // M = 5, depth 3, padding 6 and 7
        bytes32[] memory leaves = Merkle.leaves(interval, states);
        bytes32 root = Merkle.root(leaves);
        uint256[] memory indices = new uint256[](2);
        bytes32[] memory hashes = new bytes32[](2);
        (indices[0], indices[1], hashes[0], hashes[1]) = (1, 4, states[1], states[4]);
        bytes32[] memory proof = Merkle.multiproof(leaves, indices);
        assertTrue(lib.verifyMulti(proof, root, 5 * interval, interval, indices, hashes), "honest refused");
        (indices[0], indices[1], hashes[0], hashes[1]) = (4, 1, states[4], states[1]);
        assertFalse(lib.verifyMulti(proof, root, 5 * interval, interval, indices, hashes), "decreasing accepted");
        (indices[0], indices[1], hashes[0], hashes[1]) = (1, 1, states[1], states[1]);
        assertFalse(lib.verifyMulti(proof, root, 5 * interval, interval, indices, hashes), "repeat accepted");
        // Index 6 is a padding position (its leaf is ZERO_LEAF); the job has checkpoints 0..5 only.
        (indices[0], indices[1], hashes[0], hashes[1]) = (5, 6, states[5], bytes32(0));
        assertFalse(lib.verifyMulti(proof, root, 5 * interval, interval, indices, hashes), "padding accepted");
        assertFalse(
            lib.verifyMulti(proof, root, 5 * interval, interval, new uint256[](0), new bytes32[](0)), "empty accepted"
        );
    }
}
