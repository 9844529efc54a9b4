// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {FwssPriceList} from "./FwssRails.sol";

// Stand-in for filecoin-services 1.3.1 src/FilecoinWarmStorageServiceStateView.sol: every read
// clients and Curio make of the warm storage service, answered from the service's storage through
// its extsload/extsloadStruct, as the real view does through
// src/lib/FilecoinWarmStorageServiceStateInternalLibrary.sol; the prices from the constants
// (src/lib/PriceListUSDFC.sol priceList).

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

interface IFwssStorage {
    function extsload(bytes32 slot) external view returns (bytes32);
    function extsloadStruct(bytes32 slot, uint256 size) external view returns (bytes32[] memory);
    function usdfcTokenAddress() external view returns (address);
}

/// Storage slots of FilecoinWarmStorageService's state variables, in declaration order there.
library FwssSlots {
    uint256 internal constant MAX_PROVING_PERIOD = 1;
    uint256 internal constant CHALLENGE_WINDOW_SIZE = 2;
    uint256 internal constant PROVEN_PERIODS = 3;
    uint256 internal constant PROVING_ACTIVATION_EPOCH = 4;
    uint256 internal constant PROVING_DEADLINES = 5;
    uint256 internal constant PROVEN_THIS_PERIOD = 6;
    uint256 internal constant DATA_SET_INFO = 7;
    uint256 internal constant CLIENT_NONCES = 8;
    uint256 internal constant CLIENT_DATA_SETS = 9;
    uint256 internal constant RAIL_TO_DATA_SET = 10;
    uint256 internal constant DATA_SET_METADATA = 11;
    uint256 internal constant DATA_SET_METADATA_KEYS = 12;
    uint256 internal constant PIECE_METADATA = 13;
    uint256 internal constant PIECE_METADATA_KEYS = 14;
    uint256 internal constant APPROVED_PROVIDERS = 15;
    uint256 internal constant APPROVED_PROVIDER_IDS = 16;
    uint256 internal constant FIL_BEAM_CONTROLLER = 18;

    /// Solidity's slot for mapping[key] when the key is a value type.
    function at(bytes32 base, uint256 key) internal pure returns (bytes32) {
        return keccak256(abi.encode(key, base));
    }

    /// Solidity's slot for mapping[key] when the key is a string: the key's bytes are not padded.
    function atString(bytes32 base, string memory key) internal pure returns (bytes32) {
        return keccak256(abi.encodePacked(bytes(key), base));
    }
}

