// The Onchain Cloud's contracts as deployed on calibration and mainnet since June 2026, as far as
// this client calls them: ABI fragments written from their sources, FilOzone/filecoin-services
// 1.3.1 (service_contracts/src/FilecoinWarmStorageService.sol, FilecoinWarmStorageServiceStateView.sol,
// src/lib/PriceList.sol, src/lib/Rails.sol, src/Errors.sol), FilOzone/pdp 3.4.0 (src/PDPVerifier.sol)
// and FilOzone/filecoin-pay 1.0.0 (src/FilecoinPayV1.sol). Synapse SDK 0.41 ships the ABIs of the
// generation before (FWSS 1.2.1, an 11-field data set view, PDPVerifier 3.2.0): where those differ,
// the client reads through these. A newer SDK that ships them replaces this file.
import { parseAbi } from 'viem'

/** FilecoinWarmStorageServiceStateView 1.3.1: the reads. The data set view has 13 fields, two added before `dataSetId`. */
export const fwssViewAbi = parseAbi([
  'struct DataSetInfoView { uint256 pdpRailId; uint256 cacheMissRailId; uint256 cdnRailId; address payer; address payee; address serviceProvider; uint256 commissionBps; uint256 clientDataSetId; uint256 pdpEndEpoch; uint256 providerId; uint96 pendingOneTimePayments; uint96 lifecycleReserveBalance; uint256 dataSetId; }',
  'struct PriceListRates { uint256 storagePerTibPerMonth; uint256 datasetFeePerMonth; uint256 cdnEgressPerTib; uint256 cacheMissEgressPerTib; }',
  'struct PriceListFees { uint256 createDataSetFee; uint256 addPiecesBaseFee; uint256 addPiecesPerPieceFee; uint256 schedulePieceRemovalsFee; uint256 terminateFee; }',
  'struct PriceListLockups { uint256 lifecycleReserveTarget; uint256 replenishThreshold; uint256 defaultLockupPeriod; uint256 cdnLockupAmount; uint256 cacheMissLockupAmount; uint256 cdnLockupPeriod; }',
  'struct PriceList { address token; PriceListRates rates; PriceListFees fees; PriceListLockups lockups; }',
  'function getClientDataSets(address client, uint256 offset, uint256 limit) view returns (DataSetInfoView[] infos)',
  'function getClientDataSets(address client) view returns (DataSetInfoView[] infos)',
  'function getClientDataSetsLength(address payer) view returns (uint256)',
  'function getDataSet(uint256 dataSetId) view returns (DataSetInfoView info)',
  'function getAllDataSetMetadata(uint256 dataSetId) view returns (string[] keys, string[] values)',
  'function getDataSetMetadata(uint256 dataSetId, string key) view returns (bool exists, string value)',
  'function getAllPieceMetadata(uint256 dataSetId, uint256 pieceId) view returns (string[] keys, string[] values)',
  'function getDataSetStatus(uint256 dataSetId) view returns (uint8 status)',
  'function getPriceList() view returns (PriceList list)',
  'function getCurrentPricingRates() view returns (uint256 storagePrice, uint256 datasetFee)',
  'function getPDPConfig() view returns (uint64 maxProvingPeriod, uint256 challengeWindowSize, uint256 challengesPerProof, uint256 initChallengeWindowStart)',
  'function nextPDPChallengeWindowStart(uint256 setId) view returns (uint256)',
  'function provenPeriods(uint256 dataSetId, uint256 periodId) view returns (bool)',
  'function provingActivationEpoch(uint256 dataSetId) view returns (uint256)',
  'function provingDeadline(uint256 setId) view returns (uint256)',
  'function railToDataSet(uint256 railId) view returns (uint256)',
  'function clientNonces(address payer, uint256 nonce) view returns (uint256)',
  'function isProviderApproved(uint256 providerId) view returns (bool)',
  'function getApprovedProviders(uint256 offset, uint256 limit) view returns (uint256[] providerIds)',
  'function serviceCommissionBps() view returns (uint256)',
])

