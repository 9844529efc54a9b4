import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pino } from 'pino'
import { createGateway, type Gateway } from '../../server/gateway/index.ts'
import { createDealServiceClient, type DealServiceClient, type StorageProviderPort } from '../../server/gateway/deals/index.ts'
import { connectToNetwork, type NetworkAccess } from '../../server/gateway/deals/market/network-access.ts'
import { simnetOverRpc } from '../../server/compose/local-chain.ts'
import { startSimulatedNetwork, type SimulatedNetwork } from '../../server/simulation/simnet/on-loopback.ts'
import type { ProviderClient } from '../../server/network/boost/client.ts'
import type { ProviderHosts } from '../../server/simulation/simnet/provider-hosts.ts'
import type { ChainFailure, ChainFaultPlan } from '../../server/simulation/simnet/faults.ts'
import { createSigner, newPrivateKey } from '../../server/network/wallet/keys.ts'
import { FOC_CHAIN_IDS } from '../../server/network/foc/chain.ts'
import { connectFocClient, type FocClient } from '../../server/network/foc/client.ts'
import { startSimulatedFoc, type SimulatedFoc } from '../../server/simulation/simfoc/index.ts'
import type { PdpProviderFault } from '../../server/simulation/simfoc/pdp-provider.ts'
import { parseEther, parseUnits } from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { createSimnet, type Simnet } from '../../server/simulation/simnet/index.ts'
import type { SimulatedProviders } from '../../server/simulation/simnet/sim-providers.ts'
import { createDealService, type DealService } from '../../server/service/index.ts'
import { startServer, type RunningServer } from '../../server/shared/http.ts'
import { EPOCH_SECONDS } from '../../server/shared/epochs.ts'
import type { CidProfile } from '../../server/shared/cid-profile.ts'
import type { PriceCeiling } from '../../server/shared/deal-price.ts'

// TEST_LOG_LEVEL=info shows the stack's log when a test needs debugging.
export const silent = pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' })
const GENESIS = 1704067200
export const API_KEY = 'fgs_test-key-for-the-deal-engine-0001'
/** A call the busy simulated node refused is sent again at loopback pace, so that a test's passes stay quick. */
const BUSY_RETRY = { retries: 2, firstMs: 10, maxMs: 50 }

export interface DealStack {
  dir: string
  /** The gateway's PostgreSQL database, when it was given one; else its records are in `<dir>/gateway/gateway.sqlite`. */
  databaseUrl?: string
  clock: { now: number }
  simnet: Simnet
  sim: SimulatedProviders
  hosts: ProviderHosts
  /** The simulated network's faults and how many struck. */
  faults: ChainFaultPlan
  providerClient: ProviderClient
  /** The gateway's wallet address, which signs its proposals. */
  clientAddress: string
  service: DealService
  serviceServer: RunningServer
  gateway: Gateway
  gatewayServer: RunningServer
  /** The simulated Onchain Cloud, when the stack stores PDP copies (`foc`). */
  foc?: SimulatedFoc
  /** The gateway's client of it, paying from `focAccount`. */
  focClient?: FocClient
  /** Moves simulated (and gateway) time on by `epochs`. */
  advance(epochs: number): void
  /**
   * Until released (null), the chain's JSON-RPC fails every call to `methods` (any, when unset) as
   * `failure` (faults.ts holdChain); meanwhile a pass that fails is retried, as the timers do.
   */
  holdChain(failure: ChainFailure | null, methods?: readonly string[]): void
  /** PUTs a file over the gateway's WebDAV. */
  put(path: string, bytes: Uint8Array): Promise<Response>
  /** DELETEs a file (or folder) over the gateway's WebDAV. */
  remove(path: string): Promise<Response>
  get(path: string): Promise<Response>
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the tests read the record as loosely as a client would
  fileInfo(path: string): Promise<any>
  /** Seals the writable group and waits for its CAR and piece CID; with `folders`, the folders' directory nodes due until now go in first. */
  seal(opts?: { folders?: boolean }): Promise<void>
  /** Ticks the deal engine, advancing the clock between ticks, until `done()` or `max` ticks. */
  runUntil(done: () => boolean | Promise<boolean>, options?: { max?: number; epochsPerTick?: number; pauseMs?: number }): Promise<boolean>
  /** Stops everything (as a clean shutdown); `restart()` builds the gateway again on the same files. */
  restartGateway(): Promise<void>
  close(): Promise<void>
}

