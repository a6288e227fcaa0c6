// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

// Libraries
import {PRBTest} from "@prb/test/PRBTest.sol";
import {VmExt} from "./utils/VmExt.sol";
import {Deploy} from "../script/Deploy.sol";

/// @title DeployOrder_Test
/// @notice Deploy.sol against the declarative deployment table (contracts/script/deployment.json) that
///         the Python deployer (chain/deploy.py) executes: Deploy creates the table's contracts in
///         exactly its order (each at the CREATE address of its nonce) and leaves the state of every
///         wiring call. The library steps (LibSettlement, LibAssignment, LibPosting) are Forge's to link here, so they
///         use no nonce of ours.
contract DeployOrder_Test is PRBTest {
    ////// Constants //////

    VmExt internal constant VM = VmExt(address(uint160(uint256(keccak256("hevm cheat code")))));
    string internal constant TABLE = "contracts/script/deployment.json";

    ////// State //////

    string internal _json;
    string[] internal _kinds;
    string[] internal _names;
    string[] internal _variants;
    string[] internal _functions;

    ////// Setup //////

    function setUp() public {
        _json = VM.readFile(TABLE);
        for (uint256 i; VM.keyExistsJson(_json, _key(i, "kind")); ++i) {
            _kinds.push(VM.parseJsonString(_json, _key(i, "kind")));
            _names.push(VM.parseJsonString(_json, _key(i, "name")));
            _variants.push(VM.parseJsonString(_json, _key(i, "variant")));
            _functions.push(VM.parseJsonString(_json, _key(i, "function")));
        }
    }

    ////// Tests //////

    function test_deploy_committeeFollowsTheTable_succeeds() public {
        _checkVariant(Deploy.AdjudicatorKind.Committee, "committee");
    }

    function test_deploy_bisectionFollowsTheTable_succeeds() public {
        _checkVariant(Deploy.AdjudicatorKind.Bisection, "bisection");
    }

    function test_table_hasOneEntryPerField_succeeds() public {
        assertEq(_kinds.length, _names.length);
        assertEq(_kinds.length, _variants.length);
        assertEq(_kinds.length, _functions.length);
        assertEq(_kinds.length, 16);
    }

    ////// Internal //////

    function _checkVariant(Deploy.AdjudicatorKind kind, string memory variant) internal {
        Deploy.Config memory cfg = Deploy.defaultConfig();
        cfg.adjudicator = kind;
        uint256 nonce0 = VM.getNonce(address(this));
        Deploy.Deployment memory d = Deploy.deploy(cfg);

        uint256 created;
        for (uint256 i; i < _kinds.length; ++i) {
            if (!_applies(_variants[i], variant)) continue;
            if (_eq(_kinds[i], "deploy")) {
                address expected = VM.computeCreateAddress(address(this), nonce0 + created);
                assertEq(_addressOf(d, _names[i]), expected, string.concat("deploy order: ", _names[i]));
                ++created;
            } else if (_eq(_kinds[i], "call")) {
                _checkCall(d, i);
            } else {
                assertTrue(_eq(_kinds[i], "library"), "unknown step kind");
            }
        }
        assertEq(VM.getNonce(address(this)), nonce0 + created, "Deploy creates nothing the table lacks");
        // The JobManager's immutable round (`~verificationRound` in the table) is the deployed one.
        assertEq(address(d.jobManager.verificationRound()), address(d.verificationRound), "round");
        // The ShareRegistry's immutable minters (`~jobManager`, `~runRegistry`) are the deployed ones.
        assertEq(d.shareRegistry.minter(), address(d.jobManager), "minter");
        assertEq(d.shareRegistry.runMinter(), address(d.runRegistry), "run minter");
        // The StakeManager's and the Escrow's immutable protocol contracts are the deployed ones
        // (the game zero without it: `~bisectionGame?`).
        (address jm, address committee, address runs) = d.stakeManager.protocols();
        assertEq(jm, address(d.jobManager), "stake: job manager");
        assertEq(committee, address(d.committee), "stake: committee");
        assertEq(runs, address(d.runRegistry), "stake: run registry");
        address game;
        (jm, game, runs) = d.escrow.protocols();
        assertEq(jm, address(d.jobManager), "escrow: job manager");
        assertEq(game, address(d.bisectionGame), "escrow: game");
        assertEq(runs, address(d.runRegistry), "escrow: run registry");
    }

    function _checkCall(Deploy.Deployment memory d, uint256 i) internal {
        string[] memory args = VM.parseJsonStringArray(_json, _key(i, "args"));
        string memory fn = _functions[i];
        if (_eq(fn, "setStepParent")) {
            assertEq(d.committee.stepParent(), _addressOf(d, args[0]));
        } else if (_eq(fn, "setClaimParent")) {
            assertEq(d.committee.claimParent(), _addressOf(d, args[0]));
        } else if (_eq(fn, "setAdjudicator")) {
            assertEq(address(d.jobManager.adjudicator()), _addressOf(d, args[0]));
        } else {
            revert(string.concat("no check for table call ", fn));
        }
    }

    function _addressOf(Deploy.Deployment memory d, string memory name) internal pure returns (address addr) {
        if (_eq(name, "token")) return address(d.token);
        if (_eq(name, "stakeManager")) return address(d.stakeManager);
        if (_eq(name, "shareRegistry")) return address(d.shareRegistry);
        if (_eq(name, "escrow")) return address(d.escrow);
        if (_eq(name, "jobManager")) return address(d.jobManager);
        if (_eq(name, "verificationRound")) return address(d.verificationRound);
        if (_eq(name, "committee")) return address(d.committee);
        if (_eq(name, "bisectionGame")) return address(d.bisectionGame);
        if (_eq(name, "runRegistry")) return address(d.runRegistry);
        revert(string.concat("no deployment named ", name));
    }

    function _key(uint256 i, string memory field) internal pure returns (string memory key) {
        key = string.concat(".steps[", VM.toString(i), "].", field);
    }

    function _applies(string memory stepVariant, string memory variant) internal pure returns (bool) {
        return _eq(stepVariant, "all") || _eq(stepVariant, variant);
    }

    function _eq(string memory a, string memory b) internal pure returns (bool) {
        return keccak256(bytes(a)) == keccak256(bytes(b));
    }
}
