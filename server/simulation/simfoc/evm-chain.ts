import { createBlock, type Block } from '@ethereumjs/block'
import { createCustomCommon, Hardfork, Mainnet } from '@ethereumjs/common'
import { createEVM, EVMError, type ExecResult, type PrecompileInput } from '@ethereumjs/evm'
import { MerkleStateManager } from '@ethereumjs/statemanager'
import { createTxFromRLP, type TypedTransaction } from '@ethereumjs/tx'
import {
  Account,
  bigIntToBytes,
  createZeroAddress,
  bytesToHex,
  createAddressFromString,
  hexToBytes,
  setLengthLeft,
  type PrefixedHexString,
} from '@ethereumjs/util'
import { createVM, runTx, type VM } from '@ethereumjs/vm'
import { sha256 } from '@noble/hashes/sha2.js'
import { keccak_256 } from '@noble/hashes/sha3.js'
import type { ChainJournal } from './chain-journal.ts'

type Hex = PrefixedHexString

/**
 * The base fee of every simulated block: FEVM's floor, 100 attoFIL per gas
 * (lotus chain/types/basefee: MinimumBaseFee), which it rarely leaves.
 */
export const BASE_FEE = 100n
/** A Filecoin block's gas limit (lotus build/buildconstants: BlockGasLimit = 10 000 000 000). */
export const BLOCK_GAS_LIMIT = 10_000_000_000n
/** FEVM's precompile for drand beacon randomness at an epoch (filecoin-project/fvm-solidity FVMRandom.sol). */
export const BEACON_RANDOMNESS_PRECOMPILE = '0xfe00000000000000000000000000000000000006'

export interface ChainLog {
  address: Hex
  topics: Hex[]
  data: Hex
  blockNumber: number
  blockHash: Hex
  transactionHash: Hex
  transactionIndex: number
  logIndex: number
}

export interface ChainReceipt {
  transactionHash: Hex
  transactionIndex: number
  blockNumber: number
  blockHash: Hex
  from: Hex
  to: Hex | null
  contractAddress: Hex | null
  status: 0 | 1
  gasUsed: bigint
  cumulativeGasUsed: bigint
  effectiveGasPrice: bigint
  type: number
  logs: ChainLog[]
  /** The revert data of a failed transaction (a geth-style node keeps it for debug_traceTransaction; we answer it in errors). */
  revertData: Hex
}

export interface ChainTransaction {
  hash: Hex
  raw: Hex
  tx: TypedTransaction
  from: Hex
  blockNumber: number
  transactionIndex: number
}

interface ChainBlock {
  number: number
  hash: Hex
  timestamp: number
  transactions: Hex[]
  gasUsed: bigint
}

/** A call that does not change state (eth_call, eth_estimateGas). */
export interface CallRequest {
  from?: Hex
  to?: Hex | null
  data?: Hex
  value?: bigint
  gas?: bigint
}

/** A transaction or call that the EVM reverted: its revert data, for the JSON-RPC error's `data`. */
export class ExecutionReverted extends Error {
  constructor(
    readonly data: Hex,
    reason: string,
  ) {
    super(reason ? `execution reverted: ${reason}` : 'execution reverted')
  }
}

/** A transaction the chain refuses before executing it (bad nonce, no funds, wrong chain). */
export class TransactionRejected extends Error {}

export interface EvmChainOptions {
  chainId: number
  /** The head epoch now: the block number every new transaction lands in. */
  headEpoch: () => number
  /** Unix seconds of an epoch's block, as FEVM's block.timestamp. */
  epochTimestamp: (epoch: number) => number
  /** Seeds the beacon randomness, so a simulation replays the same challenges. */
  seed: string
  /** Where every state change is kept; replayed at creation so the chain outlives the process. */
  journal?: ChainJournal
}