export interface DealStackOptions {
  seed?: string
  copies?: number
  /** Wraps the provider port (to change what the chain or providers say). */
  providers?: (port: StorageProviderPort) => StorageProviderPort
  /** Wraps the deal service client (to make it fail). */
  service?: (client: DealServiceClient) => DealServiceClient
  /** The gateway is given no deal service at all (an Onchain-Cloud-only gateway, with `copies: 0`). */
  withoutService?: boolean
  retrievalCheckMs?: number
  /** RETRIEVAL_FAILED_CHECKS (default 3). */
  retrievalFailedChecks?: number
  /** Attofil per GiB per epoch offered (default 0: few simulated providers take free deals of small pieces). */
  price?: string
  /** DEAL_MAX_PRICE_PER_TIB_MONTH: unverified deals pay the providers' asks up to it (default none). */
  maxPrice?: PriceCeiling
  /** Why the deal market is off by default (mainnet without a ceiling, config.ts), with `copies: 0`. */
  marketOff?: string
  /** Epochs from a proposal to its deal's start (DEAL_START_OFFSET, default 5760: two days). */
  startOffsetEpochs?: number
  /** Deals ending within this many days are renewed (default 30). */
  renewBeforeDays?: number
  /** Longest a group is held for repair without its copies (default 3 days). */
  repairHoldDays?: number
  /** RETIRE_AFTER_SECONDS: how long a group of deleted files waits before it is retired (default a day), on the test's clock. */
  retireAfterSeconds?: number
  /** COMPACT_DEAD_FRACTION: share of a group's bytes deleted past which it is compacted (default the gateway's). */
  compactDeadFraction?: number
  /** DEAL_MAX_PADDING (default: any). */
  maxPaddingFactor?: number
  /** The client's market escrow, attoFIL (default: plenty when `price` is above 0, else none). */
  escrow?: bigint
  /** The simulated chain's network version 29 upgrade epoch (FIP-0118); default: none scheduled. */
  nv29Epoch?: number
  /** Bytes at which a group closes (default 1 MiB: small groups, quick tests). */
  groupSize?: number
  /** GROUP_IDLE_SECONDS, on the wall clock (default an hour: groups close when the test seals them). */
  groupIdleSeconds?: number
  /** LISTING_WAIT_SECONDS, on the wall clock (default the gateway's: a day). */
  listingWaitSeconds?: number
  /** CID_PROFILE (default: the gateway's). */
  cidProfile?: CidProfile
  /** The gateway's data folder (a small disk to fill, say); a folder in the stack's temp dir by default. */
  gatewayDir?: string
  /** Provider call and whole-group reload timeouts (default 1 s and 3 s: loopback, small groups). */
  dealTimeouts?: { callMs: number; reloadMs: number }
  /** Longest a simulated provider takes to fetch a CAR (default 20 s). */
  transferTimeoutMs?: number
  /**
   * Seeded faults of the simulated network (SIMNET_FAULT_RATE; default none), stalls up to `maxStallMs`,
   * a chain call that times out held `hangMs`.
   */
  faults?: { rate: number; maxStallMs?: number; hangMs?: number }
  /** How long the gateway and the deal service wait for the chain's JSON-RPC (default 10 s). */
  chainTimeoutMs?: number
  /** The gateway's records in this PostgreSQL database (kept across gateway restarts); default its SQLite file. */
  databaseUrl?: string
  /**
   * PDP copies on a simulated Onchain Cloud beside the simulated network:
   * its chain runs on the wall clock (`epochSeconds` real seconds an epoch,
   * default 0.05: a 240-epoch proving period in 12 s, deployed with the
   * wide-window schedule's 120-epoch challenge window, 6 s, which a loaded
   * machine still meets where calibration's 20 epochs, 1 s, was missed), `providers` Curio-like
   * providers (faults by index), the gateway's account given `fil` and `usdfc`;
   * `client` wraps the gateway's client of it (to make a call fail);
   * `maxUploadBytes` the largest CAR one upload takes (default the SDK's
   * 1 065 353 216 bytes; small, groups close at it).
   */
  foc?: {
    copies: number
    autoDeposit?: boolean
    epochSeconds?: number
    providers?: number
    /** How many of them the service endorses (the simulation's default: all but one). */
    endorsed?: number
    faults?: Record<number, PdpProviderFault>
    fil?: bigint
    usdfc?: bigint
    uploadIdleMs?: number
    maxUploadBytes?: number
    client?: (client: FocClient) => FocClient
  }
}

