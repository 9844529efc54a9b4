// SPDX-License-Identifier: MIT
pragma solidity ^0.8.30;

/// Our stand-in for FilOzone/SessionKeyRegistry (src/SessionKeyRegistry.sol): an identity lets a
/// session key sign given permissions (EIP-712 type hashes, synapse-core session-key/permissions.ts)
/// until an expiry in unix seconds, which FilecoinWarmStorageService compares with block.timestamp.
contract SessionKeyRegistry {
    mapping(address user => mapping(address signer => mapping(bytes32 permission => uint256 expiry))) public
        authorizationExpiry;

    event AuthorizationsUpdated(
        address indexed identity, address signer, uint256 expiry, bytes32[] permissions, string origin
    );

    /// `origin` only labels the event (the SDK passes "synapse").
    function login(address signer, uint256 expiry, bytes32[] calldata permissions, string calldata origin) external {
        _authorize(signer, expiry, permissions, origin);
    }

    /// Authorizes and hands the attached FIL to the session key, which pays its own gas.
    function loginAndFund(address payable signer, uint256 expiry, bytes32[] calldata permissions, string calldata origin)
        external
        payable
    {
        _authorize(signer, expiry, permissions, origin);
        (bool sent,) = signer.call{value: msg.value}("");
        require(sent, "funding the session key failed");
    }

    function revoke(address signer, bytes32[] calldata permissions, string calldata origin) external {
        _authorize(signer, 0, permissions, origin);
    }

    function _authorize(address signer, uint256 expiry, bytes32[] calldata permissions, string calldata origin)
        private
    {
        mapping(bytes32 => uint256) storage expiries = authorizationExpiry[msg.sender][signer];
        for (uint256 i = 0; i < permissions.length; i++) {
            expiries[permissions[i]] = expiry;
        }
        emit AuthorizationsUpdated(msg.sender, signer, expiry, permissions, origin);
    }
}
