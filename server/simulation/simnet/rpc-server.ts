import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http'
import { parseAddress, type AddressNetwork } from '../../shared/address.ts'
import type { Simnet } from './index.ts'
import { stall, type ChainFaultPlan } from './faults.ts'
import { actorMethods } from './rpc-actors.ts'
import { chainMethods } from './rpc-chain.ts'
import {
  createRpcContext,
  INVALID_PARAMS,
  INVALID_REQUEST,
  LOTUS_ERROR,
  METHOD_NOT_FOUND,
  PARSE_ERROR,
  RpcError,
  type RpcMethods,
} from './rpc-context.ts'
import { answerFault } from './rpc-faults.ts'
import { marketMethods } from './rpc-market.ts'
import { messageMethods } from './rpc-messages.ts'
import { mpoolMethods } from './rpc-mpool.ts'

export { encodePublishReturn } from './rpc-messages.ts'

export const SIMNET_RPC_PATH = '/rpc/v1'
const MAX_BODY_BYTES = 64 * 1024

/**
 * The methods of Lotus's gateway API (lotus api/api_gateway.go, the v1 `Gateway`
 * interface) that the simulated chain serves: what a public gateway node answers.
 * Anything else is a full node's, served only with `fullNode`.
 */
export const GATEWAY_METHODS: ReadonlySet<string> = new Set(
  [
    'ChainGetMessage',
    'ChainHead',
    'GasEstimateMessageGas',
    'MpoolGetNonce',
    'MpoolPush',
    'StateDealProviderCollateralBounds',
    'StateGetNetworkParams',
    'StateListMiners',
    'StateLookupID',
    'StateMarketBalance',
    'StateMarketStorageDeal',
    'StateMinerInfo',
    'StateNetworkVersion',
    'StateReadState',
    'StateSearchMsg',
    'StateVerifiedClientStatus',
  ].map((m) => `Filecoin.${m}`),
)

export interface SimnetRpcOptions {
  /** Also serve a full node's methods the gateway API lacks (StateMarketDeals), for tests that need them. */
  fullNode?: boolean
  /**
   * The prefix of the addresses it answers with: `mainnet` (f…, default) as
   * the simulation keeps them, or `testnet` (t…) as every Lotus build but
   * mainnet's prints them (lotus build/buildconstants/params_mainnet.go alone
   * calls SetAddressNetwork(address.Mainnet)), to stand for a devnet's node.
   * Lotus reads either prefix in parameters (go-address NewFromString).
   */
  addressNetwork?: AddressNetwork
  /** Seeded faults: some calls refused as a busy node or its proxy refuses them (rpc-faults.ts), or answered late (faults.ts). */
  faults?: ChainFaultPlan
}

/**
 * The simulated chain as a Lotus node serves it: JSON-RPC 2.0 over HTTP POST
 * on `/rpc/v1`, the read methods the gateway and the deal service use, with
 * Lotus's field names and errors. The chain adapter (server/network/lotus)
 * talks to it exactly as to Lotus or Forest; only what the chain holds is
 * simulated.
 */
export function simnetRpcListener(simnet: Simnet, options: SimnetRpcOptions = {}): RequestListener {
  const context = createRpcContext(simnet)
  // The methods by concern, one table each; which of them a caller may reach is GATEWAY_METHODS' to say.
  const methods: RpcMethods = {
    ...chainMethods(context),
    ...messageMethods(context),
    ...marketMethods(context),
    ...actorMethods(context),
    ...mpoolMethods(context),
  }

  const answer = (res: ServerResponse, id: unknown, body: { result: unknown } | { error: { code: number; message: string } }) => {
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: id ?? null, ...body }))
  }

  return (req: IncomingMessage, res: ServerResponse) => {
    if (req.url !== SIMNET_RPC_PATH || req.method !== 'POST') {
      res.writeHead(req.url === SIMNET_RPC_PATH ? 405 : 404, {
        'content-type': 'text/plain',
        ...(req.url === SIMNET_RPC_PATH ? { allow: 'POST' } : {}),
      })
      res.end(req.url === SIMNET_RPC_PATH ? 'POST JSON-RPC 2.0 here\n' : 'not found\n')
      return
    }
    const chunks: Buffer[] = []
    let size = 0
    let refused = false
    req.on('data', (chunk: Buffer) => {
      size += chunk.length
      if (size > MAX_BODY_BYTES && !refused) {
        refused = true
        res.writeHead(413, { 'content-type': 'text/plain', connection: 'close' }).end('request too large\n')
        req.resume()
      } else if (!refused) chunks.push(chunk)
    })
    req.on('error', () => res.destroy())
    req.on('end', () => {
      if (refused) return
      let call: { id?: unknown; method?: unknown; params?: unknown }
      try {
        call = JSON.parse(Buffer.concat(chunks).toString('utf8'))
      } catch {
        return answer(res, null, { error: { code: PARSE_ERROR, message: 'parse error' } })
      }
      if (!call || typeof call !== 'object' || Array.isArray(call) || typeof call.method !== 'string') {
        return answer(res, null, { error: { code: INVALID_REQUEST, message: 'invalid request: expected {jsonrpc, method, params, id}' } })
      }
      const served = Object.hasOwn(methods, call.method) && (options.fullNode || GATEWAY_METHODS.has(call.method))
      const method = served ? methods[call.method] : undefined
      if (!method)
        return answer(res, call.id, { error: { code: METHOD_NOT_FOUND, message: `method '${call.method.slice(0, 100)}' not found` } })
      const given = call.params === undefined ? [] : call.params
      if (!Array.isArray(given)) return answer(res, call.id, { error: { code: INVALID_PARAMS, message: 'params must be an array' } })
      const testnet = options.addressNetwork === 'testnet'
      const params = testnet ? (withAddressPrefix(given, 't', 'f') as unknown[]) : given
      const fault = options.faults?.draw('chain', call.method)
      // A node under load, or the proxy before it, refuses the call, not made, in one of the ways they do
      // (rpc-faults.ts); or, as Lotus's gateway past its per-connection API limit (lotus gateway/node.go),
      // delays it, and then serves it (a client that gave up may find it done, as with a real node).
      if (fault?.kind === 'fail')
        return answerFault(req, res, { id: call.id, method: call.method }, fault.as ?? 'rate-limited', options.faults!.hangMs)
      const late = fault?.kind === 'stall' ? stall(fault.ms) : Promise.resolve()
      late
        .then(() => method(params))
        .then(
          (result) => answer(res, call.id, { result: testnet ? withAddressPrefix(result, 'f', 't') : result }),
          (err: unknown) =>
            answer(res, call.id, {
              error: err instanceof RpcError ? { code: err.code, message: err.message } : { code: LOTUS_ERROR, message: 'internal error' },
            }),
        )
    })
  }
}

/** `value` with every address string spelt with prefix `from` spelt with `to` (the checksum covers only protocol and payload). */
function withAddressPrefix(value: unknown, from: 'f' | 't', to: 'f' | 't'): unknown {
  if (typeof value === 'string') return value.startsWith(from) && parseAddress(value).ok ? to + value.slice(1) : value
  if (Array.isArray(value)) return value.map((v) => withAddressPrefix(v, from, to))
  if (value && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, withAddressPrefix(v, from, to)]))
  return value
}
