import { CID_PROFILES, DEFAULT_CID_PROFILE, type CidProfile } from './cid-profile.ts'
import { availableParallelism } from 'node:os'
import { join, resolve } from 'node:path'
import { z } from 'zod'
import { addressNetworkOf, type AddressNetwork } from './address.ts'
import { MAX_DEAL_DAYS, MIN_DEAL_DAYS, SIMNET_DEFAULT_GENESIS, type NetworkName } from './epochs.ts'
import { NETWORK_NAMES } from './contracts/network.ts'
import { PDP_MAX_UPLOAD_BYTES, largestGroupSize } from './piece.ts'
import { parsePriceCeiling, type PriceCeiling } from './deal-price.ts'

/**
 * Deal terms and pace when nothing is set: the defaults of the DEAL_* variables
 * (README) and of a gateway built without `deals` (tests). The padding limit
 * here is the simulated network's; real networks get theirs from GROUP_DEFAULTS.
 */
/**
 * How long a group with nothing live left in it is kept as it is (a day, as a
 * deleted file is often restored from Nextcloud's trash within it: the same
 * bytes PUT again), before its copies stop being paid for.
 */
export const RETIRE_AFTER_SECONDS = 86_400
/**
 * Share of a group's bytes deleted past which its live files are repacked into new groups and it is retired
 * (compaction). Compaction pays once to store the live part again (add fees, a reload of an offloaded group);
 * past half dead, the monthly saving of no longer paying for the dead part exceeds the part stored again, so it
 * pays back within a month where a group less dead would take longer. 0 or 1 turns it off.
 */
export const COMPACT_DEAD_FRACTION = 0.5

export const DEAL_DEFAULTS = {
  durationDays: 540,
  price: '0',
  verified: true,
  maxPaddingFactor: Infinity,
  startOffsetEpochs: 5760,
  tickSeconds: 5,
  retrievalCheckSeconds: 600,
  retrievalFailedChecks: 3,
  renewBeforeDays: 30,
  repairHoldDays: 3,
} as const satisfies Required<Omit<DealsConfig, 'copies' | 'maxPrice' | 'marketOff'>>

/** The proving schedules of the real Onchain Cloud the simulated one can follow (simulation/simfoc/proving.ts has their numbers). */
/**
 * How long a group holding only folders' directory nodes (the listings a
 * delete, rename or upload rewrites) waits for a file's data before it is
 * sealed and stored anyway: a day, as groups wait for data on real networks,
 * so that listings alone pay for at most one group (one PDP add on each data
 * set, one set of deals) a day, not one per change (group-closing.ts).
 */
export const DEFAULT_LISTING_WAIT_SECONDS = 86_400

export const SIMFOC_PROVING_SCHEDULES = ['calibration', 'mainnet'] as const
export type SimfocProving = (typeof SIMFOC_PROVING_SCHEDULES)[number]
/** The networks the simulated Onchain Cloud can stand as (simulation/simfoc/chain-profiles.ts has their ids and addresses). */
export const SIMFOC_CHAINS = ['devnet', 'calibration', 'mainnet'] as const
export type SimfocChain = (typeof SIMFOC_CHAINS)[number]

const port = (fallback: number) => z.coerce.number().int().min(0).max(65535).default(fallback)
const positiveInt = (fallback: number) => z.coerce.number().int().positive().default(fallback)

