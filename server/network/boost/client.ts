import { multiaddr } from '@multiformats/multiaddr'
import type { AddressNetwork } from '../../shared/address.ts'
import { isNetworkError, NetworkError } from '../errors.ts'
import type { NetworkPort } from '../types.ts'
import type { Signer } from '../wallet/keys.ts'
import { createHost, request, type Libp2p, type PeerAddress } from './libp2p.ts'
import {
  PROTOCOL,
  decodeAskResponse,
  decodeDealResponse,
  decodeDealStatusResponse,
  decodeTransports,
  encodeAskRequest,
  encodeClientDealProposal,
  encodeDealParams,
  encodeDealProposal,
  encodeDealStatusRequest,
  uuidBytes,
  type DealParams,
  type DealResponse,
  type DealStatusResponse,
  type StorageAsk,
} from './wire.ts'

/**
 * The client side of the storage market protocols, as a Boost client
 * (CIDgravity's gateway, `boost deal`) speaks them to a Boost or Curio
 * provider: the provider's peer is found on chain (StateMinerInfo), its ask,
 * proposals and deal status go over libp2p, and retrievals over the HTTP
 * endpoint its transports protocol names. The same code talks to the
 * simulated providers on loopback and to real ones.
 */
export interface ProviderClient {
  ask(provider: string, signal: AbortSignal): Promise<StorageAsk | null>
  /** Signs the proposal and sends it; the protocol is 1.2.1 where the provider speaks it, else 1.2.0. */
  propose(
    input: Omit<DealParams, 'clientSignature'>,
    signal: AbortSignal,
  ): Promise<DealResponse & { protocol: string; signedProposal: Uint8Array }>
  status(provider: string, dealUuid: string, signal: AbortSignal): Promise<DealStatusResponse>
  /** Base URL of the provider's HTTP retrieval (`/ipfs`, `/piece`), or null when it serves none. */
  retrievalUrl(provider: string, signal: AbortSignal): Promise<string | null>
  close(): Promise<void>
}

export interface ProviderDirectory {
  /** The provider's libp2p peer id and addresses as the chain publishes them; null when it publishes none. */
  peerOf(provider: string): Promise<PeerAddress | null>
}

/** Providers as the chain publishes them (StateMinerInfo), through any chain adapter. */
export function chainDirectory(chain: Pick<NetworkPort, 'minerInfo'>): ProviderDirectory {
  return {
    async peerOf(provider) {
      const info = await chain.minerInfo(provider)
      return info?.peerId ? { peerId: info.peerId, multiaddrs: info.multiaddrs } : null
    },
  }
}

const PEER_TTL_MS = 60_000

/** Without a signer the client only reads (ask, transports): proposals and status need the wallet key. */
export async function createProviderClient(o: {
  directory: ProviderDirectory
  signer?: Signer
  network: AddressNetwork
  host?: Libp2p
}): Promise<ProviderClient> {
  const signerOf = (): Signer => {
    if (!o.signer) throw new Error('this client has no wallet key: it can ask, not propose')
    return o.signer
  }
  const node = o.host ?? (await createHost())
  const peers = new Map<string, { at: number; peer: Promise<PeerAddress | null> }>()
  const retrieval = new Map<string, { at: number; url: Promise<string | null> }>()

  const peerOf = (provider: string): Promise<PeerAddress | null> => {
    const cached = peers.get(provider)
    if (cached && Date.now() - cached.at < PEER_TTL_MS) return cached.peer
    const peer = o.directory.peerOf(provider)
    peers.set(provider, { at: Date.now(), peer })
    peer.catch(() => peers.delete(provider))
    return peer
  }

  const ask = async (provider: string, protocols: readonly string[], message: Uint8Array, signal: AbortSignal) => {
    const peer = await peerOf(provider)
    if (!peer) throw new NetworkError('UNREACHABLE', `provider ${provider} publishes no libp2p peer on chain`)
    try {
      return await request(node, peer, protocols, message, signal)
    } catch (err) {
      // Its addresses may have changed (a restart on new ports): look them up again next time.
      peers.delete(provider)
      throw err
    }
  }

  return {
    async ask(provider, signal) {
      return decodeAskResponse((await ask(provider, [PROTOCOL.ask], encodeAskRequest(provider), signal)).reply, o.network)
    },
    async propose(input, signal) {
      const signer = signerOf()
      if (input.proposal.Client !== signer.address)
        throw new Error(`the proposal is from ${input.proposal.Client}, the wallet key is ${signer.address}`)
      const clientSignature = await signer.sign(encodeDealProposal(input.proposal))
      const params: DealParams = { ...input, clientSignature }
      // The newest version the provider speaks; the message is written for that one.
      let answer: { protocol: string; reply: unknown } | undefined
      let lastError: unknown
      for (const protocol of PROTOCOL.deal) {
        try {
          answer = await ask(input.proposal.Provider, [protocol], encodeDealParams(params, protocol), signal)
          break
        } catch (err) {
          lastError = err
          // Only a provider that refused this version is asked the next one.
          if (!isNetworkError(err, 'REFUSED')) throw err
        }
      }
      if (!answer) throw lastError
      return {
        ...decodeDealResponse(answer.reply),
        protocol: answer.protocol,
        signedProposal: encodeClientDealProposal(params.proposal, clientSignature),
      }
    },
    async status(provider, dealUuid, signal) {
      const signature = await signerOf().sign(uuidBytes(dealUuid))
      return decodeDealStatusResponse(
        (await ask(provider, [PROTOCOL.status], encodeDealStatusRequest({ dealUuid, signature }), signal)).reply,
        o.network,
      )
    },
    retrievalUrl(provider, signal) {
      const cached = retrieval.get(provider)
      if (cached && Date.now() - cached.at < PEER_TTL_MS) return cached.url
      const url = (async () => {
        // The transports query has no request body: the provider answers as soon as the stream opens.
        const { reply } = await ask(provider, [PROTOCOL.transports], new Uint8Array(0), signal)
        for (const p of decodeTransports(reply)) {
          if (p.name !== 'http') continue
          for (const a of p.addresses) {
            const url = httpUrlOf(a)
            if (url) return url
          }
        }
        return null
      })()
      retrieval.set(provider, { at: Date.now(), url })
      url.catch(() => retrieval.delete(provider))
      return url
    },
    async close() {
      if (!o.host) await node.stop()
    },
  }
}

/** `/ip4/1.2.3.4/tcp/80/http`, `/dns/sp.example/tcp/443/https` (or `/tls/http`) as a base URL. */
export function httpUrlOf(bytes: Uint8Array): string | null {
  let text: string
  try {
    text = multiaddr(bytes).toString()
  } catch {
    return null
  }
  const m = /^\/(ip4|ip6|dns|dns4|dns6)\/([^/]+)\/tcp\/(\d+)\/(https|tls\/http|http)(?:\/.*)?$/.exec(text)
  if (!m) return null
  const host = m[1] === 'ip6' ? `[${m[2]}]` : m[2]
  return `${m[4] === 'http' ? 'http' : 'https'}://${host}:${m[3]}`
}
