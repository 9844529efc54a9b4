// SPDX-License-Identifier: MIT
pragma solidity ^0.8.30;

/// Batches read calls into one eth_call, the way viem's multicall action uses Multicall3
/// (mds1/multicall Multicall3.sol aggregate3): each call may be allowed to fail, and a call not
/// allowed to fail makes the whole batch revert.
contract Multicall3 {
    struct Call3 {
        address target;
        bool allowFailure;
        bytes callData;
    }

    struct Result {
        bool success;
        bytes returnData;
    }

    function aggregate3(Call3[] calldata calls) external payable returns (Result[] memory returnData) {
        returnData = new Result[](calls.length);
        for (uint256 i = 0; i < calls.length; i++) {
            Call3 calldata call = calls[i];
            (bool success, bytes memory answer) = call.target.call(call.callData);
            require(success || call.allowFailure, "a call not allowed to fail failed");
            returnData[i] = Result({success: success, returnData: answer});
        }
    }
}
