import type { IncomingMessage, ServerResponse } from 'node:http'
import { startServer, type ServerOptions } from '../../shared/http.ts'
import { openChainJournal } from './chain-journal.ts'
import { BASE_FEE, createEvmChain, ExecutionReverted, hex, TransactionRejected, type CallRequest, type EvmChain } from './evm-chain.ts'
import { blockJson, logJson, receiptJson, txJson } from './evm-node-json.ts'

type Hex = `0x${string}`

/** The chain id the Synapse SDK knows as the FOC devnet's (synapse-core src/chains.ts `devnet`). */
export const SIMFOC_CHAIN_ID = 31_415_926
export const EVM_RPC_PATH = '/rpc/v1'
/** Filecoin's epoch, in seconds of chain time. */
const EPOCH_SECONDS = 30
const MAX_BODY_BYTES = 8 * 1024 * 1024

export interface EvmNodeOptions {
  chainId?: number
  /** Real seconds per epoch (the simulated clock, sped up); default 30. */
  epochSeconds?: number
  /**
   * Unix seconds (wall clock) of epoch 0; default: the start. An epoch's block
   * time is when it happens on the wall clock, genesis + epoch × epochSeconds:
   * FEVM's genesis + epoch × 30 in real time, and on a sped-up simulation still
   * the wall clock, against which the SDK sets its permit and session-key
   * deadlines (Date.now() + 1 hour) that the contracts compare with block.timestamp.
   */
  genesisTimestamp?: number
  /** The head epoch now, when another clock drives the chain (the simulated Lotus chain's); overrides epochSeconds. */
  headEpoch?: () => number
  /** Injected clock (unix ms) so tests control time. */
  now?: () => number
  /** Seeds the beacon randomness. */
  seed?: string
  /** Accounts funded with FIL at genesis (on a fresh chain only). */
  accounts?: { address: Hex; wei: bigint }[]
  /** SQLite file keeping every state change, replayed at start (e.g. `<DATA_DIR>/simfoc/chain.sqlite`); unset: in memory. */
  stateFile?: string
  /** Port to listen on (127.0.0.1); default any free one. */
  port?: number
  /** Connection rules of its port (connection caps, idle and body deadlines), as every part's. */
  http?: ServerOptions
}

export interface EvmNode {
  /** The JSON-RPC endpoint, as Lotus serves its eth_* methods: http://127.0.0.1:<port>/rpc/v1. */
  url: string
  chain: EvmChain
  /** Whether the chain started empty (nothing to replay): deploy contracts and fund accounts then. */
  fresh: boolean
  headEpoch(): number
  setBalance(address: Hex, wei: bigint): Promise<void>
  /** Pre-history: a contract created at a fixed address (EvmChain.placeContract). */
  placeContract(address: Hex, from: Hex, initcode: Hex): Promise<void>
  close(): Promise<void>
}

// JSON-RPC 2.0 codes; 3 is geth's (and Lotus's) "execution reverted", -32000 a refused transaction.
const PARSE_ERROR = -32700
const INVALID_REQUEST = -32600
const METHOD_NOT_FOUND = -32601
const INVALID_PARAMS = -32602
const INTERNAL_ERROR = -32603
const EXECUTION_REVERTED = 3
const TRANSACTION_REJECTED = -32000

class RpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: Hex,
  ) {
    super(message)
  }
}

const isHex = (v: unknown): v is Hex => typeof v === 'string' && /^0x[0-9a-fA-F]*$/.test(v)
function hexParam(v: unknown, what: string): Hex {
  if (!isHex(v)) throw new RpcError(INVALID_PARAMS, `${what}: expected a 0x-prefixed hex string`)
  return v
}
function addressParam(v: unknown, what: string): Hex {
  if (!isHex(v) || v.length !== 42) throw new RpcError(INVALID_PARAMS, `${what}: expected a 20-byte 0x address`)
  return v.toLowerCase() as Hex
}
const quantity = (v: unknown, what: string) => BigInt(hexParam(v, what))

function callParam(v: unknown): CallRequest {
  if (typeof v !== 'object' || v === null) throw new RpcError(INVALID_PARAMS, 'call: expected a transaction object')
  const o = v as Record<string, unknown>
  return {
    from: o.from === undefined ? undefined : addressParam(o.from, 'from'),
    to: o.to === undefined || o.to === null ? null : addressParam(o.to, 'to'),
    data: o.data !== undefined ? hexParam(o.data, 'data') : o.input !== undefined ? hexParam(o.input, 'input') : undefined,
    value: o.value === undefined ? undefined : quantity(o.value, 'value'),
    gas: o.gas === undefined ? undefined : quantity(o.gas, 'gas'),
  }
}

