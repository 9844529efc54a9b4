import { BASE_FEE, BLOCK_GAS_LIMIT, hex, type ChainLog, type ChainReceipt, type EvmChain } from './evm-chain.ts'

/**
 * The simulated chain's records as Lotus's eth_* methods answer them
 * (lotus node/impl/eth): quantities as 0x hex, and the fields a block
 * header has on Ethereum but not on FEVM filled with zeros.
 */

type Hex = `0x${string}`

export function receiptJson(r: ChainReceipt) {
  return {
    transactionHash: r.transactionHash,
    transactionIndex: hex(r.transactionIndex),
    blockHash: r.blockHash,
    blockNumber: hex(r.blockNumber),
    from: r.from,
    to: r.to,
    contractAddress: r.contractAddress,
    cumulativeGasUsed: hex(r.cumulativeGasUsed),
    gasUsed: hex(r.gasUsed),
    effectiveGasPrice: hex(r.effectiveGasPrice),
    logs: r.logs.map(logJson),
    logsBloom: `0x${'00'.repeat(256)}`,
    status: hex(r.status),
    type: hex(r.type),
  }
}

export function logJson(l: ChainLog) {
  return {
    address: l.address,
    topics: l.topics,
    data: l.data,
    blockNumber: hex(l.blockNumber),
    blockHash: l.blockHash,
    transactionHash: l.transactionHash,
    transactionIndex: hex(l.transactionIndex),
    logIndex: hex(l.logIndex),
    removed: false,
  }
}

/** A transaction by its hash, or null when the chain has none. */
export function txJson(chain: EvmChain, hash: Hex) {
  const t = chain.transaction(hash)
  if (!t) return null
  const tx = t.tx as unknown as Record<string, unknown> & typeof t.tx
  const sig = { v: hex(tx.v ?? 0n), r: hex(tx.r ?? 0n), s: hex(tx.s ?? 0n) }
  const fees =
    'maxFeePerGas' in tx
      ? {
          maxFeePerGas: hex(tx.maxFeePerGas as bigint),
          maxPriorityFeePerGas: hex(tx.maxPriorityFeePerGas as bigint),
          gasPrice: hex(chain.receipt(hash)!.effectiveGasPrice),
        }
      : { gasPrice: hex(tx.gasPrice as bigint) }
  return {
    hash,
    from: t.from,
    to: tx.to?.toString() ?? null,
    nonce: hex(tx.nonce),
    gas: hex(tx.gasLimit),
    value: hex(tx.value),
    input: `0x${Buffer.from(tx.data).toString('hex')}`,
    blockNumber: hex(t.blockNumber),
    blockHash: chain.block(t.blockNumber).hash,
    transactionIndex: hex(t.transactionIndex),
    type: hex(tx.type),
    chainId: hex(chain.chainId),
    accessList: [],
    ...fees,
    ...sig,
    yParity: sig.v,
  }
}

/** The block of an epoch, with its transactions' hashes or (`full`) the transactions themselves. */
export function blockJson(chain: EvmChain, number: number, full: boolean) {
  const b = chain.block(number)
  return {
    number: hex(b.number),
    hash: b.hash,
    parentHash: number > 0 ? chain.block(number - 1).hash : `0x${'00'.repeat(32)}`,
    timestamp: hex(b.timestamp),
    baseFeePerGas: hex(BASE_FEE),
    gasLimit: hex(BLOCK_GAS_LIMIT),
    gasUsed: hex(b.gasUsed),
    miner: `0x${'00'.repeat(20)}`,
    difficulty: '0x0',
    totalDifficulty: '0x0',
    extraData: '0x',
    nonce: '0x0000000000000000',
    sha3Uncles: `0x${'00'.repeat(32)}`,
    logsBloom: `0x${'00'.repeat(256)}`,
    size: '0x0',
    stateRoot: `0x${'00'.repeat(32)}`,
    receiptsRoot: `0x${'00'.repeat(32)}`,
    transactionsRoot: `0x${'00'.repeat(32)}`,
    mixHash: `0x${'00'.repeat(32)}`,
    uncles: [],
    transactions: full ? b.transactions.map((hash) => txJson(chain, hash)) : b.transactions,
  }
}
