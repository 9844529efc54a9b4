import { multiaddr } from '@multiformats/multiaddr'
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http'
import * as dagCbor from '@ipld/dag-cbor'
import { addressFromBytes, parseAddress, type AddressNetwork } from '../../shared/address.ts'
import type { MarketDeal } from '../../shared/chain.ts'
import {
  cborCid,
  METHOD_ADD_BALANCE,
  messageProblem,
  readJsonMessage,
  readJsonSignedMessage,
  signedMessageCid,
  SIG_SECP256K1,
  METHOD_PUBLISH_STORAGE_DEALS,
  STORAGE_MARKET_ACTOR_ID,
  verifyMessageSignature,
  writeJsonMessage,
} from './chain-wire.ts'
import { publishMessageCid, type Simnet } from './index.ts'
import { dealProposalTuple } from './provider-wire.ts'
import { stall, type FaultPlan } from './faults.ts'

export const SIMNET_RPC_PATH = '/rpc/v1'
const MAX_BODY_BYTES = 64 * 1024

// JSON-RPC 2.0 error codes, and the code Lotus answers "not found" with.
const PARSE_ERROR = -32700
const INVALID_REQUEST = -32600
const METHOD_NOT_FOUND = -32601
const INVALID_PARAMS = -32602
const LOTUS_ERROR = 1

class RpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message)
  }
}

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
  /** Seeded faults: some calls refused with a 429 or answered late (faults.ts). */
  faults?: FaultPlan
}

/** Where no upgrade is scheduled, as mainnet's build says for one not yet planned (lotus build/buildconstants/params_mainnet.go). */
const NOT_SCHEDULED = 9_999_999_999

/** Lotus's api/types.go ForkUpgradeParams: every upgrade before the simulated genesis happened "before genesis" (-1). */
const PAST_UPGRADES = [
  'Smoke',
  'Breeze',
  'Ignition',
  'Liftoff',
  'Assembly',
  'Refuel',
  'Tape',
  'Kumquat',
  'Calico',
  'Persian',
  'Orange',
  'Claus',
  'Trust',
  'Norwegian',
  'Turbo',
  'Hyperdrive',
  'Chocolate',
  'OhSnap',
  'Skyr',
  'Shark',
  'Hygge',
  'Lightning',
  'Thunder',
  'Watermelon',
  'Dragon',
  'Phoenix',
  'Waffle',
  'Tuktuk',
  'Teep',
  'Tock',
  'GoldenWeek',
]

/** The CBOR tuple of a PublishStorageDeals return: [IDs, ValidDeals as RLE+] (go-state-types builtin/v9/market PublishStorageDealsReturn). */
export function encodePublishReturn(ids: number[], validIndexes: number[]): Uint8Array {
  return dagCbor.encode([ids, rlePlus(validIndexes)])
}

/**
 * An RLE+ bitfield of ascending positions (go-bitfield rle/rleplus.go): bits from the least
 * significant of each byte, version 00, the first run's value, then runs coded as `1` (1),
 * `01` + 4 bits (0-15) or `00` + LEB128 varint, values alternating.
 */
function rlePlus(positions: number[]): Uint8Array {
  const runs: number[] = []
  let at = 0
  for (let i = 0; i < positions.length;) {
    let j = i
    while (j + 1 < positions.length && positions[j + 1] === positions[j] + 1) j++
    runs.push(positions[i] - at, j - i + 1)
    at = positions[j] + 1
    i = j + 1
  }
  const bits: number[] = [0, 0]
  const first = runs[0] === 0 ? 1 : 0
  bits.push(first)
  const push = (value: number, n: number) => {
    for (let k = 0; k < n; k++) bits.push((value >> k) & 1)
  }
  for (const run of first ? runs.slice(1) : runs) {
    if (run === 1) bits.push(1)
    else if (run < 16) {
      bits.push(0, 1)
      push(run, 4)
    } else {
      bits.push(0, 0)
      for (let v = run; ;) {
        const byte = v & 0x7f
        v = Math.floor(v / 128)
        push(v > 0 ? byte | 0x80 : byte, 8)
        if (v === 0) break
      }
    }
  }
  if (positions.length === 0) return new Uint8Array(0)
  const out = new Uint8Array(Math.ceil(bits.length / 8))
  bits.forEach((b, i) => (out[i >> 3] |= b << (i & 7)))
  return out
}

/** A deal as Lotus's StateMarketStorageDeal/StateMarketDeals put it. */
const lotusDeal = (d: MarketDeal) => ({
  Proposal: d.proposal,
  State: { ...d.state, SectorNumber: d.state.SectorStartEpoch >= 0 ? d.dealId % 100_000 : 0 },
})

/**
 * The simulated chain as a Lotus node serves it: JSON-RPC 2.0 over HTTP POST
 * on `/rpc/v1`, the read methods the gateway and the deal service use, with
 * Lotus's field names and errors. The chain adapter (server/network/lotus)
 * talks to it exactly as to Lotus or Forest; only what the chain holds is
 * simulated.
 */
