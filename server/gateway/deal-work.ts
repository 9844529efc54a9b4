import { COMPACT_DEAD_FRACTION, DEAL_DEFAULTS, RETIRE_AFTER_SECONDS, type GatewayConfig } from '../shared/config.ts'
import { EPOCH_SECONDS, EPOCHS_PER_DAY, type ChainClock } from '../shared/epochs.ts'
import type { Logger } from '../shared/logger.ts'
import { PDP_MAX_UPLOAD_BYTES } from '../shared/piece.ts'
import type { ContentStore } from './content/index.ts'
import {
  createDealEngine,
  createDealServiceClient,
  createMarketRoute,
  createPdpRoute,
  createRouteContext,
  type DealEngine,
  type DealServiceClient,
  type DealStore,
  type RouteName,
  type StorageProviderPort,
  type StorageRoute,
} from './deals/index.ts'
import type { FocClient } from '../network/foc/client.ts'
import type { Liveness } from './retire/liveness.ts'
import type { CompactionOptions } from './deals/compact.ts'

/** What the gateway's deal engine is made with besides its configuration. */
export interface DealWorkDeps {
  /** How deals reach storage providers (the simulated network's, in the embedded default); the deal market needs it. */
  providers?: StorageProviderPort
  /** The Filecoin Onchain Cloud, for PDP copies (with `config.pdp.copies` > 0); without it, the deal market only. */
  foc?: FocClient
  /** Tests inject a client; default: HTTP to `config.serviceUrl` with `config.serviceApiKey`. */
  service?: DealServiceClient
  now?: () => number
  /** Overrides of the deal engine's waits (tests make them short). */
  dealTimeouts?: {
    callMs?: number
    proposalMs?: number
    statusPollMs?: number
    reloadMs?: number
    retryAfterMs?: number
    uploadIdleMs?: number
  }
}

/**
 * The gateway's deal engine over its storage routes, from its configuration:
 * the deal market (with its deal service and providers) unless it makes no
 * copies (DEAL_COPIES=0, or mainnet without a price ceiling), and, with an
 * Onchain Cloud client and PDP copies asked for, Filecoin Onchain Cloud on
 * the clock of its own chain (`focClock`, read from it). The Onchain Cloud
 * alone needs neither a deal service nor the market's chain. Undefined, said
 * in the log, when the gateway cannot make copies on every route it is asked
 * to (no deal service, chain or wallet key for the market; nothing at all).
 */
