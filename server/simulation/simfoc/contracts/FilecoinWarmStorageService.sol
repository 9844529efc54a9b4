// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {PdpCid, PDPListener} from "./PDPVerifier.sol";

// Stand-in for FilOzone/filecoin-services' FilecoinWarmStorageService, written to the
// ABI the Synapse SDK ships (synapse-core/src/abis/generated.ts = FWSS 1.2.1). No proxy:
// the deployer calls initialize() once right after deployment. The read-only side lives
// in FilecoinWarmStorageServiceStateView, which reads this contract's storage through
// extsload, so the slot order below is part of the interface (FwssSlots in the view).

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
}

interface IFwssToken {
    function decimals() external view returns (uint8);
}

/// The errors of filecoin-services src/Errors.sol this contract raises (same names and arguments,
/// so the SDK's errorsAbi decodes them).
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
    error InvalidServiceNameLength(uint256 length);
    error InvalidServiceDescriptionLength(uint256 length);
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
    error FilBeamServiceNotConfigured(uint256 dataSetId);
    error CDNPaymentAlreadyTerminated(uint256 dataSetId);
    error CacheMissPaymentAlreadyTerminated(uint256 dataSetId);
    error InvalidTopUpAmount(uint256 dataSetId);
    error InsufficientLockupFunds(address payer, uint256 minimumRequired, uint256 available);
    error OperatorNotApproved(address payer, address operator);
    error InsufficientRateAllowance(
        address payer, address operator, uint256 rateAllowance, uint256 rateUsage, uint256 minimumRateRequired
    );
    error InsufficientLockupAllowance(
        address payer, address operator, uint256 lockupAllowance, uint256 lockupUsage, uint256 minimumLockupRequired
    );
    error InsufficientMaxLockupPeriod(
        address payer, address operator, uint256 maxLockupPeriod, uint256 requiredLockupPeriod
    );
    error NoPDPPaymentRail(uint256 dataSetId);
    error RailNotAssociated(uint256 railId);
    error InvalidEpochRange(uint256 fromEpoch, uint256 toEpoch);
    error CallerNotPayments(address expected, address actual);
    error ServiceContractMustTerminateRail();
    error DataSetNotFoundForRail(uint256 railId);
    error AtLeastOnePriceMustBeNonZero();
    error PriceExceedsMaximum(uint8 priceType, uint256 maxAllowed, uint256 actual);
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
    {
        bytes32 digest = keccak256(abi.encodePacked(hex"1901", domainSeparator(), structHash));
        address signer = FwssTypedData.recover(digest, signature);
        if (signer == payer) return;
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
}

