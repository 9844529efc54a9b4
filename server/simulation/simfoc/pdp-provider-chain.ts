import {
  BaseError,
  createPublicClient,
  createWalletClient,
  decodeEventLog,
  defineChain,
  encodeFunctionData,
  http,
  parseAbi,
  stringToHex,
  TransactionReceiptNotFoundError,
  zeroAddress,
  type Address,
  type Hex,
  type PublicClient,
} from 'viem'
import { privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts'

/**
 * What a simulated Curio does on chain, as its tasks do it (Curio tasks/pdpv0
 * and pdp/handlers_*.go): the few PDPVerifier and FilecoinWarmStorageService
 * calls it makes, through viem against the simulated EVM node, signed with the
 * provider's own key (Curio's eth_keys role 'pdp').
 *
 * The ABI fragments below are written from the published ABIs (Curio
 * pdp/contract/PDPVerifier.abi, which is PDPVerifier 3.4.0's, IPDPProvingSchedule.abi,
 * ServiceProviderRegistry.abi) — only what the provider calls.
 */

export const pdpVerifierAbi = parseAbi([
  'function createDataSet(address listenerAddr, bytes extraData) payable returns (uint256)',
  'function addPieces(uint256 setId, address listenerAddr, (bytes data)[] pieceData, bytes extraData) payable returns (uint256)',
  'function nextProvingPeriod(uint256 setId, uint256 challengeEpoch, bytes extraData)',
  'function provePossession(uint256 setId, (bytes32 leaf, bytes32[] proof)[] proofs) payable',
  'function schedulePieceDeletions(uint256 setId, uint256[] pieceIds, bytes extraData)',
  'function FIL_CLEANUP_DEPOSIT() pure returns (uint256)',
  'function getDataSetListener(uint256 setId) view returns (address)',
  'function getDataSetLeafCount(uint256 setId) view returns (uint256)',
  'function getNextChallengeEpoch(uint256 setId) view returns (uint256)',
  'function getChallengeRange(uint256 setId) view returns (uint256)',
  'function getRandomness(uint256 epoch) view returns (uint256)',
  'function findPieceIds(uint256 setId, uint256[] leafIndexs) view returns ((uint256 pieceId, uint256 offset)[])',
  'function calculateProofFee(uint256 setId) view returns (uint256)',
  'function pieceLive(uint256 setId, uint256 pieceId) view returns (bool)',
  'event DataSetCreated(uint256 indexed setId, address indexed storageProvider)',
  'event PiecesAdded(uint256 indexed setId, uint256[] pieceIds, (bytes data)[] pieceCids)',
])

/** Curio pdp/contract/ContractWithView.abi and IPDPProvingSchedule.abi. */
export const provingScheduleAbi = parseAbi([
  'function viewContractAddress() view returns (address)',
  'function getPDPConfig() view returns (uint64 maxProvingPeriod, uint256 challengeWindow, uint256 challengesPerProof, uint256 initChallengeWindowStart)',
  'function nextPDPChallengeWindowStart(uint256 setId) view returns (uint256)',
])

/** Curio pdp/contract/ServiceProviderRegistry.abi (registration only). */
export const serviceProviderRegistryAbi = parseAbi([
  'function REGISTRATION_FEE() view returns (uint256)',
  'function registerProvider(address payee, string name, string description, uint8 productType, string[] capabilityKeys, bytes[] capabilityValues) payable returns (uint256 providerId)',
  'function getProviderIdByAddress(address providerAddress) view returns (uint256)',
  'function updateProduct(uint8 productType, string[] capabilityKeys, bytes[] capabilityValues)',
  'event ProviderRegistered(uint256 indexed providerId, address indexed serviceProvider, address indexed payee)',
])

export interface ProvingConfig {
  maxProvingPeriod: bigint
  challengeWindow: bigint
  challengesPerProof: bigint
  initChallengeWindowStart: bigint
}

export interface ReceiptSummary {
  success: boolean
  blockNumber: number
  /** From a DataSetCreated log of the PDPVerifier. */
  dataSetId?: bigint
  /** From a PiecesAdded log of the PDPVerifier. */
  pieceIds?: bigint[]
}

export interface PossessionProof {
  leaf: Hex
  proof: Hex[]
}

/**
 * A failed send: the chain refused the message before it was sent (gas
 * estimation reverted, nonce, funds). Curio answers such errors with their
 * chain text only (pdp/handlers.go httpServerError with an api.ChainError).
 */
export class ChainSendError extends Error {
  override name = 'ChainSendError'
}

/** The provider's chain: its address, the head, its sends, receipts and the reads its tasks make. */
export interface PdpChain {
  readonly address: Address
  headEpoch(): Promise<number>
  createDataSet(listener: Address, extraData: Hex, value: bigint): Promise<Hex>
  addPieces(setId: bigint, listener: Address, pieces: Hex[], extraData: Hex, value: bigint): Promise<Hex>
  nextProvingPeriod(setId: bigint, challengeEpoch: bigint, extraData: Hex): Promise<Hex>
  provePossession(setId: bigint, proofs: PossessionProof[], value: bigint): Promise<Hex>
  schedulePieceDeletions(setId: bigint, pieceIds: bigint[], extraData: Hex): Promise<Hex>
  /** eth_call of addPieces from the provider, as Curio validates a pull's extraData (pdp/handlers_pull.go); throws with the revert. */
  validateAddPieces(setId: bigint, listener: Address, pieces: Hex[], extraData: Hex, value: bigint): Promise<void>
  receipt(hash: Hex): Promise<ReceiptSummary | null>
  /** PDPVerifier.FIL_CLEANUP_DEPOSIT(): the FIL a new data set holds (3.4.0). */
  cleanupDeposit(): Promise<bigint>
  dataSetListener(setId: bigint): Promise<Address>
  dataSetLeafCount(setId: bigint): Promise<bigint>
  provingConfig(listener: Address): Promise<ProvingConfig>
  nextChallengeWindowStart(listener: Address, setId: bigint): Promise<bigint>
  nextChallengeEpoch(setId: bigint): Promise<bigint>
  challengeRange(setId: bigint): Promise<bigint>
  randomness(epoch: bigint): Promise<bigint>
  findPieceIds(setId: bigint, leafIndexes: bigint[]): Promise<{ pieceId: bigint; offset: bigint }[]>
  proofFee(setId: bigint): Promise<bigint>
  pieceLive(setId: bigint, pieceId: bigint): Promise<boolean>
}

export interface ViemPdpChainOptions {
  rpcUrl: string
  /** The provider's key (secp256k1). */
  privateKey: Hex
  pdpVerifier: Address
  /** Gas limit = estimate × this (Curio's SendWithGasOverestimate; the state can grow between estimate and inclusion). */
  gasOverestimate?: number
}

/** The text of a viem error as the node gave it (its `details`), for Curio's "chain: …" answers. */
export function chainErrorText(err: unknown): string {
  if (err instanceof BaseError) {
    const inner = err.walk((e) => typeof (e as BaseError).details === 'string' && (e as BaseError).details.length > 0) as BaseError | null
    return inner?.details || err.shortMessage || err.message
  }
  return err instanceof Error ? err.message : String(err)
}

interface EthSenderOptions {
  publicClient: PublicClient
  /** The provider's key, which signs every send. */
  account: PrivateKeyAccount
  /** The one contract the provider sends to (the PDPVerifier). */
  to: Address
  /** Gas limit = estimate × this. */
  overestimate: number
}

/** The provider's sends, as Curio's SenderETH makes them; one the node refuses is a ChainSendError with the node's text. */
function createEthSender(o: EthSenderOptions): (data: Hex, value: bigint) => Promise<Hex> {
  const { publicClient, account } = o
  let chainId: number | null = null

  // Curio's SenderETH assigns nonces itself, one send at a time; so does this queue.
  let queue: Promise<unknown> = Promise.resolve()
  let nextNonce: number | null = null
  return function send(data, value) {
    const run = async (): Promise<Hex> => {
      let gas: bigint
      try {
        gas = await publicClient.estimateGas({ account: account.address, to: o.to, data, value })
      } catch (err) {
        throw new ChainSendError(chainErrorText(err))
      }
      chainId ??= await publicClient.getChainId()
      if (nextNonce === null) nextNonce = await publicClient.getTransactionCount({ address: account.address, blockTag: 'pending' })
      try {
        // Curio's SenderETH: gas from the estimate, fee cap = 2 × base fee + tip.
        const block = await publicClient.getBlock({ blockTag: 'latest' })
        const tip = await publicClient.estimateMaxPriorityFeePerGas().catch(() => 0n)
        const baseFee = block.baseFeePerGas ?? 0n
        const signed = await account.signTransaction({
          type: 'eip1559',
          chainId,
          nonce: nextNonce,
          to: o.to,
          data,
          value,
          gas: BigInt(Math.ceil(Number(gas) * o.overestimate)),
          maxFeePerGas: baseFee * 2n + tip,
          maxPriorityFeePerGas: tip,
        })
        const hash = await publicClient.sendRawTransaction({ serializedTransaction: signed })
        nextNonce++
        return hash
      } catch (err) {
        nextNonce = null
        throw new ChainSendError(chainErrorText(err))
      }
    }
    const result = queue.then(run, run)
    queue = result.catch(() => {})
    return result
  }
}

export function createViemPdpChain(o: ViemPdpChainOptions): PdpChain {
  const account = privateKeyToAccount(o.privateKey)
  const transport = http(o.rpcUrl, { retryCount: 0 })
  const publicClient: PublicClient = createPublicClient({ transport })
  const send = createEthSender({ publicClient, account, to: o.pdpVerifier, overestimate: o.gasOverestimate ?? 1.25 })

  const read = <T>(
    functionName: string,
    args: readonly unknown[] = [],
    address: Address = o.pdpVerifier,
    abi: typeof pdpVerifierAbi | typeof provingScheduleAbi = pdpVerifierAbi,
  ): Promise<T> => publicClient.readContract({ address, abi, functionName, args } as never) as Promise<T>

  const calldata = (functionName: string, args: readonly unknown[]): Hex =>
    encodeFunctionData({ abi: pdpVerifierAbi, functionName, args } as never)
  const pieceData = (pieces: Hex[]) => pieces.map((data) => ({ data }))

  // Curio resolves the listener's view contract for the proving schedule (pdp/contract/utils.go GetProvingScheduleFromListener).
  const views = new Map<Address, Address>()
  async function scheduleAddress(listener: Address): Promise<Address> {
    const known = views.get(listener)
    if (known) return known
    let view = listener
    try {
      const found = await read<Address>('viewContractAddress', [], listener, provingScheduleAbi)
      if (found !== zeroAddress) view = found
    } catch {
      // The listener itself implements IPDPProvingSchedule.
    }
    views.set(listener, view)
    return view
  }

  return {
    address: account.address,
    headEpoch: async () => Number(await publicClient.getBlockNumber({ cacheTime: 0 })),
    createDataSet: (listener, extraData, value) => send(calldata('createDataSet', [listener, extraData]), value),
    addPieces: (setId, listener, pieces, extraData, value) =>
      send(calldata('addPieces', [setId, listener, pieceData(pieces), extraData]), value),
    nextProvingPeriod: (setId, challengeEpoch, extraData) => send(calldata('nextProvingPeriod', [setId, challengeEpoch, extraData]), 0n),
    provePossession: (setId, proofs, value) => send(calldata('provePossession', [setId, proofs]), value),
    schedulePieceDeletions: (setId, pieceIds, extraData) => send(calldata('schedulePieceDeletions', [setId, pieceIds, extraData]), 0n),
    async validateAddPieces(setId, listener, pieces, extraData, value) {
      try {
        await publicClient.call({
          account: account.address,
          to: o.pdpVerifier,
          data: calldata('addPieces', [setId, listener, pieceData(pieces), extraData]),
          value,
        })
      } catch (err) {
        throw new ChainSendError(chainErrorText(err))
      }
    },
    async receipt(hash) {
      let receipt
      try {
        receipt = await publicClient.getTransactionReceipt({ hash })
      } catch (err) {
        if (err instanceof TransactionReceiptNotFoundError) return null
        throw err
      }
      const summary: ReceiptSummary = { success: receipt.status === 'success', blockNumber: Number(receipt.blockNumber) }
      for (const log of receipt.logs) {
        if (log.address.toLowerCase() !== o.pdpVerifier.toLowerCase()) continue
        try {
          const event = decodeEventLog({ abi: pdpVerifierAbi, data: log.data, topics: log.topics })
          if (event.eventName === 'DataSetCreated') summary.dataSetId = event.args.setId
          if (event.eventName === 'PiecesAdded' && summary.pieceIds === undefined) summary.pieceIds = [...event.args.pieceIds]
        } catch {
          // Another event of the verifier.
        }
      }
      return summary
    },
    cleanupDeposit: () => read<bigint>('FIL_CLEANUP_DEPOSIT'),
    dataSetListener: (setId) => read<Address>('getDataSetListener', [setId]),
    dataSetLeafCount: (setId) => read<bigint>('getDataSetLeafCount', [setId]),
    async provingConfig(listener) {
      const [maxProvingPeriod, challengeWindow, challengesPerProof, initChallengeWindowStart] = await read<
        [bigint, bigint, bigint, bigint]
      >('getPDPConfig', [], await scheduleAddress(listener), provingScheduleAbi)
      return { maxProvingPeriod, challengeWindow, challengesPerProof, initChallengeWindowStart }
    },
    nextChallengeWindowStart: async (listener, setId) =>
      read<bigint>('nextPDPChallengeWindowStart', [setId], await scheduleAddress(listener), provingScheduleAbi),
    nextChallengeEpoch: (setId) => read<bigint>('getNextChallengeEpoch', [setId]),
    challengeRange: (setId) => read<bigint>('getChallengeRange', [setId]),
    randomness: (epoch) => read<bigint>('getRandomness', [epoch]),
    findPieceIds: async (setId, leafIndexes) => [
      ...(await read<readonly { pieceId: bigint; offset: bigint }[]>('findPieceIds', [setId, leafIndexes])),
    ],
    proofFee: (setId) => read<bigint>('calculateProofFee', [setId]),
    pieceLive: (setId, pieceId) => read<boolean>('pieceLive', [setId, pieceId]),
  }
}

/** The PDP product's offering, as Curio registers it (pdp/contract/utils.go PDPOfferingData). */
export interface PdpOffering {
  serviceURL: string
  minPieceSizeInBytes: bigint
  maxPieceSizeInBytes: bigint
  storagePricePerTibPerDay: bigint
  minProvingPeriodInEpochs: bigint
  location: string
  paymentTokenAddress: Address
  ipniPiece?: boolean
  ipniIpfs?: boolean
  /** Raw peer ID bytes, required when ipniPiece or ipniIpfs is set. */
  ipniPeerId?: Hex
  capacityTiB?: bigint
}

/** Big-endian minimal bytes, 0x00 for zero (Curio pdp/contract/utils.go encodeBigIntCapability). */
function bigIntCapability(n: bigint): Hex {
  if (n === 0n) return '0x00'
  const hex = n.toString(16)
  return `0x${hex.length % 2 === 0 ? hex : `0${hex}`}`
}

/**
 * Capability keys and values of a PDP offering in the order Curio writes them
 * (pdp/contract/utils.go OfferingToCapabilities): the seven keys the registry
 * requires, then the optional IPNI keys and capacity, then extra ones.
 */
export function offeringCapabilities(offering: PdpOffering, extra: Record<string, string> = {}): { keys: string[]; values: Hex[] } {
  const keys = [
    'serviceURL',
    'minPieceSizeInBytes',
    'maxPieceSizeInBytes',
    'storagePricePerTibPerDay',
    'minProvingPeriodInEpochs',
    'location',
    'paymentTokenAddress',
  ]
  const values: Hex[] = [
    stringToHex(offering.serviceURL),
    bigIntCapability(offering.minPieceSizeInBytes),
    bigIntCapability(offering.maxPieceSizeInBytes),
    bigIntCapability(offering.storagePricePerTibPerDay),
    bigIntCapability(offering.minProvingPeriodInEpochs),
    stringToHex(offering.location),
    offering.paymentTokenAddress.toLowerCase() as Hex,
  ]
  const push = (key: string, value: Hex) => {
    keys.push(key)
    values.push(value)
  }
  if (offering.ipniPiece) push('ipniPiece', '0x01')
  if (offering.ipniIpfs) push('ipniIpfs', '0x01')
  if (offering.ipniPiece || offering.ipniIpfs) {
    if (!offering.ipniPeerId) throw new Error('IpniPeerID is required if either IpniIpfs or IpniPiece is true')
    // Curio writes both the key the registry suggests and the older spelling.
    keys.push('ipniPeerId', 'IPNIPeerID')
    values.push(offering.ipniPeerId, offering.ipniPeerId)
  }
  if (offering.capacityTiB !== undefined) push('capacityTiB', bigIntCapability(offering.capacityTiB))
  for (const [key, value] of Object.entries(extra)) {
    keys.push(key)
    values.push(/^0x([0-9a-fA-F]{2})+$/.test(value) && value.length > 3 ? (value as Hex) : stringToHex(value))
  }
  return { keys, values }
}

export interface RegisterPdpProviderOptions {
  rpcUrl: string
  /** The provider's key: it becomes the service provider address. */
  privateKey: Hex
  serviceProviderRegistry: Address
  name: string
  description: string
  offering: PdpOffering
  /** Who is paid; the provider's own address by default. */
  payee?: Address
  capabilities?: Record<string, string>
  /** An address already registered replaces its PDP product's capabilities with `offering` (its service URL moved). */
  updateIfRegistered?: boolean
  /** How long to wait for the registration to be mined (default 2 minutes). */
  timeoutMs?: number
  pollingIntervalMs?: number
}

/**
 * Registers the provider with the PDP product (product type 0) in the
 * ServiceProviderRegistry, paying the registration fee the registry asks,
 * and waits for the receipt (Curio pdp/contract/utils.go FSRegister). An
 * address already registered is not registered again. Returns the provider id.
 */
export async function registerPdpProvider(o: RegisterPdpProviderOptions): Promise<bigint> {
  if (o.name === '' || o.name.length > 128) throw new Error('name is required, at most 128 characters')
  if (o.description.length > 128) throw new Error('description is too long, max 128 characters allowed')
  const account = privateKeyToAccount(o.privateKey)
  const transport = http(o.rpcUrl, { retryCount: 0 })
  const publicClient = createPublicClient({ transport })
  const existing = await publicClient.readContract({
    address: o.serviceProviderRegistry,
    abi: serviceProviderRegistryAbi,
    functionName: 'getProviderIdByAddress',
    args: [account.address],
  })
  if (existing !== 0n && !o.updateIfRegistered) return existing
  const id = await publicClient.getChainId()
  const wallet = createWalletClient({
    account,
    transport,
    chain: defineChain({
      id,
      name: `simfoc-${id}`,
      nativeCurrency: { name: 'Filecoin', symbol: 'FIL', decimals: 18 },
      rpcUrls: { default: { http: [o.rpcUrl] } },
    }),
  })
  const { keys, values } = offeringCapabilities(o.offering, o.capabilities)
  const mined = async (hash: Hex, what: string) => {
    const receipt = await publicClient.waitForTransactionReceipt({
      hash,
      timeout: o.timeoutMs ?? 120_000,
      pollingInterval: o.pollingIntervalMs ?? 250,
    })
    if (receipt.status !== 'success') throw new Error(`${what} reverted (${hash})`)
    return receipt
  }
  if (existing !== 0n) {
    // The registry's updateProduct, as Curio's binding (pdp/contract/ServiceProviderRegistry.go UpdateProduct) sends it.
    const hash = await wallet.writeContract({
      address: o.serviceProviderRegistry,
      abi: serviceProviderRegistryAbi,
      functionName: 'updateProduct',
      args: [0, keys, values],
    })
    await mined(hash, 'updateProduct')
    return existing
  }
  const fee = await publicClient.readContract({
    address: o.serviceProviderRegistry,
    abi: serviceProviderRegistryAbi,
    functionName: 'REGISTRATION_FEE',
  })
  const hash = await wallet.writeContract({
    address: o.serviceProviderRegistry,
    abi: serviceProviderRegistryAbi,
    functionName: 'registerProvider',
    args: [o.payee ?? account.address, o.name, o.description, 0, keys, values],
    value: fee,
  })
  const receipt = await mined(hash, 'registerProvider')
  for (const log of receipt.logs) {
    try {
      const event = decodeEventLog({ abi: serviceProviderRegistryAbi, data: log.data, topics: log.topics })
      if (event.eventName === 'ProviderRegistered') return event.args.providerId
    } catch {
      // Not the registry's event.
    }
  }
  throw new Error(`registerProvider mined without a ProviderRegistered event (${hash})`)
}