/** What the stack's steps started, each handed to the steps after it. */
interface StackParts {
  dir: string
  clock: { now: number }
  now: () => number
  simnet: Simnet
  network: SimulatedNetwork
  service: DealService
  serviceServer: RunningServer
  /** The gateway's wallet address, which signs its proposals. */
  clientAddress: string
  /** The gateway's way to the simulated network, signing with its wallet key. */
  access: NetworkAccess
  foc?: SimulatedFoc
  focClient?: FocClient
}

/**
 * A real deal service (HTTP, SQLite) over a simulated network whose clock the
 * test moves, simulated providers that really fetch CARs over HTTP into a
 * temp dir, and a gateway (HTTP, SQLite, files) making deals through them.
 */
export async function startDealStack(o: DealStackOptions = {}): Promise<DealStack> {
  const dir = mkdtempSync(join(tmpdir(), 'deal-stack-'))
  const clock = { now: Date.UTC(2025, 0, 15) }
  const now = () => clock.now
  const seed = o.seed ?? 'deal-engine-tests'
  const { simnet, network } = await startNetwork(dir, seed, now, o)
  const { service, serviceServer } = await startService(dir, simnet, network.rpcUrl, now, o.chainTimeoutMs)
  const { privateKey, clientAddress, access } = await connectWallet(service, simnet, network.rpcUrl, o)
  const onchainCloud = o.foc ? await startOnchainCloud(dir, seed, o.foc, privateKey) : {}
  return assembleStack({ dir, clock, now, simnet, network, service, serviceServer, clientAddress, access, ...onchainCloud }, o)
}

/**
 * The simulated network on loopback, composed as `npm start` composes it: the gateway and the deal
 * service reach its chain only over Lotus JSON-RPC and its providers only over libp2p and HTTP.
 */
async function startNetwork(
  dir: string,
  seed: string,
  now: () => number,
  o: Pick<DealStackOptions, 'nv29Epoch' | 'transferTimeoutMs' | 'faults'>,
): Promise<{ simnet: Simnet; network: SimulatedNetwork }> {
  const simnet = createSimnet({ seed, genesis: GENESIS, now, nv29Epoch: o.nv29Epoch, stateFile: join(dir, 'simnet', 'chain.sqlite') })
  const network = await startSimulatedNetwork({
    simnet,
    dir: join(dir, 'simnet', 'providers'),
    seed,
    transferTimeoutMs: o.transferTimeoutMs ?? 20_000,
    faults: o.faults,
  })
  return { simnet, network }
}

/** The deal service over the simulated chain's RPC, on the test's clock, with its timers off: the test syncs it (runUntil). */
async function startService(
  dir: string,
  simnet: Simnet,
  rpcUrl: string,
  now: () => number,
  chainTimeoutMs?: number,
): Promise<{ service: DealService; serviceServer: RunningServer }> {
  const service = await createDealService(
    {
      host: '127.0.0.1',
      port: 0,
      dataDir: join(dir, 'service'),
      network: 'simnet',
      simnetGenesis: GENESIS,
      apiKey: API_KEY,
      simnetSeed: 'x',
      simnetSpeed: 1,
      tickerPollSeconds: 60,
      tickerEnabled: false,
    },
    {
      logger: silent,
      network: simnetOverRpc(simnet, rpcUrl, { timeoutMs: chainTimeoutMs, busyRetry: BUSY_RETRY }),
      now,
      background: false,
    },
  )
  const serviceServer = await startServer(service.app, 0, '127.0.0.1')
  return { service, serviceServer }
}