contract FilecoinWarmStorageService {
    string public constant VERSION = "1.2.1";

    // ---- constants (src/FilecoinWarmStorageService.sol) ----
    uint256 internal constant BYTES_PER_LEAF = 32;
    uint256 internal constant CHALLENGES_PER_PROOF = 5;
    uint256 internal constant COMMISSION_MAX_BPS = 10000;
    uint256 internal constant MAX_CREATE_DATA_SET_EXTRA_DATA_SIZE = 4096;
    uint256 internal constant MAX_ADD_PIECES_EXTRA_DATA_SIZE = 8192;
    uint256 internal constant MAX_SCHEDULE_PIECE_REMOVALS_EXTRA_DATA_SIZE = 256;
    uint256 internal constant EPOCHS_PER_MONTH = 2880 * 30;
    uint256 internal constant DEFAULT_LOCKUP_PERIOD = 2880 * 30;
    uint256 internal constant TIB_IN_BYTES = 1 << 40;
    /// 0.1 USDFC, pulled from the payer into Filecoin Pay at data set creation; the SDK counts it
    /// (synapse-core/src/utils/constants.ts USDFC_SYBIL_FEE).
    uint256 internal constant SYBIL_FEE = 0.1 ether;
    uint256 internal constant MAX_KEY_LENGTH = 32;
    uint256 internal constant MAX_VALUE_LENGTH = 128;
    uint256 internal constant MAX_KEYS_PER_DATASET = 10;
    uint256 internal constant MAX_KEYS_PER_PIECE = 5;
    bytes32 internal constant WITH_CDN_KEY_HASH = keccak256("withCDN");

    address public immutable pdpVerifierAddress;
    address public immutable paymentsContractAddress;
    address public immutable usdfcTokenAddress;
    address public immutable filBeamBeneficiaryAddress;
    address public immutable serviceProviderRegistry;
    address public immutable sessionKeyRegistry;
    uint256 internal immutable CDN_EGRESS_PRICE_PER_TIB;
    uint256 internal immutable CACHE_MISS_EGRESS_PRICE_PER_TIB;
    uint256 internal immutable DEFAULT_CDN_LOCKUP_AMOUNT;
    uint256 internal immutable DEFAULT_CACHE_MISS_LOCKUP_AMOUNT;
    uint256 internal immutable MAX_STORAGE_PRICE_PER_TIB_PER_MONTH;
    uint256 internal immutable MAX_MINIMUM_STORAGE_RATE_PER_MONTH;
    uint256 internal immutable MINIMUM_RATE_FLOOR; // 0.00001 USDFC per epoch: the smallest nonzero size-based rate

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
    }

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

    struct ServicePricing {
        uint256 pricePerTiBPerMonthNoCDN;
        uint256 pricePerTiBCdnEgress;
        uint256 pricePerTiBCacheMissEgress;
        address tokenAddress;
        uint256 epochsPerMonth;
        uint256 minimumPricePerMonth;
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
    uint256 internal serviceCommissionBps; // 3
    mapping(uint256 => mapping(uint256 => uint256)) internal provenPeriods; // 4
    mapping(uint256 => uint256) internal provingActivationEpoch; // 5
    mapping(uint256 => uint256) internal provingDeadlines; // 6
    mapping(uint256 => bool) internal provenThisPeriod; // 7
    mapping(uint256 => DataSetInfo) internal dataSetInfo; // 8
    mapping(address => mapping(uint256 => uint256)) internal clientNonces; // 9
    mapping(address => uint256[]) internal clientDataSets; // 10
    mapping(uint256 => uint256) internal railToDataSet; // 11
    mapping(uint256 => mapping(string => string)) internal dataSetMetadata; // 12
    mapping(uint256 => string[]) internal dataSetMetadataKeys; // 13
    mapping(uint256 => mapping(uint256 => mapping(string => string))) internal pieceMetadata; // 14
    mapping(uint256 => mapping(uint256 => string[])) internal pieceMetadataKeys; // 15
    mapping(uint256 => bool) internal approvedProviders; // 16
    uint256[] internal approvedProviderIds; // 17
    address public viewContractAddress; // 18
    address internal filBeamControllerAddress; // 19
    uint256 internal storagePricePerTibPerMonth; // 20
    uint256 internal minimumStorageRatePerMonth; // 21
    mapping(uint256 => uint256[]) internal scheduledPieceMetadataRemovals; // 22

    // ---- events (src/FilecoinWarmStorageService.sol) ----
    event OwnershipTransferred(address indexed previousOwner, address indexed newOwner);
    event Initialized(uint64 version);
    event FilecoinServiceDeployed(string name, string description);
    event ViewContractSet(address indexed viewContract);
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
    event RailRateUpdated(uint256 indexed dataSetId, uint256 railId, uint256 newRate);
    event PieceAdded(
        uint256 indexed dataSetId, uint256 indexed pieceId, PdpCid pieceCid, string[] keys, string[] values
    );
    event ServiceTerminated(
        address indexed caller, uint256 indexed dataSetId, uint256 pdpRailId, uint256 cacheMissRailId, uint256 cdnRailId
    );
    event CDNServiceTerminated(
        address indexed caller, uint256 indexed dataSetId, uint256 cacheMissRailId, uint256 cdnRailId
    );
    event PDPPaymentTerminated(uint256 indexed dataSetId, uint256 endEpoch, uint256 pdpRailId);
    event FilBeamControllerChanged(address oldController, address newController);
    event CDNPaymentRailsToppedUp(
        uint256 indexed dataSetId,
        uint256 cdnAmountAdded,
        uint256 totalCdnLockup,
        uint256 cacheMissAmountAdded,
        uint256 totalCacheMissLockup
    );
    event ProviderApproved(uint256 indexed providerId);
    event ProviderUnapproved(uint256 indexed providerId);
    event PricingUpdated(uint256 storagePrice, uint256 minimumRate);
    event EIP712DomainChanged();

    error OwnableUnauthorizedAccount(address account);
    error OwnableInvalidOwner(address owner);
    error InvalidInitialization();

    modifier onlyOwner() {
        if (msg.sender != owner) revert OwnableUnauthorizedAccount(msg.sender);
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
        uint64 /* _reinitializer_version: no proxy */
    ) {
        require(_pdpVerifierAddress != address(0), FwssErrors.ZeroAddress(FwssErrors.PDP_VERIFIER));
        require(_paymentsContractAddress != address(0), FwssErrors.ZeroAddress(FwssErrors.FILECOIN_PAY));
        require(_usdfc != address(0), FwssErrors.ZeroAddress(FwssErrors.USDFC));
        require(_filBeamBeneficiaryAddress != address(0), FwssErrors.ZeroAddress(FwssErrors.FILBEAM_BENEFICIARY));
        require(_serviceProviderRegistry != address(0), FwssErrors.ZeroAddress(FwssErrors.PROVIDER_REGISTRY));
        require(_sessionKeyRegistry != address(0), FwssErrors.ZeroAddress(FwssErrors.SESSION_KEY_REGISTRY));
        pdpVerifierAddress = _pdpVerifierAddress;
        paymentsContractAddress = _paymentsContractAddress;
        usdfcTokenAddress = _usdfc;
        filBeamBeneficiaryAddress = _filBeamBeneficiaryAddress;
        serviceProviderRegistry = _serviceProviderRegistry;
        sessionKeyRegistry = _sessionKeyRegistry;
        owner = msg.sender;

        // prices scale with the token's decimals, as the real constructor does
        uint256 unit = 10 ** uint256(IFwssToken(_usdfc).decimals());
        CDN_EGRESS_PRICE_PER_TIB = 7 * unit;
        CACHE_MISS_EGRESS_PRICE_PER_TIB = 7 * unit;
        MAX_STORAGE_PRICE_PER_TIB_PER_MONTH = 10 * unit;
        MAX_MINIMUM_STORAGE_RATE_PER_MONTH = (24 * unit) / 100;
        DEFAULT_CDN_LOCKUP_AMOUNT = (7 * unit) / 10;
        DEFAULT_CACHE_MISS_LOCKUP_AMOUNT = (3 * unit) / 10;
        MINIMUM_RATE_FLOOR = unit / 100000;
    }

    /// Run once by the deployer, as the real proxy's initializer: proving schedule, FilBeam
    /// controller, and the launch prices (2.5 USDFC per TiB per month, 0.06 USDFC monthly floor).
    function initialize(
        uint64 _maxProvingPeriod,
        uint256 _challengeWindowSize,
        address _filBeamControllerAddress,
        string memory _name,
        string memory _description
    ) external onlyOwner {
        if (maxProvingPeriod != 0) revert InvalidInitialization();
        checkProvingPeriod(_maxProvingPeriod, _challengeWindowSize);
        require(_filBeamControllerAddress != address(0), FwssErrors.ZeroAddress(FwssErrors.FILBEAM_CONTROLLER));
        uint256 nameLength = bytes(_name).length;
        require(nameLength > 0 && nameLength <= 256, FwssErrors.InvalidServiceNameLength(nameLength));
        uint256 descriptionLength = bytes(_description).length;
        require(
            descriptionLength > 0 && descriptionLength <= 256,
            FwssErrors.InvalidServiceDescriptionLength(descriptionLength)
        );
        filBeamControllerAddress = _filBeamControllerAddress;
        maxProvingPeriod = _maxProvingPeriod;
        challengeWindowSize = _challengeWindowSize;
        uint256 unit = MAX_STORAGE_PRICE_PER_TIB_PER_MONTH / 10;
        storagePricePerTibPerMonth = (5 * unit) / 2;
        minimumStorageRatePerMonth = (6 * unit) / 100;
        emit Initialized(1);
        emit FilecoinServiceDeployed(_name, _description);
    }

    function checkProvingPeriod(uint64 _maxProvingPeriod, uint256 _challengeWindowSize) internal pure {
        require(_maxProvingPeriod > 0, FwssErrors.MaxProvingPeriodZero());
        require(
            _challengeWindowSize > 0 && _challengeWindowSize < _maxProvingPeriod,
            FwssErrors.InvalidChallengeWindowSize(_maxProvingPeriod, _challengeWindowSize)
        );
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

    function updateServiceCommission(uint256 newCommissionBps) external onlyOwner {
        require(
            newCommissionBps <= COMMISSION_MAX_BPS,
            FwssErrors.CommissionExceedsMaximum(0, COMMISSION_MAX_BPS, newCommissionBps)
        );
        serviceCommissionBps = newCommissionBps;
    }

    /// 0 keeps a price; caps are 4x the launch prices (src/FilecoinWarmStorageService.sol updatePricing).
    function updatePricing(uint256 newStoragePrice, uint256 newMinimumRate) external onlyOwner {
        require(newStoragePrice > 0 || newMinimumRate > 0, FwssErrors.AtLeastOnePriceMustBeNonZero());
        if (newStoragePrice > 0) {
            require(
                newStoragePrice <= MAX_STORAGE_PRICE_PER_TIB_PER_MONTH,
                FwssErrors.PriceExceedsMaximum(0, MAX_STORAGE_PRICE_PER_TIB_PER_MONTH, newStoragePrice)
            );
            storagePricePerTibPerMonth = newStoragePrice;
        }
        if (newMinimumRate > 0) {
            require(
                newMinimumRate <= MAX_MINIMUM_STORAGE_RATE_PER_MONTH,
                FwssErrors.PriceExceedsMaximum(1, MAX_MINIMUM_STORAGE_RATE_PER_MONTH, newMinimumRate)
            );
            minimumStorageRatePerMonth = newMinimumRate;
        }
        emit PricingUpdated(storagePricePerTibPerMonth, minimumStorageRatePerMonth);
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
            string memory name,
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
    /// typed-data/sign-create-dataset.ts). Opens the PDP rail, pulls the sybil fee through a
    /// one-shot rail to Filecoin Pay itself, and the two CDN rails when "withCDN" is asked for.
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
        info.commissionBps = serviceCommissionBps;
        info.clientDataSetId = c.clientDataSetId;
        info.providerId = providerId;

        bool withCdn = storeDataSetMetadata(dataSetId, c.keys, c.values);
        openRails(dataSetId, info, withCdn);
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

    function openRails(uint256 dataSetId, DataSetInfo storage info, bool withCdn) internal {
        IFwssPayments payments = IFwssPayments(paymentsContractAddress);
        checkPayerCanPay(payments, info.payer, withCdn);

        uint256 pdpRailId =
            payments.createRail(usdfcTokenAddress, info.payer, info.payee, address(this), info.commissionBps, address(this));
        info.pdpRailId = pdpRailId;
        railToDataSet[pdpRailId] = dataSetId;
        payments.modifyRailLockup(pdpRailId, DEFAULT_LOCKUP_PERIOD, 0);

        // the sybil fee: a one-time payment to Filecoin Pay itself, which PDPVerifier looks for
        uint256 burnRailId =
            payments.createRail(usdfcTokenAddress, info.payer, address(payments), address(0), 0, address(0));
        payments.modifyRailLockup(burnRailId, 0, SYBIL_FEE);
        payments.modifyRailPayment(burnRailId, 0, SYBIL_FEE);
        payments.terminateRail(burnRailId);
        payments.settleRail(burnRailId, block.number);

        if (withCdn) {
            info.cacheMissRailId =
                payments.createRail(usdfcTokenAddress, info.payer, info.payee, address(0), 0, address(this));
            payments.modifyRailLockup(info.cacheMissRailId, DEFAULT_LOCKUP_PERIOD, DEFAULT_CACHE_MISS_LOCKUP_AMOUNT);
            info.cdnRailId = payments.createRail(
                usdfcTokenAddress, info.payer, filBeamBeneficiaryAddress, address(0), 0, address(this)
            );
            payments.modifyRailLockup(info.cdnRailId, DEFAULT_LOCKUP_PERIOD, DEFAULT_CDN_LOCKUP_AMOUNT);
            emit CDNPaymentRailsToppedUp(
                dataSetId,
                DEFAULT_CDN_LOCKUP_AMOUNT,
                DEFAULT_CDN_LOCKUP_AMOUNT,
                DEFAULT_CACHE_MISS_LOCKUP_AMOUNT,
                DEFAULT_CACHE_MISS_LOCKUP_AMOUNT
            );
        }
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

    /// Before any rail opens: a month of the floor price (plus the CDN lockups and the sybil fee)
    /// must be available and within what the payer approved this contract for
    /// (src/FilecoinWarmStorageService.sol validatePayerOperatorApprovalAndFunds).
    function checkPayerCanPay(IFwssPayments payments, address payer, bool withCdn) internal view {
        uint256 needed = (minimumStorageRatePerMonth * DEFAULT_LOCKUP_PERIOD) / EPOCHS_PER_MONTH + SYBIL_FEE;
        if (withCdn) needed += DEFAULT_CACHE_MISS_LOCKUP_AMOUNT + DEFAULT_CDN_LOCKUP_AMOUNT;

        (,, uint256 available,) = payments.getAccountInfoIfSettled(usdfcTokenAddress, payer);
        require(available >= needed, FwssErrors.InsufficientLockupFunds(payer, needed, available));

        (
            bool approved,
            uint256 rateAllowance,
            uint256 lockupAllowance,
            uint256 rateUsage,
            uint256 lockupUsage,
            uint256 maxLockupPeriod
        ) = payments.operatorApprovals(usdfcTokenAddress, payer, address(this));
        require(approved, FwssErrors.OperatorNotApproved(payer, address(this)));
        uint256 minimumRate = minimumStorageRatePerMonth / EPOCHS_PER_MONTH;
        require(
            rateAllowance >= rateUsage + minimumRate,
            FwssErrors.InsufficientRateAllowance(payer, address(this), rateAllowance, rateUsage, minimumRate)
        );
        require(
            lockupAllowance >= lockupUsage + needed,
            FwssErrors.InsufficientLockupAllowance(payer, address(this), lockupAllowance, lockupUsage, needed)
        );
        require(
            maxLockupPeriod >= DEFAULT_LOCKUP_PERIOD,
            FwssErrors.InsufficientMaxLockupPeriod(payer, address(this), maxLockupPeriod, DEFAULT_LOCKUP_PERIOD)
        );
    }

    /// Only once the rails are terminated and the PDP rail settled to its end (src/FilecoinWarmStorageService.sol dataSetDeleted).
    function dataSetDeleted(uint256 dataSetId, uint256, bytes calldata) external onlyPDPVerifier {
        DataSetInfo storage info = dataSetInfo[dataSetId];
        require(info.pdpRailId != 0, FwssErrors.DataSetNotRegistered(dataSetId));
        require(
            info.pdpEndEpoch != 0 && block.number > info.pdpEndEpoch,
            FwssErrors.PaymentRailsNotFinalized(dataSetId, info.pdpEndEpoch)
        );
        try IFwssPayments(paymentsContractAddress).getRail(info.pdpRailId) returns (FwssRailView memory rail) {
            require(
                rail.settledUpTo >= rail.endEpoch,
                FwssErrors.RailNotFullySettled(info.pdpRailId, rail.settledUpTo, rail.endEpoch)
            );
        } catch {
            // a finalised rail is gone from Filecoin Pay: it was settled in full
        }

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
        delete provingActivationEpoch[dataSetId];
        delete railToDataSet[info.pdpRailId];
        string[] storage keys = dataSetMetadataKeys[dataSetId];
        for (uint256 i = 0; i < keys.length; i++) {
            delete dataSetMetadata[dataSetId][keys[i]];
        }
        delete dataSetMetadataKeys[dataSetId];
        delete dataSetInfo[dataSetId];
    }

    /// extraData = abi.encode(nonce, keys[][], values[][], signature) (synapse-core
    /// typed-data/sign-add-pieces.ts). The nonce shares clientNonces with clientDataSetId.
    function piecesAdded(uint256 dataSetId, uint256 firstAdded, PdpCid[] memory pieceData, bytes calldata extraData)
        external
        onlyPDPVerifier
    {
        requirePaymentNotTerminated(dataSetId);
        DataSetInfo storage info = dataSetInfo[dataSetId];
        requireExtraData(extraData.length, MAX_ADD_PIECES_EXTRA_DATA_SIZE);
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

        // the new size is paid for from now on (fails here when the payer cannot cover it)
        updatePaymentRates(dataSetId, IFwssPdpVerifier(pdpVerifierAddress).getDataSetLeafCount(dataSetId));

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

    /// extraData = abi.encode(signature) over SchedulePieceRemovals; the pieces' metadata goes at
    /// the next proving period, when PDPVerifier drops them.
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

    /// The first call starts proving (deadline = now + maxProvingPeriod); later calls move the
    /// deadline on by whole periods, record the periods that went unproven as faults, and take
    /// the challenge epoch only from the next deadline's window
    /// (src/FilecoinWarmStorageService.sol nextProvingPeriod).
    function nextProvingPeriod(uint256 dataSetId, uint256 challengeEpoch, uint256 leafCount, bytes calldata)
        external
        onlyPDPVerifier
    {
        requirePaymentNotBeyondEndEpoch(dataSetId);
        uint256 deadline = provingDeadlines[dataSetId];
        if (deadline == 0) {
            uint256 first = block.number + maxProvingPeriod;
            checkChallengeEpoch(dataSetId, first, challengeEpoch);
            provingDeadlines[dataSetId] = first;
            provingActivationEpoch[dataSetId] = block.number;
        } else {
            if (block.number <= deadline - maxProvingPeriod) {
                revert FwssErrors.NextProvingPeriodAlreadyCalled(dataSetId, deadline - maxProvingPeriod, block.number);
            }
            uint256 skipped = block.number <= deadline ? 0 : (block.number - (deadline + 1)) / maxProvingPeriod;
            uint256 next = 0;
            if (challengeEpoch != 0) {
                next = deadline + maxProvingPeriod * (skipped + 1);
                checkChallengeEpoch(dataSetId, next, challengeEpoch);
            }
            uint256 faults = skipped + (provenThisPeriod[dataSetId] ? 0 : 1);
            if (faults > 0) emit FaultRecord(dataSetId, faults, deadline);
            provingDeadlines[dataSetId] = next;
            provenThisPeriod[dataSetId] = false;
        }
        if (dropScheduledPieceMetadata(dataSetId)) updatePaymentRates(dataSetId, leafCount);
    }

    function checkChallengeEpoch(uint256 dataSetId, uint256 deadline, uint256 challengeEpoch) internal view {
        uint256 windowStart = deadline - challengeWindowSize;
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

    /// The payer or the provider ends the PDP rail (and the CDN rails); Filecoin Pay answers with
    /// railTerminated, which records the end epoch.
    function terminateService(uint256 dataSetId) external {
        DataSetInfo storage info = dataSetInfo[dataSetId];
        require(info.pdpRailId != 0, FwssErrors.InvalidDataSetId(dataSetId));
        require(info.pdpEndEpoch == 0, FwssErrors.DataSetPaymentAlreadyTerminated(dataSetId));
        require(
            msg.sender == info.payer || msg.sender == info.serviceProvider,
            FwssErrors.CallerNotPayerOrPayee(dataSetId, info.payer, info.serviceProvider, msg.sender)
        );
        IFwssPayments(paymentsContractAddress).terminateRail(info.pdpRailId);
        if (dropCdnKey(dataSetId)) endCdnRails(dataSetId, info);
        emit ServiceTerminated(msg.sender, dataSetId, info.pdpRailId, info.cacheMissRailId, info.cdnRailId);
    }

    function terminateCDNService(uint256 dataSetId) external onlyFilBeamController {
        require(dropCdnKey(dataSetId), FwssErrors.FilBeamServiceNotConfigured(dataSetId));
        DataSetInfo storage info = dataSetInfo[dataSetId];
        require(info.cacheMissRailId != 0 && info.cdnRailId != 0, FwssErrors.InvalidDataSetId(dataSetId));
        endCdnRails(dataSetId, info);
    }

    function endCdnRails(uint256 dataSetId, DataSetInfo storage info) internal {
        IFwssPayments payments = IFwssPayments(paymentsContractAddress);
        try payments.terminateRail(info.cacheMissRailId) {} catch {}
        try payments.terminateRail(info.cdnRailId) {} catch {}
        delete dataSetMetadata[dataSetId]["withCDN"];
        emit CDNServiceTerminated(msg.sender, dataSetId, info.cacheMissRailId, info.cdnRailId);
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
        require(info.pdpRailId != 0, FwssErrors.InvalidDataSetId(dataSetId));
        require(info.cdnRailId != 0 && info.cacheMissRailId != 0, FwssErrors.InvalidDataSetId(dataSetId));
        IFwssPayments payments = IFwssPayments(paymentsContractAddress);
        if (cdnAmount > 0) payments.modifyRailPayment(info.cdnRailId, 0, cdnAmount);
        if (cacheMissAmount > 0) payments.modifyRailPayment(info.cacheMissRailId, 0, cacheMissAmount);
    }

    function topUpCDNPaymentRails(uint256 dataSetId, uint256 cdnAmountToAdd, uint256 cacheMissAmountToAdd) external {
        DataSetInfo storage info = dataSetInfo[dataSetId];
        require(info.pdpRailId != 0, FwssErrors.InvalidDataSetId(dataSetId));
        require(msg.sender == info.payer, FwssErrors.CallerNotPayer(dataSetId, info.payer, msg.sender));
        require(hasCdnKey(dataSetId), FwssErrors.FilBeamServiceNotConfigured(dataSetId));
        require(info.cacheMissRailId != 0 && info.cdnRailId != 0, FwssErrors.InvalidDataSetId(dataSetId));
        IFwssPayments payments = IFwssPayments(paymentsContractAddress);
        FwssRailView memory cdn = payments.getRail(info.cdnRailId);
        FwssRailView memory cacheMiss = payments.getRail(info.cacheMissRailId);
        require(cdn.endEpoch == 0, FwssErrors.CDNPaymentAlreadyTerminated(dataSetId));
        require(cacheMiss.endEpoch == 0, FwssErrors.CacheMissPaymentAlreadyTerminated(dataSetId));
        if (cdnAmountToAdd == 0 && cacheMissAmountToAdd == 0) revert FwssErrors.InvalidTopUpAmount(dataSetId);
        uint256 cdnTotal = cdn.lockupFixed + cdnAmountToAdd;
        uint256 cacheMissTotal = cacheMiss.lockupFixed + cacheMissAmountToAdd;
        payments.modifyRailLockup(info.cdnRailId, DEFAULT_LOCKUP_PERIOD, cdnTotal);
        payments.modifyRailLockup(info.cacheMissRailId, DEFAULT_LOCKUP_PERIOD, cacheMissTotal);
        emit CDNPaymentRailsToppedUp(dataSetId, cdnAmountToAdd, cdnTotal, cacheMissAmountToAdd, cacheMissTotal);
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

    function updatePaymentRates(uint256 dataSetId, uint256 leafCount) internal {
        uint256 railId = dataSetInfo[dataSetId].pdpRailId;
        require(railId != 0, FwssErrors.NoPDPPaymentRail(dataSetId));
        uint256 rate = storageRate(leafCount * BYTES_PER_LEAF);
        IFwssPayments(paymentsContractAddress).modifyRailPayment(railId, rate, 0);
        emit RailRateUpdated(dataSetId, railId, rate);
    }

    /// Price per TiB per month spread over the month's epochs, never below the monthly floor's
    /// per-epoch share, and never 0 for a nonzero size (src/FilecoinWarmStorageService.sol
    /// _calculateStorageRate / calculateStorageSizeBasedRatePerEpoch).
    function storageRate(uint256 totalBytes) internal view returns (uint256) {
        uint256 sized = (totalBytes * storagePricePerTibPerMonth) / (TIB_IN_BYTES * EPOCHS_PER_MONTH);
        if (sized == 0 && totalBytes > 0) sized = MINIMUM_RATE_FLOOR;
        uint256 floor = minimumStorageRatePerMonth / EPOCHS_PER_MONTH;
        return sized > floor ? sized : floor;
    }

    function calculateRatePerEpoch(uint256 totalBytes) external view returns (uint256 storageRate_) {
        return storageRate(totalBytes);
    }

    function getServicePrice() external view returns (ServicePricing memory pricing) {
        pricing = ServicePricing({
            pricePerTiBPerMonthNoCDN: storagePricePerTibPerMonth,
            pricePerTiBCdnEgress: CDN_EGRESS_PRICE_PER_TIB,
            pricePerTiBCacheMissEgress: CACHE_MISS_EGRESS_PRICE_PER_TIB,
            tokenAddress: usdfcTokenAddress,
            epochsPerMonth: EPOCHS_PER_MONTH,
            minimumPricePerMonth: minimumStorageRatePerMonth
        });
    }

    function getEffectiveRates() external view returns (uint256 serviceFee, uint256 spPayment) {
        serviceFee = (storagePricePerTibPerMonth * serviceCommissionBps) / COMMISSION_MAX_BPS;
        spPayment = storagePricePerTibPerMonth - serviceFee;
    }

    // ---- proving periods and payment validation ----

    /// Periods are (A + N*M, A + (N+1)*M] for activation epoch A and period length M; max uint
    /// before activation (src/FilecoinWarmStorageService.sol _provingPeriodForEpoch).
    function getProvingPeriodForEpoch(uint256 dataSetId, uint256 epoch) public view returns (uint256) {
        uint256 activation = provingActivationEpoch[dataSetId];
        if (activation == 0 || epoch <= activation) return type(uint256).max;
        return (epoch - activation - 1) / maxProvingPeriod;
    }

    /// Filecoin Pay asks before paying the provider for (fromEpoch, toEpoch]: only proven periods
    /// are paid; faulted ones let settlement move on unpaid; the open one holds it
    /// (src/FilecoinWarmStorageService.sol validatePayment / _findProvenEpochs).
    function validatePayment(uint256 railId, uint256 proposedAmount, uint256 fromEpoch, uint256 toEpoch, uint256)
        external
        view
        returns (FwssValidationResult memory result)
    {
        uint256 dataSetId = railToDataSet[railId];
        require(dataSetId != 0, FwssErrors.RailNotAssociated(railId));
        require(toEpoch > fromEpoch, FwssErrors.InvalidEpochRange(fromEpoch, toEpoch));
        uint256 activation = provingActivationEpoch[dataSetId];
        if (activation == 0) {
            return FwssValidationResult(0, fromEpoch, "Proving never activated for this data set");
        }
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
        uint256 last = getProvingPeriodForEpoch(dataSetId, toEpoch);
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