export interface EvmChain {
  readonly chainId: number
  headEpoch(): number
  sendRawTransaction(raw: Hex): Promise<Hex>
  call(request: CallRequest): Promise<Hex>
  estimateGas(request: CallRequest): Promise<bigint>
  balance(address: Hex): Promise<bigint>
  nonce(address: Hex): Promise<number>
  code(address: Hex): Promise<Hex>
  storageAt(address: Hex, slot: Hex): Promise<Hex>
  setBalance(address: Hex, wei: bigint): Promise<void>
  receipt(hash: Hex): ChainReceipt | undefined
  transaction(hash: Hex): ChainTransaction | undefined
  block(number: number): ChainBlock
  logs(filter: { fromBlock: number; toBlock: number; address?: Hex[]; topics?: (Hex | Hex[] | null)[] }): ChainLog[]
}

const hex = (n: bigint | number) => `0x${n.toString(16)}` as Hex

/** A block's hash: the simulation keeps no headers, so it names each epoch's block by its number. */
export function blockHash(chainId: number, epoch: number): Hex {
  return bytesToHex(keccak_256(new TextEncoder().encode(`simulated FOC block ${chainId}/${epoch}`)))
}

/** The revert reason of `Error(string)` data, else ''. */
function revertReason(data: Uint8Array): string {
  if (data.length < 68 || bytesToHex(data.subarray(0, 4)) !== '0x08c379a0') return ''
  const length = Number(BigInt(bytesToHex(data.subarray(36, 68))))
  return new TextDecoder().decode(data.subarray(68, 68 + length))
}

/**
 * The simulated Onchain Cloud's chain: an EVM (ethereumjs) whose blocks are
 * Filecoin epochs, as on FEVM: block.number is the epoch, a transaction lands
 * in the block of the head it was sent at, and every call is serialized so
 * that state is read and written in order.
 */
