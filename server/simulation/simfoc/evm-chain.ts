import type { TypedTransaction } from '@ethereumjs/tx'
import { bytesToHex, type PrefixedHexString } from '@ethereumjs/util'
import type { ChainJournal } from './chain-journal.ts'
import {
  createChainRecords,
  type ChainBlock,
  type ChainLog,
  type ChainReceipt,
  type ChainTransaction,
  type LogFilter,
} from './evm-chain-records.ts'
import { BLOCK_GAS_LIMIT, createChainVm, intrinsicGas, TransactionRejected, type CallRequest } from './evm-chain-vm.ts'

export { blockHash, type ChainLog, type ChainReceipt, type ChainTransaction } from './evm-chain-records.ts'
export {
  BASE_FEE,
  BEACON_RANDOMNESS_PRECOMPILE,
  BLOCK_GAS_LIMIT,
  ExecutionReverted,
  TransactionRejected,
  type CallRequest,
} from './evm-chain-vm.ts'

type Hex = PrefixedHexString

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
  /**
   * Pre-history: creates a contract at `address` as if `from` had deployed it there, at the head
   * epoch, kept in the journal like a transaction. A simulated calibration or mainnet uses it for
   * the contracts whose addresses are published (simfoc/chain-profiles.ts); no client can do it.
   */
  placeContract(address: Hex, from: Hex, initcode: Hex): Promise<void>
  receipt(hash: Hex): ChainReceipt | undefined
  transaction(hash: Hex): ChainTransaction | undefined
  block(number: number): ChainBlock
  logs(filter: LogFilter): ChainLog[]
}

const hex = (n: bigint | number) => `0x${n.toString(16)}` as Hex

/**
 * The simulated Onchain Cloud's chain: an EVM (ethereumjs) whose blocks are
 * Filecoin epochs, as on FEVM: block.number is the epoch, a transaction lands
 * in the block of the head it was sent at, and every call is serialized so
 * that state is read and written in order.
 */
export async function createEvmChain(options: EvmChainOptions): Promise<EvmChain> {
  const { chainId, headEpoch, epochTimestamp } = options
  const vm = await createChainVm({ chainId, epochTimestamp, seed: options.seed })
  const records = createChainRecords(chainId, epochTimestamp)
  let queue: Promise<unknown> = Promise.resolve()
  const serialized = <T>(work: () => Promise<T>): Promise<T> => {
    const next = queue.then(work, work)
    queue = next.catch(() => undefined)
    return next
  }
  const execute = async (tx: TypedTransaction, raw: Hex, epoch: number): Promise<Hex> =>
    records.add(tx, raw, epoch, await vm.run(tx, epoch))

  // The state so far, from the journal: each change again, at its own epoch.
  for (const entry of options.journal?.entries() ?? []) {
    if (entry.kind === 'balance') await vm.setBalance(entry.address, entry.wei)
    else if (entry.kind === 'place') await vm.place(entry.address, entry.from, entry.initcode, entry.epoch)
    else await execute(vm.decode(entry.raw), entry.raw, entry.epoch)
  }

  return {
    chainId,
    headEpoch,
    sendRawTransaction: (raw) =>
      serialized(async () => {
        const tx = vm.decode(raw)
        if (records.transaction(bytesToHex(tx.hash()))) throw new TransactionRejected('already known')
        const epoch = headEpoch()
        const hash = await execute(tx, raw, epoch)
        options.journal?.append({ epoch, kind: 'tx', raw })
        return hash
      }),
    call: (request) => serialized(async () => (await vm.simulate(request, headEpoch())).returnValue),
    // The gas a call used plus its intrinsic gas, with room for the 63/64 rule of nested calls
    // (Lotus's eth_estimateGas likewise adds an overestimate to what it measured).
    estimateGas: (request) =>
      serialized(async () => {
        const { gasUsed } = await vm.simulate(request, headEpoch())
        const estimate = ((gasUsed + intrinsicGas(request)) * 13n) / 10n + 10_000n
        return estimate > BLOCK_GAS_LIMIT ? BLOCK_GAS_LIMIT : estimate
      }),
    balance: (address) => serialized(() => vm.balance(address)),
    nonce: (address) => serialized(() => vm.nonce(address)),
    code: (address) => serialized(() => vm.code(address)),
    storageAt: (address, slot) => serialized(() => vm.storageAt(address, slot)),
    setBalance: (address, wei) =>
      serialized(async () => {
        await vm.setBalance(address, wei)
        options.journal?.append({ epoch: headEpoch(), kind: 'balance', address, wei })
      }),
    placeContract: (address, from, initcode) =>
      serialized(async () => {
        const epoch = headEpoch()
        await vm.place(address, from, initcode, epoch)
        options.journal?.append({ epoch, kind: 'place', address, from, initcode })
      }),
    receipt: (hash) => records.receipt(hash),
    transaction: (hash) => records.transaction(hash),
    block: (number) => records.block(number),
    logs: (filter) => records.logs(filter),
  }
}

export { hex }
