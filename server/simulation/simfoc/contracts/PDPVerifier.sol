// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

// Stand-in for FilOzone/pdp's PDPVerifier as deployed on calibration and mainnet since June
// 2026: 3.4.0 (src/PDPVerifier.sol, src/Fees.sol). A new data set holds a 0.1 FIL cleanup
// deposit its creator (the provider) sends along, paid back to whoever finishes its cleanup;
// liveness failures are custom errors. No proxy: the deployer calls initialize() once right
// after deployment, as the real proxy would.

/// A piece CID exactly as it travels in calldata, events and return values.
struct PdpCid {
    bytes data;
}

/// One Merkle inclusion proof for one challenge.
struct PdpProof {
    bytes32 leaf;
    bytes32[] proof;
}

struct PdpPieceIdAndOffset {
    uint256 pieceId;
    uint256 offset;
}

/// The callbacks a data set's listener receives (FilOzone/pdp src/PDPVerifier.sol, interface PDPListener).
interface PDPListener {
    function dataSetCreated(uint256 dataSetId, address creator, bytes calldata extraData) external;
    function dataSetDeleted(uint256 dataSetId, uint256 deletedLeafCount, bytes calldata extraData) external;
    function piecesAdded(uint256 dataSetId, uint256 firstAdded, PdpCid[] memory pieceData, bytes calldata extraData)
        external;
    function piecesScheduledRemove(uint256 dataSetId, uint256[] memory pieceIds, bytes calldata extraData) external;
    function possessionProven(uint256 dataSetId, uint256 challengedLeafCount, uint256 seed, uint256 challengeCount)
        external;
    function nextProvingPeriod(uint256 dataSetId, uint256 challengeEpoch, uint256 leafCount, bytes calldata extraData)
        external;
    function storageProviderChanged(
        uint256 dataSetId,
        address oldStorageProvider,
        address newStorageProvider,
        bytes calldata extraData
    ) external;
}

/// Reading PieceCIDv2 (FRC-0069): 0x01 0x55 0x91 0x20, uvarint digest length,
/// then the digest: uvarint padding, one byte tree height, 32 byte root.
/// Checks and arithmetic follow FilOzone/pdp src/Cids.sol.
library PdpPieceCid {
    function readUvarint(bytes memory data, uint256 at) internal pure returns (uint256 value, uint256 next) {
        uint256 shift = 0;
        while (true) {
            uint8 b = uint8(data[at]);
            value |= uint256(b & 0x7f) << shift;
            at++;
            if (b < 0x80) break;
            shift += 7;
        }
        return (value, at);
    }

    /// Returns the padding (raw bytes, before Fr32 expansion) and the tree height; reverts with
    /// Cids.sol's messages when the CID is not a well-formed CommPv2.
    function parse(bytes memory data) internal pure returns (uint256 padding, uint8 treeHeight) {
        require(
            data.length > 4 && data[0] == 0x01 && data[1] == 0x55 && data[2] == 0x91 && data[3] == 0x20,
            "Cid must be CommPv2"
        );
        (uint256 digestLength, uint256 at) = readUvarint(data, 4);
        require(digestLength >= 34, "CommPv2 multihash length must be at least 34");
        require(at + digestLength == data.length, "CommPv2 multihash length does not match data length");
        (padding, at) = readUvarint(data, at);
        treeHeight = uint8(data[at]);
    }

    /// The tree's root: the CID's last 32 bytes.
    function root(bytes memory data) internal pure returns (bytes32 r) {
        require(data.length >= 32, "Cid data is too short");
        assembly ("memory-safe") {
            r := mload(add(data, mload(data)))
        }
    }

    /// The byte just before the root.
    function height(bytes memory data) internal pure returns (uint8) {
        require(data.length >= 33, "Cid data is too short");
        return uint8(data[data.length - 33]);
    }

    /// Padding is given in raw bytes; x128/127 gives the Fr32 bytes it occupies (Cids.sol isPaddingExcessive).
    function paddingTooLarge(uint256 padding, uint8 h) internal pure returns (bool) {
        return (padding * 128) / 127 >= uint256(1) << (uint256(h) + 5);
    }

    /// Leaves holding at least one data byte: all 2^height leaves less those made only of padding (Cids.sol leafCount).
    function leaves(uint256 padding, uint8 h) internal pure returns (uint256) {
        return (uint256(1) << h) - (((padding * 128) / 127) >> 5);
    }
}