/** The gateway's wallet key, registered with the tenant as its client address, and the gateway's access to the network, signing with it. */
async function connectWallet(
  service: DealService,
  simnet: Simnet,
  rpcUrl: string,
  o: Pick<DealStackOptions, 'escrow' | 'price' | 'chainTimeoutMs'>,
): Promise<{ privateKey: Uint8Array; clientAddress: string; access: NetworkAccess }> {
  const privateKey = newPrivateKey()
  const signer = createSigner(privateKey, 'mainnet')
  const clientAddress = signer.address
  await service.tenants.addClientAddress((await service.tenants.byName('default'))!.id, clientAddress)
  // Paid deals lock price × duration of the client's market escrow when published: fund it, as
  // `npm run wallet -- add-escrow` would.
  const escrow = o.escrow ?? (BigInt(o.price ?? '0') > 0n ? 10n ** 21n : 0n)
  if (escrow > 0n) simnet.addEscrow(clientAddress, escrow)
  const access = await connectToNetwork({
    rpcUrl,
    clock: simnet.clock,
    signer,
    network: 'mainnet',
    timeoutMs: o.chainTimeoutMs,
    busyRetry: BUSY_RETRY,
  })
  return { privateKey, clientAddress, access }
}

/** The simulated Onchain Cloud on the wall clock, and the gateway's client of it, its account funded from the faucet. */
async function startOnchainCloud(
  dir: string,
  seed: string,
  o: NonNullable<DealStackOptions['foc']>,
  privateKey: Uint8Array,
): Promise<{ foc: SimulatedFoc; focClient: FocClient }> {
  const foc = await startSimulatedFoc({
    dir: join(dir, 'simfoc'),
    seed,
    // Ten minutes back: a chain that has run long enough for the gateway to read its clock from its blocks.
    genesisTimestamp: Date.now() / 1000 - 600,
    epochSeconds: o.epochSeconds ?? 0.05,
    proving: 'wide-window',
    providerCount: o.providers ?? 3,
    endorsed: o.endorsed,
    faults: o.faults,
    logger: silent,
  })
  // The Onchain Cloud pays from the same key's FEVM account, as the gateway's wallet does.
  const account = privateKeyToAccount(`0x${Buffer.from(privateKey).toString('hex')}`)
  await foc.faucet(account.address, { fil: o.fil ?? parseEther('10'), usdfc: o.usdfc ?? parseUnits('100', 18) })
  const focClient = (o.client ?? ((c) => c))(
    await connectFocClient({ rpcUrl: foc.rpcUrl, anchors: foc.contracts, chainIds: [FOC_CHAIN_IDS.devnet], account }),
  )
  return { foc, focClient }
}

/** A gateway on the stack's files, served on a free port: built at the start and again by restartGateway. */
async function startGateway(parts: StackParts, o: DealStackOptions): Promise<{ gateway: Gateway; gatewayServer: RunningServer }> {
  const client = createDealServiceClient({ url: parts.serviceServer.url, apiKey: API_KEY })
  const gateway = await createGateway(
    {
      host: '127.0.0.1',
      port: 0,
      dataDir: o.gatewayDir ?? join(parts.dir, 'gateway'),
      databaseUrl: o.databaseUrl,
      groupSize: o.groupSize ?? 1 << 20,
      groupIdleSeconds: o.groupIdleSeconds ?? 3600,
      ...(o.listingWaitSeconds ? { listingWaitSeconds: o.listingWaitSeconds } : {}),
      cidProfile: o.cidProfile,
      retireAfterSeconds: o.retireAfterSeconds,
      compactDeadFraction: o.compactDeadFraction,
      ...(o.withoutService ? {} : { serviceUrl: parts.serviceServer.url, serviceApiKey: API_KEY }),
      clientAddress: parts.clientAddress,
      deals: {
        durationDays: 540,
        price: o.price ?? '0',
        ...(o.maxPrice ? { maxPrice: o.maxPrice } : {}),
        ...(o.marketOff ? { marketOff: o.marketOff } : {}),
        verified: true,
        maxPaddingFactor: o.maxPaddingFactor,
        startOffsetEpochs: o.startOffsetEpochs ?? 5760,
        copies: o.copies ?? 2,
        tickSeconds: 3600,
        retrievalCheckSeconds: (o.retrievalCheckMs ?? 3_600_000) / 1000,
        ...(o.retrievalFailedChecks ? { retrievalFailedChecks: o.retrievalFailedChecks } : {}),
        renewBeforeDays: o.renewBeforeDays,
        repairHoldDays: o.repairHoldDays,
      },
      ...(o.foc ? { pdp: { copies: o.foc.copies, autoDeposit: o.foc.autoDeposit ?? true, maxUploadBytes: o.foc.maxUploadBytes } } : {}),
    },
    {
      logger: silent,
      providers: (o.providers ?? ((p) => p))(parts.access.port),
      foc: parts.focClient,
      service: o.withoutService ? undefined : o.service ? o.service(client) : client,
      now: parts.now,
      dealTimeouts: {
        proposalMs: 1500,
        ...(o.dealTimeouts ?? { callMs: 1000, reloadMs: 3000 }),
        ...(o.foc?.uploadIdleMs ? { uploadIdleMs: o.foc.uploadIdleMs } : {}),
      },
      folderSettleMs: 3_600_000,
    },
  )
  const gatewayServer = await startServer(gateway.app, 0, '127.0.0.1')
  // Ticks are driven by the test: set the transfer URL without starting the timer.
  gateway.setPublicUrl(gatewayServer.url)
  return { gateway, gatewayServer }
}

