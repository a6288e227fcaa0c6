// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

// Testing
import {PostKind} from "../src/types/LineageTypes.sol";
import {Deployers} from "./utils/Deployers.sol";
import {Vm} from "@prb/test/Vm.sol";
// Contracts
import {ModelShares} from "../src/ModelShares.sol";
import {ShareRegistry} from "../src/ShareRegistry.sol";
// Interfaces
import {IAccessControl} from "@openzeppelin/contracts/access/IAccessControl.sol";
import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {IModelShares} from "../src/interfaces/IModelShares.sol";
import {IShareRegistry} from "../src/interfaces/IShareRegistry.sol";

contract ShareRegistry_Minters_Test is Deployers {
    function test_constructor_zeroAddress_reverts() public {
        address runMinter = registry.runMinter();
        vm.expectRevert(IShareRegistry.ZeroAddress.selector);
        new ShareRegistry(IERC20(address(0)), 1, address(jobManager), runMinter);
        // No registry without its minters: both are immutables given at construction.
        vm.expectRevert(IShareRegistry.ZeroAddress.selector);
        new ShareRegistry(token, 1, address(0), runMinter);
        vm.expectRevert(IShareRegistry.ZeroAddress.selector);
        new ShareRegistry(token, 1, address(jobManager), address(0));
    }

    /// @notice The minters given at construction are the deployed JobManager and RunRegistry, and
    ///         nobody else reports a job: not the deployer (the registry has no admin and no setter
    ///         re-points them), not the run minter.
    function test_minters_areTheDeployedOnes_succeeds() public {
        address runMinter = registry.runMinter();
        assertEq(registry.minter(), address(jobManager));
        assertTrue(runMinter.code.length != 0, "the RunRegistry is deployed at the run minter");
        vm.expectRevert(abi.encodeWithSelector(IShareRegistry.NotMinter.selector, address(this)));
        registry.recordFinalized(0, 1, PostKind.LineageSlot, 1);
        vm.expectRevert(abi.encodeWithSelector(IShareRegistry.NotMinter.selector, runMinter));
        vm.prank(runMinter);
        registry.recordFinalized(0, 1, PostKind.LineageSlot, 1);
    }

    /// @notice The lineage window is the JobManager's openWindow, read through its one-word view
    ///         (`openWindow`, what every finalize of a slot job asks) that equals `params()`'.
    function test_lineageWindow_isTheOpenWindow_succeeds() public {
        assertEq(jobManager.openWindow(), params.openWindow);
        assertEq(jobManager.openWindow(), jobManager.params().openWindow);
        assertEq(registry.lineageWindow(), params.openWindow);
    }
}