/** FilecoinWarmStorageService 1.3.1: what clients call, where it keeps the other contracts, and the events they read (Rails.sol's among them). */
export const fwssAbi = parseAbi([
  'struct Cid { bytes data; }',
  'function VERSION() view returns (string)',
  'function getProvingPeriodForEpoch(uint256 dataSetId, uint256 epoch) view returns (uint256)',
  'function terminateService(uint256 dataSetId)',
  'function terminateService(uint256 dataSetId, bytes extraData)',
  'function topUpLifecycleReserve(uint256 dataSetId, uint256 amount)',
  'function viewContractAddress() view returns (address)',
  'function pdpVerifierAddress() view returns (address)',
  'function paymentsContractAddress() view returns (address)',
  'function usdfcTokenAddress() view returns (address)',
  'function serviceProviderRegistry() view returns (address)',
  'function sessionKeyRegistry() view returns (address)',
  'event DataSetCreated(uint256 indexed dataSetId, uint256 indexed providerId, uint256 pdpRailId, uint256 cacheMissRailId, uint256 cdnRailId, address payer, address serviceProvider, address payee, string[] metadataKeys, string[] metadataValues)',
  'event PieceAdded(uint256 indexed dataSetId, uint256 indexed pieceId, Cid pieceCid, string[] keys, string[] values)',
  'event RailRateUpdated(uint256 indexed dataSetId, uint256 railId, uint256 newRate)',
  'event FaultRecord(uint256 indexed dataSetId, uint256 periodsFaulted, uint256 deadline)',
  'event ServiceTerminated(address indexed approver, uint256 indexed dataSetId, uint256 pdpRailId, uint256 cacheMissRailId, uint256 cdnRailId)',
  'event PDPPaymentTerminated(uint256 indexed dataSetId, uint256 endEpoch, uint256 pdpRailId)',
  'event DataSetAbandoned(uint256 indexed dataSetId, uint256 pdpRailId, uint256 cacheMissRailId, uint256 cdnRailId)',
  'event CDNServiceTerminated(address indexed caller, uint256 indexed dataSetId, uint256 cacheMissRailId, uint256 cdnRailId)',
  'event CDNPaymentRailsToppedUp(uint256 indexed dataSetId, uint256 cdnAmountAdded, uint256 totalCdnLockup, uint256 cacheMissAmountAdded, uint256 totalCacheMissLockup)',
])

/** PDPVerifier 3.4.0: the reads and the events clients read. */
export const pdpVerifierAbi = parseAbi([
  'struct Cid { bytes data; }',
  'function VERSION() view returns (string)',
  'function FIL_CLEANUP_DEPOSIT() pure returns (uint256)',
  'function dataSetLive(uint256 setId) view returns (bool)',
  'function pieceLive(uint256 setId, uint256 pieceId) view returns (bool)',
  'function getDataSetLastProvenEpoch(uint256 setId) view returns (uint256)',
  'function getNextChallengeEpoch(uint256 setId) view returns (uint256)',
  'function getNextPieceId(uint256 setId) view returns (uint256)',
  'function getScheduledRemovals(uint256 setId) view returns (uint256[])',
  'function getDataSetLeafCount(uint256 setId) view returns (uint256)',
  'function getActivePieceCount(uint256 setId) view returns (uint256 activeCount)',
  'function getDataSetListener(uint256 setId) view returns (address)',
  'function getDataSetStorageProvider(uint256 setId) view returns (address, address)',
  'function getChallengeRange(uint256 setId) view returns (uint256)',
  'function findPieceIdsByCid(uint256 setId, Cid pieceCid, uint256 startPieceId, uint256 limit) view returns (uint256[] pieceIds)',
  'event DataSetCreated(uint256 indexed setId, address indexed storageProvider)',
  'event DataSetDeleted(uint256 indexed setId, uint256 deletedLeafCount)',
  'event PiecesAdded(uint256 indexed setId, uint256[] pieceIds, Cid[] pieceCids)',
  'event PiecesRemoved(uint256 indexed setId, uint256[] pieceIds)',
  'event NextProvingPeriod(uint256 indexed setId, uint256 challengeEpoch, uint256 leafCount)',
])

/** Filecoin Pay 1.0.0: the payer's account and approval, and the deposits (plain, and with an ERC-2612 permit). */
export const filecoinPayAbi = parseAbi([
  'function accounts(address token, address owner) view returns (uint256 funds, uint256 lockupCurrent, uint256 lockupRate, uint256 lockupLastSettledAt)',
  'function getAccountInfoIfSettled(address token, address owner) view returns (uint256 fundedUntilEpoch, uint256 currentFunds, uint256 availableFunds, uint256 currentLockupRate)',
  'function setOperatorApproval(address token, address operator, bool approved, uint256 rateAllowance, uint256 lockupAllowance, uint256 maxLockupPeriod)',
  'function deposit(address token, address to, uint256 amount) payable',
  'function operatorApprovals(address token, address client, address operator) view returns (bool isApproved, uint256 rateAllowance, uint256 lockupAllowance, uint256 rateUsage, uint256 lockupUsage, uint256 maxLockupPeriod)',
  'function depositWithPermit(address token, address to, uint256 amount, uint256 deadline, uint8 v, bytes32 r, bytes32 s)',
  'function depositWithPermitAndApproveOperator(address token, address to, uint256 amount, uint256 deadline, uint8 v, bytes32 r, bytes32 s, address operator, uint256 rateAllowance, uint256 lockupAllowance, uint256 maxLockupPeriod)',
])

/**
 * The custom errors a client of the three can meet, to read a revert by name whichever contract
 * (or SDK call, with the SDK's older ABIs) it came from: FWSS 1.3.1's service_contracts/src/Errors.sol,
 * PDPVerifier 3.4.0's (src/PDPVerifier.sol), Filecoin Pay 1.0.0's (src/Errors.sol; `IERC20 token`
 * is an address on the wire) and USDFC's OpenZeppelin ERC-20 ones. Enum arguments are uint8.
 * Error(string) and Panic(uint256) are viem's own.
 */
