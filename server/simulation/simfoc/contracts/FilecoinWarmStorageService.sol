// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {PdpCid, PDPListener} from "./PDPVerifier.sol";
import {FwssPriceList, FwssRails} from "./FwssRails.sol";

// Stand-in for FilOzone/filecoin-services' FilecoinWarmStorageService as deployed on
// calibration and mainnet since June 2026: 1.3.1 (service_contracts/src/FilecoinWarmStorageService.sol,
// src/lib/Rails.sol, src/lib/PriceListUSDFC.sol, src/Errors.sol). Its prices are fixed
// (FwssPriceList); each data set keeps a lifecycle reserve on its PDP rail out of which the
// provider is paid a fee per operation (creation, adding pieces, removals, a termination the
// payer signed). It runs behind an ERC1967Proxy (ERC1967Proxy.sol) as there: the state lives in
// the proxy, the addresses of the other contracts are immutables of each implementation, and the
// owner upgrades it as OpenZeppelin's UUPSUpgradeable lets it, announced first
// (announcePlannedUpgrade, _authorizeUpgrade) and migrated by the new implementation's
// migrate(_viewContract). The read-only side lives in FilecoinWarmStorageServiceStateView, which
// reads the proxy's storage through extsload, so the slot order below is part of the interface
// (FwssSlots in FwssStateReads.sol).

/// Filecoin Pay's rail as getRail returns it (FilOzone/filecoin-pay src/FilecoinPayV1.sol RailView).
struct FwssRailView {
    address token;
    address from;
    address to;
    address operator;
    address validator;
    uint256 paymentRate;
    uint256 lockupPeriod;
    uint256 lockupFixed;
    uint256 settledUpTo;
    uint256 endEpoch;
    uint256 commissionRateBps;
    address serviceFeeRecipient;
}

/// IValidator.ValidationResult of Filecoin Pay.
struct FwssValidationResult {
    uint256 modifiedAmount;
    uint256 settleUpto;
    string note;
}

interface IFwssPayments {
    function createRail(
        address token,
        address from,
        address to,
        address validator,
        uint256 commissionRateBps,
        address serviceFeeRecipient
    ) external returns (uint256);
    function modifyRailLockup(uint256 railId, uint256 period, uint256 lockupFixed) external;
    function modifyRailPayment(uint256 railId, uint256 newRate, uint256 oneTimePayment) external;
    function terminateRail(uint256 railId) external;
    function settleRail(uint256 railId, uint256 untilEpoch)
        external
        returns (uint256, uint256, uint256, uint256, uint256, string memory);
    function getAccountInfoIfSettled(address token, address owner)
        external
        view
        returns (uint256 fundedUntilEpoch, uint256 currentFunds, uint256 availableFunds, uint256 currentLockupRate);
    function operatorApprovals(address token, address client, address operator)
        external
        view
        returns (
            bool isApproved,
            uint256 rateAllowance,
            uint256 lockupAllowance,
            uint256 rateUsage,
            uint256 lockupUsage,
            uint256 maxLockupPeriod
        );
    function getRail(uint256 railId) external view returns (FwssRailView memory);
}

interface IFwssProviderRegistry {
    function getProviderIdByAddress(address providerAddress) external view returns (uint256);
    function getProviderPayee(uint256 providerId) external view returns (address payee);
}

interface IFwssSessionKeys {
    function authorizationExpiry(address user, address signer, bytes32 permission) external view returns (uint256);
}

interface IFwssPdpVerifier {
    function getDataSetLeafCount(uint256 setId) external view returns (uint256);
    function getDataSetLastProvenEpoch(uint256 setId) external view returns (uint256);
}

interface IFwssToken {
    function decimals() external view returns (uint8);
}

/// What an implementation answers when a proxy is upgraded to it (OpenZeppelin IERC1822Proxiable).
interface IFwssProxiable {
    function proxiableUUID() external view returns (bytes32);
}

/// The proxy's side of an upgrade (OpenZeppelin 5 UUPSUpgradeable._upgradeToAndCallUUPS and
/// ERC1967Utils.upgradeToAndCall), outside the service's own code to keep it under the 24 KiB code
/// limit, as FwssSignatures. Runs by DELEGATECALL in the proxy's storage.
library FwssUpgrades {
    bytes32 internal constant IMPLEMENTATION_SLOT = 0x360894a13ba1a3210667c828492db98dca3e2076cc3735a920a3ca505d382bbc;

    event Upgraded(address indexed implementation);

    error UUPSUnsupportedProxiableUUID(bytes32 slot);
    error ERC1967InvalidImplementation(address implementation);
    error ERC1967NonPayable();

    function upgradeToAndCall(address newImplementation, bytes calldata data) public {
        try IFwssProxiable(newImplementation).proxiableUUID() returns (bytes32 slot) {
            if (slot != IMPLEMENTATION_SLOT) revert UUPSUnsupportedProxiableUUID(slot);
        } catch {
            revert ERC1967InvalidImplementation(newImplementation);
        }
        bytes32 implementationSlot = IMPLEMENTATION_SLOT;
        assembly ("memory-safe") {
            sstore(implementationSlot, newImplementation)
        }
        emit Upgraded(newImplementation);
        if (data.length == 0) {
            if (msg.value > 0) revert ERC1967NonPayable();
            return;
        }
        (bool ok, bytes memory answer) = newImplementation.delegatecall(data);
        if (!ok) {
            assembly ("memory-safe") {
                revert(add(answer, 0x20), mload(answer))
            }
        }
    }
}

/// The errors of filecoin-services 1.3.1 src/Errors.sol this contract raises (same names and
/// arguments, so a client decodes them).
library FwssErrors {
    // AddressField order of src/Errors.sol
    uint8 internal constant PDP_VERIFIER = 0;
    uint8 internal constant FILECOIN_PAY = 1;
    uint8 internal constant USDFC = 2;
    uint8 internal constant FILBEAM_CONTROLLER = 3;
    uint8 internal constant SESSION_KEY_REGISTRY = 4;
    uint8 internal constant SERVICE_PROVIDER = 5;
    uint8 internal constant PAYER = 6;
    uint8 internal constant PROVIDER_REGISTRY = 7;
    uint8 internal constant FILBEAM_BENEFICIARY = 8;
    uint8 internal constant VIEW = 9;

    error ZeroAddress(uint8 field);
    error OnlyPDPVerifierAllowed(address expected, address actual);
    error OnlyFilBeamControllerAllowed(address expected, address actual);
    error CommissionExceedsMaximum(uint8 commissionType, uint256 max, uint256 actual);
    error MaxProvingPeriodZero();
    error InvalidChallengeWindowSize(uint256 maxProvingPeriod, uint256 challengeWindowSize);
    error ProviderAlreadyApproved(uint256 providerId);
    error ProviderNotInApprovedList(uint256 providerId);
    error ProviderIdMismatchAtIndex(uint256 index, uint256 providerId);
    error ExtraDataRequired();
    error ExtraDataTooLarge(uint256 actualSize, uint256 maxAllowedSize);
    error ProviderNotRegistered(address provider);
    error ClientDataSetAlreadyRegistered(uint256 clientDataSetId);
    error MetadataKeyAndValueLengthMismatch(uint256 keysLength, uint256 valuesLength);
    error TooManyMetadataKeys(uint256 maxAllowed, uint256 keysLength);
    error DuplicateMetadataKey(uint256 dataSetId, string key);
    error MetadataKeyExceedsMaxLength(uint256 index, uint256 maxAllowed, uint256 length);
    error MetadataValueExceedsMaxLength(uint256 index, uint256 maxAllowed, uint256 length);
    error MetadataArrayCountMismatch(uint256 metadataArrayCount, uint256 pieceCount);
    error DataSetNotRegistered(uint256 dataSetId);
    error PaymentRailsNotFinalized(uint256 dataSetId, uint256 pdpEndEpoch);
    error RailNotFullySettled(uint256 railId, uint256 settledUpTo, uint256 endEpoch);
    error InvalidDataSetId(uint256 dataSetId);
    error DataSetPaymentAlreadyTerminated(uint256 dataSetId);
    error DataSetPaymentBeyondEndEpoch(uint256 dataSetId, uint256 pdpEndEpoch, uint256 currentBlock);
    error ProofAlreadySubmitted(uint256 dataSetId);
    error InvalidChallengeCount(uint256 dataSetId, uint256 minExpected, uint256 actual);
    error ProvingNotStarted(uint256 dataSetId);
    error ProvingPeriodPassed(uint256 dataSetId, uint256 deadline, uint256 nowBlock);
    error ChallengeWindowTooEarly(uint256 dataSetId, uint256 windowStart, uint256 nowBlock);
    error InvalidChallengeEpoch(uint256 dataSetId, uint256 minAllowed, uint256 maxAllowed, uint256 actual);
    error NextProvingPeriodAlreadyCalled(uint256 dataSetId, uint256 periodDeadline, uint256 nowBlock);
    error StorageProviderChangesNotSupported();
    error CallerNotPayerOrPayee(uint256 dataSetId, address expectedPayer, address expectedPayee, address caller);
    error CallerNotPayer(uint256 dataSetId, address expectedPayer, address caller);
    error CallerNotServiceProvider(uint256 dataSetId, address expectedServiceProvider, address caller);
    error DataSetNotAbandoned(uint256 dataSetId, uint256 requiredEpoch, uint256 currentBlock);
    error FilBeamServiceNotConfigured(uint256 dataSetId);
    error CDNPaymentAlreadyTerminated(uint256 dataSetId);
    error CacheMissPaymentAlreadyTerminated(uint256 dataSetId);
    error InvalidTopUpAmount(uint256 dataSetId);
    error InsufficientLockupFunds(address payer, uint256 required, uint256 available);
    error OperatorNotApproved(address payer, address operator);
    error InsufficientRateAllowance(
        address payer, address operator, uint256 rateAllowance, uint256 rateUsage, uint256 rateRequired
    );
    error InsufficientLockupAllowance(
        address payer, address operator, uint256 lockupAllowance, uint256 lockupUsage, uint256 lockupRequired
    );
    error InsufficientMaxLockupPeriod(
        address payer, address operator, uint256 maxLockupPeriod, uint256 requiredLockupPeriod
    );
    error NoPDPPaymentRail(uint256 dataSetId);
    error InvalidEpochRange(uint256 fromEpoch, uint256 toEpoch);
    error CallerNotPayments(address expected, address actual);
    error ServiceContractMustTerminateRail();
    error DataSetNotFoundForRail(uint256 railId);
    error InvalidSignatureLength(uint256 expectedLength, uint256 actualLength);
    error UnsupportedSignatureV(uint8 v);
    error InvalidSignature(address expected, address actual);
}

