// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

/// @notice What a job is to its model's shares, fixed when it is posted (ABI: uint8). See
///         docs/PROTOCOL.md, "ShareRegistry", and docs/SECURITY.md P-18, P-29.
/// @dev None: no such job. LineageSlot: the job took its head's extension slot at post (it started
///      from the head while the slot was free); its solver is minted steps * computePerStep shares
///      when the job's final state is appended to the lineage (`extendLineage`). PaidOnly: the job
///      did not start from the head, or the slot was held; it is paid its reward and mints nothing.
///      Contribution: a DiLoCo run contribution posted through the RunRegistry; its run pays it
///      shares once, when a round claim counting it is final, and it never holds a slot.
enum PostKind {
    None,
    LineageSlot,
    PaidOnly,
    Contribution
}
