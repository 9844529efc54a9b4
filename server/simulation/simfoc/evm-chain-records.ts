import type { TypedTransaction } from '@ethereumjs/tx'
import { bytesToHex, type PrefixedHexString } from '@ethereumjs/util'
import type { RunTxResult } from '@ethereumjs/vm'
import { keccak_256 } from '@noble/hashes/sha3.js'
import { BASE_FEE } from './evm-chain-vm.ts'

/**
 * What the simulated chain keeps of the transactions it ran: the block of
 * each epoch that had some, each transaction with its receipt and logs, and
 * the log queries over them. An epoch without transactions is an empty block
 * named by its number.
 */

type Hex = PrefixedHexString

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

export interface ChainBlock {
  number: number
  hash: Hex
  timestamp: number
  transactions: Hex[]
  gasUsed: bigint
}

/** Which logs eth_getLogs asks for: a block range, emitters, and topics by position (null: any; a list: any of them). */
export interface LogFilter {
  fromBlock: number
  toBlock: number
  address?: Hex[]
  topics?: (Hex | Hex[] | null)[]
}

export interface ChainRecords {
  block(number: number): ChainBlock
  receipt(hash: Hex): ChainReceipt | undefined
  transaction(hash: Hex): ChainTransaction | undefined
  /** Keeps a transaction the EVM ran in the block of `epoch`, with its receipt and logs; returns its hash. */
  add(tx: TypedTransaction, raw: Hex, epoch: number, result: RunTxResult): Hex
  logs(filter: LogFilter): ChainLog[]
}

/** A block's hash: the simulation keeps no headers, so it names each epoch's block by its number. */
export function blockHash(chainId: number, epoch: number): Hex {
  return bytesToHex(keccak_256(new TextEncoder().encode(`simulated FOC block ${chainId}/${epoch}`)))
}

export function createChainRecords(chainId: number, epochTimestamp: (epoch: number) => number): ChainRecords {
  const blocks = new Map<number, ChainBlock>()
  const receipts = new Map<Hex, ChainReceipt>()
  const transactions = new Map<Hex, ChainTransaction>()

  const block = (number: number): ChainBlock => {
    const known = blocks.get(number)
    if (known) return known
    return { number, hash: blockHash(chainId, number), timestamp: epochTimestamp(number), transactions: [], gasUsed: 0n }
  }

  function add(tx: TypedTransaction, raw: Hex, epoch: number, result: RunTxResult): Hex {
    const from = tx.getSenderAddress()
    const into = block(epoch)
    blocks.set(epoch, into)
    const hash = bytesToHex(tx.hash())
    const index = into.transactions.length
    into.transactions.push(hash)
    into.gasUsed += result.totalGasSpent
    const logIndexBase = [...into.transactions.slice(0, -1)].reduce((n, h) => n + (receipts.get(h)?.logs.length ?? 0), 0)
    const logs: ChainLog[] = (result.execResult.logs ?? []).map(([address, topics, data], i) => ({
      address: bytesToHex(address),
      topics: topics.map((t) => bytesToHex(t)),
      data: bytesToHex(data),
      blockNumber: epoch,
      blockHash: into.hash,
      transactionHash: hash,
      transactionIndex: index,
      logIndex: logIndexBase + i,
    }))
    const failed = result.execResult.exceptionError !== undefined
    receipts.set(hash, {
      transactionHash: hash,
      transactionIndex: index,
      blockNumber: epoch,
      blockHash: into.hash,
      from: from.toString(),
      to: tx.to?.toString() ?? null,
      contractAddress: result.createdAddress?.toString() ?? null,
      status: failed ? 0 : 1,
      gasUsed: result.totalGasSpent,
      cumulativeGasUsed: into.gasUsed,
      effectiveGasPrice: tx.getEffectivePriorityFee(BASE_FEE) + BASE_FEE,
      type: tx.type,
      logs: failed ? [] : logs,
      revertData: bytesToHex(result.execResult.returnValue),
    })
    transactions.set(hash, { hash, raw, tx, from: from.toString(), blockNumber: epoch, transactionIndex: index })
    return hash
  }

  return {
    block,
    receipt: (hash) => receipts.get(hash.toLowerCase() as Hex),
    transaction: (hash) => transactions.get(hash.toLowerCase() as Hex),
    add,
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
