import * as dagCbor from '@ipld/dag-cbor'
import { multiaddr } from '@multiformats/multiaddr'
import { CID } from 'multiformats/cid'
import { addressBytesOf, parseAddress } from '../../shared/address.ts'
import { epochToTimestamp, type NetworkClock } from '../../shared/epochs.ts'
import type { DealProposal, MarketDeal, MinerInfo, NetworkPort } from '../types.ts'
import { decodeRlePlus } from './bitfield.ts'
import { isNetworkError, NetworkError, protocolError } from '../errors.ts'
import { createJsonRpc, type JsonRpcCall, type JsonRpcOptions } from './json-rpc.ts'

export interface LotusOptions {
  url: string
  token?: string
  clock: NetworkClock
  fetch?: typeof fetch
  timeoutMs?: number
  /** How a call a busy node refused is sent again (json-rpc.ts; default: twice, from 0.5 s). */
  busyRetry?: JsonRpcOptions['busyRetry']
}

interface LotusMarketDeal {
  Proposal: DealProposal & { Label: string | Record<string, unknown> }
  State: { SectorStartEpoch: number; LastUpdatedEpoch: number; SlashEpoch: number }
}

/** A PublishStorageDeals message that is on chain but did not publish the deal asked for. */
const publishFailed = (publishCid: string, exitCode: number, message: string) =>
  new NetworkError('REJECTED_BY_CHAIN', message, { messageCid: publishCid, exitCode })

/**
 * The node's own answer for a deal id its market does not hold (never published, or removed once
 * terminated, expired or not activated in time): "deal <id> not found - deal may not have completed
 * sealing before deal proposal start epoch, or deal may have been slashed" (lotus chain/stmgr/actors.go,
 * GetStorageDeal), sent with go-jsonrpc's code 1 for an error of no registered type (go-jsonrpc
 * handler.go, createError); Forest words it alike and sends -32603, its code for every internal error
 * (forest src/rpc/methods/state.rs, src/rpc/error.rs). Only this means absent: anything else (a busy
 * node, a proxy's 5xx, a timeout, state the node cannot load) says nothing about the deal.
 */
export function dealNotFound(err: NetworkError, dealId: number): boolean {
  return (err.rpcCode === 1 || err.rpcCode === -32603) && new RegExp(`^deal ${dealId} not found\\b`).test(err.message)
}

/**
 * The node has no actor at that address: Lotus answers StateLookupID with its ErrActorNotFound, code
 * 11 ("actor not found", lotus api/api_errors.go: jsonrpc.FirstUserCode 2 + 9), and older nodes, Forest,
 * and StateMinerInfo ("failed to load miner actor: … actor not found") with the words in a wrapped error.
 */
const actorNotFound = (err: NetworkError) => err.rpcCode === 11 || /\bactor not found\b/.test(err.message)

/** The address is no storage provider: no actor there, or one whose code is not a miner's (lotus chain/actors/builtin/miner, Load). */
const notAMiner = (err: NetworkError) => actorNotFound(err) || /\bunknown actor code\b/.test(err.message)

export interface LotusNetwork extends NetworkPort {
  readonly kind: 'lotus'
}

/** The market actor (f05), whose state holds NextID. */
const MARKET_ACTOR = 'f05'

/**
 * Reads the chain from a Lotus or Forest node over JSON-RPC, with only the
 * methods of Lotus's gateway API (api/api_gateway.go, Gateway), so that a
 * public gateway node serves it. Deal terms of providers are not on chain, so
 * `providerTerms` answers null (the service then reports SERVICE_UNAVAILABLE
 * rather than guessing).
 */
