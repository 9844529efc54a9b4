import { createHash } from 'node:crypto'
import type { IncomingMessage, ServerResponse } from 'node:http'
import { freePortAvoiding } from '../../shared/free-port.ts'
import type { Logger } from '../../shared/logger.ts'
import { startServer, type RunningServer, type ServerOptions } from '../../shared/http.ts'
import { multiaddr } from '@multiformats/multiaddr'
import { CID } from 'multiformats/cid'
import { paddedPieceSize } from '../../shared/piece.ts'
import type { Simnet } from './index.ts'
import { noFaults, type FaultPlan } from './faults.ts'
import { limitsForHosts } from './provider-host-limits.ts'
import { createProviderHost, handleQuery, handleRequests, type Libp2p, type ProviderHostLimits } from './provider-libp2p.ts'
import { providerProfile, type ProviderProfile } from './provider-kind.ts'
import { askResponder } from './provider-ask.ts'
import { dealResponder, type TakenDeal } from './provider-deal.ts'
import { statusResponder } from './provider-status.ts'
import { PROVIDER_PROTOCOLS, ProviderWireError, encodeQueryResponse } from './provider-wire.ts'
import { SimRetrievalError, type SimulatedProviders } from './sim-providers.ts'

/**
 * Each simulated storage provider on the wire, as the software it runs
 * (provider-kind.ts) would put it there:
 * - Boost: a libp2p host on TCP (ask, mk 1.2.1 and 1.2.0, status,
 *   transports) and booster-http for retrievals when it runs one;
 * - Curio: a libp2p host on WebSocket only, published as a /dns4 …/ws
 *   address, and its HTTP server for retrievals.
 * What a provider decides (take, refuse, fetch, lose, lie) is the simulated
 * providers'; how it is said is here, with the simulation's own codecs.
 */
export interface ProviderHosts {
  /** Provider id → where it listens. */
  endpoints: ReadonlyMap<string, ProviderEndpoint>
  close(): Promise<void>
}

export interface ProviderEndpoint {
  kind: ProviderProfile['kind']
  peerId: string
  /** As published in the provider's miner info. */
  multiaddrs: string[]
  /** Its HTTP server (retrievals); null when a Boost provider runs no booster-http. */
  httpUrl: string | null
}

