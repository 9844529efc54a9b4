// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {FwssErrors, FwssRailView, IFwssPayments} from "./FilecoinWarmStorageService.sol";

/// The warm storage service's prices as deployed (filecoin-services 1.3.1
/// src/lib/PriceListUSDFC.sol): fixed in the code, no longer set by the owner. USDFC has 18
/// decimals. The storage rate of a non-empty data set is its size's share of the TiB price plus a
/// flat per-data-set fee; one-time fees for each operation are paid to the provider out of a
/// lifecycle reserve locked on the data set's PDP rail.
library FwssPriceList {
    uint256 internal constant EPOCHS_PER_DAY = 2880;
    uint256 internal constant EPOCHS_PER_MONTH = EPOCHS_PER_DAY * 30;
    uint256 internal constant DEFAULT_LOCKUP_PERIOD = EPOCHS_PER_DAY * 30;
    /// The CDN rails' shorter settle window.
    uint256 internal constant CDN_LOCKUP_PERIOD = EPOCHS_PER_DAY * 5;
    uint256 internal constant TIB_IN_BYTES = 1 << 40;

    uint256 internal constant STORAGE_PRICE_PER_TIB_PER_MONTH = 2.5 ether;
    uint256 internal constant DATASET_FEE_PER_MONTH = 0.024 ether;
    uint256 internal constant DATASET_FEE_PER_EPOCH = DATASET_FEE_PER_MONTH / EPOCHS_PER_MONTH;
    uint256 internal constant CDN_EGRESS_PRICE_PER_TIB = 7 ether;
    uint256 internal constant CACHE_MISS_EGRESS_PRICE_PER_TIB = 7 ether;
    uint256 internal constant DEFAULT_CDN_LOCKUP_AMOUNT = 0.7 ether;
    uint256 internal constant DEFAULT_CACHE_MISS_LOCKUP_AMOUNT = 0.3 ether;
    uint256 internal constant SERVICE_COMMISSION_BPS = 0;

    uint256 internal constant CREATE_DATA_SET_FEE = 0.025 ether;
    uint256 internal constant ADD_PIECES_BASE_FEE = 0.0005 ether;
    uint256 internal constant ADD_PIECES_PER_PIECE_FEE = 0.0003 ether;
    uint256 internal constant SCHEDULE_PIECE_REMOVALS_FEE = 0.002 ether;
    uint256 internal constant TERMINATE_FEE = 0.00112 ether;

    uint256 internal constant LIFECYCLE_RESERVE_TARGET = 0.1 ether;
    uint256 internal constant REPLENISH_THRESHOLD = 0.005 ether;

    /// The rate of a data set of `leafCount` data-bearing leaves: 0 when empty, else its raw size
    /// (FilOzone/pdp src/Cids.sol leafCountToRawSize: leaves × 32 × 127/128) at the TiB price, plus
    /// the per-data-set fee (PriceListUSDFC.sol calculateStorageRate).
    function storageRate(uint256 leafCount) internal pure returns (uint256) {
        if (leafCount == 0) return 0;
        uint256 rawSize = (leafCount * 32 * 127) / 128;
        return (rawSize * STORAGE_PRICE_PER_TIB_PER_MONTH) / (TIB_IN_BYTES * EPOCHS_PER_MONTH) + DATASET_FEE_PER_EPOCH;
    }
}

