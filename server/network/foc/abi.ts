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

/** FilecoinWarmStorageService 1.3.1: what clients call and the events they read (Rails.sol's among them), and its errors (src/Errors.sol). */
export const fwssAbi = parseAbi([
  'struct Cid { bytes data; }',
  'function VERSION() view returns (string)',
  'function getProvingPeriodForEpoch(uint256 dataSetId, uint256 epoch) view returns (uint256)',
  'function terminateService(uint256 dataSetId)',
  'function terminateService(uint256 dataSetId, bytes extraData)',
  'function topUpLifecycleReserve(uint256 dataSetId, uint256 amount)',
  'function viewContractAddress() view returns (address)',
  'event DataSetCreated(uint256 indexed dataSetId, uint256 indexed providerId, uint256 pdpRailId, uint256 cacheMissRailId, uint256 cdnRailId, address payer, address serviceProvider, address payee, string[] metadataKeys, string[] metadataValues)',
  'event PieceAdded(uint256 indexed dataSetId, uint256 indexed pieceId, Cid pieceCid, string[] keys, string[] values)',
  'event RailRateUpdated(uint256 indexed dataSetId, uint256 railId, uint256 newRate)',
  'event FaultRecord(uint256 indexed dataSetId, uint256 periodsFaulted, uint256 deadline)',
  'event ServiceTerminated(address indexed approver, uint256 indexed dataSetId, uint256 pdpRailId, uint256 cacheMissRailId, uint256 cdnRailId)',
  'event PDPPaymentTerminated(uint256 indexed dataSetId, uint256 endEpoch, uint256 pdpRailId)',
  'event DataSetAbandoned(uint256 indexed dataSetId, uint256 pdpRailId, uint256 cacheMissRailId, uint256 cdnRailId)',
  'event CDNServiceTerminated(address indexed caller, uint256 indexed dataSetId, uint256 cacheMissRailId, uint256 cdnRailId)',
  'event CDNPaymentRailsToppedUp(uint256 indexed dataSetId, uint256 cdnAmountAdded, uint256 totalCdnLockup, uint256 cacheMissAmountAdded, uint256 totalCacheMissLockup)',
  'error InsufficientLockupFunds(address payer, uint256 required, uint256 available)',
  'error OperatorNotApproved(address payer, address operator)',
  'error InsufficientRateAllowance(address payer, address operator, uint256 rateAllowance, uint256 rateUsage, uint256 rateRequired)',
  'error InsufficientLockupAllowance(address payer, address operator, uint256 lockupAllowance, uint256 lockupUsage, uint256 lockupRequired)',
  'error InsufficientMaxLockupPeriod(address payer, address operator, uint256 maxLockupPeriod, uint256 requiredLockupPeriod)',
  'error InvalidSignature(address expected, address actual)',
  'error ClientDataSetAlreadyRegistered(uint256 clientDataSetId)',
  'error DataSetPaymentAlreadyTerminated(uint256 dataSetId)',
  'error DataSetPaymentBeyondEndEpoch(uint256 dataSetId, uint256 pdpEndEpoch, uint256 currentBlock)',
  'error CallerNotPayerOrPayee(uint256 dataSetId, address expectedPayer, address expectedPayee, address caller)',
  'error CallerNotPayer(uint256 dataSetId, address expectedPayer, address caller)',
  'error CallerNotServiceProvider(uint256 dataSetId, address expectedServiceProvider, address caller)',
  'error DataSetNotAbandoned(uint256 dataSetId, uint256 requiredEpoch, uint256 currentBlock)',
  'error InvalidDataSetId(uint256 dataSetId)',
  'error ProviderNotRegistered(address provider)',
  'error MetadataValueExceedsMaxLength(uint256 index, uint256 maxAllowed, uint256 length)',
  'error TooManyMetadataKeys(uint256 maxAllowed, uint256 keysLength)',
])

/** PDPVerifier 3.4.0: the reads, the events clients read, and its errors (custom ones for liveness now). */
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
  'error CleanupDepositRequired()',
  'error DataSetNotFound()',
  'error DataSetNotLive()',
  'error DataSetAlreadyInCleanup()',
  'error InsufficientChallengeDelay(uint256 epochs, uint256 minDelay)',
  'error ExcessiveChallengeDelay(uint256 epochs, uint256 maxDelay)',
])

/** Filecoin Pay 1.0.0: the payer's account and approval, and the deposits with an ERC-2612 permit. */
export const filecoinPayAbi = parseAbi([
  'function accounts(address token, address owner) view returns (uint256 funds, uint256 lockupCurrent, uint256 lockupRate, uint256 lockupLastSettledAt)',
  'function operatorApprovals(address token, address client, address operator) view returns (bool isApproved, uint256 rateAllowance, uint256 lockupAllowance, uint256 rateUsage, uint256 lockupUsage, uint256 maxLockupPeriod)',
  'function depositWithPermit(address token, address to, uint256 amount, uint256 deadline, uint8 v, bytes32 r, bytes32 s)',
  'function depositWithPermitAndApproveOperator(address token, address to, uint256 amount, uint256 deadline, uint8 v, bytes32 r, bytes32 s, address operator, uint256 rateAllowance, uint256 lockupAllowance, uint256 maxLockupPeriod)',
  'error InsufficientUnlockedFunds(uint256 available, uint256 requested)',
])
