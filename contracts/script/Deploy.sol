// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

// Contracts
import {ArbitrationCommittee} from "../src/ArbitrationCommittee.sol";
import {BisectionGame} from "../src/BisectionGame.sol";
import {Escrow} from "../src/Escrow.sol";
import {JobManager} from "../src/JobManager.sol";
import {RunRegistry} from "../src/RunRegistry.sol";
import {ShareRegistry} from "../src/ShareRegistry.sol";
import {StakeManager} from "../src/StakeManager.sol";
import {VeriToken} from "../src/VeriToken.sol";
import {VerificationRound} from "../src/VerificationRound.sol";
// Interfaces
import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {IArbitrationCommittee} from "../src/interfaces/IArbitrationCommittee.sol";
import {IJobManager} from "../src/interfaces/IJobManager.sol";
import {IAdjudicator} from "../src/interfaces/IAdjudicator.sol";
import {IEscrow} from "../src/interfaces/IEscrow.sol";
import {IShareRegistry} from "../src/interfaces/IShareRegistry.sol";
import {IStakeManager} from "../src/interfaces/IStakeManager.sol";
import {IStepAdjudicator} from "../src/interfaces/IStepAdjudicator.sol";
import {IVerificationRound} from "../src/interfaces/IVerificationRound.sol";
// Types
import {Params} from "../src/types/JobTypes.sol";

/// @notice The two Forge cheatcodes the deployment needs to know the VerificationRound's address
///         before deploying it (the JobManager takes it as an immutable): the caller's nonce and
///         the CREATE address it gives.
interface INonceCheats {
    /// @notice The nonce of `account`.
    function getNonce(address account) external view returns (uint64 nonce);

    /// @notice The address a CREATE by `deployer` at `nonce` gives.
    function computeCreateAddress(address deployer, uint256 nonce) external pure returns (address);
}

