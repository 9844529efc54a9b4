// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

// Stand-in for OpenZeppelin Contracts 5 proxy/ERC1967/ERC1967Proxy.sol, the proxy the warm storage
// service sits behind on calibration and mainnet (filecoin-services service_contracts/deployments.json:
// FWSS_PROXY is "ERC1967Proxy.sol:ERC1967Proxy", constructed with (implementation, 0x) and
// initialised by a call of its own). It keeps the implementation's address in ERC-1967's slot and
// delegates every call to it; only the implementation changes that slot (UUPS upgradeToAndCall).
contract ERC1967Proxy {
    /// bytes32(uint256(keccak256("eip1967.proxy.implementation")) - 1)
    bytes32 internal constant IMPLEMENTATION_SLOT = 0x360894a13ba1a3210667c828492db98dca3e2076cc3735a920a3ca505d382bbc;

    event Upgraded(address indexed implementation);

    error ERC1967InvalidImplementation(address implementation);
    error ERC1967NonPayable();

    /// ERC1967Utils.upgradeToAndCall: the implementation must have code; `data`, when given, runs on it here.
    constructor(address implementation, bytes memory data) payable {
        if (implementation.code.length == 0) revert ERC1967InvalidImplementation(implementation);
        bytes32 slot = IMPLEMENTATION_SLOT;
        assembly ("memory-safe") {
            sstore(slot, implementation)
        }
        emit Upgraded(implementation);
        if (data.length == 0) {
            if (msg.value > 0) revert ERC1967NonPayable();
            return;
        }
        (bool ok, bytes memory answer) = implementation.delegatecall(data);
        if (!ok) {
            assembly ("memory-safe") {
                revert(add(answer, 0x20), mload(answer))
            }
        }
    }

    /// Proxy._delegate: the implementation's answer, or its revert, as is.
    fallback() external payable {
        assembly {
            let implementation := sload(IMPLEMENTATION_SLOT)
            calldatacopy(0, 0, calldatasize())
            let ok := delegatecall(gas(), implementation, 0, calldatasize(), 0, 0)
            returndatacopy(0, 0, returndatasize())
            switch ok
            case 0 { revert(0, returndatasize()) }
            default { return(0, returndatasize()) }
        }
    }
}
