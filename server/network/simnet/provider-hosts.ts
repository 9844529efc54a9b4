import { createHash } from 'node:crypto'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { multiaddr } from '@multiformats/multiaddr'
import { CID } from 'multiformats/cid'
import { paddedPieceSize } from '../../shared/piece.ts'
import { createHost, serve, serveAnswer, type Libp2p } from '../boost/libp2p.ts'
import {
  PROTOCOL, WireError, decodeAskRequest, decodeDealParams, decodeDealStatusRequest, encodeAskResponse, encodeDealProposal,
  encodeDealResponse, encodeDealStatusResponse, encodeStorageAsk, encodeTransports, signedProposalCid, uuidBytes,
  type DealParams, type DealStatusResponse, type StorageAsk,
} from '../boost/wire.ts'
import { createSigner, verifySignature } from '../wallet/keys.ts'
import { publishMessageCid, type Simnet } from './index.ts'
import { SimRetrievalError, type SimulatedProviders } from './sim-providers.ts'

/**
 * Each simulated storage provider as a Boost would run it: a libp2p host on
 * loopback (ports chosen by the OS, published in its miner info on the
 * simulated chain) answering the ask, deal (1.2.1 and 1.2.0), deal status and
 * transports protocols, and an HTTP server for retrievals (`/ipfs/<cid>` as
 * raw blocks, `/piece/<pieceCid>`). What a provider decides (take, refuse,
 * fetch, lose, lie) is the simulated providers'; how it is said is the wire.
 */
export interface ProviderHosts {
  /** Provider id → where it listens. */
  endpoints: ReadonlyMap<string, { peerId: string; multiaddrs: string[]; httpUrl: string }>
  close(): Promise<void>
}

/** How long a stalled ('timeout') provider keeps a proposal stream open before giving up on it itself. */
const STALL_MS = 5 * 60_000

export async function startProviderHosts(o: { simnet: Simnet; providers: SimulatedProviders; seed: string; host?: string }): Promise<ProviderHosts> {
  const listenHost = o.host ?? '127.0.0.1'
  const endpoints = new Map<string, { peerId: string; multiaddrs: string[]; httpUrl: string }>()
  const stops: (() => Promise<void>)[] = []
  try {
    for (const providerId of await o.simnet.listProviders()) {
      // An offline provider is one nobody can dial: it runs no host and publishes no address.
      if (!(await o.simnet.providerTerms(providerId))?.online) continue
      const peer = await startOne(o, providerId, listenHost)
      stops.push(peer.stop)
      endpoints.set(providerId, peer.endpoint)
      o.simnet.publishPeer(providerId, { peerId: peer.endpoint.peerId, multiaddrs: peer.endpoint.multiaddrs })
    }
  } catch (err) {
    await Promise.all(stops.map((s) => s()))
    throw err
  }
  return {
    endpoints,
    async close() {
      for (const id of endpoints.keys()) o.simnet.publishPeer(id, null)
      await Promise.all(stops.map((s) => s()))
    },
  }
}

const seedBytes = (...parts: string[]) => createHash('sha256').update(parts.join('/')).digest()

