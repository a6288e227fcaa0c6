// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

// Contracts
import {ERC20} from "@openzeppelin/contracts/token/ERC20/ERC20.sol";
import {ReentrancyGuardTransient} from "@openzeppelin/contracts/utils/ReentrancyGuardTransient.sol";
// Libraries
import {Clones} from "@openzeppelin/contracts/proxy/Clones.sol";
import {SafeERC20} from "@openzeppelin/contracts/token/ERC20/utils/SafeERC20.sol";
import {SafeCast} from "@openzeppelin/contracts/utils/math/SafeCast.sol";
// Interfaces
import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {IModelShares} from "./interfaces/IModelShares.sol";

/// @title ModelShares
/// @notice Ownership shares of one model: ERC-20 with 0 decimals, 1 share = 1 verified step.
///         Revenue paid in the payment token is claimable pro rata (pull).
/// @dev Dividend accounting with a magnified revenue-per-share accumulator:
///      accumulated(a) = (M * balance(a) + correction(a)) / MAGNITUDE, where M is the cumulative
///      revenue per share times MAGNITUDE. `_update` adjusts both parties' corrections by
///      M * value, so a transfer moves shares but never revenue already earned.
///      Rounding only ever leaves dust in the contract (paid out <= paid in).
///      Deployment: the ShareRegistry deploys one implementation at its own construction and gives
///      each model an EIP-1167 clone of it carrying the model id as its immutable argument
///      (OpenZeppelin `Clones.cloneWithImmutableArgs`, 32 bytes): about 60k gas per model instead of
///      deploying the whole token (~0.9 M). The payment token and the registry are the same for every
///      model, so they stay immutables of the implementation, read by every clone's delegatecall.
///      Name and symbol are constants (a clone has no constructor to write them to storage). The
///      implementation itself is never minted into and its `modelId()` is meaningless.
contract ModelShares is ERC20, ReentrancyGuardTransient, IModelShares {
    using SafeERC20 for IERC20;
    using SafeCast for uint256;
    using SafeCast for int256;

    ////// Constants / Immutables //////

    /// @notice Fixed-point scale of the revenue-per-share accumulator.
    /// @dev 2**64 keeps M * balance far below 2**255 for any realistic revenue and supply.
    uint256 internal constant MAGNITUDE = 2 ** 64;

    /// @notice ERC-20 name of every model's shares.
    string internal constant _NAME = "Veritrain Model Shares";

    /// @notice ERC-20 symbol of every model's shares.
    string internal constant _SYMBOL = "VMS";

    /// @notice Payment token.
    IERC20 internal immutable _PAYMENT_TOKEN;

    /// @notice ShareRegistry, the only minter.
    address internal immutable _REGISTRY;

    ////// State //////

    /// @notice Cumulative revenue per share times MAGNITUDE.
    uint256 internal _magnifiedRevenuePerShare;

    /// @notice Per-account corrections (see contract @dev).
    mapping(address account => int256 correction) internal _corrections;

    /// @notice Revenue already claimed per account (wei).
    mapping(address account => uint256 amount) internal _claimed;

    /// @notice Revenue paid in so far (wei).
    uint256 internal _totalRevenuePaid;

    /// @notice Revenue claimed so far (wei).
    uint256 internal _totalRevenueClaimed;

    ////// Modifiers //////

    modifier onlyRegistry() {
        if (msg.sender != _REGISTRY) revert NotRegistry(msg.sender);
        _;
    }

    ////// Constructor //////

    /// @notice Deploys the implementation every model's clone delegates to.
    /// @param paymentToken_ Token revenue is paid in.
    /// @param registry_ ShareRegistry allowed to mint.
    constructor(IERC20 paymentToken_, address registry_) ERC20(_NAME, _SYMBOL) {
        _PAYMENT_TOKEN = paymentToken_;
        _REGISTRY = registry_;
    }

    ////// External //////

    /// @inheritdoc IModelShares
    function mint(address to, uint256 amount) external onlyRegistry {
        _mint(to, amount);
    }

    /// @inheritdoc IModelShares
    function payRevenue(uint256 amount) external nonReentrant {
        if (amount == 0) revert ZeroRevenue();
        uint256 supply = totalSupply();
        if (supply == 0) revert NoSharesOutstanding();
        _magnifiedRevenuePerShare += amount * MAGNITUDE / supply;
        _totalRevenuePaid += amount;
        emit RevenuePaid(msg.sender, amount, _magnifiedRevenuePerShare);
        _PAYMENT_TOKEN.safeTransferFrom(msg.sender, address(this), amount);
    }

    /// @inheritdoc IModelShares
    function claimRevenue() external nonReentrant {
        uint256 amount = revenueOf(msg.sender);
        if (amount == 0) revert NoRevenueToClaim(msg.sender);
        _claimed[msg.sender] += amount;
        _totalRevenueClaimed += amount;
        // INVARIANT: _totalRevenueClaimed <= _totalRevenuePaid (rounding is always down).
        emit RevenueClaimed(msg.sender, amount);
        _PAYMENT_TOKEN.safeTransfer(msg.sender, amount);
    }

    /// @inheritdoc IModelShares
    function modelId() external view returns (bytes32) {
        // The clone's immutable argument: abi.encode(modelId), set by the registry at creation.
        return abi.decode(Clones.fetchCloneArgs(address(this)), (bytes32));
    }

    /// @inheritdoc IModelShares
    function paymentToken() external view returns (IERC20) {
        return _PAYMENT_TOKEN;
    }

    /// @inheritdoc IModelShares
    function registry() external view returns (address) {
        return _REGISTRY;
    }

    /// @inheritdoc IModelShares
    function totalRevenuePaid() external view returns (uint256 amount) {
        amount = _totalRevenuePaid;
    }

    /// @inheritdoc IModelShares
    function totalRevenueClaimed() external view returns (uint256 amount) {
        amount = _totalRevenueClaimed;
    }

    /// @inheritdoc IModelShares
    function ownershipBps(address account) external view returns (uint256 bps) {
        uint256 supply = totalSupply();
        if (supply == 0) return 0;
        bps = balanceOf(account) * 10_000 / supply;
    }

    ////// Public //////

    /// @notice ERC-20 name, the same for every model (a constant: clones have no storage set up).
    /// @return The name.
    function name() public pure override returns (string memory) {
        return _NAME;
    }

    /// @notice ERC-20 symbol, the same for every model.
    /// @return The symbol.
    function symbol() public pure override returns (string memory) {
        return _SYMBOL;
    }

    /// @notice Shares have no fractional part: 1 share = 1 verified step.
    /// @return 0.
    function decimals() public pure override returns (uint8) {
        return 0;
    }

    /// @inheritdoc IModelShares
    function revenueOf(address account) public view returns (uint256 amount) {
        int256 magnified = (_magnifiedRevenuePerShare * balanceOf(account)).toInt256() + _corrections[account];
        // SAFETY: corrections only ever cancel revenue earned before the shares arrived, so the
        // magnified total is never negative.
        amount = magnified.toUint256() / MAGNITUDE - _claimed[account];
    }

    ////// Internal //////

    /// @notice Moves shares and keeps each party's earned revenue where it is.
    function _update(address from, address to, uint256 value) internal override {
        super._update(from, to, value);
        int256 delta = (_magnifiedRevenuePerShare * value).toInt256();
        if (from != address(0)) _corrections[from] += delta;
        if (to != address(0)) _corrections[to] -= delta;
    }
}