contract ShareRegistry_MintShares_Test is Deployers {
    function test_constructor_zeroMaxSegmentCompute_reverts() public {
        vm.expectRevert(abi.encodeWithSelector(IShareRegistry.ZeroModelCommitment.selector, "maxSegmentCompute"));
        new ShareRegistry(token, 0, address(jobManager), address(jobManager));
    }

    function test_registerModel_createsSharesToken_succeeds() public {
        bytes32 other = keccak256("other-model");
        vm.expectEmit(false, false, false, false, address(registry));
        emit IShareRegistry.ModelCreated(other, address(0));
        vm.prank(stranger);
        registry.registerModel(other, ARCHITECTURE, FAMILY, 1, INIT_HASH);
        ModelShares model = ModelShares(registry.sharesOf(other));
        assertNotEq(address(model), address(0), "no token at registration");
        assertEq(model.totalSupply(), 0);
        assertEq(model.modelId(), other);
        assertEq(registry.modelAt(registry.modelCount() - 1), other);
        // Revenue paid before any contributor holds shares would be stranded: it reverts.
        vm.prank(stranger);
        token.approve(address(model), 1e18);
        vm.expectRevert(IModelShares.NoSharesOutstanding.selector);
        vm.prank(stranger);
        model.payRevenue(1e18);
    }

    /// @notice The job posted from the head takes its slot at post; its finalization mints nothing
    ///         (the shares wait for its final state on the lineage) and opens the lineage window.
    function test_recordFinalized_slotJob_opensTheWindow_succeeds() public {
        address shares = registry.sharesOf(MODEL_ID);
        assertNotEq(shares, address(0), "registered model without a token");
        uint256 models = registry.modelCount();
        vm.recordLogs();
        vm.startPrank(address(jobManager));
        (PostKind kind, uint32 index) = registry.recordPost(MODEL_ID, 1, SPEC_HASH, INIT_HASH, 1, false);
        assertEq(uint8(kind), uint8(PostKind.LineageSlot), "the head's first job takes the slot");
        assertEq(registry.modelAt(index), MODEL_ID, "the post's index lists another model");
        assertEq(registry.recordFinalized(index, 1, kind, 16), 16);
        vm.stopPrank();
        Vm.Log[] memory logs = vm.getRecordedLogs();
        for (uint256 i; i < logs.length; ++i) {
            assertNotEq(logs[i].topics[0], IShareRegistry.ModelCreated.selector, "a second token");
        }
        assertEq(registry.sharesOf(MODEL_ID), shares, "token replaced");
        (uint256 slotJob, uint64 extendBy) = registry.slotOf(MODEL_ID);
        assertEq(slotJob, 1);
        assertEq(uint256(extendBy), block.timestamp + registry.lineageWindow());
        assertEq(uint256(registry.lineageWindow()), uint256(jobManager.params().openWindow));
        assertEq(registry.modelCount(), models, "model listed twice");
        assertEq(registry.modelAt(0), MODEL_ID);
        ModelShares model = ModelShares(shares);
        assertEq(model.balanceOf(solver), 0, "minted before the lineage grew");
        assertEq(model.totalSupply(), 0);
        assertEq(uint256(model.decimals()), 0);
        assertEq(model.modelId(), MODEL_ID);
        assertEq(address(model.paymentToken()), address(token));
        assertEq(model.registry(), address(registry));
        assertEq(address(registry.paymentToken()), address(token));
    }

    /// @notice A second job from the head while the slot is held is paid only from its post: it
    ///         says so at post and its finalization (even first) mints and holds nothing.
    function test_recordPost_slotHeld_paidOnly_succeeds() public {
        vm.startPrank(address(jobManager));
        vm.expectEmit(address(registry));
        emit IShareRegistry.LineageSlotTaken(MODEL_ID, 1, INIT_HASH);
        (PostKind first,) = registry.recordPost(MODEL_ID, 1, SPEC_HASH, INIT_HASH, 1, false);
        vm.expectEmit(address(registry));
        emit IShareRegistry.PaidOnlyPosted(MODEL_ID, 2, INIT_HASH, 1);
        (PostKind second, uint32 index) = registry.recordPost(MODEL_ID, 2, keccak256("other spec"), INIT_HASH, 1, false);
        vm.expectEmit(address(registry));
        emit IShareRegistry.OffLineage(MODEL_ID, 2);
        assertEq(registry.recordFinalized(index, 2, second, 8), 0);
        vm.stopPrank();
        assertEq(ModelShares(registry.sharesOf(MODEL_ID)).totalSupply(), 0);
        (uint256 slotJob, uint64 extendBy) = registry.slotOf(MODEL_ID);
        assertEq(slotJob, 1);
        assertEq(uint256(extendBy), 0, "the slot job has not finalized");
        assertEq(uint8(first), uint8(PostKind.LineageSlot));
        assertEq(uint8(second), uint8(PostKind.PaidOnly));
    }

    /// @notice A job keeps its model's index, not its id: a second model's post returns its own
    ///         index, and its finalization and `getJob` name that model, not the first one.
    function test_recordPost_secondModel_indexNamesIt_succeeds() public {
        bytes32 other = keccak256("other-model");
        vm.prank(stranger);
        registry.registerModel(other, ARCHITECTURE, FAMILY, 1, INIT_HASH);
        vm.startPrank(address(jobManager));
        (PostKind kind, uint32 index) = registry.recordPost(other, 7, SPEC_HASH, INIT_HASH, 1, false);
        (, uint32 firstIndex) = registry.recordPost(MODEL_ID, 8, SPEC_HASH, INIT_HASH, 1, false);
        assertEq(uint256(index), registry.modelCount() - 1, "not the second model's index");
        assertEq(uint256(firstIndex), 0, "the first model moved");
        vm.expectEmit(address(registry));
        emit IShareRegistry.SlotJobFinalized(other, 7, uint64(block.timestamp) + registry.lineageWindow(), 4);
        registry.recordFinalized(index, 7, kind, 4);
        vm.stopPrank();
        (uint256 slotJob,) = registry.slotOf(other);
        assertEq(slotJob, 7);
        (slotJob,) = registry.slotOf(MODEL_ID);
        assertEq(slotJob, 8, "the first model's slot");
    }

    function test_recordFinalized_notMinter_reverts() public {
        vm.expectRevert(abi.encodeWithSelector(IShareRegistry.NotMinter.selector, stranger));
        vm.prank(stranger);
        registry.recordFinalized(0, 1, PostKind.LineageSlot, 1);
    }

    function test_recordPost_notMinter_reverts() public {
        vm.expectRevert(abi.encodeWithSelector(IShareRegistry.NotMinter.selector, stranger));
        vm.prank(stranger);
        registry.recordPost(MODEL_ID, 1, SPEC_HASH, INIT_HASH, 1, false);
    }

    function test_mint_notRegistry_reverts() public {
        ModelShares model = ModelShares(registry.sharesOf(MODEL_ID));
        vm.expectRevert(abi.encodeWithSelector(IModelShares.NotRegistry.selector, stranger));
        vm.prank(stranger);
        model.mint(stranger, 1);
    }
}