export async function createEvmChain(options: EvmChainOptions): Promise<EvmChain> {
  const { chainId, headEpoch, epochTimestamp } = options
  const common = createCustomCommon({ chainId, name: 'simulated-foc' }, Mainnet, { hardfork: Hardfork.Cancun })
  const stateManager = new MerkleStateManager()
  let executingEpoch = 0

  // fvm-solidity FVMRandom.getBeaconRandomness: 32 bytes for an epoch not after the current one.
  const beaconRandomness = (input: PrecompileInput): ExecResult => {
    const epoch = BigInt(bytesToHex(setLengthLeft(input.data.subarray(0, 32), 32)))
    if (input.data.length !== 32 || epoch > BigInt(executingEpoch)) {
      return { returnValue: new Uint8Array(), executionGasUsed: input.gasLimit, exceptionError: new EVMError({ code: 'revert' } as never) }
    }
    const word = setLengthLeft(bigIntToBytes(epoch), 32)
    return {
      returnValue: sha256(new Uint8Array([...new TextEncoder().encode(`simulated drand ${options.seed}`), ...word])),
      executionGasUsed: 2_000n,
    }
  }
  const evm = await createEVM({
    common,
    stateManager,
    customPrecompiles: [{ address: createAddressFromString(BEACON_RANDOMNESS_PRECOMPILE), function: beaconRandomness }],
  })
  const vm: VM = await createVM({ common, stateManager, evm })

  const blocks = new Map<number, ChainBlock>()
  const receipts = new Map<Hex, ChainReceipt>()
  const transactions = new Map<Hex, ChainTransaction>()
  let queue: Promise<unknown> = Promise.resolve()
  const serialized = <T>(work: () => Promise<T>): Promise<T> => {
    const next = queue.then(work, work)
    queue = next.catch(() => undefined)
    return next
  }

  const chainBlock = (number: number): ChainBlock => {
    const known = blocks.get(number)
    if (known) return known
    return { number, hash: blockHash(chainId, number), timestamp: epochTimestamp(number), transactions: [], gasUsed: 0n }
  }
  const ethBlock = (number: number): Block =>
    createBlock(
      {
        header: {
          number: BigInt(number),
          timestamp: BigInt(epochTimestamp(number)),
          gasLimit: BLOCK_GAS_LIMIT,
          baseFeePerGas: BASE_FEE,
          coinbase: createZeroAddress(),
        },
      },
      { common, skipConsensusFormatValidation: true },
    )

  async function execute(tx: TypedTransaction, raw: Hex, epoch: number): Promise<Hex> {
    const from = tx.getSenderAddress()
    const account = (await stateManager.getAccount(from)) ?? new Account()
    if (tx.nonce < account.nonce) throw new TransactionRejected(`nonce too low: next nonce ${account.nonce}, tx nonce ${tx.nonce}`)
    if (tx.nonce > account.nonce) throw new TransactionRejected(`nonce too high: next nonce ${account.nonce}, tx nonce ${tx.nonce}`)
    executingEpoch = epoch
    let result
    try {
      result = await runTx(vm, { tx, block: ethBlock(epoch), skipHardForkValidation: true })
    } catch (error) {
      throw new TransactionRejected((error as Error).message.replace(/ -> .*$/s, ''))
    }
    const block = blocks.get(epoch) ?? chainBlock(epoch)
    blocks.set(epoch, block)
    const hash = bytesToHex(tx.hash())
    const index = block.transactions.length
    block.transactions.push(hash)
    block.gasUsed += result.totalGasSpent
    const logIndexBase = [...block.transactions.slice(0, -1)].reduce((n, h) => n + (receipts.get(h)?.logs.length ?? 0), 0)
    const logs: ChainLog[] = (result.execResult.logs ?? []).map(([address, topics, data], i) => ({
      address: bytesToHex(address),
      topics: topics.map((t) => bytesToHex(t)),
      data: bytesToHex(data),
      blockNumber: epoch,
      blockHash: block.hash,
      transactionHash: hash,
      transactionIndex: index,
      logIndex: logIndexBase + i,
    }))
    const failed = result.execResult.exceptionError !== undefined
    receipts.set(hash, {
      transactionHash: hash,
      transactionIndex: index,
      blockNumber: epoch,
      blockHash: block.hash,
      from: from.toString(),
      to: tx.to?.toString() ?? null,
      contractAddress: result.createdAddress?.toString() ?? null,
      status: failed ? 0 : 1,
      gasUsed: result.totalGasSpent,
      cumulativeGasUsed: block.gasUsed,
      effectiveGasPrice: tx.getEffectivePriorityFee(BASE_FEE) + BASE_FEE,
      type: tx.type,
      logs: failed ? [] : logs,
      revertData: bytesToHex(result.execResult.returnValue),
    })
    transactions.set(hash, { hash, raw, tx, from: from.toString(), blockNumber: epoch, transactionIndex: index })
    return hash
  }

  /**
   * Forgets what the last call warmed (EIP-2929 access lists) and the storage
   * values it started from (EIP-2200), as runTx does around a transaction;
   * runCall leaves both, and a call measured on warm storage under-estimates gas.
   */
  const freshAccess = () => {
    vm.evm.journal.cleanJournal()
    stateManager.originalStorageCache.clear()
  }

  async function simulate(request: CallRequest) {
    const epoch = headEpoch()
    executingEpoch = epoch
    freshAccess()
    await stateManager.checkpoint()
    try {
      const caller = createAddressFromString(request.from ?? '0x0000000000000000000000000000000000000000')
      const result = await vm.evm.runCall({
        caller,
        origin: caller,
        to: request.to ? createAddressFromString(request.to) : undefined,
        data: request.data ? hexToBytes(request.data) : new Uint8Array(),
        value: request.value ?? 0n,
        gasLimit: request.gas ?? BLOCK_GAS_LIMIT,
        block: ethBlock(epoch),
        skipBalance: true,
      })
      const { exceptionError, returnValue, executionGasUsed } = result.execResult
      if (exceptionError)
        throw new ExecutionReverted(
          bytesToHex(returnValue),
          revertReason(returnValue) || (exceptionError.error === 'revert' ? '' : exceptionError.error),
        )
      return { returnValue: bytesToHex(returnValue), gasUsed: executionGasUsed }
    } finally {
      await stateManager.revert()
      freshAccess()
    }
  }

  /** Intrinsic gas of a transaction (EIP-2028 calldata prices, EIP-3860 initcode words), which runCall leaves out. */
  function intrinsicGas(request: CallRequest): bigint {
    const data = request.data ? hexToBytes(request.data) : new Uint8Array()
    let gas = 21_000n
    for (const byte of data) gas += byte === 0 ? 4n : 16n
    if (!request.to) gas += 32_000n + 2n * BigInt(Math.ceil(data.length / 32))
    return gas
  }

  const decode = (raw: Hex): TypedTransaction => {
    let tx: TypedTransaction
    try {
      tx = createTxFromRLP(hexToBytes(raw), { common })
    } catch (error) {
      throw new TransactionRejected(`invalid transaction: ${(error as Error).message.replace(/ -> .*$/s, '')}`)
    }
    if (!tx.isSigned() || !tx.verifySignature()) throw new TransactionRejected('invalid transaction: bad signature')
    return tx
  }
  const credit = async (address: Hex, wei: bigint) => {
    const at = createAddressFromString(address)
    const account = (await stateManager.getAccount(at)) ?? new Account()
    account.balance = wei
    await stateManager.putAccount(at, account)
  }

  // The state so far, from the journal: each change again, at its own epoch.
  for (const entry of options.journal?.entries() ?? []) {
    if (entry.kind === 'balance') await credit(entry.address, entry.wei)
    else await execute(decode(entry.raw), entry.raw, entry.epoch)
  }

  return {
    chainId,
    headEpoch,
    sendRawTransaction: (raw) =>
      serialized(async () => {
        const tx = decode(raw)
        if (transactions.has(bytesToHex(tx.hash()))) throw new TransactionRejected('already known')
        const epoch = headEpoch()
        const hash = await execute(tx, raw, epoch)
        options.journal?.append({ epoch, kind: 'tx', raw })
        return hash
      }),
    call: (request) => serialized(async () => (await simulate(request)).returnValue),
    // The gas a call used plus its intrinsic gas, with room for the 63/64 rule of nested calls
    // (Lotus's eth_estimateGas likewise adds an overestimate to what it measured).
    estimateGas: (request) =>
      serialized(async () => {
        const { gasUsed } = await simulate(request)
        const estimate = ((gasUsed + intrinsicGas(request)) * 13n) / 10n + 10_000n
        return estimate > BLOCK_GAS_LIMIT ? BLOCK_GAS_LIMIT : estimate
      }),
    balance: (address) => serialized(async () => (await stateManager.getAccount(createAddressFromString(address)))?.balance ?? 0n),
    nonce: (address) => serialized(async () => Number((await stateManager.getAccount(createAddressFromString(address)))?.nonce ?? 0n)),
    code: (address) => serialized(async () => bytesToHex(await stateManager.getCode(createAddressFromString(address)))),
    storageAt: (address, slot) =>
      serialized(async () =>
        bytesToHex(setLengthLeft(await stateManager.getStorage(createAddressFromString(address), setLengthLeft(hexToBytes(slot), 32)), 32)),
      ),
    setBalance: (address, wei) =>
      serialized(async () => {
        await credit(address, wei)
        options.journal?.append({ epoch: headEpoch(), kind: 'balance', address, wei })
      }),
    receipt: (hash) => receipts.get(hash.toLowerCase() as Hex),
    transaction: (hash) => transactions.get(hash.toLowerCase() as Hex),
    block: chainBlock,
    logs({ fromBlock, toBlock, address, topics }) {
      const wanted = address?.map((a) => a.toLowerCase())
      const out: ChainLog[] = []
      for (const number of [...blocks.keys()].filter((n) => n >= fromBlock && n <= toBlock).sort((a, b) => a - b)) {
        for (const hash of blocks.get(number)!.transactions) {
          for (const log of receipts.get(hash)?.logs ?? []) {
            if (wanted && !wanted.includes(log.address.toLowerCase())) continue
            if (topics && !topics.every((t, i) => t === null || (Array.isArray(t) ? t.includes(log.topics[i]) : t === log.topics[i])))
              continue
            out.push(log)
          }
        }
      }
      return out
    },
  }
}

export { hex }