async function startOne(o: { simnet: Simnet; providers: SimulatedProviders; seed: string }, providerId: string, listenHost: string) {
  const { simnet, providers } = o
  // Stable identities under a seed: a provider keeps its peer id across restarts, as a real one does.
  const node: Libp2p = await createHost({
    identitySeed: seedBytes(o.seed, 'peer', providerId),
    listen: [`/ip4/${listenHost}/tcp/0`],
  })
  const worker = createSigner(seedBytes(o.seed, 'worker', providerId), 'mainnet')
  const deals = new Map<string, { params: DealParams; signedProposalCid: string }>()

  const http = createServer((req, res) => void retrieval(providers, providerId, req, res))
  await new Promise<void>((resolve, reject) => http.once('error', reject).listen(0, listenHost, () => resolve()))
  const httpUrl = `http://${listenHost}:${(http.address() as AddressInfo).port}`

  await serve(node, PROTOCOL.ask, async (message) => {
    const miner = decodeAskRequest(message, 'mainnet')
    const terms = miner === providerId ? await simnet.providerTerms(providerId) : null
    if (!terms) return encodeAskResponse(null, null)
    const head = simnet.headEpoch()
    const ask: StorageAsk = {
      price: terms.unverifiedPrice, verifiedPrice: terms.verifiedPrice, minPieceSize: terms.minPieceSize, maxPieceSize: terms.maxPieceSize,
      miner: providerId, timestamp: head, expiry: head + 2880, seqNo: 0,
    }
    return encodeAskResponse(ask, await worker.sign(encodeStorageAsk(ask)))
  })

  for (const protocol of PROTOCOL.deal) {
    await serve(node, protocol, async (message) => {
      let params: DealParams
      try {
        params = decodeDealParams(message, 'mainnet')
      } catch (err) {
        return encodeDealResponse({ accepted: false, message: `invalid deal params: ${(err as Error).message}` })
      }
      const { proposal } = params
      if (proposal.Provider !== providerId) return encodeDealResponse({ accepted: false, message: `proposal is for ${proposal.Provider}, this is ${providerId}` })
      if (!verifySignature(proposal.Client, encodeDealProposal(proposal), params.clientSignature)) {
        return encodeDealResponse({ accepted: false, message: 'invalid client signature' })
      }
      const answer = await providers.propose(proposal, params.transfer, { proposalId: params.dealUuid, signal: AbortSignal.timeout(STALL_MS) })
      if (answer.accepted) deals.set(params.dealUuid, { params, signedProposalCid: signedProposalCid(proposal, params.clientSignature) })
      return encodeDealResponse(answer.accepted ? { accepted: true, message: '' } : { accepted: false, message: answer.reason })
    })
  }

  await serve(node, PROTOCOL.status, async (message) => {
    const request = decodeDealStatusRequest(message)
    const deal = deals.get(request.dealUuid)
    const none = (error: string): DealStatusResponse => ({ dealUuid: request.dealUuid, error, status: null, transferSize: 0, bytesReceived: 0 })
    if (!deal) return encodeDealStatusResponse(none(`no deal found with UUID ${request.dealUuid}`))
    // Only the client who proposed may ask (Boost checks the signature over the UUID's bytes against the proposal's client).
    if (!verifySignature(deal.params.proposal.Client, uuidBytes(request.dealUuid), request.signature)) return encodeDealStatusResponse(none('invalid signature'))
    const state = providers.proposalState(providerId, request.dealUuid)
    const published = state.state === 'published' ? state.dealId : 0
    return encodeDealStatusResponse({
      dealUuid: request.dealUuid,
      error: '',
      status: {
        error: state.state === 'failed' ? state.reason : state.state === 'unknown' ? 'deal lost by the provider' : '',
        checkpoint: state.state === 'published' ? 'PublishConfirmed' : state.state === 'transferring' ? 'Accepted' : 'Complete',
        sealingStatus: '',
        proposal: deal.params.proposal,
        signedProposalCid: deal.signedProposalCid,
        // The simulated chain has no messages; the publish CID names the deal's publication there.
        publishCid: published ? publishMessageCid(published) : null,
        chainDealId: published,
      },
      transferSize: deal.params.transfer.size,
      bytesReceived: state.state === 'transferring' ? 0 : deal.params.transfer.size,
    })
  })

  await serveAnswer(node, PROTOCOL.transports, () =>
    encodeTransports([
      { name: 'http', addresses: [multiaddr(`/ip4/${listenHost}/tcp/${new URL(httpUrl).port}/http`).bytes] },
      { name: 'libp2p', addresses: node.getMultiaddrs().map((m) => m.bytes) },
    ]),
  )

  return {
    endpoint: { peerId: node.peerId.toString(), multiaddrs: node.getMultiaddrs().map((m) => m.decapsulateCode(421).toString()), httpUrl },
    async stop() {
      await node.stop()
      http.closeAllConnections()
      await new Promise<void>((resolve) => http.close(() => resolve()))
    },
  }
}

/**
 * Retrievals as Boost and Curio serve them: `GET /ipfs/<cid>` with
 * `Accept: application/vnd.ipld.raw` (or `?format=raw`) answers the raw
 * block; `GET /piece/<pieceCid>` the piece's data, padded with zeros to its
 * unpadded size as an unsealed copy is.
 */
async function retrieval(providers: SimulatedProviders, providerId: string, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const abort = new AbortController()
  res.once('close', () => abort.abort(new Error('client went away')))
  const send = (status: number, text: string) => {
    if (res.headersSent) return void res.destroy()
    res.writeHead(status, { 'Content-Type': 'text/plain; charset=utf-8' }).end(text)
  }
  try {
    const url = new URL(req.url ?? '/', 'http://provider')
    const [, kind, id, ...rest] = url.pathname.split('/')
    if (req.method !== 'GET' || rest.length > 0 || (kind !== 'ipfs' && kind !== 'piece')) return send(404, 'not found')
    let cid: CID
    try {
      cid = CID.parse(id)
    } catch {
      return send(400, 'invalid CID')
    }
    if (kind === 'ipfs') {
      const raw = url.searchParams.get('format') === 'raw' || (req.headers.accept ?? '').includes('application/vnd.ipld.raw')
      if (!raw) return send(406, 'only raw blocks (application/vnd.ipld.raw) are served')
      const pieceCid = await providers.pieceOfBlock(providerId, cid.toString())
      if (!pieceCid) return send(404, 'block not found')
      const bytes = await providers.retrieveBlock(providerId, pieceCid, cid.toString(), { signal: abort.signal })
      res.writeHead(200, { 'Content-Type': 'application/vnd.ipld.raw', 'Content-Length': bytes.length }).end(bytes)
      return
    }
    let sent = 0
    for await (const chunk of providers.retrievePiece(providerId, cid.toString(), { signal: abort.signal })) {
      if (!res.headersSent) res.writeHead(200, { 'Content-Type': 'application/octet-stream' })
      sent += chunk.length
      if (!res.write(chunk)) await new Promise((resolve) => res.once('drain', resolve))
    }
    if (!res.headersSent) res.writeHead(200, { 'Content-Type': 'application/octet-stream' })
    // The unsealed piece: the data, then zeros up to (127/128 of) the piece size.
    let padding = (paddedPieceSize(sent) / 128) * 127 - sent
    const zeros = new Uint8Array(64 * 1024)
    while (padding > 0) {
      const n = Math.min(padding, zeros.length)
      if (!res.write(zeros.subarray(0, n))) await new Promise((resolve) => res.once('drain', resolve))
      padding -= n
    }
    res.end()
  } catch (err) {
    if (err instanceof SimRetrievalError) return send(err.code === 'NOT_FOUND' ? 404 : 503, err.message)
    if (err instanceof WireError) return send(400, err.message)
    send(500, 'retrieval failed')
  }
}