/// What the service does with Filecoin Pay, outside its own code (as the real service links
/// filecoin-services src/lib/Rails.sol, to stay under the 24 KiB code limit). Its public functions
/// run by DELEGATECALL: the service is the caller Filecoin Pay sees, and the events are the service's.
library FwssRails {
    event CDNPaymentRailsToppedUp(
        uint256 indexed dataSetId,
        uint256 cdnAmountAdded,
        uint256 totalCdnLockup,
        uint256 cacheMissAmountAdded,
        uint256 totalCacheMissLockup
    );
    event CDNServiceTerminated(
        address indexed caller, uint256 indexed dataSetId, uint256 cacheMissRailId, uint256 cdnRailId
    );
    event DataSetAbandoned(uint256 indexed dataSetId, uint256 pdpRailId, uint256 cacheMissRailId, uint256 cdnRailId);
    event RailRateUpdated(uint256 indexed dataSetId, uint256 railId, uint256 newRate);

    /// Before a data set's rails open: the lifecycle reserve plus a lockup period of the
    /// per-data-set fee (and the CDN lockups) must be available, and within what the payer
    /// approved the service for (Rails.sol validatePayerOperatorApprovalAndFunds).
    function requirePayerCanPay(IFwssPayments payments, address token, address payer, bool withCdn) internal view {
        uint256 required = (FwssPriceList.DATASET_FEE_PER_MONTH * FwssPriceList.DEFAULT_LOCKUP_PERIOD)
            / FwssPriceList.EPOCHS_PER_MONTH + FwssPriceList.LIFECYCLE_RESERVE_TARGET;
        if (withCdn) {
            required += FwssPriceList.DEFAULT_CACHE_MISS_LOCKUP_AMOUNT + FwssPriceList.DEFAULT_CDN_LOCKUP_AMOUNT;
        }
        (,, uint256 available,) = payments.getAccountInfoIfSettled(token, payer);
        require(available >= required, FwssErrors.InsufficientLockupFunds(payer, required, available));
        (
            bool approved,
            uint256 rateAllowance,
            uint256 lockupAllowance,
            uint256 rateUsage,
            uint256 lockupUsage,
            uint256 maxLockupPeriod
        ) = payments.operatorApprovals(token, payer, address(this));
        require(approved, FwssErrors.OperatorNotApproved(payer, address(this)));
        uint256 rate = FwssPriceList.DATASET_FEE_PER_EPOCH;
        require(
            rateAllowance >= rateUsage + rate,
            FwssErrors.InsufficientRateAllowance(payer, address(this), rateAllowance, rateUsage, rate)
        );
        require(
            lockupAllowance >= lockupUsage + required,
            FwssErrors.InsufficientLockupAllowance(payer, address(this), lockupAllowance, lockupUsage, required)
        );
        require(
            maxLockupPeriod >= FwssPriceList.DEFAULT_LOCKUP_PERIOD,
            FwssErrors.InsufficientMaxLockupPeriod(
                payer, address(this), maxLockupPeriod, FwssPriceList.DEFAULT_LOCKUP_PERIOD
            )
        );
    }

    /// The PDP rail with the lifecycle reserve as its fixed lockup, and the two CDN rails when
    /// `filBeamBeneficiary` is set (Rails.sol createRails). No rate yet: an empty data set pays nothing.
    function createRails(
        IFwssPayments payments,
        uint256 dataSetId,
        address token,
        address payer,
        address payee,
        address filBeamBeneficiary
    ) public returns (uint256 pdpRailId, uint256 cacheMissRailId, uint256 cdnRailId) {
        bool withCdn = filBeamBeneficiary != address(0);
        requirePayerCanPay(payments, token, payer, withCdn);
        pdpRailId =
            payments.createRail(token, payer, payee, address(this), FwssPriceList.SERVICE_COMMISSION_BPS, address(this));
        payments.modifyRailLockup(
            pdpRailId, FwssPriceList.DEFAULT_LOCKUP_PERIOD, FwssPriceList.LIFECYCLE_RESERVE_TARGET
        );
        if (!withCdn) return (pdpRailId, 0, 0);
        cacheMissRailId = payments.createRail(token, payer, payee, address(0), 0, address(this));
        payments.modifyRailLockup(
            cacheMissRailId, FwssPriceList.CDN_LOCKUP_PERIOD, FwssPriceList.DEFAULT_CACHE_MISS_LOCKUP_AMOUNT
        );
        cdnRailId = payments.createRail(token, payer, filBeamBeneficiary, address(0), 0, address(this));
        payments.modifyRailLockup(cdnRailId, FwssPriceList.CDN_LOCKUP_PERIOD, FwssPriceList.DEFAULT_CDN_LOCKUP_AMOUNT);
        emit CDNPaymentRailsToppedUp(
            dataSetId,
            FwssPriceList.DEFAULT_CDN_LOCKUP_AMOUNT,
            FwssPriceList.DEFAULT_CDN_LOCKUP_AMOUNT,
            FwssPriceList.DEFAULT_CACHE_MISS_LOCKUP_AMOUNT,
            FwssPriceList.DEFAULT_CACHE_MISS_LOCKUP_AMOUNT
        );
    }

    /// Ends both CDN rails, whatever state they are in (Rails.sol terminateCDNRails).
    function terminateCDNRails(IFwssPayments payments, uint256 dataSetId, uint256 cacheMissRailId, uint256 cdnRailId)
        public
    {
        try payments.terminateRail(cacheMissRailId) {} catch {}
        try payments.terminateRail(cdnRailId) {} catch {}
        emit CDNServiceTerminated(msg.sender, dataSetId, cacheMissRailId, cdnRailId);
    }

    /// An abandoned data set's rails: the proven epochs are paid, the provider forfeits the pending
    /// fees, and the reserve goes back to the payer, at once when the payer is funded, else once
    /// the lockup period has run; the activation epoch is cleared before the rail ends, so that
    /// what is left settles at zero (Rails.sol abandonRails).
    function abandonRails(
        IFwssPayments payments,
        mapping(uint256 => uint256) storage provingActivationEpoch,
        uint256 dataSetId,
        uint256 pdpRailId,
        uint256 cacheMissRailId,
        uint256 cdnRailId
    ) public {
        payments.settleRail(pdpRailId, block.number);
        bool reserveRemaining = false;
        try payments.modifyRailLockup(pdpRailId, 0, 0) {}
        catch {
            reserveRemaining = true;
        }
        if (cdnRailId != 0) {
            teardownCdnRail(payments, cacheMissRailId);
            teardownCdnRail(payments, cdnRailId);
            emit CDNServiceTerminated(msg.sender, dataSetId, cacheMissRailId, cdnRailId);
        }
        delete provingActivationEpoch[dataSetId];
        payments.terminateRail(pdpRailId);
        if (reserveRemaining) payments.modifyRailLockup(pdpRailId, FwssPriceList.DEFAULT_LOCKUP_PERIOD, 0);
        payments.settleRail(pdpRailId, block.number);
        emit DataSetAbandoned(dataSetId, pdpRailId, cacheMissRailId, cdnRailId);
    }

    function teardownCdnRail(IFwssPayments payments, uint256 railId) internal {
        try payments.modifyRailLockup(railId, 0, 0) {} catch {}
        try payments.terminateRail(railId) {} catch {}
        try payments.settleRail(railId, block.number) {} catch {}
    }

    /// Adds to both live CDN rails' fixed lockups (Rails.sol topUpCDNRails).
    function topUpCDNRails(
        IFwssPayments payments,
        uint256 dataSetId,
        uint256 cacheMissRailId,
        uint256 cdnRailId,
        uint256 cacheMissAmountToAdd,
        uint256 cdnAmountToAdd
    ) public {
        FwssRailView memory cdn = payments.getRail(cdnRailId);
        FwssRailView memory cacheMiss = payments.getRail(cacheMissRailId);
        require(cdn.endEpoch == 0, FwssErrors.CDNPaymentAlreadyTerminated(dataSetId));
        require(cacheMiss.endEpoch == 0, FwssErrors.CacheMissPaymentAlreadyTerminated(dataSetId));
        if (cdnAmountToAdd == 0 && cacheMissAmountToAdd == 0) revert FwssErrors.InvalidTopUpAmount(dataSetId);
        uint256 cdnTotal = cdn.lockupFixed + cdnAmountToAdd;
        uint256 cacheMissTotal = cacheMiss.lockupFixed + cacheMissAmountToAdd;
        payments.modifyRailLockup(cdnRailId, FwssPriceList.CDN_LOCKUP_PERIOD, cdnTotal);
        payments.modifyRailLockup(cacheMissRailId, FwssPriceList.CDN_LOCKUP_PERIOD, cacheMissTotal);
        emit CDNPaymentRailsToppedUp(dataSetId, cdnAmountToAdd, cdnTotal, cacheMissAmountToAdd, cacheMissTotal);
    }

    /// FilBeam's usage, paid as one-time payments out of the CDN rails' lockups (Rails.sol settleCDNRails).
    function settleCDNRails(
        IFwssPayments payments,
        uint256 cdnRailId,
        uint256 cacheMissRailId,
        uint256 cdnAmount,
        uint256 cacheMissAmount
    ) public {
        if (cdnAmount > 0) payments.modifyRailPayment(cdnRailId, 0, cdnAmount);
        if (cacheMissAmount > 0) payments.modifyRailPayment(cacheMissRailId, 0, cacheMissAmount);
    }

    /// When paying `pending` would take the reserve under the threshold, raises the rail's fixed
    /// lockup back to the target plus `pending` (a terminated rail may not raise it); returns the
    /// reserve (Rails.sol replenishReserveIfNeeded).
    function replenishReserveIfNeeded(
        IFwssPayments payments,
        uint256 pdpRailId,
        uint256 pdpEndEpoch,
        uint96 reserveBalance,
        uint96 pending
    ) internal returns (uint96) {
        if (pdpEndEpoch == 0 && reserveBalance < pending + uint96(FwssPriceList.REPLENISH_THRESHOLD)) {
            uint96 newLockup = uint96(FwssPriceList.LIFECYCLE_RESERVE_TARGET) + pending;
            payments.modifyRailLockup(pdpRailId, FwssPriceList.DEFAULT_LOCKUP_PERIOD, newLockup);
            return newLockup;
        }
        return reserveBalance;
    }

    /// Sets the rail's rate for the data set's size and pays the pending fees out of the reserve
    /// (replenished first when needed; never more than it holds). On a termination the payer signed
    /// for, the rail keeps exactly the pending fees and no lockup period. Returns the reserve left
    /// (Rails.sol updateStorageRates).
    function updateStorageRates(
        IFwssPayments payments,
        uint256 dataSetId,
        uint256 pdpRailId,
        uint256 leafCount,
        uint96 pending,
        uint96 reserveBalance,
        uint256 pdpEndEpoch,
        bool immediateTermination
    ) public returns (uint96 newReserveBalance) {
        uint256 rate = FwssPriceList.storageRate(leafCount);
        if (immediateTermination) {
            payments.modifyRailLockup(pdpRailId, 0, pending);
            newReserveBalance = 0;
        } else {
            uint96 replenished = replenishReserveIfNeeded(payments, pdpRailId, pdpEndEpoch, reserveBalance, pending);
            if (replenished < pending) pending = replenished;
            newReserveBalance = replenished - pending;
        }
        payments.modifyRailPayment(pdpRailId, rate, pending);
        emit RailRateUpdated(dataSetId, pdpRailId, rate);
    }
}