/** Every environment variable the stack reads, with its default. README lists them. */
const EnvSchema = z.object({
  HOST: z.string().min(1).default('127.0.0.1'),
  PORT: port(8080),
  GATEWAY_PORT: port(9011),
  DATA_DIR: z.string().min(1).default('./data'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  // Unset: readable lines on a terminal, JSON lines otherwise.
  LOG_FORMAT: z.enum(['pretty', 'json']).optional(),
  // A warning is logged when less than this many MiB are free under DATA_DIR.
  DISK_FREE_WARNING_MB: z.coerce
    .number()
    .int()
    .min(0)
    .max(1 << 30)
    .default(1024),
  // Uploads are refused (507) unless this much stays free beyond what is still to be sealed; unset: 2 % of the disk, at most 1 GiB.
  DISK_RESERVE_MB: z.coerce
    .number()
    .int()
    .min(0)
    .max(1 << 30)
    .optional(),
  // Every part closes a connection that sends nothing for this long while its headers or body are due.
  IDLE_TIMEOUT_SECONDS: z.coerce.number().positive().max(3600).default(30),
  // A request body that is not an upload must arrive whole within this long; an upload (PUT) gets it to start.
  BODY_TIMEOUT_SECONDS: z.coerce.number().positive().max(3600).default(30),
  // After that, an upload must average at least this many bytes a second (Apache mod_reqtimeout's MinRate).
  UPLOAD_MIN_BYTES_PER_SECOND: z.coerce.number().int().positive().default(500),
  // Connections the process holds at once (every part together); unset: half its open-file limit. Past it: 503.
  MAX_CONNECTIONS: z.coerce.number().int().positive().optional(),
  // Connections one client address holds at once (a trusted proxy, TRUST_PROXY, is not limited). Past it: 503.
  MAX_CONNECTIONS_PER_ADDRESS: z.coerce.number().int().positive().default(256),
  // Unfinished chunked uploads (upload folders) one user may hold at once; past it MKCOL answers 507.
  MAX_UPLOADS_PER_USER: z.coerce.number().int().positive().default(500),
  // devnet: a local Lotus-compatible node at LOTUS_URL, its clock read from the node; with DEAL_COPIES=0, an
  // Onchain Cloud devnet at FOC_RPC_URL alone.
  NETWORK: z.enum(NETWORK_NAMES).default('simnet'),
  SIMNET_GENESIS: z.coerce.number().int().min(0).default(SIMNET_DEFAULT_GENESIS),
  // Set: every part keeps its state in this PostgreSQL database, each in its own schema; unset: SQLite files under DATA_DIR.
  DATABASE_URL: z.url({ protocol: /^postgres(ql)?$/ }).optional(),
  // App surface (bridge)
  GATEWAY_URL: z.url({ protocol: /^https?$/ }).optional(),
  GATEWAY_USER: z.string().optional(),
  GATEWAY_PASSWORD: z.string().optional(),
  GATEWAY_TIMEOUT_MS: positiveInt(10_000),
  ADMIN_PASSWORD: z.string().min(8).optional(),
  PATH_MAP: z.string().startsWith('/').default('/{user}'),
  IPFS_GATEWAY: z.url().default('https://ipfs.io'),
  // The app's built front end shown by the preview page (default: the repository's js/).
  BUNDLE_DIR: z.string().min(1).optional(),
  // Who owns users and files: the embedded app surface, or a real Nextcloud beside the bridge, reached through
  // a reverse proxy (nextcloud) or as an AppAPI external app (appapi: APP_ID, APP_SECRET, APP_VERSION, APP_PORT
  // and NEXTCLOUD_URL as AppAPI sets them; server/bridge/exapp/config.ts reads them).
  FILESYNC: z.enum(['embedded', 'nextcloud', 'appapi']).default('embedded'),
  // FILESYNC=appapi: where AppAPI reaches the ExApp (its APP_HOST/APP_PORT), instead of HOST/PORT.
  APP_HOST: z.string().min(1).optional(),
  APP_PORT: z.coerce.number().int().min(1).max(65535).optional(),
  NEXTCLOUD_URL: z.url({ protocol: /^https?$/ }).optional(),
  NEXTCLOUD_TIMEOUT_MS: positiveInt(5_000),
  // Express `trust proxy`: false (default), true, a hop count, or addresses/subnets ("loopback, 10.0.0.0/8").
  TRUST_PROXY: z
    .string()
    .max(1024)
    .regex(/^[A-Za-z0-9.:/, -]+$/, 'false, true, a hop count or a comma-separated list of addresses')
    .default('false'),
  // Gateway
  // Defaults per network (GROUP_DEFAULTS): real providers take pieces of 256 MiB to 32 GiB; at most 1 GiB with PDP copies.
  GROUP_SIZE: z.coerce.number().int().positive().optional(),
  GROUP_IDLE_SECONDS: z.coerce.number().int().positive().optional(),
  LISTING_WAIT_SECONDS: z.coerce.number().int().positive().default(DEFAULT_LISTING_WAIT_SECONDS),
  // Threads writing CARs and piece CIDs; 0 seals on the main thread. Default: one per core.
  SEAL_THREADS: z.coerce.number().int().min(0).max(64).optional(),
  CID_PROFILE: z.enum(CID_PROFILES).default(DEFAULT_CID_PROFILE),
  // Seconds a group whose files are all deleted waits before it is retired (its copies no longer paid for): an undo window.
  RETIRE_AFTER_SECONDS: z.coerce.number().int().positive().default(RETIRE_AFTER_SECONDS),
  // Share of a group's bytes deleted past which its live files are repacked and it is retired; 0 or 1: never.
  COMPACT_DEAD_FRACTION: z.coerce.number().min(0).max(1).default(COMPACT_DEAD_FRACTION),
  // Gateway deal engine (deals need SERVICE_URL, SERVICE_API_KEY and a wallet key; `--role all` links them itself)
  SERVICE_URL: z.url({ protocol: /^https?$/ }).optional(),
  SERVICE_API_KEY: z.string().min(1).max(200).optional(),
  GATEWAY_PUBLIC_URL: z.url({ protocol: /^https?$/ }).optional(),
  // Read by the deal service, not the gateway (whose client address is its wallet key's): its default tenant gets it at start.
  DEAL_CLIENT_ADDRESS: z.string().min(3).max(200).optional(),
  /** Which wallet key (address) signs deals; the wallet's default key when unset. */
  WALLET: z.string().min(3).max(200).optional(),
  DEAL_DURATION_DAYS: z.coerce.number().int().min(MIN_DEAL_DAYS).max(MAX_DEAL_DAYS).default(DEAL_DEFAULTS.durationDays),
  DEAL_PRICE: z
    .string()
    .regex(/^(0|[1-9][0-9]{0,30})$/, 'attofil per GiB per epoch, a whole number')
    .default(DEAL_DEFAULTS.price),
  DEAL_VERIFIED: z.enum(['true', 'false', '1', '0']).default(DEAL_DEFAULTS.verified ? 'true' : 'false'),
  // The most an unverified deal (all deals once Fil+ has ended, FIP-0118) may cost: FIL (`0.5`, `0.5FIL`) or USD
  // (`3USD`, through the deal service's ticker) per TiB-month; such deals then pay the provider's own ask.
  // Unset on mainnet: the deal market is off (DEAL_COPIES=0) unless DEAL_COPIES is set.
  DEAL_MAX_PRICE_PER_TIB_MONTH: z
    .string()
    .max(40)
    .refine((t) => parsePriceCeiling(t) !== undefined, 'a price per TiB-month in FIL or USD, e.g. 0.5, 0.5FIL or 3USD')
    .optional(),
  // A piece is padded with zeros up to a provider's minimum piece size only up to this factor; 0: any.
  DEAL_MAX_PADDING: z.coerce
    .number()
    .int()
    .min(0)
    .max(1 << 30)
    .optional(),
  DEAL_START_OFFSET: z.coerce.number().int().min(1).max(100_000).default(DEAL_DEFAULTS.startOffsetEpochs),
  DEAL_COPIES: z.coerce.number().int().min(0).max(100).optional(),
  DEAL_TICK_SECONDS: z.coerce.number().positive().max(3600).default(DEAL_DEFAULTS.tickSeconds),
  RETRIEVAL_CHECK_SECONDS: z.coerce
    .number()
    .positive()
    .max(7 * 86_400)
    .default(DEAL_DEFAULTS.retrievalCheckSeconds),
  RETRIEVAL_FAILED_CHECKS: z.coerce.number().int().min(1).max(100).default(DEAL_DEFAULTS.retrievalFailedChecks),
  DEAL_RENEW_BEFORE_DAYS: z.coerce.number().positive().max(1000).default(DEAL_DEFAULTS.renewBeforeDays),
  DEAL_REPAIR_HOLD_DAYS: z.coerce.number().positive().max(365).default(DEAL_DEFAULTS.repairHoldDays),
  // Deal service
  SERVICE_PORT: port(8090),
  API_KEY: z
    .string()
    .min(16)
    .max(200)
    .regex(/^[\x21-\x7e]+$/, 'printable ASCII without spaces')
    .optional(),
  SIMNET_SEED: z.string().min(1).max(200).default('filecoin-simnet'),
  // Where the deal service serves the simulated chain as Lotus JSON-RPC (0: a free port).
  SIMNET_RPC_PORT: port(1234),
  // The simulated chain's JSON-RPC URL the gateway reads deals through (set by npm start).
  SIMNET_RPC_URL: z.url({ protocol: /^https?$/ }).optional(),
  // Where the deal service serves the simulated Filecoin Onchain Cloud's FEVM as eth_* JSON-RPC (0: a free port),
  // and how many simulated Curio PDP providers it runs (0: no simulated Onchain Cloud).
  SIMFOC_RPC_PORT: port(1235),
  SIMFOC_PROVIDERS: z.coerce.number().int().min(0).max(20).default(3),
  // The simulated Onchain Cloud's proving schedule (period/window/finality in epochs): calibration's 240/20/10
  // or mainnet's 2880/60/150 (a proof a day), sped up with the rest of the simulated chain by SIMNET_SPEED.
  SIMFOC_PROVING: z.enum(SIMFOC_PROVING_SCHEDULES).default('calibration'),
  // The network the simulated Onchain Cloud stands as: a devnet (the SDK's devnet chain id, contracts wherever
  // they land), or calibration / mainnet as they are today (their chain id, the warm storage service's proxy,
  // endorsements, Multicall3 and the old 1.2.0 view at their published addresses, FWSS migrated to a GA view).
  SIMFOC_CHAIN: z.enum(SIMFOC_CHAINS).default('devnet'),
  // The simulated Onchain Cloud's RPC URL as other processes reach it (default: SIMFOC_RPC_PORT on loopback).
  SIMFOC_RPC_URL: z.url({ protocol: /^https?$/ }).optional(),
  // A real Filecoin Onchain Cloud: the FEVM JSON-RPC of NETWORK=calibration or mainnet (e.g. Glif's /rpc/v1),
  // or of a devnet that runs the contracts (NETWORK=devnet, with FOC_CONTRACTS).
  FOC_RPC_URL: z.url({ protocol: /^https?$/ }).optional(),
  // A devnet's contract addresses: a JSON file, the simulated Onchain Cloud's DATA_DIR/simfoc/contracts.json
  // or FilOzone foc-devnet's devnet-info.json.
  FOC_CONTRACTS: z.string().min(1).optional(),
  // Copies per group on Filecoin Onchain Cloud PDP providers (0: the gateway does not store there).
  PDP_COPIES: z.coerce.number().int().min(0).max(10).default(2),
  // Whether the gateway deposits USDFC from its wallet into Filecoin Pay when uploads need it; default: only off a real network.
  FOC_AUTO_DEPOSIT: z.enum(['true', 'false', '1', '0']).optional(),
  // The demo's pace: 1 minute of wall-clock time ≈ 5 hours of simulated chain time, so a file reaches
  // Offloaded (sealed by simulated providers) within minutes. Only the simulated network has a speed.
  SIMNET_SPEED: z.coerce.number().positive().max(100_000).default(300),
  // The simulated chain's epoch of the network version 29 upgrade (FIP-0118: Fil+ ends); unset: none scheduled.
  SIMNET_NV29_EPOCH: z.coerce.number().int().min(0).optional(),
  // Seeded faults of the simulated network: this share (0 to 0.2, e.g. 0.03) of chain calls, provider streams
  // and CAR transfers fail or stall, to see the gateway get through them. 0: none.
  SIMNET_FAULT_RATE: z.coerce.number().min(0).max(0.2).default(0),
  // The chain client speaks JSON-RPC over HTTP POST only (Lotus serves it on /rpc/v1 beside its WebSocket).
  LOTUS_URL: z
    .url({
      protocol: /^https?$/,
      error: 'must be an http(s):// URL (the JSON-RPC client speaks HTTP POST; Lotus serves it at the same /rpc/v1 as ws://)',
    })
    .optional(),
  LOTUS_TOKEN: z.string().optional(),
  TICKER_POLL_SECONDS: positiveInt(60),
  TICKER_ENABLED: z.enum(['true', 'false', '1', '0']).default('true'),
})

/**
 * How big a group grows and how long it waits for more data, and how far a
 * piece may be padded to reach a provider's minimum, per network. The
 * simulated network's providers take tiny pieces and the demo should end in
 * minutes; real providers commonly ask for pieces of 256 MiB to 32 GiB, and
 * verified and paid deals are charged on the padded size, so on a real
 * network a group waits a day for more data, grows to 8 GiB (1 GiB on
 * calibration) and is padded at most 16× (a 16 MiB piece still reaches a
 * 256 MiB minimum). With PDP copies a group is at most 1 GiB (PDP_MAX_GROUP_SIZE).
 */
const GROUP_DEFAULTS: Record<NetworkName, { groupSize: number; idleSeconds: number; maxPadding: number }> = {
  simnet: { groupSize: 64 * 1024 * 1024, idleSeconds: 20, maxPadding: 0 },
  // A devnet's providers are test setups (Lotus/Boost devnets seal 2 KiB to 8 MiB sectors): as on simnet.
  devnet: { groupSize: 64 * 1024 * 1024, idleSeconds: 20, maxPadding: 0 },
  calibration: { groupSize: 1024 ** 3, idleSeconds: 86_400, maxPadding: 16 },
  mainnet: { groupSize: 8 * 1024 ** 3, idleSeconds: 86_400, maxPadding: 16 },
}

/**
 * The largest group PDP copies allow: each copy is one Onchain Cloud upload
 * of the group's whole CAR (PDP_MAX_UPLOAD_BYTES), so while they are made
 * groups are at most 1 GiB, whatever the network's default.
 */
const PDP_MAX_GROUP_SIZE = largestGroupSize(PDP_MAX_UPLOAD_BYTES)

/** Where a part keeps its state: PostgreSQL (DATABASE_URL, the part in its own schema), else a SQLite file in its data folder. */
interface StoredState {
  dataDir: string
  databaseUrl?: string
}

export interface BridgeConfig extends StoredState {
  /** Kept free under DATA_DIR besides a chunk of a chunked upload, as the gateway keeps it for sealing (DISK_RESERVE_MB); unset: 2 % of the disk, at most 1 GiB. */
  diskReserveBytes?: number
  host: string
  port: number
  network: NetworkName
  simnetGenesis: number
  /** Unset means "the embedded gateway started beside me". */
  gatewayUrl?: string
  gatewayUser?: string
  gatewayPassword?: string
  gatewayTimeoutMs: number
  adminPassword?: string
  /** Template of the gateway path of a user's files root; `{user}` is the user id. */
  pathMap: string
  ipfsGateway: string
  /** Where the preview page finds the built front end; unset means the repository's `js/`. */
  bundleDir?: string
  /**
   * `nextcloud`: users, sessions and files belong to the Nextcloud at `nextcloudUrl`, whose reverse proxy
   * forwards the app's routes; `appapi`: likewise, but as an AppAPI external app (server/bridge/exapp/);
   * unset means `embedded`.
   */
  filesync?: 'embedded' | 'nextcloud' | 'appapi'
  nextcloudUrl?: string
  /** How long the bridge waits for Nextcloud when checking a login (then 503). */
  nextcloudTimeoutMs?: number
  /** Express `trust proxy` (unset: false): whose X-Forwarded-For / X-Forwarded-Proto to believe. */
  trustProxy?: boolean | number | string
  /** Unfinished chunked uploads one user may hold at once (default 500); past it MKCOL answers 507. */
  maxUploadsPerUser?: number
}

/** The gateway's deal terms and pace (DEAL_*); what is left unset is taken from DEAL_DEFAULTS. */
export interface DealsConfig {
  durationDays: number
  /** Attofil per GiB per epoch. */
  price: string
  verified: boolean
  /** A piece is padded to a provider's minimum size only up to this factor (Infinity: any). */
  maxPaddingFactor?: number
  startOffsetEpochs: number
  /** Fixed copies per group; unset: the tenant's onboarding policy decides. */
  copies?: number
  /** The most an unverified deal may cost a TiB-month (DEAL_MAX_PRICE_PER_TIB_MONTH); such deals pay the provider's ask up to it. */
  maxPrice?: PriceCeiling
  /** Why the deal market is off though DEAL_COPIES was not set to 0 (mainnet without a price ceiling), for the log. */
  marketOff?: string
  tickSeconds: number
  retrievalCheckSeconds: number
  /** Retrieval checks a copy fails in a row (each while other providers answered) before it stops counting and is replaced. */
  retrievalFailedChecks?: number
  /** Deals ending within this many days are replaced by new ones. */
  renewBeforeDays?: number
  /** Longest an offloaded group stays reloaded for repair before its local bytes are removed again. */
  repairHoldDays?: number
}

export interface GatewayConfig extends StoredState {
  host: string
  port: number
  /** The network the gateway's deals are on; said by its POST /status so a linked app can check it. */
  network?: NetworkName
  /** When both are set the gateway requires HTTP basic auth. */
  user?: string
  password?: string
  groupSize: number
  /** Kept free besides the bytes still to seal; unset: 2 % of the disk, at most 1 GiB. */
  diskReserveBytes?: number
  groupIdleSeconds: number
  /** How long a group holding only folders' listings waits for file data before it closes anyway; unset (tests): DEFAULT_LISTING_WAIT_SECONDS. */
  listingWaitSeconds?: number
  /** Worker threads sealing groups (CAR + piece CID); 0: on the main thread. */
  sealThreads?: number
  /** How new files and folders get their CIDs (IPIP-499 profile); what is stored keeps its own. */
  cidProfile?: CidProfile
  /** How long a group whose files are all deleted stays as it is before it is retired (default RETIRE_AFTER_SECONDS). */
  retireAfterSeconds?: number
  /** Share of a group's bytes deleted past which it is compacted (default COMPACT_DEAD_FRACTION); 0 or 1: never. */
  compactDeadFraction?: number
  /** The deal service the gateway asks for providers; no deals are made without it and a key. */
  serviceUrl?: string
  serviceApiKey?: string
  /** The gateway's URL as storage providers reach it (CAR transfers); defaults to where it listens. */
  publicUrl?: string
  /** The client address of the gateway's proposals: its wallet key's, known once the key is open (never from the environment). */
  clientAddress?: string
  /** Deal terms and pace; unset (tests): DEAL_DEFAULTS. */
  deals?: DealsConfig
  /**
   * The PDP route's policy: copies per group (0: off), and whether uploads top Filecoin Pay up from the wallet.
   * While copies are made no group's CAR passes `maxUploadBytes` (default PDP_MAX_UPLOAD_BYTES, the SDK's
   * limit; tests make it small, as no variable does: the SDK refuses anything larger).
   */
  pdp?: { copies: number; autoDeposit: boolean; maxUploadBytes?: number }
}

export interface ServiceConfig extends StoredState {
  host: string
  port: number
  network: NetworkName
  simnetGenesis: number
  /** Key of the first tenant; random (and printed once) when unset. */
  apiKey?: string
  simnetSeed: string
  /** Port of the simulated chain's Lotus JSON-RPC, served beside the deal service by `npm start`. */
  simnetRpcPort?: number
  /** Set on a replica: the simulated network another deal service runs (its RPC), read instead of running one. */
  simnetRpcUrl?: string
  /** Port of the simulated Onchain Cloud's FEVM JSON-RPC, and how many PDP providers it runs (default 3). */
  simfocRpcPort?: number
  simfocProviders?: number
  /** The proving schedule the simulated Onchain Cloud is made with (default calibration's). */
  simfocProving?: SimfocProving
  /** The network the simulated Onchain Cloud stands as (default devnet). */
  simfocChain?: SimfocChain
  /**
   * A client address the default tenant gets at bootstrap (DEAL_CLIENT_ADDRESS), so that deals from it
   * count as that tenant's; `npm start` sets it to the gateway's wallet key address for the service it starts.
   */
  clientAddress?: string
  /** How many simulated seconds pass per real second (demos). */
  simnetSpeed: number
  /** The simulated chain's network version 29 upgrade epoch (FIP-0118); undefined: none scheduled. */
  simnetNv29Epoch?: number
  /** Share of the simulated network's chain calls, provider streams and transfers that fail or stall (0: none). */
  simnetFaultRate?: number
  /** Set: read the chain from this Lotus/Forest JSON-RPC endpoint instead of the simulated network. */
  lotusUrl?: string
  lotusToken?: string
  tickerPollSeconds: number
  /** False: never call the exchanges (offline installs); the ticker stays empty. */
  tickerEnabled: boolean
}

export interface Config {
  logLevel: string
  /** Unset: pretty on a terminal, JSON otherwise (see `logFormatFor`). */
  logFormat?: 'pretty' | 'json'
  dataDir: string
  /** Free bytes under `dataDir` below which a warning is logged. */
  diskWarnBelowBytes: number
  /** How every part's HTTP server treats connections: idle and body limits, connection caps. */
  http: HttpLimits
  bridge: BridgeConfig
  gateway: GatewayConfig
  service: ServiceConfig
  /** Where the chain is read and what that allows, decided once from NETWORK, LOTUS_URL and SIMNET_RPC_URL. */
  chain: ChainConfig
  /** The Filecoin Onchain Cloud the gateway's PDP copies are on. */
  onchainCloud: OnchainCloudConfig
  /** The wallet keys that sign deals and pay the Onchain Cloud. */
  wallet: WalletConfig
  /** What `--role all` hands the parts it starts. */
  stack: StackConfig
  /** Files under DATA_DIR that more than one part, or `npm start` itself, reads. */
  files: SharedFiles
}

export interface OnchainCloudConfig {
  /** A real Onchain Cloud's FEVM JSON-RPC (FOC_RPC_URL: NETWORK=calibration, mainnet, or devnet with `contractsFile`); unset: the simulated one. */
  rpcUrl?: string
  /** Where a devnet's contracts are (FOC_CONTRACTS, an absolute path): required with `rpcUrl` on NETWORK=devnet. */
  contractsFile?: string
  /** The simulated Onchain Cloud's RPC as other processes reach it (SIMFOC_RPC_URL, else SIMFOC_RPC_PORT on loopback). */
  simulatedRpcUrl: string
}

export interface WalletConfig {
  /** The keystore folder (`<DATA_DIR>/wallet`, `npm run wallet`). */
  dir: string
  /** Which key (address) signs and pays (WALLET); the keystore's default key when unset. */
  key?: string
}

export interface ChainConfig {
  /**
   * What the deal service reads: `lotus` the node at LOTUS_URL; `simnet` the
   * simulated network it runs itself; `simnet-replica` the one another deal
   * service serves at SIMNET_RPC_URL.
   */
  service: 'lotus' | 'simnet' | 'simnet-replica'
  /**
   * The chain the gateway signs deals on: the simulated chain's JSON-RPC
   * (SIMNET_RPC_URL, `simulated`), else LOTUS_URL with its token; unset: no
   * chain, no deals.
   */
  gatewayRpc?: { url: string; token?: string; simulated: boolean }
  /** Keys are throwaway (the simulated network and Onchain Cloud, a devnet): a wallet key is made at the first start. */
  makesWalletKey: boolean
  /** Providers of a real network fetch CARs from GATEWAY_PUBLIC_URL, so it must be public (a devnet's reach any). */
  publicUrlRequired: boolean
  /** The addresses this network uses (`f…` or `t…`). */
  addressNetwork: AddressNetwork
}

export interface StackConfig {
  /**
   * Whether `--role all` runs a deal service (and, without LOTUS_URL, the simulated network beside it):
   * not for the Onchain Cloud alone on a real one (FOC_RPC_URL with the deal market off), which asks neither.
   */
  dealService: boolean
  /**
   * The service account the app surface uses on the gateway `npm start` runs:
   * GATEWAY_USER and GATEWAY_PASSWORD when both are set, else `bridge`
   * (`password` unset: the one generated into `files.gatewayPassword`).
   */
  gatewayAccount: { user: string; password?: string }
}

export interface SharedFiles {
  /** The generated password of the stack's gateway service account. */
  gatewayPassword: string
  /** The simulated chain's state, shared by every process that opens it. */
  simnetChain: string
  /** The simulated providers' stored bytes. */
  simnetProviders: string
  /** The simulated Onchain Cloud: its chain's journal, the contracts' addresses, each PDP provider's pieces. */
  simfoc: string
  /** The default tenant's generated key, written by the deal service when API_KEY is unset. */
  serviceApiKey: string
  /** The generated password of `admin`, written by the app surface when ADMIN_PASSWORD is unset. */
  adminPassword: string
}

/** What `npm start -- --role` runs: the whole stack, or one part of it (`network`: the simulated network alone). */
export const ROLES = ['all', 'app', 'gateway', 'service', 'network'] as const
export type Role = (typeof ROLES)[number]

export interface HttpLimits {
  /** A client sending nothing for this long while its request is due is cut. */
  idleTimeoutMs: number
  bodyTimeoutMs: number
  uploadMinBytesPerSecond: number
  /** Unset: half the process's open-file limit. */
  maxConnections?: number
  maxConnectionsPerAddress: number
}

export class ConfigError extends Error {
  override name = 'ConfigError'
}

/** `TRUST_PROXY` as express takes it: booleans and hop counts typed, anything else (addresses, subnets, names) as given. */
export function parseTrustProxy(value: string): boolean | number | string {
  const v = value.trim().toLowerCase()
  if (v === 'false' || v === '' || v === 'off') return false
  if (v === 'true' || v === 'on') return true
  if (/^\d+$/.test(v)) return Number(v)
  return value.trim()
}

/** `--role`'s value, refused with the list of roles when it is none of them. */
export function parseRole(value: string | undefined): Role {
  const role = z.enum(ROLES).default('all').safeParse(value)
  if (!role.success) throw new ConfigError(`Unknown --role "${value}" (${ROLES.join(', ')})`)
  return role.data
}

/**
 * Reads and validates the environment once, at start, and derives everything
 * that follows from it; the result is frozen, so no part can change another's
 * view of it. `role` adds what that role cannot run without.
 *
 * @example loadConfig(process.env, { role: parseRole(values.role) })
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env, args: { role?: Role } = {}): Config {
  return deepFreeze(deriveConfig(env, args.role ?? 'all'))
}

/** The environment as EnvSchema reads it: every variable typed, defaults filled in. */
type Env = z.infer<typeof EnvSchema>

/** `Config` from the environment: read, checked as a whole, then each part's share derived from it. */
function deriveConfig(env: NodeJS.ProcessEnv, role: Role): Config {
  const e = parseEnv(env)
  checkCombinations(e, role)
  const dataDir = resolve(e.DATA_DIR)
  const serviceDir = resolve(dataDir, 'service')
  const bridgeDir = resolve(dataDir, 'app')
  return {
    logLevel: e.LOG_LEVEL,
    logFormat: e.LOG_FORMAT,
    dataDir,
    diskWarnBelowBytes: e.DISK_FREE_WARNING_MB * 1024 * 1024,
    http: httpLimitsOf(e),
    bridge: bridgeConfigOf(e, bridgeDir),
    gateway: gatewayConfigOf(e, resolve(dataDir, 'gateway')),
    service: serviceConfigOf(e, serviceDir),
    chain: chainConfigOf(e),
    onchainCloud: {
      rpcUrl: e.FOC_RPC_URL,
      contractsFile: e.FOC_CONTRACTS && resolve(e.FOC_CONTRACTS),
      simulatedRpcUrl: e.SIMFOC_RPC_URL ?? `http://127.0.0.1:${e.SIMFOC_RPC_PORT || 1235}/rpc/v1`,
    },
    wallet: { dir: join(dataDir, 'wallet'), key: e.WALLET },
    stack: stackConfigOf(e),
    files: sharedFilesOf(dataDir, bridgeDir, serviceDir),
  }
}

/** Each variable on its own, every problem listed at once; empty strings (`PORT= npm start`) mean "not set". */
function parseEnv(env: NodeJS.ProcessEnv): Env {
  const cleaned = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''))
  const parsed = EnvSchema.safeParse(cleaned)
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join('.')}: ${i.message}`)
    throw new ConfigError(`Invalid configuration:\n${lines.join('\n')}`)
  }
  return parsed.data
}

/** Variables that are valid alone but not together, or not for this role: refused at start rather than failing later. */
function checkCombinations(e: Env, role: Role): void {
  if (e.FILESYNC !== 'embedded' && !e.NEXTCLOUD_URL)
    throw new ConfigError(`Invalid configuration:\n  NEXTCLOUD_URL: required when FILESYNC=${e.FILESYNC}`)
  checkDevnet(e, role)
  checkOnchainCloud(e)
  if (role === 'app' && !e.GATEWAY_URL) throw new ConfigError('--role app needs GATEWAY_URL')
  if (role === 'network' && (e.LOTUS_URL || e.SIMNET_RPC_URL)) {
    throw new ConfigError('--role network runs the simulated network: it takes neither LOTUS_URL nor SIMNET_RPC_URL')
  }
  // A group too big for one upload would be retried for ever and never offloaded.
  if (pdpCopiesOf(e) > 0 && e.GROUP_SIZE !== undefined && e.GROUP_SIZE > PDP_MAX_GROUP_SIZE) {
    throw new ConfigError(
      `Invalid configuration:\n  GROUP_SIZE: ${e.GROUP_SIZE} is too large for PDP copies: each is one Onchain Cloud upload of the group's CAR, at most ${PDP_MAX_UPLOAD_BYTES} bytes (the Synapse SDK's limit), so GROUP_SIZE may be at most ${PDP_MAX_GROUP_SIZE} (1 GiB) while PDP_COPIES is above 0; set a smaller GROUP_SIZE, or PDP_COPIES=0 to keep larger groups for the deal market alone`,
    )
  }
  // Mainnet without a price ceiling: no deal is proposed, so another route must store the groups.
  if (dealMarketOffByDefault(e) && pdpCopiesOf(e) === 0 && (role === 'all' || role === 'gateway')) {
    throw new ConfigError(
      'Invalid configuration:\n  DEAL_MAX_PRICE_PER_TIB_MONTH: required on mainnet unless PDP copies store the groups. Since Fil+ ended (FIP-0118) every deal is paid, so the gateway proposes none until you say how much it may spend: set DEAL_MAX_PRICE_PER_TIB_MONTH (e.g. 0.5FIL or 3USD per TiB-month), or store on the Onchain Cloud instead (FOC_RPC_URL with PDP_COPIES of 1 or more), or set DEAL_COPIES to propose deals at DEAL_PRICE',
    )
  }
  // Groups are offloaded once the copies asked for are retrievable: asking for none would offload them with none.
  if (e.DEAL_COPIES === 0 && !((e.FOC_RPC_URL || e.SIMFOC_PROVIDERS > 0) && e.PDP_COPIES > 0)) {
    throw new ConfigError(
      'Invalid configuration:\n  DEAL_COPIES: 0 (no deal-market copies) needs PDP copies on the Onchain Cloud instead: PDP_COPIES of 1 or more, with FOC_RPC_URL or the simulated Onchain Cloud (SIMFOC_PROVIDERS)',
    )
  }
}

/**
 * A devnet is someone's node: the deal market reads its clock and deals from
 * its Lotus node (LOTUS_URL); with the market off (DEAL_COPIES=0) the
 * Onchain Cloud's FEVM chain (FOC_RPC_URL) is all the gateway reads.
 */
function checkDevnet(e: Env, role: Role): void {
  if (e.NETWORK !== 'devnet' || e.LOTUS_URL) return
  const refuse = (line: string) => {
    throw new ConfigError(`Invalid configuration:\n  ${line}`)
  }
  if (role === 'service') {
    refuse(
      "LOTUS_URL: required for --role service when NETWORK=devnet (the deal service reads the devnet's chain from its Lotus-compatible node)",
    )
  }
  // The app surface only dates epochs: the Onchain Cloud's chain tells its clock too.
  if (role === 'app' && e.FOC_RPC_URL) return
  if (e.DEAL_COPIES !== 0) {
    refuse(
      "LOTUS_URL: required when NETWORK=devnet and deals are made on the market (the JSON-RPC URL of the devnet's Lotus-compatible node, e.g. http://127.0.0.1:1234/rpc/v1); to store on the devnet's Onchain Cloud alone, set DEAL_COPIES=0 with FOC_RPC_URL and FOC_CONTRACTS",
    )
  }
  if (!e.FOC_RPC_URL) {
    refuse(
      "FOC_RPC_URL: required when NETWORK=devnet has no LOTUS_URL: DEAL_COPIES=0 stores on the devnet's Onchain Cloud, whose FEVM JSON-RPC this is (with FOC_CONTRACTS)",
    )
  }
}

/** FOC_CONTRACTS names where a devnet's Onchain Cloud is found; calibration's and mainnet's are found from their published FWSS proxy. */
function checkOnchainCloud(e: Env): void {
  const refuse = (line: string) => {
    throw new ConfigError(`Invalid configuration:\n  ${line}`)
  }
  if (e.FOC_CONTRACTS && !e.FOC_RPC_URL) refuse("FOC_CONTRACTS: a devnet's contracts need its FEVM JSON-RPC too: set FOC_RPC_URL")
  if (e.FOC_CONTRACTS && e.NETWORK !== 'devnet') {
    refuse(
      `FOC_CONTRACTS: only for NETWORK=devnet (it is ${e.NETWORK}): calibration's and mainnet's Onchain Cloud is found from its published warm storage service, the rest read on chain`,
    )
  }
  if (e.FOC_RPC_URL && e.NETWORK === 'devnet' && !e.FOC_CONTRACTS) {
    refuse(
      "FOC_CONTRACTS: required with FOC_RPC_URL when NETWORK=devnet: a JSON file naming the devnet's warm storage service (FWSS proxy), Multicall3 and endorsement set (see the README's devnet section)",
    )
  }
  if (e.FOC_RPC_URL && e.NETWORK === 'simnet') {
    refuse('FOC_RPC_URL: a real Onchain Cloud needs a real chain: set NETWORK=calibration, mainnet or devnet (it is simnet)')
  }
}

/** PDP copies per group: PDP_COPIES on a real Onchain Cloud (FOC_RPC_URL) or the simulated one, none when the stack runs no providers there. */
const pdpCopiesOf = (e: Env) => (e.FOC_RPC_URL || e.SIMFOC_PROVIDERS > 0 ? e.PDP_COPIES : 0)

/** GROUP_SIZE, else the network's default, at most what PDP copies allow while they are made. */
function groupSizeOf(e: Env): number {
  if (e.GROUP_SIZE !== undefined) return e.GROUP_SIZE
  const size = GROUP_DEFAULTS[e.NETWORK].groupSize
  return pdpCopiesOf(e) > 0 ? Math.min(size, PDP_MAX_GROUP_SIZE) : size
}

/** A base URL as the parts join paths to it: without trailing slashes. */
const withoutTrailingSlash = (url: string | undefined) => url?.replace(/\/+$/, '')

function httpLimitsOf(e: Env): HttpLimits {
  return {
    idleTimeoutMs: e.IDLE_TIMEOUT_SECONDS * 1000,
    bodyTimeoutMs: e.BODY_TIMEOUT_SECONDS * 1000,
    uploadMinBytesPerSecond: e.UPLOAD_MIN_BYTES_PER_SECOND,
    maxConnections: e.MAX_CONNECTIONS,
    maxConnectionsPerAddress: e.MAX_CONNECTIONS_PER_ADDRESS,
  }
}

function bridgeConfigOf(e: Env, dataDir: string): BridgeConfig {
  const exApp = e.FILESYNC === 'appapi'
  return {
    host: (exApp && e.APP_HOST) || e.HOST,
    port: (exApp && e.APP_PORT) || e.PORT,
    dataDir,
    databaseUrl: e.DATABASE_URL,
    network: e.NETWORK,
    simnetGenesis: e.SIMNET_GENESIS,
    gatewayUrl: withoutTrailingSlash(e.GATEWAY_URL),
    maxUploadsPerUser: e.MAX_UPLOADS_PER_USER,
    diskReserveBytes: e.DISK_RESERVE_MB === undefined ? undefined : e.DISK_RESERVE_MB * 1024 * 1024,
    gatewayUser: e.GATEWAY_USER,
    gatewayPassword: e.GATEWAY_PASSWORD,
    gatewayTimeoutMs: e.GATEWAY_TIMEOUT_MS,
    adminPassword: e.ADMIN_PASSWORD,
    pathMap: e.PATH_MAP,
    ipfsGateway: e.IPFS_GATEWAY,
    bundleDir: e.BUNDLE_DIR && resolve(e.BUNDLE_DIR),
    filesync: e.FILESYNC,
    nextcloudUrl: withoutTrailingSlash(e.NEXTCLOUD_URL),
    nextcloudTimeoutMs: e.NEXTCLOUD_TIMEOUT_MS,
    trustProxy: parseTrustProxy(e.TRUST_PROXY),
  }
}

/** The gateway's share: its groups (sized per network, GROUP_DEFAULTS, unless set), its deal service, chain and Onchain Cloud, and its deal terms. */
function gatewayConfigOf(e: Env, dataDir: string): GatewayConfig {
  return {
    host: e.HOST,
    port: e.GATEWAY_PORT,
    network: e.NETWORK,
    dataDir,
    databaseUrl: e.DATABASE_URL,
    user: e.GATEWAY_USER,
    password: e.GATEWAY_PASSWORD,
    groupSize: groupSizeOf(e),
    diskReserveBytes: e.DISK_RESERVE_MB === undefined ? undefined : e.DISK_RESERVE_MB * 1024 * 1024,
    groupIdleSeconds: e.GROUP_IDLE_SECONDS ?? GROUP_DEFAULTS[e.NETWORK].idleSeconds,
    listingWaitSeconds: e.LISTING_WAIT_SECONDS,
    sealThreads: e.SEAL_THREADS ?? availableParallelism(),
    cidProfile: e.CID_PROFILE,
    retireAfterSeconds: e.RETIRE_AFTER_SECONDS,
    compactDeadFraction: e.COMPACT_DEAD_FRACTION,
    serviceUrl: withoutTrailingSlash(e.SERVICE_URL),
    serviceApiKey: e.SERVICE_API_KEY,
    publicUrl: withoutTrailingSlash(e.GATEWAY_PUBLIC_URL),
    pdp: {
      copies: pdpCopiesOf(e),
      autoDeposit: e.FOC_AUTO_DEPOSIT === undefined ? !e.FOC_RPC_URL : e.FOC_AUTO_DEPOSIT === 'true' || e.FOC_AUTO_DEPOSIT === '1',
    },
    deals: dealsConfigOf(e),
  }
}

/**
 * Mainnet without DEAL_MAX_PRICE_PER_TIB_MONTH or DEAL_COPIES: since Fil+ ended every deal is paid, and no
 * price has been agreed to, so the deal market is off and nothing is spent that was not asked for.
 */
const dealMarketOffByDefault = (e: Env) => e.NETWORK === 'mainnet' && !e.DEAL_MAX_PRICE_PER_TIB_MONTH && e.DEAL_COPIES === undefined

/** Whether no deal-market copies are made: DEAL_COPIES=0, or mainnet's default without a price ceiling. */
const marketOff = (e: Env) => e.DEAL_COPIES === 0 || dealMarketOffByDefault(e)

/** The deal terms and pace (DEAL_*); padding is any (Infinity) when DEAL_MAX_PADDING, or the network's default, is 0. */
function dealsConfigOf(e: Env): DealsConfig {
  const off = dealMarketOffByDefault(e)
  return {
    ...(e.DEAL_MAX_PRICE_PER_TIB_MONTH ? { maxPrice: parsePriceCeiling(e.DEAL_MAX_PRICE_PER_TIB_MONTH) } : {}),
    ...(off
      ? {
          marketOff:
            "deal market off: on mainnet every deal is paid since Fil+ ended (FIP-0118), and DEAL_MAX_PRICE_PER_TIB_MONTH is not set, so no deal is proposed and groups are stored as PDP copies only; set DEAL_MAX_PRICE_PER_TIB_MONTH (e.g. 0.5FIL or 3USD) to propose deals at the providers' asks up to that price",
        }
      : {}),
    durationDays: e.DEAL_DURATION_DAYS,
    price: e.DEAL_PRICE,
    verified: e.DEAL_VERIFIED === 'true' || e.DEAL_VERIFIED === '1',
    maxPaddingFactor: (e.DEAL_MAX_PADDING ?? GROUP_DEFAULTS[e.NETWORK].maxPadding) || Infinity,
    startOffsetEpochs: e.DEAL_START_OFFSET,
    copies: off ? 0 : e.DEAL_COPIES,
    tickSeconds: e.DEAL_TICK_SECONDS,
    retrievalCheckSeconds: e.RETRIEVAL_CHECK_SECONDS,
    retrievalFailedChecks: e.RETRIEVAL_FAILED_CHECKS,
    renewBeforeDays: e.DEAL_RENEW_BEFORE_DAYS,
    repairHoldDays: e.DEAL_REPAIR_HOLD_DAYS,
  }
}

function serviceConfigOf(e: Env, dataDir: string): ServiceConfig {
  return {
    host: e.HOST,
    port: e.SERVICE_PORT,
    dataDir,
    databaseUrl: e.DATABASE_URL,
    network: e.NETWORK,
    simnetGenesis: e.SIMNET_GENESIS,
    apiKey: e.API_KEY,
    simnetSeed: e.SIMNET_SEED,
    simnetRpcPort: e.SIMNET_RPC_PORT,
    simnetRpcUrl: e.SIMNET_RPC_URL,
    simfocRpcPort: e.SIMFOC_RPC_PORT,
    simfocProviders: e.SIMFOC_PROVIDERS,
    simfocProving: e.SIMFOC_PROVING,
    simfocChain: e.SIMFOC_CHAIN,
    clientAddress: e.DEAL_CLIENT_ADDRESS,
    simnetSpeed: e.SIMNET_SPEED,
    simnetNv29Epoch: e.SIMNET_NV29_EPOCH,
    simnetFaultRate: e.SIMNET_FAULT_RATE,
    lotusUrl: withoutTrailingSlash(e.LOTUS_URL),
    lotusToken: e.LOTUS_TOKEN,
    tickerPollSeconds: e.TICKER_POLL_SECONDS,
    tickerEnabled: e.TICKER_ENABLED === 'true' || e.TICKER_ENABLED === '1',
  }
}

/** Which chain each part reads: the deal service LOTUS_URL before a simulated network, the gateway the simulated chain's RPC (SIMNET_RPC_URL) before LOTUS_URL. */
function chainConfigOf(e: Env): ChainConfig {
  const lotusUrl = withoutTrailingSlash(e.LOTUS_URL)
  return {
    service: lotusUrl ? 'lotus' : e.SIMNET_RPC_URL ? 'simnet-replica' : 'simnet',
    gatewayRpc: e.SIMNET_RPC_URL
      ? { url: e.SIMNET_RPC_URL, simulated: true }
      : lotusUrl
        ? { url: lotusUrl, token: e.LOTUS_TOKEN, simulated: false }
        : undefined,
    // A real Onchain Cloud's payer is the operator's key, as a real chain's signer is.
    makesWalletKey: e.NETWORK === 'devnet' || (!lotusUrl && !e.FOC_RPC_URL),
    publicUrlRequired: !e.SIMNET_RPC_URL && e.NETWORK !== 'devnet',
    addressNetwork: addressNetworkOf(e.NETWORK),
  }
}

function stackConfigOf(e: Env): StackConfig {
  return {
    dealService: !(e.FOC_RPC_URL && marketOff(e)),
    gatewayAccount: e.GATEWAY_USER && e.GATEWAY_PASSWORD ? { user: e.GATEWAY_USER, password: e.GATEWAY_PASSWORD } : { user: 'bridge' },
  }
}

/** Files more than one part reads: most right under DATA_DIR; the deal service's key and the admin password in the folder of the part that writes them. */
function sharedFilesOf(dataDir: string, bridgeDir: string, serviceDir: string): SharedFiles {
  return {
    gatewayPassword: join(dataDir, 'gateway-password'),
    simnetChain: join(dataDir, 'simnet', 'chain.sqlite'),
    simnetProviders: join(dataDir, 'simnet', 'providers'),
    simfoc: join(dataDir, 'simfoc'),
    serviceApiKey: join(serviceDir, 'api-key'),
    adminPassword: join(bridgeDir, 'admin-password'),
  }
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value)
    for (const inner of Object.values(value)) deepFreeze(inner)
  }
  return value
}