export function createLotusNetwork(options: LotusOptions): LotusNetwork {
  const call: JsonRpcCall = createJsonRpc(options)

  /** `p`'s result, or null when the node answers `absent` (its own "not found"); every other error is thrown. */
  const orAbsent = async <T>(p: Promise<T>, absent: (err: NetworkError) => boolean): Promise<T | null> => {
    try {
      return await p
    } catch (err) {
      if (isNetworkError(err, 'REJECTED_BY_CHAIN') && absent(err)) return null
      throw err
    }
  }

  const toDeal = (dealId: number, d: LotusMarketDeal): MarketDeal => ({
    dealId,
    proposal: { ...d.Proposal, Label: typeof d.Proposal.Label === 'string' ? d.Proposal.Label : '' },
    state: { SectorStartEpoch: d.State.SectorStartEpoch, LastUpdatedEpoch: d.State.LastUpdatedEpoch, SlashEpoch: d.State.SlashEpoch },
    // The market actor does not keep the publish epoch.
    publishedEpoch: -1,
  })

  const lookupId = async (address: string): Promise<string | null> => {
    const parsed = parseAddress(address)
    if (!parsed.ok) return null
    if (parsed.address.protocol === 0) return address
    return orAbsent(call<string>('Filecoin.StateLookupID', [address, null]), actorNotFound)
  }

  return {
    kind: 'lotus',
    clock: options.clock,
    async chainHead() {
      const head = await call<{ Height: number }>('Filecoin.ChainHead', [])
      return { epoch: head.Height, timestamp: epochToTimestamp(options.clock, head.Height) }
    },
    lookupId,
    async dataCap(address) {
      const cap = await call<string | null>('Filecoin.StateVerifiedClientStatus', [address, null])
      return cap === null ? null : BigInt(cap)
    },
    async collateralBounds(pieceSize, verified) {
      const b = await call<{ Min: string; Max: string }>('Filecoin.StateDealProviderCollateralBounds', [pieceSize, verified, null])
      return { min: BigInt(b.Min), max: BigInt(b.Max) }
    },
    async marketBalance(address) {
      const b = await call<{ Escrow: string; Locked: string }>('Filecoin.StateMarketBalance', [address, null])
      return { escrow: BigInt(b.Escrow), locked: BigInt(b.Locked) }
    },
    async minerInfo(address): Promise<MinerInfo | null> {
      const id = await lookupId(address)
      if (!id) return null
      const info = await orAbsent(
        call<{ Owner: string; Worker: string; PeerId: string | null; Multiaddrs: string[] | null; SectorSize: number }>(
          'Filecoin.StateMinerInfo',
          [id, null],
        ),
        notAMiner,
      )
      return (
        info && {
          id,
          owner: info.Owner,
          worker: info.Worker,
          peerId: info.PeerId ?? null,
          multiaddrs: multiaddrsOf(info.Multiaddrs),
          sectorSize: info.SectorSize,
        }
      )
    },
    async getDeal(dealId) {
      const d = await orAbsent(call<LotusMarketDeal>('Filecoin.StateMarketStorageDeal', [dealId, null]), (err) => dealNotFound(err, dealId))
      return d && toDeal(dealId, d)
    },
    async nextDealId() {
      // The market state's root only (a few CIDs and counters): its deals stay behind their CIDs.
      const actor = await call<{ State: { NextID: number } }>('Filecoin.StateReadState', [MARKET_ACTOR, null])
      const next = actor?.State?.NextID
      if (typeof next !== 'number' || !Number.isSafeInteger(next) || next < 0) throw protocolError('the market actor state has no NextID')
      return next
    },
    async networkVersion() {
      return call<number>('Filecoin.StateNetworkVersion', [null])
    },
    async publishedDealId(publishCid, proposal) {
      // Lotus api/api_full.go MsgLookup; a limit of -1 searches the whole chain, and a message
      // replaced with other gas only (allowReplaced) is the same publication.
      const lookup = await call<MsgLookup | null>('Filecoin.StateSearchMsg', [null, { '/': publishCid }, -1, true])
      if (!lookup) return null
      if (lookup.Receipt.ExitCode !== 0)
        throw publishFailed(
          publishCid,
          lookup.Receipt.ExitCode,
          `PublishStorageDeals ${publishCid} failed with exit code ${lookup.Receipt.ExitCode}`,
        )
      // A provider publishes deals in batches: our proposal's place in the executed message's params,
      // as Lotus's own client finds it (lotus storage/pipeline/currentdealinfo.go).
      const message = await call<{ Params: string | null }>('Filecoin.ChainGetMessage', [lookup.Message])
      const proposalIndex = proposalIndexIn(message.Params, proposal)
      if (proposalIndex < 0) throw publishFailed(publishCid, 0, `PublishStorageDeals ${publishCid} does not publish this proposal`)
      const { ids, valid } = decodePublishReturn(lookup.Receipt.Return)
      // IDs holds the ids of the valid proposals only, in the order of the batch (go-state-types builtin/v9/market PublishStorageDealsReturn).
      const rank = valid.indexOf(proposalIndex)
      if (rank < 0 || rank >= ids.length)
        throw publishFailed(publishCid, 0, `proposal ${proposalIndex} of PublishStorageDeals ${publishCid} was not valid`)
      return ids[rank]
    },
    async listProviders() {
      return []
    },
    async providerTerms() {
      return null
    },
    async close() {},
  }
}