export function simnetRpcListener(simnet: Simnet, options: SimnetRpcOptions = {}): RequestListener {
  // Tipset keys the chain handed out, so that a method given one answers at its epoch.
  const tipsets = new Map<string, number>()
  const tipsetKey = (epoch: number) => {
    const cid = cborCid(dagCbor.encode(['simnet tipset', epoch])).toString()
    if (tipsets.size >= 100_000) tipsets.clear()
    tipsets.set(cid, epoch)
    return [{ '/': cid }]
  }
  /** The epoch of a tipset key parameter: the head for null or [] (Lotus's EmptyTSK). */
  const epochOf = (tsk: unknown): number => {
    if (tsk === null || tsk === undefined || (Array.isArray(tsk) && tsk.length === 0)) return simnet.headEpoch()
    const first = Array.isArray(tsk) ? (tsk[0] as { '/'?: unknown } | undefined)?.['/'] : undefined
    const epoch = typeof first === 'string' ? tipsets.get(first) : undefined
    if (epoch === undefined) throw new RpcError(LOTUS_ERROR, 'loading tipset: tipset not found')
    return epoch
  }
  /** The chain's own reading of a JSON parameter (chain-wire.ts), a JSON-RPC params error when it is not one. */
  const readParam = <T>(read: (v: unknown) => T, value: unknown, what: string): T => {
    try {
      return read(value)
    } catch (err) {
      throw new RpcError(INVALID_PARAMS, `expected ${what}: ${(err as Error).message}`)
    }
  }
  const address = (value: unknown): string => {
    if (typeof value !== 'string' || !parseAddress(value).ok)
      throw new RpcError(INVALID_PARAMS, 'expected a Filecoin address as the first parameter')
    return value
  }
  const methods: Record<string, (params: unknown[]) => Promise<unknown>> = {
    async 'Filecoin.ChainHead'() {
      const head = await simnet.chainHead()
      return {
        Cids: tipsetKey(head.epoch),
        Blocks: [{ Miner: 'f01000', Height: head.epoch, Timestamp: head.timestamp, ParentBaseFee: '100' }],
        Height: head.epoch,
      }
    },
    // Lotus api/types.go NetworkParams, as node/impl/full/state.go fills it.
    async 'Filecoin.StateGetNetworkParams'() {
      const past = simnet.networkVersionAt(0) >= 29
      return {
        // A sped-up chain's block time, so that a clock read from the node (node-clock.ts) keeps its pace.
        NetworkName: 'simnet',
        BlockDelaySecs: simnet.clock.epochSeconds,
        ConsensusMinerMinPower: '0',
        PreCommitChallengeDelay: 150,
        ForkUpgradeParams: {
          ...Object.fromEntries(PAST_UPGRADES.map((name) => [`Upgrade${name}Height`, -1])),
          BreezeGasTampingDuration: 0,
          UpgradeFireHorseHeight: simnet.networkVersionAt(0) >= 28 ? -1 : NOT_SCHEDULED,
          // nv29 (FIP-0118) has no name yet in Lotus: UpgradeXxHeight.
          UpgradeXxHeight: past ? -1 : (simnet.nv29Epoch ?? NOT_SCHEDULED),
        },
        Eip155ChainID: 31415926,
        GenesisTimestamp: simnet.clock.genesis,
      }
    },
    async 'Filecoin.StateNetworkVersion'([tsk]) {
      return simnet.networkVersionAt(epochOf(tsk))
    },
    // Only the market actor's state, and of it what the simulation keeps: NextID (go-state-types builtin/v16/market State).
    async 'Filecoin.StateReadState'([a, tsk]) {
      const id = await simnet.lookupId(address(a))
      if (id !== 'f05') throw new RpcError(LOTUS_ERROR, `the simulated chain keeps no state for actor ${a}`)
      epochOf(tsk)
      return {
        Balance: '0',
        Code: { '/': cborCid(dagCbor.encode('simnet storagemarket actor')).toString() },
        State: { NextID: await simnet.nextDealId(), LastCron: simnet.headEpoch() },
      }
    },
    // Lotus api/api_full.go MsgLookup for a deal's PublishStorageDeals message; null until it is on chain.
    async 'Filecoin.StateSearchMsg'([, m]) {
      const cid = (m as { '/'?: unknown } | null)?.['/']
      if (typeof cid !== 'string') throw new RpcError(INVALID_PARAMS, 'expected a message CID as the second parameter')
      const found = simnet.publishedMessage(cid)
      if (!found) return null
      const ret = encodePublishReturn([found.dealId], [0])
      return {
        Message: { '/': publishMessageCid(found.dealId) },
        Receipt: { ExitCode: 0, Return: Buffer.from(ret).toString('base64'), GasUsed: 28_000_000, EventsRoot: null },
        // ValidDeals as go-bitfield writes a bitfield in JSON: its run lengths, the first one of zeros.
        ReturnDec: { IDs: [found.dealId], ValidDeals: [0, 1] },
        TipSet: tipsetKey(found.epoch),
        Height: found.epoch,
      }
    },
    // The PublishStorageDeals message a provider sent (to f05, method 4: go-state-types builtin/methods.go MethodsMarket),
    // params [[ClientDealProposal…]] (go-state-types builtin/v9/market PublishStorageDealsParams), one deal per message here.
    async 'Filecoin.ChainGetMessage'([m]) {
      const cid = (m as { '/'?: unknown } | null)?.['/']
      if (typeof cid !== 'string') throw new RpcError(INVALID_PARAMS, 'expected a message CID as the first parameter')
      const found = simnet.publishedMessage(cid)
      if (!found) throw new RpcError(LOTUS_ERROR, `failed to load message: ipld: could not find ${cid}`)
      // The simulated chain keeps no client signatures: a secp256k1-typed placeholder stands in the ClientSignature's place.
      const params = dagCbor.encode([[[dealProposalTuple(found.proposal), Uint8Array.from([SIG_SECP256K1, ...new Uint8Array(65)])]]])
      const message = {
        version: 0,
        to: `f0${STORAGE_MARKET_ACTOR_ID}`,
        from: found.proposal.Provider,
        nonce: found.dealId % 1_000_000,
        value: 0n,
        gasLimit: 12_000_000,
        gasFeeCap: 150_000n,
        gasPremium: 100_000n,
        method: METHOD_PUBLISH_STORAGE_DEALS,
        params,
      }
      // Named by the CID asked for: the simulated chain names a publish message by its deal id (publishMessageCid).
      return { ...writeJsonMessage(message), CID: { '/': cid } }
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
      const message = readParam(readJsonMessage, m, 'a message')
      // Fixed, plausible gas: the simulated chain charges none.
      return writeJsonMessage({ ...message, gasLimit: 12_000_000, gasFeeCap: 150_000n, gasPremium: 100_000n })
    },
    async 'Filecoin.MpoolPush'([sm]) {
      const signed = readParam(readJsonSignedMessage, sm, 'a signed message')
      const { message } = signed
      // Lotus's mempool checks the message (ValidForBlockInclusion) before its signature (lotus chain/messagepool/messagepool.go, Push).
      const problem = messageProblem(message)
      if (problem) throw new RpcError(LOTUS_ERROR, problem)
      if (!verifyMessageSignature(signed)) throw new RpcError(LOTUS_ERROR, 'message signature is not valid')
      if (message.nonce !== simnet.nonce(message.from))
        throw new RpcError(LOTUS_ERROR, `nonce ${message.nonce} is not the next one (${simnet.nonce(message.from)})`)
      const to = parseAddress(message.to)
      if (
        !to.ok ||
        to.address.protocol !== 0 ||
        to.address.id !== String(STORAGE_MARKET_ACTOR_ID) ||
        message.method !== METHOD_ADD_BALANCE
      ) {
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
      return { '/': signedMessageCid(signed).toString() }
    },
    async 'Filecoin.StateMinerInfo'([a]) {
      const info = await simnet.minerInfo(address(a))
      if (!info) throw new RpcError(LOTUS_ERROR, `failed to load miner actor: actor not found (${a})`)
      return {
        Owner: info.owner,
        Worker: info.worker,
        NewWorker: '<empty>',
        ControlAddresses: [],
        WorkerChangeEpoch: -1,
        PeerId: info.peerId,
        Multiaddrs: info.multiaddrs.length > 0 ? info.multiaddrs.map((m) => Buffer.from(multiaddr(m).bytes).toString('base64')) : null,
        WindowPoStProofType: 8,
        SectorSize: info.sectorSize,
        WindowPoStPartitionSectors: 2349,
        ConsensusFaultElapsed: -1,
        Beneficiary: info.owner,
      }
    },
    async 'Filecoin.StateListMiners'() {
      return simnet.listProviders()
    },
    async 'Filecoin.StateMarketStorageDeal'([id]) {
      if (typeof id !== 'number' || !Number.isSafeInteger(id) || id < 0)
        throw new RpcError(INVALID_PARAMS, 'expected a deal id as the first parameter')
      const deal = await simnet.getDeal(id)
      // Lotus's words (chain/stmgr/actors.go): a deal removed from the market state is "not found".
      if (!deal)
        throw new RpcError(
          LOTUS_ERROR,
          `deal ${id} not found - deal may not have completed sealing before deal proposal start epoch, or deal may have been slashed`,
        )
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
      // A node under load, as Lotus's gateway treats one (lotus gateway/handler.go RateLimitHandler): past the
      // per-host limit it answers 429 with no body, the call not made; past the per-connection API limit it
      // delays the call, which is then served (a client that gave up may find it done, as with a real node).
      if (fault?.kind === 'fail') {
        res.writeHead(429).end()
        return
      }
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