contract FilecoinWarmStorageServiceStateView {
    uint256 internal constant NO_PROVING_DEADLINE = 0;
    uint256 internal constant CHALLENGES_PER_PROOF = 5;

    error ProvingPeriodNotInitialized(uint256 dataSetId);

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
        /// 1.3.1: fees owed since the last flush, and the reserve left on the PDP rail.
        uint96 pendingOneTimePayments;
        uint96 lifecycleReserveBalance;
        uint256 dataSetId;
    }

    address public immutable service;

    constructor(address _service) {
        service = _service;
    }

    // ---- raw reads ----

    function word(bytes32 slot) internal view returns (uint256) {
        return uint256(IFwssStorage(service).extsload(slot));
    }

    function wordAt(uint256 slot) internal view returns (uint256) {
        return word(bytes32(slot));
    }

    /// Reads a storage string: short ones (< 32 bytes) sit in the slot with length*2 in the low
    /// byte; long ones hold length*2+1 there and their bytes from keccak256(slot) on.
    function readString(bytes32 slot) internal view returns (string memory) {
        uint256 head = word(slot);
        if (head & 1 == 0) {
            uint256 length = (head & 0xff) >> 1;
            bytes memory short_ = new bytes(length);
            for (uint256 i = 0; i < length; i++) {
                short_[i] = bytes1(bytes32(head << (8 * i)));
            }
            return string(short_);
        }
        uint256 size = head >> 1;
        bytes32[] memory chunks =
            IFwssStorage(service).extsloadStruct(keccak256(abi.encode(slot)), (size + 31) / 32);
        bytes memory long_ = abi.encodePacked(chunks);
        assembly ("memory-safe") {
            mstore(long_, size)
        }
        return string(long_);
    }

    /// A string[] in storage: its length at `slot`, element i at keccak256(slot) + i.
    function readStrings(bytes32 slot) internal view returns (string[] memory out) {
        uint256 length = word(slot);
        out = new string[](length);
        uint256 first = uint256(keccak256(abi.encode(slot)));
        for (uint256 i = 0; i < length; i++) {
            out[i] = readString(bytes32(first + i));
        }
    }

    /// A uint256[] in storage, from `offset`, at most `limit` entries (0 = all).
    function readUints(bytes32 slot, uint256 offset, uint256 limit) internal view returns (uint256[] memory out) {
        uint256 length = word(slot);
        if (offset >= length) return new uint256[](0);
        uint256 count = length - offset;
        if (limit != 0 && limit < count) count = limit;
        bytes32[] memory raw =
            IFwssStorage(service).extsloadStruct(bytes32(uint256(keccak256(abi.encode(slot))) + offset), count);
        assembly ("memory-safe") {
            out := raw
        }
    }

    function clientDataSetsSlot(address payer) internal pure returns (bytes32) {
        return keccak256(abi.encode(payer, FwssSlots.CLIENT_DATA_SETS));
    }

    // ---- client data sets ----

    function clientDataSets(address payer) public view returns (uint256[] memory dataSetIds) {
        return readUints(clientDataSetsSlot(payer), 0, 0);
    }

    function clientDataSets(address payer, uint256 offset, uint256 limit)
        public
        view
        returns (uint256[] memory dataSetIds)
    {
        return readUints(clientDataSetsSlot(payer), offset, limit);
    }

    function getClientDataSetsLength(address payer) external view returns (uint256) {
        return word(clientDataSetsSlot(payer));
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

    function clientNonces(address payer, uint256 nonce) external view returns (uint256) {
        bytes32 inner = keccak256(abi.encode(payer, FwssSlots.CLIENT_NONCES));
        return word(FwssSlots.at(inner, nonce));
    }

    /// The service's DataSetInfo (ten words in declaration order, then the pending fees and the
    /// reserve packed in the eleventh, low bits first) plus the id itself; all zero for an unknown
    /// id, as the real view answers (FilecoinWarmStorageServiceStateInternalLibrary.sol getDataSet).
    function getDataSet(uint256 dataSetId) public view returns (DataSetInfoView memory info) {
        bytes32[] memory w =
            IFwssStorage(service).extsloadStruct(FwssSlots.at(bytes32(FwssSlots.DATA_SET_INFO), dataSetId), 11);
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

    /// 0 = Inactive (unknown, or proving not started), 1 = Active.
    function getDataSetStatus(uint256 dataSetId) external view returns (uint8 status) {
        if (getDataSet(dataSetId).pdpRailId == 0) return 0;
        return provingActivationEpoch(dataSetId) == 0 ? 0 : 1;
    }

    function railToDataSet(uint256 railId) external view returns (uint256) {
        return word(FwssSlots.at(bytes32(FwssSlots.RAIL_TO_DATA_SET), railId));
    }

    /// 1.3.1: the raw size the leaves hold (FilOzone/pdp src/Cids.sol leafCountToRawSize).
    function getDataSetSizeInBytes(uint256 leafCount) external pure returns (uint256) {
        return (leafCount * 32 * 127) / 128;
    }

    // ---- metadata ----

    function dataSetKeysSlot(uint256 dataSetId) internal pure returns (bytes32) {
        return FwssSlots.at(bytes32(FwssSlots.DATA_SET_METADATA_KEYS), dataSetId);
    }

    function dataSetValueSlot(uint256 dataSetId, string memory key) internal pure returns (bytes32) {
        return FwssSlots.atString(FwssSlots.at(bytes32(FwssSlots.DATA_SET_METADATA), dataSetId), key);
    }

    function pieceKeysSlot(uint256 dataSetId, uint256 pieceId) internal pure returns (bytes32) {
        return FwssSlots.at(FwssSlots.at(bytes32(FwssSlots.PIECE_METADATA_KEYS), dataSetId), pieceId);
    }

    function pieceValueSlot(uint256 dataSetId, uint256 pieceId, string memory key) internal pure returns (bytes32) {
        return FwssSlots.atString(FwssSlots.at(FwssSlots.at(bytes32(FwssSlots.PIECE_METADATA), dataSetId), pieceId), key);
    }

    function getAllDataSetMetadata(uint256 dataSetId)
        external
        view
        returns (string[] memory keys, string[] memory values)
    {
        keys = readStrings(dataSetKeysSlot(dataSetId));
        values = new string[](keys.length);
        for (uint256 i = 0; i < keys.length; i++) {
            values[i] = readString(dataSetValueSlot(dataSetId, keys[i]));
        }
    }

    /// exists is whether the key is in the data set's key list, so an empty value still exists.
    function getDataSetMetadata(uint256 dataSetId, string memory key)
        external
        view
        returns (bool exists, string memory value)
    {
        if (listed(readStrings(dataSetKeysSlot(dataSetId)), key)) {
            return (true, readString(dataSetValueSlot(dataSetId, key)));
        }
    }

    function getAllPieceMetadata(uint256 dataSetId, uint256 pieceId)
        external
        view
        returns (string[] memory keys, string[] memory values)
    {
        keys = readStrings(pieceKeysSlot(dataSetId, pieceId));
        values = new string[](keys.length);
        for (uint256 i = 0; i < keys.length; i++) {
            values[i] = readString(pieceValueSlot(dataSetId, pieceId, keys[i]));
        }
    }

    function getPieceMetadata(uint256 dataSetId, uint256 pieceId, string memory key)
        external
        view
        returns (bool exists, string memory value)
    {
        if (listed(readStrings(pieceKeysSlot(dataSetId, pieceId)), key)) {
            return (true, readString(pieceValueSlot(dataSetId, pieceId, key)));
        }
    }

    function listed(string[] memory keys, string memory key) internal pure returns (bool) {
        bytes32 wanted = keccak256(bytes(key));
        for (uint256 i = 0; i < keys.length; i++) {
            if (keccak256(bytes(keys[i])) == wanted) return true;
        }
        return false;
    }

    // ---- providers ----

    function isProviderApproved(uint256 providerId) external view returns (bool) {
        return word(FwssSlots.at(bytes32(FwssSlots.APPROVED_PROVIDERS), providerId)) != 0;
    }

    function getApprovedProviders(uint256 offset, uint256 limit) external view returns (uint256[] memory providerIds) {
        return readUints(bytes32(FwssSlots.APPROVED_PROVIDER_IDS), offset, limit);
    }

    function getApprovedProvidersLength() external view returns (uint256 count) {
        return wordAt(FwssSlots.APPROVED_PROVIDER_IDS);
    }

    // ---- proving schedule (IPDPProvingSchedule) ----

    function maxProvingPeriod() internal view returns (uint64) {
        return uint64(wordAt(FwssSlots.MAX_PROVING_PERIOD));
    }

    function getPDPConfig()
        external
        view
        returns (
            uint64 maxProvingPeriod_,
            uint256 challengeWindowSize,
            uint256 challengesPerProof,
            uint256 initChallengeWindowStart
        )
    {
        maxProvingPeriod_ = maxProvingPeriod();
        challengeWindowSize = wordAt(FwssSlots.CHALLENGE_WINDOW_SIZE);
        challengesPerProof = CHALLENGES_PER_PROOF;
        initChallengeWindowStart = block.number + maxProvingPeriod_ - challengeWindowSize;
    }

    /// Start of the next challenge window a provider can aim nextProvingPeriod at: the window before
    /// the deadline after the current one while that deadline is still ahead, else the window of the
    /// period now running; for an emptied data set about to resume, the first deadline of its
    /// timeline a whole period away (src/lib/FilecoinWarmStorageServiceStateInternalLibrary.sol).
    function nextPDPChallengeWindowStart(uint256 setId) external view returns (uint256) {
        uint256 deadline = provingDeadline(setId);
        uint256 period = maxProvingPeriod();
        uint256 window = wordAt(FwssSlots.CHALLENGE_WINDOW_SIZE);
        if (deadline == NO_PROVING_DEADLINE) {
            uint256 activation = provingActivationEpoch(setId);
            if (activation == 0) revert ProvingPeriodNotInitialized(setId);
            uint256 periods = (block.number + period - activation + period - 1) / period;
            return activation + periods * period - window;
        }
        if (block.number <= deadline) return deadline + period - window;
        uint256 skipped = 1 + (block.number - (deadline + 1)) / period;
        return deadline + skipped * period - window;
    }

    function provingDeadline(uint256 setId) public view returns (uint256) {
        return word(FwssSlots.at(bytes32(FwssSlots.PROVING_DEADLINES), setId));
    }

    function provingActivationEpoch(uint256 dataSetId) public view returns (uint256) {
        return word(FwssSlots.at(bytes32(FwssSlots.PROVING_ACTIVATION_EPOCH), dataSetId));
    }

    function provenThisPeriod(uint256 dataSetId) external view returns (bool) {
        return word(FwssSlots.at(bytes32(FwssSlots.PROVEN_THIS_PERIOD), dataSetId)) != 0;
    }

    function provenPeriods(uint256 dataSetId, uint256 periodId) external view returns (bool) {
        bytes32 inner = FwssSlots.at(bytes32(FwssSlots.PROVEN_PERIODS), dataSetId);
        return word(FwssSlots.at(inner, periodId >> 8)) & (uint256(1) << (periodId & 255)) != 0;
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

    function filBeamControllerAddress() external view returns (address) {
        return address(uint160(wordAt(FwssSlots.FIL_BEAM_CONTROLLER)));
    }

    /// No upgrades are planned on the simulated chain (the service has no proxy).
    function nextUpgrade() external pure returns (address nextImplementation, uint96 afterEpoch) {
        return (address(0), 0);
    }
}