export async function startProviderHosts(o: {
  simnet: Simnet
  providers: SimulatedProviders
  seed: string
  host?: string
  faults?: FaultPlan
  http?: ServerOptions
  /** Where the libp2p hosts tell of connections they refused or cut (a few lines a minute). */
  logger?: Pick<Logger, 'warn'>
}): Promise<ProviderHosts> {
  const listenHost = o.host ?? '127.0.0.1'
  const endpoints = new Map<string, ProviderEndpoint>()
  const stops: (() => Promise<void>)[] = []
  // An offline provider is one nobody can dial: it runs no host and publishes no address.
  const online: string[] = []
  for (const providerId of await o.simnet.listProviders()) if ((await o.simnet.providerTerms(providerId))?.online) online.push(providerId)
  // The hosts share the process's descriptors: each gets its share.
  const limits = limitsForHosts(online.length)
  try {
    for (const providerId of online) {
      const peer = await startOne({ ...o, limits }, providerId, listenHost)
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

async function startOne(
  o: {
    simnet: Simnet
    providers: SimulatedProviders
    seed: string
    faults?: FaultPlan
    http?: ServerOptions
    logger?: Pick<Logger, 'warn'>
    limits: Partial<ProviderHostLimits>
  },
  providerId: string,
  listenHost: string,
) {
  const { simnet, providers } = o
  const faults = o.faults ?? noFaults
  const profile = providerProfile(providerId)
  const curio = profile.kind === 'curio'
  // Stable identities under a seed: a provider keeps its peer id across restarts, as a real one does.
  const avoid = o.http?.avoidPorts
  const node: Libp2p = await createProviderHost({
    identitySeed: seedBytes(o.seed, 'peer', providerId),
    transport: curio ? 'ws' : 'tcp',
    listenHost,
    // Like its HTTP server's, its port is never one the stack's parts are configured on.
    listenPort: avoid?.size ? await freePortAvoiding(listenHost, avoid) : 0,
    logger: o.logger,
    limits: o.limits,
  })
  const workerKey = seedBytes(o.seed, 'worker', providerId)
  const deals = new Map<string, TakenDeal>()

  // The same connection rules as every other part (idle limit, deadlines, caps): a bare node:http server kept idle sockets 80 s.
  const http: RunningServer | null = profile.servesHttpRetrieval
    ? await startServer((req, res) => void retrieval(providers, providerId, profile, req, res), 0, listenHost, o.http)
    : null
  const httpUrl = http ? `http://${listenHost}:${http.port}` : null
  const port = Number(
    node
      .getMultiaddrs()[0]
      .getComponents()
      .find((c) => c.name === 'tcp')?.value,
  )
  // curio market/libp2p/libp2p.go + lib/urlhelper: Curio announces its domain name (/dns/<domain>/tcp/443/wss), not
  // the address it listens on; here the domain is localhost and there is no TLS in front, so /ws.
  const published = curio ? [`/dns4/localhost/tcp/${port}/ws`] : node.getMultiaddrs().map((m) => m.decapsulateCode(421).toString())

  // ---- ask, deals, status: each answer in its own module (provider-ask.ts, provider-deal.ts, provider-status.ts).
  await handleRequests(node, PROVIDER_PROTOCOLS.ask, askResponder({ simnet, providerId, workerKey }), faults)
  // boost lp2pimpl/net.go handleNewDealStream reads DealParams for both protocol versions (1.2.0's
  // missing fields stay false); curio market/libp2p/libp2p.go does the same.
  const takeDeal = dealResponder({ providers, providerId, deals })
  for (const protocol of [PROVIDER_PROTOCOLS.dealV121, PROVIDER_PROTOCOLS.dealV120]) {
    await handleRequests(node, protocol, takeDeal, faults)
  }
  const answerStatus = statusResponder({ simnet, providers, providerId, seed: o.seed, kind: profile.kind, deals })
  await handleRequests(node, PROVIDER_PROTOCOLS.status, answerStatus, faults)

  // ---- transports: boost retrievalmarket/lp2pimpl/transports.go, curio market/libp2p/libp2p.go handleNewTransportStream
  await handleQuery(
    node,
    PROVIDER_PROTOCOLS.transports,
    () => {
      const protocols: { name: string; addresses: Uint8Array[] }[] = [
        { name: 'libp2p', addresses: published.map((a) => multiaddr(a).bytes) },
      ]
      if (httpUrl) {
        const httpPort = new URL(httpUrl).port
        protocols.push({
          name: 'http',
          addresses: [multiaddr(curio ? `/dns4/localhost/tcp/${httpPort}/http` : `/ip4/${listenHost}/tcp/${httpPort}/http`).bytes],
        })
      }
      return encodeQueryResponse(protocols)
    },
    faults,
  )

  return {
    endpoint: { kind: profile.kind, peerId: node.peerId.toString(), multiaddrs: published, httpUrl },
    async stop() {
      await node.stop()
      await http?.close(0)
    },
  }
}

/**
 * Retrievals: `GET /ipfs/<cid>` with `Accept: application/vnd.ipld.raw` (or
 * `?format=raw`) answers the raw block; `GET /piece/<pieceCid>` the piece.
 * Boost (booster-http) serves the unsealed piece, the data padded with zeros
 * to (127/128 of) the piece size; Curio (market/retrieval/piecehandler.go)
 * serves the piece's raw size only, through http.ServeContent, so HEAD and
 * Range work there.
 */
async function retrieval(
  providers: SimulatedProviders,
  providerId: string,
  profile: ProviderProfile,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const abort = new AbortController()
  res.once('close', () => abort.abort(new Error('client went away')))
  const send = (status: number, text: string) => {
    if (res.headersSent) return void res.destroy()
    res.writeHead(status, { 'Content-Type': 'text/plain; charset=utf-8' }).end(text)
  }
  try {
    const url = new URL(req.url ?? '/', 'http://provider')
    const [, kind, id, ...rest] = url.pathname.split('/')
    const head = req.method === 'HEAD'
    if ((req.method !== 'GET' && !head) || rest.length > 0 || (kind !== 'ipfs' && kind !== 'piece')) return send(404, 'not found')
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
      res.writeHead(200, { 'Content-Type': 'application/vnd.ipld.raw', 'Content-Length': bytes.length })
      res.end(head ? undefined : bytes)
      return
    }
    const pieces = providers.retrievePiece(providerId, cid.toString(), { signal: abort.signal })
    if (head || req.headers.range) {
      // A HEAD or a Range needs the length first: read the piece whole (Curio answers these through http.ServeContent).
      const chunks: Uint8Array[] = []
      for await (const chunk of pieces) chunks.push(chunk)
      const data = Buffer.concat(chunks)
      return servePiece(req, res, profile.kind === 'boost' ? padToUnsealed(data) : data, head)
    }
    let sent = 0
    for await (const chunk of pieces) {
      if (!res.headersSent) res.writeHead(200, { 'Content-Type': 'application/octet-stream' })
      sent += chunk.length
      if (!res.write(chunk)) await new Promise((resolve) => res.once('drain', resolve))
    }
    if (!res.headersSent) res.writeHead(200, { 'Content-Type': 'application/octet-stream' })
    // Boost: the unsealed copy, the data then zeros up to (127/128 of) the piece size; Curio: the raw size only.
    let padding = profile.kind === 'boost' ? unsealedSize(sent) - sent : 0
    const zeros = new Uint8Array(64 * 1024)
    while (padding > 0) {
      const n = Math.min(padding, zeros.length)
      if (!res.write(zeros.subarray(0, n))) await new Promise((resolve) => res.once('drain', resolve))
      padding -= n
    }
    res.end()
  } catch (err) {
    if (err instanceof SimRetrievalError) return send(err.code === 'NOT_FOUND' ? 404 : 503, err.message)
    if (err instanceof ProviderWireError) return send(400, err.message)
    send(500, 'retrieval failed')
  }
}

const unsealedSize = (n: number) => (paddedPieceSize(n) / 128) * 127

function padToUnsealed(data: Uint8Array): Uint8Array {
  const out = new Uint8Array(unsealedSize(data.length))
  out.set(data, 0)
  return out
}

/** A whole body, or one `Range: bytes=a-b` of it (206), as Go's http.ServeContent answers. */
function servePiece(req: IncomingMessage, res: ServerResponse, body: Uint8Array, head: boolean): void {
  const range = /^bytes=(\d*)-(\d*)$/.exec(req.headers.range ?? '')
  if (range && (range[1] || range[2])) {
    const start = range[1] ? Number(range[1]) : Math.max(0, body.length - Number(range[2]))
    const end = range[1] && range[2] ? Math.min(Number(range[2]), body.length - 1) : body.length - 1
    if (start >= body.length || start > end) {
      res.writeHead(416, { 'Content-Range': `bytes */${body.length}` }).end()
      return
    }
    res.writeHead(206, {
      'Content-Type': 'application/octet-stream',
      'Content-Length': end - start + 1,
      'Content-Range': `bytes ${start}-${end}/${body.length}`,
      'Accept-Ranges': 'bytes',
    })
    res.end(head ? undefined : body.subarray(start, end + 1))
    return
  }
  res.writeHead(200, { 'Content-Type': 'application/octet-stream', 'Content-Length': body.length, 'Accept-Ranges': 'bytes' })
  res.end(head ? undefined : body)
}