/** The eth_* methods of Lotus's FEVM API (lotus node/impl/eth) that viem and the Synapse SDK use, over a simulated chain. */
export function ethMethods(chain: EvmChain): Record<string, (params: unknown[]) => Promise<unknown> | unknown> {
  const blockTag = (v: unknown): number => {
    if (v === undefined || v === 'latest' || v === 'pending' || v === 'safe' || v === 'finalized') return chain.headEpoch()
    if (v === 'earliest') return 0
    const n = Number(quantity(v, 'block'))
    if (n > chain.headEpoch()) throw new RpcError(INVALID_PARAMS, `requested epoch ${n} is in the future (head ${chain.headEpoch()})`)
    return n
  }
  return {
    eth_chainId: () => hex(chain.chainId),
    net_version: () => String(chain.chainId),
    web3_clientVersion: () => 'simulated-foc/ethereumjs',
    eth_blockNumber: () => hex(chain.headEpoch()),
    eth_gasPrice: () => hex(BASE_FEE + 1n),
    eth_maxPriorityFeePerGas: () => hex(1n),
    eth_feeHistory: ([count, newest]) => {
      const last = blockTag(newest)
      const n = Math.max(1, Math.min(Number(typeof count === 'number' ? count : quantity(count, 'blockCount')), 1024, last + 1))
      return {
        oldestBlock: hex(last - n + 1),
        baseFeePerGas: Array.from({ length: n + 1 }, () => hex(BASE_FEE)),
        gasUsedRatio: Array.from({ length: n }, () => 0),
        reward: Array.from({ length: n }, () => [hex(1n)]),
      }
    },
    eth_getBalance: async ([address]) => hex(await chain.balance(addressParam(address, 'address'))),
    eth_getTransactionCount: async ([address]) => hex(await chain.nonce(addressParam(address, 'address'))),
    eth_getCode: async ([address]) => chain.code(addressParam(address, 'address')),
    eth_getStorageAt: async ([address, slot]) => chain.storageAt(addressParam(address, 'address'), hexParam(slot, 'slot')),
    eth_call: async ([call]) => chain.call(callParam(call)),
    eth_estimateGas: async ([call]) => hex(await chain.estimateGas(callParam(call))),
    eth_sendRawTransaction: async ([raw]) => chain.sendRawTransaction(hexParam(raw, 'transaction')),
    eth_getTransactionReceipt: ([hash]) => {
      const r = chain.receipt(hexParam(hash, 'hash'))
      // A receipt shows once its epoch is the head, as a message's once its tipset is.
      return r && r.blockNumber <= chain.headEpoch() ? receiptJson(r) : null
    },
    eth_getTransactionByHash: ([hash]) => txJson(chain, hexParam(hash, 'hash')),
    eth_getBlockByNumber: ([tag, full]) => blockJson(chain, blockTag(tag), full === true),
    eth_getBlockByHash: ([hash, full]) => {
      const wanted = hexParam(hash, 'hash').toLowerCase()
      for (let n = chain.headEpoch(); n >= 0; n--) if (chain.block(n).hash === wanted) return blockJson(chain, n, full === true)
      return null
    },
    eth_getLogs: ([filter]) => {
      const f = (filter ?? {}) as Record<string, unknown>
      const address =
        f.address === undefined ? undefined : (Array.isArray(f.address) ? f.address : [f.address]).map((a) => addressParam(a, 'address'))
      const topics =
        f.topics === undefined
          ? undefined
          : (f.topics as unknown[]).map((t) =>
              t === null
                ? null
                : Array.isArray(t)
                  ? t.map((x) => hexParam(x, 'topic').toLowerCase() as Hex)
                  : (hexParam(t, 'topic').toLowerCase() as Hex),
            )
      if (f.blockHash !== undefined) {
        const hash = hexParam(f.blockHash, 'blockHash').toLowerCase()
        const logs = chain.logs({ fromBlock: 0, toBlock: chain.headEpoch(), address, topics }).filter((l) => l.blockHash === hash)
        return logs.map(logJson)
      }
      return chain
        .logs({ fromBlock: blockTag(f.fromBlock ?? 'latest'), toBlock: blockTag(f.toBlock ?? 'latest'), address, topics })
        .map(logJson)
    },
  }
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = []
  let size = 0
  for await (const chunk of req) {
    size += (chunk as Buffer).length
    if (size > MAX_BODY_BYTES) throw new RpcError(INVALID_REQUEST, `request body over ${MAX_BODY_BYTES} bytes`)
    chunks.push(chunk as Buffer)
  }
  return Buffer.concat(chunks).toString('utf8')
}

const json = (value: unknown) => JSON.stringify(value, (_k, v) => (typeof v === 'bigint' ? hex(v) : v))

