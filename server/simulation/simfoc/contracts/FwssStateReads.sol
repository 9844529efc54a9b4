// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

// What every generation of the warm storage service's state view reads the same way: the service's
// storage through its extsload/extsloadStruct, as filecoin-services'
// src/lib/FilecoinWarmStorageServiceStateInternalLibrary.sol does. The views of 1.2.0
// (FilecoinWarmStorageServiceStateView120.sol) and 1.3.1 (FilecoinWarmStorageServiceStateView.sol)
// differ only in their data set view and prices, so they share these reads.

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
    uint256 internal constant NEXT_UPGRADE = 20;

    /// Solidity's slot for mapping[key] when the key is a value type.
    function at(bytes32 base, uint256 key) internal pure returns (bytes32) {
        return keccak256(abi.encode(key, base));
    }

    /// Solidity's slot for mapping[key] when the key is a string: the key's bytes are not padded.
    function atString(bytes32 base, string memory key) internal pure returns (bytes32) {
        return keccak256(abi.encodePacked(bytes(key), base));
    }
}

abstract contract FwssStateReads {
    uint256 internal constant NO_PROVING_DEADLINE = 0;
    uint256 internal constant CHALLENGES_PER_PROOF = 5;

    error ProvingPeriodNotInitialized(uint256 dataSetId);

    /// The service (its proxy) whose storage this view reads.
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

    /// The service's DataSetInfo: ten words in declaration order, then (since 1.3.0) the pending
    /// fees and the reserve packed in the eleventh, low bits first; all zero for an unknown id.
    function dataSetWords(uint256 dataSetId) internal view returns (bytes32[] memory) {
        return IFwssStorage(service).extsloadStruct(FwssSlots.at(bytes32(FwssSlots.DATA_SET_INFO), dataSetId), 11);
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

    function clientNonces(address payer, uint256 nonce) external view returns (uint256) {
        bytes32 inner = keccak256(abi.encode(payer, FwssSlots.CLIENT_NONCES));
        return word(FwssSlots.at(inner, nonce));
    }

    /// 0 = Inactive (unknown, or proving not started), 1 = Active.
    function getDataSetStatus(uint256 dataSetId) external view returns (uint8 status) {
        if (uint256(dataSetWords(dataSetId)[0]) == 0) return 0;
        return provingActivationEpoch(dataSetId) == 0 ? 0 : 1;
    }

    function railToDataSet(uint256 railId) external view returns (uint256) {
        return word(FwssSlots.at(bytes32(FwssSlots.RAIL_TO_DATA_SET), railId));
    }

    /// The raw size the leaves hold (FilOzone/pdp src/Cids.sol leafCountToRawSize).
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

    // ---- settings ----

    function filBeamControllerAddress() external view returns (address) {
        return address(uint160(wordAt(FwssSlots.FIL_BEAM_CONTROLLER)));
    }

    /// The upgrade the owner announced and has not made yet (the service's nextUpgrade, packed in one slot).
    function nextUpgrade() external view returns (address nextImplementation, uint96 afterEpoch) {
        uint256 packed = wordAt(FwssSlots.NEXT_UPGRADE);
        nextImplementation = address(uint160(packed));
        afterEpoch = uint96(packed >> 160);
    }
}