/// Merkle inclusion over SHA-256 with the two most significant bits of the
/// digest's last byte cleared (FilOzone/pdp src/Proofs.sol, Hashes.orderedHash).
library PdpMerkle {
    bytes32 internal constant TRUNC_MASK = 0xFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF3F;

    function node(bytes32 left, bytes32 right) internal view returns (bytes32 out) {
        assembly ("memory-safe") {
            mstore(0x00, left)
            mstore(0x20, right)
            if iszero(staticcall(gas(), 0x02, 0x00, 0x40, 0x00, 0x20)) { revert(0, 0) }
            out := and(mload(0x00), TRUNC_MASK)
        }
    }

    /// Walks from the leaf at `index` up `path.length` levels; the path must be exactly `levels` long.
    function verify(bytes32[] calldata path, bytes32 expectedRoot, bytes32 leaf, uint256 index, uint256 levels)
        internal
        view
        returns (bool)
    {
        require(path.length == levels, "proof length does not match tree height");
        bytes32 h = leaf;
        for (uint256 i = 0; i < path.length; i++) {
            h = (index & 1) == 0 ? node(h, path[i]) : node(path[i], h);
            index >>= 1;
        }
        return h == expectedRoot;
    }
}

contract PDPVerifier {
    // ---- constants, as FilOzone/pdp 3.4.0 ----
    uint256 public constant MAX_PIECE_SIZE_LOG2 = 50;
    uint256 public constant MAX_ENQUEUED_REMOVALS = 2000;
    uint256 public constant NO_CHALLENGE_SCHEDULED = 0;
    uint256 public constant NO_PROVEN_EPOCH = 0;
    /// After this many epochs without a proof, anyone may delete a data set and clean it up.
    uint256 public constant INACTIVITY_WINDOW = 86400;
    string public constant VERSION = "3.4.0";

    /// src/Fees.sol CLEANUP_DEPOSIT: 0.1 FIL held per data set, paid to whoever finalizes its cleanup.
    uint256 internal constant CLEANUP_DEPOSIT = 0.1 ether;
    /// nextChallengeEpoch of a data set deleted with pieces left to clean up (src/PDPVerifier.sol CLEANUP_MODE_SENTINEL).
    uint256 internal constant CLEANUP_MODE_SENTINEL = type(uint256).max;
    uint256 internal constant MAX_FINALITY = INACTIVITY_WINDOW / 2;
    /// Proof fee per TiB proven, as src/Fees.sol DEFAULT_FEE_PER_TIB (0.00023 FIL).
    uint96 internal constant DEFAULT_FEE_PER_TIB = 230000 gwei;
    /// Filecoin's burn actor (f099) as an EVM address; FVMPay.burn sends there.
    address internal constant BURN_ADDRESS = 0xff00000000000000000000000000000000000063;
    /// fvm-solidity's GET_BEACON_RANDOMNESS precompile.
    address internal constant BEACON_RANDOMNESS = 0xfE00000000000000000000000000000000000006;

    /// 3.4.0 made the challenge finality a constructor argument of the implementation.
    uint256 internal immutable CHALLENGE_FINALITY;
    /// The activity baseline of data sets that never recorded a proven epoch (none here).
    uint256 public immutable LEGACY_ACTIVITY_EPOCH;

    // ---- events (src/PDPVerifier.sol) ----
    event Initialized(uint64 version);
    event OwnershipTransferred(address indexed previousOwner, address indexed newOwner);
    event DataSetCreated(uint256 indexed setId, address indexed storageProvider);
    event StorageProviderChanged(
        uint256 indexed setId, address indexed oldStorageProvider, address indexed newStorageProvider
    );
    event DataSetDeleted(uint256 indexed setId, uint256 deletedLeafCount);
    event DataSetEmpty(uint256 indexed setId);
    event PiecesAdded(uint256 indexed setId, uint256[] pieceIds, PdpCid[] pieceCids);
    event PiecesRemoved(uint256 indexed setId, uint256[] pieceIds);
    event ProofFeePaid(uint256 indexed setId, uint256 fee);
    event FeeUpdateProposed(uint256 currentFee, uint256 newFee, uint256 effectiveTime);
    event PossessionProven(uint256 indexed setId, PdpPieceIdAndOffset[] challenges);
    event NextProvingPeriod(uint256 indexed setId, uint256 challengeEpoch, uint256 leafCount);

    // ---- errors (src/PDPVerifier.sol 3.4.0) ----
    error IndexedError(uint256 idx, string msg);
    error CleanupDepositRequired();
    error DataSetNotFound();
    error DataSetNotLive();
    error DataSetAlreadyInCleanup();
    error OnlyStorageProviderCanDelete();
    error MaxPiecesMustBePositive();
    error DataSetNotInCleanupMode();
    error OnlyStorageProviderCanCleanupPieces();
    error DepositTransferFailed();
    error TransferFailed();
    error InsufficientChallengeDelay(uint256 epochs, uint256 minDelay);
    error ExcessiveChallengeDelay(uint256 epochs, uint256 maxDelay);
    error OwnableUnauthorizedAccount(address account);
    error OwnableInvalidOwner(address owner);
    error InvalidInitialization();

    struct DataSet {
        address storageProvider;
        address proposedStorageProvider;
        address listener;
        uint256 leafCount;
        uint256 pieceCount; // the next piece id
        uint256 nextChallengeEpoch;
        uint256 challengeRange;
        uint256 lastProvenEpoch;
        uint256[] scheduledRemovals;
        /// FIL held for whoever finishes the data set's cleanup.
        uint256 cleanupDeposit;
        /// When deleteDataSet put it in cleanup mode: the provider alone may clean up for INACTIVITY_WINDOW.
        uint256 cleanupModeEpoch;
    }

    address public owner;
    uint64 internal nextDataSetId;
    uint96 internal currentFeePerTiB;
    uint96 internal nextFeePerTiB;
    uint64 internal feeTransitionTime;

    mapping(uint256 => DataSet) internal sets;
    mapping(uint256 => mapping(uint256 => bytes)) internal pieceCids;
    mapping(uint256 => mapping(uint256 => uint256)) internal pieceLeaves;
    // A Fenwick (binary indexed) tree over piece leaf counts, 1-based: entry k covers pieces
    // (k - lowbit(k), k] (0-based ids k - lowbit(k) .. k - 1). The real contract's sum tree
    // (src/PDPVerifier.sol sumTreeAdd/findOnePieceId) is the same structure indexed from 0.
    mapping(uint256 => mapping(uint256 => uint256)) internal fenwick;
    mapping(uint256 => mapping(uint256 => uint256)) internal removalMarks;

    /// (initializer version, challenge finality), as the 3.4.0 implementation's constructor.
    constructor(uint64, /* _initializerVersion: no proxy, nothing to reinitialize */ uint256 _challengeFinality) {
        require(
            _challengeFinality < MAX_FINALITY / 10, ExcessiveChallengeDelay(_challengeFinality, MAX_FINALITY / 10)
        );
        CHALLENGE_FINALITY = _challengeFinality;
        LEGACY_ACTIVITY_EPOCH = block.number;
        owner = msg.sender;
    }

    /// Run once by the deployer, as the real proxy's initializer.
    function initialize() external {
        if (nextDataSetId != 0) revert InvalidInitialization();
        if (msg.sender != owner) revert OwnableUnauthorizedAccount(msg.sender);
        nextDataSetId = 1;
        nextFeePerTiB = DEFAULT_FEE_PER_TIB;
        emit Initialized(1);
    }

    modifier onlyOwner() {
        if (msg.sender != owner) revert OwnableUnauthorizedAccount(msg.sender);
        _;
    }

    function transferOwnership(address newOwner) external onlyOwner {
        if (newOwner == address(0)) revert OwnableInvalidOwner(address(0));
        emit OwnershipTransferred(owner, newOwner);
        owner = newOwner;
    }

    // ---- simple reads ----

    function getChallengeFinality() external view returns (uint256) {
        return CHALLENGE_FINALITY;
    }

    function getNextDataSetId() external view returns (uint64) {
        return nextDataSetId;
    }

    /// Created and not yet fully cleaned up.
    function dataSetExists(uint256 setId) internal view returns (bool) {
        return sets[setId].storageProvider != address(0);
    }

    /// Created, and neither deleted nor in cleanup mode.
    function dataSetLive(uint256 setId) public view returns (bool) {
        return dataSetExists(setId) && sets[setId].nextChallengeEpoch != CLEANUP_MODE_SENTINEL;
    }

    function pieceLive(uint256 setId, uint256 pieceId) public view returns (bool) {
        return dataSetLive(setId) && pieceId < sets[setId].pieceCount && pieceLeaves[setId][pieceId] > 0;
    }

    /// Live and inside the range the current proving period challenges.
    function pieceChallengable(uint256 setId, uint256 pieceId) external view returns (bool) {
        uint256 range = sets[setId].challengeRange;
        if (range == 0 || !pieceLive(setId, pieceId)) return false;
        (uint256 lastId,) = locateLeaf(setId, range - 1);
        return pieceId <= lastId;
    }

    function requireLive(uint256 setId) internal view {
        require(dataSetLive(setId), DataSetNotLive());
    }

    function getDataSetLeafCount(uint256 setId) external view returns (uint256) {
        requireLive(setId);
        return sets[setId].leafCount;
    }

    /// Readable in cleanup mode too (3.4.0).
    function getNextPieceId(uint256 setId) external view returns (uint256) {
        require(dataSetExists(setId), DataSetNotFound());
        return sets[setId].pieceCount;
    }

    /// Readable in cleanup mode too, where it is the sentinel (3.4.0).
    function getNextChallengeEpoch(uint256 setId) external view returns (uint256) {
        require(dataSetExists(setId), DataSetNotFound());
        return sets[setId].nextChallengeEpoch;
    }

    function getDataSetListener(uint256 setId) external view returns (address) {
        requireLive(setId);
        return sets[setId].listener;
    }

    function getDataSetStorageProvider(uint256 setId) external view returns (address, address) {
        requireLive(setId);
        return (sets[setId].storageProvider, sets[setId].proposedStorageProvider);
    }

    function getDataSetLastProvenEpoch(uint256 setId) external view returns (uint256) {
        requireLive(setId);
        return sets[setId].lastProvenEpoch;
    }

    function getPieceCid(uint256 setId, uint256 pieceId) public view returns (PdpCid memory) {
        requireLive(setId);
        return PdpCid(pieceCids[setId][pieceId]);
    }

    function getPieceLeafCount(uint256 setId, uint256 pieceId) external view returns (uint256) {
        requireLive(setId);
        return pieceLeaves[setId][pieceId];
    }

    function getChallengeRange(uint256 setId) external view returns (uint256) {
        requireLive(setId);
        return sets[setId].challengeRange;
    }

    function getScheduledRemovals(uint256 setId) external view returns (uint256[] memory) {
        requireLive(setId);
        return sets[setId].scheduledRemovals;
    }

    function getActivePieceCount(uint256 setId) external view returns (uint256 activeCount) {
        requireLive(setId);
        uint256 n = sets[setId].pieceCount;
        for (uint256 id = 0; id < n; id++) {
            if (pieceLeaves[setId][id] > 0) activeCount++;
        }
    }

    /// Pages over live pieces by their rank among live pieces (src/PDPVerifier.sol getActivePieces).
    function getActivePieces(uint256 setId, uint256 offset, uint256 limit)
        external
        view
        returns (PdpCid[] memory pieces, uint256[] memory pieceIds, bool hasMore)
    {
        requireLive(setId);
        require(limit > 0, "Limit must be greater than 0");
        pieces = new PdpCid[](limit);
        pieceIds = new uint256[](limit);
        uint256 n = sets[setId].pieceCount;
        uint256 seen = 0;
        uint256 found = 0;
        for (uint256 id = 0; id < n; id++) {
            if (pieceLeaves[setId][id] == 0) continue;
            if (seen >= offset) {
                if (found == limit) {
                    hasMore = true;
                    break;
                }
                pieces[found] = PdpCid(pieceCids[setId][id]);
                pieceIds[found] = id;
                found++;
            }
            seen++;
        }
        shrink(pieces, pieceIds, found);
    }

    /// Pages over live pieces from a piece id on (src/PDPVerifier.sol getActivePiecesByCursor).
    function getActivePiecesByCursor(uint256 setId, uint256 startPieceId, uint256 limit)
        external
        view
        returns (PdpCid[] memory pieces, uint256[] memory pieceIds, bool hasMore)
    {
        requireLive(setId);
        require(limit > 0, "Limit must be greater than 0");
        pieces = new PdpCid[](limit);
        pieceIds = new uint256[](limit);
        uint256 n = sets[setId].pieceCount;
        uint256 found = 0;
        for (uint256 id = startPieceId; id < n; id++) {
            if (pieceLeaves[setId][id] == 0) continue;
            if (found == limit) {
                hasMore = true;
                break;
            }
            pieces[found] = PdpCid(pieceCids[setId][id]);
            pieceIds[found] = id;
            found++;
        }
        shrink(pieces, pieceIds, found);
    }

    function shrink(PdpCid[] memory pieces, uint256[] memory pieceIds, uint256 length) internal pure {
        assembly ("memory-safe") {
            mstore(pieces, length)
            mstore(pieceIds, length)
        }
    }

    function findPieceIdsByCid(uint256 setId, PdpCid calldata pieceCid, uint256 startPieceId, uint256 limit)
        external
        view
        returns (uint256[] memory pieceIds)
    {
        requireLive(setId);
        require(limit > 0, "Limit must be greater than 0");
        bytes32 wanted = keccak256(pieceCid.data);
        pieceIds = new uint256[](limit);
        uint256 n = sets[setId].pieceCount;
        uint256 found = 0;
        for (uint256 id = startPieceId; id < n && found < limit; id++) {
            if (pieceLeaves[setId][id] > 0 && keccak256(pieceCids[setId][id]) == wanted) {
                pieceIds[found++] = id;
            }
        }
        assembly ("memory-safe") {
            mstore(pieceIds, found)
        }
    }

    function findPieceIds(uint256 setId, uint256[] calldata leafIndexs)
        external
        view
        returns (PdpPieceIdAndOffset[] memory result)
    {
        result = new PdpPieceIdAndOffset[](leafIndexs.length);
        for (uint256 i = 0; i < leafIndexs.length; i++) {
            (uint256 pieceId, uint256 offset) = locateLeaf(setId, leafIndexs[i]);
            result[i] = PdpPieceIdAndOffset(pieceId, offset);
        }
    }

    // ---- storage provider role ----

    function proposeDataSetStorageProvider(uint256 setId, address newStorageProvider) external {
        requireLive(setId);
        DataSet storage ds = sets[setId];
        require(
            ds.storageProvider == msg.sender, "Only the current storage provider can propose a new storage provider"
        );
        ds.proposedStorageProvider = newStorageProvider == msg.sender ? address(0) : newStorageProvider;
    }

    function claimDataSetStorageProvider(uint256 setId, bytes calldata extraData) external {
        requireLive(setId);
        DataSet storage ds = sets[setId];
        require(
            ds.proposedStorageProvider == msg.sender,
            "Only the proposed storage provider can claim storage provider role"
        );
        address previous = ds.storageProvider;
        ds.storageProvider = msg.sender;
        ds.proposedStorageProvider = address(0);
        emit StorageProviderChanged(setId, previous, msg.sender);
        if (ds.listener != address(0)) {
            PDPListener(ds.listener).storageProviderChanged(setId, previous, msg.sender, extraData);
        }
    }

    // ---- data sets ----

    /// As src/PDPVerifier.sol createDataSet (3.4.0): the listener hears of the new set first, then
    /// the creator's FIL must hold the cleanup deposit (the excess goes back).
    function createDataSet(address listenerAddr, bytes calldata extraData) external payable returns (uint256) {
        uint256 setId = openDataSet(listenerAddr, extraData);
        holdCleanupDeposit(setId);
        return setId;
    }

    function openDataSet(address listenerAddr, bytes memory extraData) internal returns (uint256 setId) {
        require(nextDataSetId != 0, "not initialized");
        setId = nextDataSetId++;
        DataSet storage ds = sets[setId];
        ds.storageProvider = msg.sender;
        ds.listener = listenerAddr;
        // 3.4.0 counts a new set's inactivity from its creation.
        ds.lastProvenEpoch = block.number;
        if (listenerAddr != address(0)) {
            PDPListener(listenerAddr).dataSetCreated(setId, msg.sender, extraData);
        }
        emit DataSetCreated(setId, msg.sender);
    }

    /// src/PDPVerifier.sol _handleFeesWithDeposit: CleanupDepositRequired below the deposit; the
    /// rest of the FIL sent goes back to the sender (FVMPay.pay, a plain value transfer).
    function holdCleanupDeposit(uint256 setId) internal {
        require(msg.value >= CLEANUP_DEPOSIT, CleanupDepositRequired());
        sets[setId].cleanupDeposit = CLEANUP_DEPOSIT;
        uint256 excess = msg.value - CLEANUP_DEPOSIT;
        if (excess > 0) {
            (bool ok,) = msg.sender.call{value: excess}("");
            require(ok, TransferFailed());
        }
    }

    function FIL_CLEANUP_DEPOSIT() external pure returns (uint256) {
        return CLEANUP_DEPOSIT;
    }

    /// src/PDPVerifier.sol deleteDataSet (3.4.0): the provider's, or anyone's once the set has gone
    /// INACTIVITY_WINDOW epochs without a proof. A set with no pieces is finished at once (its
    /// deposit to the caller); one with pieces enters cleanup mode for cleanupPieces.
    function deleteDataSet(uint256 setId, bytes calldata extraData) external {
        DataSet storage ds = sets[setId];
        require(ds.storageProvider != address(0), DataSetNotLive());
        require(ds.nextChallengeEpoch != CLEANUP_MODE_SENTINEL, DataSetAlreadyInCleanup());
        uint256 lastActivity = ds.lastProvenEpoch == NO_PROVEN_EPOCH ? LEGACY_ACTIVITY_EPOCH : ds.lastProvenEpoch;
        if (block.number <= lastActivity + INACTIVITY_WINDOW) {
            require(msg.sender == ds.storageProvider, OnlyStorageProviderCanDelete());
        }
        uint256 deletedLeafCount = ds.leafCount;
        ds.leafCount = 0;
        if (ds.listener != address(0)) {
            PDPListener(ds.listener).dataSetDeleted(setId, deletedLeafCount, extraData);
        }
        emit DataSetDeleted(setId, deletedLeafCount);
        if (ds.pieceCount == 0) {
            finalizeCleanup(setId);
        } else {
            ds.nextChallengeEpoch = CLEANUP_MODE_SENTINEL;
            ds.cleanupModeEpoch = block.number;
        }
    }

    /// src/PDPVerifier.sol cleanupPieces: clears up to maxPieces pieces from the top; the call that
    /// clears the last one finishes the cleanup and takes the deposit. The provider's alone for
    /// INACTIVITY_WINDOW epochs after the deletion.
    function cleanupPieces(uint256 setId, uint256 maxPieces) external returns (bool done) {
        require(maxPieces > 0, MaxPiecesMustBePositive());
        DataSet storage ds = sets[setId];
        require(ds.storageProvider != address(0) && ds.nextChallengeEpoch == CLEANUP_MODE_SENTINEL, DataSetNotInCleanupMode());
        if (block.number <= ds.cleanupModeEpoch + INACTIVITY_WINDOW) {
            require(msg.sender == ds.storageProvider, OnlyStorageProviderCanCleanupPieces());
        }
        uint256 count = ds.pieceCount;
        uint256 toClean = count < maxPieces ? count : maxPieces;
        for (uint256 i = 0; i < toClean; i++) {
            uint256 id = count - 1 - i;
            delete pieceCids[setId][id];
            delete pieceLeaves[setId][id];
            delete fenwick[setId][id + 1];
        }
        ds.pieceCount = count - toClean;
        if (ds.pieceCount == 0) {
            finalizeCleanup(setId);
            done = true;
        }
    }

    /// src/PDPVerifier.sol _finalizeCleanup: forgets the set and pays its deposit to the caller.
    function finalizeCleanup(uint256 setId) internal {
        DataSet storage ds = sets[setId];
        for (uint256 i = 0; i < ds.scheduledRemovals.length; i++) {
            delete removalMarks[setId][ds.scheduledRemovals[i] >> 8];
        }
        uint256 deposit = ds.cleanupDeposit;
        delete sets[setId];
        if (deposit > 0) {
            (bool ok,) = msg.sender.call{value: deposit}("");
            require(ok, DepositTransferFailed());
        }
    }

    /// setId 0 creates a data set and adds the pieces in one call; extraData is then
    /// abi.encode(bytes createPayload, bytes addPayload), and the cleanup deposit is checked after
    /// both listener calls (src/PDPVerifier.sol addPieces).
    function addPieces(uint256 setId, address listenerAddr, PdpCid[] calldata pieceData, bytes calldata extraData)
        external
        payable
        returns (uint256)
    {
        if (setId == 0) {
            (bytes memory createPayload, bytes memory addPayload) = abi.decode(extraData, (bytes, bytes));
            require(listenerAddr != address(0), "listener required for new dataset");
            uint256 newSetId = openDataSet(listenerAddr, createPayload);
            if (pieceData.length > 0) appendPieces(newSetId, pieceData, addPayload);
            holdCleanupDeposit(newSetId);
            return newSetId;
        }
        require(listenerAddr == address(0), "listener must be zero for existing dataset");
        require(msg.value == 0, "no fee on add to existing dataset");
        requireLive(setId);
        require(sets[setId].storageProvider == msg.sender, "Only the storage provider can add pieces");
        return appendPieces(setId, pieceData, extraData);
    }

    function appendPieces(uint256 setId, PdpCid[] calldata pieceData, bytes memory extraData)
        internal
        returns (uint256 firstAdded)
    {
        uint256 count = pieceData.length;
        require(count > 0, "Must add at least one piece");
        DataSet storage ds = sets[setId];
        firstAdded = ds.pieceCount;
        uint256[] memory ids = new uint256[](count);
        for (uint256 i = 0; i < count; i++) {
            ids[i] = appendOne(setId, ds, i, pieceData[i].data);
        }
        emit PiecesAdded(setId, ids, pieceData);
        if (ds.listener != address(0)) {
            PDPListener(ds.listener).piecesAdded(setId, firstAdded, pieceData, extraData);
        }
    }

    function appendOne(uint256 setId, DataSet storage ds, uint256 callIdx, bytes calldata cid)
        internal
        returns (uint256 pieceId)
    {
        (uint256 padding, uint8 h) = PdpPieceCid.parse(cid);
        if (PdpPieceCid.paddingTooLarge(padding, h)) revert IndexedError(callIdx, "Padding is too large");
        if (h > MAX_PIECE_SIZE_LOG2) revert IndexedError(callIdx, "Piece size must be less than 2^50");
        uint256 count = PdpPieceCid.leaves(padding, h);
        pieceId = ds.pieceCount++;
        fenwickAppend(setId, pieceId + 1, count);
        pieceCids[setId][pieceId] = cid;
        pieceLeaves[setId][pieceId] = count;
        ds.leafCount += count;
    }

    function schedulePieceDeletions(uint256 setId, uint256[] calldata pieceIds, bytes calldata extraData) external {
        requireLive(setId);
        DataSet storage ds = sets[setId];
        require(ds.storageProvider == msg.sender, "Only the storage provider can schedule removal of pieces");
        require(
            pieceIds.length + ds.scheduledRemovals.length <= MAX_ENQUEUED_REMOVALS,
            "Too many removals wait for next proving period to schedule"
        );
        for (uint256 i = 0; i < pieceIds.length; i++) {
            uint256 id = pieceIds[i];
            require(id < ds.pieceCount, "Can only schedule removal of existing pieces");
            require(pieceLeaves[setId][id] > 0, "Can only schedule removal of live pieces");
            uint256 bit = uint256(1) << (id & 255);
            require(removalMarks[setId][id >> 8] & bit == 0, "Piece ID already scheduled for removal");
            removalMarks[setId][id >> 8] |= bit;
            ds.scheduledRemovals.push(id);
        }
        if (ds.listener != address(0)) {
            PDPListener(ds.listener).piecesScheduledRemove(setId, pieceIds, extraData);
        }
    }

    // ---- proving ----

    /// As src/PDPVerifier.sol provePossession: each proof answers the challenge
    /// keccak256(seed ‖ setId ‖ uint64 index) mod challengeRange, where the seed is the beacon
    /// randomness at the scheduled challenge epoch.
    function provePossession(uint256 setId, PdpProof[] calldata proofs) external payable {
        DataSet storage ds = sets[setId];
        require(msg.sender == ds.storageProvider, "Only the storage provider can prove possession");
        require(proofs.length > 0, "empty proof");
        require(block.number >= ds.nextChallengeEpoch, "premature proof");
        require(ds.nextChallengeEpoch != NO_CHALLENGE_SCHEDULED, "no challenge scheduled");

        uint256 seed = getRandomness(ds.nextChallengeEpoch);
        PdpPieceIdAndOffset[] memory challenges = new PdpPieceIdAndOffset[](proofs.length);
        for (uint256 i = 0; i < proofs.length; i++) {
            challenges[i] = checkOneProof(setId, seed, i, ds.challengeRange, proofs[i]);
        }

        uint256 fee = proofFee(ds.challengeRange);
        burn(fee);
        emit ProofFeePaid(setId, fee);
        ds.lastProvenEpoch = block.number;

        if (ds.listener != address(0)) {
            PDPListener(ds.listener).possessionProven(setId, ds.leafCount, seed, proofs.length);
        }
        emit PossessionProven(setId, challenges);

        if (msg.value > fee) {
            (bool ok,) = msg.sender.call{value: msg.value - fee}("");
            require(ok, "Transfer failed.");
        }
    }

    function checkOneProof(uint256 setId, uint256 seed, uint256 index, uint256 range, PdpProof calldata p)
        internal
        view
        returns (PdpPieceIdAndOffset memory challenge)
    {
        uint256 leafIndex = uint256(keccak256(abi.encodePacked(seed, setId, uint64(index)))) % range;
        (uint256 pieceId, uint256 offset) = locateLeaf(setId, leafIndex);
        bytes memory cid = getPieceCid(setId, pieceId).data;
        bool ok = PdpMerkle.verify(p.proof, PdpPieceCid.root(cid), p.leaf, offset, PdpPieceCid.height(cid));
        require(ok, "proof did not verify");
        return PdpPieceIdAndOffset(pieceId, offset);
    }

    function getRandomness(uint256 epoch) public view returns (uint256 randomness) {
        (bool ok, bytes memory out) = BEACON_RANDOMNESS.staticcall(abi.encode(epoch));
        require(ok && out.length >= 32, "beacon randomness unavailable");
        randomness = abi.decode(out, (uint256));
    }

    /// As src/PDPVerifier.sol nextProvingPeriod: drop the pieces scheduled for removal, widen the
    /// challenge range to every piece added so far, and schedule the next challenge between
    /// CHALLENGE_FINALITY and MAX_FINALITY epochs ahead (an epoch in the past wraps around to a
    /// huge delay, as the real unchecked subtraction does).
    function nextProvingPeriod(uint256 setId, uint256 challengeEpoch, bytes calldata extraData) external {
        DataSet storage ds = sets[setId];
        require(msg.sender == ds.storageProvider, "only the storage provider can move to next proving period");
        require(ds.leafCount > 0, "can only start proving once leaves are added");
        if (ds.lastProvenEpoch == NO_PROVEN_EPOCH) ds.lastProvenEpoch = block.number;

        if (ds.scheduledRemovals.length > 0) removeScheduled(setId, ds);

        ds.challengeRange = ds.leafCount;
        unchecked {
            uint256 delay = challengeEpoch - block.number;
            require(delay >= CHALLENGE_FINALITY, InsufficientChallengeDelay(delay, CHALLENGE_FINALITY));
            require(delay <= MAX_FINALITY, ExcessiveChallengeDelay(delay, MAX_FINALITY));
        }
        ds.nextChallengeEpoch = challengeEpoch;
        if (ds.leafCount == 0) {
            emit DataSetEmpty(setId);
            // 3.4.0: an emptied set's inactivity counts from now
            ds.lastProvenEpoch = block.number;
            ds.nextChallengeEpoch = NO_CHALLENGE_SCHEDULED;
        }
        if (ds.listener != address(0)) {
            PDPListener(ds.listener).nextProvingPeriod(setId, ds.nextChallengeEpoch, ds.leafCount, extraData);
        }
        emit NextProvingPeriod(setId, challengeEpoch, ds.leafCount);
    }

    function removeScheduled(uint256 setId, DataSet storage ds) internal {
        uint256[] memory ids = ds.scheduledRemovals;
        delete ds.scheduledRemovals;
        uint256 removed = 0;
        for (uint256 i = 0; i < ids.length; i++) {
            uint256 id = ids[i];
            delete removalMarks[setId][id >> 8];
            uint256 count = pieceLeaves[setId][id];
            fenwickSubtract(setId, ds.pieceCount, id + 1, count);
            delete pieceLeaves[setId][id];
            delete pieceCids[setId][id];
            removed += count;
        }
        ds.leafCount -= removed;
        emit PiecesRemoved(setId, ids);
    }

    // ---- proof fee (src/Fees.sol, src/PDPVerifier.sol) ----

    /// FVMPay.burn: the fee goes to the burn actor.
    function burn(uint256 amount) internal {
        require(msg.value >= amount, "Incorrect fee amount");
        (bool ok,) = BURN_ADDRESS.call{value: amount}("");
        require(ok, "Burn failed");
    }

    function calculateProofFee(uint256 setId) external view returns (uint256) {
        return proofFee(sets[setId].challengeRange);
    }

    function calculateProofFeeForSize(uint256 proofSize) public view returns (uint256) {
        require(proofSize > 0, "failed to validate: proof size must be greater than 0");
        return (uint256(feePerTiB()) * proofSize) >> 40;
    }

    function proofFee(uint256 challengeRange) internal view returns (uint256) {
        return calculateProofFeeForSize(32 * challengeRange);
    }

    function feePerTiB() public view returns (uint96) {
        return block.timestamp >= feeTransitionTime ? nextFeePerTiB : currentFeePerTiB;
    }

    function proposedFeePerTiB() external view returns (uint96) {
        return nextFeePerTiB;
    }

    function feeEffectiveTime() external view returns (uint64) {
        return feeTransitionTime;
    }

    function updateProofFee(uint256 newFeePerTiB) external onlyOwner {
        if (block.timestamp >= feeTransitionTime) currentFeePerTiB = nextFeePerTiB;
        nextFeePerTiB = uint96(newFeePerTiB);
        feeTransitionTime = uint64(block.timestamp + 7 days);
        emit FeeUpdateProposed(currentFeePerTiB, newFeePerTiB, feeTransitionTime);
    }

    /// No upgrades are planned on the simulated chain (the verifier has no proxy).
    function nextUpgrade() external pure returns (address nextImplementation, uint96 afterEpoch) {
        return (address(0), 0);
    }

    // ---- the Fenwick tree of leaf counts ----

    function lowbit(uint256 k) internal pure returns (uint256) {
        return k & (~k + 1);
    }

    /// Appends entry k (= pieceCount after the append): it covers (k - lowbit(k), k], so it is the
    /// new count plus the prefix sum of (k - lowbit(k), k - 1].
    function fenwickAppend(uint256 setId, uint256 k, uint256 count) internal {
        uint256 total = count;
        uint256 stop = k - lowbit(k);
        for (uint256 j = k - 1; j > stop; j -= lowbit(j)) {
            total += fenwick[setId][j];
        }
        fenwick[setId][k] = total;
    }

    function fenwickSubtract(uint256 setId, uint256 size, uint256 k, uint256 count) internal {
        for (; k <= size; k += lowbit(k)) {
            fenwick[setId][k] -= count;
        }
    }

    /// The piece holding leaf `leafIndex` of the data set and the leaf's offset in it: descends the
    /// tree to the longest prefix of pieces whose leaves sum to at most leafIndex (pieces emptied by
    /// removal add nothing, so they are stepped over).
    function locateLeaf(uint256 setId, uint256 leafIndex) internal view returns (uint256 pieceId, uint256 offset) {
        require(leafIndex < sets[setId].leafCount, "Leaf index out of bounds");
        uint256 size = sets[setId].pieceCount;
        uint256 step = 1;
        while (step <= size >> 1) step <<= 1;
        uint256 pos = 0;
        uint256 rest = leafIndex;
        for (; step > 0; step >>= 1) {
            uint256 next = pos + step;
            if (next <= size && fenwick[setId][next] <= rest) {
                pos = next;
                rest -= fenwick[setId][next];
            }
        }
        return (pos, rest);
    }
}