/// EIP-712 hashing of the payer's authorisations. Type strings and member order as
/// filecoin-services src/lib/SignatureVerificationLib.sol and the SDK's
/// synapse-core/src/typed-data/type-definitions.ts (EIP712Types) agree on; the referenced
/// types are appended in alphabetical order as EIP-712 encodeType requires.
library FwssTypedData {
    bytes32 internal constant METADATA_ENTRY_TYPEHASH = keccak256("MetadataEntry(string key,string value)");
    bytes32 internal constant CREATE_DATA_SET_TYPEHASH = keccak256(
        "CreateDataSet(uint256 clientDataSetId,address payee,MetadataEntry[] metadata)MetadataEntry(string key,string value)"
    );
    bytes32 internal constant CID_TYPEHASH = keccak256("Cid(bytes data)");
    bytes32 internal constant PIECE_METADATA_TYPEHASH =
        keccak256("PieceMetadata(uint256 pieceIndex,MetadataEntry[] metadata)MetadataEntry(string key,string value)");
    bytes32 internal constant ADD_PIECES_TYPEHASH = keccak256(
        "AddPieces(uint256 clientDataSetId,uint256 nonce,Cid[] pieceData,PieceMetadata[] pieceMetadata)Cid(bytes data)MetadataEntry(string key,string value)PieceMetadata(uint256 pieceIndex,MetadataEntry[] metadata)"
    );
    bytes32 internal constant SCHEDULE_PIECE_REMOVALS_TYPEHASH =
        keccak256("SchedulePieceRemovals(uint256 clientDataSetId,uint256[] pieceIds)");
    bytes32 internal constant TERMINATE_SERVICE_TYPEHASH = keccak256("TerminateService(uint256 dataSetId)");

    /// encodeData of MetadataEntry[]: keccak256 of the concatenated entry hashes.
    function metadataHash(string[] memory keys, string[] memory values) internal pure returns (bytes32) {
        require(
            keys.length == values.length, FwssErrors.MetadataKeyAndValueLengthMismatch(keys.length, values.length)
        );
        bytes32[] memory entries = new bytes32[](keys.length);
        for (uint256 i = 0; i < keys.length; i++) {
            entries[i] = keccak256(
                abi.encode(METADATA_ENTRY_TYPEHASH, keccak256(bytes(keys[i])), keccak256(bytes(values[i])))
            );
        }
        return keccak256(abi.encodePacked(entries));
    }

    function createDataSet(uint256 clientDataSetId, address payee, string[] memory keys, string[] memory values)
        internal
        pure
        returns (bytes32)
    {
        return keccak256(abi.encode(CREATE_DATA_SET_TYPEHASH, clientDataSetId, payee, metadataHash(keys, values)));
    }

    function addPieces(
        uint256 clientDataSetId,
        uint256 nonce,
        PdpCid[] memory pieces,
        string[][] memory keys,
        string[][] memory values
    ) internal pure returns (bytes32) {
        bytes32[] memory cids = new bytes32[](pieces.length);
        for (uint256 i = 0; i < pieces.length; i++) {
            cids[i] = keccak256(abi.encode(CID_TYPEHASH, keccak256(pieces[i].data)));
        }
        require(keys.length == values.length, "Keys/values array length mismatch");
        bytes32[] memory metas = new bytes32[](keys.length);
        for (uint256 i = 0; i < keys.length; i++) {
            metas[i] = keccak256(abi.encode(PIECE_METADATA_TYPEHASH, i, metadataHash(keys[i], values[i])));
        }
        return keccak256(
            abi.encode(
                ADD_PIECES_TYPEHASH,
                clientDataSetId,
                nonce,
                keccak256(abi.encodePacked(cids)),
                keccak256(abi.encodePacked(metas))
            )
        );
    }

    function schedulePieceRemovals(uint256 clientDataSetId, uint256[] memory pieceIds)
        internal
        pure
        returns (bytes32)
    {
        return keccak256(
            abi.encode(SCHEDULE_PIECE_REMOVALS_TYPEHASH, clientDataSetId, keccak256(abi.encodePacked(pieceIds)))
        );
    }

    /// 65-byte r ‖ s ‖ v; v of 0/1 is read as 27/28 (SignatureVerificationLib.recoverSigner).
    function recover(bytes32 digest, bytes memory signature) internal pure returns (address) {
        require(signature.length == 65, FwssErrors.InvalidSignatureLength(65, signature.length));
        bytes32 r;
        bytes32 s;
        uint8 v;
        assembly ("memory-safe") {
            r := mload(add(signature, 0x20))
            s := mload(add(signature, 0x40))
            v := byte(0, mload(add(signature, 0x60)))
        }
        uint8 given = v;
        if (v < 27) v += 27;
        require(v == 27 || v == 28, FwssErrors.UnsupportedSignatureV(given));
        return ecrecover(digest, v, r, s);
    }
}

/// The payer's authorisations, checked outside the service's own code (like the real
/// SignatureVerificationLib, an external library linked at deployment, to keep the service
/// under the 24 KiB code limit). Runs by DELEGATECALL, so address(this) is the service: the
/// EIP-712 domain is OpenZeppelin EIP712's {name, version, chainId, verifyingContract} with
/// name "FilecoinWarmStorageService" and version "1", as the real initialize() sets
/// (__EIP712_init) and synapse-core typed-data/type-definitions.ts getStorageDomain signs.
library FwssSignatures {
    struct AddPiecesAuth {
        address payer;
        uint256 clientDataSetId;
        uint256 nonce;
        bytes signature;
    }

    bytes32 internal constant DOMAIN_TYPEHASH =
        keccak256("EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)");

    function domainSeparator() internal view returns (bytes32) {
        return keccak256(
            abi.encode(
                DOMAIN_TYPEHASH, keccak256("FilecoinWarmStorageService"), keccak256("1"), block.chainid, address(this)
            )
        );
    }

    /// The payer signed, or a session key the payer authorised for this operation's type
    /// (SignatureVerificationLib.verify*Signature).
    function check(address payer, bytes32 structHash, bytes memory signature, bytes32 permission, address sessionKeys)
        internal
        view
        returns (address signer)
    {
        bytes32 digest = keccak256(abi.encodePacked(hex"1901", domainSeparator(), structHash));
        signer = FwssTypedData.recover(digest, signature);
        if (signer == payer) return signer;
        require(
            IFwssSessionKeys(sessionKeys).authorizationExpiry(payer, signer, permission) >= block.timestamp,
            FwssErrors.InvalidSignature(payer, signer)
        );
    }

    function checkCreateDataSet(
        address payer,
        uint256 clientDataSetId,
        address payee,
        string[] memory keys,
        string[] memory values,
        bytes memory signature,
        address sessionKeys
    ) public view {
        check(
            payer,
            FwssTypedData.createDataSet(clientDataSetId, payee, keys, values),
            signature,
            FwssTypedData.CREATE_DATA_SET_TYPEHASH,
            sessionKeys
        );
    }

    function checkAddPieces(
        AddPiecesAuth memory auth,
        PdpCid[] memory pieces,
        string[][] memory keys,
        string[][] memory values,
        address sessionKeys
    ) public view {
        check(
            auth.payer,
            FwssTypedData.addPieces(auth.clientDataSetId, auth.nonce, pieces, keys, values),
            auth.signature,
            FwssTypedData.ADD_PIECES_TYPEHASH,
            sessionKeys
        );
    }

    function checkSchedulePieceRemovals(
        address payer,
        uint256 clientDataSetId,
        uint256[] memory pieceIds,
        bytes memory signature,
        address sessionKeys
    ) public view {
        check(
            payer,
            FwssTypedData.schedulePieceRemovals(clientDataSetId, pieceIds),
            signature,
            FwssTypedData.SCHEDULE_PIECE_REMOVALS_TYPEHASH,
            sessionKeys
        );
    }

    /// TerminateService(uint256 dataSetId), signed by the payer or its session key; returns the
    /// signer, the termination's approver (SignatureVerificationLib.verifyTerminateServiceSignature).
    function checkTerminateService(address payer, uint256 dataSetId, bytes memory signature, address sessionKeys)
        public
        view
        returns (address)
    {
        return check(
            payer,
            keccak256(abi.encode(FwssTypedData.TERMINATE_SERVICE_TYPEHASH, dataSetId)),
            signature,
            FwssTypedData.TERMINATE_SERVICE_TYPEHASH,
            sessionKeys
        );
    }
}