/// @title Deploy
/// @notice Deploys and wires the veritrain contracts. The Forge tests deploy through this library and
///         the Python deployer (chain.deploy) executes the same steps with web3 from the declarative
///         table script/deployment.json (test/DeployOrder.t.sol checks this library against it),
///         from one admin account (the caller here; the deployer EOA in Python):
///
///          1. token         = VeriToken()                             (skipped if a token is given)
///          2. stakeManager  = StakeManager(token, unbondingDelay, [minSolverStake, minVerifierStake,
///                                          minWhistleblowerStake], ~jobManager, ~committee,
///                                          ~runRegistry)
///                             (the protocol contracts to come: each the admin's CREATE address
///                             at its step's nonce, checked when it lands; no admin)
///          3. shareRegistry = ShareRegistry(token, maxSegmentCompute, ~jobManager, ~runRegistry)
///                             (the minters, given the same way; the registry has no admin)
///          4. escrow        = Escrow(token, ~jobManager, ~bisectionGame?, ~runRegistry)
///                             (the game's address with that adjudicator, else zero; no admin)
///          4b. libSettlement = LibSettlement                          (external library: deploy its
///                             bytecode, then link its address into the JobManager's bytecode at the
///                             `linkReferences` of contracts/out/JobManager.sol/JobManager.json;
///                             forge links it by itself in tests and scripts)
///          4c. libAssignment = LibAssignment                          (external library, linked the same way)
///          4d. libPosting    = LibPosting                             (external library, linked the same way)
///          5. jobManager    = JobManager(escrow, stakeManager, shareRegistry, ~round, params, admin)
///                             ~round = the address step 6 will get: the CREATE address of the
///                             admin at its next nonce (the JobManager keeps it as an immutable)
///                             params = (solverStake, verifierStake, challengeBond, verifierFee,
///                                       arbiterFee, jackpot, verifiersPerJob, samplesPerJob,
///                                       commitWindow, verdictWindow, revealWindow, challengeWindow,
///                                       claimsWindow, openWindow, maxTotalSteps, maxSegments,
///                                       maxSegmentSteps, maxReassignments)
///          6. round         = VerificationRound(jobManager, forcedErrorRateBps) (the very next
///                             deployment: it must land at ~round, checked)
///          8. committee     = ArbitrationCommittee(jobManager, stakeManager, committeeSize,
///                                                  voteCommitWindow, voteRevealWindow)
///          8d. runRegistry = RunRegistry(jobManager, committee, claimBond, claimChallengeWindow,
///                                        registrationWindow)
///          8e. committee.setClaimParent(runRegistry)                  (admin, once)
///          9. jobManager.setAdjudicator(committee)                    (admin, once)
///
///         With `adjudicator = Bisection` (docs/DISPUTES.md), steps 8-9 become:
///          8.  committee   = ArbitrationCommittee(...)                (as above; the step adjudicator)
///          8b. game        = BisectionGame(jobManager, committee, clockSeconds, moveBond)
///          8d as above (the RunRegistry must land where the StakeManager was told: no call of
///              the admin comes between the StakeManager and it)
///          8c. committee.setStepParent(game)                          (admin, once)
///          8e as above
///          9.  jobManager.setAdjudicator(game)                        (admin, once)
///
///         Every account approves the Escrow (not the JobManager) for job escrows, bonds and
///         `fundJackpot`, and claims every credit with `escrow.claimCredit()`.
///         `admin` is also the JobManager's treasury (rounding dust of dispute pots).
/// @dev A library with internal functions, so `address(this)` (the caller) is the admin, exactly as
///      the deployer EOA is in Python. No forge-std Script is available here.
library Deploy {
    ////// Constants //////

    /// @notice Default ShareRegistry.maxSegmentCompute (FLOP): a reference replay speed of 1e9 FLOP/s
    ///         for half of the default 30-minute verdict window (the rest is left for fetching
    ///         checkpoints and sealing), as chain/manifest.py checks for the Python deployments.
    uint256 internal constant MAX_SEGMENT_COMPUTE = 900e9;

    /// @notice Thrown when a contract was not deployed at the address an earlier one was given
    ///         (something else used the admin's nonce in between).
    /// @param name The deployment.
    /// @param expected The precomputed address the earlier contract keeps.
    /// @param deployed Where it landed.
    error AddressMismatch(string name, address expected, address deployed);

    /// @notice Forge's cheatcode address (HEVM_ADDRESS).
    INonceCheats internal constant CHEATS = INonceCheats(address(uint160(uint256(keccak256("hevm cheat code")))));

    ////// Types //////

    /// @notice Everything the deployment needs.
    /// @param token Existing payment token, or zero to deploy a VeriToken.
    /// @param unbondingDelay StakeManager unbonding delay (seconds).
    /// @param minStake Minimum stake per role [Solver, Verifier, Whistleblower] (wei).
    /// @param params JobManager parameters.
    /// @param forcedErrorRateBps VerificationRound forced-error rate (basis points of jobs, <= 10_000).
    /// @param committeeSize K arbiters per dispute.
    /// @param voteCommitWindow Commit phase length (seconds).
    /// @param voteRevealWindow Reveal phase length (seconds).
    /// @param adjudicator Which adjudicator the JobManager uses.
    /// @param clockSeconds Bisection game: chess clock per side (seconds).
    /// @param moveBond Bisection game: bond per move (wei).
    /// @param maxSegmentCompute ShareRegistry: most FLOP one segment may cost to replay
    ///        (checkpointInterval * computePerStep): reference replay speed x verdict window.
    /// @param claimBond RunRegistry: bond of a round claim and of its challenge (wei), >=
    ///        committeeSize * arbiterFee.
    /// @param claimChallengeWindow RunRegistry: how long a round claim can be challenged (seconds).
    /// @param registrationWindow RunRegistry: how long after a round opens its contributions may be
    ///        posted (seconds); the round's registration closes then, or when every seat is taken.
    struct Config {
        IERC20 token;
        uint64 unbondingDelay;
        uint256[3] minStake;
        Params params;
        uint256 forcedErrorRateBps;
        uint32 committeeSize;
        uint64 voteCommitWindow;
        uint64 voteRevealWindow;
        AdjudicatorKind adjudicator;
        uint64 clockSeconds;
        uint256 moveBond;
        uint256 maxSegmentCompute;
        uint256 claimBond;
        uint64 claimChallengeWindow;
        uint64 registrationWindow;
    }

    /// @notice The JobManager's adjudicator: the v0 committee on whole segments, or the bisection
    ///         game with the committee judging the last step.
    enum AdjudicatorKind {
        Committee,
        Bisection
    }

    /// @notice Addresses of a deployment (`bisectionGame` is zero with the committee adjudicator;
    ///         every variant deploys the `runRegistry`).
    struct Deployment {
        IERC20 token;
        StakeManager stakeManager;
        ShareRegistry shareRegistry;
        Escrow escrow;
        JobManager jobManager;
        VerificationRound verificationRound;
        ArbitrationCommittee committee;
        BisectionGame bisectionGame;
        RunRegistry runRegistry;
    }

    ////// Functions //////

    /// @notice Devnet defaults (the values the Python demo uses unless told otherwise).
    /// @return cfg Config with a fresh VeriToken.
    function defaultConfig() internal pure returns (Config memory cfg) {
        cfg.unbondingDelay = 1 days;
        cfg.minStake = [uint256(100e18), 100e18, 10e18];
        cfg.params = Params({
            solverStake: 100e18,
            verifierStake: 50e18,
            challengeBond: 10e18,
            verifierFee: 5e18,
            arbiterFee: 2e18,
            jackpot: 20e18,
            verifiersPerJob: 3,
            samplesPerJob: 4,
            commitWindow: 1 hours,
            verdictWindow: 30 minutes,
            revealWindow: 10 minutes,
            challengeWindow: 30 minutes,
            claimsWindow: 10 minutes,
            openWindow: 1 days,
            maxTotalSteps: 1_000_000,
            maxSegments: 4096,
            maxSegmentSteps: 10_000,
            maxReassignments: 2
        });
        cfg.forcedErrorRateBps = 0;
        cfg.committeeSize = 3;
        cfg.voteCommitWindow = 10 minutes;
        cfg.voteRevealWindow = 10 minutes;
        cfg.adjudicator = AdjudicatorKind.Committee;
        cfg.clockSeconds = 1 hours;
        cfg.moveBond = 1e18;
        cfg.maxSegmentCompute = MAX_SEGMENT_COMPUTE;
        cfg.claimBond = 100e18;
        cfg.claimChallengeWindow = 30 minutes;
        cfg.registrationWindow = 1 days;
    }

    /// @notice Deploys and wires everything; the caller becomes the admin of every contract.
    /// @param cfg Configuration.
    /// @return d Deployed contracts.
    function deploy(Config memory cfg) internal returns (Deployment memory d) {
        address admin = address(this);
        d.token = address(cfg.token) == address(0) ? IERC20(address(new VeriToken())) : cfg.token;
        // Each contract is one CREATE of the admin, in this order: the StakeManager (nonce n), the
        // ShareRegistry, the Escrow, the JobManager (n + 3), its round (n + 4), the committee
        // (n + 5), the bisection game (n + 6, with that adjudicator) and the RunRegistry (n + 6, or
        // n + 7 after the game).
        bool bisection = cfg.adjudicator == AdjudicatorKind.Bisection;
        uint256 n = CHEATS.getNonce(admin);
        address jobManager = CHEATS.computeCreateAddress(admin, n + 3);
        address round = CHEATS.computeCreateAddress(admin, n + 4);
        address committee = CHEATS.computeCreateAddress(admin, n + 5);
        address game = bisection ? CHEATS.computeCreateAddress(admin, n + 6) : address(0);
        address runRegistry = CHEATS.computeCreateAddress(admin, n + (bisection ? 7 : 6));
        d.stakeManager = new StakeManager(d.token, cfg.unbondingDelay, cfg.minStake, jobManager, committee, runRegistry);
        d.shareRegistry = new ShareRegistry(d.token, cfg.maxSegmentCompute, jobManager, runRegistry);
        d.escrow = new Escrow(d.token, jobManager, game, runRegistry);
        d.jobManager = new JobManager(
            IEscrow(address(d.escrow)),
            IStakeManager(address(d.stakeManager)),
            IShareRegistry(address(d.shareRegistry)),
            IVerificationRound(round),
            cfg.params,
            admin
        );
        d.verificationRound = new VerificationRound(IJobManager(address(d.jobManager)), cfg.forcedErrorRateBps);
        _check("jobManager", jobManager, address(d.jobManager));
        _check("verificationRound", round, address(d.verificationRound));
        d.committee = new ArbitrationCommittee(
            IJobManager(address(d.jobManager)),
            IStakeManager(address(d.stakeManager)),
            cfg.committeeSize,
            cfg.voteCommitWindow,
            cfg.voteRevealWindow
        );
        _check("committee", committee, address(d.committee));
        IAdjudicator adjudicator = d.committee;
        if (bisection) {
            d.bisectionGame = new BisectionGame(
                IJobManager(address(d.jobManager)),
                IStepAdjudicator(address(d.committee)),
                cfg.clockSeconds,
                cfg.moveBond
            );
            adjudicator = d.bisectionGame;
            _check("bisectionGame", game, address(d.bisectionGame));
        }
        d.runRegistry = new RunRegistry(
            IJobManager(address(d.jobManager)),
            IArbitrationCommittee(address(d.committee)),
            cfg.claimBond,
            cfg.claimChallengeWindow,
            cfg.registrationWindow
        );
        _check("runRegistry", runRegistry, address(d.runRegistry));
        // The wiring calls come after the last deployment whose address was given in advance: a
        // call is a transaction of its own where the admin is an account (the Python deployer,
        // Forge's isolation mode), and would shift the nonce.
        if (bisection) d.committee.setStepParent(address(d.bisectionGame));
        d.committee.setClaimParent(address(d.runRegistry));
        d.jobManager.setAdjudicator(adjudicator);
    }

    /// @notice Reverts AddressMismatch unless `deployed` is the `expected` address given before.
    function _check(string memory name, address expected, address deployed) private pure {
        if (deployed != expected) revert AddressMismatch(name, expected, deployed);
    }
}
