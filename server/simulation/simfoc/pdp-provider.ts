import type { RequestListener, ServerResponse } from 'node:http'
import { join } from 'node:path'
import type { Address } from 'viem'
import { startServer, type RunningServer, type ServerOptions } from '../../shared/http.ts'
import { createLineLimit, leftOutField } from '../../shared/line-limit.ts'
import type { FaultPlan } from '../simnet/faults.ts'
import type { PdpChain } from './pdp-provider-chain.ts'
import { ProviderDb, type DataSet, type DataSetPiece, type ProofRecord } from './pdp-provider-db.ts'
import { createPdpRoutes } from './pdp-provider-routes.ts'
import { PieceStore } from './pdp-provider-store.ts'
import { CurioTasks, type TaskLog } from './pdp-provider-tasks.ts'
import { createUploadBodies } from './pdp-provider-upload-body.ts'

export { overallPullStatus } from './pdp-provider-pull.ts'

/**
 * A simulated Curio PDP provider: Curio's PDP HTTP API (pdp/handlers.go,
 * handlers_upload.go, handlers_create.go, handlers_add.go, handlers_pull.go)
 * on loopback, with the same routes, status codes, headers, JSON and error
 * texts, and what Curio then does on chain (tasks/pdpv0): it sends its own
 * createDataSet/addPieces, follows their receipts, schedules proving periods
 * and proves possession of the pieces it stores, from their bytes on disk.
 */

/**
 * Faults a test or demo gives one provider:
 * `refuse` — it answers every write (and ping) 503 Service Unavailable, as
 *   Curio's ping does when its alerts have problems;
 * `stall` — it stops reading uploads and pulls (the client's upload hangs);
 * `lose` — the bytes of its pieces are gone, now and for every later piece:
 *   retrieval answers 404 and proofs cannot be built;
 * `stop-proving` — it keeps moving proving periods but sends no proofs.
 */
export type PdpProviderFault = 'refuse' | 'stall' | 'lose' | 'stop-proving'

export interface PdpProviderOptions {
  /** Where pieces and the provider's database live. */
  dir: string
  chain: PdpChain
  /** Record keepers (listener contracts) a public service may use: the FWSS address (Curio contract.IsRecordKeeperAllowed). */
  recordKeepers: Address[]
  fault?: PdpProviderFault | null
  /** Seeded faults: some uploads and pulls stall or break part-way (site `transfer`). */
  faults?: FaultPlan
  /** Accept http:// pull sources (Curio's CURIO_PULL_ALLOW_INSECURE=1, needed on loopback). Default true. */
  pullAllowInsecure?: boolean
  /** An upload that sends nothing for this long fails (Curio's TimeoutLimitReader: 5 s). */
  uploadIdleTimeoutMs?: number
  /** A pull source that sends nothing for this long fails. Default 30 s. */
  pullIdleTimeoutMs?: number
  /** How often the provider looks at the chain head (Curio reacts to each new tipset). Default 500 ms; 0 = only on `tick()`. */
  pollMs?: number
  fetch?: typeof fetch
  log?: TaskLog
  /** Connection rules of its port (connection caps, idle and body deadlines), as every part's. */
  http?: ServerOptions
}

export interface PdpProvider {
  /** The provider's address on chain (its key's). */
  readonly address: Address
  /** The PDP API and retrieval, for any node:http server or Express app. */
  readonly handler: RequestListener
  /** The service URL once `listen` has run. */
  readonly url: string | null
  /** Listens on loopback (port 0: any free port) and starts following the chain; returns the service URL. */
  listen(port?: number, host?: string): Promise<string>
  /** One pass of the chain-driven tasks (what a new tipset triggers). */
  tick(): Promise<void>
  /** Resolves once the fault has taken effect (a `lose` has removed the bytes). */
  setFault(fault: PdpProviderFault | null): Promise<void>
  readonly fault: PdpProviderFault | null
  /** Uploads held by the `stall` fault right now. */
  stalledUploads(): number
  /** The provider's data sets and pieces as its database has them. */
  dataSets(): (DataSet & { pieces: DataSetPiece[] })[]
  /** The proofs it has sent. */
  proofs(): ProofRecord[]
  close(): Promise<void>
}

/** What the connection layer answers itself (a 408, a 503 over the cap), as Go's http.Error writes a text. */
const goErrorBody = (message: string) => ({ type: 'text/plain; charset=utf-8', text: `${message}\n` })