contract FilecoinWarmStorageService {
    string public constant VERSION = "1.3.1";
    /// OpenZeppelin UUPSUpgradeable's: upgrades go through upgradeToAndCall only.
    string public constant UPGRADE_INTERFACE_VERSION = "5.0.0";
    /// ERC-1967's implementation slot, bytes32(uint256(keccak256("eip1967.proxy.implementation")) - 1).
    bytes32 internal constant IMPLEMENTATION_SLOT = 0x360894a13ba1a3210667c828492db98dca3e2076cc3735a920a3ca505d382bbc;
    /// OpenZeppelin 5 Initializable's state (ERC-7201 namespace "openzeppelin.storage.Initializable"):
    /// the version initialised last in the low 64 bits.
    bytes32 internal constant INITIALIZABLE_SLOT = 0xf0c57e16840df040f15088dc2f81fe391c3923bec73e23a9662efc9c229c6a00;

    // ---- constants (src/FilecoinWarmStorageService.sol 1.3.1; prices in FwssPriceList) ----
    uint256 internal constant CHALLENGES_PER_PROOF = 5;
    uint256 internal constant COMMISSION_MAX_BPS = 10000;
    /// PDPVerifier.INACTIVITY_WINDOW: a data set with no proof for this long may be deleted as abandoned.
    uint256 internal constant PDP_INACTIVITY_WINDOW = 86400;
    uint256 internal constant MAX_CREATE_DATA_SET_EXTRA_DATA_SIZE = 4096;
    uint256 internal constant MAX_SCHEDULE_PIECE_REMOVALS_EXTRA_DATA_SIZE = 256;
    uint256 internal constant MAX_TERMINATE_SERVICE_EXTRA_DATA_SIZE = 256;
    uint256 internal constant MAX_KEY_LENGTH = 32;
    uint256 internal constant MAX_VALUE_LENGTH = 96;
    uint256 internal constant MAX_KEYS_PER_DATASET = 10;
    uint256 internal constant MAX_KEYS_PER_PIECE = 3;
    bytes32 internal constant WITH_CDN_KEY_HASH = keccak256("withCDN");
    string internal constant SERVICE_NAME = "Filecoin Warm Storage Service";
    string internal constant SERVICE_DESCRIPTION =
        "Warm storage on the simulated Filecoin Onchain Cloud: PDP data sets, Filecoin Pay rails, lifecycle fees";

    address public immutable pdpVerifierAddress;
    address public immutable paymentsContractAddress;
    address public immutable usdfcTokenAddress;
    address public immutable filBeamBeneficiaryAddress;
    address public immutable serviceProviderRegistry;
    address public immutable sessionKeyRegistry;
    /// The version migrate() sets (Initializable.reinitializer), one more with every upgrade.
    uint64 internal immutable REINITIALIZER_VERSION;
    /// This implementation's own address (UUPSUpgradeable.__self): tells a call through the proxy from a direct one.
    address internal immutable implementationSelf;

    /// Ten words, then the fees owed since the last flush and the reserve's mirror packed in one.
    struct DataSetInfo {
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
        uint96 pendingOneTimePayments;
        uint96 lifecycleReserveBalance;
    }

    struct ServicePricing {
        uint256 pricePerTiBPerMonthNoCDN;
        uint256 pricePerTiBCdnEgress;
        uint256 pricePerTiBCacheMissEgress;
        address tokenAddress;
        uint256 epochsPerMonth;
        uint256 datasetFeePerMonth;
    }

    /// An announced upgrade, packed into one slot.
    struct PlannedUpgrade {
        address nextImplementation;
        uint96 afterEpoch;
    }

    struct CreateData {
        address payer;
        uint256 clientDataSetId;
        string[] keys;
        string[] values;
        bytes signature;
    }

    // ---- storage: slot numbers are read by FilecoinWarmStorageServiceStateView (FwssSlots) ----
    address public owner; // 0
    uint256 internal maxProvingPeriod; // 1 (uint64 in the ABI)
    uint256 internal challengeWindowSize; // 2
    mapping(uint256 => mapping(uint256 => uint256)) internal provenPeriods; // 3
    mapping(uint256 => uint256) internal provingActivationEpoch; // 4
    mapping(uint256 => uint256) internal provingDeadlines; // 5
    mapping(uint256 => bool) internal provenThisPeriod; // 6
    mapping(uint256 => DataSetInfo) internal dataSetInfo; // 7
    mapping(address => mapping(uint256 => uint256)) internal clientNonces; // 8
    mapping(address => uint256[]) internal clientDataSets; // 9
    mapping(uint256 => uint256) internal railToDataSet; // 10
    mapping(uint256 => mapping(string => string)) internal dataSetMetadata; // 11
    mapping(uint256 => string[]) internal dataSetMetadataKeys; // 12
    mapping(uint256 => mapping(uint256 => mapping(string => string))) internal pieceMetadata; // 13
    mapping(uint256 => mapping(uint256 => string[])) internal pieceMetadataKeys; // 14
    mapping(uint256 => bool) internal approvedProviders; // 15
    uint256[] internal approvedProviderIds; // 16
    address public viewContractAddress; // 17
    address internal filBeamControllerAddress; // 18
    mapping(uint256 => uint256[]) internal scheduledPieceMetadataRemovals; // 19
    PlannedUpgrade internal nextUpgrade; // 20

    // ---- events (src/FilecoinWarmStorageService.sol, and those src/lib/Rails.sol emits for it) ----
    event OwnershipTransferred(address indexed previousOwner, address indexed newOwner);
    event Initialized(uint64 version);
    event FilecoinServiceDeployed(string name, string description);
    event ViewContractSet(address indexed viewContract);
    event UpgradeAnnounced(PlannedUpgrade plannedUpgrade);
    event ContractUpgraded(string version, address implementation);
    event FaultRecord(uint256 indexed dataSetId, uint256 periodsFaulted, uint256 deadline);
    event DataSetCreated(
        uint256 indexed dataSetId,
        uint256 indexed providerId,
        uint256 pdpRailId,
        uint256 cacheMissRailId,
        uint256 cdnRailId,
        address payer,
        address serviceProvider,
        address payee,
        string[] metadataKeys,
        string[] metadataValues
    );
    event PieceAdded(
        uint256 indexed dataSetId, uint256 indexed pieceId, PdpCid pieceCid, string[] keys, string[] values
    );
    event ServiceTerminated(
        address indexed approver, uint256 indexed dataSetId, uint256 pdpRailId, uint256 cacheMissRailId, uint256 cdnRailId
    );
    event PDPPaymentTerminated(uint256 indexed dataSetId, uint256 endEpoch, uint256 pdpRailId);
    event CDNPaymentTerminated(uint256 indexed dataSetId, uint256 endEpoch, uint256 cacheMissRailId, uint256 cdnRailId);
    event FilBeamControllerChanged(address oldController, address newController);
    event ProviderApproved(uint256 indexed providerId);
    event ProviderUnapproved(uint256 indexed providerId);
    event EIP712DomainChanged();
    event RailRateUpdated(uint256 indexed dataSetId, uint256 railId, uint256 newRate);
    event CDNServiceTerminated(
        address indexed caller, uint256 indexed dataSetId, uint256 cacheMissRailId, uint256 cdnRailId
    );
    event CDNPaymentRailsToppedUp(
        uint256 indexed dataSetId,
        uint256 cdnAmountAdded,
        uint256 totalCdnLockup,
        uint256 cacheMissAmountAdded,
        uint256 totalCacheMissLockup
    );
    event DataSetAbandoned(uint256 indexed dataSetId, uint256 pdpRailId, uint256 cacheMissRailId, uint256 cdnRailId);

    error OwnableUnauthorizedAccount(address account);
    error OwnableInvalidOwner(address owner);
    error InvalidInitialization();
    error UUPSUnauthorizedCallContext();

    modifier onlyOwner() {
        if (msg.sender != owner) revert OwnableUnauthorizedAccount(msg.sender);
        _;
    }

    /// Only through a proxy that runs this implementation (UUPSUpgradeable.onlyProxy).
    modifier onlyProxy() {
        if (address(this) == implementationSelf || currentImplementation() != implementationSelf) {
            revert UUPSUnauthorizedCallContext();
        }
        _;
    }

    modifier onlyPDPVerifier() {
        require(msg.sender == pdpVerifierAddress, FwssErrors.OnlyPDPVerifierAllowed(pdpVerifierAddress, msg.sender));
        _;
    }

    modifier onlyFilBeamController() {
        require(
            msg.sender == filBeamControllerAddress,
            FwssErrors.OnlyFilBeamControllerAllowed(filBeamControllerAddress, msg.sender)
        );
        _;
    }

    constructor(
        address _pdpVerifierAddress,
        address _paymentsContractAddress,
        address _usdfc,
        address _filBeamBeneficiaryAddress,
        address _serviceProviderRegistry,
        address _sessionKeyRegistry,
        uint64 _reinitializer_version
    ) {
        require(_pdpVerifierAddress != address(0), FwssErrors.ZeroAddress(FwssErrors.PDP_VERIFIER));
        require(_paymentsContractAddress != address(0), FwssErrors.ZeroAddress(FwssErrors.FILECOIN_PAY));
        require(_usdfc != address(0), FwssErrors.ZeroAddress(FwssErrors.USDFC));
        require(_filBeamBeneficiaryAddress != address(0), FwssErrors.ZeroAddress(FwssErrors.FILBEAM_BENEFICIARY));
        require(_serviceProviderRegistry != address(0), FwssErrors.ZeroAddress(FwssErrors.PROVIDER_REGISTRY));
        require(_sessionKeyRegistry != address(0), FwssErrors.ZeroAddress(FwssErrors.SESSION_KEY_REGISTRY));
        // the prices are written for an 18-decimal token, as the real constructor checks
        require(IFwssToken(_usdfc).decimals() == 18);
        pdpVerifierAddress = _pdpVerifierAddress;
        paymentsContractAddress = _paymentsContractAddress;
        usdfcTokenAddress = _usdfc;
        filBeamBeneficiaryAddress = _filBeamBeneficiaryAddress;
        serviceProviderRegistry = _serviceProviderRegistry;
        sessionKeyRegistry = _sessionKeyRegistry;
        REINITIALIZER_VERSION = _reinitializer_version;
        implementationSelf = address(this);
        // Initializable._disableInitializers: the implementation itself is never initialised.
        setInitializedVersion(type(uint64).max);
        emit Initialized(type(uint64).max);
    }

    /// Run once through the proxy (Initializable.initializer): its caller becomes the owner
    /// (1.3.1: proving schedule and FilBeam controller only; the name and description are constants).
    function initialize(uint64 _maxProvingPeriod, uint256 _challengeWindowSize, address _filBeamControllerAddress)
        external
    {
        if (initializedVersion() != 0) revert InvalidInitialization();
        setInitializedVersion(1);
        owner = msg.sender;
        emit OwnershipTransferred(address(0), msg.sender);
        checkProvingPeriod(_maxProvingPeriod, _challengeWindowSize);
        require(_filBeamControllerAddress != address(0), FwssErrors.ZeroAddress(FwssErrors.FILBEAM_CONTROLLER));
        filBeamControllerAddress = _filBeamControllerAddress;
        maxProvingPeriod = _maxProvingPeriod;
        challengeWindowSize = _challengeWindowSize;
        emit Initialized(1);
        emit FilecoinServiceDeployed(SERVICE_NAME, SERVICE_DESCRIPTION);
    }

    function checkProvingPeriod(uint64 _maxProvingPeriod, uint256 _challengeWindowSize) internal pure {
        require(_maxProvingPeriod > 0, FwssErrors.MaxProvingPeriodZero());
        require(
            _challengeWindowSize > 0 && _challengeWindowSize < _maxProvingPeriod,
            FwssErrors.InvalidChallengeWindowSize(_maxProvingPeriod, _challengeWindowSize)
        );
    }

    // ---- identity (src/IFilecoinServiceMetadata.sol) ----

    function name() external pure returns (string memory) {
        return SERVICE_NAME;
    }

    function description() external pure returns (string memory) {
        return SERVICE_DESCRIPTION;
    }

    function homepage() external pure returns (string memory) {
        return "";
    }

    // ---- owner's settings ----

    function transferOwnership(address newOwner) external onlyOwner {
        if (newOwner == address(0)) revert OwnableInvalidOwner(address(0));
        emit OwnershipTransferred(owner, newOwner);
        owner = newOwner;
    }

    function configureProvingPeriod(uint64 _maxProvingPeriod, uint256 _challengeWindowSize) external onlyOwner {
        checkProvingPeriod(_maxProvingPeriod, _challengeWindowSize);
        maxProvingPeriod = _maxProvingPeriod;
        challengeWindowSize = _challengeWindowSize;
    }

    function setViewContract(address _viewContract) external onlyOwner {
        require(_viewContract != address(0), FwssErrors.ZeroAddress(FwssErrors.VIEW));
        viewContractAddress = _viewContract;
        emit ViewContractSet(_viewContract);
    }

    // ---- upgrades (src/FilecoinWarmStorageService.sol 1.3.1; OpenZeppelin 5 UUPSUpgradeable, Initializable) ----

    function initializedVersion() internal view returns (uint64 version) {
        bytes32 slot = INITIALIZABLE_SLOT;
        assembly ("memory-safe") {
            version := and(sload(slot), 0xffffffffffffffff)
        }
    }

    function setInitializedVersion(uint64 version) internal {
        bytes32 slot = INITIALIZABLE_SLOT;
        assembly ("memory-safe") {
            sstore(slot, version)
        }
    }

    function currentImplementation() internal view returns (address implementation) {
        bytes32 slot = IMPLEMENTATION_SLOT;
        assembly ("memory-safe") {
            implementation := sload(slot)
        }
    }

    /// The legacy announcement (the one the 1.3.0 -> 1.3.1 rollout used): never sooner than the next epoch.
    function announcePlannedUpgrade(PlannedUpgrade calldata plannedUpgrade) external {
        uint96 earliest = uint96(block.number + 1);
        announce(
            plannedUpgrade.nextImplementation,
            plannedUpgrade.afterEpoch < earliest ? earliest : plannedUpgrade.afterEpoch
        );
    }

    function announceUpgradePlan(address nextImplementation, uint96 delayEpochs) external {
        announce(nextImplementation, uint96(block.number) + (delayEpochs == 0 ? 1 : delayEpochs));
    }

    function announce(address nextImplementation, uint96 afterEpoch) internal onlyOwner {
        require(nextImplementation.code.length > 3000);
        nextUpgrade = PlannedUpgrade(nextImplementation, afterEpoch);
        emit UpgradeAnnounced(nextUpgrade);
    }

    /// UUPSUpgradeable.proxiableUUID: answered by the implementation itself, never through a proxy.
    function proxiableUUID() external view returns (bytes32) {
        if (address(this) != implementationSelf) revert UUPSUnauthorizedCallContext();
        return IMPLEMENTATION_SLOT;
    }

    /// The owner moves the proxy to the implementation it announced, once its epoch has come
    /// (_authorizeUpgrade), and runs `data` on it (the new implementation's migrate) in the proxy's storage.
    function upgradeToAndCall(address newImplementation, bytes calldata data) external payable onlyProxy onlyOwner {
        require(newImplementation == nextUpgrade.nextImplementation);
        require(block.number >= nextUpgrade.afterEpoch);
        delete nextUpgrade;
        FwssUpgrades.upgradeToAndCall(newImplementation, data);
    }

    /// Run by upgradeToAndCall on the new implementation, once per version (Initializable.reinitializer):
    /// points the service at a new view when given one, and says which version now runs.
    function migrate(address _viewContract) external onlyProxy onlyOwner {
        if (initializedVersion() >= REINITIALIZER_VERSION) revert InvalidInitialization();
        setInitializedVersion(REINITIALIZER_VERSION);
        if (_viewContract != address(0)) {
            viewContractAddress = _viewContract;
            emit ViewContractSet(_viewContract);
        }
        emit ContractUpgraded(VERSION, currentImplementation());
        emit Initialized(REINITIALIZER_VERSION);
    }

    function addApprovedProvider(uint256 providerId) external onlyOwner {
        if (approvedProviders[providerId]) revert FwssErrors.ProviderAlreadyApproved(providerId);
        approvedProviders[providerId] = true;
        approvedProviderIds.push(providerId);
        emit ProviderApproved(providerId);
    }

    /// The caller names the id's index in the list; the last entry moves into its place.
    function removeApprovedProvider(uint256 providerId, uint256 index) external onlyOwner {
        if (!approvedProviders[providerId]) revert FwssErrors.ProviderNotInApprovedList(providerId);
        require(
            approvedProviderIds[index] == providerId, FwssErrors.ProviderIdMismatchAtIndex(index, providerId)
        );
        approvedProviders[providerId] = false;
        approvedProviderIds[index] = approvedProviderIds[approvedProviderIds.length - 1];
        approvedProviderIds.pop();
        emit ProviderUnapproved(providerId);
    }

    // ---- EIP-712 (OpenZeppelin EIP712 as the real contract inherits it) ----

    function eip712Domain()
        external
        view
        returns (
            bytes1 fields,
            string memory name_,
            string memory version,
            uint256 chainId,
            address verifyingContract,
            bytes32 salt,
            uint256[] memory extensions
        )
    {
        return (hex"0f", "FilecoinWarmStorageService", "1", block.chainid, address(this), bytes32(0), new uint256[](0));
    }

    // ---- PDPListener ----

    /// extraData = abi.encode(payer, clientDataSetId, keys, values, signature) (synapse-core
    /// typed-data/sign-create-dataset.ts). Opens the PDP rail with the lifecycle reserve as its fixed
    /// lockup (and the CDN rails for "withCDN"), and owes the creation fee, paid with the next flush.
    function dataSetCreated(uint256 dataSetId, address serviceProvider, bytes calldata extraData)
        external
        onlyPDPVerifier
    {
        requireExtraData(extraData.length, MAX_CREATE_DATA_SET_EXTRA_DATA_SIZE);
        CreateData memory c;
        (c.payer, c.clientDataSetId, c.keys, c.values, c.signature) =
            abi.decode(extraData, (address, uint256, string[], string[], bytes));
        require(c.payer != address(0), FwssErrors.ZeroAddress(FwssErrors.PAYER));
        require(serviceProvider != address(0), FwssErrors.ZeroAddress(FwssErrors.SERVICE_PROVIDER));

        uint256 providerId = IFwssProviderRegistry(serviceProviderRegistry).getProviderIdByAddress(serviceProvider);
        require(providerId != 0, FwssErrors.ProviderNotRegistered(serviceProvider));
        address payee = IFwssProviderRegistry(serviceProviderRegistry).getProviderPayee(providerId);

        require(
            clientNonces[c.payer][c.clientDataSetId] == 0,
            FwssErrors.ClientDataSetAlreadyRegistered(c.clientDataSetId)
        );
        clientNonces[c.payer][c.clientDataSetId] = dataSetId;
        clientDataSets[c.payer].push(dataSetId);

        FwssSignatures.checkCreateDataSet(
            c.payer, c.clientDataSetId, payee, c.keys, c.values, c.signature, sessionKeyRegistry
        );

        DataSetInfo storage info = dataSetInfo[dataSetId];
        info.payer = c.payer;
        info.payee = payee;
        info.serviceProvider = serviceProvider;
        info.commissionBps = FwssPriceList.SERVICE_COMMISSION_BPS;
        info.clientDataSetId = c.clientDataSetId;
        info.providerId = providerId;

        bool withCdn = storeDataSetMetadata(dataSetId, c.keys, c.values);
        (uint256 pdpRailId, uint256 cacheMissRailId, uint256 cdnRailId) = FwssRails.createRails(
            IFwssPayments(paymentsContractAddress),
            dataSetId,
            usdfcTokenAddress,
            c.payer,
            payee,
            withCdn ? filBeamBeneficiaryAddress : address(0)
        );
        railToDataSet[pdpRailId] = dataSetId;
        info.pdpRailId = pdpRailId;
        info.cacheMissRailId = cacheMissRailId;
        info.cdnRailId = cdnRailId;
        info.lifecycleReserveBalance = uint96(FwssPriceList.LIFECYCLE_RESERVE_TARGET);
        info.pendingOneTimePayments = uint96(FwssPriceList.CREATE_DATA_SET_FEE);
        emitDataSetCreated(dataSetId, info, c.keys, c.values);
    }

    function requireExtraData(uint256 length, uint256 max) internal pure {
        require(length > 0, FwssErrors.ExtraDataRequired());
        require(length <= max, FwssErrors.ExtraDataTooLarge(length, max));
    }

    /// Returns whether a "withCDN" key is among them.
    function storeDataSetMetadata(uint256 dataSetId, string[] memory keys, string[] memory values)
        internal
        returns (bool withCdn)
    {
        require(
            keys.length == values.length, FwssErrors.MetadataKeyAndValueLengthMismatch(keys.length, values.length)
        );
        require(keys.length <= MAX_KEYS_PER_DATASET, FwssErrors.TooManyMetadataKeys(MAX_KEYS_PER_DATASET, keys.length));
        for (uint256 i = 0; i < keys.length; i++) {
            mapping(string => string) storage values_ = dataSetMetadata[dataSetId];
            checkMetadataEntry(dataSetId, i, keys[i], values[i], bytes(values_[keys[i]]).length != 0);
            dataSetMetadataKeys[dataSetId].push(keys[i]);
            values_[keys[i]] = values[i];
            if (keccak256(bytes(keys[i])) == WITH_CDN_KEY_HASH) withCdn = true;
        }
    }

    function checkMetadataEntry(uint256 dataSetId, uint256 i, string memory key, string memory value, bool duplicate)
        internal
        pure
    {
        require(!duplicate, FwssErrors.DuplicateMetadataKey(dataSetId, key));
        require(
            bytes(key).length <= MAX_KEY_LENGTH,
            FwssErrors.MetadataKeyExceedsMaxLength(i, MAX_KEY_LENGTH, bytes(key).length)
        );
        require(
            bytes(value).length <= MAX_VALUE_LENGTH,
            FwssErrors.MetadataValueExceedsMaxLength(i, MAX_VALUE_LENGTH, bytes(value).length)
        );
    }

    function emitDataSetCreated(
        uint256 dataSetId,
        DataSetInfo storage info,
        string[] memory keys,
        string[] memory values
    ) internal {
        emit DataSetCreated(
            dataSetId,
            info.providerId,
            info.pdpRailId,
            info.cacheMissRailId,
            info.cdnRailId,
            info.payer,
            info.serviceProvider,
            info.payee,
            keys,
            values
        );
    }

    /// Two ways out (src/FilecoinWarmStorageService.sol dataSetDeleted): after terminateService,
    /// once the rail has run to its end epoch and is settled; or, never terminated, once the data set
    /// has gone PDP_INACTIVITY_WINDOW epochs without a proof (abandoned: the reserve goes back to the
    /// payer, the provider forfeits the pending fees).
    function dataSetDeleted(uint256 dataSetId, uint256, bytes calldata) external onlyPDPVerifier {
        DataSetInfo storage info = dataSetInfo[dataSetId];
        require(info.pdpRailId != 0, FwssErrors.DataSetNotRegistered(dataSetId));
        IFwssPayments payments = IFwssPayments(paymentsContractAddress);
        uint256 activation = provingActivationEpoch[dataSetId];
        if (info.pdpEndEpoch == 0) {
            requireAbandoned(dataSetId, activation);
            FwssRails.abandonRails(
                payments, provingActivationEpoch, dataSetId, info.pdpRailId, info.cacheMissRailId, info.cdnRailId
            );
        } else {
            require(block.number >= info.pdpEndEpoch, FwssErrors.PaymentRailsNotFinalized(dataSetId, info.pdpEndEpoch));
            try payments.getRail(info.pdpRailId) returns (FwssRailView memory rail) {
                require(
                    rail.settledUpTo >= rail.endEpoch,
                    FwssErrors.RailNotFullySettled(info.pdpRailId, rail.settledUpTo, rail.endEpoch)
                );
            } catch {
                // a finalised rail is gone from Filecoin Pay: it was settled in full
            }
            if (info.cdnRailId != 0) {
                FwssRails.terminateCDNRails(payments, dataSetId, info.cacheMissRailId, info.cdnRailId);
            }
            delete provingActivationEpoch[dataSetId];
        }
        forgetDataSet(dataSetId, info, activation);
    }

    /// src/FilecoinWarmStorageService.sol _verifyInactivity: never activated passes; otherwise the last
    /// proof (PDPVerifier's, or the activation) must be more than the window ago.
    function requireAbandoned(uint256 dataSetId, uint256 activation) internal view {
        if (activation == 0) return;
        uint256 lastProven = IFwssPdpVerifier(pdpVerifierAddress).getDataSetLastProvenEpoch(dataSetId);
        uint256 required = (lastProven == 0 ? activation : lastProven) + PDP_INACTIVITY_WINDOW;
        require(block.number > required, FwssErrors.DataSetNotAbandoned(dataSetId, required, block.number));
    }

    /// What the service knew of a deleted data set, but its clientDataSetId (kept spent against replay).
    function forgetDataSet(uint256 dataSetId, DataSetInfo storage info, uint256 activation) internal {
        uint256[] storage list = clientDataSets[info.payer];
        for (uint256 i = 0; i < list.length; i++) {
            if (list[i] == dataSetId) {
                list[i] = list[list.length - 1];
                list.pop();
                break;
            }
        }
        delete provingDeadlines[dataSetId];
        delete provenThisPeriod[dataSetId];
        uint256 lastPeriod = provingPeriodOf(activation, block.number);
        if (lastPeriod != type(uint256).max) {
            uint256 lastSlot = lastPeriod >> 8;
            for (uint256 slot = 0; slot <= lastSlot; slot++) {
                delete provenPeriods[dataSetId][slot];
            }
        }
        delete railToDataSet[info.pdpRailId];
        string[] storage keys = dataSetMetadataKeys[dataSetId];
        for (uint256 i = 0; i < keys.length; i++) {
            delete dataSetMetadata[dataSetId][keys[i]];
        }
        delete dataSetMetadataKeys[dataSetId];
        dropScheduledPieceMetadata(dataSetId);
        delete dataSetInfo[dataSetId];
    }

    /// extraData = abi.encode(nonce, keys[][], values[][], signature) (synapse-core
    /// typed-data/sign-add-pieces.ts). The nonce shares clientNonces with clientDataSetId. Owes the
    /// add fee (a base plus one per piece) and pays everything owed at the new rate at once.
    function piecesAdded(uint256 dataSetId, uint256 firstAdded, PdpCid[] memory pieceData, bytes calldata extraData)
        external
        onlyPDPVerifier
    {
        requirePaymentNotTerminated(dataSetId);
        DataSetInfo storage info = dataSetInfo[dataSetId];
        require(extraData.length > 0, FwssErrors.ExtraDataRequired());
        (uint256 nonce, string[][] memory keys, string[][] memory values, bytes memory signature) =
            abi.decode(extraData, (uint256, string[][], string[][], bytes));

        require(clientNonces[info.payer][nonce] == 0, FwssErrors.ClientDataSetAlreadyRegistered(nonce));
        clientNonces[info.payer][nonce] = ((firstAdded + pieceData.length) << 128) | dataSetId;
        require(keys.length == pieceData.length, FwssErrors.MetadataArrayCountMismatch(keys.length, pieceData.length));
        require(
            values.length == pieceData.length, FwssErrors.MetadataArrayCountMismatch(values.length, pieceData.length)
        );

        FwssSignatures.checkAddPieces(
            FwssSignatures.AddPiecesAuth(info.payer, info.clientDataSetId, nonce, signature),
            pieceData,
            keys,
            values,
            sessionKeyRegistry
        );

        uint96 pending = info.pendingOneTimePayments
            + uint96(FwssPriceList.ADD_PIECES_BASE_FEE + pieceData.length * FwssPriceList.ADD_PIECES_PER_PIECE_FEE);
        // the new size is paid for from now on (fails here when the payer cannot cover it)
        uint256 leafCount = IFwssPdpVerifier(pdpVerifierAddress).getDataSetLeafCount(dataSetId);
        updatePaymentRates(dataSetId, info, leafCount, pending, info.lifecycleReserveBalance, false);

        for (uint256 i = 0; i < pieceData.length; i++) {
            storePieceMetadata(dataSetId, firstAdded + i, keys[i], values[i]);
            emit PieceAdded(dataSetId, firstAdded + i, pieceData[i], keys[i], values[i]);
        }
    }

    function storePieceMetadata(uint256 dataSetId, uint256 pieceId, string[] memory keys, string[] memory values)
        internal
    {
        require(
            keys.length == values.length, FwssErrors.MetadataKeyAndValueLengthMismatch(keys.length, values.length)
        );
        require(keys.length <= MAX_KEYS_PER_PIECE, FwssErrors.TooManyMetadataKeys(MAX_KEYS_PER_PIECE, keys.length));
        mapping(string => string) storage stored = pieceMetadata[dataSetId][pieceId];
        for (uint256 k = 0; k < keys.length; k++) {
            checkMetadataEntry(dataSetId, k, keys[k], values[k], bytes(stored[keys[k]]).length != 0);
            stored[keys[k]] = values[k];
            pieceMetadataKeys[dataSetId][pieceId].push(keys[k]);
        }
    }

    /// extraData = abi.encode(signature) over SchedulePieceRemovals. Owes the removal fee (the
    /// reserve topped up first if it would fall under the threshold); the fee is paid, and the
    /// pieces' metadata dropped, at the next proving period, when PDPVerifier removes them.
    function piecesScheduledRemove(uint256 dataSetId, uint256[] memory pieceIds, bytes calldata extraData)
        external
        onlyPDPVerifier
    {
        requirePaymentNotBeyondEndEpoch(dataSetId);
        DataSetInfo storage info = dataSetInfo[dataSetId];
        require(info.pdpRailId != 0, FwssErrors.DataSetNotRegistered(dataSetId));
        requireExtraData(extraData.length, MAX_SCHEDULE_PIECE_REMOVALS_EXTRA_DATA_SIZE);
        bytes memory signature = abi.decode(extraData, (bytes));
        FwssSignatures.checkSchedulePieceRemovals(
            info.payer, info.clientDataSetId, pieceIds, signature, sessionKeyRegistry
        );
        uint96 pending = info.pendingOneTimePayments + uint96(FwssPriceList.SCHEDULE_PIECE_REMOVALS_FEE);
        info.lifecycleReserveBalance = FwssRails.replenishReserveIfNeeded(
            IFwssPayments(paymentsContractAddress), info.pdpRailId, info.pdpEndEpoch, info.lifecycleReserveBalance, pending
        );
        info.pendingOneTimePayments = pending;
        uint256[] storage queue = scheduledPieceMetadataRemovals[dataSetId];
        for (uint256 i = 0; i < pieceIds.length; i++) {
            queue.push(pieceIds[i]);
        }
    }

    /// One proof per period, inside the period's challenge window, with at least
    /// CHALLENGES_PER_PROOF challenges (src/FilecoinWarmStorageService.sol possessionProven).
    function possessionProven(uint256 dataSetId, uint256, uint256, uint256 challengeCount)
        external
        onlyPDPVerifier
    {
        requirePaymentNotBeyondEndEpoch(dataSetId);
        if (provenThisPeriod[dataSetId]) revert FwssErrors.ProofAlreadySubmitted(dataSetId);
        if (challengeCount < CHALLENGES_PER_PROOF) {
            revert FwssErrors.InvalidChallengeCount(dataSetId, CHALLENGES_PER_PROOF, challengeCount);
        }
        uint256 deadline = provingDeadlines[dataSetId];
        if (deadline == 0) revert FwssErrors.ProvingNotStarted(dataSetId);
        if (deadline < block.number) revert FwssErrors.ProvingPeriodPassed(dataSetId, deadline, block.number);
        uint256 windowStart = deadline - challengeWindowSize;
        if (windowStart > block.number) revert FwssErrors.ChallengeWindowTooEarly(dataSetId, windowStart, block.number);
        provenThisPeriod[dataSetId] = true;
        uint256 period = getProvingPeriodForEpoch(dataSetId, block.number);
        provenPeriods[dataSetId][period >> 8] |= uint256(1) << (period & 255);
    }

    /// The first call starts proving (activation = now, deadline one period on); a data set that was
    /// emptied and is filled again resumes on its original timeline. Later calls move the deadline
    /// on by whole periods, record the periods that went unproven as faults, and take the challenge
    /// epoch only from the next deadline's window. Removals and fees owed are paid here
    /// (src/FilecoinWarmStorageService.sol nextProvingPeriod).
    function nextProvingPeriod(uint256 dataSetId, uint256 challengeEpoch, uint256 leafCount, bytes calldata)
        external
        onlyPDPVerifier
    {
        requirePaymentNotBeyondEndEpoch(dataSetId);
        uint256 deadline = provingDeadlines[dataSetId];
        if (deadline == 0) {
            provingDeadlines[dataSetId] = firstDeadline(dataSetId, challengeEpoch);
        } else {
            if (block.number <= deadline - maxProvingPeriod) {
                revert FwssErrors.NextProvingPeriodAlreadyCalled(dataSetId, deadline - maxProvingPeriod, block.number);
            }
            uint256 skipped = block.number <= deadline ? 0 : (block.number - (deadline + 1)) / maxProvingPeriod;
            uint256 next = 0;
            if (challengeEpoch != 0) {
                next = deadline + maxProvingPeriod * (skipped + 1);
                checkChallengeEpoch(dataSetId, next - challengeWindowSize, next, challengeEpoch);
            }
            uint256 faults = skipped + (provenThisPeriod[dataSetId] ? 0 : 1);
            if (faults > 0) emit FaultRecord(dataSetId, faults, deadline);
            provingDeadlines[dataSetId] = next;
            provenThisPeriod[dataSetId] = false;
        }
        DataSetInfo storage info = dataSetInfo[dataSetId];
        uint96 pending = info.pendingOneTimePayments;
        if (dropScheduledPieceMetadata(dataSetId) || pending > 0) {
            updatePaymentRates(dataSetId, info, leafCount, pending, info.lifecycleReserveBalance, false);
        }
    }

    /// The deadline proving starts (or resumes) with: one period after the first activation, or the
    /// first deadline of the original timeline a whole period away.
    function firstDeadline(uint256 dataSetId, uint256 challengeEpoch) internal returns (uint256 deadline) {
        uint256 activation = provingActivationEpoch[dataSetId];
        if (activation == 0) {
            provingActivationEpoch[dataSetId] = block.number;
            deadline = block.number + maxProvingPeriod;
        } else {
            require(
                challengeEpoch > activation,
                FwssErrors.InvalidChallengeEpoch(dataSetId, activation + 1, activation + maxProvingPeriod, challengeEpoch)
            );
            uint256 period = provingPeriodOf(activation, block.number + maxProvingPeriod);
            deadline = activation + (period + 1) * maxProvingPeriod;
        }
        checkChallengeEpoch(dataSetId, deadline - challengeWindowSize, deadline, challengeEpoch);
    }

    function checkChallengeEpoch(uint256 dataSetId, uint256 windowStart, uint256 deadline, uint256 challengeEpoch)
        internal
        pure
    {
        if (challengeEpoch < windowStart || challengeEpoch > deadline) {
            revert FwssErrors.InvalidChallengeEpoch(dataSetId, windowStart, deadline, challengeEpoch);
        }
    }

    function dropScheduledPieceMetadata(uint256 dataSetId) internal returns (bool any) {
        uint256[] storage ids = scheduledPieceMetadataRemovals[dataSetId];
        any = ids.length > 0;
        for (uint256 i = 0; i < ids.length; i++) {
            string[] storage keys = pieceMetadataKeys[dataSetId][ids[i]];
            for (uint256 k = 0; k < keys.length; k++) {
                delete pieceMetadata[dataSetId][ids[i]][keys[k]];
            }
            delete pieceMetadataKeys[dataSetId][ids[i]];
        }
        delete scheduledPieceMetadataRemovals[dataSetId];
    }

    function storageProviderChanged(uint256, address, address, bytes calldata) external view onlyPDPVerifier {
        revert FwssErrors.StorageProviderChangesNotSupported();
    }

    // ---- ending service ----

    /// The payer or the provider ends the PDP rail; Filecoin Pay answers with railTerminated, which
    /// records the end epoch. Fees owed are paid first (src/FilecoinWarmStorageService.sol
    /// terminateService, without extraData).
    function terminateService(uint256 dataSetId) external {
        terminate(dataSetId, "");
    }

    /// The provider ends it at once on the payer's signed TerminateService: the rail keeps only the
    /// fees owed (the termination fee among them) and no lockup period (with extraData = abi.encode(signature)).
    function terminateService(uint256 dataSetId, bytes calldata extraData) external {
        terminate(dataSetId, extraData);
    }

    function terminate(uint256 dataSetId, bytes memory extraData) internal {
        DataSetInfo storage info = dataSetInfo[dataSetId];
        require(info.pdpRailId != 0, FwssErrors.InvalidDataSetId(dataSetId));
        require(info.pdpEndEpoch == 0, FwssErrors.DataSetPaymentAlreadyTerminated(dataSetId));
        address approver = msg.sender;
        bool immediate = extraData.length > 0;
        if (immediate) {
            require(
                msg.sender == info.serviceProvider,
                FwssErrors.CallerNotServiceProvider(dataSetId, info.serviceProvider, msg.sender)
            );
            require(
                extraData.length <= MAX_TERMINATE_SERVICE_EXTRA_DATA_SIZE,
                FwssErrors.ExtraDataTooLarge(extraData.length, MAX_TERMINATE_SERVICE_EXTRA_DATA_SIZE)
            );
            approver = FwssSignatures.checkTerminateService(
                info.payer, dataSetId, abi.decode(extraData, (bytes)), sessionKeyRegistry
            );
            info.pendingOneTimePayments += uint96(FwssPriceList.TERMINATE_FEE);
        } else {
            require(
                msg.sender == info.payer || msg.sender == info.serviceProvider,
                FwssErrors.CallerNotPayerOrPayee(dataSetId, info.payer, info.serviceProvider, msg.sender)
            );
        }
        uint96 pending = info.pendingOneTimePayments;
        if (pending > 0) {
            uint256 leafCount = IFwssPdpVerifier(pdpVerifierAddress).getDataSetLeafCount(dataSetId);
            updatePaymentRates(dataSetId, info, leafCount, pending, info.lifecycleReserveBalance, immediate);
        }
        IFwssPayments(paymentsContractAddress).terminateRail(info.pdpRailId);
        emit ServiceTerminated(approver, dataSetId, info.pdpRailId, info.cacheMissRailId, info.cdnRailId);
    }

    /// The payer adds to its data set's reserve ahead of many removals (src/FilecoinWarmStorageService.sol topUpLifecycleReserve).
    function topUpLifecycleReserve(uint256 dataSetId, uint256 amount) external {
        DataSetInfo storage info = dataSetInfo[dataSetId];
        require(info.payer != address(0), FwssErrors.InvalidDataSetId(dataSetId));
        require(msg.sender == info.payer, FwssErrors.CallerNotPayer(dataSetId, info.payer, msg.sender));
        require(info.pdpEndEpoch == 0, FwssErrors.DataSetPaymentAlreadyTerminated(dataSetId));
        uint96 balance = info.lifecycleReserveBalance + uint96(amount);
        IFwssPayments(paymentsContractAddress).modifyRailLockup(info.pdpRailId, FwssPriceList.DEFAULT_LOCKUP_PERIOD, balance);
        info.lifecycleReserveBalance = balance;
    }

    function terminateCDNService(uint256 dataSetId) external onlyFilBeamController {
        require(dropCdnKey(dataSetId), FwssErrors.FilBeamServiceNotConfigured(dataSetId));
        delete dataSetMetadata[dataSetId]["withCDN"];
        DataSetInfo storage info = dataSetInfo[dataSetId];
        require(info.cacheMissRailId != 0 && info.cdnRailId != 0, FwssErrors.InvalidDataSetId(dataSetId));
        FwssRails.terminateCDNRails(IFwssPayments(paymentsContractAddress), dataSetId, info.cacheMissRailId, info.cdnRailId);
    }

    /// Removes "withCDN" from the data set's key list; true when it was there.
    function dropCdnKey(uint256 dataSetId) internal returns (bool) {
        string[] storage keys = dataSetMetadataKeys[dataSetId];
        for (uint256 i = 0; i < keys.length; i++) {
            if (keccak256(bytes(keys[i])) == WITH_CDN_KEY_HASH) {
                keys[i] = keys[keys.length - 1];
                keys.pop();
                return true;
            }
        }
        return false;
    }

    function hasCdnKey(uint256 dataSetId) internal view returns (bool) {
        string[] storage keys = dataSetMetadataKeys[dataSetId];
        for (uint256 i = 0; i < keys.length; i++) {
            if (keccak256(bytes(keys[i])) == WITH_CDN_KEY_HASH) return true;
        }
        return false;
    }

    function settleFilBeamPaymentRails(uint256 dataSetId, uint256 cdnAmount, uint256 cacheMissAmount)
        external
        onlyFilBeamController
    {
        DataSetInfo storage info = dataSetInfo[dataSetId];
        require(info.cdnRailId != 0 && info.cacheMissRailId != 0, FwssErrors.InvalidDataSetId(dataSetId));
        FwssRails.settleCDNRails(
            IFwssPayments(paymentsContractAddress), info.cdnRailId, info.cacheMissRailId, cdnAmount, cacheMissAmount
        );
    }

    function topUpCDNPaymentRails(uint256 dataSetId, uint256 cdnAmountToAdd, uint256 cacheMissAmountToAdd) external {
        DataSetInfo storage info = dataSetInfo[dataSetId];
        require(info.pdpRailId != 0, FwssErrors.InvalidDataSetId(dataSetId));
        require(msg.sender == info.payer, FwssErrors.CallerNotPayer(dataSetId, info.payer, msg.sender));
        require(hasCdnKey(dataSetId), FwssErrors.FilBeamServiceNotConfigured(dataSetId));
        require(info.cacheMissRailId != 0 && info.cdnRailId != 0, FwssErrors.InvalidDataSetId(dataSetId));
        FwssRails.topUpCDNRails(
            IFwssPayments(paymentsContractAddress),
            dataSetId,
            info.cacheMissRailId,
            info.cdnRailId,
            cacheMissAmountToAdd,
            cdnAmountToAdd
        );
    }

    function transferFilBeamController(address newController) external onlyFilBeamController {
        require(newController != address(0), FwssErrors.ZeroAddress(FwssErrors.FILBEAM_CONTROLLER));
        emit FilBeamControllerChanged(filBeamControllerAddress, newController);
        filBeamControllerAddress = newController;
    }

    function requirePaymentNotTerminated(uint256 dataSetId) internal view {
        DataSetInfo storage info = dataSetInfo[dataSetId];
        require(info.pdpRailId != 0, FwssErrors.InvalidDataSetId(dataSetId));
        require(info.pdpEndEpoch == 0, FwssErrors.DataSetPaymentAlreadyTerminated(dataSetId));
    }

    function requirePaymentNotBeyondEndEpoch(uint256 dataSetId) internal view {
        uint256 end = dataSetInfo[dataSetId].pdpEndEpoch;
        require(end == 0 || block.number <= end, FwssErrors.DataSetPaymentBeyondEndEpoch(dataSetId, end, block.number));
    }

    // ---- pricing ----

    /// The rail's rate for the size, the fees owed paid out of the reserve (src/FilecoinWarmStorageService.sol updatePaymentRates).
    function updatePaymentRates(
        uint256 dataSetId,
        DataSetInfo storage info,
        uint256 leafCount,
        uint96 pending,
        uint96 reserveBalance,
        bool immediateTermination
    ) internal {
        require(info.pdpRailId != 0, FwssErrors.NoPDPPaymentRail(dataSetId));
        info.lifecycleReserveBalance = FwssRails.updateStorageRates(
            IFwssPayments(paymentsContractAddress),
            dataSetId,
            info.pdpRailId,
            leafCount,
            pending,
            reserveBalance,
            info.pdpEndEpoch,
            immediateTermination
        );
        info.pendingOneTimePayments = 0;
    }

    /// Deprecated in 1.3.1 for the view's getPriceList, still answered.
    function getServicePrice() external view returns (ServicePricing memory pricing) {
        pricing = ServicePricing({
            pricePerTiBPerMonthNoCDN: FwssPriceList.STORAGE_PRICE_PER_TIB_PER_MONTH,
            pricePerTiBCdnEgress: FwssPriceList.CDN_EGRESS_PRICE_PER_TIB,
            pricePerTiBCacheMissEgress: FwssPriceList.CACHE_MISS_EGRESS_PRICE_PER_TIB,
            tokenAddress: usdfcTokenAddress,
            epochsPerMonth: FwssPriceList.EPOCHS_PER_MONTH,
            datasetFeePerMonth: FwssPriceList.DATASET_FEE_PER_MONTH
        });
    }

    function getEffectiveRates() external pure returns (uint256 serviceFee, uint256 spPayment) {
        uint256 total = FwssPriceList.STORAGE_PRICE_PER_TIB_PER_MONTH;
        serviceFee = (total * FwssPriceList.SERVICE_COMMISSION_BPS) / COMMISSION_MAX_BPS;
        spPayment = total - serviceFee;
    }

    // ---- proving periods and payment validation ----

    /// Periods are (A + N*M, A + (N+1)*M] for activation epoch A and period length M; max uint
    /// before activation (src/FilecoinWarmStorageService.sol _provingPeriodForEpoch).
    function getProvingPeriodForEpoch(uint256 dataSetId, uint256 epoch) public view returns (uint256) {
        return provingPeriodOf(provingActivationEpoch[dataSetId], epoch);
    }

    function provingPeriodOf(uint256 activation, uint256 epoch) internal view returns (uint256) {
        if (activation == 0 || epoch <= activation) return type(uint256).max;
        return (epoch - activation - 1) / maxProvingPeriod;
    }

    /// Filecoin Pay asks before paying the provider for (fromEpoch, toEpoch]: only proven periods
    /// are paid; faulted ones let settlement move on unpaid; the open one holds it. A rail of no
    /// data set (an abandoned one's) and epochs before proving settle at zero
    /// (src/FilecoinWarmStorageService.sol validatePayment / _findProvenEpochs).
    function validatePayment(uint256 railId, uint256 proposedAmount, uint256 fromEpoch, uint256 toEpoch, uint256)
        external
        view
        returns (FwssValidationResult memory result)
    {
        uint256 dataSetId = railToDataSet[railId];
        if (dataSetId == 0) return FwssValidationResult(0, toEpoch, "Rail not associated with a data set");
        require(toEpoch > fromEpoch, FwssErrors.InvalidEpochRange(fromEpoch, toEpoch));
        uint256 activation = provingActivationEpoch[dataSetId];
        if (activation == 0 || toEpoch <= activation) return FwssValidationResult(0, toEpoch, "No proving activity");
        (uint256 proven, uint256 settleUpTo) = provenEpochs(dataSetId, fromEpoch, toEpoch, activation);
        if (proven == 0) return FwssValidationResult(0, settleUpTo, "No proven epochs in the requested range");
        return FwssValidationResult((proposedAmount * proven) / (toEpoch - fromEpoch), settleUpTo, "");
    }

    function provenEpochs(uint256 dataSetId, uint256 fromEpoch, uint256 toEpoch, uint256 activation)
        internal
        view
        returns (uint256 proven, uint256 settleUpTo)
    {
        require(toEpoch >= activation && toEpoch <= block.number, FwssErrors.InvalidEpochRange(fromEpoch, toEpoch));
        if (fromEpoch < activation) fromEpoch = activation;
        settleUpTo = fromEpoch;
        uint256 period = (fromEpoch - activation) / maxProvingPeriod; // period holding fromEpoch + 1
        uint256 last = provingPeriodOf(activation, toEpoch);
        for (; period <= last; period++) {
            uint256 deadline = activation + (period + 1) * maxProvingPeriod;
            if (provenPeriods[dataSetId][period >> 8] & (uint256(1) << (period & 255)) != 0) {
                uint256 start = deadline - maxProvingPeriod > fromEpoch ? deadline - maxProvingPeriod : fromEpoch;
                settleUpTo = toEpoch < deadline ? toEpoch : deadline;
                proven += settleUpTo - start;
            } else if (deadline < block.number) {
                settleUpTo = toEpoch < deadline ? toEpoch : deadline;
            }
        }
    }

    function railTerminated(uint256 railId, address terminator, uint256 endEpoch) external {
        require(
            msg.sender == paymentsContractAddress, FwssErrors.CallerNotPayments(paymentsContractAddress, msg.sender)
        );
        if (terminator != address(this)) revert FwssErrors.ServiceContractMustTerminateRail();
        uint256 dataSetId = railToDataSet[railId];
        require(dataSetId != 0, FwssErrors.DataSetNotFoundForRail(railId));
        DataSetInfo storage info = dataSetInfo[dataSetId];
        if (info.pdpEndEpoch == 0 && railId == info.pdpRailId) {
            info.pdpEndEpoch = endEpoch;
            emit PDPPaymentTerminated(dataSetId, endEpoch, railId);
        }
    }

    // ---- raw storage reads for the view contract (src/Extsload.sol) ----

    function extsload(bytes32 slot) external view returns (bytes32 value) {
        assembly ("memory-safe") {
            value := sload(slot)
        }
    }

    function extsloadStruct(bytes32 slot, uint256 size) external view returns (bytes32[] memory values) {
        values = new bytes32[](size);
        for (uint256 i = 0; i < size; i++) {
            bytes32 v;
            assembly ("memory-safe") {
                v := sload(add(slot, i))
            }
            values[i] = v;
        }
    }
}