/** The stack the test holds: the parts, the gateway now running (restartGateway builds another), and what drives them. */
async function assembleStack(parts: StackParts, o: DealStackOptions): Promise<DealStack> {
  const { dir, clock, network, service, serviceServer } = parts
  let running = await startGateway(parts, o)
  let chainHeld = false
  // On a faulty or held chain a pass may fail: the engine's and the service's own timers log it and try again.
  const tolerated = (err: unknown) => {
    if (!o.faults?.rate && !chainHeld) throw err
  }
  const stack: DealStack = {
    dir,
    databaseUrl: o.databaseUrl,
    clock,
    simnet: parts.simnet,
    sim: network.providers,
    hosts: network.hosts,
    faults: network.faults,
    providerClient: parts.access.client,
    clientAddress: parts.clientAddress,
    foc: parts.foc,
    focClient: parts.focClient,
    service,
    serviceServer,
    get gateway() {
      return running.gateway
    },
    get gatewayServer() {
      return running.gatewayServer
    },
    advance(epochs) {
      clock.now += epochs * EPOCH_SECONDS * 1000
    },
    holdChain(failure, methods) {
      chainHeld = failure !== null
      network.faults.holdChain(failure, methods)
    },
    put: (path, bytes) => fetch(`${running.gatewayServer.url}${path}`, { method: 'PUT', body: Buffer.from(bytes) }),
    get: (path) => fetch(`${running.gatewayServer.url}${path}`),
    remove: (path) => fetch(`${running.gatewayServer.url}${path}`, { method: 'DELETE' }),
    async fileInfo(path) {
      const res = await fetch(`${running.gatewayServer.url}/file-info`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ filePath: path, verbose: true }),
      })
      return res.json()
    },
    async seal(opts = {}) {
      // Folders' directory nodes are stored in the background after a change (here only when the test says so).
      if (opts.folders) await running.gateway.folders.settled()
      await running.gateway.content.sealWritable()
      await running.gateway.content.settled()
    },
    async runUntil(done, opts = {}) {
      for (let i = 0; i < (opts.max ?? 200); i++) {
        if (await done()) return true
        // As the engine's own timer (deal-engine.ts start): a tick that failed is retried at the next, on a faulty network.
        await running.gateway.deals!.tick().catch(tolerated)
        // Let providers' background transfers run.
        await new Promise((r) => setTimeout(r, opts.pauseMs ?? 5))
        // The service's own timer logs a failed sync and tries again (deal-sync.ts start): so does a faulty network's run.
        await service.sync.syncOnce().catch(tolerated)
        stack.advance(opts.epochsPerTick ?? 60)
      }
      return done()
    },
    async restartGateway() {
      await running.gatewayServer.close()
      await running.gateway.close()
      running = await startGateway(parts, o)
    },
    async close() {
      await parts.access.close()
      await network.close()
      await running.gatewayServer.close()
      await running.gateway.close()
      await parts.foc?.close()
      await serviceServer.close()
      await service.close()
      rmSync(dir, { recursive: true, force: true })
    },
  }
  return stack
}
