import { multiaddr } from '@multiformats/multiaddr'
import { parseAddress } from '../../shared/address.ts'
import { epochToTimestamp, type NetworkClock } from '../../shared/epochs.ts'
import type { DealProposal, MarketDeal, MinerInfo, NetworkPort } from '../types.ts'
import { createJsonRpc, JsonRpcError, type JsonRpcCall } from './json-rpc.ts'

export interface LotusOptions {
  url: string
  token?: string
  clock: NetworkClock
  fetch?: typeof fetch
  timeoutMs?: number
}

interface LotusMarketDeal {
  Proposal: DealProposal & { Label: string | Record<string, unknown> }
  State: { SectorStartEpoch: number; LastUpdatedEpoch: number; SlashEpoch: number }
}

/**
 * Reads the chain from a Lotus or Forest node over JSON-RPC. Deal terms of
 * providers are not on chain, so `providerTerms` answers null (the service
 * then reports SERVICE_UNAVAILABLE rather than guessing).
 */
export function createLotusNetwork(options: LotusOptions): NetworkPort {
  const call: JsonRpcCall = createJsonRpc(options)

  // Lotus's "actor not found" comes back as a JSON-RPC error; that is a "no", not an outage.
  const orNull = async <T>(p: Promise<T>): Promise<T | null> => {
    try {
      return await p
    } catch (err) {
      if (err instanceof JsonRpcError) return null
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
    return orNull(call<string>('Filecoin.StateLookupID', [address, null]))
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
      const info = await orNull(
        call<{ Owner: string; Worker: string; PeerId: string | null; Multiaddrs: string[] | null; SectorSize: number }>('Filecoin.StateMinerInfo', [id, null]),
      )
      return info && { id, owner: info.Owner, worker: info.Worker, peerId: info.PeerId ?? null, multiaddrs: multiaddrsOf(info.Multiaddrs), sectorSize: info.SectorSize }
    },
    networkVersion: () => call<number>('Filecoin.StateNetworkVersion', [null]),
    // Placeholder until StateSearchMsg is read (being written beside this change).
    publishedDealId: async () => null,
    async getDeal(dealId) {
      const d = await orNull(call<LotusMarketDeal>('Filecoin.StateMarketStorageDeal', [dealId, null]))
      return d && toDeal(dealId, d)
    },
    async *dealsByClients(clientIds) {
      // StateMarketDeals returns the whole market (large on mainnet); fine for a
      // periodic sync, and the only chain-native way to list a client's deals.
      const all = await call<Record<string, LotusMarketDeal>>('Filecoin.StateMarketDeals', [null])
      const wanted = new Set(clientIds)
      const ids = Object.keys(all)
        .filter((k) => wanted.has(all[k].Proposal.Client))
        .map(Number)
        .sort((a, b) => a - b)
      for (const id of ids) yield toDeal(id, all[String(id)])
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