/** Answers one JSON-RPC request object. */
async function answer(methods: ReturnType<typeof ethMethods>, request: unknown): Promise<unknown> {
  const r = request as { id?: unknown; method?: unknown; params?: unknown; jsonrpc?: unknown }
  const id = r && typeof r === 'object' && (typeof r.id === 'number' || typeof r.id === 'string' || r.id === null) ? r.id : null
  try {
    if (!r || typeof r !== 'object' || r.jsonrpc !== '2.0' || typeof r.method !== 'string')
      throw new RpcError(INVALID_REQUEST, 'not a JSON-RPC 2.0 request')
    if (r.params !== undefined && !Array.isArray(r.params)) throw new RpcError(INVALID_PARAMS, 'params must be an array')
    const method = Object.hasOwn(methods, r.method) ? methods[r.method] : undefined
    if (!method) throw new RpcError(METHOD_NOT_FOUND, `the method ${r.method} does not exist/is not available`)
    return { jsonrpc: '2.0', id, result: await method((r.params as unknown[]) ?? []) }
  } catch (error) {
    const e =
      error instanceof RpcError
        ? error
        : error instanceof ExecutionReverted
          ? new RpcError(EXECUTION_REVERTED, error.message, error.data)
          : error instanceof TransactionRejected
            ? new RpcError(TRANSACTION_REJECTED, error.message)
            : error instanceof SyntaxError || error instanceof RangeError
              ? new RpcError(INVALID_PARAMS, error.message)
              : new RpcError(INTERNAL_ERROR, `internal error: ${(error as Error).message}`)
    return { jsonrpc: '2.0', id, error: { code: e.code, message: e.message, ...(e.data !== undefined ? { data: e.data } : {}) } }
  }
}

/** What the connection layer answers itself (a 408 for a late body, a 503 over the cap), as a JSON-RPC error. */
const rpcErrorBody = (message: string) => ({
  type: 'application/json',
  text: json({ jsonrpc: '2.0', id: null, error: { code: INVALID_REQUEST, message } }),
})

/** Starts the simulated Onchain Cloud's EVM on loopback, serving Lotus's eth_* JSON-RPC at /rpc/v1. */
export async function startEvmNode(options: EvmNodeOptions = {}): Promise<EvmNode> {
  const now = options.now ?? Date.now
  const epochSeconds = options.epochSeconds ?? EPOCH_SECONDS
  const genesisTimestamp = options.genesisTimestamp ?? now() / 1000
  const headEpoch = options.headEpoch ?? (() => Math.max(0, Math.floor((now() / 1000 - genesisTimestamp) / epochSeconds)))
  const journal = options.stateFile ? openChainJournal(options.stateFile) : undefined
  const fresh = (journal?.entries().length ?? 0) === 0
  const chain = await createEvmChain({
    chainId: options.chainId ?? SIMFOC_CHAIN_ID,
    headEpoch,
    seed: options.seed ?? 'simfoc',
    journal,
    epochTimestamp: (epoch) => Math.floor(genesisTimestamp + epoch * epochSeconds),
  })
  if (fresh) for (const { address, wei } of options.accounts ?? []) await chain.setBalance(address, wei)
  const methods = ethMethods(chain)

  const listener = (req: IncomingMessage, res: ServerResponse) => {
    const reply = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' }).end(typeof body === 'string' ? body : json(body))
    }
    if (req.url !== EVM_RPC_PATH && req.url !== '/') return reply(404, { error: `no such path: use POST ${EVM_RPC_PATH}` })
    if (req.method !== 'POST') return reply(405, { error: 'JSON-RPC takes POST' })
    readBody(req)
      .then(async (body) => {
        let parsed: unknown
        try {
          parsed = JSON.parse(body)
        } catch {
          return reply(200, { jsonrpc: '2.0', id: null, error: { code: PARSE_ERROR, message: 'parse error: the body is not JSON' } })
        }
        if (Array.isArray(parsed)) {
          if (parsed.length === 0 || parsed.length > 1000)
            return reply(200, { jsonrpc: '2.0', id: null, error: { code: INVALID_REQUEST, message: 'a batch holds 1 to 1000 requests' } })
          const answers = []
          for (const request of parsed) answers.push(await answer(methods, request))
          return reply(200, answers)
        }
        reply(200, await answer(methods, parsed))
      })
      .catch((error: Error) =>
        reply(error instanceof RpcError ? 413 : 400, {
          jsonrpc: '2.0',
          id: null,
          error: { code: INVALID_REQUEST, message: error.message },
        }),
      )
  }
  // The same connection rules as the parts (a cap, idle and body deadlines): with Node's defaults a local flood of this
  // port held every descriptor of the process, and a body trickled a byte every few seconds stayed open for minutes.
  const server = await startServer(listener, options.port ?? 0, '127.0.0.1', { errorBody: rpcErrorBody, ...options.http })
  return {
    url: `${server.url}${EVM_RPC_PATH}`,
    chain,
    fresh,
    headEpoch,
    setBalance: (address, wei) => chain.setBalance(address, wei),
    placeContract: (address, from, initcode) => chain.placeContract(address, from, initcode),
    async close() {
      await server.close(0)
      journal?.close()
    },
  }
}