export const onchainCloudErrorsAbi = parseAbi([
  // FilecoinWarmStorageService
  'error ZeroAddress(uint8 field)',
  'error InvalidSignature(address expected, address actual)',
  'error ExtraDataRequired()',
  'error DataSetNotRegistered(uint256 dataSetId)',
  'error ClientDataSetAlreadyRegistered(uint256 clientDataSetId)',
  'error ProvingPeriodNotInitialized(uint256 dataSetId)',
  'error ProvingNotStarted(uint256 dataSetId)',
  'error ProvingPeriodPassed(uint256 dataSetId, uint256 deadline, uint256 nowBlock)',
  'error DataSetPaymentAlreadyTerminated(uint256 dataSetId)',
  'error InvalidTopUpAmount(uint256 dataSetId)',
  'error InvalidDataSetId(uint256 dataSetId)',
  'error CallerNotPayerOrPayee(uint256 dataSetId, address expectedPayer, address expectedPayee, address caller)',
  'error CallerNotPayer(uint256 dataSetId, address expectedPayer, address caller)',
  'error CallerNotServiceProvider(uint256 dataSetId, address expectedServiceProvider, address caller)',
  'error DataSetPaymentBeyondEndEpoch(uint256 dataSetId, uint256 pdpEndEpoch, uint256 currentBlock)',
  'error NoPDPPaymentRail(uint256 dataSetId)',
  'error InvalidSignatureLength(uint256 expectedLength, uint256 actualLength)',
  'error UnsupportedSignatureV(uint8 v)',
  'error ProviderNotRegistered(address provider)',
  'error ProviderNotInApprovedList(uint256 providerId)',
  'error MetadataKeyAndValueLengthMismatch(uint256 keysLength, uint256 valuesLength)',
  'error TooManyMetadataKeys(uint256 maxAllowed, uint256 keysLength)',
  'error DuplicateMetadataKey(uint256 dataSetId, string key)',
  'error MetadataKeyExceedsMaxLength(uint256 index, uint256 maxAllowed, uint256 length)',
  'error MetadataValueExceedsMaxLength(uint256 index, uint256 maxAllowed, uint256 length)',
  'error MetadataArrayCountMismatch(uint256 metadataArrayCount, uint256 pieceCount)',
  'error ExtraDataTooLarge(uint256 actualSize, uint256 maxAllowedSize)',
  'error InsufficientCapabilitiesForProduct(uint8 productType)',
  'error InsufficientLockupFunds(address payer, uint256 required, uint256 available)',
  'error OperatorNotApproved(address payer, address operator)',
  'error InsufficientRateAllowance(address payer, address operator, uint256 rateAllowance, uint256 rateUsage, uint256 rateRequired)',
  'error InsufficientLockupAllowance(address payer, address operator, uint256 lockupAllowance, uint256 lockupUsage, uint256 lockupRequired)',
  'error InsufficientMaxLockupPeriod(address payer, address operator, uint256 maxLockupPeriod, uint256 requiredLockupPeriod)',
  'error ProviderIdMismatchAtIndex(uint256 index, uint256 providerId)',
  'error StorageProviderChangesNotSupported()',
  'error DataSetNotAbandoned(uint256 dataSetId, uint256 requiredEpoch, uint256 currentBlock)',
  'error PaymentRailsNotFinalized(uint256 dataSetId, uint256 pdpEndEpoch)',
  'error RailNotFullySettled(uint256 railId, uint256 settledUpTo, uint256 endEpoch)',
  // PDPVerifier
  'error IndexedError(uint256 idx, string msg)',
  'error CleanupDepositRequired()',
  'error DataSetNotFound()',
  'error DataSetNotLive()',
  'error DataSetAlreadyInCleanup()',
  'error EmptyRemovalBatch()',
  'error OnlyStorageProvider()',
  'error PendingPieceDeletions(uint256 count)',
  'error NoPiecesToProve()',
  'error InsufficientChallengeDelay(uint256 epochs, uint256 minDelay)',
  'error ExcessiveChallengeDelay(uint256 epochs, uint256 maxDelay)',
  // Filecoin Pay
  'error RailInactiveOrSettled(uint256 railId)',
  'error RailAlreadyTerminated(uint256 railId)',
  'error InsufficientUnlockedFunds(uint256 available, uint256 requested)',
  'error MustSendExactNativeAmount(uint256 required, uint256 sent)',
  'error LockupPeriodExceedsOperatorMaximum(address token, address operator, uint256 maxAllowedPeriod, uint256 requestedPeriod)',
  'error InsufficientFundsForOneTimePayment(address token, address from, uint256 required, uint256 actual)',
  'error OperatorRateAllowanceExceeded(uint256 allowed, uint256 attemptedUsage)',
  'error OperatorLockupAllowanceExceeded(uint256 allowed, uint256 attemptedUsage)',
  'error SignerMustBeMsgSender(address expected, address actual)',
  // USDFC (OpenZeppelin ERC-20 and ERC-2612)
  'error ERC20InsufficientBalance(address sender, uint256 balance, uint256 needed)',
  'error ERC20InsufficientAllowance(address spender, uint256 allowance, uint256 needed)',
  'error ERC2612ExpiredSignature(uint256 deadline)',
  'error ERC2612InvalidSigner(address signer, address owner)',
])