const silentLog: TaskLog = { debug() {}, info() {}, warn() {}, error() {} }

/** The piece store and the database as the last run left them. */
async function openProviderState(dir: string): Promise<{ store: PieceStore; db: ProviderDb }> {
  const store = new PieceStore(join(dir, 'store'))
  await store.init()
  const db = new ProviderDb(join(dir, 'db.json'))
  await db.load()
  for (const ref of db.t.pieceRefs) await store.meta(ref.pieceCid)
  // Pulls cut short by a restart run again (Curio retries a task whose machine went away).
  for (const pull of db.t.pulls) for (const item of pull.items) if (item.status === 'inProgress') item.status = 'retrying'
  return { store, db }
}

/**
 * Wires a provider from its parts: the routes and their handlers by group of
 * endpoints (pdp-provider-routes.ts), the upload bodies and the chain-driven
 * tasks, all over one database and piece store. What is left here is the
 * provider's own life: its faults, listening, following the chain, closing.
 */
export async function createPdpProvider(options: PdpProviderOptions): Promise<PdpProvider> {
  const { chain } = options
  const log = options.log ?? silentLog
  const { store, db } = await openProviderState(options.dir)
  let fault: PdpProviderFault | null = options.fault ?? null
  let server: RunningServer | null = null
  let url: string | null = null
  let poller: NodeJS.Timeout | null = null
  const openRequests = new Set<ServerResponse>()
  const passFailures = createLineLimit({ perWindow: 5 })

  const tasks = new CurioTasks({
    db,
    store,
    chain,
    log,
    provingStopped: () => fault === 'stop-proving',
    pullsStalled: () => fault === 'stall',
    fetch: options.fetch ?? fetch,
    faults: options.faults,
    pullIdleTimeoutMs: options.pullIdleTimeoutMs ?? 30_000,
  })
  const bodies = createUploadBodies({
    faults: options.faults,
    idleTimeoutMs: options.uploadIdleTimeoutMs ?? 5000,
    stalled: () => fault === 'stall',
  })

  if (fault === 'lose') await store.lose()

  const routes = createPdpRoutes({
    db,
    store,
    chain,
    log,
    bodies,
    recordKeepers: new Set(options.recordKeepers.map((a) => a.toLowerCase())),
    pullAllowInsecure: options.pullAllowInsecure ?? true,
    startPulls: () => tasks.startPulls(),
    refusing: () => fault === 'refuse',
    piecesLost: () => fault === 'lose',
  })
  const handler: RequestListener = (req, res) => {
    openRequests.add(res)
    res.once('close', () => openRequests.delete(res))
    routes(req, res)
  }

  const provider: PdpProvider = {
    address: chain.address,
    handler,
    get url() {
      return url
    },
    get fault() {
      return fault
    },
    async listen(port = 0, host = '127.0.0.1') {
      if (server) return url!
      // The parts' connection rules (a cap, idle and body deadlines), not Node's defaults: a flood of a provider's
      // port, or a body trickled a byte every few seconds, is cut as it would be at the gateway.
      server = await startServer(handler, port, host, { errorBody: goErrorBody, ...options.http })
      url = `http://${host}:${server.port}`
      const pollMs = options.pollMs ?? 500
      if (pollMs > 0) {
        const run = () => {
          // Every half second while its chain is unreachable: a few lines and a count, not two a second.
          tasks
            .tick()
            .catch((err: unknown) =>
              passFailures('pass', (leftOut) => log.warn({ err, ...leftOutField(leftOut) }, 'simulated Curio: chain pass failed')),
            )
        }
        poller = setInterval(run, pollMs)
        poller.unref()
        run()
      }
      log.info({ url, address: chain.address }, 'simulated Curio PDP provider listening')
      return url
    },
    tick: () => tasks.tick(),
    async setFault(next) {
      fault = next
      if (next === 'lose') await store.lose()
      if (next !== 'stall') {
        bodies.wakeAll()
        tasks.startPulls()
      }
    },
    stalledUploads: () => bodies.held(),
    dataSets: () => Object.values(db.t.dataSets).map((d) => ({ ...d, pieces: db.t.pieces.filter((p) => p.dataSet === d.id) })),
    proofs: () => [...db.t.proofs],
    async close() {
      if (poller) clearInterval(poller)
      poller = null
      bodies.wakeAll()
      for (const res of openRequests) res.destroy()
      await server?.close(0)
      server = null
      await tasks.settled()
      await db.flush()
    },
  }
  return provider
}