interface MsgLookup {
  Message: { '/': string }
  Receipt: { ExitCode: number; Return: string | null; GasUsed: number }
  Height: number
}

/**
 * Where `proposal` is in a PublishStorageDeals message's params
 * ([[ClientDealProposal…]], each [proposal tuple, signature]: go-state-types
 * builtin/v9/market PublishStorageDealsParams), matched on what makes it
 * ours (piece, size, provider, epochs); -1 when it is not there.
 */
export function proposalIndexIn(base64Params: string | null, proposal: DealProposal): number {
  let value: unknown
  try {
    value = dagCbor.decode(Buffer.from(base64Params ?? '', 'base64'))
  } catch {
    throw protocolError('not PublishStorageDeals params')
  }
  const deals = Array.isArray(value) && Array.isArray(value[0]) ? (value[0] as unknown[]) : null
  if (!deals) throw protocolError('not PublishStorageDeals params')
  const provider = addressBytesOf(proposal.Provider)
  return deals.findIndex((d) => {
    const t = Array.isArray(d) && Array.isArray(d[0]) ? (d[0] as unknown[]) : []
    return (
      t.length === 11 &&
      CID.asCID(t[0])?.toString() === proposal.PieceCID['/'] &&
      t[1] === proposal.PieceSize &&
      t[4] instanceof Uint8Array &&
      Buffer.from(t[4]).equals(provider) &&
      t[6] === proposal.StartEpoch &&
      t[7] === proposal.EndEpoch
    )
  })
}

/** The CBOR tuple [IDs, ValidDeals] of a PublishStorageDeals return, base64 in a receipt. */
export function decodePublishReturn(base64: string | null): { ids: number[]; valid: number[] } {
  let value: unknown
  try {
    value = dagCbor.decode(Buffer.from(base64 ?? '', 'base64'))
  } catch (err) {
    throw protocolError('not a PublishStorageDeals return', err)
  }
  if (!Array.isArray(value) || value.length !== 2 || !Array.isArray(value[0]) || !(value[1] instanceof Uint8Array)) {
    throw protocolError('not a PublishStorageDeals return')
  }
  const ids = value[0].map((id: unknown) => (typeof id === 'number' ? id : typeof id === 'bigint' ? Number(id) : NaN))
  if (!ids.every((id) => Number.isSafeInteger(id) && id >= 0)) throw protocolError('not a PublishStorageDeals return: bad deal id')
  return { ids, valid: decodeRlePlus(value[1]) }
}

/** The miner actors on the node's chain (`Filecoin.StateListMiners`): a devnet's handful; on mainnet, far too many to list. */
export async function lotusMiners(call: JsonRpcCall): Promise<string[]> {
  const miners = await call<string[] | null>('Filecoin.StateListMiners', [null])
  return Array.isArray(miners) ? miners.filter((m): m is string => typeof m === 'string') : []
}

/** The node's network name and block time (`Filecoin.StateGetNetworkParams`), to check we talk to the network we expect. */
export async function lotusNetworkParams(call: JsonRpcCall): Promise<{ networkName: string; blockDelaySecs: number }> {
  const p = await call<{ NetworkName: string; BlockDelaySecs: number }>('Filecoin.StateGetNetworkParams', [])
  return { networkName: p.NetworkName, blockDelaySecs: p.BlockDelaySecs }
}

/** StateMinerInfo's Multiaddrs: base64 of multiaddr bytes; ones that do not parse are left out. */
function multiaddrsOf(encoded: string[] | null): string[] {
  return (encoded ?? []).flatMap((b64) => {
    try {
      return [multiaddr(Buffer.from(b64, 'base64')).toString()]
    } catch {
      return []
    }
  })
}