export function createDealWork(
  config: GatewayConfig,
  deps: DealWorkDeps,
  parts: {
    dealStore: DealStore
    content: ContentStore
    logger: Logger
    paused: () => boolean
    publicUrl: () => string
    /** The Onchain Cloud's chain clock, as `deps.foc` read it; PDP copies are made only with it. */
    focClock?: ChainClock
    /** Which groups still hold something live: those that do not are retired after RETIRE_AFTER_SECONDS. */
    liveness?: Liveness
    /** Groups mostly dead are compacted past COMPACT_DEAD_FRACTION (with `liveness`). */
    compaction?: Pick<CompactionOptions, 'rows' | 'listings' | 'storeListingsAgain'>
  },
): DealEngine | undefined {
  const terms = { ...DEAL_DEFAULTS, ...config.deals }
  // Mainnet without DEAL_MAX_PRICE_PER_TIB_MONTH: said once at start, with how to turn the market on.
  if (terms.marketOff) parts.logger.warn(terms.marketOff)
  const marketOn = terms.copies !== 0
  const service =
    deps.service ??
    (config.serviceUrl && config.serviceApiKey
      ? createDealServiceClient({ url: config.serviceUrl, apiKey: config.serviceApiKey })
      : undefined)
  const providers = deps.providers
  if (marketOn && (!service || !providers || !config.clientAddress)) {
    parts.logger.info(
      'deal engine off: the deal market needs SERVICE_URL, SERVICE_API_KEY, a chain and a wallet key (whose address is the client of the deals); DEAL_COPIES=0 stores on the Onchain Cloud alone',
    )
    return undefined
  }
  const pdpOn = deps.foc !== undefined && parts.focClock !== undefined && (config.pdp?.copies ?? 0) > 0
  if (!marketOn && !pdpOn) {
    parts.logger.info('deal engine off: the deal market is off (DEAL_COPIES=0) and the Onchain Cloud cannot be reached')
    return undefined
  }
  const timeouts = deps.dealTimeouts ?? {}
  const context = createRouteContext({
    deals: parts.dealStore,
    content: parts.content,
    logger: parts.logger.child({ module: 'deals' }),
    now: deps.now,
    callTimeoutMs: timeouts.callMs ?? 30_000,
    // Chain time, so that a sped-up simulated network retries at its own pace.
    retryAfterEpochs: Math.ceil((timeouts.retryAfterMs ?? 60 * 60_000) / 1000 / EPOCH_SECONDS),
  })
  const statusPollMs = timeouts.statusPollMs ?? 3 * 60_000
  const routes: StorageRoute[] = []
  if (marketOn) {
    routes.push(
      createMarketRoute(context, {
        service: service!,
        providers: providers!,
        clientAddress: config.clientAddress!,
        publicUrl: parts.publicUrl,
        terms: {
          durationEpochs: terms.durationDays * EPOCHS_PER_DAY,
          pricePerGiBEpoch: terms.price,
          ...(terms.maxPrice ? { maxPrice: terms.maxPrice } : {}),
          verified: terms.verified,
          maxPaddingFactor: terms.maxPaddingFactor,
          startOffsetEpochs: terms.startOffsetEpochs,
        },
        copies: terms.copies,
        proposalTimeoutMs: timeouts.proposalMs ?? 60_000,
        statusPollMs,
        // Deals ending within this window are renewed by new ones.
        renewBeforeEpochs: Math.round((terms.renewBeforeDays ?? DEAL_DEFAULTS.renewBeforeDays) * EPOCHS_PER_DAY),
      }),
    )
  }
  if (pdpOn) {
    routes.push(
      createPdpRoute(context, {
        client: deps.foc!,
        copies: config.pdp!.copies,
        autoDeposit: config.pdp!.autoDeposit,
        maxUploadBytes: config.pdp!.maxUploadBytes ?? PDP_MAX_UPLOAD_BYTES,
        uploadIdleMs: timeouts.uploadIdleMs ?? 10 * 60_000,
        maxUploads: 2,
        clock: parts.focClock!,
        pollMs: statusPollMs,
      }),
    )
  }
  parts.logger.info({ routes: routes.map((r) => r.name) }, `storage routes: ${routes.map((r) => ROUTE_WORDS[r.name]).join(' and ')}`)
  return createDealEngine({
    context,
    routes,
    // The link test still says why the market makes no copies.
    ...(marketOn
      ? {}
      : { standing: { marketOff: terms.marketOff?.replace(/^deal market off: /, '') ?? 'the deal market is off (DEAL_COPIES=0)' } }),
    retrievalCheckMs: terms.retrievalCheckSeconds * 1000,
    retrievalFailedChecks: terms.retrievalFailedChecks ?? DEAL_DEFAULTS.retrievalFailedChecks,
    callTimeoutMs: timeouts.callMs ?? 30_000,
    reloadTimeoutMs: timeouts.reloadMs ?? 10 * 60_000,
    repairHoldEpochs: Math.round((terms.repairHoldDays ?? DEAL_DEFAULTS.repairHoldDays) * EPOCHS_PER_DAY),
    paused: parts.paused,
    ...(parts.liveness
      ? {
          retirement: {
            liveness: parts.liveness,
            retireAfterMs: (config.retireAfterSeconds ?? RETIRE_AFTER_SECONDS) * 1000,
            ...(parts.compaction
              ? { compaction: { ...parts.compaction, deadFraction: config.compactDeadFraction ?? COMPACT_DEAD_FRACTION } }
              : {}),
          },
        }
      : {}),
  })
}

/** How the log names each route. */
const ROUTE_WORDS: Record<RouteName, string> = {
  market: 'the deal market',
  pdp: 'Filecoin Onchain Cloud (PDP copies)',
}
