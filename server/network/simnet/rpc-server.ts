import { multiaddr } from '@multiformats/multiaddr'
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http'
import * as dagCbor from '@ipld/dag-cbor'
import { addressFromBytes, parseAddress } from '../../shared/address.ts'
import { ADD_BALANCE_METHOD, fromLotusMessage, MARKET_ACTOR_ID, toLotusMessage } from '../lotus/messages.ts'
import { verifySignature } from '../wallet/keys.ts'
import { chainCid, encodeMessage, signedMessageCid } from '../wallet/message.ts'
import type { MarketDeal } from '../types.ts'
import type { Simnet } from './index.ts'

export const SIMNET_RPC_PATH = '/rpc/v1'
const MAX_BODY_BYTES = 64 * 1024

// JSON-RPC 2.0 error codes, and the code Lotus answers "not found" with.
const PARSE_ERROR = -32700
const INVALID_REQUEST = -32600
const METHOD_NOT_FOUND = -32601
const INVALID_PARAMS = -32602
const LOTUS_ERROR = 1

class RpcError extends Error {
  constructor(readonly code: number, message: string) {
    super(message)
  }
}

/** A deal as Lotus's StateMarketStorageDeal/StateMarketDeals put it. */
const lotusDeal = (d: MarketDeal) => ({ Proposal: d.proposal, State: { ...d.state, SectorNumber: d.state.SectorStartEpoch >= 0 ? d.dealId % 100_000 : 0 } })

/**
 * The simulated chain as a Lotus node serves it: JSON-RPC 2.0 over HTTP POST
 * on `/rpc/v1`, the read methods the gateway and the deal service use, with
 * Lotus's field names and errors. The chain adapter (server/network/lotus)
 * talks to it exactly as to Lotus or Forest; only what the chain holds is
 * simulated.
 */
