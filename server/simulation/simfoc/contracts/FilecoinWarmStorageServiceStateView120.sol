// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {FwssStateReads} from "./FwssStateReads.sol";

// Stand-in for the state view deployed with FilecoinWarmStorageService 1.2.0 (filecoin-services
// v1.2.0 src/FilecoinWarmStorageServiceStateView.sol; deployments.json at v1.2.0 and v1.2.1 names it
// as FWSS_VIEW_ADDRESS: calibration 0x537320bd004a7FDd3c1932ca64BD88268301322A, mainnet
// 0xB1B3A3d979c1f233c1021EF98dff9c0932FF1bb9). The service was migrated away from it for 1.3.0, but
// it still stands and still reads the service's storage: its functions are the 1.3.1 view's but
// getPriceList, which it has not (a call to it reverts with no data), and its data set view has
// 11 fields, without 1.3.0's pendingOneTimePayments and lifecycleReserveBalance.
contract FilecoinWarmStorageServiceStateView120 is FwssStateReads {
    struct DataSetInfoView {
        uint256 pdpRailId;
        uint256 cacheMissRailId;
        uint256 cdnRailId;
        address payer;
        address payee;
        address serviceProvider;
        uint256 commissionBps;
        uint256 clientDataSetId;
        uint256 pdpEndEpoch;
        uint256 providerId;
        uint256 dataSetId;
    }

    /// 1.2.0's prices, which its initialize() wrote into storage (2.5 USDFC per TiB-month, a floor
    /// of 0.06 USDFC a month) and 1.3.0 left there unread (deprecatedStoragePricePerTibPerMonth,
    /// deprecatedMinimumStorageRatePerMonth).
    uint256 internal constant STORAGE_PRICE_PER_TIB_PER_MONTH = 25 * 10 ** 17;
    uint256 internal constant MINIMUM_STORAGE_RATE_PER_MONTH = 6 * 10 ** 16;

    constructor(address _service) FwssStateReads(_service) {}

    function getDataSet(uint256 dataSetId) public view returns (DataSetInfoView memory info) {
        bytes32[] memory w = dataSetWords(dataSetId);
        info.pdpRailId = uint256(w[0]);
        info.cacheMissRailId = uint256(w[1]);
        info.cdnRailId = uint256(w[2]);
        info.payer = address(uint160(uint256(w[3])));
        info.payee = address(uint160(uint256(w[4])));
        info.serviceProvider = address(uint160(uint256(w[5])));
        info.commissionBps = uint256(w[6]);
        info.clientDataSetId = uint256(w[7]);
        info.pdpEndEpoch = uint256(w[8]);
        info.providerId = uint256(w[9]);
        info.dataSetId = dataSetId;
    }

    function getClientDataSets(address client) external view returns (DataSetInfoView[] memory infos) {
        return describe(clientDataSets(client));
    }

    function getClientDataSets(address client, uint256 offset, uint256 limit)
        external
        view
        returns (DataSetInfoView[] memory infos)
    {
        return describe(clientDataSets(client, offset, limit));
    }

    function describe(uint256[] memory ids) internal view returns (DataSetInfoView[] memory infos) {
        infos = new DataSetInfoView[](ids.length);
        for (uint256 i = 0; i < ids.length; i++) {
            infos[i] = getDataSet(ids[i]);
        }
    }

    /// The service's commission, which 1.3.0 deprecated at zero.
    function serviceCommissionBps() external pure returns (uint256) {
        return 0;
    }

    function getCurrentPricingRates() external pure returns (uint256 storagePrice, uint256 minimumRate) {
        return (STORAGE_PRICE_PER_TIB_PER_MONTH, MINIMUM_STORAGE_RATE_PER_MONTH);
    }
}