contract ShareRegistry_Models_Test is Deployers {
    bytes32 internal constant OTHER_MODEL = keccak256("other-model");

    function test_registerModel_firstComeOwns_succeeds() public {
        vm.expectEmit(address(registry));
        emit IShareRegistry.ModelRegistered(OTHER_MODEL, stranger, ARCHITECTURE, FAMILY, 7, INIT_HASH);
        vm.prank(stranger);
        registry.registerModel(OTHER_MODEL, ARCHITECTURE, FAMILY, 7, INIT_HASH);
        assertEq(registry.modelOwner(OTHER_MODEL), stranger);
        (bytes32 architecture, bytes32 family, uint64 computePerStep, bytes32 seedState) =
            registry.modelSpecOf(OTHER_MODEL);
        assertEq(architecture, ARCHITECTURE);
        assertEq(family, FAMILY);
        assertEq(computePerStep, 7);
        assertEq(seedState, INIT_HASH);
        assertEq(registry.headOf(OTHER_MODEL), INIT_HASH);
        assertEq(registry.lineageLength(OTHER_MODEL), 0);
        assertTrue(registry.canPost(OTHER_MODEL, stranger));
        assertFalse(registry.canPost(OTHER_MODEL, submitter));
    }

    function test_registerModel_taken_reverts() public {
        vm.expectRevert(abi.encodeWithSelector(IShareRegistry.ModelAlreadyRegistered.selector, MODEL_ID, submitter));
        vm.prank(stranger);
        registry.registerModel(MODEL_ID, ARCHITECTURE, FAMILY, 1, INIT_HASH);
    }

    function test_registerModel_zeroId_reverts() public {
        vm.expectRevert(IShareRegistry.ZeroModelId.selector);
        registry.registerModel(bytes32(0), ARCHITECTURE, FAMILY, 1, INIT_HASH);
    }

    function test_registerModel_zeroCommitment_reverts() public {
        vm.expectRevert(abi.encodeWithSelector(IShareRegistry.ZeroModelCommitment.selector, "architecture"));
        registry.registerModel(OTHER_MODEL, bytes32(0), FAMILY, 1, INIT_HASH);
        vm.expectRevert(abi.encodeWithSelector(IShareRegistry.ZeroModelCommitment.selector, "family"));
        registry.registerModel(OTHER_MODEL, ARCHITECTURE, bytes32(0), 1, INIT_HASH);
        vm.expectRevert(abi.encodeWithSelector(IShareRegistry.ZeroModelCommitment.selector, "computePerStep"));
        registry.registerModel(OTHER_MODEL, ARCHITECTURE, FAMILY, 0, INIT_HASH);
        vm.expectRevert(abi.encodeWithSelector(IShareRegistry.ZeroModelCommitment.selector, "seedState"));
        registry.registerModel(OTHER_MODEL, ARCHITECTURE, FAMILY, 1, bytes32(0));
    }

    function test_canPost_unregistered_succeeds() public {
        assertFalse(registry.canPost(OTHER_MODEL, stranger));
        assertFalse(registry.canPost(OTHER_MODEL, address(0)));
    }

    function test_authorizePoster_notOwner_reverts() public {
        vm.expectRevert(abi.encodeWithSelector(IShareRegistry.NotModelOwner.selector, MODEL_ID, stranger));
        vm.prank(stranger);
        registry.authorizePoster(MODEL_ID, stranger);
    }

    function test_authorizePoster_unregistered_reverts() public {
        vm.expectRevert(abi.encodeWithSelector(IShareRegistry.NotModelOwner.selector, OTHER_MODEL, stranger));
        vm.prank(stranger);
        registry.authorizePoster(OTHER_MODEL, stranger);
    }

    function test_authorizePoster_thenRevoke_succeeds() public {
        vm.expectEmit(address(registry));
        emit IShareRegistry.PosterAuthorized(MODEL_ID, stranger);
        vm.prank(submitter);
        registry.authorizePoster(MODEL_ID, stranger);
        assertTrue(registry.isPoster(MODEL_ID, stranger));
        assertTrue(registry.canPost(MODEL_ID, stranger));
        vm.expectEmit(address(registry));
        emit IShareRegistry.PosterRevoked(MODEL_ID, stranger);
        vm.prank(submitter);
        registry.revokePoster(MODEL_ID, stranger);
        assertFalse(registry.canPost(MODEL_ID, stranger));
    }

    function test_authorizePoster_twice_reverts() public {
        vm.startPrank(submitter);
        registry.authorizePoster(MODEL_ID, stranger);
        vm.expectRevert(abi.encodeWithSelector(IShareRegistry.PosterAlreadyAuthorized.selector, MODEL_ID, stranger));
        registry.authorizePoster(MODEL_ID, stranger);
        vm.stopPrank();
    }

    function test_authorizePoster_zero_reverts() public {
        vm.expectRevert(IShareRegistry.ZeroAddress.selector);
        vm.prank(submitter);
        registry.authorizePoster(MODEL_ID, address(0));
    }

    function test_revokePoster_notAuthorized_reverts() public {
        vm.expectRevert(abi.encodeWithSelector(IShareRegistry.PosterNotAuthorized.selector, MODEL_ID, stranger));
        vm.prank(submitter);
        registry.revokePoster(MODEL_ID, stranger);
    }

    function test_transferModelOwnership_twoSteps_succeeds() public {
        vm.prank(submitter);
        registry.authorizePoster(MODEL_ID, whistleblower);
        vm.expectEmit(address(registry));
        emit IShareRegistry.ModelOwnershipTransferStarted(MODEL_ID, submitter, stranger);
        vm.prank(submitter);
        registry.transferModelOwnership(MODEL_ID, stranger);
        assertEq(registry.pendingModelOwner(MODEL_ID), stranger);
        assertEq(registry.modelOwner(MODEL_ID), submitter);
        vm.expectEmit(address(registry));
        emit IShareRegistry.ModelOwnershipTransferred(MODEL_ID, submitter, stranger);
        vm.prank(stranger);
        registry.acceptModelOwnership(MODEL_ID);
        assertEq(registry.modelOwner(MODEL_ID), stranger);
        assertEq(registry.pendingModelOwner(MODEL_ID), address(0));
        assertFalse(registry.canPost(MODEL_ID, submitter));
        // The previous owner's poster lapsed with the hand-over.
        assertFalse(registry.isPoster(MODEL_ID, whistleblower));
        assertFalse(registry.canPost(MODEL_ID, whistleblower));
    }

    function test_acceptModelOwnership_notPending_reverts() public {
        vm.prank(submitter);
        registry.transferModelOwnership(MODEL_ID, stranger);
        vm.expectRevert(abi.encodeWithSelector(IShareRegistry.NotPendingModelOwner.selector, MODEL_ID, whistleblower));
        vm.prank(whistleblower);
        registry.acceptModelOwnership(MODEL_ID);
    }

    function test_acceptModelOwnership_nonePending_reverts() public {
        vm.expectRevert(abi.encodeWithSelector(IShareRegistry.NotPendingModelOwner.selector, MODEL_ID, address(0)));
        vm.prank(address(0));
        registry.acceptModelOwnership(MODEL_ID);
    }

    function test_transferModelOwnership_notOwner_reverts() public {
        vm.expectRevert(abi.encodeWithSelector(IShareRegistry.NotModelOwner.selector, MODEL_ID, stranger));
        vm.prank(stranger);
        registry.transferModelOwnership(MODEL_ID, stranger);
    }
}