export function simnetRpcListener(simnet: Simnet): RequestListener {
  const readMessage = (value: unknown) => {
    try {
      return fromLotusMessage(value)
    } catch (err) {
      throw new RpcError(INVALID_PARAMS, `expected a message: ${(err as Error).message}`)
    }
  }
  const address = (value: unknown): string => {
    if (typeof value !== 'string' || !parseAddress(value).ok) throw new RpcError(INVALID_PARAMS, 'expected a Filecoin address as the first parameter')
    return value
  }
  const methods: Record<string, (params: unknown[]) => Promise<unknown>> = {
    async 'Filecoin.ChainHead'() {
      const head = await simnet.chainHead()
      const cid = { '/': chainCid(dagCbor.encode(['simnet tipset', head.epoch])).toString() }
      return { Cids: [cid], Blocks: [{ Miner: 'f01000', Height: head.epoch, Timestamp: head.timestamp, ParentBaseFee: '100' }], Height: head.epoch }
    },
    async 'Filecoin.StateGetNetworkParams'() {
      return { NetworkName: 'simnet', BlockDelaySecs: 30, ConsensusMinerMinPower: '0', SupportedProofTypes: [3, 4], PreCommitChallengeDelay: 150 }
    },
    async 'Filecoin.StateLookupID'([a]) {
      const id = await simnet.lookupId(address(a))
      if (!id) throw new RpcError(LOTUS_ERROR, `resolution lookup failed (${a}): actor not found`)
      return id
    },
    async 'Filecoin.StateVerifiedClientStatus'([a]) {
      const cap = await simnet.dataCap(address(a))
      return cap === null ? null : cap.toString()
    },
    async 'Filecoin.StateMarketBalance'([a]) {
      const b = await simnet.marketBalance(address(a))
      return { Escrow: b.escrow.toString(), Locked: b.locked.toString() }
    },
    async 'Filecoin.StateDealProviderCollateralBounds'([size, verified]) {
      if (typeof size !== 'number' || !Number.isSafeInteger(size) || size <= 0 || typeof verified !== 'boolean') {
        throw new RpcError(INVALID_PARAMS, 'expected a padded piece size and a verified flag')
      }
      const b = await simnet.collateralBounds(size, verified)
      return { Min: b.min.toString(), Max: b.max.toString() }
    },
    async 'Filecoin.MpoolGetNonce'([a]) {
      return simnet.nonce(address(a))
    },
    async 'Filecoin.GasEstimateMessageGas'([m]) {
      const message = readMessage(m)
      // Fixed, plausible gas: the simulated chain charges none.
      return toLotusMessage({ ...message, gasLimit: 12_000_000, gasFeeCap: 150_000n, gasPremium: 100_000n })
    },
    async 'Filecoin.MpoolPush'([sm]) {
      const signed = (sm ?? {}) as { Message?: unknown; Signature?: { Type?: unknown; Data?: unknown } }
      const message = readMessage(signed.Message)
      const data = typeof signed.Signature?.Data === 'string' ? Uint8Array.from(Buffer.from(signed.Signature.Data, 'base64')) : new Uint8Array(0)
      const cid = chainCid(encodeMessage(message))
      if (signed.Signature?.Type !== 1 || !verifySignature(message.from, cid.bytes, { type: 1, data })) throw new RpcError(LOTUS_ERROR, 'message signature is not valid')
      if (message.nonce !== simnet.nonce(message.from)) throw new RpcError(LOTUS_ERROR, `nonce ${message.nonce} is not the next one (${simnet.nonce(message.from)})`)
      const to = parseAddress(message.to)
      if (!to.ok || to.address.protocol !== 0 || to.address.id !== String(MARKET_ACTOR_ID) || message.method !== ADD_BALANCE_METHOD) {
        throw new RpcError(LOTUS_ERROR, 'the simulated chain takes only AddBalance messages to the storage market actor')
      }
      let beneficiary: string | null = null
      try {
        const bytes = dagCbor.decode(message.params)
        if (bytes instanceof Uint8Array) beneficiary = addressFromBytes(bytes, to.address.network)
      } catch {
        beneficiary = null
      }
      if (!beneficiary) throw new RpcError(LOTUS_ERROR, 'AddBalance params must be an address')
      simnet.useNonce(message.from)
      simnet.addEscrow(beneficiary, message.value)
      // As Lotus: a secp256k1 message is known by its signed form's CID (lotus chain/types/signedmessage.go, Cid()).
      return { '/': signedMessageCid({ message, signature: { type: 1, data }, cid }).toString() }
    },
    async 'Filecoin.StateMinerInfo'([a]) {
      const info = await simnet.minerInfo(address(a))
      if (!info) throw new RpcError(LOTUS_ERROR, `failed to load miner actor: actor not found (${a})`)
      return {
        Owner: info.owner, Worker: info.worker, NewWorker: '<empty>', ControlAddresses: [], WorkerChangeEpoch: -1,
        PeerId: info.peerId, Multiaddrs: info.multiaddrs.length > 0 ? info.multiaddrs.map((m) => Buffer.from(multiaddr(m).bytes).toString('base64')) : null, WindowPoStProofType: 8, SectorSize: info.sectorSize,
        WindowPoStPartitionSectors: 2349, ConsensusFaultElapsed: -1, Beneficiary: info.owner,
      }
    },
    async 'Filecoin.StateListMiners'() {
      return simnet.listProviders()
    },
    async 'Filecoin.StateMarketStorageDeal'([id]) {
      if (typeof id !== 'number' || !Number.isSafeInteger(id) || id < 0) throw new RpcError(INVALID_PARAMS, 'expected a deal id as the first parameter')
      const deal = await simnet.getDeal(id)
      if (!deal) throw new RpcError(LOTUS_ERROR, `deal ${id} not found`)
      return lotusDeal(deal)
    },
    async 'Filecoin.StateMarketDeals'() {
      return Object.fromEntries(simnet.marketDeals().map((d) => [String(d.dealId), lotusDeal(d)]))
    },
  }

  const answer = (res: ServerResponse, id: unknown, body: { result: unknown } | { error: { code: number; message: string } }) => {
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: id ?? null, ...body }))
  }

  return (req: IncomingMessage, res: ServerResponse) => {
    if (req.url !== SIMNET_RPC_PATH || req.method !== 'POST') {
      res.writeHead(req.url === SIMNET_RPC_PATH ? 405 : 404, { 'content-type': 'text/plain', ...(req.url === SIMNET_RPC_PATH ? { allow: 'POST' } : {}) })
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
      const method = methods[call.method]
      if (!method || !Object.hasOwn(methods, call.method)) return answer(res, call.id, { error: { code: METHOD_NOT_FOUND, message: `method '${call.method.slice(0, 100)}' not found` } })
      const params = call.params === undefined ? [] : call.params
      if (!Array.isArray(params)) return answer(res, call.id, { error: { code: INVALID_PARAMS, message: 'params must be an array' } })
      method(params).then(
        (result) => answer(res, call.id, { result }),
        (err: unknown) => answer(res, call.id, { error: err instanceof RpcError ? { code: err.code, message: err.message } : { code: LOTUS_ERROR, message: 'internal error' } }),
      )
    })
  }
}
