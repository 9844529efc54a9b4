// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {FwssPriceList} from "./FwssRails.sol";
import {FwssStateReads, IFwssStorage} from "./FwssStateReads.sol";

// Stand-in for filecoin-services 1.3.1 src/FilecoinWarmStorageServiceStateView.sol: every read
// clients and Curio make of the warm storage service, answered from the service's storage through
// its extsload/extsloadStruct (FwssStateReads.sol), as the real view does through
// src/lib/FilecoinWarmStorageServiceStateInternalLibrary.sol; the prices from the constants
// (src/lib/PriceListUSDFC.sol priceList). 1.3.x added getPriceList and the data set view's
// pendingOneTimePayments and lifecycleReserveBalance to 1.2.0's (FilecoinWarmStorageServiceStateView120.sol).

/// src/lib/PriceList.sol: the whole price catalogue, as getPriceList returns it.
struct PriceListRates {
    uint256 storagePerTibPerMonth;
    uint256 datasetFeePerMonth;
    uint256 cdnEgressPerTib;
    uint256 cacheMissEgressPerTib;
}

struct PriceListFees {
    uint256 createDataSetFee;
    uint256 addPiecesBaseFee;
    uint256 addPiecesPerPieceFee;
    uint256 schedulePieceRemovalsFee;
    uint256 terminateFee;
}

struct PriceListLockups {
    uint256 lifecycleReserveTarget;
    uint256 replenishThreshold;
    uint256 defaultLockupPeriod;
    uint256 cdnLockupAmount;
    uint256 cacheMissLockupAmount;
    uint256 cdnLockupPeriod;
}

struct PriceList {
    address token;
    PriceListRates rates;
    PriceListFees fees;
    PriceListLockups lockups;
}

contract FilecoinWarmStorageServiceStateView is FwssStateReads {
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
        /// 1.3.x: fees owed since the last flush, and the reserve left on the PDP rail.
        uint96 pendingOneTimePayments;
        uint96 lifecycleReserveBalance;
        uint256 dataSetId;
    }

    constructor(address _service) FwssStateReads(_service) {}

    /// The service's DataSetInfo plus the id itself; all zero for an unknown id, as the real view
    /// answers (FilecoinWarmStorageServiceStateInternalLibrary.sol getDataSet).
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
        info.pendingOneTimePayments = uint96(uint256(w[10]));
        info.lifecycleReserveBalance = uint96(uint256(w[10]) >> 96);
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

    // ---- settings and prices (1.3.1: constants) ----

    function serviceCommissionBps() external pure returns (uint256) {
        return FwssPriceList.SERVICE_COMMISSION_BPS;
    }

    function getCurrentPricingRates() external pure returns (uint256 storagePrice, uint256 datasetFee) {
        return (FwssPriceList.STORAGE_PRICE_PER_TIB_PER_MONTH, FwssPriceList.DATASET_FEE_PER_MONTH);
    }

    /// The price catalogue (src/lib/PriceListUSDFC.sol priceList, with the service's token).
    function getPriceList() external view returns (PriceList memory list) {
        list.token = IFwssStorage(service).usdfcTokenAddress();
        list.rates = PriceListRates(
            FwssPriceList.STORAGE_PRICE_PER_TIB_PER_MONTH,
            FwssPriceList.DATASET_FEE_PER_MONTH,
            FwssPriceList.CDN_EGRESS_PRICE_PER_TIB,
            FwssPriceList.CACHE_MISS_EGRESS_PRICE_PER_TIB
        );
        list.fees = PriceListFees(
            FwssPriceList.CREATE_DATA_SET_FEE,
            FwssPriceList.ADD_PIECES_BASE_FEE,
            FwssPriceList.ADD_PIECES_PER_PIECE_FEE,
            FwssPriceList.SCHEDULE_PIECE_REMOVALS_FEE,
            FwssPriceList.TERMINATE_FEE
        );
        list.lockups = PriceListLockups(
            FwssPriceList.LIFECYCLE_RESERVE_TARGET,
            FwssPriceList.REPLENISH_THRESHOLD,
            FwssPriceList.DEFAULT_LOCKUP_PERIOD,
            FwssPriceList.DEFAULT_CDN_LOCKUP_AMOUNT,
            FwssPriceList.DEFAULT_CACHE_MISS_LOCKUP_AMOUNT,
            FwssPriceList.CDN_LOCKUP_PERIOD
        );
    }
}
