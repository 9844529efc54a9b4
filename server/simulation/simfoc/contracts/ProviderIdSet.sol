// SPDX-License-Identifier: MIT
pragma solidity ^0.8.30;

/// Our stand-in for the endorsements list (FilOzone/filecoin-services service_contracts/src/ProviderIdSet.sol):
/// a set of provider ids kept by its owner, read by the SDK with getProviderIds
/// (synapse-core endorsements/get-endorsed-provider-ids.ts). Ids fit in 32 bits, as there.
/// A removed id's place is taken by the last one, so the order is insertion order until a removal.
contract ProviderIdSet {
    address public immutable owner;
    uint256[] private ids;
    mapping(uint256 providerId => uint256 position) private positionPlusOne;

    error OwnableUnauthorizedAccount(address account);
    error ProviderIdNotFound(uint256 providerId);
    error ProviderIdTooLarge(uint256 providerId);

    constructor() {
        owner = msg.sender;
    }

    modifier onlyOwner() {
        if (msg.sender != owner) revert OwnableUnauthorizedAccount(msg.sender);
        _;
    }

    function getProviderIds() external view returns (uint256[] memory) {
        return ids;
    }

    function containsProviderId(uint256 providerId) external view returns (bool) {
        return positionPlusOne[providerId] != 0;
    }

    /// Adding an id already there changes nothing.
    function addProviderId(uint256 providerId) external onlyOwner {
        if (providerId >= 1 << 32) revert ProviderIdTooLarge(providerId);
        if (providerId == 0 || positionPlusOne[providerId] != 0) return;
        ids.push(providerId);
        positionPlusOne[providerId] = ids.length;
    }

    function removeProviderId(uint256 providerId) external onlyOwner {
        uint256 place = positionPlusOne[providerId];
        if (place == 0) revert ProviderIdNotFound(providerId);
        uint256 last = ids[ids.length - 1];
        ids[place - 1] = last;
        positionPlusOne[last] = place;
        ids.pop();
        delete positionPlusOne[providerId];
    }
}
